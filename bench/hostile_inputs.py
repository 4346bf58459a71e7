#!/usr/bin/python3
"""Runs each hostile-input class against `profile`, `verify`, `report`, `fit`,
`compare` and the output files, and prints the Markdown table of
bench/RESULTS.md: command, input, exit code, the message as printed (stderr,
first 220 characters). A negative exit code would be a signal.

    /usr/bin/python3 bench/hostile_inputs.py [build/tools/modelstat]

Needs Debian's python3-onnx and python3-numpy, libonnx-testdata, and
fuzz/seeds/ (tools/gen_fuzz_seeds.py writes it).
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
NODE = "/usr/share/libonnx-testdata/data/node"
QUICK = ["--max-time", "1", "--warmup", "2"]
ROWS = []


def run(label, what, args, prefix=None, env=None):
    cmd = ([BIN] + args) if prefix is None else ["bash", "-c", prefix + " exec \"$0\" \"$@\"", BIN] + args
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    # The error line (stderr); verify reports a case it cannot run on stdout.
    lines = r.stderr.strip().splitlines() or [l for l in r.stdout.strip().splitlines() if l.strip()][-1:]
    msg = " ".join(line.strip() for line in lines[-2:]) or "(no message)"
    msg = msg.replace(SCRATCH + "/", "").replace(ROOT + "/", "")
    if len(msg) > 220:
        msg = msg[:217] + "..."
    ROWS.append((label, what, r.returncode, msg.replace("|", "\\|")))


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)
    return path


def case_copy(name, src="test_abs"):
    dst = os.path.join(SCRATCH, "cases", name)
    shutil.copytree(os.path.join(NODE, src), dst)
    return dst


def tensor_file(path, array=None, proto=None):
    write(path, (proto if proto is not None else numpy_helper.from_array(array)).SerializeToString())


def verify_rows():
    c = case_copy("missing_input")
    os.remove(os.path.join(c, "test_data_set_0", "input_0.pb"))
    run("verify", "input_0.pb missing", ["verify", c])
    c = case_copy("extra_input")
    shutil.copy(os.path.join(c, "test_data_set_0", "input_0.pb"), os.path.join(c, "test_data_set_0", "input_1.pb"))
    run("verify", "an extra input_1.pb", ["verify", c])
    c = case_copy("misnamed_input")
    os.rename(os.path.join(c, "test_data_set_0", "input_0.pb"), os.path.join(c, "test_data_set_0", "input_00.pb"))
    run("verify", "input_00.pb (misnamed)", ["verify", c])
    c = case_copy("dims_disagree")
    tensor_file(os.path.join(c, "test_data_set_0", "input_0.pb"), np.zeros((2, 2), np.float32))
    run("verify", "input dims 2x2, model 3x4x5", ["verify", c])
    c = case_copy("dtype_disagree")
    tensor_file(os.path.join(c, "test_data_set_0", "input_0.pb"), np.zeros((3, 4, 5), np.int64))
    run("verify", "input int64, model float", ["verify", c])
    c = case_copy("header_2_40")
    t = TensorProto(name="x", data_type=TensorProto.FLOAT, dims=[1 << 20, 1 << 20], raw_data=b"\0" * 24)
    tensor_file(os.path.join(c, "test_data_set_0", "input_0.pb"), proto=t)
    run("verify", "header claims 2^40 floats, 24 bytes present", ["verify", c])
    c = case_copy("dims_overflow")
    t = TensorProto(name="x", data_type=TensorProto.FLOAT, dims=[1 << 62, 4], raw_data=b"\0" * 16)
    tensor_file(os.path.join(c, "test_data_set_0", "input_0.pb"), proto=t)
    run("verify", "dims 2^62 x 4", ["verify", c])
    c = case_copy("garbage_pb")
    write(os.path.join(c, "test_data_set_0", "input_0.pb"), bytes(range(256)) * 4)
    run("verify", "input_0.pb is random bytes", ["verify", c])
    c = case_copy("bad_model")
    write(os.path.join(c, "model.onnx"), b"\x0a\xff\xff\xff\xff")
    run("verify", "model.onnx does not parse", ["verify", c])
    empty = os.path.join(SCRATCH, "cases", "empty")
    os.makedirs(empty)
    run("verify", "empty folder", ["verify", empty])
    run("verify", "string input (Cast STRING to FLOAT)", ["verify", os.path.join(NODE, "test_cast_STRING_to_FLOAT")])
    # float16 Conv: no CPU kernel in LibTorch.
    c = os.path.join(SCRATCH, "cases", "fp16_conv")
    x = np.random.default_rng(0).standard_normal((1, 1, 5, 5)).astype(np.float16)
    w = np.ones((1, 1, 3, 3), np.float16)
    g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], name="conv")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [1, 1, 5, 5]),
                           helper.make_tensor_value_info("w", TensorProto.FLOAT16, [1, 1, 3, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [1, 1, 3, 3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    write(os.path.join(c, "model.onnx"), m.SerializeToString())
    tensor_file(os.path.join(c, "test_data_set_0", "input_0.pb"), x)
    tensor_file(os.path.join(c, "test_data_set_0", "input_1.pb"), w)
    y = np.array([[[[x[0, 0, i:i + 3, j:j + 3].astype(np.float32).sum() for j in range(3)] for i in range(3)]]])
    tensor_file(os.path.join(c, "test_data_set_0", "output_0.pb"), y.astype(np.float16))
    run("verify", "float16 model (input and weight float16), Conv", ["verify", c])
    # float32 input cast to float16 inside the graph: the Conv meets a float16
    # activation LibTorch has no CPU kernel for.
    c = os.path.join(SCRATCH, "cases", "cast_fp16_conv")
    g = helper.make_graph([helper.make_node("Cast", ["x"], ["xh"], name="cast0", to=TensorProto.FLOAT16),
                           helper.make_node("Conv", ["xh", "w"], ["y"], name="conv0")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 5, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [1, 1, 3, 3])],
                          initializer=[numpy_helper.from_array(w, "w")])
    write(os.path.join(c, "model.onnx"), helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
          .SerializeToString())
    tensor_file(os.path.join(c, "test_data_set_0", "input_0.pb"), x.astype(np.float32))
    tensor_file(os.path.join(c, "test_data_set_0", "output_0.pb"), y.astype(np.float16))
    run("verify", "float32 input Cast to float16 in the graph, then Conv", ["verify", c])
    return os.path.join(c, "model.onnx")


def profile_rows(fp16_model):
    seeds = os.path.join(ROOT, "fuzz", "seeds")
    crafted = os.path.join(SCRATCH, "crafted")
    os.makedirs(crafted)
    write(os.path.join(crafted, "weights.bin"), b"\0" * 4096 * 4)
    for name in ["inband_huge_offset", "inband_negative_length", "inband_range_over_header",
                 "inband_marker_on_unstripped", "external_offset_overflows", "external_negative_length",
                 "raw_data_shorter_than_dims", "packed_varint_never_ends", "dims_claim_2_to_40_elements"]:
        path = shutil.copy(os.path.join(seeds, name + ".onnx"), crafted)
        run("analyze", "crafted: " + name, [path, "-o", "/dev/null"])
        run("profile", "crafted: " + name, ["profile", path, "--no-layers"] + QUICK)
    tiny = os.path.join(ROOT, "sample_models", "tiny_cnn.onnx")
    bert = os.path.join(ROOT, "sample_models", "tiny_bert.onnx")
    run("profile", "tiny_bert --dim seq=1048576 (32 TiB of attention scores)",
        ["profile", bert, "--dim", "seq=1048576"] + QUICK)
    run("profile", "tiny_cnn --input input:2^62x3x32x32 (sizes overflow)",
        ["profile", tiny, "--input", "input:%dx3x32x32" % (1 << 62)] + QUICK)
    # X[N,1024] @ W -> Relu: N = 400000 is 1.5 GiB per activation, within
    # MemAvailable, beyond a 3 GiB address-space limit once LibTorch is mapped.
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["y"])],
                          "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1024])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 1024])],
                          initializer=[numpy_helper.from_array(np.zeros((1024, 1024), np.float32), "w")])
    mlp = write(os.path.join(SCRATCH, "mlp.onnx"),
                helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    run("profile", "X[N,1024] MatMul, --dim N=400000 (4.6 GiB estimate) under ulimit -v 3 GiB",
        ["profile", mlp, "--dim", "N=400000", "--no-layers"] + QUICK, prefix="ulimit -v 3145728;")
    run("profile", "Cast to float16 in the graph, then Conv, on the CPU", ["profile", fp16_model, "--no-layers"] + QUICK)
    run("profile", "string graph input", ["profile", os.path.join(NODE, "test_cast_STRING_to_FLOAT", "model.onnx")] + QUICK)


def json_rows():
    d = os.path.join(SCRATCH, "json")
    good_profile = """{"schema_version": "1.2.0", "tool": "modelstat", "kind": "profile",
  "context": {"device_name": "cpu0", "device_kind": "cpu", "threads": 2, "dtype": "fp32", "batch": 1},
  "whole": {"count": 5, "samples_s": [0.0010, 0.0011, 0.0012, 0.0010, 0.0009]},
  "layers": [{"index": 0, "name": "conv", "op_type": "Conv",
              "time": {"count": 3, "samples_s": [0.00010, 0.00020, 0.00010]}}]}"""
    good_ceilings = """{"schema_version": "1.3", "device_kind": "cpu", "device_name": "cpu0", "threads": 2,
  "source": "measured", "memory_bandwidth_bytes_per_second": 1e10, "copy_bytes": 268435456,
  "op_overhead_seconds": 2e-6,
  "matmul": [{"dtype": "fp32", "flops_per_second": 1e11, "best_size": 512,
              "curve": [{"n": 64, "flops_per_second": 5e10}, {"n": 512, "flops_per_second": 1e11}]}],
  "op_costs": [{"op": "Relu", "fixed_seconds": 1e-6, "seconds_per_byte": 1e-10}]}"""
    huge = "[" + ",".join(["0"] * 4_000_001) + "]"
    base = write(os.path.join(d, "base.json"), good_profile)
    profiles = [
        ("truncated", good_profile[: len(good_profile) * 2 // 3]),
        ("schema version 7.0", good_profile.replace('"1.2.0"', '"7.0"')),
        ("a sample is \"abc\"", good_profile.replace("0.00020", '"abc"')),
        ("a sample is NaN", good_profile.replace("0.0011", "NaN")),
        ("a sample is 1e999", good_profile.replace("0.0011", "1e999")),
        ("samples: 4,000,001 elements", good_profile.replace("[0.0010, 0.0011, 0.0012, 0.0010, 0.0009]", huge)),
        ("nested 100,000 deep", "[" * 100000),
        ("empty file", ""),
    ]
    for what, text in profiles:
        run("compare", what, ["compare", base, write(os.path.join(d, "p_" + str(len(ROWS)) + ".json"), text)])
    run("compare", "new file missing", ["compare", base, os.path.join(d, "missing.json")])
    os.makedirs(os.path.join(d, "a_folder.json"))
    run("compare", "a folder", ["compare", base, os.path.join(d, "a_folder.json")])
    tiny = os.path.join(ROOT, "sample_models", "tiny_cnn.onnx")
    ceilings = [
        ("truncated", good_ceilings[:200]),
        ("schema version 2.0", good_ceilings.replace('"1.3"', '"2.0"')),
        ("bandwidth is \"abc\"", good_ceilings.replace("1e10", '"abc"')),
        ("bandwidth is NaN", good_ceilings.replace("1e10", "NaN")),
        ("curve n is 1e300", good_ceilings.replace('{"n": 64,', '{"n": 1e300,')),
        ("threads 99999999999", good_ceilings.replace('"threads": 2', '"threads": 99999999999')),
        ("notes: 4,000,001 elements", good_ceilings.replace('"op_costs": [', '"notes": ' + huge + ', "op_costs": [')),
    ]
    for what, text in ceilings:
        path = write(os.path.join(d, "c_" + str(len(ROWS)) + ".json"), text)
        run("report --ceilings", what, ["report", tiny, "--ceilings", path] + QUICK)
        run("fit --ceilings", what, ["fit", tiny, "--ceilings", path])


def output_rows():
    tiny = os.path.join(ROOT, "sample_models", "tiny_cnn.onnx")
    run("analyze -o", "folder missing", [tiny, "-o", os.path.join(SCRATCH, "missing", "out.json")])
    os.makedirs(os.path.join(SCRATCH, "out_is_folder"))
    run("analyze -o", "path is a folder", [tiny, "-o", os.path.join(SCRATCH, "out_is_folder")])
    run("report --html", "folder missing", ["report", tiny, "--html", os.path.join(SCRATCH, "missing", "r.html")] + QUICK)
    run("report --trace", "a path through a regular file",
        ["report", tiny, "--trace", os.path.join(tiny, "t.json")] + QUICK)
    run("profile -o", "a path through a regular file", ["profile", tiny, "-o", os.path.join(tiny, "p.json")] + QUICK)


def main():
    global BIN, SCRATCH
    BIN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "tools", "modelstat"))
    SCRATCH = tempfile.mkdtemp(prefix="modelstat_hostile_")
    try:
        fp16 = verify_rows()
        profile_rows(fp16)
        json_rows()
        output_rows()
    finally:
        shutil.rmtree(SCRATCH, ignore_errors=True)
    print("| command | input | exit | message |")
    print("|---|---|---:|---|")
    for label, what, code, msg in ROWS:
        print(f"| `{label}` | {what} | {code} | {msg} |")
    signals = [r for r in ROWS if r[2] < 0]
    print(f"\n{len(ROWS)} runs, {len(signals)} ended by a signal", file=sys.stderr)
    return 1 if signals else 0


if __name__ == "__main__":
    sys.exit(main())

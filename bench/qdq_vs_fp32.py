#!/usr/bin/python3
"""QDQ int8 vs fp32, side by side, in modelstat and ONNX Runtime.

The models: torchvision resnet18 and mobilenet_v2 exported to ONNX in fp32,
and the same models quantized in ONNX Runtime's QDQ format by
bench/make_qdq_model.py (uint8 activations, int8 per-channel weights, int32
biases, every Conv and Gemm between DequantizeLinear and QuantizeLinear).
Written into DIR (a temp folder by default), not committed.

    /usr/bin/python3 bench/qdq_vs_fp32.py [--dir /tmp/qdq] [--rounds 3] [--threads 1]
        [--models resnet18,mobilenet_v2] [--modelstat build/tools/modelstat] [--ort /tmp/ortnode/node_modules]

Each round runs, interleaved: modelstat fp32, modelstat QDQ (fused: each
DequantizeLinear -> Conv/Gemm runs as an int8 kernel), modelstat QDQ with
--no-fuse (every node as written: float convolutions of dequantized
tensors), ONNX Runtime fp32 and QDQ (all graph optimisations, as deployed:
ORT fuses QDQ into QLinearConv). Whole-model medians; per Conv, modelstat's
fp32 Conv beside its fused int8 Conv (same node names). OPENBLAS_CORETYPE is
unset (a user's machine lets OpenBLAS pick its kernels).
"""
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_common import clean_env, parse_flags  # noqa: E402


def modelstat_profile(binary, model, threads, out_json, fuse=True):
    cmd = [binary, "profile", model, "--threads", str(threads), "--warmup", "3", "--min-time", "1",
           "--max-time", "20", "--top", "0", "--no-nodes", "-f", "json", "-o", out_json]
    if not fuse:
        cmd.append("--no-fuse")
    subprocess.run(cmd, check=True, env=clean_env(), stdout=subprocess.DEVNULL)
    with open(out_json) as f:
        d = json.load(f)
    layers = {l["name"]: {"op": l["op_type"], "samples": l["time"]["samples_s"], "macs": l["macs"] or 0}
              for l in d["layers"]}
    return d["whole"]["samples_s"], layers


def ort_whole(modules, model, threads):
    spec = {"model": model, "inputs": [{"name": "x", "dims": [1, 3, 224, 224]}], "threads": threads,
            "opt": "all", "warmup": 10, "iters": 50, "profile": False, "prefix": ""}
    r = subprocess.run(["node", os.path.join(HERE, "ort_time.mjs"), json.dumps(spec)], check=True,
                       env=clean_env({"NODE_PATH": modules}), capture_output=True, text=True)
    d = json.loads(r.stdout.strip().splitlines()[-1])
    return [t / 1e3 for t in d["whole_ms"]], d["ort_version"]


def med(v):
    return statistics.median(v) if v else float("nan")


def main(argv):
    f = parse_flags(argv, {"dir": None, "rounds": 3, "threads": 1, "models": ["resnet18", "mobilenet_v2"],
                           "modelstat": os.path.join(HERE, "..", "build", "tools", "modelstat"),
                           "ort": "/tmp/ortnode/node_modules"}, __doc__)
    root, rounds, threads, models = f["dir"], f["rounds"], f["threads"], f["models"]
    binary, modules = f["modelstat"], f["ort"]
    root = root or tempfile.mkdtemp(prefix="qdq_")
    os.makedirs(root, exist_ok=True)
    work = tempfile.mkdtemp(prefix="qdq_runs_")
    for name in models:
        qdq, fp32 = os.path.join(root, name + "_qdq.onnx"), os.path.join(root, name + ".onnx")
        if not os.path.exists(qdq):
            subprocess.run([sys.executable, os.path.join(HERE, "make_qdq_model.py"), name, qdq, "--fp32", fp32],
                           check=True, stdout=subprocess.DEVNULL)
        whole = collections.defaultdict(list)
        layers = {"fp32": collections.defaultdict(list), "qdq": collections.defaultdict(list)}
        ops, macs = {}, {}
        ort_version = "?"
        for r in range(rounds):
            for key, model, fuse in (("fp32", fp32, True), ("qdq", qdq, True), ("qdq_nofuse", qdq, False)):
                w, l = modelstat_profile(binary, model, threads, os.path.join(work, f"{name}_{key}_{r}.json"), fuse)
                whole["ms_" + key] += w
                if key in layers:
                    for n, v in l.items():
                        layers[key][n] += v["samples"]
                        ops[n], macs[n] = v["op"], max(macs.get(n, 0), v["macs"])
            for key, model in (("fp32", fp32), ("qdq", qdq)):
                w, ort_version = ort_whole(modules, model, threads)
                whole["ort_" + key] += w
            print(f"{name} round {r + 1}: " + ", ".join(f"{k} {med(v) * 1e3:.2f} ms" for k, v in whole.items()),
                  file=sys.stderr)
        convs = [n for n in layers["qdq"] if ops.get(n) in ("Conv", "Gemm") and n in layers["fp32"]]
        fp32_sum = sum(med(layers["fp32"][n]) for n in convs)
        int8_sum = sum(med(layers["qdq"][n]) for n in convs)
        all_macs = sum(macs[n] for n in convs)
        quant = sum(med(v) for n, v in layers["qdq"].items() if ops.get(n) == "QuantizeLinear")
        slower = [n for n in convs if med(layers["qdq"][n]) > med(layers["fp32"][n])]
        print(f"\n{name} 1x3x224x224, {len(convs)} Conv/Gemm, {all_macs / 1e9:.2f} GMAC; {threads} thread(s); "
              f"{rounds} interleaved rounds; ONNX Runtime {ort_version} (all graph optimisations)\n")
        print("| | modelstat fp32 | modelstat QDQ (fused) | modelstat QDQ --no-fuse | ONNX Runtime fp32 | ONNX Runtime QDQ |")
        print("|---|---:|---:|---:|---:|---:|")
        print(f"| whole model, median (ms) | {med(whole['ms_fp32']) * 1e3:.2f} | {med(whole['ms_qdq']) * 1e3:.2f} | "
              f"{med(whole['ms_qdq_nofuse']) * 1e3:.2f} | {med(whole['ort_fp32']) * 1e3:.2f} | "
              f"{med(whole['ort_qdq']) * 1e3:.2f} |")
        print(f"| Conv/Gemm layers (ms) | {fp32_sum * 1e3:.2f} | {int8_sum * 1e3:.2f} | | | |")
        print(f"| Conv/Gemm GMAC/s | {all_macs / fp32_sum / 1e9:.1f} | {all_macs / int8_sum / 1e9:.1f} | | | |")
        print(f"| QuantizeLinear, all (ms) | | {quant * 1e3:.2f} | | | |")
        print(f"\nmodelstat: fused int8 Conv slower than the same fp32 Conv on {len(slower)} of {len(convs)} layers"
              + (": " + ", ".join(f"{n} ({med(layers['qdq'][n]) * 1e3:.3f} vs {med(layers['fp32'][n]) * 1e3:.3f} ms)"
                                  for n in slower[:8]) if slower else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

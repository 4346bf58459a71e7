#!/usr/bin/python3
"""CPU executor against the runtime users deploy (issue 14's acceptance).

Times, batch B (--batch, default 1), in interleaved rounds (round r runs every model on every
runtime once, so a slow period of the shared machine hits all of them):

  modelstat  `profile MODEL --no-layers --threads T` (fusion on, the default), median of its whole-model pass;
             optionally `--fusion off` too (--fusion-off), and a second modelstat binary (--baseline BIN,
             e.g. an older commit's build: the same-speed check of a restructuring)
  ORT        onnxruntime-node (npm), CPU EP, all graph optimisations, intra-op threads T (bench/ort_time.mjs)
  eager      PyTorch 1.13 eager, the same architecture (torchvision / bench/transformer_models.py), T threads

each pinned to CPUs 1 (T = 1) or 0-1 (T = 2) with `taskset`, OPENBLAS_CORETYPE unset, and every run
under `flock /tmp/modelstat-bench.lock` (the machine is shared). Per model and runtime: the median over rounds
of each round's median. A per-layer pass (`--layers`) adds modelstat's layer sum vs whole-model median,
fused and off.

    /usr/bin/python3 bench/cpu_runtime_bench.py --modelstat build/tools/modelstat --models /tmp/b14 \\
        --threads 1 --rounds 3 [--batch 8] [--fusion-off yes] [--layers yes] [--eager no] \\
        [--baseline OLD/modelstat] [--only resnet50,bert_encoder] [--vision resnet50,regnet_y_400mf] [--out FILE.json]

--vision replaces the list of torchvision models (any torchvision.models name whose ONNX file is
in --models).

The ONNX files: /tmp/b14/NAME.onnx (tests/e2e/export_torchvision.py NAME PATH --opset 13); the BERT
encoder (12 x 768, seq 128) is exported here to MODELS/bert_encoder.onnx when absent.
"""
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_common import clean_env, parse_flags  # noqa: E402

VISION = ["resnet50", "mobilenet_v2", "efficientnet_b0", "convnext_tiny", "vit_b_16"]
SEQ = 128

EAGER = r'''
import json, statistics, sys, time, torch
sys.path.insert(0, HERE)
from blas_threads import set_threads
set_threads(torch, THREADS)
torch.manual_seed(0)
name = NAME
if name == "bert_encoder":
    from transformer_models import Bert
    model = Bert(layers=12).eval()
    args = (torch.randint(0, 30522, (BATCH, SEQ)), torch.ones(BATCH, SEQ, dtype=torch.long), torch.zeros(BATCH, SEQ, dtype=torch.long))
else:
    import torchvision
    model = getattr(torchvision.models, name)(weights=None).eval()
    args = (torch.randn(BATCH, 3, 224, 224),)
samples = []
with torch.inference_mode():
    for _ in range(5):
        model(*args)
    t0 = time.perf_counter()
    while len(samples) < ITERS or time.perf_counter() - t0 < MIN_TIME:
        t = time.perf_counter(); model(*args); samples.append(time.perf_counter() - t)
print(json.dumps({"median_s": statistics.median(samples), "runs": len(samples), "torch": torch.__version__}))
'''


def locked(cmd, cpus):
    # MODELSTAT_BENCH_LOCK names another lock file: for a caller that already holds the shared one
    # for the whole run (and keeps everything else off the machine meanwhile).
    lock = os.environ.get("MODELSTAT_BENCH_LOCK", "/tmp/modelstat-bench.lock")
    return ["flock", lock, "taskset", "-c", cpus] + cmd


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr[-2000:]}")
    return p.stdout


def ensure_bert(models_dir):
    path = os.path.join(models_dir, "bert_encoder.onnx")
    if not os.path.exists(path):
        run(["/usr/bin/python3", "-c",
             f"import sys; sys.path.insert(0, {HERE!r}); import torch; torch.manual_seed(0); "
             f"from transformer_models import export_bert; export_bert({path!r}, 12)"])
    return path


def model_inputs(name, batch):
    if name == "bert_encoder":
        return ([{"name": "input_ids", "dims": [batch, SEQ], "dtype": "int64", "high": 30522},
                 {"name": "attention_mask", "dims": [batch, SEQ], "dtype": "int64", "fill": 1},
                 {"name": "token_type_ids", "dims": [batch, SEQ], "dtype": "int64", "fill": 0}],
                ["--dim", f"batch={batch}", "--dim", f"seq={SEQ}"])
    return [{"name": "input", "dims": [batch, 3, 224, 224]}], ["--default-batch", str(batch)]


def modelstat_time(f, binary, name, path, threads, cpus, fusion, layers, env_extra=None):
    _, dims = model_inputs(name, f["batch"])
    cmd = [binary, "profile", path, "--threads", str(threads), "--fusion", fusion, "-f", "json",
           "--min-time", str(f["min_time"]), "--max-time", str(max(f["min_time"] * 4, 5.0))] + dims
    if not layers:
        cmd.append("--no-layers")
    doc = json.loads(run(locked(cmd, cpus), clean_env(env_extra)))
    out = {"median_s": doc["whole"]["median_s"], "runs": doc["whole"]["count"]}
    if layers:
        out["layer_sum_s"] = doc["layer_sum"]["median_s"]
        out["groups"] = sum(1 for l in doc["layers"] if l.get("fused_members"))
    return out


def ort_time(f, name, path, threads, cpus):
    inputs, _ = model_inputs(name, f["batch"])
    spec = {"model": path, "inputs": inputs, "threads": threads, "opt": "all", "warmup": 5,
            "iters": f["ort_iters"], "profile": False}
    env = clean_env({"NODE_PATH": f["ort"]})
    doc = json.loads(run(locked(["node", os.path.join(HERE, "ort_time.mjs"), json.dumps(spec)], cpus), env))
    return {"median_s": doc["median_ms"] / 1e3, "runs": len(doc["whole_ms"]), "ort": doc["ort_version"]}


def eager_time(f, name, threads, cpus):
    code = (EAGER.replace("HERE", repr(HERE)).replace("THREADS", str(threads)).replace("NAME", repr(name))
            .replace("SEQ", str(SEQ)).replace("BATCH", str(f["batch"])).replace("ITERS", "10").replace("MIN_TIME", str(f["min_time"])))
    return json.loads(run(locked(["/usr/bin/python3", "-c", code], cpus), clean_env()))


def main(argv):
    f = parse_flags(argv, {"modelstat": "build/tools/modelstat", "models": "/tmp/b14", "threads": 1, "rounds": 3,
                           "only": [], "out": None, "ort": "/tmp/ortnode/node_modules", "min_time": 2.0,
                           "ort_iters": 30, "fusion_off": "no", "layers": "no", "eager": "yes", "batch": 1,
                           "baseline": None, "vision": VISION}, __doc__)
    threads = f["threads"]
    cpus = "1" if threads == 1 else "0-%d" % (threads - 1)
    names = [n for n in f["vision"] + ["bert_encoder"] if not f["only"] or n in f["only"]]
    paths = {n: ensure_bert(f["models"]) if n == "bert_encoder" else os.path.join(f["models"], n + ".onnx")
             for n in names}
    modes = ["on"] + (["off"] if f["fusion_off"] == "yes" else [])
    layers = f["layers"] == "yes"
    results = {n: {} for n in names}
    for r in range(f["rounds"]):
        for n in names:
            for mode in modes:
                results[n].setdefault("modelstat_" + mode, []).append(
                    modelstat_time(f, f["modelstat"], n, paths[n], threads, cpus, mode, layers))
            if f["baseline"]:
                results[n].setdefault("baseline", []).append(
                    modelstat_time(f, f["baseline"], n, paths[n], threads, cpus, "on", False))
            results[n].setdefault("ort", []).append(ort_time(f, n, paths[n], threads, cpus))
            if f["eager"] == "yes":
                results[n].setdefault("eager", []).append(eager_time(f, n, threads, cpus))
            print(f"round {r + 1}: {n} done", file=sys.stderr, flush=True)
    summary = {}
    for n in names:
        row = {k: statistics.median(x["median_s"] for x in v) for k, v in results[n].items()}
        if layers:
            for mode in modes:
                row["layer_sum_" + mode] = statistics.median(x["layer_sum_s"] for x in results[n]["modelstat_" + mode])
        summary[n] = row
    ms = lambda s: f"{s * 1e3:.2f} ms"
    print(f"threads {threads}, CPUs {cpus}, {f['rounds']} rounds, batch {f['batch']}, date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    head = "| model | modelstat (fusion on) |" + (" baseline modelstat |" if f["baseline"] else "") + \
           (" modelstat --fusion off |" if "off" in modes else "") + \
           " ONNX Runtime |" + (" PyTorch eager |" if f["eager"] == "yes" else "") + " modelstat / ORT |" + \
        (" modelstat / baseline |" if f["baseline"] else "")
    print(head)
    print("|---|" + "---:|" * (head.count("|") - 2))
    for n in names:
        s = summary[n]
        cells = [ms(s["modelstat_on"])] + ([ms(s["baseline"])] if f["baseline"] else []) + \
            ([ms(s["modelstat_off"])] if "off" in modes else []) + [ms(s["ort"])]
        if f["eager"] == "yes":
            cells.append(ms(s["eager"]))
        cells.append(f"{s['modelstat_on'] / s['ort']:.2f}")
        if f["baseline"]:
            cells.append(f"{s['modelstat_on'] / s['baseline']:.2f}")
        print(f"| {n} | " + " | ".join(cells) + " |")
    if layers:
        print()
        print("| model | mode | whole-model median | layer sum | layer sum / median - 1 |")
        print("|---|---|---:|---:|---:|")
        for n in names:
            for mode in modes:
                w, l = summary[n]["modelstat_" + mode], summary[n]["layer_sum_" + mode]
                print(f"| {n} | {mode} | {ms(w)} | {ms(l)} | {100 * (l / w - 1):+.1f}% |")
    if f["out"]:
        with open(f["out"], "w") as fh:
            json.dump({"threads": threads, "batch": f["batch"], "rounds": results, "summary": summary}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

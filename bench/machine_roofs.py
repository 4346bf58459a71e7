#!/usr/bin/python3
"""Machine roofs (issue 14, item 3): `modelstat device`'s fp32 machine peak
against an independent FMA loop, its bandwidth per memory level, and the
resnet50 report's efficiency against the machine roof (after) and against the
matmul peak alone, as ceilings of schema 1.x give it (before).

    /usr/bin/python3 bench/machine_roofs.py [--modelstat build/tools/modelstat]
        [--model resnet50.onnx] [--quick 0] [--out DIR]

Self-contained and short (a few minutes), to re-run on a quiet machine:
  1. builds bench/fma_peak/fma_peak.c (its own flags, none of modelstat's)
     and runs it for AVX-512 and AVX2 at 1 thread and at every CPU;
  2. `modelstat device -f json` (OPENBLAS_CORETYPE unset, bench_common.clean_env);
  3. with --model: `modelstat report MODEL --threads 1` twice from the same
     saved ceilings: once as saved (schema 2.0), once with the machine roofs
     removed (what a 1.x file holds), both under `taskset -c 1`.
Prints one JSON object; with --out also writes it and the reports there.
Both sides report the best sample as the roof (likwid-bench, ERT); the FMA
loop's median is printed too, to show how much the machine's load moves it.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import clean_env, parse_flags  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
USAGE = __doc__.split("\n\n")[1]


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, env=clean_env(), **kw).stdout


def fma_loop(binary, isa, threads):
    samples = [json.loads(run([binary, isa, str(threads)])) for _ in range(3)]
    return {"isa": isa, "threads": threads,
            "best_flops_per_second": max(s["max_flops_per_second"] for s in samples),
            "median_flops_per_second": sorted(s["median_flops_per_second"] for s in samples)[1]}


def main():
    flags = parse_flags(sys.argv[1:], {"modelstat": os.path.join(ROOT, "build", "tools", "modelstat"),
                                       "model": None, "quick": 0, "out": None}, USAGE)
    work = flags["out"] or tempfile.mkdtemp(prefix="machine_roofs.")
    os.makedirs(work, exist_ok=True)
    cpus = len(os.sched_getaffinity(0))
    binary = os.path.join(work, "fma_peak")
    run(["sh", os.path.join(ROOT, "bench", "fma_peak", "build.sh"), binary])
    result = {"cpus": cpus, "fma_loop": [fma_loop(binary, isa, t) for isa in ("avx512", "avx2")
                                         for t in sorted({1, cpus})]}

    ceilings_path = os.path.join(work, "ceilings-cpu.json")
    # --threads 1: the matmul (achievable) curve at one thread, as the reports run; the machine
    # roofs are measured at 1 thread and at every CPU whatever --threads says.
    device = [flags["modelstat"], "device", "--threads", "1", "-f", "json", "--save", ceilings_path]
    if flags["quick"]:
        device.append("--quick")
    ceilings = json.loads(run(device))
    result["device"] = {
        "compute_roofs": ceilings["compute_roofs"],
        "memory_levels": ceilings["memory_levels"],
        "matmul_fp32_best": next(m["flops_per_second"] for m in ceilings["matmul"] if m["dtype"] == "fp32"),
        "copy_bandwidth": ceilings["memory_bandwidth_bytes_per_second"],
    }
    # The acceptance check: fp32 machine peak vs the loop, per ISA and thread count.
    checks = []
    for loop in result["fma_loop"]:
        kernel = "avx512f" if loop["isa"] == "avx512" else "avx2"
        roof = next((r for r in ceilings["compute_roofs"] if r["dtype"] == "fp32" and r["threads"] == loop["threads"]
                     and r["kernel"].startswith(kernel)), None)
        if roof:
            checks.append({"isa": loop["isa"], "threads": loop["threads"], "modelstat": roof["flops_per_second"],
                           "fma_loop": loop["best_flops_per_second"],
                           "ratio": roof["flops_per_second"] / loop["best_flops_per_second"]})
    result["peak_vs_fma_loop"] = checks

    if flags["model"]:
        old_path = os.path.join(work, "ceilings-1x.json")
        old = {k: v for k, v in ceilings.items() if k not in ("compute_roofs", "memory_levels", "bandwidth_sweep")}
        old["schema_version"] = "1.3"
        with open(old_path, "w") as f:
            json.dump(old, f)
        reports = {}
        for label, path in (("before (schema 1.x: matmul peak, one copy bandwidth)", old_path),
                            ("after (machine roofs)", ceilings_path)):
            tag = "before" if label.startswith("before") else "after"
            out_json = os.path.join(work, f"report-{tag}.json")
            run(["taskset", "-c", "1", flags["modelstat"], "report", flags["model"], "--threads", "1",
                 "--ceilings", path, "-f", "json", "-o", out_json, "--html", os.path.join(work, f"report-{tag}.html")])
            with open(out_json) as f:
                r = json.load(f)
            nodes = [n for n in r["nodes"] if n["efficiency"] is not None]
            reports[tag] = {"ceilings": label, "peak_flops_per_s": r["roofline"]["peak_flops_per_s"],
                            "achieved_flops_per_s": r["whole"]["achieved_flops_per_s"],
                            "efficiency": r["whole"]["efficiency"],
                            "nodes_above_their_roof": sum(1 for n in nodes if n["efficiency"] > 1.0),
                            "max_node_efficiency": max(n["efficiency"] for n in nodes)}
        result["report"] = reports
    text = json.dumps(result, indent=1)
    print(text)
    if flags["out"]:
        with open(os.path.join(work, "machine_roofs.json"), "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()

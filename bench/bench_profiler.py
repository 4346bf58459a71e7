#!/usr/bin/python3
"""CPU profiler benchmark: modelstat vs PyTorch eager, side by side in one run.

For each model (torchvision export, batch 1, fixed seed, exported with
tests/e2e/export_torchvision.py and cached in --workdir):
  1. modelstat profile FILE --device cpu --threads T   (twice, consecutive)
  2. bench/torch_reference.py --model NAME --threads T --fuse (PyTorch eager, inference_mode,
     Conv+BatchNorm folded as in the ONNX export, so both run the same arithmetic)
in --rounds interleaved rounds, and reports the median over rounds of: modelstat whole-model median, PyTorch median, their ratio (goal
<= 1.05), the per-layer sum vs the whole-model median (goal within 10%), and
the two modelstat runs' agreement (goal within 2%).

--pin CPUS runs every command under `taskset -c CPUS` (e.g. --pin 1 with --threads 1): on the
shared 2-vCPU VM an unpinned single-thread run migrates between the vCPUs and its median moves
by 10-60% from one process to the next; pinned, by a few percent.

    /usr/bin/python3 bench/bench_profiler.py --modelstat build/tools/modelstat \
        [--models resnet50 mobilenet_v2] [--threads 2] [--pin 1] [--workdir DIR] [--out FILE]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PY = "/usr/bin/python3"
PIN = []  # ["taskset", "-c", CPUS] with --pin


def export(name, workdir):
    path = os.path.join(workdir, f"{name}.opset13.onnx")
    if not os.path.exists(path):
        subprocess.run([PY, os.path.join(ROOT, "tests/e2e/export_torchvision.py"), name, path, "--opset", "13"],
                       check=True, stdout=subprocess.DEVNULL)
    return path


def modelstat_profile(binary, path, threads, extra):
    out = subprocess.run(PIN + [binary, "profile", path, "--device", "cpu", "--threads", str(threads), "-f", "json",
                          "--min-time", "2", "--max-time", "8"] + extra,
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def torch_reference(name, threads):
    out = subprocess.run(PIN + [PY, os.path.join(HERE, "torch_reference.py"), "--model", name, "--threads", str(threads),
                          "--min-time", "2", "--max-time", "8", "--fuse"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--modelstat", required=True)
    p.add_argument("--models", nargs="*", default=["resnet50", "mobilenet_v2"])
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--workdir", default="/tmp/modelstat_bench")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--out", default=None)
    p.add_argument("--pin", default=None, help="CPU list for taskset -c (both sides), e.g. 1")
    args = p.parse_args()
    if args.pin:
        PIN.extend(["taskset", "-c", args.pin])
    os.makedirs(args.workdir, exist_ok=True)

    rows = []
    for name in args.models:
        path = export(name, args.workdir)
        # Interleaved rounds: modelstat (twice, back to back) then PyTorch, so
        # slow drifts of a shared machine hit both sides alike.
        ms, ms2, refs, layer_sums, runs, stops = [], [], [], [], [], []
        for _ in range(args.rounds):
            first = modelstat_profile(args.modelstat, path, args.threads, [])
            second = modelstat_profile(args.modelstat, path, args.threads, ["--no-layers"])
            ref = torch_reference(name, args.threads)
            ms.append(first["whole"]["median_s"])
            ms2.append(second["whole"]["median_s"])
            layer_sums.append(first["layer_sum"]["median_s"])
            refs.append(ref["median_s"])
            runs.append(first["whole"]["count"])
            stops.append(first["whole"]["stop_reason"])
        med = statistics.median
        m1, m2, r, ls = med(ms), med(ms2), med(refs), med(layer_sums)
        rows.append({
            "model": name, "threads": args.threads, "rounds": args.rounds,
            "modelstat_ms": m1 * 1e3, "modelstat_run2_ms": m2 * 1e3, "torch_ms": r * 1e3,
            "ratio": m1 / r, "layer_sum_ms": ls * 1e3,
            "layer_sum_vs_whole": ls / m1 - 1.0, "run_to_run": m2 / m1 - 1.0,
            "modelstat_runs": sum(runs), "torch_runs": "-", "stop": stops,
            "per_round": {"modelstat_ms": [x * 1e3 for x in ms], "modelstat_run2_ms": [x * 1e3 for x in ms2],
                          "torch_ms": [x * 1e3 for x in refs], "layer_sum_ms": [x * 1e3 for x in layer_sums]},
        })

    lines = ["| model | threads | modelstat median | PyTorch eager median | ratio (goal <= 1.05) | layer sum | "
             "layer sum vs whole (goal +-10%) | 2nd run | run-to-run (goal +-2%) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['threads']} | {r['modelstat_ms']:.2f} ms ({r['modelstat_runs']} runs) | "
                     f"{r['torch_ms']:.2f} ms | {r['ratio']:.3f} | {r['layer_sum_ms']:.2f} ms | "
                     f"{r['layer_sum_vs_whole']*100:+.1f}% | {r['modelstat_run2_ms']:.2f} ms | {r['run_to_run']*100:+.1f}% |")
    text = "\n".join(lines)
    print(text)
    print(json.dumps(rows, indent=1), file=sys.stderr)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()

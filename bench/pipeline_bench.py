#!/usr/bin/env python3
"""Issue 15's acceptance figures on the CPU: seed 001's part0 -> 2 ms of busy
host work -> part1 (sample_models/custom_model_part{0,1}.onnx, skeleton
weights filled from the seed) at batch 1 and 8:

  - per-stage medians (events pass), their sum, end to end (clean pass);
  - `--in-flight 1`: sum of stage service medians vs per-frame latency median;
  - `--in-flight 2` throughput vs `--in-flight 1`, and the bottleneck stage;
  - each model stage's median vs `modelstat profile` of that model alone
    (same bindings, same threads), run in the same bench, interleaved;
  - the timer comparison table (batch 1).

Self-contained: writes its pipeline descriptions to --workdir, runs the
modelstat binary given, prints a Markdown section for bench/RESULTS.md.
Runs on every core given to it (default: taskset -c 0,1 and --threads 2, as
--in-flight 2 needs two cores); unsets OPENBLAS_CORETYPE (bench_common).

  /usr/bin/python3 bench/pipeline_bench.py [--modelstat build/tools/modelstat]
      [--batches 1,8] [--cpus 0,1] [--threads 2] [--workdir /tmp/pipeline_bench] [--json out.json]
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import clean_env, parse_flags  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, "sample_models")

# Measurement budgets per batch: part0 at batch 8 runs seconds per iteration
# on a 2-vCPU VM, so its passes are capped by time rather than iteration count.
BUDGET = {
    "1": ["--warmup", "2", "--warmup-time", "0.5", "--iters", "10", "--min-time", "2", "--max-time", "10"],
    "8": ["--warmup", "1", "--warmup-time", "0", "--iters", "3", "--min-time", "0", "--max-time", "15"],
}


def run(cmd, cpus, env):
    full = ["taskset", "-c", cpus] + cmd
    t = time.time()
    out = subprocess.run(full, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("failed (%d): %s\n%s" % (out.returncode, " ".join(full), out.stderr))
    return out.stdout, time.time() - t


def describe(batch, workdir):
    path = os.path.join(workdir, "seed001_b%s.json" % batch)
    with open(path, "w") as f:
        json.dump({"version": 1, "stages": [
            {"name": "part0", "model": os.path.join(MODELS, "custom_model_part0.onnx"), "dims": {"batch": int(batch)}},
            {"name": "numpy", "host": {"busy_ms": 2.0}},
            {"name": "part1", "model": os.path.join(MODELS, "custom_model_part1.onnx"), "inputs": {"x": "part0.y"}},
        ]}, f, indent=1)
    return path


def ms(s):
    return "%.2f ms" % (s * 1e3) if s < 1 else "%.3f s" % s


def pct(a, b):
    return "%+.1f%%" % (100.0 * (a - b) / b)


def main():
    o = parse_flags(sys.argv[1:], {"modelstat": os.path.join(ROOT, "build/tools/modelstat"), "batches": ["1", "8"],
                                   "cpus": "0,1", "threads": "2", "workdir": "/tmp/pipeline_bench", "json": None},
                    __doc__)
    os.makedirs(o["workdir"], exist_ok=True)
    env = clean_env()
    m = o["modelstat"]
    threads = ["--threads", o["threads"]]
    results = {}
    started = time.time()
    for b in o["batches"]:
        budget = BUDGET.get(b, BUDGET["8"])
        pipe = describe(b, o["workdir"])
        r = {}
        # Interleaved: profile part0, pipeline (in flight 1), profile part1, pipeline (in flight 2).
        out, r["t_profile0"] = run([m, "profile", os.path.join(MODELS, "custom_model_part0.onnx"), "--dim", "batch=" + b,
                                    "--no-layers", "-f", "json"] + threads + budget, o["cpus"], env)
        r["profile_part0"] = json.loads(out)["whole"]["median_s"]
        extra = ["--timer-comparison"] if b == "1" else []
        out, r["t_pipe1"] = run([m, "pipeline", pipe, "--in-flight", "1", "-f", "json"] + threads + budget + extra,
                                o["cpus"], env)
        r["pipe1"] = json.loads(out)
        out, r["t_profile1"] = run([m, "profile", os.path.join(MODELS, "custom_model_part1.onnx"), "--dim", "batch=" + b,
                                    "--no-layers", "-f", "json"] + threads + budget, o["cpus"], env)
        r["profile_part1"] = json.loads(out)["whole"]["median_s"]
        out, r["t_pipe2"] = run([m, "pipeline", pipe, "--in-flight", "2", "-f", "json"] + threads + budget,
                                o["cpus"], env)
        r["pipe2"] = json.loads(out)
        if b == "1":
            table, _ = run([m, "pipeline", pipe, "--timer-comparison"] + threads + budget, o["cpus"], env)
            r["timer_table"] = table
        results[b] = r
    elapsed = time.time() - started

    lines = ["| batch | part0 | host 2 ms | part1 | sum of stages | end to end | sum vs e2e | "
             "in-flight 1: stage sum / frame latency | in-flight 1 fps | in-flight 2 fps | x | bottleneck (2) |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    checks = ["| batch | stage | pipeline median (events pass) | `profile` alone | diff | in-flight 1 service median | diff |",
              "|---:|---|---:|---:|---:|---:|---:|"]
    for b, r in results.items():
        p1, p2 = r["pipe1"], r["pipe2"]
        st = [s["time"]["median_s"] for s in p1["staged"]["stages"]]
        e2e = p1["end_to_end"]["median_s"]
        f1, f2 = p1["in_flight"], p2["in_flight"]
        f1_sum = sum(s["time"]["median_s"] for s in f1["stages"])
        f1_lat = f1["latency"]["median_s"]
        bott = f2["stages"][f2["bottleneck_stage"]]["stage"]
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s / %s (%s) | %.2f | %.2f | %.2fx | %s |" % (
            b, ms(st[0]), ms(st[1]), ms(st[2]), ms(sum(st)), ms(e2e), pct(sum(st), e2e), ms(f1_sum), ms(f1_lat),
            pct(f1_sum, f1_lat), f1["throughput_per_s"], f2["throughput_per_s"],
            f2["throughput_per_s"] / f1["throughput_per_s"], bott))
        for k, name in ((0, "part0"), (2, "part1")):
            alone = r["profile_" + name]
            svc = f1["stages"][k]["time"]["median_s"]
            checks.append("| %s | %s | %s | %s | %s | %s | %s |" % (b, name, ms(st[k]), ms(alone), pct(st[k], alone),
                                                                   ms(svc), pct(svc, alone)))
        r["in_flight_2_threads"] = f2["threads"]
    print("Pipeline bench (bench/pipeline_bench.py), %s, taskset -c %s, --threads %s, %.0f s in all\n" % (
        results[o["batches"][0]]["pipe1"]["context"]["device_name"], o["cpus"], o["threads"], elapsed))
    print("\n".join(lines) + "\n")
    print("\n".join(checks) + "\n")
    for b, r in results.items():
        print("batch %s, --in-flight 2 threads: %s" % (b, r["in_flight_2_threads"]))
        print("batch %s runs (s): profile part0 %.0f, pipeline in-flight 1 %.0f, profile part1 %.0f, pipeline in-flight 2 %.0f"
              % (b, r["t_profile0"], r["t_pipe1"], r["t_profile1"], r["t_pipe2"]))
    if "1" in results:
        print("\nTimer comparison, batch 1 (`modelstat pipeline ... --timer-comparison`):\n\n```text")
        print(results["1"]["timer_table"].rstrip() + "\n```")
    if o["json"]:
        with open(o["json"], "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()

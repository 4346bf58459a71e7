#!/usr/bin/python3
"""OpenMP wait policy at N threads, quiet and beside CPU hogs, against ONNX Runtime under the same load.

    /usr/bin/python3 bench/wait_policy_sweep.py [--models /tmp/b14] [--only mobilenet_v2,resnet50]
        [--configs default,passive,spin3000,spin30000] [--hogs 0,1] [--threads 2] [--rounds 2] [--out FILE.json]

Each config is `modelstat profile MODEL --no-layers --threads N` (bench/cpu_runtime_bench.py's
runner, pinned to CPUs 0..N-1, under the bench lock) in an environment:

  default     modelstat's default: OMP_WAIT_POLICY=PASSIVE, and GOMP_SPINCOUNT=3000 when the allowed
              CPUs were idle for 0.15 s at start (tools/cpu_load.hpp)
  passive     OMP_WAIT_POLICY=PASSIVE alone (libgomp's spin count 0: sleep at once; the default before)
  spinK       OMP_WAIT_POLICY=PASSIVE GOMP_SPINCOUNT=K (libgomp honours an explicit spin count
              under any policy: about K/100 microseconds of spinning before a thread sleeps)
  active      OMP_WAIT_POLICY=ACTIVE (spin forever)
  libgomp     libgomp's own default (OMP_WAIT_POLICY unset: spin count 300,000)

and ONNX Runtime (onnxruntime-node, its own thread pool) runs beside each in the same conditions.
`--hogs H` starts H `yes > /dev/null` processes (not pinned, same priority) for the cells of that
load. Rounds interleave everything; the figures are medians over rounds.
"""
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cpu_runtime_bench as crb  # noqa: E402
from bench_common import parse_flags  # noqa: E402


def config_env(cfg):
    if cfg == "default":
        return {}
    if cfg == "passive":
        return {"OMP_WAIT_POLICY": "PASSIVE"}
    if cfg == "active":
        return {"OMP_WAIT_POLICY": "ACTIVE"}
    if cfg == "libgomp":
        return {"MODELSTAT_OMP_WAIT_POLICY": "libgomp"}
    if cfg.startswith("spin"):
        return {"OMP_WAIT_POLICY": "PASSIVE", "GOMP_SPINCOUNT": cfg[4:]}
    raise SystemExit(f"unknown config {cfg}")


def main(argv):
    f = parse_flags(argv, {"models": "/tmp/b14", "only": ["mobilenet_v2", "efficientnet_b0", "resnet50"],
                           "configs": ["passive", "spin3000", "spin30000"], "hogs": ["0", "1"], "threads": 2,
                           "rounds": 2, "out": None, "modelstat": "build/tools/modelstat",
                           "ort": "/tmp/ortnode/node_modules", "min_time": 1.5, "ort_iters": 30, "batch": 1}, __doc__)
    threads = f["threads"]
    cpus = "0-%d" % (threads - 1) if threads > 1 else "1"
    paths = {n: crb.ensure_bert(f["models"]) if n == "bert_encoder" else os.path.join(f["models"], n + ".onnx")
             for n in f["only"]}
    res = {}
    for r in range(f["rounds"]):
        for hogs in (int(h) for h in f["hogs"]):
            procs = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(hogs)]
            try:
                time.sleep(0.5)
                for n in f["only"]:
                    order = f["configs"] + ["ort"]
                    for who in (order if r % 2 == 0 else order[::-1]):
                        if who == "ort":
                            v = crb.ort_time(f, n, paths[n], threads, cpus)["median_s"]
                        else:
                            v = crb.modelstat_time(f, f["modelstat"], n, paths[n], threads, cpus, "on", False,
                                                   config_env(who))["median_s"]
                        res.setdefault(f"{n}|{hogs}|{who}", []).append(v)
                        print(f"{time.strftime('%H:%M:%S')} round {r + 1} hogs {hogs} {n} {who}: {v * 1e3:.2f} ms",
                              file=sys.stderr, flush=True)
            finally:
                for p in procs:
                    p.kill()
    cols = f["configs"] + ["ort"]
    print(f"threads {threads}, CPUs {cpus}, {f['rounds']} rounds, batch {f['batch']}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; medians over rounds, ms; ratio = config / ORT")
    print("| model | hogs | " + " | ".join(cols) + " | " + " | ".join(f"{c} / ORT" for c in f["configs"]) + " |")
    print("|---|---:|" + "---:|" * (2 * len(cols) - 1))
    for n in f["only"]:
        for hogs in f["hogs"]:
            med = {c: statistics.median(res[f"{n}|{hogs}|{c}"]) for c in cols}
            print(f"| {n} | {hogs} | " + " | ".join(f"{med[c] * 1e3:.2f}" for c in cols) + " | " +
                  " | ".join(f"{med[c] / med['ort']:.2f}" for c in f["configs"]) + " |")
    if f["out"]:
        with open(f["out"], "w") as fh:
            json.dump(res, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

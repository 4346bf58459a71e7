#!/usr/bin/env python3
"""Synthetic suite result files (docs/suites.md, "The result file", schema 1.0.0),
as `modelstat suite cell` tasks on many machines would leave them in a results
folder: for the scale benchmark (100 machines x 10,000 cells) and for the HTML
page's headless-Chromium test. Written from the documented format, not by
modelstat, so `suite collect` reads what the documentation promises.

  suite_synthetic.py OUT_DIR --machines 100 --cells 10000 [--samples 10] [--runs 1]
                     [--failed-every 97] [--seed 1] [--manifest FILE]

Cells: models of 100 cells each (model000, model001, ...), each the settings
batch 1, 2, 4, 8, 16 x threads 1, 2, 4, 8 x mode sync, async:2, async:4,
async:8, async:16 (batch varying fastest). Latency = the model's base x batch^0.8 / threads^0.7 x the machine's
speed, samples with 3% noise from a fixed seed. Every --failed-every-th
(cell, machine) pair failed. --runs R writes R runs per machine, a day apart,
each 2% faster than the one before. --manifest writes what was generated (JSON:
per machine and cell the latest median and status) for tests to check against.
"""
import argparse
import json
import os
import random


def fnv1a64(text):
    h = 0xCBF29CE484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--machines", type=int, default=3)
    ap.add_argument("--cells", type=int, default=40)
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--failed-every", type=int, default=97)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--manifest")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    batches, threads, modes = [1, 2, 4, 8, 16], [1, 2, 4, 8], [0, 2, 4, 8, 16]
    cells = []
    for i in range(a.cells):
        model = "model%03d" % (i // 100)
        j = i % 100
        batch = batches[j % 5]
        thr = threads[(j // 5) % 4]
        requests = modes[(j // 20) % 5]
        cells.append({
            "index": i, "key": fnv1a64("cell %d" % i), "model": model, "model_path": "/models/%s.onnx" % model,
            "model_hash": fnv1a64(model), "task": "inference", "bindings": {}, "inputs": ["x: float32 %dx3x224x224" % batch],
            "batch": batch, "threads": thr, "dtype": "model", "fusion": "on", "mode": "async" if requests else "sync",
            "requests": requests, "device": "cpu", "runtime": "modelstat",
            "base": 0.002 * (1 + (i // 100) % 17),
        })
    manifest = {"machines": [], "latest": {},
                "cells": [{k: c[k] for k in ("key", "model", "batch", "threads", "requests")} for c in cells]}
    for m in range(a.machines):
        name = "machine%03d" % m
        speed = 0.6 + 0.8 * ((m * 37) % 100) / 100.0
        machine = {"id": fnv1a64("machine " + name), "name": name, "cpu_model": "Synthetic CPU %d" % (m % 7),
                   "cores": 8 + 8 * (m % 4), "memory_bytes": (16 + 16 * (m % 8)) << 30, "gpu": "", "gpu_driver": "",
                   "host": name}
        manifest["machines"].append({"name": name, "id": machine["id"]})
        folder = os.path.join(a.out, name)
        os.makedirs(folder, exist_ok=True)
        for run in range(a.runs):
            day = "2026-01-%02d" % (1 + run)
            commit = fnv1a64("commit %d" % run) + fnv1a64("c %d" % run)[:8] + "abcdefghijklmnop"[:16]
            env = {"id": fnv1a64("env %d" % run), "modelstat_version": "0.1.%d" % run, "modelstat_commit": commit[:40],
                   "libraries": {"LibTorch": "1.13.0"}, "variables": {}, "cpu_affinity": "0-7"}
            run_id = "synthetic-%s-run%d" % (name, run)
            for c in cells:
                failed = a.failed_every and (c["index"] * 31 + m) % a.failed_every == 0
                median = c["base"] * c["batch"] ** 0.8 / c["threads"] ** 0.7 * speed * (0.98 ** run)
                doc = {"schema_version": "1.0.0", "tool": "modelstat", "kind": "suite-cell",
                       "suite": {"name": "synthetic", "file": "synthetic.yaml", "hash": fnv1a64("synthetic"), "run_id": run_id},
                       "cell": {k: c[k] for k in ("index", "key", "model", "model_path", "model_hash", "task", "bindings",
                                                  "inputs", "batch", "threads", "dtype", "fusion", "mode", "requests",
                                                  "device", "runtime")},
                       "machine": machine, "environment": env,
                       "status": "failed" if failed else "ok", "exit_code": 137 if failed else 0,
                       "error_type": "profile: signal 9 (Killed)" if failed else "",
                       "error": "out of memory (synthetic)" if failed else "",
                       "started_at": day + "T10:00:00Z", "finished_at": day + "T10:00:%02dZ" % (c["index"] % 60),
                       "wall_s": 1.5, "runtime_version": "modelstat 0.1.%d (LibTorch 1.13.0)" % run,
                       "measurement": None, "totals": None,
                       "forecast": {"latency_s": None, "error": None, "memory_bytes": None, "source": "", "note": "fit: off"},
                       "context": None, "notices": []}
                if not failed:
                    samples = sorted(median * (1 + 0.03 * rng.uniform(-1, 1)) for _ in range(a.samples))
                    rng.shuffle(samples)
                    s = sorted(samples)
                    n = len(s)
                    med = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
                    mean = sum(s) / n
                    timing = {"count": n, "median_s": med, "mean_s": mean, "stddev_s": 0.0, "cv": 0.0, "min_s": s[0],
                              "max_s": s[-1], "p50_s": med, "p90_s": s[min(n - 1, int(0.9 * n))], "p95_s": s[-1],
                              "p99_s": s[-1], "median_ci_low_s": s[0], "median_ci_high_s": s[-1], "rel_ci": 0.0,
                              "stop_reason": "synthetic", "samples_s": samples}
                    requests = c["requests"]
                    doc["measurement"] = {
                        "latency": timing, "fps": c["batch"] / med, "average_pass_s": mean,
                        "async_latency": timing if requests else None,
                        "batch_fps": c["batch"] * requests / med * 0.9 if requests else None,
                        "tokens": None, "latency_per_token_s": None}
                    doc["totals"] = {"params": 1000000, "macs": 2000000000 * c["batch"], "flops": 4000000000 * c["batch"],
                                     "bytes": 50000000, "model_bytes": 4000000, "inputs": c["inputs"], "precision": "fp32"}
                    err = rng.uniform(-0.3, 0.3)
                    doc["forecast"] = {"latency_s": med * (1 + err), "error": err, "memory_bytes": 100000000,
                                       "source": "synthetic", "note": ""}
                if run == a.runs - 1:
                    manifest["latest"]["%s/%s" % (machine["id"], c["key"])] = {
                        "status": doc["status"],
                        "median_s": doc["measurement"]["latency"]["median_s"] if doc["measurement"] else None,
                        "forecast_error": doc["forecast"]["error"], "batch_fps": doc["measurement"]["batch_fps"] if doc["measurement"] else None}
                path = os.path.join(folder, "cell-%06d-%s-%s-r%d.json" % (c["index"], c["key"], machine["id"], run))
                with open(path, "w") as f:
                    f.write(json.dumps(doc, separators=(",", ":")) + "\n")
    if a.manifest:
        with open(a.manifest, "w") as f:
            json.dump(manifest, f)


if __name__ == "__main__":
    main()

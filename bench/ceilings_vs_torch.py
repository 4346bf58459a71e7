#!/usr/bin/python3
"""Sanity check of `modelstat device`: its matmul curve next to PyTorch's own torch.mm.

Runs `modelstat device --threads T -f json --no-save` (or reads a saved ceilings
file), then times torch.mm(a, b, out=c) in this Python at the same sizes and thread
count, the same way (warm-up, batches of back-to-back calls lasting >= 1 ms, the
median of the per-call times), and prints both curves and their ratio.

PyTorch's torch.set_num_threads does not reach OpenBLAS's own thread pool, which
Debian's LibTorch uses for fp32 GEMM; modelstat sets both. The script therefore
times torch.mm twice: with torch.set_num_threads(T) alone ("torch") and with
OpenBLAS's pool set to T as well ("torch+blas", the like-for-like figure).

    /usr/bin/python3 bench/ceilings_vs_torch.py --modelstat build/tools/modelstat --threads 1
    /usr/bin/python3 bench/ceilings_vs_torch.py --ceilings ~/.cache/modelstat/ceilings-cpu.json --threads 2
"""
import argparse
import json
import os
import statistics
import subprocess
import time

import torch

from blas_threads import openblas  # bench/ is on sys.path when run as a script


def median_call_seconds(fn, min_batch_s=1e-3, warmup_s=0.2, samples=15, max_s=3.0):
    start = time.perf_counter()
    while time.perf_counter() - start < warmup_s:
        fn()
    reps = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        t = time.perf_counter() - t0
        if t >= min_batch_s:
            break
        reps *= 2
    per_call = []
    start = time.perf_counter()
    while len(per_call) < samples and (time.perf_counter() - start < max_s or len(per_call) < 5):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        per_call.append((time.perf_counter() - t0) / reps)
    return statistics.median(per_call)


def torch_curve(sizes, threads, set_blas):
    torch.set_num_threads(threads)
    blas = openblas()
    if blas is not None:
        blas.openblas_set_num_threads(threads if set_blas else os.cpu_count())
    torch.manual_seed(0x5EED)
    out = {}
    for n in sizes:
        a, b, c = torch.randn(n, n), torch.randn(n, n), torch.empty(n, n)
        s = median_call_seconds(lambda: torch.mm(a, b, out=c))
        out[n] = 2.0 * n**3 / s
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--modelstat", default="build/tools/modelstat")
    p.add_argument("--ceilings", help="read this saved file instead of running modelstat device")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()

    if args.ceilings:
        with open(args.ceilings) as f:
            ceilings = json.load(f)
    else:
        cmd = [args.modelstat, "device", "--threads", str(args.threads), "-f", "json", "--no-save"]
        if args.quick:
            cmd.append("--quick")
        ceilings = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    fp32 = next(m for m in ceilings["matmul"] if m["dtype"] == "fp32")
    sizes = [p["n"] for p in fp32["curve"]]
    ours = {p["n"]: p["flops_per_second"] for p in fp32["curve"]}

    plain = torch_curve(sizes, args.threads, set_blas=False)
    both = torch_curve(sizes, args.threads, set_blas=True)

    print(f"threads {args.threads}, ceilings threads {ceilings['threads']}, torch {torch.__version__}, "
          f"OpenBLAS {'found' if openblas() else 'absent'}")
    print(f"{'n':>6} {'modelstat':>10} {'torch+blas':>11} {'torch':>8} {'ratio':>6}   (GFLOP/s; ratio = modelstat / torch+blas)")
    for n in sizes:
        print(f"{n:>6} {ours[n] / 1e9:>10.1f} {both[n] / 1e9:>11.1f} {plain[n] / 1e9:>8.1f} {ours[n] / both[n]:>6.2f}")
    best_both = max(both.values())
    print(f"peak   modelstat {fp32['flops_per_second'] / 1e9:.1f} GFLOP/s at n={fp32['best_size']}; "
          f"torch+blas {best_both / 1e9:.1f} at n={max(both, key=both.get)}; "
          f"torch {max(plain.values()) / 1e9:.1f} at n={max(plain, key=plain.get)}")
    print(json.dumps({"threads": args.threads, "modelstat": ours, "torch_blas": both, "torch": plain}))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""What a fresh host allocation costs, and what that does to a big optimizer update.

glibc's malloc maps every allocation above its mmap threshold afresh and unmaps
it when freed (modelstat fixes the threshold at 32 MiB; PyTorch on glibc never
lets it rise above that), so each such tensor page-faults on its first write,
every time. Prints, per size, filling a reused buffer against allocating and
filling a new one (the extra cost per byte is what `modelstat device` saves as
fresh_allocation_seconds_per_byte), then times PyTorch's single-tensor Adam
update, as modelstat's training step writes it, on VGG-16's first classifier
layer (25088 x 4096, 392 MiB: two fresh temporaries per step) for a few steps.

    /usr/bin/python3 bench/fresh_memory.py [--threads 1] [--steps 4]
"""
import argparse
import math
import time

import torch

from blas_threads import set_threads  # bench/ is on sys.path when run as a script


def median_seconds(fn, runs=7):
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=4)
    args = ap.parse_args()
    set_threads(torch, args.threads)

    print("fill a reused buffer vs allocate and fill a new one (fp32)")
    for mib in (16, 31, 33, 64, 128, 256, 512):
        n = mib * 2**20 // 4
        reused = torch.empty(n)
        reused.fill_(0)
        reuse = median_seconds(lambda: reused.fill_(1.0))
        fresh = median_seconds(lambda: torch.empty(n).fill_(1.0))
        print(f"  {mib:4d} MiB: reused {reuse * 1e3:7.2f} ms, fresh {fresh * 1e3:7.2f} ms, "
              f"extra {(fresh - reuse) / (n * 4) * 1e9:.3f} ns/byte")
        del reused

    print("Adam update of a 25088 x 4096 Linear (weight 392 MiB), gradient set to none after each step")
    lin = torch.nn.Linear(25088, 4096)
    x = torch.randn(1, 25088)
    state = {}
    for step in range(1, args.steps + 1):
        t0 = time.perf_counter()
        y = lin(x)
        t1 = time.perf_counter()
        (y ** 2).mean().backward()
        t2 = time.perf_counter()
        with torch.no_grad():
            for p in lin.parameters():
                m, v = state.setdefault(id(p), (torch.zeros_like(p), torch.zeros_like(p)))
                g = p.grad
                m.mul_(0.9).add_(g, alpha=0.1)
                v.mul_(0.999).addcmul_(g, g, value=0.001)
                denom = (v.sqrt() / math.sqrt(1 - 0.999 ** step)).add_(1e-8)
                p.addcdiv_(m, denom, value=-1e-3 / (1 - 0.9 ** step))
                p.grad = None
        t3 = time.perf_counter()
        print(f"  step {step}: forward {(t1 - t0) * 1e3:6.0f} ms, backward {(t2 - t1) * 1e3:6.0f} ms, "
              f"update {(t3 - t2) * 1e3:6.0f} ms")


if __name__ == "__main__":
    main()

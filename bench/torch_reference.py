#!/usr/bin/python3
"""PyTorch eager reference timings for the models modelstat profiles.

Times the same architecture the ONNX file holds, the way METHODOLOGY.md says
(warm-up, many runs, median; CUDA: events on the stream, one sync per run),
so `bench/bench_profiler.py` and `tools/gpu_check.sh` can put modelstat's
numbers next to PyTorch's own.

    /usr/bin/python3 bench/torch_reference.py --model resnet50 --batch 1 --threads 2 [--device cpu|cuda]
    /usr/bin/python3 bench/torch_reference.py --device cuda --out FILE   # the GPU set (resnet50 b1/b32, custom b32)
    python3 bench/torch_reference.py --device cuda --fuse --dtypes fp32,tf32,fp16,bf16 --out FILE

--dtype (CUDA) matches modelstat's: fp32 turns TF32 math off in cuBLAS and cuDNN,
tf32 turns it on, fp16 / bf16 convert the weights and the input (model.to(dtype)),
own leaves PyTorch's defaults (TF32 convolutions, fp32 matmuls).

Prints one JSON object per measurement.
"""
import argparse
import json
import statistics
import sys
import time

import torch

from blas_threads import set_threads  # bench/ is on sys.path when run as a script
import torch.nn as nn


class CustomModel(nn.Module):
    """The model of seeds/001 (part0: two strided convs with GELU; part1: pool + MLP)."""

    def __init__(self):
        super().__init__()
        self.part0 = nn.Sequential(
            nn.Conv2d(3, 512, kernel_size=3, stride=2, padding=1), nn.GELU(),
            nn.Conv2d(512, 1024, kernel_size=3, stride=2, padding=1), nn.GELU())
        self.part1 = nn.Sequential(
            nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(),
            nn.Linear(1024, 2048), nn.GELU(), nn.Linear(2048, 512), nn.GELU(), nn.Linear(512, 1))

    def forward(self, x):
        return self.part1(self.part0(x))


def build(name):
    if name == "custom_model":
        return CustomModel()
    import torchvision
    return getattr(torchvision.models, name)(weights=None)


def measure(model, x, device, min_time, max_time, min_iters, warmup):
    samples = []
    with torch.inference_mode():
        for _ in range(warmup):
            model(x)
        if device == "cuda":
            torch.cuda.synchronize()
            start_ev = torch.cuda.Event(enable_timing=True)
            end_ev = torch.cuda.Event(enable_timing=True)
        t_begin = time.perf_counter()
        while True:
            if device == "cuda":
                start_ev.record()
                model(x)
                end_ev.record()
                end_ev.synchronize()
                samples.append(start_ev.elapsed_time(end_ev) / 1000.0)
            else:
                t0 = time.perf_counter()
                model(x)
                samples.append(time.perf_counter() - t0)
            elapsed = time.perf_counter() - t_begin
            if (len(samples) >= min_iters and elapsed >= min_time) or elapsed >= max_time:
                break
    return samples


DTYPES = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16,
          "own": torch.float32}


def set_math(dtype):
    if dtype in ("fp32", "tf32"):
        torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
        torch.backends.cudnn.allow_tf32 = dtype == "tf32"


def run_one(args, name, batch, dtype="own"):
    torch.manual_seed(0)
    model = build(name).eval()
    if args.fuse:
        # The ONNX export folds BatchNorm into the preceding Conv; fold it here
        # too so both sides run the same arithmetic.
        from torch.fx.experimental.optimization import fuse
        model = fuse(model)
    if args.device == "cuda":
        set_math(dtype)
    model = model.to(args.device, DTYPES[dtype])
    x = torch.randn(batch, 3, 224, 224, device=args.device).to(DTYPES[dtype])
    samples = measure(model, x, args.device, args.min_time, args.max_time, args.min_iters, args.warmup)
    med = statistics.median(samples)
    return {"model": name, "batch": batch, "device": args.device, "dtype": dtype, "threads": torch.get_num_threads(),
            "torch": torch.__version__, "fused_bn": args.fuse, "median_s": med, "mean_s": statistics.fmean(samples),
            "min_s": min(samples), "runs": len(samples), "throughput_per_s": batch / med}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default=None)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--min-time", type=float, default=2.0)
    p.add_argument("--max-time", type=float, default=20.0)
    p.add_argument("--min-iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--fuse", action="store_true", help="fold Conv+BatchNorm like the ONNX export does")
    p.add_argument("--dtypes", default="own",
                   help="comma-separated: own, fp32, tf32, fp16, bf16 (the last three on CUDA)")
    p.add_argument("--out", default=None)
    args = p.parse_args()
    if args.threads > 0:
        set_threads(torch, args.threads)  # torch's OpenMP pool and OpenBLAS's, as modelstat --threads
    if args.model:
        runs = [(args.model, args.batch)]
    else:
        runs = [("resnet50", 1), ("resnet50", 32), ("custom_model", 32)]
    results = [run_one(args, name, batch, dtype) for dtype in args.dtypes.split(",") for name, batch in runs]
    text = "\n".join(json.dumps(r) for r in results)
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""PyTorch's own training step of a torchvision model, to set next to
`modelstat profile --train-step` on the exported ONNX file.

    /usr/bin/python3 bench/train_step_reference.py --model resnet18 --batch 8 --threads 1 --optimizer adam

Same step as modelstat's (profiler/train_step.hpp): loss = mean(output^2)
(the model has one float output), backward, torch.optim update with lr 1e-3
(momentum 0.9 / Adam betas 0.9, 0.999, eps 1e-8), zero_grad(set_to_none=True).
Timed on the host clock (CPU) or CUDA events, after warm-up, median of the
runs. Two forms of the model are measured:

  train   model.train(): BatchNorm uses batch statistics, the real training step
  folded  BatchNorm folded into the preceding Conv (torch.fx fuse), eval mode:
          the graph the eval-mode ONNX export holds, so the same work as
          modelstat's step on that file

Prints one JSON object per form.
"""
import argparse
import json
import statistics
import sys
import time

import torch

from blas_threads import set_threads  # bench/ is on sys.path when run as a script


def build(name, form):
    import torchvision
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None)
    if form == "train":
        return model.train()
    from torch.fx.experimental.optimization import fuse
    return fuse(model.eval())  # Conv+BN folded, as the eval-mode ONNX export does


def optimizer_for(kind, params):
    if kind == "sgd":
        return torch.optim.SGD(params, lr=1e-3)
    if kind == "momentum":
        return torch.optim.SGD(params, lr=1e-3, momentum=0.9)
    return torch.optim.Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8)


def measure(model, x, kind, device, warmup, min_iters, min_time, max_time):
    params = [p for p in model.parameters() if p.requires_grad]
    opt = optimizer_for(kind, params)
    parts = {"forward": [], "backward": [], "optimizer": [], "whole": []}

    def step(timed):
        if device == "cuda" and timed:
            ev = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
            ev[0].record()
        t0 = time.perf_counter()
        loss = model(x).square().mean()
        if device == "cuda" and timed:
            ev[1].record()
        t1 = time.perf_counter()
        loss.backward()
        if device == "cuda" and timed:
            ev[2].record()
        t2 = time.perf_counter()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if device == "cuda" and timed:
            ev[3].record()
            ev[3].synchronize()
            f, b, o = (ev[i].elapsed_time(ev[i + 1]) / 1e3 for i in range(3))
        else:
            t3 = time.perf_counter()
            f, b, o = t1 - t0, t2 - t1, t3 - t2
        if timed:
            parts["forward"].append(f)
            parts["backward"].append(b)
            parts["optimizer"].append(o)
            parts["whole"].append(f + b + o)

    step(False)  # allocates the optimizer state
    for _ in range(warmup):
        step(False)
    if device == "cuda":
        torch.cuda.synchronize()
    begin = time.perf_counter()
    while True:
        step(True)
        elapsed = time.perf_counter() - begin
        n = len(parts["whole"])
        if (n >= min_iters and elapsed >= min_time) or elapsed >= max_time:
            break
    medians = {k: statistics.median(v) for k, v in parts.items()}
    medians["whole_min"] = min(parts["whole"])  # robust to other processes on a shared machine
    return medians, len(parts["whole"]), sum(p.numel() for p in params)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="resnet18")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--optimizer", choices=["sgd", "momentum", "adam"], default="adam")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--forms", default="train,folded")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--min-iters", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=2.0)
    ap.add_argument("--max-time", type=float, default=30.0)
    args = ap.parse_args()
    set_threads(torch, args.threads)  # torch's OpenMP pool and OpenBLAS's, as modelstat --threads
    for form in args.forms.split(","):
        model = build(args.model, form).to(args.device)
        torch.manual_seed(1)
        x = torch.randn(args.batch, 3, 224, 224, device=args.device)
        medians, runs, trainable = measure(model, x, args.optimizer, args.device, args.warmup,
                                           args.min_iters, args.min_time, args.max_time)
        print(json.dumps({"tool": "pytorch", "torch": torch.__version__, "model": args.model, "form": form,
                          "batch": args.batch, "threads": torch.get_num_threads(), "device": args.device,
                          "optimizer": args.optimizer, "trainable_params": trainable, "runs": runs,
                          "step_median_s": medians["whole"], "step_min_s": medians["whole_min"],
                          "forward_s": medians["forward"],
                          "backward_s": medians["backward"], "optimizer_s": medians["optimizer"]}))
        sys.stdout.flush()


if __name__ == "__main__":
    main()

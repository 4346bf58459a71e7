#!/usr/bin/env python3
"""Summarises tools/gpu_check.sh's outputs: modelstat's CUDA-event latency vs
PyTorch's own CUDA-event timing of the same architecture and seeded weights
(goal within +-3%), layer sum vs whole (goal within 5%), per dtype; then the
max batch, the ceilings, the training step, generation and fit where present.

    python3 bench/compare_gpu.py DIR
"""
import glob
import json
import os
import sys

DTYPES = ["fp32", "tf32", "fp16", "bf16"]
ROWS = [("resnet50", 1, "resnet50_b1"), ("resnet50", 32, "resnet50_b32"), ("custom_model", 32, "custom_b32")]


def load(path):
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def references(out):
    refs = {}
    for path in glob.glob(os.path.join(out, "torch_reference*.json")):
        with open(path) as fh:
            for line in fh:
                line = line.strip()
                if line.startswith("{"):
                    r = json.loads(line)
                    refs[(r["model"], r["batch"], r.get("dtype", "own"))] = r
    return refs


def main():
    out = sys.argv[1]
    refs = references(out)
    print("| model | batch | dtype | modelstat median | PyTorch median | ratio (goal 0.97-1.03) | "
          "layer sum vs whole (goal +-5%) |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for dtype in DTYPES:
        for name, batch, stem in ROWS:
            m = load(os.path.join(out, f"{stem}_{dtype}.json"))
            ref = refs.get((name, batch, dtype))
            if m is None:
                rtxt = f"{ref['median_s'] * 1e3:.3f} ms" if ref else "missing"
                print(f"| {name} | {batch} | {dtype} | missing | {rtxt} | | |")
                continue
            med = m["whole"]["median_s"]
            ls = (m.get("layer_sum") or {}).get("median_s")
            ratio = f"{med / ref['median_s']:.3f}" if ref else ""
            rtxt = f"{ref['median_s'] * 1e3:.3f} ms" if ref else "missing"
            lstxt = f"{(ls / med - 1) * 100:+.1f}%" if ls else ""
            print(f"| {name} | {batch} | {dtype} | {med * 1e3:.3f} ms | {rtxt} | {ratio} | {lstxt} |")
    mb = load(os.path.join(out, "resnet50_maxbatch.json"))
    if mb:
        print(f"\nresnet50 max batch: {json.dumps(mb.get('max_batch'))[:600]}")
    c = load(os.path.join(out, "ceilings_cuda.json"))
    if c:
        keep = {k: v for k, v in c.items() if not isinstance(v, (list, dict))}
        print(f"\nceilings: {json.dumps(keep)[:800]}")
    for opt in ("sgd", "adam"):
        t = load(os.path.join(out, f"resnet18_train_{opt}.json"))
        if t and t.get("train_step"):
            print(f"\nresnet18 train step ({opt}), modelstat: {json.dumps(t['train_step'])[:600]}")
    g = load(os.path.join(out, "gpt2_generate_128_128.json"))
    if g:
        print(f"\nGPT-2 128:128 on CUDA: {json.dumps(g.get('generation') or g.get('generate'))[:600]}")


if __name__ == "__main__":
    main()

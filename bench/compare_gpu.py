#!/usr/bin/env python3
"""Summarises tools/gpu_check.sh's outputs: modelstat's CUDA-event latency vs
PyTorch's own CUDA-event timing of the same architecture (goal within +-3%),
layer sum vs whole (goal within 5%), and the max batch found.

    python3 bench/compare_gpu.py OUT_DIR
"""
import json
import os
import sys


def load(path):
    with open(path) as fh:
        return json.load(fh)


def main():
    out = sys.argv[1]
    refs = {}
    with open(os.path.join(out, "torch_reference.json")) as fh:
        for line in fh:
            if line.strip():
                r = json.loads(line)
                refs[(r["model"], r["batch"])] = r
    rows = [("resnet50", 1, "resnet50_b1.json"), ("resnet50", 32, "resnet50_b32.json"),
            ("custom_model", 32, "custom_b32.json")]
    print("| model | batch | modelstat median | PyTorch median | ratio (goal 0.97-1.03) | layer sum vs whole (goal +-5%) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, batch, file in rows:
        path = os.path.join(out, file)
        if not os.path.exists(path):
            print(f"| {name} | {batch} | missing | | | |")
            continue
        m = load(path)
        ref = refs.get((name, batch))
        med = m["whole"]["median_s"]
        ls = m["layer_sum"]["median_s"]
        ratio = med / ref["median_s"] if ref else float("nan")
        print(f"| {name} | {batch} | {med*1e3:.3f} ms | {ref['median_s']*1e3 if ref else float('nan'):.3f} ms | "
              f"{ratio:.3f} | {(ls/med-1)*100:+.1f}% |")
    mb = os.path.join(out, "resnet50_maxbatch.json")
    if os.path.exists(mb):
        print(f"\nresnet50 max batch: {load(mb)['max_batch']}")


if __name__ == "__main__":
    main()

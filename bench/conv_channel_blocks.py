#!/usr/bin/python3
"""Do the executor's conv kernels compute output channels in whole blocks?

Builds synthetic ONNX chains (random weights, fixed seed) and times each conv
with `modelstat profile` (per-layer medians), pinned to one core:

  1x1 down / up  x 1x128x28x28: 8 convs alternating 128 -> N and N -> 128, so
                 N is the output channels of one half and the reduction (K)
                 of the other; N in 4..64.
  stem           x 1x3x192x192: 8 convs 3 -> N, 3x3 stride 2, reading the input.
  depthwise      x 1xCx56x56: 8 depthwise 3x3 convs in a chain, C in 96..136.

If the kernels compute output channels in blocks of B (oneDNN's fp32 vector
lanes), a conv writing N channels takes the time of one writing N rounded up
to B, and `fit` prices it so (ceilings' `conv_channel_block`, docs/FIT.md).
The reduction direction is the control: it should grow with N.

  /usr/bin/python3 bench/conv_channel_blocks.py --modelstat build/tools/modelstat \\
      --workdir /tmp/ccb [--cpu 1] [--min-time 1.5]

Prints one row per model: the median per-conv time of each direction.
Timings belong in bench/RESULTS.md, not in tests (these machines are noisy).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(path, nodes, inits, shape, outputs):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)


def weight(inits, rng, name, shape):
    inits.append(numpy_helper.from_array((rng.standard_normal(shape) * 0.05).astype(np.float32), name))
    return name


def pointwise_chain(path, rng, wide, narrow, side):
    nodes, inits, cur = [], [], "x"
    channels = [wide, narrow]
    for i in range(8):
        a, b = channels[i % 2], channels[(i + 1) % 2]
        nodes.append(helper.make_node("Conv", [cur, weight(inits, rng, f"w{i}", [b, a, 1, 1]),
                                               weight(inits, rng, f"b{i}", [b])], [f"y{i}"], kernel_shape=[1, 1]))
        cur = f"y{i}"
    save(path, nodes, inits, [1, wide, side, side], [cur])


def stem(path, rng, out, side):
    nodes, inits, outputs = [], [], []
    for i in range(8):
        nodes.append(helper.make_node("Conv", ["x", weight(inits, rng, f"w{i}", [out, 3, 3, 3]),
                                               weight(inits, rng, f"b{i}", [out])], [f"y{i}"],
                                      kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]))
        outputs.append(f"y{i}")
    save(path, nodes, inits, [1, 3, side, side], outputs)


def depthwise_chain(path, rng, channels, side):
    nodes, inits, cur = [], [], "x"
    for i in range(8):
        nodes.append(helper.make_node("Conv", [cur, weight(inits, rng, f"w{i}", [channels, 1, 3, 3]),
                                               weight(inits, rng, f"b{i}", [channels])], [f"y{i}"],
                                      kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=channels))
        cur = f"y{i}"
    save(path, nodes, inits, [1, channels, side, side], [cur])


def conv_medians_us(args, path):
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    out = subprocess.run(["taskset", "-c", str(args.cpu), args.modelstat, "profile", path, "--threads", "1",
                          "-f", "json", "--min-time", str(args.min_time)],
                         capture_output=True, text=True, env=env, check=True).stdout
    doc = json.loads(out)
    times = [l["time"]["median_s"] * 1e6 for l in doc["layers"] if l["op_type"] == "Conv"]
    kernel = next((l.get("kernel", "") for l in doc["layers"] if l["op_type"] == "Conv"), "")
    return times, kernel


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modelstat", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--cpu", type=int, default=1, help="core to pin to (default 1)")
    ap.add_argument("--min-time", type=float, default=1.5)
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    rng = np.random.default_rng(7)
    print("| model | first conv's kernel | writes N channels (us) | reduces over N (us) |")
    print("|---|---|---:|---:|")
    for n in (4, 8, 12, 16, 17, 20, 24, 32, 40, 48, 64):
        path = os.path.join(args.workdir, f"pointwise_128_{n}.onnx")
        pointwise_chain(path, rng, 128, n, 28)
        times, kernel = conv_medians_us(args, path)
        # The first conv reads the graph input (copied channels-last first): left out.
        print(f"| 1x1 128 <-> {n} at 28x28 | {kernel} | {statistics.median(times[2::2]):.1f} | "
              f"{statistics.median(times[1::2]):.1f} |", flush=True)
    for n in (4, 8, 12, 16, 20, 32):
        path = os.path.join(args.workdir, f"stem_{n}.onnx")
        stem(path, rng, n, 192)
        times, kernel = conv_medians_us(args, path)
        print(f"| 3x3/2 3 -> {n} at 96x96 | {kernel} | {statistics.median(times):.1f} | |", flush=True)
    for c in (96, 100, 112, 120, 128, 136):
        path = os.path.join(args.workdir, f"depthwise_{c}.onnx")
        depthwise_chain(path, rng, c, 56)
        times, kernel = conv_medians_us(args, path)
        # The first reads the graph input (copied channels-last): the other seven.
        print(f"| depthwise 3x3, {c} channels at 56x56 | {kernel} | {statistics.median(times[1:]):.1f} | |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

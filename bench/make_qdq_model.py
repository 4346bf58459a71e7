#!/usr/bin/python3
"""A QDQ-quantized torchvision model, as ONNX Runtime's static quantizer
(quantize_static, QuantFormat.QDQ) writes one: every Conv and Gemm takes
DequantizeLinear(QuantizeLinear(activation)) with a uint8 per-tensor scale
and zero point calibrated on random images, an int8 weight initializer with a
symmetric per-output-channel scale behind a DequantizeLinear (axis 0), and an
int32 bias (scale x_scale * w_scale) behind a DequantizeLinear.

    /usr/bin/python3 bench/make_qdq_model.py resnet18 OUT.onnx [--fp32 FP32_OUT.onnx] [--dynamic-batch]

The fp32 model (torch.onnx.export, opset 13, batch 1, 224x224; --dynamic-batch:
a symbolic batch dim "batch") is the one quantized; --fp32 keeps it for a
side-by-side run. Calibration: the min/max of
each quantized activation over 8 random N(0,1) images, run through the same
torch module with forward hooks (Conv and Linear inputs in execution order,
which is the order of the exported Conv/Gemm nodes).
"""
import sys

import numpy as np
import onnx
import torch
import torchvision
from onnx import TensorProto, helper, numpy_helper


def export_fp32(name, path, dynamic_batch=False):
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    ranges = []

    def hook(_module, inputs, _output):
        x = inputs[0].detach()
        ranges.append((float(x.min()), float(x.max())))

    layers = [m for m in model.modules() if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear))]
    handles = [m.register_forward_hook(hook) for m in layers]
    lo = [np.inf] * len(layers)
    hi = [-np.inf] * len(layers)
    with torch.no_grad():
        for _ in range(8):
            ranges.clear()
            model(torch.randn(1, 3, 224, 224))
            for k, (a, b) in enumerate(ranges):
                lo[k], hi[k] = min(lo[k], a), max(hi[k], b)
    for h in handles:
        h.remove()
    torch.onnx.export(model, torch.randn(1, 3, 224, 224), path, opset_version=13, input_names=["x"],
                      output_names=["y"], do_constant_folding=True,
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}} if dynamic_batch else None)
    return list(zip(lo, hi))


def quantize(fp32_path, ranges, out_path):
    model = onnx.load(fp32_path)
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    # torch.onnx.export shares equal constants through Identity nodes: give
    # each reader its own initializer, as a weight of its own.
    for n in [n for n in g.node if n.op_type == "Identity" and n.input[0] in inits]:
        copy = onnx.TensorProto()
        copy.CopyFrom(inits[n.input[0]])
        copy.name = n.output[0]
        g.initializer.append(copy)
        inits[copy.name] = copy
        g.node.remove(n)
    targets = [n for n in g.node if n.op_type in ("Conv", "Gemm")]
    if len(targets) != len(ranges):
        raise SystemExit(f"{len(targets)} Conv/Gemm nodes but {len(ranges)} calibrated layers")
    new_inits, nodes = [], []
    act_q = {}  # activation name -> its dequantized name (one Q/DQ pair per tensor)
    act_scale = {}
    for node, (lo, hi) in zip(targets, ranges):
        x = node.input[0]
        if x not in act_q:
            lo, hi = min(lo, 0.0), max(hi, 0.0)
            scale = (hi - lo) / 255.0 or 1.0
            zp = int(np.clip(round(-lo / scale), 0, 255))
            base = x.replace(":", "_").replace("/", "_")
            new_inits += [numpy_helper.from_array(np.array(scale, np.float32), base + "_scale"),
                          numpy_helper.from_array(np.array(zp, np.uint8), base + "_zp")]
            nodes.append(helper.make_node("QuantizeLinear", [x, base + "_scale", base + "_zp"], [base + "_q"],
                                          name=base + "_QuantizeLinear"))
            nodes.append(helper.make_node("DequantizeLinear", [base + "_q", base + "_scale", base + "_zp"],
                                          [base + "_dq"], name=base + "_DequantizeLinear"))
            act_q[x], act_scale[x] = base + "_dq", scale
        w = numpy_helper.to_array(inits[node.input[1]]).astype(np.float32)
        axis = 0  # Conv: output channels; Gemm (transB=1, weight N x K): N
        if node.op_type == "Gemm" and not any(a.name == "transB" and a.i == 1 for a in node.attribute):
            raise SystemExit("expected Gemm with transB=1")
        flat = np.abs(w.reshape(w.shape[0], -1)).max(axis=1)
        w_scale = np.where(flat > 0, flat / 127.0, 1.0).astype(np.float32)
        shape = (-1,) + (1,) * (w.ndim - 1)
        w_q = np.clip(np.round(w / w_scale.reshape(shape)), -127, 127).astype(np.int8)
        wn = node.input[1]
        new_inits += [numpy_helper.from_array(w_q, wn + "_quantized"),
                      numpy_helper.from_array(w_scale, wn + "_scale"),
                      numpy_helper.from_array(np.zeros(w.shape[0], np.int8), wn + "_zp")]
        nodes.append(helper.make_node("DequantizeLinear", [wn + "_quantized", wn + "_scale", wn + "_zp"],
                                      [wn + "_dq"], name=wn + "_DequantizeLinear", axis=axis))
        inputs = [act_q[x], wn + "_dq"]
        if len(node.input) > 2 and node.input[2]:
            bn = node.input[2]
            b = numpy_helper.to_array(inits[bn]).astype(np.float64)
            b_scale = (act_scale[x] * w_scale.astype(np.float64)).astype(np.float32)
            b_q = np.round(b / b_scale).astype(np.int32)
            new_inits += [numpy_helper.from_array(b_q, bn + "_quantized"),
                          numpy_helper.from_array(b_scale, bn + "_scale"),
                          numpy_helper.from_array(np.zeros(w.shape[0], np.int32), bn + "_zp")]
            nodes.append(helper.make_node("DequantizeLinear", [bn + "_quantized", bn + "_scale", bn + "_zp"],
                                          [bn + "_dq"], name=bn + "_DequantizeLinear", axis=0))
            inputs.append(bn + "_dq")
        del node.input[:]
        node.input.extend(inputs)
    # Drop the float weights the quantized ones replace; put each Q/DQ before its reader.
    used = {i for n in g.node for i in n.input}
    kept = [t for t in g.initializer if t.name in used and t.name not in {n.input[1] for n in targets}]
    del g.initializer[:]
    g.initializer.extend(kept + new_inits)
    ordered = []
    pending = {n.output[0]: n for n in nodes}
    for n in g.node:
        for i in n.input:
            stack = [i]
            while stack:
                name = stack.pop()
                if name in pending:
                    producer = pending.pop(name)
                    stack.extend(producer.input)
                    ordered.append(producer)
        ordered.append(n)
    # Producers must precede readers: the walk above appends a DQ before its Q; fix the order.
    order = {}
    done = set(i.name for i in g.input) | set(t.name for t in g.initializer)
    result = []
    remaining = ordered
    while remaining:
        rest = []
        for n in remaining:
            if all(i in done or i == "" for i in n.input):
                result.append(n)
                done.update(n.output)
            else:
                rest.append(n)
        if len(rest) == len(remaining):
            raise SystemExit("cycle while ordering nodes")
        remaining = rest
    del g.node[:]
    g.node.extend(result)
    onnx.checker.check_model(model)
    onnx.save(model, out_path)
    counts = {}
    for n in g.node:
        counts[n.op_type] = counts.get(n.op_type, 0) + 1
    print(out_path, counts)


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    name, out = argv[0], argv[1]
    fp32 = argv[argv.index("--fp32") + 1] if "--fp32" in argv else out + ".fp32.onnx"
    ranges = export_fp32(name, fp32, "--dynamic-batch" in argv)
    quantize(fp32, ranges, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

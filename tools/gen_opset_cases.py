#!/usr/bin/python3
"""Old-opset test cases (issue 12): one small model per op whose meaning
changed between opsets, importing the old opset, in ONNX's node-test layout:

    tests/data/opset_cases/<case>/model.onnx
    tests/data/opset_cases/<case>/test_data_set_0/{input,output}_K.pb

Expected outputs are computed here with numpy from each op's documentation
at that opset: never by modelstat. Where ONNX Runtime runs the opset (7 and
later), the generator also runs every such case with onnxruntime-node
(bench/ort_run.mjs) and stops when ONNX Runtime disagrees with numpy. Every
model passes onnx.checker at its own opset. Graph outputs declare a type and
a rank, no dims, so the analyzer's shapes come from its own inference.

    /usr/bin/python3 tools/gen_opset_cases.py [--out tests/data/opset_cases] [--ort /tmp/ortnode/node_modules | --no-ort]

tests/profiler/opset_cases_test.cc runs every case through `verify_case` and
the analyzer (output shapes, and MACs/FLOPs hand-counted in that test).
Deterministic: fixed seeds, so reruns give identical files.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# The IR version of the ONNX release that introduced each opset (an old model
# carries an old IR; before IR 4 every initializer is also a graph input).
def ir_version(opset):
    if opset <= 8:
        return 3
    return {9: 4, 10: 5, 11: 6}.get(opset, 7)


def f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


class Case:
    def __init__(self, name, opset, nodes, feeds, outputs, initializers=(), ort=True, doc=""):
        self.name, self.opset, self.nodes = name, opset, nodes
        self.feeds = list(feeds)  # [(name, array)] fed at run time
        self.initializers = list(initializers)  # [(name, array)] constants in the model
        self.outputs = list(outputs)  # [(name, expected array)]
        self.ort = ort and opset >= 7  # ONNX Runtime loads opset 7 and later only
        self.doc = doc


CASES = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


def node(op, inputs, outputs, **attrs):
    return helper.make_node(op, inputs, outputs, **attrs)


# ---------------------------------------------------------------- numpy helpers

def softmax_2d(x, axis):
    """Softmax before opset 13: x coerced to 2-D at `axis`, softmax per row."""
    rows = int(np.prod(x.shape[:axis]))
    m = x.reshape(rows, -1)
    e = np.exp(m - m.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).reshape(x.shape)


def hardmax_2d(x, axis):
    rows = int(np.prod(x.shape[:axis]))
    m = x.reshape(rows, -1)
    y = np.zeros_like(m)
    y[np.arange(rows), m.argmax(axis=1)] = 1
    return y.reshape(x.shape)


def resize_legacy(x, scales, mode):
    """Upsample / Resize-10: out = floor(in * scale) per dim, asymmetric
    coordinates (x_in = x_out / scale). nearest: floor when enlarging, ceil
    when shrinking (ONNX 1.5's Resize-10 test data). linear: the two
    neighbours, the upper one clamped to the edge."""
    y = x.astype(np.float64)
    for d, s in enumerate(scales):
        n_in = y.shape[d]
        n_out = int(np.floor(n_in * s))
        src = np.arange(n_out) / s
        if mode == "nearest":
            idx = np.minimum(np.ceil(src) if s < 1 else np.floor(src), n_in - 1).astype(np.int64)
            y = np.take(y, idx, axis=d)
        else:
            lo = np.floor(src).astype(np.int64)
            hi = np.minimum(lo + 1, n_in - 1)
            lo = np.minimum(lo, n_in - 1)
            w = (src - np.floor(src)).reshape([-1 if k == d else 1 for k in range(y.ndim)])
            y = np.take(y, lo, axis=d) * (1 - w) + np.take(y, hi, axis=d) * w
    return y.astype(x.dtype)


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def gru(x, w, r, b, linear_before_reset):
    """ONNX GRU, one direction, zero initial state, default activations
    (sigmoid for z and r, tanh for h), gates ordered z, r, h."""
    seq, batch, _ = x.shape
    hidden = r.shape[-1]
    wz, wr, wh = np.split(w[0], 3)
    rz, rr, rh = np.split(r[0], 3)
    wbz, wbr, wbh, rbz, rbr, rbh = np.split(b[0], 6)
    h = np.zeros((batch, hidden), np.float32)
    ys = []
    for t in range(seq):
        xt = x[t]
        z = sigmoid(xt @ wz.T + h @ rz.T + wbz + rbz)
        rg = sigmoid(xt @ wr.T + h @ rr.T + wbr + rbr)
        if linear_before_reset:
            cand = np.tanh(xt @ wh.T + rg * (h @ rh.T + rbh) + wbh)
        else:
            cand = np.tanh(xt @ wh.T + (rg * h) @ rh.T + rbh + wbh)
        h = (1 - z) * cand + z * h
        ys.append(h)
    y = np.stack(ys)[:, None]  # [seq, dirs, batch, hidden]
    return y.astype(np.float32), h[None].astype(np.float32)


def batchnorm_training(x, scale, bias, mean, var, eps, momentum, axes):
    bm = x.mean(axis=axes)
    bv = x.var(axis=axes)
    shape = [1] + list(bm.shape) if axes == (0,) else [1, -1] + [1] * (x.ndim - 2)
    y = (x - bm.reshape(shape)) / np.sqrt(bv.reshape(shape) + eps) * scale.reshape(shape) + bias.reshape(shape)
    return y, mean * momentum + bm * (1 - momentum), var * momentum + bv * (1 - momentum), bm, bv


# ---------------------------------------------------------------- the cases

def build_cases():
    rng = np.random.default_rng(12)

    # Binary ops before opset 7: B broadcasts onto A only with broadcast=1, aligned from `axis`.
    a, b = f32(rng, 2, 3, 4, 5), f32(rng, 3, 4)
    case("add_opset6_axis", 6, [node("Add", ["A", "B"], ["Y"], broadcast=1, axis=1)], [("A", a), ("B", b)],
         [("Y", a + b.reshape(1, 3, 4, 1))])
    a, b = f32(rng, 2, 3, 4), f32(rng, 2, 3)
    case("sub_opset6_axis0", 6, [node("Sub", ["A", "B"], ["Y"], broadcast=1, axis=0)], [("A", a), ("B", b)],
         [("Y", a - b.reshape(2, 3, 1))])
    a, b = f32(rng, 2, 3, 4), f32(rng, 4)
    case("mul_opset1_suffix", 1, [node("Mul", ["A", "B"], ["Y"], broadcast=1)], [("A", a), ("B", b)],
         [("Y", a * b)])
    a = np.abs(f32(rng, 2, 3)) + 0.5
    b = np.array([2.0, 0.5], np.float32)
    case("pow_opset1_axis0", 1, [node("Pow", ["A", "B"], ["Y"], broadcast=1, axis=0)], [("A", a), ("B", b)],
         [("Y", np.power(a, b.reshape(2, 1)))])
    a, b = f32(rng, 2, 3, 4), f32(rng, 3)
    case("greater_opset1_axis", 1, [node("Greater", ["A", "B"], ["Y"], broadcast=1, axis=1)], [("A", a), ("B", b)],
         [("Y", a > b.reshape(1, 3, 1))])
    a, b = rng.random((3, 2)) > 0.5, np.array([True, False, True])
    case("xor_opset1_axis0", 1, [node("Xor", ["A", "B"], ["Y"], broadcast=1, axis=0)], [("A", a), ("B", b)],
         [("Y", np.logical_xor(a, b.reshape(3, 1)))])
    a = np.array([[1, 2, 3], [3, 2, 1]], np.int32)
    b = np.array([3, 2, 1], np.int32)
    case("equal_opset1_suffix", 1, [node("Equal", ["A", "B"], ["Y"], broadcast=1)], [("A", a), ("B", b)],
         [("Y", a == b)])

    # Gemm before opset 7: C broadcasts only with broadcast=1; Gemm-1 has no ONNX shape inference.
    a, bm, c = f32(rng, 2, 3), f32(rng, 4, 3), f32(rng, 4)
    case("gemm_opset6_broadcast", 6,
         [node("Gemm", ["A", "B", "C"], ["Y"], broadcast=1, transB=1, alpha=0.5, beta=2.0)],
         [("A", a), ("B", bm), ("C", c)], [("Y", 0.5 * a @ bm.T + 2.0 * c)])
    a, bm, c = f32(rng, 3, 2), f32(rng, 3, 4), f32(rng, 2, 4)
    case("gemm_opset1", 1, [node("Gemm", ["A", "B", "C"], ["Y"], transA=1)], [("A", a), ("B", bm), ("C", c)],
         [("Y", a.T @ bm + c)])

    # Variadic ops before opset 8: no broadcasting.
    x1, x2, x3 = f32(rng, 2, 3), f32(rng, 2, 3), f32(rng, 2, 3)
    case("sum_opset6", 6, [node("Sum", ["X1", "X2", "X3"], ["Y"])], [("X1", x1), ("X2", x2), ("X3", x3)],
         [("Y", x1 + x2 + x3)])
    case("max_opset1", 1, [node("Max", ["X1", "X2"], ["Y"])], [("X1", x1), ("X2", x2)], [("Y", np.maximum(x1, x2))])
    case("mean_opset6", 6, [node("Mean", ["X1", "X2"], ["Y"])], [("X1", x1), ("X2", x2)], [("Y", (x1 + x2) / 2)])

    # Opset-1 unary ops (no ONNX shape inference): shapes must flow through a chain.
    x = f32(rng, 2, 3)
    case("relu_sigmoid_opset1", 1, [node("Relu", ["X"], ["R"]), node("Sigmoid", ["R"], ["Y"])], [("X", x)],
         [("Y", sigmoid(np.maximum(x, 0)))])

    # Reshape before opset 5: the shape is an attribute (0 copies, -1 infers).
    x = f32(rng, 2, 3, 4)
    case("reshape_opset4_attr", 4, [node("Reshape", ["X"], ["Y"], shape=[0, -1, 2])], [("X", x)],
         [("Y", x.reshape(2, 6, 2))])

    # Slice: attributes before opset 10 (ends past the dim clamp), inputs with steps from 10.
    x = f32(rng, 3, 4, 5)
    case("slice_opset9_attrs", 9, [node("Slice", ["X"], ["Y"], starts=[1, -3], ends=[1000, -1], axes=[0, 2])],
         [("X", x)], [("Y", x[1:, :, 2:4])])
    x = f32(rng, 2, 4, 5)
    case("slice_opset10_steps", 10, [node("Slice", ["X", "starts", "ends", "axes", "steps"], ["Y"])], [("X", x)],
         [("Y", x[:, -1:-1000:-2, 0:4:3])],
         initializers=[("starts", np.array([-1, 0], np.int64)), ("ends", np.array([-1000, 4], np.int64)),
                       ("axes", np.array([1, 2], np.int64)), ("steps", np.array([-2, 3], np.int64))])

    # Pad: attributes before opset 11, named `paddings` in opset 1.
    x = f32(rng, 1, 2, 3, 4)
    case("pad_opset2_reflect", 2, [node("Pad", ["X"], ["Y"], pads=[0, 0, 1, 2, 0, 0, 2, 1], mode="reflect")],
         [("X", x)], [("Y", np.pad(x, ((0, 0), (0, 0), (1, 2), (2, 1)), mode="reflect"))])
    x = f32(rng, 2, 3)
    case("pad_opset1_paddings", 1, [node("Pad", ["X"], ["Y"], paddings=[1, 0, 0, 2], value=1.5)], [("X", x)],
         [("Y", np.pad(x, ((1, 0), (0, 2)), constant_values=1.5))])

    # Split: the `split` attribute before opset 13; opset 1 also takes the lengths as input 1 (type T).
    x = f32(rng, 2, 4)
    case("split_opset2_attr", 2, [node("Split", ["X"], ["Y0", "Y1"], axis=1, split=[1, 3])], [("X", x)],
         [("Y0", x[:, :1]), ("Y1", x[:, 1:])])
    x = f32(rng, 4, 3)
    case("split_opset1_input", 1, [node("Split", ["X", "lengths"], ["Y0", "Y1"])], [("X", x)],
         [("Y0", x[:3]), ("Y1", x[3:])], initializers=[("lengths", np.array([3, 1], np.float32))])
    x = f32(rng, 2, 6)
    case("split_opset11_equal", 11, [node("Split", ["X"], ["Y0", "Y1", "Y2"], axis=-1)], [("X", x)],
         [("Y0", x[:, 0:2]), ("Y1", x[:, 2:4]), ("Y2", x[:, 4:6])])

    # Squeeze / Unsqueeze: axes attribute before opset 13 (negative from 11).
    x = f32(rng, 2, 3, 1)
    case("squeeze_opset11_negaxis", 11, [node("Squeeze", ["X"], ["Y"], axes=[-1])], [("X", x)], [("Y", x[:, :, 0])])
    x = f32(rng, 1, 2, 1, 3)
    case("squeeze_opset1_all", 1, [node("Squeeze", ["X"], ["Y"])], [("X", x)], [("Y", x.reshape(2, 3))])
    x = f32(rng, 2, 3)
    case("unsqueeze_opset1", 1, [node("Unsqueeze", ["X"], ["Y"], axes=[0, 3])], [("X", x)],
         [("Y", x.reshape(1, 2, 3, 1))])
    case("unsqueeze_opset11_negaxis", 11, [node("Unsqueeze", ["X"], ["Y"], axes=[-1])], [("X", x)],
         [("Y", x.reshape(2, 3, 1))])

    # Reductions: axes attribute (ReduceSum before 13, the others before 18).
    x = f32(rng, 2, 3, 4)
    case("reducesum_opset11_attr", 11, [node("ReduceSum", ["X"], ["Y"], axes=[0, -1], keepdims=0)], [("X", x)],
         [("Y", x.sum(axis=(0, 2)))])
    case("reducemean_opset1_all", 1, [node("ReduceMean", ["X"], ["Y"])], [("X", x)],
         [("Y", x.mean(keepdims=True))])

    # Clip: min/max attributes before opset 11 (absent: unbounded).
    x = f32(rng, 2, 3)
    case("clip_opset6_min", 6, [node("Clip", ["X"], ["Y"], min=-0.5)], [("X", x)], [("Y", np.maximum(x, -0.5))])
    case("clip_opset1_both", 1, [node("Clip", ["X"], ["Y"], min=-1.0, max=0.25)], [("X", x)],
         [("Y", np.clip(x, -1.0, 0.25))])

    # TopK: k attribute before opset 10.
    x = rng.permutation(12).astype(np.float32).reshape(3, 4)
    order = np.argsort(-x, axis=1, kind="stable")[:, :2]
    case("topk_opset1", 1, [node("TopK", ["X"], ["V", "I"], k=2)], [("X", x)],
         [("V", np.take_along_axis(x, order, axis=1)), ("I", order.astype(np.int64))])

    # Upsample and Resize-10: asymmetric coordinates.
    x = np.array([[[[1, 2], [3, 4]]]], np.float32)
    case("upsample_opset7_nearest", 7, [node("Upsample", ["X"], ["Y"], scales=[1.0, 1.0, 2.0, 3.0])], [("X", x)],
         [("Y", resize_legacy(x, [1, 1, 2, 3], "nearest"))])
    x = f32(rng, 1, 1, 2, 3)
    case("upsample_opset7_linear", 7,
         [node("Upsample", ["X"], ["Y"], scales=[1.0, 1.0, 2.0, 2.0], mode="linear")], [("X", x)],
         [("Y", resize_legacy(x, [1, 1, 2, 2], "linear"))])
    x = f32(rng, 1, 2, 2, 2)
    case("upsample_opset9_input", 9, [node("Upsample", ["X", "scales"], ["Y"])], [("X", x)],
         [("Y", resize_legacy(x, [1, 1, 2, 2], "nearest"))],
         initializers=[("scales", np.array([1, 1, 2, 2], np.float32))])
    x = np.array([[[[1, 2], [3, 4]]]], np.float32)
    case("upsample_opset1_attrs", 1, [node("Upsample", ["X"], ["Y"], height_scale=2.0, width_scale=3.0)], [("X", x)],
         [("Y", resize_legacy(x, [1, 1, 2, 3], "nearest"))])
    x = np.arange(1, 9, dtype=np.float32).reshape(1, 1, 2, 4)
    # ONNX 1.5's own opset-10 test data (test_resize_downsample_nearest/_linear): [[[[1, 3]]]] and [[[[1, 2.6666665]]]].
    down = resize_legacy(x, [1, 1, 0.6, 0.6], "nearest")
    assert down.tolist() == [[[[1.0, 3.0]]]]
    case("resize_opset10_down_nearest", 10, [node("Resize", ["X", "scales"], ["Y"], mode="nearest")], [("X", x)],
         [("Y", down)], initializers=[("scales", np.array([1, 1, 0.6, 0.6], np.float32))])
    down = resize_legacy(x, [1, 1, 0.6, 0.6], "linear")
    assert np.allclose(down, [[[[1.0, 2.6666665]]]])
    case("resize_opset10_down_linear", 10, [node("Resize", ["X", "scales"], ["Y"], mode="linear")], [("X", x)],
         [("Y", down)], initializers=[("scales", np.array([1, 1, 0.6, 0.6], np.float32))])
    x = f32(rng, 1, 1, 2, 2)
    case("resize_opset10_up_linear", 10, [node("Resize", ["X", "scales"], ["Y"], mode="linear")], [("X", x)],
         [("Y", resize_legacy(x, [1, 1, 2, 1.5], "linear"))],
         initializers=[("scales", np.array([1, 1, 2, 1.5], np.float32))])

    # Softmax family before opset 13: coerced to 2-D at axis (default 1).
    x = f32(rng, 2, 3, 4)
    case("softmax_opset11_axis1", 11, [node("Softmax", ["X"], ["Y"], axis=1)], [("X", x)], [("Y", softmax_2d(x, 1))])
    case("logsoftmax_opset1_default", 1, [node("LogSoftmax", ["X"], ["Y"])], [("X", x)],
         [("Y", np.log(softmax_2d(x, 1)))])
    case("hardmax_opset11_axis0", 11, [node("Hardmax", ["X"], ["Y"], axis=0)], [("X", x)], [("Y", hardmax_2d(x, 0))])

    # Dropout: is_test before opset 7, mask of X's type before 10, bool from 10.
    x = f32(rng, 2, 3)
    case("dropout_opset6_is_test", 6, [node("Dropout", ["X"], ["Y"], is_test=1, ratio=0.3)], [("X", x)], [("Y", x)])
    # Inference keeps every element: a mask of ones (ONNX's reference evaluator, Dropout_7). ONNX Runtime
    # fills the mask of opsets 7-11 with zeros instead (its IdentityOp): not compared with it.
    no_ort = "ONNX Runtime writes a mask of zeros for opsets 7-11"
    case("dropout_opset7_mask", 7, [node("Dropout", ["X"], ["Y", "M"], ratio=0.3)], [("X", x)],
         [("Y", x), ("M", np.ones_like(x))], ort=False, doc=no_ort)
    case("dropout_opset10_mask", 10, [node("Dropout", ["X"], ["Y", "M"], ratio=0.3)], [("X", x)],
         [("Y", x), ("M", np.ones(x.shape, bool))], ort=False, doc=no_ort)

    # BatchNormalization: is_test (before 7), spatial (before 9), training by outputs (7-13).
    x = f32(rng, 2, 3, 2, 2)
    scale, bias = f32(rng, 3), f32(rng, 3)
    mean, var = f32(rng, 3), np.abs(f32(rng, 3)) + 0.5
    bn_inputs = [("scale", scale), ("bias", bias), ("mean", mean), ("var", var)]
    per_c = (1, 3, 1, 1)
    y_test = (x - mean.reshape(per_c)) / np.sqrt(var.reshape(per_c) + 1e-3) * scale.reshape(per_c) + bias.reshape(per_c)
    case("batchnorm_opset6_is_test", 6,
         [node("BatchNormalization", ["X", "scale", "bias", "mean", "var"], ["Y"], is_test=1, epsilon=1e-3)],
         [("X", x)], [("Y", y_test)], initializers=bn_inputs)
    y, rm, rv, bm, bv = batchnorm_training(x, scale, bias, mean, var, 1e-5, 0.9, (0, 2, 3))
    case("batchnorm_opset6_training", 6,
         [node("BatchNormalization", ["X", "scale", "bias", "mean", "var"], ["Y", "RM", "RV", "SM", "SV"])],
         [("X", x)], [("Y", y), ("RM", rm), ("RV", rv), ("SM", bm), ("SV", bv)], initializers=bn_inputs)
    y, rm, rv, bm, bv = batchnorm_training(x, scale, bias, mean, var, 1e-5, 0.8, (0, 2, 3))
    case("batchnorm_opset9_training", 9,
         [node("BatchNormalization", ["X", "scale", "bias", "mean", "var"], ["Y", "RM", "RV", "SM", "SV"],
               momentum=0.8)],
         [("X", x)], [("Y", y), ("RM", rm), ("RV", rv)], initializers=bn_inputs, ort=True,
         doc="saved_mean/saved_var are implementation-defined: not graph outputs")
    xs = f32(rng, 2, 3, 2)
    p_scale, p_bias, p_mean, p_var = f32(rng, 3, 2), f32(rng, 3, 2), f32(rng, 3, 2), np.abs(f32(rng, 3, 2)) + 0.5
    case("batchnorm_opset7_spatial0", 7,
         [node("BatchNormalization", ["X", "scale", "bias", "mean", "var"], ["Y"], spatial=0)], [("X", xs)],
         [("Y", (xs - p_mean) / np.sqrt(p_var + 1e-5) * p_scale + p_bias)],
         initializers=[("scale", p_scale), ("bias", p_bias), ("mean", p_mean), ("var", p_var)])

    # Concat-1: axis optional, default 1.
    x1, x2 = f32(rng, 2, 1, 3), f32(rng, 2, 2, 3)
    case("concat_opset1_default_axis", 1, [node("Concat", ["X1", "X2"], ["Y"])], [("X1", x1), ("X2", x2)],
         [("Y", np.concatenate([x1, x2], axis=1))])

    # Cast-1: the target type is named by a string.
    x = np.array([[1.7, -2.5, 0.2], [3.9, -0.6, 100.0]], np.float32)
    case("cast_opset1_string", 1, [node("Cast", ["X"], ["Y"], to="INT32")], [("X", x)],
         [("Y", x.astype(np.int32))])

    # Flatten: axis 0 allowed from opset 1, negative from 11.
    x = f32(rng, 2, 3, 4)
    case("flatten_opset1_axis0", 1, [node("Flatten", ["X"], ["Y"], axis=0)], [("X", x)], [("Y", x.reshape(1, 24))])
    case("flatten_opset11_negaxis", 11, [node("Flatten", ["X"], ["Y"], axis=-1)], [("X", x)],
         [("Y", x.reshape(6, 4))])

    # ArgMax/ArgMin: ties take the first index, the last with select_last_index (opset 12).
    x = np.array([[2, 5], [7, 5], [7, 1]], np.float32)
    case("argmax_opset1_ties", 1, [node("ArgMax", ["X"], ["Y"])], [("X", x)], [("Y", np.array([[1, 0]], np.int64))])
    case("argmin_opset12_last", 12, [node("ArgMin", ["X"], ["Y"], axis=1, keepdims=0, select_last_index=1)],
         [("X", np.array([[3, 1, 1], [0, 0, 2]], np.float32))], [("Y", np.array([2, 1], np.int64))])

    # AveragePool: pads excluded from the count before opset 7 (no attribute), count_include_pad from 7.
    x = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    ones = np.pad(np.ones_like(x), ((0, 0), (0, 0), (1, 1), (1, 1)))
    window_sum = np.array([[padded[0, 0, i:i + 2, j:j + 2].sum() for j in (0, 2)] for i in (0, 2)])
    window_count = np.array([[ones[0, 0, i:i + 2, j:j + 2].sum() for j in (0, 2)] for i in (0, 2)])
    pool = dict(kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 1, 1])
    case("averagepool_opset1_pads", 1, [node("AveragePool", ["X"], ["Y"], **pool)], [("X", x)],
         [("Y", (window_sum / window_count).astype(np.float32).reshape(1, 1, 2, 2))])
    case("averagepool_opset7_include_pad", 7, [node("AveragePool", ["X"], ["Y"], count_include_pad=1, **pool)],
         [("X", x)], [("Y", (window_sum / 4).astype(np.float32).reshape(1, 1, 2, 2))])

    # LpPool / GlobalLpPool: p is a float in opset 1.
    x = f32(rng, 1, 1, 4)
    case("lppool_opset1_p3", 1, [node("LpPool", ["X"], ["Y"], kernel_shape=[2], strides=[2], p=3.0)], [("X", x)],
         [("Y", (np.abs(x.reshape(1, 1, 2, 2)) ** 3).sum(axis=3) ** (1 / 3))])
    x = f32(rng, 1, 2, 2, 2)
    case("globallppool_opset1_p1", 1, [node("GlobalLpPool", ["X"], ["Y"], p=1.0)], [("X", x)],
         [("Y", np.abs(x).sum(axis=(2, 3), keepdims=True))])

    # GRU: linear_before_reset from opset 3 (opset 1: always 0).
    seq, batch, inp, hid = 2, 1, 3, 2
    x = f32(rng, seq, batch, inp)
    w, r, b = f32(rng, 1, 3 * hid, inp), f32(rng, 1, 3 * hid, hid), f32(rng, 1, 6 * hid)
    for name, opset, lbr in (("gru_opset3_linear_before_reset", 3, 1), ("gru_opset7_linear_before_reset", 7, 1),
                             ("gru_opset1", 1, 0)):
        attrs = dict(hidden_size=hid)
        if opset >= 3:
            attrs["linear_before_reset"] = lbr
        y, y_h = gru(x, w, r, b, lbr)
        case(name, opset, [node("GRU", ["X", "W", "R", "B"], ["Y", "Y_h"], **attrs)], [("X", x)],
             [("Y", y), ("Y_h", y_h)], initializers=[("W", w), ("R", r), ("B", b)])

    # Scan opset 8: a batch dim on every value, the body runs per row and step.
    body = helper.make_graph(
        [node("Add", ["sum_in", "next"], ["sum_out"]), node("Identity", ["sum_out"], ["scan_out"])], "scan_body",
        [helper.make_tensor_value_info("sum_in", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("next", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("sum_out", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("scan_out", TensorProto.FLOAT, [2])])
    init, xs = f32(rng, 2, 2), f32(rng, 2, 3, 2)
    running = init[:, None, :] + np.cumsum(xs, axis=1)
    case("scan_opset8_batch2", 8, [node("Scan", ["", "initial", "x"], ["y", "z"], body=body, num_scan_inputs=1)],
         [("initial", init), ("x", xs)], [("y", running[:, -1, :]), ("z", running)])

    # Tile opset 1: tiles and axis are inputs (of X's type).
    x = f32(rng, 2, 3)
    case("tile_opset1_inputs", 1, [node("Tile", ["X", "tiles", "axis"], ["Y"])], [("X", x)],
         [("Y", np.tile(x, (1, 3)))],
         initializers=[("tiles", np.array(3, np.float32)), ("axis", np.array(1, np.float32))])

    # PRelu before opset 7: a one-element slope is shared.
    x = f32(rng, 2, 3, 2)
    case("prelu_opset6_shared", 6, [node("PRelu", ["X", "slope"], ["Y"])], [("X", x)],
         [("Y", np.where(x < 0, 0.25 * x, x))], initializers=[("slope", np.array([0.25], np.float32))])


# ---------------------------------------------------------------- writing

def value_info(name, array, with_shape):
    elem = helper.np_dtype_to_tensor_dtype(array.dtype) if hasattr(helper, "np_dtype_to_tensor_dtype") else \
        onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[array.dtype]
    # Without the shape: only the rank (onnx.checker wants a shape field), every dim left unknown.
    return helper.make_tensor_value_info(name, elem, list(array.shape) if with_shape else [None] * array.ndim)


def build_model(c):
    inits = [numpy_helper.from_array(v, n) for n, v in c.initializers]
    inputs = [value_info(n, v, True) for n, v in c.feeds]
    if ir_version(c.opset) < 4:
        inputs += [value_info(n, v, True) for n, v in c.initializers]
    outputs = [value_info(n, v, False) for n, v in c.outputs]
    graph = helper.make_graph(c.nodes, c.name, inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", c.opset)],
                              producer_name="modelstat tools/gen_opset_cases.py")
    model.ir_version = ir_version(c.opset)
    onnx.checker.check_model(model)
    return model


def run_ort(model_path, c, ort_modules):
    """The case's outputs as ONNX Runtime computes them (bench/ort_run.mjs)."""
    dtypes = {"float32": "float32", "int64": "int64", "int32": "int32", "bool": "bool"}
    with tempfile.TemporaryDirectory() as tmp:
        manifest = {"model": os.path.abspath(model_path), "inputs": [], "profile": False}
        for k, (name, array) in enumerate(c.feeds):
            file = f"in_{k}.bin"
            np.ascontiguousarray(array).tofile(os.path.join(tmp, file))
            manifest["inputs"].append({"name": name, "dtype": dtypes[str(array.dtype)], "dims": list(array.shape),
                                       "file": file})
        with open(os.path.join(tmp, "manifest.json"), "w") as f:
            json.dump(manifest, f)
        env = dict(os.environ, NODE_PATH=ort_modules)
        subprocess.run(["node", os.path.join(ROOT, "bench", "ort_run.mjs"), tmp], check=True, env=env)
        with open(os.path.join(tmp, "outputs.json")) as f:
            result = json.load(f)
        types = {"float32": np.float32, "int64": np.int64, "int32": np.int32, "bool": np.bool_}
        return result["ort_version"], [
            np.fromfile(os.path.join(tmp, o["file"]), dtype=types[o["dtype"]]).reshape(o["dims"])
            for o in result["outputs"]]


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "opset_cases"))
    parser.add_argument("--ort", default="/tmp/ortnode/node_modules", help="node_modules holding onnxruntime-node")
    parser.add_argument("--no-ort", action="store_true", help="skip the ONNX Runtime cross-check")
    args = parser.parse_args(argv)
    build_cases()
    names = [c.name for c in CASES]
    assert len(names) == len(set(names)), "duplicate case names"
    shutil.rmtree(args.out, ignore_errors=True)
    checked = 0
    for c in CASES:
        folder = os.path.join(args.out, c.name)
        data = os.path.join(folder, "test_data_set_0")
        os.makedirs(data)
        model_path = os.path.join(folder, "model.onnx")
        onnx.save(build_model(c), model_path)
        for k, (name, array) in enumerate(c.feeds):
            with open(os.path.join(data, f"input_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(array), name).SerializeToString())
        for k, (name, array) in enumerate(c.outputs):
            with open(os.path.join(data, f"output_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(array), name).SerializeToString())
        if c.ort and not args.no_ort:
            version, got = run_ort(model_path, c, args.ort)
            for (name, want), have in zip(c.outputs, got):
                ok = have.shape == want.shape and (
                    np.allclose(have, want, rtol=1e-5, atol=1e-6) if want.dtype.kind == "f" else np.array_equal(have, want))
                if not ok:
                    sys.exit(f"{c.name}: ONNX Runtime {version} disagrees with numpy on '{name}':\n{have}\nvs\n{want}")
            checked += 1
    print(f"{len(CASES)} cases in {args.out}; {checked} also checked against ONNX Runtime"
          + ("" if args.no_ort else f" (onnxruntime-node at {args.ort})"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

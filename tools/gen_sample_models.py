#!/usr/bin/python3
"""Deterministically regenerate the sample ONNX models in sample_models/.

Run with Debian's python (onnx 1.12, torch 1.13):

    /usr/bin/python3 tools/gen_sample_models.py [--out sample_models] [--full-weights]

Every model is built from fixed seeds, so two runs produce byte-identical
files (check with `sha256sum sample_models/*`).

custom_model*.onnx are committed as *skeletons*: their weights are stored as
ONNX external data (location/offset/length entries in each initializer) but
the referenced "<name>.onnx.data" files are not written (they would be ~30 MB).
Pass --full-weights to also write the .data files; the .onnx files are the
same bytes either way.
"""

import argparse
import hashlib
import os
import shutil
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:  # pragma: no cover
    sys.exit("gen_sample_models.py needs torch: run it with /usr/bin/python3")


PRODUCER = "modelstat/gen_sample_models.py"
IR_VERSION = 8  # ONNX 1.10+ readers; opsets 13..17 all exist at IR 8


# ---------------------------------------------------------------------------
# torch modules
# ---------------------------------------------------------------------------

class CustomModel(nn.Module):
    """The model from the project's seed text (Conv/GELU stem + MLP head)."""

    def __init__(self):
        super().__init__()
        self.part0 = nn.Sequential(
            nn.Conv2d(in_channels=3, out_channels=512, kernel_size=3, stride=2, padding=1),
            nn.GELU(),
            nn.Conv2d(in_channels=512, out_channels=1024, kernel_size=3, stride=2, padding=1),
            nn.GELU(),
        )
        self.part1 = nn.Sequential(
            nn.AdaptiveAvgPool2d(output_size=(1, 1)),
            nn.Flatten(),
            nn.Linear(in_features=1024, out_features=2048),
            nn.GELU(),
            nn.Linear(in_features=2048, out_features=512),
            nn.GELU(),
            nn.Linear(in_features=512, out_features=1),
        )

    def forward(self, x):
        return self.part1(self.part0(x))


class TinyCNN(nn.Module):
    """Conv+BN+ReLU, depthwise conv, MaxPool, residual Add, GAP, Flatten, Gemm."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(16), nn.ReLU())
        self.pool = nn.MaxPool2d(2)
        self.dw = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1, groups=16, bias=False),
                                nn.BatchNorm2d(16), nn.ReLU())
        self.pw = nn.Sequential(nn.Conv2d(16, 16, 1, bias=False), nn.BatchNorm2d(16))
        self.post_bn = nn.BatchNorm2d(16)    # after an Add: not foldable into a Conv
        self.relu = nn.ReLU()
        self.down = nn.Sequential(nn.Conv2d(16, 32, 3, stride=2, padding=1),
                                  nn.BatchNorm2d(32), nn.ReLU())
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = self.pool(self.stem(x))          # [1,16,16,16]
        x = self.relu(self.post_bn(x + self.pw(self.dw(x))))  # residual Add + BN
        x = self.down(x)                     # [1,32,8,8]
        return self.fc(self.flatten(self.gap(x)))


def _gelu_erf(x):
    # Explicit Erf-based GELU, so the graph has Erf whatever the exporter does.
    return 0.5 * x * (1.0 + torch.erf(x / 1.4142135623730951))


class SelfAttention(nn.Module):
    def __init__(self, hidden, heads, causal):
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.q = nn.Linear(hidden, hidden)
        self.k = nn.Linear(hidden, hidden)
        self.v = nn.Linear(hidden, hidden)
        self.o = nn.Linear(hidden, hidden)
        self.causal = causal

    def forward(self, x):
        b, s, h = x.shape
        def split(t):
            return t.view(b, s, self.heads, self.head_dim).transpose(1, 2)
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / (self.head_dim ** 0.5)
        if self.causal:
            ones = torch.ones(s, s, dtype=torch.bool, device=x.device)
            mask = torch.tril(ones)                      # Trilu (opset 14)
            scores = torch.where(mask, scores,           # Where
                                 torch.full_like(scores, -1e4))
        probs = torch.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, h)
        return self.o(ctx)


class EncoderLayer(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.attn = SelfAttention(hidden, heads, causal=False)
        self.ln1 = nn.LayerNorm(hidden)
        self.fc1 = nn.Linear(hidden, ffn)
        self.fc2 = nn.Linear(ffn, hidden)
        self.ln2 = nn.LayerNorm(hidden)

    def forward(self, x):  # post-LN, BERT style
        x = self.ln1(x + self.attn(x))
        return self.ln2(x + self.fc2(_gelu_erf(self.fc1(x))))


class TinyBert(nn.Module):
    def __init__(self, vocab=512, max_pos=64, hidden=64, heads=4, ffn=256, layers=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(max_pos, hidden)
        self.ln = nn.LayerNorm(hidden)
        self.layers = nn.ModuleList([EncoderLayer(hidden, heads, ffn) for _ in range(layers)])
        self.pool = nn.Linear(hidden, hidden)

    def forward(self, input_ids):
        s = input_ids.shape[1]
        pos = torch.arange(s, device=input_ids.device).unsqueeze(0)
        x = self.ln(self.tok(input_ids) + self.pos(pos))
        for layer in self.layers:
            x = layer(x)
        return x, torch.tanh(self.pool(x[:, 0]))


class DecoderBlock(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(hidden)
        self.attn = SelfAttention(hidden, heads, causal=True)
        self.ln2 = nn.LayerNorm(hidden)
        self.fc = nn.Linear(hidden, 4 * hidden)
        self.proj = nn.Linear(4 * hidden, hidden)

    def forward(self, x):  # pre-LN, GPT-2 style
        x = x + self.attn(self.ln1(x))
        return x + self.proj(_gelu_erf(self.fc(self.ln2(x))))


class TinyGPT2(nn.Module):
    def __init__(self, vocab=512, max_pos=64, hidden=64, heads=4, layers=2):
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(max_pos, hidden)
        self.blocks = nn.ModuleList([DecoderBlock(hidden, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(hidden)

    def forward(self, input_ids):
        s = input_ids.shape[1]
        pos = torch.arange(s, device=input_ids.device).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(pos)
        for blk in self.blocks:
            x = blk(x)
        x = self.ln_f(x)
        # Tied LM head: reuses the token embedding matrix (same initializer).
        return torch.matmul(x, self.wte.weight.t())


class ConvSiLU(nn.Module):
    def __init__(self, cin, cout, k=3, s=1):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, s, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        x = self.bn(self.conv(x))
        return x * torch.sigmoid(x)  # SiLU as x*sigmoid(x)


class TinyYolo(nn.Module):
    """YOLO-ish: CSP-style Split/Concat, SPPF MaxPools, FPN upsample, 2 heads."""

    def __init__(self, num_classes=3, anchors=3):
        super().__init__()
        self.na, self.no = anchors, num_classes + 5
        self.stem = ConvSiLU(3, 16, 3, 2)        # 32x32
        self.c2 = ConvSiLU(16, 32, 3, 2)         # 16x16
        self.csp = ConvSiLU(16, 16, 3, 1)
        self.c3 = ConvSiLU(48, 64, 3, 2)         # 8x8
        self.sppf_in = ConvSiLU(64, 32, 1, 1)
        self.pool = nn.MaxPool2d(5, 1, 2)
        self.sppf_out = ConvSiLU(128, 64, 1, 1)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.fuse = ConvSiLU(64 + 48, 32, 3, 1)
        self.head_s = nn.Conv2d(64, self.na * self.no, 1)
        self.head_l = nn.Conv2d(32, self.na * self.no, 1)

    def _head(self, conv, x):
        b, _, h, w = x.shape
        y = conv(x).view(b, self.na, self.no, h, w).permute(0, 1, 3, 4, 2)
        y = torch.sigmoid(y)
        return y.reshape(b, self.na * h * w, self.no)

    def forward(self, x):
        x = self.c2(self.stem(x))
        a, b = torch.split(x, 16, dim=1)          # Split
        p3 = torch.cat([x, self.csp(b)], dim=1)   # 48 ch, 16x16
        x = self.c3(p3)
        y0 = self.sppf_in(x)
        y1 = self.pool(y0)
        y2 = self.pool(y1)
        y3 = self.pool(y2)
        p5 = self.sppf_out(torch.cat([y0, y1, y2, y3], 1))
        f = self.fuse(torch.cat([self.up(p5), p3], 1))
        out = torch.cat([self._head(self.head_s, p5), self._head(self.head_l, f)], 1)
        boxes = out[:, :, 0:4]                    # Slice
        scores = out[:, :, 4:]                    # Slice
        return boxes, scores


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def _perturb_norms(module, seed):
    """Give every norm layer distinct, non-default affine params / statistics.

    torch 1.13's exporter deduplicates initializers with identical values, so
    freshly initialised LayerNorm/BatchNorm layers (all ones / zeros) would
    collapse into one shared initializer plus Identity nodes, which real
    trained models never do.
    """
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for mod in module.modules():
            if isinstance(mod, (nn.LayerNorm, nn.BatchNorm2d)):
                n = mod.weight.shape
                mod.weight.copy_(1.0 + 0.1 * torch.randn(n, generator=g))
                mod.bias.copy_(0.1 * torch.randn(n, generator=g))
            if isinstance(mod, nn.BatchNorm2d):
                mod.running_mean.copy_(0.1 * torch.randn(n, generator=g))
                mod.running_var.copy_(1.0 + 0.5 * torch.rand(n, generator=g))


def _torch_export(module, args, path, opset, input_names, output_names,
                  dynamic_axes=None, constant_folding=True):
    module.eval()
    with torch.no_grad():
        torch.onnx.export(module, args, path, opset_version=opset,
                          input_names=input_names, output_names=output_names,
                          dynamic_axes=dynamic_axes,
                          do_constant_folding=constant_folding)
    m = onnx.load(path)
    m.producer_name = PRODUCER
    m.producer_version = "1"
    return m


def _save(model, path):
    onnx.save_model(model, path)


def _save_external(model, path, location, threshold, write_data):
    """Save with initializers >= threshold bytes as external data in `location`.

    The .onnx bytes do not depend on write_data: when it is False the data
    file is written into a scratch directory and thrown away.
    """
    out_dir = os.path.dirname(os.path.abspath(path))
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = os.path.join(tmp, os.path.basename(path))
        onnx.save_model(model, tmp_path, save_as_external_data=True,
                        all_tensors_to_one_file=True, location=location,
                        size_threshold=threshold, convert_attribute=False)
        shutil.copyfile(tmp_path, path)
        data_path = os.path.join(out_dir, location)
        if write_data:
            shutil.copyfile(os.path.join(tmp, location), data_path)
        elif os.path.exists(data_path):
            os.remove(data_path)


def _make_model(graph, opset=13, extra_opsets=()):
    imports = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(graph, opset_imports=imports, producer_name=PRODUCER,
                          producer_version="1")
    m.ir_version = IR_VERSION
    return m


def _rng_tensor(rng, name, shape, dtype=np.float32):
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.1).astype(dtype), name)


# ---------------------------------------------------------------------------
# model builders (each returns the path(s) it wrote)
# ---------------------------------------------------------------------------

def build_custom(out, full):
    written = []
    torch.manual_seed(1)
    model = CustomModel().eval()
    parts = [
        ("custom_model", model, (1, 3, 224, 224)),
        ("custom_model_part0", model.part0, (1, 3, 224, 224)),
        ("custom_model_part1", model.part1, (1, 1024, 56, 56)),
    ]
    for name, mod, shape in parts:
        x = torch.zeros(shape)
        tmp = os.path.join(out, name + ".tmp.onnx")
        m = _torch_export(mod, (x,), tmp, 13, ["x"], ["y"],
                          dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
        os.remove(tmp)
        path = os.path.join(out, name + ".onnx")
        _save_external(m, path, name + ".onnx.data", threshold=0, write_data=full)
        written.append(path)
    return written


def build_tiny_cnn(out):
    torch.manual_seed(2)
    model = TinyCNN()
    _perturb_norms(model, 2)
    path = os.path.join(out, "tiny_cnn.onnx")
    m = _torch_export(model, (torch.zeros(1, 3, 32, 32),), path, 13, ["input"], ["logits"])
    _save(m, path)
    return [path]


def build_tiny_bert(out):
    torch.manual_seed(3)
    model = TinyBert()
    _perturb_norms(model, 3)
    ids = torch.zeros(2, 16, dtype=torch.int64)
    path = os.path.join(out, "tiny_bert.onnx")
    m = _torch_export(model, (ids,), path, 17, ["input_ids"], ["last_hidden_state", "pooled"],
                      dynamic_axes={"input_ids": {0: "batch", 1: "seq"},
                                    "last_hidden_state": {0: "batch", 1: "seq"},
                                    "pooled": {0: "batch"}})
    _save(m, path)
    return [path]


def build_tiny_gpt2(out):
    torch.manual_seed(4)
    model = TinyGPT2()
    _perturb_norms(model, 4)
    ids = torch.zeros(2, 16, dtype=torch.int64)
    path = os.path.join(out, "tiny_gpt2.onnx")
    # No constant folding: folding would materialise wte.weight^T as a second
    # initializer and break the tie we want to exercise.
    m = _torch_export(model, (ids,), path, 14, ["input_ids"], ["logits"],
                      dynamic_axes={"input_ids": {0: "batch", 1: "seq"},
                                    "logits": {0: "batch", 1: "seq"}},
                      constant_folding=False)
    _save(m, path)
    return [path]


def build_tiny_gpt2_kv(out):
    """A 2-layer GPT-2-style decoder with a KV cache, the bench decoder's code
    (bench/transformer_models.py) at toy sizes: d 64, 4 heads, vocabulary 256,
    128 positions; inputs input_ids [batch, seq] and past_key_values.{i}.key /
    value [batch, 4, past, 16], outputs logits and present.{i}.key / value."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "transformer_models", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench",
                                           "transformer_models.py"))
    tm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tm)
    torch.manual_seed(6)
    path = os.path.join(out, "tiny_gpt2_kv.onnx")
    tm.export_gpt2(path, layers=2, positions=128, d=64, heads=4, vocab=256)
    m = onnx.load(path)
    _save(m, path)
    return [path]


def build_tiny_gqa_kv(out):
    """A 2-layer decoder in ONNX Runtime GenAI's layout (bench/genai_layout_model.py):
    hidden 64, 4 query heads and 2 KV heads of 16, com.microsoft GroupQueryAttention
    with rotary inside it (cos / sin caches of 128 positions), RMS norms, SiLU-gated
    MLP 128, vocabulary 256; inputs input_ids, attention_mask [batch, total] and
    past_key_values.{i}.key / value [batch, 2, past, 16]."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "genai_layout_model", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench",
                                           "genai_layout_model.py"))
    gm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gm)
    m = gm.build(layers=2, hidden=64, heads=4, kv_heads=2, intermediate=128, vocab=256, max_positions=128, seed=7,
                 producer=PRODUCER)
    path = os.path.join(out, "tiny_gqa_kv.onnx")
    _save(m, path)
    return [path]


def build_tiny_yolo(out):
    torch.manual_seed(5)
    model = TinyYolo()
    _perturb_norms(model, 5)
    path = os.path.join(out, "tiny_yolo.onnx")
    m = _torch_export(model, (torch.zeros(1, 3, 64, 64),), path, 13, ["images"],
                      ["boxes", "scores"])
    _save(m, path)
    return [path]


def build_constant_weights(out):
    rng = np.random.default_rng(6)
    w = _rng_tensor(rng, "conv_w", (4, 3, 3, 3))
    shape = numpy_helper.from_array(np.array([1, 144], dtype=np.int64), "shape")
    nodes = [
        helper.make_node("Constant", [], ["W"], name="const_weight", value=w),
        helper.make_node("Constant", [], ["S"], name="const_shape", value=shape),
        helper.make_node("Conv", ["X", "W"], ["C"], name="conv", kernel_shape=[3, 3]),
        helper.make_node("Reshape", ["C", "S"], ["Y"], name="reshape"),
    ]
    g = helper.make_graph(
        nodes, "constant_weights",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 144])])
    path = os.path.join(out, "constant_weights.onnx")
    _save(_make_model(g, 13), path)
    return [path]


def build_tied_weights(out):
    rng = np.random.default_rng(7)
    w = _rng_tensor(rng, "W", (16, 16))
    nodes = [
        helper.make_node("MatMul", ["X", "W"], ["H"], name="matmul_0"),
        helper.make_node("Relu", ["H"], ["R"], name="relu"),
        helper.make_node("MatMul", ["R", "W"], ["Y"], name="matmul_1"),
    ]
    g = helper.make_graph(
        nodes, "tied_weights",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", 16])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", 16])],
        initializer=[w])
    path = os.path.join(out, "tied_weights.onnx")
    _save(_make_model(g, 13), path)
    return [path]


def build_control_flow(out):
    rng = np.random.default_rng(8)
    f = TensorProto.FLOAT
    inits = [
        _rng_tensor(rng, "B", (2, 4)),
        _rng_tensor(rng, "W_loop", (4, 4)),
        numpy_helper.from_array(np.array(3, dtype=np.int64), "trip_count"),
        numpy_helper.from_array(np.array(True), "loop_cond"),
    ]
    then_g = helper.make_graph(
        [helper.make_node("Add", ["X", "B"], ["then_out"], name="then_add")],
        "then_branch", [], [helper.make_tensor_value_info("then_out", f, [2, 4])])
    else_g = helper.make_graph(
        [helper.make_node("Mul", ["X", "B"], ["else_out"], name="else_mul")],
        "else_branch", [], [helper.make_tensor_value_info("else_out", f, [2, 4])])
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"], name="body_cond"),
         helper.make_node("MatMul", ["v_in", "W_loop"], ["mm"], name="body_matmul"),
         helper.make_node("Relu", ["mm"], ["v_out"], name="body_relu")],
        "loop_body",
        [helper.make_tensor_value_info("iter", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_in", f, [2, 4])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", f, [2, 4])])
    nodes = [
        helper.make_node("If", ["cond"], ["if_out"], name="if",
                         then_branch=then_g, else_branch=else_g),
        helper.make_node("Loop", ["trip_count", "loop_cond", "if_out"], ["Y"], name="loop",
                         body=body),
    ]
    g = helper.make_graph(
        nodes, "control_flow",
        [helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("X", f, [2, 4])],
        [helper.make_tensor_value_info("Y", f, [2, 4])],
        initializer=inits)
    path = os.path.join(out, "control_flow.onnx")
    _save(_make_model(g, 13), path)
    return [path]


def build_external_data(out):
    rng = np.random.default_rng(9)
    inits = [_rng_tensor(rng, "W1", (64, 128)), _rng_tensor(rng, "b1", (128,)),
             _rng_tensor(rng, "W2", (128, 10)), _rng_tensor(rng, "b2", (10,))]
    nodes = [
        helper.make_node("MatMul", ["X", "W1"], ["h0"], name="fc1"),
        helper.make_node("Add", ["h0", "b1"], ["h1"], name="fc1_bias"),
        helper.make_node("Relu", ["h1"], ["h2"], name="relu"),
        helper.make_node("MatMul", ["h2", "W2"], ["h3"], name="fc2"),
        helper.make_node("Add", ["h3", "b2"], ["Y"], name="fc2_bias"),
    ]
    g = helper.make_graph(
        nodes, "external_data",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", 64])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", 10])],
        initializer=inits)
    path = os.path.join(out, "external_data.onnx")
    # W1, W2 and b1 (512 bytes) go external; b2 (40 bytes) stays embedded.
    _save_external(_make_model(g, 13), path, "external_data.onnx.data",
                   threshold=256, write_data=True)
    return [path, path + ".data"]


# ---------------------------------------------------------------------------
# checks and summary
# ---------------------------------------------------------------------------

FLOAT_TYPES = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.DOUBLE}


def _graphs(g):
    yield g
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from _graphs(a.g)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for sg in a.graphs:
                    yield from _graphs(sg)


def _numel(t):
    n = 1
    for d in t.dims:
        n *= d
    return n


def _without_missing_external_data(m, base_dir):
    """For skeletons: turn initializers whose external data file is absent
    into graph inputs of the same type and shape, so the checker validates the
    graph without needing the weights."""
    missing = [t for t in m.graph.initializer
               if t.data_location == TensorProto.EXTERNAL
               and not os.path.exists(os.path.join(
                   base_dir, next(e.value for e in t.external_data if e.key == "location")))]
    if not missing:
        return m
    c = onnx.ModelProto()
    c.CopyFrom(m)
    names = {t.name for t in missing}
    keep = [t for t in c.graph.initializer if t.name not in names]
    del c.graph.initializer[:]
    c.graph.initializer.extend(keep)
    c.graph.input.extend(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                         for t in missing)
    return c


def summarize(path):
    m = onnx.load(path, load_external_data=False)
    stripped = _without_missing_external_data(m, os.path.dirname(path))
    if stripped is m:
        # By path, so external data files are looked up next to the model.
        # Never full_check=True on a path: onnx 1.12 then writes the inferred
        # shapes back into the file.
        onnx.checker.check_model(path)
    else:
        onnx.checker.check_model(stripped)
    # The full check (strict shape inference) in memory; no data needed.
    onnx.shape_inference.infer_shapes(stripped, check_type=True, strict_mode=True)
    nodes = sum(len(g.node) for g in _graphs(m.graph))
    floats = 0
    for g in _graphs(m.graph):
        floats += sum(_numel(t) for t in g.initializer if t.data_type in FLOAT_TYPES)
    opset = next((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), None)
    return nodes, floats, opset


def sha256(path):
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(here, "..", "sample_models"))
    ap.add_argument("--full-weights", action="store_true",
                    help="also write custom_model*.onnx.data (~30 MB, not committed)")
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    torch.use_deterministic_algorithms(True)

    written = []
    written += build_custom(out, args.full_weights)
    written += build_tiny_cnn(out)
    written += build_tiny_bert(out)
    written += build_tiny_gpt2(out)
    written += build_tiny_gpt2_kv(out)
    written += build_tiny_gqa_kv(out)
    written += build_tiny_yolo(out)
    written += build_constant_weights(out)
    written += build_tied_weights(out)
    written += build_control_flow(out)
    written += build_external_data(out)

    print(f"{'file':<28} {'bytes':>9} {'opset':>5} {'nodes':>6} {'float-init elems':>17}  sha256[:12]")
    total = 0
    for p in written:
        size = os.path.getsize(p)
        total += size
        name = os.path.basename(p)
        if p.endswith(".onnx"):
            nodes, floats, opset = summarize(p)
            print(f"{name:<28} {size:>9} {opset:>5} {nodes:>6} {floats:>17}  {sha256(p)[:12]}")
        else:
            print(f"{name:<28} {size:>9} {'':>5} {'':>6} {'':>17}  {sha256(p)[:12]}")
    print(f"{'total':<28} {total:>9}")


if __name__ == "__main__":
    main()

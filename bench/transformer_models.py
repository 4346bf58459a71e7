#!/usr/bin/python3
"""The transformer bench models of issue 13, written with Debian's torch and
exported to ONNX, then re-saved by ONNX Runtime's graph optimizer so that its
com.microsoft fused ops appear:
  gpt2.onnx          GPT-2-style decoder: 12 layers, d_model 768, 12 heads,
                     vocabulary 50257, tied embeddings (the LM head is wte^T),
                     KV cache: inputs input_ids [batch, seq] and
                     past_key_values.{i}.key/value [batch, 12, past, 64],
                     outputs logits and present.{i}.key/value [batch, 12, past+seq, 64]
  bert.onnx          BERT-base-style encoder: 12 layers, d 768, 12 heads, FFN
                     3072, vocabulary 30522, 512 positions; inputs input_ids,
                     attention_mask, token_type_ids [batch, seq]
  NAME.extended.onnx, NAME.all.onnx   each re-saved by ONNX Runtime 1.30
                     (onnxruntime-node, session option optimizedModelFilePath)
                     at graph optimisation level "extended" and "all"
    /usr/bin/python3 bench/transformer_models.py OUT_DIR [--positions N] [--layers N] [--no-ort]
--positions sets GPT-2's position-embedding table (default 1024, GPT-2's);
contexts beyond it need a larger table (the README's 4096 uses 4096).
Weights are random (seeded): costs and shapes do not depend on them.
"""
import json
import math
import os
import subprocess
import sys

import torch
import torch.nn as nn


def onnx_export(*args, **kwargs):
    """torch.onnx.export through the TorchScript exporter (dynamo=False) where torch has both (>= 2.5;
    dynamo became the default in 2.9): the graphs these benches were written against."""
    import inspect
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs.setdefault("dynamo", False)
    return torch.onnx.export(*args, **kwargs)

HERE = os.path.dirname(os.path.abspath(__file__))


class Conv1D(nn.Module):
    """GPT-2's linear layer: x @ W + b with W [in, out]."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_in, n_out) * 0.02)
        self.bias = nn.Parameter(torch.zeros(n_out))

    def forward(self, x):
        return torch.matmul(x, self.weight) + self.bias


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class GPT2Block(nn.Module):
    def __init__(self, d, heads, positions):
        super().__init__()
        self.heads, self.head = heads, d // heads
        self.ln_1 = nn.LayerNorm(d)
        self.c_attn = Conv1D(d, 3 * d)
        self.attn_proj = Conv1D(d, d)
        self.ln_2 = nn.LayerNorm(d)
        self.c_fc = Conv1D(d, 4 * d)
        self.mlp_proj = Conv1D(4 * d, d)
        # GPT-2's causal-mask buffer: a lower-triangular [1, 1, positions, positions] bool.
        self.register_buffer("bias", torch.tril(torch.ones(positions, positions, dtype=torch.bool)).view(1, 1, positions, positions))

    def split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head).permute(0, 2, 1, 3)

    def forward(self, x, past_k, past_v):
        h = self.ln_1(x)
        q, k, v = self.c_attn(h).split(self.heads * self.head, dim=2)
        q, k, v = self.split(q), self.split(k), self.split(v)
        k = torch.cat((past_k, k), dim=-2)
        v = torch.cat((past_v, v), dim=-2)
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head)
        qlen, klen = q.size(-2), k.size(-2)
        mask = self.bias[:, :, klen - qlen:klen, :klen]
        w = torch.where(mask, w, torch.tensor(torch.finfo(w.dtype).min, dtype=w.dtype))
        w = torch.softmax(w, dim=-1)
        a = torch.matmul(w, v).permute(0, 2, 1, 3)
        a = a.reshape(a.size(0), a.size(1), self.heads * self.head)
        x = x + self.attn_proj(a)
        x = x + self.mlp_proj(gelu_new(self.c_fc(self.ln_2(x))))
        return x, k, v


class GPT2(nn.Module):
    def __init__(self, layers=12, d=768, heads=12, vocab=50257, positions=1024):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(positions, d)
        self.h = nn.ModuleList([GPT2Block(d, heads, positions) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        nn.init.normal_(self.wte.weight, std=0.02)
        nn.init.normal_(self.wpe.weight, std=0.01)

    def forward(self, input_ids, *past):
        past_len = past[0].size(-2)
        positions = torch.arange(past_len, past_len + input_ids.size(-1), dtype=torch.long).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(positions)
        presents = []
        for i, block in enumerate(self.h):
            x, k, v = block(x, past[2 * i], past[2 * i + 1])
            presents += [k, v]
        x = self.ln_f(x)
        logits = torch.matmul(x, self.wte.weight.t())  # tied LM head
        return (logits, *presents)


class BertLayer(nn.Module):
    def __init__(self, d, heads, ffn):
        super().__init__()
        self.heads, self.head = heads, d // heads
        self.query, self.key, self.value = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.attn_out = nn.Linear(d, d)
        self.attn_ln = nn.LayerNorm(d, eps=1e-12)
        self.inter = nn.Linear(d, ffn)
        self.out = nn.Linear(ffn, d)
        self.out_ln = nn.LayerNorm(d, eps=1e-12)

    def split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head).permute(0, 2, 1, 3)

    def forward(self, x, ext_mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head) + ext_mask
        probs = torch.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        ctx = ctx.view(ctx.size(0), ctx.size(1), self.heads * self.head)
        x = self.attn_ln(self.attn_out(ctx) + x)
        h = nn.functional.gelu(self.inter(x))
        return self.out_ln(self.out(h) + x)


class Bert(nn.Module):
    def __init__(self, layers=12, d=768, heads=12, ffn=3072, vocab=30522, positions=512, types=2):
        super().__init__()
        self.word = nn.Embedding(vocab, d)
        self.position = nn.Embedding(positions, d)
        self.token_type = nn.Embedding(types, d)
        self.emb_ln = nn.LayerNorm(d, eps=1e-12)
        self.layer = nn.ModuleList([BertLayer(d, heads, ffn) for _ in range(layers)])
        self.pool = nn.Linear(d, d)

    def forward(self, input_ids, attention_mask, token_type_ids):
        seq = input_ids.size(1)
        positions = torch.arange(seq, dtype=torch.long).unsqueeze(0)
        x = self.emb_ln(self.word(input_ids) + self.position(positions) + self.token_type(token_type_ids))
        ext = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layer:
            x = layer(x, ext)
        return x, torch.tanh(self.pool(x[:, 0]))


def export_gpt2(path, layers, positions, d=768, heads=12, vocab=50257, model=None):
    """Exports `model` (a GPT2 of these sizes; a new one when None)."""
    model = model if model is not None else GPT2(layers=layers, d=d, heads=heads, vocab=vocab, positions=positions)
    model = model.eval()
    head = d // heads
    ids = torch.randint(0, vocab, (1, 4))
    past = [torch.randn(1, heads, 3, head) for _ in range(2 * layers)]
    names_past = []
    names_present = []
    axes = {"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}
    for i in range(layers):
        for kv in ("key", "value"):
            names_past.append(f"past_key_values.{i}.{kv}")
            names_present.append(f"present.{i}.{kv}")
            axes[names_past[-1]] = {0: "batch", 2: "past"}
            axes[names_present[-1]] = {0: "batch", 2: "total"}
    with torch.no_grad():
        onnx_export(model, (ids, *past), path, input_names=["input_ids"] + names_past,
                          output_names=["logits"] + names_present, dynamic_axes=axes, opset_version=14,
                          do_constant_folding=True)


def export_bert(path, layers):
    model = Bert(layers=layers).eval()
    ids = torch.randint(0, 30522, (1, 8))
    mask = torch.ones(1, 8, dtype=torch.long)
    types = torch.zeros(1, 8, dtype=torch.long)
    axes = {n: {0: "batch", 1: "seq"} for n in ("input_ids", "attention_mask", "token_type_ids", "last_hidden_state")}
    axes["pooler_output"] = {0: "batch"}
    with torch.no_grad():
        onnx_export(model, (ids, mask, types), path, input_names=["input_ids", "attention_mask", "token_type_ids"],
                          output_names=["last_hidden_state", "pooler_output"], dynamic_axes=axes, opset_version=14,
                          do_constant_folding=True)


def ort_optimize(src, dst, level, ort_modules):
    env = dict(os.environ, NODE_PATH=ort_modules)
    subprocess.run(["node", os.path.join(HERE, "ort_optimize.mjs"), src, dst, level], check=True, env=env)


def main(argv):
    if not argv or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    out = argv[0]
    positions = int(argv[argv.index("--positions") + 1]) if "--positions" in argv else 1024
    layers = int(argv[argv.index("--layers") + 1]) if "--layers" in argv else 12
    ort_modules = argv[argv.index("--ort") + 1] if "--ort" in argv else "/tmp/ortnode/node_modules"
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    made = {}
    for name, export in (("gpt2", lambda p: export_gpt2(p, layers, positions)), ("bert", lambda p: export_bert(p, layers))):
        path = os.path.join(out, name + ".onnx")
        export(path)
        made[name] = [path]
        if "--no-ort" not in argv:
            for level in ("extended", "all"):
                dst = os.path.join(out, f"{name}.{level}.onnx")
                ort_optimize(path, dst, level, ort_modules)
                made[name].append(dst)
    print(json.dumps(made, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

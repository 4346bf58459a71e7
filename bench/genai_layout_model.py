#!/usr/bin/python3
"""A decoder in ONNX Runtime GenAI's layout, written by hand with onnx.helper
(the model builder of onnxruntime-genai is not installed here): what its
builder emits for a Llama-style model on the CPU, fp32:

  inputs   input_ids [batch_size, sequence_length] int64,
           attention_mask [batch_size, total_sequence_length] int64,
           past_key_values.{i}.key / .value [batch_size, kv_heads, past_sequence_length, head]
  outputs  logits [batch_size, sequence_length, vocab],
           present.{i}.key / .value [batch_size, kv_heads, total_sequence_length, head]

  embeddings (Gather) -> per layer: SimplifiedLayerNormalization (RMS norm;
  SkipSimplifiedLayerNormalization with the residual from the second norm on),
  MatMul Q, K, V -> com.microsoft GroupQueryAttention (rotary inside it from
  cos / sin caches of max_positions rows, seqlens_k = sum(attention_mask) - 1,
  total_sequence_length = attention_mask's dim 1, both int32, as the builder
  computes them) -> MatMul O -> SkipSimplifiedLayerNormalization -> SiLU-gated
  MLP (MatMul gate, up; Sigmoid, Mul, Mul; MatMul down) -> final norm -> lm_head.

GenAI runs it with past_present_share_buffer (its default for
GroupQueryAttention models): one buffer of max_length rows per cache tensor,
bound as past and as present. Weights are random (fixed seed, scaled so the
logits of a greedy loop are well separated).

  /usr/bin/python3 bench/genai_layout_model.py OUT.onnx [--layers 12] [--hidden 768] [--heads 12]
      [--kv-heads 4] [--intermediate 3072] [--vocab 32000] [--max-positions 2048] [--seed 0]
"""
import argparse
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build(layers=12, hidden=768, heads=12, kv_heads=4, intermediate=3072, vocab=32000, max_positions=2048,
          seed=0, producer="modelstat/bench/genai_layout_model.py"):
    """The ModelProto. head = hidden / heads must be a multiple of 16 (ONNX
    Runtime's CPU GroupQueryAttention with rotary requires it)."""
    head = hidden // heads
    assert hidden % heads == 0 and heads % kv_heads == 0 and head % 16 == 0
    rng = np.random.default_rng(seed)
    inits, nodes = [], []

    def weight(name, shape, scale):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def const(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(op, ins, outs, name, domain="", **attrs):
        nodes.append(helper.make_node(op, ins, outs, name=name, domain=domain, **attrs))
        return outs[0]

    # Rotary caches: cos / sin of position * inv_freq, [max_positions, head / 2].
    inv_freq = 1.0 / (10000.0 ** (np.arange(0, head, 2, dtype=np.float64) / head))
    angles = np.outer(np.arange(max_positions, dtype=np.float64), inv_freq)
    const("cos_cache", np.cos(angles).astype(np.float32))
    const("sin_cache", np.sin(angles).astype(np.float32))
    const("one", np.array([1], dtype=np.int64))
    const("axis_1", np.array([1], dtype=np.int64))
    const("dim_1", np.array(1, dtype=np.int64))

    # seqlens_k and total_sequence_length from the mask, as the builder does.
    node("ReduceSum", ["attention_mask", "axis_1"], ["mask_sum"], "/model/attn_mask_reformat/ReduceSum", keepdims=0)
    node("Sub", ["mask_sum", "one"], ["mask_sum_minus_1"], "/model/attn_mask_reformat/Sub")
    node("Cast", ["mask_sum_minus_1"], ["seqlens_k"], "/model/attn_mask_reformat/Cast_seqlens", to=TensorProto.INT32)
    node("Shape", ["attention_mask"], ["mask_shape"], "/model/attn_mask_reformat/Shape")
    node("Gather", ["mask_shape", "dim_1"], ["total_len64"], "/model/attn_mask_reformat/Gather", axis=0)
    node("Cast", ["total_len64"], ["total_seq_len"], "/model/attn_mask_reformat/Cast_total", to=TensorProto.INT32)

    x = node("Gather", [weight("model.embed_tokens.weight", (vocab, hidden), 0.5), "input_ids"], ["embeds"],
             "/model/embed_tokens/Gather")
    residual = None
    norm_scale = lambda name: const(name, np.ones(hidden, dtype=np.float32))
    for i in range(layers):
        p = f"/model/layers.{i}"
        if residual is None:
            h = node("SimplifiedLayerNormalization", [x, norm_scale(f"model.layers.{i}.input_layernorm.weight")],
                     [f"{p}/input_layernorm/output_0"], f"{p}/input_layernorm/LayerNorm", axis=-1, epsilon=1e-5)
            residual = x
        else:
            outs = [f"{p}/input_layernorm/output_0", "", "", f"{p}/input_layernorm/output_3"]
            node("SkipSimplifiedLayerNormalization", [x, residual, norm_scale(f"model.layers.{i}.input_layernorm.weight")],
                 outs, f"{p}/input_layernorm/SkipLayerNorm", domain="com.microsoft", epsilon=1e-5)
            h, residual = outs[0], outs[3]
        s = 1.0 / np.sqrt(hidden)
        q = node("MatMul", [h, weight(f"model.layers.{i}.attn.q_proj.weight", (hidden, hidden), s)], [f"{p}/attn/q"],
                 f"{p}/attn/q_proj/MatMul")
        k = node("MatMul", [h, weight(f"model.layers.{i}.attn.k_proj.weight", (hidden, kv_heads * head), s)],
                 [f"{p}/attn/k"], f"{p}/attn/k_proj/MatMul")
        v = node("MatMul", [h, weight(f"model.layers.{i}.attn.v_proj.weight", (hidden, kv_heads * head), s)],
                 [f"{p}/attn/v"], f"{p}/attn/v_proj/MatMul")
        attn = node("GroupQueryAttention",
                    [q, k, v, f"past_key_values.{i}.key", f"past_key_values.{i}.value", "seqlens_k", "total_seq_len",
                     "cos_cache", "sin_cache"],
                    [f"{p}/attn/output_0", f"present.{i}.key", f"present.{i}.value"], f"{p}/attn/GroupQueryAttention",
                    domain="com.microsoft", num_heads=heads, kv_num_heads=kv_heads, do_rotary=1, rotary_interleaved=0,
                    local_window_size=-1, scale=float(1.0 / np.sqrt(head)))
        o = node("MatMul", [attn, weight(f"model.layers.{i}.attn.o_proj.weight", (hidden, hidden), s)],
                 [f"{p}/attn/o"], f"{p}/attn/o_proj/MatMul")
        outs = [f"{p}/post_attention_layernorm/output_0", "", "", f"{p}/post_attention_layernorm/output_3"]
        node("SkipSimplifiedLayerNormalization", [o, residual, norm_scale(f"model.layers.{i}.post_attention_layernorm.weight")],
             outs, f"{p}/post_attention_layernorm/SkipLayerNorm", domain="com.microsoft", epsilon=1e-5)
        h, residual = outs[0], outs[3]
        gate = node("MatMul", [h, weight(f"model.layers.{i}.mlp.gate_proj.weight", (hidden, intermediate), s)],
                    [f"{p}/mlp/gate"], f"{p}/mlp/gate_proj/MatMul")
        up = node("MatMul", [h, weight(f"model.layers.{i}.mlp.up_proj.weight", (hidden, intermediate), s)],
                  [f"{p}/mlp/up"], f"{p}/mlp/up_proj/MatMul")
        sig = node("Sigmoid", [gate], [f"{p}/mlp/act_fn/Sigmoid_output"], f"{p}/mlp/act_fn/Sigmoid")
        act = node("Mul", [gate, sig], [f"{p}/mlp/act_fn/output"], f"{p}/mlp/act_fn/Mul")
        gated = node("Mul", [act, up], [f"{p}/mlp/gated"], f"{p}/mlp/Mul")
        x = node("MatMul", [gated, weight(f"model.layers.{i}.mlp.down_proj.weight", (intermediate, hidden),
                                          1.0 / np.sqrt(intermediate))], [f"{p}/mlp/down"], f"{p}/mlp/down_proj/MatMul")
    outs = ["/model/norm/output_0", "", "", "/model/norm/output_3"]
    node("SkipSimplifiedLayerNormalization", [x, residual, norm_scale("model.norm.weight")], outs,
         "/model/norm/SkipLayerNorm", domain="com.microsoft", epsilon=1e-5)
    node("MatMul", [outs[0], weight("lm_head.weight", (hidden, vocab), 1.0 / np.sqrt(hidden))], ["logits"],
         "/lm_head/MatMul")

    f32, i64 = TensorProto.FLOAT, TensorProto.INT64
    inputs = [helper.make_tensor_value_info("input_ids", i64, ["batch_size", "sequence_length"]),
              helper.make_tensor_value_info("attention_mask", i64, ["batch_size", "total_sequence_length"])]
    outputs = [helper.make_tensor_value_info("logits", f32, ["batch_size", "sequence_length", vocab])]
    for i in range(layers):
        for kv in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_key_values.{i}.{kv}", f32,
                                                        ["batch_size", kv_heads, "past_sequence_length", head]))
            outputs.append(helper.make_tensor_value_info(f"present.{i}.{kv}", f32,
                                                         ["batch_size", kv_heads, "total_sequence_length", head]))
    graph = helper.make_graph(nodes, "genai_layout_decoder", inputs, outputs, inits)
    model = helper.make_model(graph, producer_name=producer,
                              opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    return model


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--hidden", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--intermediate", type=int, default=3072)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--max-positions", type=int, default=2048)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    model = build(a.layers, a.hidden, a.heads, a.kv_heads, a.intermediate, a.vocab, a.max_positions, a.seed)
    onnx.save(model, a.out)
    print(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/python3
"""The attention family (ONNX Runtime's contrib Attention, MultiHeadAttention,
GroupQueryAttention, RotaryEmbedding; ONNX's opset-23 Attention and
RotaryEmbedding) against ONNX Runtime: one-node models written with
onnx.helper, expected outputs from ONNX Runtime 1.30 (bench/ort_case.py), then
`modelstat verify` on each case, with masks, past state and causal variants.

    /usr/bin/python3 bench/contrib_cases.py [--out /tmp/contrib_cases] [--modelstat build/tools/modelstat]
                                            [--ort /tmp/ortnode/node_modules] [--only NAME,NAME]

Prints one line per case (the verify verdict) and a summary; exit status 1
when a case that modelstat can load fails.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

from bench_common import clean_env, parse_flags

HERE = os.path.dirname(os.path.abspath(__file__))
F, I32, I64, BOOL = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64, TensorProto.BOOL


class Case:
    """One node: inputs (name, elem type, dims, value: None = random floats, else a numpy array;
    name "" = omitted), outputs (names), attributes, domain and opset."""

    def __init__(self, name, op, inputs, outputs, attrs=None, domain="com.microsoft", opset=23):
        self.name, self.op, self.inputs, self.outputs = name, op, inputs, outputs
        self.attrs, self.domain, self.opset = attrs or {}, domain, opset

    def model(self):
        node = helper.make_node(self.op, [i[0] for i in self.inputs], self.outputs, name=self.name,
                                domain=self.domain, **self.attrs)
        graph_inputs = [helper.make_tensor_value_info(n, t, d) for n, t, d, _ in self.inputs if n]
        graph_outputs = [helper.make_tensor_value_info(o, F, None) for o in self.outputs]
        graph = helper.make_graph([node], self.name, graph_inputs, graph_outputs)
        if self.domain:
            imports = [helper.make_opsetid("", 17), helper.make_opsetid(self.domain, 1)]
        else:
            imports = [helper.make_opsetid("", self.opset)]
        m = helper.make_model(graph, opset_imports=imports, producer_name="bench/contrib_cases.py")
        m.ir_version = 10 if not self.domain else 8
        return m


def i32(values, shape=None):
    return np.array(values, dtype=np.int32).reshape(shape if shape is not None else [len(values)])


def i64(values, shape):
    return np.array(values, dtype=np.int64).reshape(shape)


def fl(name, *dims):
    return (name, F, list(dims), None)


def arr(name, array):
    kind = {np.dtype(np.int32): I32, np.dtype(np.int64): I64, np.dtype(np.bool_): BOOL}[array.dtype]
    return (name, kind, list(array.shape), array)


NONE = ("", F, [], None)


def cases():
    c = []
    # ---- com.microsoft Attention: packed QKV weights [D, q+k+v] ----
    c.append(Case("attention_bert_raw_mask", "Attention",
                  [fl("x", 2, 4, 16), fl("w", 16, 48), fl("b", 48), arr("mask", i32([1, 1, 1, 0, 1, 1, 0, 0], [2, 4]))],
                  ["y"], {"num_heads": 2}))
    c.append(Case("attention_gpt2_past_unidirectional", "Attention",
                  [fl("x", 2, 3, 16), fl("w", 16, 48), fl("b", 48), NONE, fl("past", 2, 2, 2, 5, 8)],
                  ["y", "present"], {"num_heads": 2, "unidirectional": 1}))
    c.append(Case("attention_lengths_qkv_sizes_bias", "Attention",
                  [fl("x", 2, 4, 16), fl("w", 16, 28), fl("b", 28), arr("mask", i32([4, 2])), NONE,
                   fl("attn_bias", 1, 2, 4, 4)],
                  ["y"], {"num_heads": 2, "qkv_hidden_sizes": [8, 8, 12]}))
    c.append(Case("attention_3d_mask_unidirectional", "Attention",
                  [fl("x", 1, 3, 8), fl("w", 8, 24), fl("b", 24),
                   arr("mask", i32([1, 0, 1, 1, 1, 1, 1, 1, 1], [1, 3, 3]))],
                  ["y"], {"num_heads": 2, "unidirectional": 1, "scale": 0.3}))
    # ---- com.microsoft MultiHeadAttention ----
    c.append(Case("mha_bias_key_padding_mask", "MultiHeadAttention",
                  [fl("q", 2, 3, 16), fl("k", 2, 5, 16), fl("v", 2, 5, 16), fl("b", 48),
                   arr("kpm", i32([1, 1, 1, 0, 0, 1, 1, 1, 1, 1], [2, 5]))],
                  ["y"], {"num_heads": 4}))
    c.append(Case("mha_past_unidirectional_attention_bias", "MultiHeadAttention",
                  [fl("q", 2, 3, 16), fl("k", 2, 3, 16), fl("v", 2, 3, 16), NONE, NONE, fl("attn_bias", 1, 1, 3, 6),
                   fl("past_k", 2, 4, 3, 4), fl("past_v", 2, 4, 3, 4)],
                  ["y", "present_k", "present_v"], {"num_heads": 4, "unidirectional": 1}))
    c.append(Case("mha_cross_bnsh_lengths", "MultiHeadAttention",
                  [fl("q", 2, 3, 16), fl("k", 2, 4, 5, 4), fl("v", 2, 4, 5, 4), NONE, arr("kpm", i32([5, 3]))],
                  ["y"], {"num_heads": 4}))
    # ---- com.microsoft GroupQueryAttention (BNSH caches, seqlens_k = total - 1; ONNX Runtime's
    # CPU rotary wants head sizes that are multiples of 16) ----
    c.append(Case("gqa_prompt", "GroupQueryAttention",
                  [fl("q", 1, 5, 32), fl("k", 1, 5, 16), fl("v", 1, 5, 16), NONE, NONE, arr("seqlens_k", i32([4])),
                   arr("total", i32([5], []))],
                  ["y", "present_k", "present_v"], {"num_heads": 4, "kv_num_heads": 2}))
    c.append(Case("gqa_decode_past", "GroupQueryAttention",
                  [fl("q", 2, 1, 32), fl("k", 2, 1, 16), fl("v", 2, 1, 16), fl("past_k", 2, 2, 4, 8),
                   fl("past_v", 2, 2, 4, 8), arr("seqlens_k", i32([4, 4])), arr("total", i32([5], []))],
                  ["y", "present_k", "present_v"], {"num_heads": 4, "kv_num_heads": 2}))
    for interleaved in (0, 1):
        c.append(Case(f"gqa_rotary_past_interleaved{interleaved}", "GroupQueryAttention",
                      [fl("q", 1, 2, 64), fl("k", 1, 2, 32), fl("v", 1, 2, 32), fl("past_k", 1, 2, 3, 16),
                       fl("past_v", 1, 2, 3, 16), arr("seqlens_k", i32([4])), arr("total", i32([5], [])),
                       fl("cos", 16, 8), fl("sin", 16, 8)],
                      ["y", "present_k", "present_v"],
                      {"num_heads": 4, "kv_num_heads": 2, "do_rotary": 1, "rotary_interleaved": interleaved}))
    c.append(Case("gqa_packed_local_window", "GroupQueryAttention",
                  [fl("qkv", 1, 6, 64), NONE, NONE, NONE, NONE, arr("seqlens_k", i32([5])), arr("total", i32([6], []))],
                  ["y", "present_k", "present_v"], {"num_heads": 4, "kv_num_heads": 2, "local_window_size": 2}))
    c.append(Case("gqa_softcap_attention_bias", "GroupQueryAttention",
                  [fl("q", 1, 3, 32), fl("k", 1, 3, 16), fl("v", 1, 3, 16), fl("past_k", 1, 2, 2, 8),
                   fl("past_v", 1, 2, 2, 8), arr("seqlens_k", i32([4])), arr("total", i32([5], [])), NONE, NONE, NONE,
                   fl("attn_bias", 1, 4, 3, 5)],
                  ["y", "present_k", "present_v"], {"num_heads": 4, "kv_num_heads": 2, "softcap": 2.0}))
    # ---- com.microsoft RotaryEmbedding (input, position_ids, cos_cache, sin_cache) ----
    c.append(Case("rotary_3d_position_ids", "RotaryEmbedding",
                  [fl("x", 2, 4, 16), arr("pos", i64([0, 1, 2, 3, 5, 6, 7, 2], [2, 4])), fl("cos", 8, 4), fl("sin", 8, 4)],
                  ["y"], {"num_heads": 2}))
    c.append(Case("rotary_4d_offset_interleaved", "RotaryEmbedding",
                  [fl("x", 1, 2, 3, 8), arr("pos", i64([2], [1])), fl("cos", 8, 4), fl("sin", 8, 4)],
                  ["y"], {"interleaved": 1}))
    c.append(Case("rotary_partial_dim", "RotaryEmbedding",
                  [fl("x", 1, 3, 16), arr("pos", i64([1, 2, 3], [1, 3])), fl("cos", 8, 2), fl("sin", 8, 2)],
                  ["y"], {"num_heads": 2, "rotary_embedding_dim": 4}))
    # ---- ai.onnx opset 23 ----
    c.append(Case("onnx23_attention_4d_causal_past", "Attention",
                  [fl("Q", 1, 2, 3, 8), fl("K", 1, 2, 3, 8), fl("V", 1, 2, 3, 8), NONE, fl("past_k", 1, 2, 4, 8),
                   fl("past_v", 1, 2, 4, 8)],
                  ["Y", "present_k", "present_v"], {"is_causal": 1}, domain=""))
    c.append(Case("onnx23_attention_3d_gqa_bool_mask", "Attention",
                  [fl("Q", 2, 3, 32), fl("K", 2, 5, 16), fl("V", 2, 5, 16),
                   arr("mask", np.array([[1, 1, 0, 1, 1]] * 3, dtype=np.bool_))],
                  ["Y"], {"q_num_heads": 4, "kv_num_heads": 2}, domain=""))
    c.append(Case("onnx23_rotary_3d_position_ids", "RotaryEmbedding",
                  [fl("X", 2, 3, 16), fl("cos", 8, 4), fl("sin", 8, 4), arr("pos", i64([0, 1, 2, 4, 5, 6], [2, 3]))],
                  ["Y"], {"num_heads": 2}, domain=""))
    c.append(Case("onnx23_rotary_4d_caches_per_token", "RotaryEmbedding",
                  [fl("X", 1, 2, 3, 8), fl("cos", 1, 3, 4), fl("sin", 1, 3, 4)], ["Y"], {"interleaved": 1}, domain=""))
    return c


def main(argv):
    flags = parse_flags(argv, {"out": "/tmp/contrib_cases", "modelstat": "build/tools/modelstat",
                               "ort": "/tmp/ortnode/node_modules", "only": []}, __doc__)
    os.makedirs(flags["out"], exist_ok=True)
    failed, rows = 0, []
    for seed, case in enumerate(cases()):
        if flags["only"] and case.name not in flags["only"]:
            continue
        model_path = os.path.join(flags["out"], case.name + ".onnx")
        onnx.save(case.model(), model_path)
        case_dir = os.path.join(flags["out"], case.name)
        specs = []
        for name, _, dims, value in case.inputs:
            if not name:
                continue
            if value is None:
                specs.append(f"{name}={'x'.join(str(d) for d in dims)}")
            else:
                npy = os.path.join(flags["out"], f"{case.name}.{name}.npy")
                np.save(npy, value)
                specs.append(f"{name}=@{npy}")
        ort = subprocess.run([sys.executable, os.path.join(HERE, "ort_case.py"), model_path, case_dir, str(seed), *specs,
                              "--ort", flags["ort"]], capture_output=True, text=True, env=clean_env())
        if ort.returncode != 0:
            rows.append((case.name, "ORT failed", ort.stderr.strip().splitlines()[-1:]))
            failed += 1
            continue
        verify = subprocess.run([flags["modelstat"], "verify", case_dir], capture_output=True, text=True,
                                env=clean_env())
        verdict = {0: "pass", 1: "DIFFERS"}.get(verify.returncode, "cannot load/run")
        detail = (verify.stdout + verify.stderr).strip().splitlines()
        rows.append((case.name, verdict, detail[-1:] if verify.returncode else []))
        if verify.returncode == 1 or (verify.returncode != 0 and case.domain):
            failed += 1
    for name, verdict, detail in rows:
        print(f"{name:45s} {verdict}" + (f"  ({detail[0]})" if detail else ""))
    passed = sum(1 for r in rows if r[1] == "pass")
    print(f"{passed} of {len(rows)} cases pass modelstat verify against ONNX Runtime")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

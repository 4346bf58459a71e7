// Attention executors: ONNX Runtime's contrib Attention, MultiHeadAttention,
// GroupQueryAttention and RotaryEmbedding (com.microsoft) and ONNX's opset-23
// Attention and RotaryEmbedding, as ATen calls. Each op reshapes its inputs
// to heads ([B, N, S, H]), builds one additive bias of its masks, and runs
// the one core, softmax(Q K^T * scale + bias) V, with K/V heads shared by
// groups of query heads (GQA). GroupQueryAttention's shared past/present
// buffer (ONNX Runtime GenAI's) is written in place when the run hands its
// buffers over (ExecContext::share_kv_buffers). What the float path of these
// ops does not cover (quantized KV caches, MultiHeadAttention's shared
// buffers, packed batching, beam-search cache indirection...) is refused with
// an error naming the node.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "profiler/ops/activation_matmul.hpp"
#include "profiler/ops/exec_helpers.hpp"
#include "profiler/ops/softmax.hpp"

namespace modelstat::profiler {
namespace {

// ---- shared pieces ------------------------------------------------------------

// [B, S, N*H] -> [B, N, S, H].
at::Tensor to_heads(const ExecContext& ctx, const at::Tensor& x, int64_t heads, const char* what) {
  if (x.dim() != 3 || heads <= 0 || x.size(2) % heads != 0)
    fail_input(ctx, std::string(what) + " " + c10::str(x.sizes()) + " is not [batch, sequence, " +
                        std::to_string(heads) + " heads * head_size]");
  return x.reshape({x.size(0), x.size(1), heads, x.size(2) / heads}).permute({0, 2, 1, 3});
}

// [B, N, S, H] -> [B, S, N*H].
at::Tensor from_heads(const at::Tensor& y) {
  return y.permute({0, 2, 1, 3}).reshape({y.size(0), y.size(2), y.size(1) * y.size(3)});
}

// Reduced-precision floats compute in fp32 (ATen 1.13 has no fp16 CPU matmul).
at::Tensor compute_float(const at::Tensor& t) {
  return is_reduced_float(t.scalar_type()) ? t.to(at::kFloat) : t;
}

// softmax(softcap(Q K^T * scale) + bias) V with q [B, Nq, S, H], k [B, Nkv, T, H],
// v [B, Nkv, T, Hv]; query head n reads K/V head n / (Nq / Nkv). bias: additive,
// broadcast to [B, Nq, S, T], or undefined. softcap: tanh(x / c) * c when c > 0.
// Returns [B, Nq, S, Hv] in q's dtype.
at::Tensor attend(const ExecContext& ctx, const at::Tensor& q_in, at::Tensor k, at::Tensor v,
                  const at::Tensor& bias, double scale, double softcap = 0.0) {
  const at::ScalarType dtype = q_in.scalar_type();
  at::Tensor q = compute_float(q_in);
  k = compute_float(k), v = compute_float(v);
  const int64_t nq = q.size(1), nkv = k.size(1);
  if (nkv <= 0 || nq % nkv != 0 || v.size(1) != nkv)
    fail_input(ctx, "query heads (" + std::to_string(nq) + ") must be a multiple of key/value heads (" +
                        std::to_string(nkv) + ")");
  if (nq != nkv) {
    // Grouped heads: query head j reads key/value head j / g (g = nq / nkv).
    // The g query heads of a group are stacked as g * S rows of one product
    // with their shared keys, rather than the keys copied g times (a decode
    // step would otherwise copy its whole cache (g - 1) times).
    const int64_t g = nq / nkv, b = q.size(0), s = q.size(2), t = k.size(2);
    const at::Tensor qg = q.reshape({b, nkv, g * s, q.size(3)});
    at::Tensor scores = (activation_matmul(qg, k.transpose(-1, -2)) * scale).view({b, nkv, g, s, t});
    if (softcap > 0) scores = at::tanh(scores / softcap) * softcap;
    if (bias.defined()) {
      // [B or 1, N or 1, S, T] -> [B or 1, N_kv or 1, g or 1, S, T].
      at::Tensor b5 = bias.dim() == 4 && bias.size(1) == nq ? bias.reshape({bias.size(0), nkv, g, bias.size(2), bias.size(3)})
                      : bias.dim() == 4 ? bias.unsqueeze(2)
                                        : bias;
      scores = scores + b5.to(scores.device(), scores.scalar_type());
    }
    const at::Tensor probs = softmax_last_axis(scores).view({b, nkv, g * s, t});
    return activation_matmul(probs, v).view({b, nq, s, v.size(3)}).to(dtype);
  }
  at::Tensor scores = activation_matmul(q, k.transpose(-1, -2)) * scale;
  if (softcap > 0) scores = at::tanh(scores / softcap) * softcap;
  if (bias.defined()) scores = scores + bias.to(scores.device(), scores.scalar_type());
  return activation_matmul(softmax_last_axis(scores), v).to(dtype);
}

double scale_or_default(const ExecContext& ctx, int64_t head_size) {
  return has_attr(ctx, "scale") ? ctx.node().attr_float("scale", 1.0) : 1.0 / std::sqrt(double(head_size));
}

// `value` where `masked`, 0 elsewhere, as a float bias.
at::Tensor masked_bias(const at::Tensor& masked, double value) {
  return at::where(masked, at::full({}, value, at::kFloat), at::zeros({}, at::kFloat));
}

// [S, T] bool: key j is after query i, whose own position is i + offset.
at::Tensor after_query(int64_t s, int64_t t, int64_t offset) {
  const at::Tensor i = at::arange(s, at::kLong).unsqueeze(1), j = at::arange(t, at::kLong).unsqueeze(0);
  return j > i + offset;
}

// bias + term, on bias's device (masks are built on the CPU; attend() moves the sum).
at::Tensor add_bias(const at::Tensor& bias, const at::Tensor& term) {
  return bias.defined() ? bias + term.to(bias.device()) : term;
}

void refuse_attr(const ExecContext& ctx, const char* attr, int64_t allowed = 0) {
  if (ctx.node().attr_int(attr, allowed) != allowed)
    fail_input(ctx, std::string("attribute ") + attr + "=" +
                        std::to_string(ctx.node().attr_int(attr, allowed)) + " is not supported");
}

void refuse_input(const ExecContext& ctx, size_t i, const char* name) {
  if (ctx.has_input(i)) fail_input(ctx, std::string("input ") + name + " is not supported");
}

void refuse_output(const ExecContext& ctx, size_t i, const char* name) {
  if (ctx.wants_output(i)) fail_input(ctx, std::string("output ") + name + " is not supported");
}

// An int32 mask of ONNX Runtime's contrib attention ops as a bool "masked"
// tensor broadcast to [B, 1, S, T]: [B] key lengths (right padding), [2B] end
// positions then start positions (left padding), [B, T] or [B, S, T] with 0
// for masked.
at::Tensor contrib_mask(const ExecContext& ctx, const at::Tensor& mask, int64_t b, int64_t s, int64_t t) {
  const at::Tensor m = mask.to(at::kCPU).to(at::kLong);
  const at::Tensor j = at::arange(t, at::kLong).view({1, t});
  if (m.dim() == 1 && m.size(0) == b) return (j >= m.view({b, 1})).view({b, 1, 1, t});
  if (m.dim() == 1 && m.size(0) == 2 * b) {
    const at::Tensor end = m.narrow(0, 0, b).view({b, 1}), start = m.narrow(0, b, b).view({b, 1});
    return ((j >= end) | (j < start)).view({b, 1, 1, t});
  }
  if (m.dim() == 2 && m.size(0) == b && m.size(1) == t) return (m == 0).view({b, 1, 1, t});
  if (m.dim() == 3 && m.size(0) == b && m.size(1) == s && m.size(2) == t) return (m == 0).view({b, 1, s, t});
  fail_input(ctx, "mask " + c10::str(mask.sizes()) + " is none of [B], [2B], [B, T], [B, S, T] (B=" +
                      std::to_string(b) + ", S=" + std::to_string(s) + ", T=" + std::to_string(t) + ")");
}

// Rotates x [B, N, S, H] by cos/sin [B or 1, S, R/2]: the first R channels of each
// head, as halves (x1 = [0, R/2), x2 = [R/2, R)) or interleaved pairs (x1 even, x2
// odd); real = x1*cos - x2*sin, imag = x1*sin + x2*cos; channels from R on unchanged.
at::Tensor rotate(const ExecContext& ctx, const at::Tensor& x, at::Tensor cos, at::Tensor sin,
                  bool interleaved) {
  const int64_t half = cos.size(-1), rotary = 2 * half, head = x.size(3);
  if (rotary > head || rotary == 0)
    fail_input(ctx, "rotary dim " + std::to_string(rotary) +
                        " (2 * cos_cache's last dim) must be in (0, head_size " + std::to_string(head) + "]");
  cos = cos.unsqueeze(1).to(x.scalar_type()), sin = sin.unsqueeze(1).to(x.scalar_type());
  const at::Tensor part = x.narrow(3, 0, rotary);
  const at::Tensor x1 = interleaved ? part.slice(3, 0, rotary, 2) : part.narrow(3, 0, half);
  const at::Tensor x2 = interleaved ? part.slice(3, 1, rotary, 2) : part.narrow(3, half, half);
  const at::Tensor real = x1 * cos - x2 * sin, imag = x1 * sin + x2 * cos;
  const at::Tensor rotated = interleaved ? at::stack({real, imag}, -1).flatten(3) : at::cat({real, imag}, -1);
  return rotary == head ? rotated : at::cat({rotated, x.narrow(3, rotary, head - rotary)}, 3);
}

// cos/sin rows of a [max_positions, R/2] cache at positions [B, S].
at::Tensor gather_rows(const ExecContext& ctx, const at::Tensor& cache, const at::Tensor& positions) {
  if (cache.dim() != 2)
    fail_input(ctx, "cos/sin cache " + c10::str(cache.sizes()) + " must be [positions, rotary/2]");
  const at::Tensor pos = positions.to(cache.device()).to(at::kLong);
  if (pos.numel() > 0 && (pos.min().item<int64_t>() < 0 || pos.max().item<int64_t>() >= cache.size(0)))
    fail_input(ctx, "position ids outside the cos/sin cache's " + std::to_string(cache.size(0)) + " rows");
  return cache.index_select(0, pos.reshape(-1)).reshape({pos.size(0), pos.size(1), cache.size(1)});
}

// ---- com.microsoft Attention ---------------------------------------------------

void exec_contrib_attention(ExecContext& ctx) {
  refuse_attr(ctx, "do_rotary");
  refuse_attr(ctx, "past_present_share_buffer");
  refuse_input(ctx, 6, "past_sequence_length");
  const at::Tensor& x = need_input(ctx, 0);
  const at::Tensor& w = need_input(ctx, 1);
  const int64_t heads = ctx.node().attr_int("num_heads", 0);
  if (x.dim() != 3 || w.dim() != 2 || w.size(0) != x.size(2))
    fail_input(ctx, "input " + c10::str(x.sizes()) + " and weights " + c10::str(w.sizes()) +
                        " are not [B, S, D] and [D, q+k+v]");
  std::vector<int64_t> sizes = ctx.node().attr_ints("qkv_hidden_sizes");
  if (sizes.empty()) sizes.assign(3, w.size(1) / 3);
  if (sizes.size() != 3 || sizes[0] + sizes[1] + sizes[2] != w.size(1) || sizes[0] != sizes[1])
    fail_input(ctx, "qkv_hidden_sizes do not split the weights' " + std::to_string(w.size(1)) + " columns");
  at::Tensor qkv = at::matmul(compute_float(x), compute_float(w));
  if (ctx.has_input(2)) qkv = qkv + compute_float(ctx.input(2));
  at::Tensor q = to_heads(ctx, qkv.narrow(2, 0, sizes[0]), heads, "Q");
  at::Tensor k = to_heads(ctx, qkv.narrow(2, sizes[0], sizes[1]), heads, "K");
  at::Tensor v = to_heads(ctx, qkv.narrow(2, sizes[0] + sizes[1], sizes[2]), heads, "V");
  if (ctx.has_input(4)) {
    const at::Tensor past = compute_float(ctx.input(4));
    if (past.dim() != 5 || past.size(0) != 2 || past.size(1) != x.size(0) || past.size(2) != heads ||
        past.size(4) != k.size(3) || k.size(3) != v.size(3))
      fail_input(ctx, "past " + c10::str(past.sizes()) + " is not [2, B, num_heads, P, head_size]");
    k = at::cat({past[0], k}, 2), v = at::cat({past[1], v}, 2);
  }
  const int64_t b = x.size(0), s = x.size(1), t = k.size(2), past_len = t - s;
  const double filter = ctx.node().attr_float("mask_filter_value", -10000.0);
  at::Tensor bias;
  if (ctx.has_input(3)) bias = masked_bias(contrib_mask(ctx, ctx.input(3), b, s, t), filter);
  if (ctx.node().attr_int("unidirectional", 0) != 0)
    bias = add_bias(bias, masked_bias(after_query(s, t, past_len), filter));
  if (ctx.has_input(5)) bias = add_bias(bias, compute_float(ctx.input(5)));
  const at::Tensor y = attend(ctx, q, k, v, bias, scale_or_default(ctx, q.size(3)));
  ctx.outputs = {from_heads(y).to(x.scalar_type())};
  if (ctx.num_outputs() > 1) ctx.outputs.push_back(at::stack({k, v}, 0).to(x.scalar_type()));
}

// ---- com.microsoft MultiHeadAttention ------------------------------------------

void exec_multi_head_attention(ExecContext& ctx) {
  refuse_input(ctx, 8, "past_sequence_length");
  refuse_input(ctx, 9, "cache_indirection");
  refuse_output(ctx, 3, "qk");
  const at::Tensor& query = need_input(ctx, 0);
  const at::Tensor& key = need_input(ctx, 1);
  const at::Tensor& value = need_input(ctx, 2);
  const int64_t heads = ctx.node().attr_int("num_heads", 0);
  if (query.dim() != 3) fail_input(ctx, "packed QKV query " + c10::str(query.sizes()) + " is not supported");
  if (key.dim() != value.dim() || (key.dim() != 3 && key.dim() != 4))
    fail_input(ctx, "key " + c10::str(key.sizes()) + " and value " + c10::str(value.sizes()) +
                        " must both be [B, L, D] or both [B, N, L, H] (packed KV is not supported)");
  const int64_t dq = query.size(2);
  at::Tensor q = compute_float(query), k = compute_float(key), v = compute_float(value);
  if (ctx.has_input(3)) {
    if (key.dim() == 4) fail_input(ctx, "bias with BNSH key/value is not supported");
    const at::Tensor bias = compute_float(ctx.input(3));
    if (bias.dim() != 1 || bias.size(0) != dq + k.size(2) + v.size(2))
      fail_input(ctx, "bias " + c10::str(bias.sizes()) + " is not [q + k + v hidden]");
    q = q + bias.narrow(0, 0, dq), k = k + bias.narrow(0, dq, k.size(2)),
    v = v + bias.narrow(0, dq + k.size(2), v.size(2));
  }
  q = to_heads(ctx, q, heads, "query");
  if (key.dim() == 3) {
    k = to_heads(ctx, k, heads, "key"), v = to_heads(ctx, v, heads, "value");
    if (ctx.has_input(6) != ctx.has_input(7)) fail_input(ctx, "past_key and past_value go together");
    if (ctx.has_input(6)) {
      k = at::cat({compute_float(ctx.input(6)), k}, 2);
      v = at::cat({compute_float(ctx.input(7)), v}, 2);
    }
  } else if (ctx.has_input(6)) {
    fail_input(ctx, "past_key with BNSH key/value is not supported");
  }
  const int64_t b = query.size(0), s = query.size(1), t = k.size(2);
  const double filter = ctx.node().attr_float("mask_filter_value", -10000.0);
  at::Tensor bias;
  if (ctx.has_input(4)) bias = masked_bias(contrib_mask(ctx, ctx.input(4), b, s, t), filter);
  if (ctx.node().attr_int("unidirectional", 0) != 0)
    bias = add_bias(bias, masked_bias(after_query(s, t, t - s), filter));
  if (ctx.has_input(5)) bias = add_bias(bias, compute_float(ctx.input(5)));
  const at::Tensor y = attend(ctx, q, k, v, bias, scale_or_default(ctx, q.size(3)));
  ctx.outputs = {from_heads(y).to(query.scalar_type())};
  if (ctx.num_outputs() > 1) ctx.outputs.push_back(k.to(query.scalar_type()));
  if (ctx.num_outputs() > 2) ctx.outputs.push_back(v.to(query.scalar_type()));
}

// ---- com.microsoft GroupQueryAttention -------------------------------------------

// Per batch entry b, T_b = seqlens_k[b] + 1 keys are valid. The first prompt
// (no past rows) starts at position 0 and pads on the right (queries from T_b
// on are padding); later steps append S rows after P_b = T_b - S past rows.
// present_key/value hold max(past rows, total_sequence_length) rows: rows
// [0, P_b) from past, [P_b, P_b + S) the new keys, the rest zero.
void exec_group_query_attention(ExecContext& ctx) {
  const Node& node = ctx.node();
  refuse_attr(ctx, "sliding_window_cache");
  refuse_attr(ctx, "smooth_softmax");
  refuse_attr(ctx, "qk_output");
  refuse_attr(ctx, "kv_cache_bit_width");
  for (const char* attr : {"k_quant_type", "v_quant_type"})
    if (node.attr_string(attr, "NONE") != "NONE")
      fail_input(ctx, std::string("quantized KV cache (") + attr + ") is not supported");
  refuse_input(ctx, 11, "head_sink");
  refuse_input(ctx, 12, "k_scale");
  refuse_input(ctx, 13, "v_scale");
  refuse_input(ctx, 14, "q_norm_weight");
  refuse_input(ctx, 15, "k_norm_weight");
  refuse_output(ctx, 3, "output_qk");
  const int64_t heads = node.attr_int("num_heads", 0), kv_heads = node.attr_int("kv_num_heads", 0);
  if (heads <= 0 || kv_heads <= 0 || heads % kv_heads != 0)
    fail_input(ctx, "num_heads and kv_num_heads must be positive, num_heads a multiple of kv_num_heads");
  const at::Tensor& query = need_input(ctx, 0);
  if (query.dim() != 3) fail_input(ctx, "query " + c10::str(query.sizes()) + " is not [B, S, hidden]");
  const int64_t b = query.size(0), s = query.size(1);
  at::Tensor q, k, v;
  if (ctx.has_input(1)) {
    q = to_heads(ctx, compute_float(query), heads, "query");
    k = to_heads(ctx, compute_float(need_input(ctx, 1)), kv_heads, "key");
    v = to_heads(ctx, compute_float(need_input(ctx, 2)), kv_heads, "value");
  } else {  // packed QKV: [B, S, (N + 2 N_kv) * H]
    const int64_t columns = heads + 2 * kv_heads;
    if (query.size(2) % columns != 0)
      fail_input(ctx, "packed QKV " + c10::str(query.sizes()) + " does not split into heads");
    const int64_t h = query.size(2) / columns;
    const at::Tensor packed = compute_float(query);
    q = to_heads(ctx, packed.narrow(2, 0, heads * h), heads, "query");
    k = to_heads(ctx, packed.narrow(2, heads * h, kv_heads * h), kv_heads, "key");
    v = to_heads(ctx, packed.narrow(2, (heads + kv_heads) * h, kv_heads * h), kv_heads, "value");
  }
  const int64_t h = q.size(3);
  if (k.size(2) != s || k.size(3) != h || v.sizes() != k.sizes())
    fail_input(ctx, "key and value must be [B, S, kv_num_heads * head_size] like the query");
  at::Tensor past_k, past_v;
  if (ctx.has_input(3) != ctx.has_input(4)) fail_input(ctx, "past_key and past_value go together");
  if (ctx.has_input(3)) {
    past_k = ctx.input(3), past_v = ctx.input(4);
    if (!is_floating(past_k.scalar_type()) || past_k.dim() != 4 || past_k.size(0) != b ||
        past_k.size(1) != kv_heads || past_k.size(3) != h || past_v.sizes() != past_k.sizes())
      fail_input(ctx,
                 "past_key " + c10::str(past_k.sizes()) + " is not a float [B, kv_num_heads, P, head_size]");
    past_k = compute_float(past_k), past_v = compute_float(past_v);
  }
  const int64_t past_rows = past_k.defined() ? past_k.size(2) : 0;
  const std::vector<int64_t> seqlens = ctx.input_ints(5);
  const int64_t total = int64_t(ctx.input_scalar(6));
  if (int64_t(seqlens.size()) != b) fail_input(ctx, "seqlens_k must hold one length per batch entry");
  const bool first_prompt = past_rows == 0;
  const int64_t present_rows = std::max(past_rows, total);
  std::vector<int64_t> past_len(b), valid(b);
  for (int64_t i = 0; i < b; ++i) {
    valid[i] = seqlens[i] + 1;
    past_len[i] = first_prompt ? 0 : valid[i] - s;
    if (valid[i] < 1 || past_len[i] < 0 || past_len[i] > past_rows || past_len[i] + s > present_rows ||
        valid[i] > present_rows)
      fail_input(ctx, "seqlens_k[" + std::to_string(i) + "] = " + std::to_string(seqlens[i]) +
                          " does not fit a step of " + std::to_string(s) + " tokens after " +
                          std::to_string(past_rows) + " past rows (total_sequence_length " +
                          std::to_string(total) + ")");
  }
  if (node.attr_int("do_rotary", 0) != 0) {
    at::Tensor positions;
    if (ctx.has_input(9)) {
      positions = ctx.input(9).to(at::kLong);
    } else {
      positions = at::arange(s, at::kLong).view({1, s}).repeat({b, 1});
      for (int64_t i = 0; i < b; ++i) positions[i] += past_len[i];
    }
    const at::Tensor cos = gather_rows(ctx, compute_float(need_input(ctx, 7)), positions);
    const at::Tensor sin = gather_rows(ctx, compute_float(need_input(ctx, 8)), positions);
    const bool interleaved = node.attr_int("rotary_interleaved", 0) != 0;
    q = rotate(ctx, q, cos, sin, interleaved), k = rotate(ctx, k, cos, sin, interleaved);
  }
  // ONNX Runtime's shared buffer (ExecContext::share_kv_buffers): a past
  // buffer that already holds present's rows gets the step's rows written in
  // place and is returned as present, as the runtime does when IO binding
  // gives past and present one buffer. Otherwise present is a new tensor.
  const bool in_place = ctx.share_kv_buffers() && past_k.defined() && present_rows == past_rows &&
                        ctx.input(3).is_contiguous() && ctx.input(4).is_contiguous();
  at::Tensor present_k = in_place ? ctx.input(3) : at::zeros({b, kv_heads, present_rows, h}, q.options());
  at::Tensor present_v = in_place ? ctx.input(4) : at::zeros({b, kv_heads, present_rows, h}, q.options());
  for (int64_t i = 0; i < b; ++i) {
    if (past_len[i] > 0 && !in_place) {
      present_k[i].narrow(1, 0, past_len[i]).copy_(past_k[i].narrow(1, 0, past_len[i]));
      present_v[i].narrow(1, 0, past_len[i]).copy_(past_v[i].narrow(1, 0, past_len[i]));
    }
    present_k[i].narrow(1, past_len[i], s).copy_(k[i]);
    present_v[i].narrow(1, past_len[i], s).copy_(v[i]);
  }
  // Keys from max_b T_b on are masked for every query: attention reads the
  // first `keys` rows only (a shared buffer's unused tail is never touched).
  const int64_t keys = *std::max_element(valid.begin(), valid.end());
  // Masked: keys from T_b on; with causal, keys after the query's position
  // P_b + i; with local_window_size W >= 0, keys W or more before it (the
  // window holds W keys, the query's own included, as ONNX Runtime counts it).
  const bool causal = node.attr_int("causal", 1) != 0;
  const int64_t window = node.attr_int("local_window_size", -1);
  const at::Tensor row = at::arange(s, at::kLong).view({1, s, 1}),
                   col = at::arange(keys, at::kLong).view({1, 1, keys});
  const at::Tensor query_pos = row + at::tensor(past_len, at::kLong).view({b, 1, 1});
  at::Tensor masked = col >= at::tensor(valid, at::kLong).view({b, 1, 1});
  if (causal) masked = masked | (col > query_pos);
  if (window >= 0) masked = masked | (col <= query_pos - window);
  at::Tensor bias = masked_bias(masked.unsqueeze(1), -std::numeric_limits<double>::infinity());
  if (ctx.has_input(10)) {
    at::Tensor extra = compute_float(ctx.input(10));
    if (extra.dim() != 4 || extra.size(-1) > present_rows)
      fail_input(ctx, "attention_bias " + c10::str(extra.sizes()) + " is not [B or 1, N or 1, S, total]");
    extra = extra.size(-1) < keys ? at::constant_pad_nd(extra, {0, keys - extra.size(-1)}, 0.0)
                                  : extra.narrow(-1, 0, keys);
    bias = add_bias(bias, extra);
  }
  const at::Tensor y = attend(ctx, q, present_k.narrow(2, 0, keys), present_v.narrow(2, 0, keys), bias,
                              scale_or_default(ctx, h), node.attr_float("softcap", 0.0));
  const at::ScalarType cache_type = past_k.defined() ? ctx.input(3).scalar_type() : query.scalar_type();
  ctx.outputs = {from_heads(y).to(query.scalar_type())};
  if (ctx.num_outputs() > 1) ctx.outputs.push_back(present_k.to(cache_type));
  if (ctx.num_outputs() > 2) ctx.outputs.push_back(present_v.to(cache_type));
}

// ---- RotaryEmbedding -------------------------------------------------------------

// x as [B, N, S, H]: 4-D inputs are [B, N, S, H]; 3-D [B, S, hidden] split into `heads`.
at::Tensor rotary_heads(const ExecContext& ctx, const at::Tensor& x, int64_t heads) {
  if (x.dim() == 4) return x;
  return to_heads(ctx, x, heads, "input");
}

at::Tensor rotary_restore(const at::Tensor& y, const at::Tensor& x) {
  return x.dim() == 4 ? y : from_heads(y);
}

void check_rotary_dim(const ExecContext& ctx, const at::Tensor& cos) {
  const int64_t dim = ctx.node().attr_int("rotary_embedding_dim", 0);
  if (dim != 0 && dim != 2 * cos.size(-1))
    fail_input(ctx, "rotary_embedding_dim " + std::to_string(dim) + " is not 2 * cos_cache's last dim " +
                        std::to_string(cos.size(-1)));
}

// com.microsoft RotaryEmbedding(input, position_ids, cos_cache, sin_cache):
// position_ids [B, S], or one offset (positions offset + 0..S-1).
void exec_contrib_rotary_embedding(ExecContext& ctx) {
  refuse_attr(ctx, "is_packed_batching");
  if (ctx.node().attr_float("scale", 1.0) != 1.0)
    fail_input(ctx, "attribute scale other than 1 is not supported");
  const at::Tensor& x = need_input(ctx, 0);
  const at::Tensor cos_cache = need_input(ctx, 2), sin_cache = need_input(ctx, 3);
  check_rotary_dim(ctx, cos_cache);
  if (x.dim() != 3 && x.dim() != 4) fail_input(ctx, "input " + c10::str(x.sizes()) + " must be 3-D or 4-D");
  int64_t heads = ctx.node().attr_int("num_heads", 0);
  if (x.dim() == 3 && heads == 0) {
    const int64_t head = 2 * cos_cache.size(-1);
    if (head <= 0 || x.size(2) % head != 0)
      fail_input(ctx, "hidden size is not a multiple of the rotary dim");
    heads = x.size(2) / head;
  }
  const at::Tensor xh = rotary_heads(ctx, x, heads);
  const int64_t b = xh.size(0), s = xh.size(2);
  at::Tensor positions = need_input(ctx, 1).to(at::kLong);
  if (positions.numel() == 1 && !(b == 1 && s == 1 && positions.dim() == 2))
    positions = (at::arange(s, at::kLong) + positions.reshape({})).view({1, s}).repeat({b, 1});
  if (positions.dim() != 2 || positions.size(0) != b || positions.size(1) != s)
    fail_input(ctx, "position_ids " + c10::str(positions.sizes()) + " is neither [B, S] nor one offset");
  const at::Tensor y =
      rotate(ctx, xh, gather_rows(ctx, cos_cache, positions), gather_rows(ctx, sin_cache, positions),
             ctx.node().attr_int("interleaved", 0) != 0);
  ctx.outputs = {rotary_restore(y, x)};
}

// ai.onnx RotaryEmbedding-23(X, cos_cache, sin_cache, position_ids?): with
// position_ids the caches are [max_position, R/2], without them [B, S, R/2].
void exec_onnx_rotary_embedding(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const at::Tensor cos_cache = need_input(ctx, 1), sin_cache = need_input(ctx, 2);
  check_rotary_dim(ctx, cos_cache);
  if (x.dim() != 3 && x.dim() != 4) fail_input(ctx, "X " + c10::str(x.sizes()) + " must be 3-D or 4-D");
  const at::Tensor xh = rotary_heads(ctx, x, ctx.node().attr_int("num_heads", 0));
  at::Tensor cos = cos_cache, sin = sin_cache;
  if (ctx.has_input(3)) {
    cos = gather_rows(ctx, cos_cache, ctx.input(3)), sin = gather_rows(ctx, sin_cache, ctx.input(3));
  } else if (cos.dim() != 3 || cos.size(1) != xh.size(2)) {
    fail_input(ctx, "without position_ids, cos_cache " + c10::str(cos.sizes()) + " must be [B, S, rotary/2]");
  }
  ctx.outputs = {rotary_restore(rotate(ctx, xh, cos, sin, ctx.node().attr_int("interleaved", 0) != 0), x)};
}

// ---- ai.onnx Attention (opset 23) -------------------------------------------------

void exec_onnx_attention(ExecContext& ctx) {
  const Node& node = ctx.node();
  const at::Tensor& q_in = need_input(ctx, 0);
  const at::Tensor& k_in = need_input(ctx, 1);
  const at::Tensor& v_in = need_input(ctx, 2);
  if (q_in.dim() != k_in.dim() || q_in.dim() != v_in.dim() || (q_in.dim() != 3 && q_in.dim() != 4))
    fail_input(ctx, "Q, K and V must all be 3-D or all 4-D");
  const int64_t mode = node.attr_int("qk_matmul_output_mode", 0);
  const double softcap = node.attr_float("softcap", 0.0);
  if (ctx.wants_output(3) && (mode == 1 || mode == 2 || (mode == 0 && softcap > 0)))
    fail_input(ctx, "qk_matmul_output_mode " + std::to_string(mode) + (softcap > 0 ? " with softcap" : "") +
                        " is not supported (0 without softcap, and 3, are)");
  at::Tensor q = compute_float(q_in), k = compute_float(k_in), v = compute_float(v_in);
  if (q.dim() == 3) {
    q = to_heads(ctx, q, node.attr_int("q_num_heads", 0), "Q");
    k = to_heads(ctx, k, node.attr_int("kv_num_heads", 0), "K");
    v = to_heads(ctx, v, node.attr_int("kv_num_heads", 0), "V");
  }
  if (ctx.has_input(4) != ctx.has_input(5)) fail_input(ctx, "past_key and past_value go together");
  const int64_t past = ctx.has_input(4) ? ctx.input(4).size(2) : 0;
  if (ctx.has_input(4)) {
    k = at::cat({compute_float(ctx.input(4)), k}, 2);
    v = at::cat({compute_float(ctx.input(5)), v}, 2);
  }
  const int64_t s = q.size(2), t = k.size(2);
  const double neg_inf = -std::numeric_limits<double>::infinity();
  at::Tensor bias;
  if (ctx.has_input(3)) {
    // A bool mask (true: attend) or a float bias; a last dim shorter than T is padded as masked.
    at::Tensor mask = ctx.input(3);
    if (mask.dim() == 0 || mask.size(-1) > t)
      fail_input(ctx, "attn_mask " + c10::str(mask.sizes()) + " is wider than T");
    if (mask.scalar_type() == at::kBool) {
      mask = masked_bias(mask.logical_not(), neg_inf);
    } else {
      mask = compute_float(mask).to(at::kFloat);
    }
    if (mask.size(-1) < t) mask = at::constant_pad_nd(mask, {0, t - mask.size(-1)}, neg_inf);
    bias = mask;
  }
  if (node.attr_int("is_causal", 0) != 0)
    bias = add_bias(bias, masked_bias(after_query(s, t, past), neg_inf));
  const at::Tensor y = attend(ctx, q, k, v, bias, scale_or_default(ctx, q.size(3)), softcap);
  ctx.outputs = {(q_in.dim() == 3 ? from_heads(y) : y).to(q_in.scalar_type())};
  if (ctx.num_outputs() > 1) ctx.outputs.push_back(k.to(q_in.scalar_type()));
  if (ctx.num_outputs() > 2) ctx.outputs.push_back(v.to(q_in.scalar_type()));
  if (ctx.num_outputs() > 3) {
    const int64_t nq = q.size(1), nkv = k.size(1);
    const at::Tensor kk = nq == nkv ? k : k.repeat_interleave(nq / nkv, 1);
    at::Tensor qk = at::matmul(q, kk.transpose(-1, -2)) * scale_or_default(ctx, q.size(3));
    if (mode == 3) {  // after softcap, mask and softmax
      if (softcap > 0) qk = at::tanh(qk / softcap) * softcap;
      qk = at::softmax(bias.defined() ? qk + bias.to(qk.device()) : qk, -1);
    }
    ctx.outputs.push_back(qk.to(q_in.scalar_type()));
  }
}

}  // namespace

void add_attention_executors(std::vector<ExecRule>& rules) {
  add_executor(rules, "Attention", exec_contrib_attention, 1, "com.microsoft");
  add_executor(rules, "MultiHeadAttention", exec_multi_head_attention, 1, "com.microsoft");
  add_executor(rules, "GroupQueryAttention", exec_group_query_attention, 1, "com.microsoft");
  add_executor(rules, "RotaryEmbedding", exec_contrib_rotary_embedding, 1, "com.microsoft");
  add_executor(rules, "Attention", exec_onnx_attention, 23);
  add_executor(rules, "RotaryEmbedding", exec_onnx_rotary_embedding, 23);
}

}  // namespace modelstat::profiler

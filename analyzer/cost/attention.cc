// Attention: ONNX Runtime's contrib attention ops (com.microsoft Attention,
// MultiHeadAttention, GroupQueryAttention, RotaryEmbedding) and ONNX's
// opset-23 Attention and RotaryEmbedding. ONNX 1.12 has no schema for any of
// them: each record carries its shape rule, so that the KV-cache outputs
// (present, present_key, present_value) get their shapes.
//
// The cost of one attention, with B batch, N query heads, S query length,
// T = past + new key length (the total the scores span), H the query/key head
// size and Hv the value head size:
//   MACs = B*N*S*T*H (Q K^T) + B*N*S*T*Hv (softmax(...) V) + the op's own
//          input projection, if any;
//   FLOPs = 2*MACs + per score element: 1 (scale) + 5 (softmax: max, sub,
//           exp, sum, div) + 1 per additive mask source applied (mask input,
//           attention bias, causal mask) + 3 (softcap: div, tanh, mul) when
//           set; + 1 per element of a projection bias; + 3 per rotated
//           element (x1*cos - x2*sin: mul, mul, sub) of an internal rotary.
// Causal and windowed masks are counted over the full S x T rectangle of
// scores, as a dense kernel computes them: nothing is skipped.
#include <algorithm>
#include <cstring>
#include <string>

#include "analyzer/cost/cost_helpers.hpp"
#include "analyzer/cost/shape_rule_helpers.hpp"

namespace modelstat::cost {
namespace {

constexpr int64_t kScaleAndSoftmaxPerScore = 1 + 5;
constexpr int64_t kSoftcapPerScore = 3;
constexpr int64_t kRotaryPerElement = 3;

// ---- cost rules ---------------------------------------------------------------

struct AttentionDims {
  int64_t batch = 0, heads = 0, q_len = 0, total_len = 0, head = 0, v_head = 0;
};

// The attention core of docs/COST_MODEL.md: MACs of QK^T and AV, FLOPs =
// 2*MACs + per_score FLOPs per score element, plus what the op adds itself.
RuleResult attention_cost(const CostContext& ctx, const char* rule, const AttentionDims& d, int64_t per_score,
                          int64_t extra_macs, int64_t extra_flops) {
  const Node& node = ctx.node();
  const int64_t scores = checked_product({d.batch, d.heads, d.q_len, d.total_len}, node);
  const int64_t macs =
      checked_add(checked_add(checked_mul(scores, d.head, node), checked_mul(scores, d.v_head, node), node),
                  extra_macs, node);
  int64_t flops = checked_add(checked_mul(2, macs, node), checked_mul(per_score, scores, node), node);
  return exact(rule, macs, checked_add(flops, extra_flops, node));
}

bool has(const CostContext& ctx, size_t i) {
  return ctx.input(i) != nullptr;
}

// Dim k of input i, when the input's shape is known and has that rank.
std::optional<std::vector<int64_t>> dims_of_rank(const CostContext& ctx, size_t i, size_t rank) {
  auto d = ctx.input_dims(i);
  if (!d || d->size() != rank) return std::nullopt;
  return d;
}

bool divides(int64_t part, int64_t whole) {
  return part > 0 && whole >= 0 && whole % part == 0;
}

// com.microsoft Attention: input [B,S,D_in], weights [D_in, q+k+v], past [2,B,N,P,H].
RuleResult contrib_attention(const CostContext& ctx) {
  const char* rule = "attention";
  auto x = dims_of_rank(ctx, 0, 3), w = dims_of_rank(ctx, 1, 2);
  if (!x || !w) return RuleResult::unknown_shape(rule, "input [B,S,D] or weights [D,q+k+v] shape unknown");
  const Node& node = ctx.node();
  const int64_t heads = node.attr_int("num_heads", 0);
  std::vector<int64_t> sizes = node.attr_ints("qkv_hidden_sizes");
  if (sizes.empty() && (*w)[1] % 3 == 0) sizes = {(*w)[1] / 3, (*w)[1] / 3, (*w)[1] / 3};
  if (sizes.size() != 3 || sizes[0] + sizes[1] + sizes[2] != (*w)[1] || !divides(heads, sizes[0]) ||
      !divides(heads, sizes[2]) || (*w)[0] != (*x)[2])
    return RuleResult::unknown_shape(rule, "num_heads, qkv_hidden_sizes and the weights disagree");
  int64_t past = 0;
  if (has(ctx, 4)) {
    auto p = dims_of_rank(ctx, 4, 5);
    if (!p) return RuleResult::unknown_shape(rule, "past shape unknown");
    past = (*p)[3];
  }
  const int64_t b = (*x)[0], s = (*x)[1];
  AttentionDims d{b, heads, s, checked_add(past, s, node), sizes[0] / heads, sizes[2] / heads};
  const int64_t projected = checked_product({b, s, (*w)[1]}, node);
  const int64_t per_score =
      kScaleAndSoftmaxPerScore + has(ctx, 3) + has(ctx, 5) + (node.attr_int("unidirectional", 0) != 0);
  return attention_cost(ctx, rule, d, per_score, checked_mul(projected, (*x)[2], node),
                        has(ctx, 2) ? projected : 0);
}

// com.microsoft MultiHeadAttention: query [B,S,Dq] (or packed [B,S,N,3,H]), key/value
// [B,L,D] (or BNSH [B,N,L,H], or packed key [B,L,N,2,H]), past_key [B,N,P,H].
RuleResult multi_head_attention(const CostContext& ctx) {
  const char* rule = "attention";
  const Node& node = ctx.node();
  const int64_t heads = node.attr_int("num_heads", 0);
  auto q = ctx.input_dims(0);
  if (!q || heads <= 0) return RuleResult::unknown_shape(rule, "query shape or num_heads unknown");
  int64_t b = 0, s = 0, kv_len = 0, q_hidden = 0, k_hidden = 0, v_hidden = 0;
  bool concat_past = true;
  if (q->size() == 5) {  // packed QKV
    b = (*q)[0], s = kv_len = (*q)[1], q_hidden = k_hidden = v_hidden = checked_mul((*q)[2], (*q)[4], node);
  } else if (q->size() == 3) {
    b = (*q)[0], s = (*q)[1], q_hidden = (*q)[2];
    auto k = ctx.input_dims(1);
    if (!k) return RuleResult::unknown_shape(rule, "key shape unknown");
    if (k->size() == 5) {  // packed KV
      kv_len = (*k)[1], k_hidden = v_hidden = checked_mul((*k)[2], (*k)[4], node);
    } else {
      auto v = ctx.input_dims(2);
      if (!v || v->size() != k->size() || (k->size() != 3 && k->size() != 4))
        return RuleResult::unknown_shape(rule, "value shape unknown or unlike key's");
      if (k->size() == 3) {
        kv_len = (*k)[1], k_hidden = (*k)[2], v_hidden = (*v)[2];
      } else {  // BNSH key and value, used as they are
        kv_len = (*k)[2], k_hidden = checked_mul((*k)[1], (*k)[3], node),
        v_hidden = checked_mul((*v)[1], (*v)[3], node);
        concat_past = false;
      }
    }
  } else {
    return RuleResult::unknown_shape(rule, "query must be 3-D or packed 5-D");
  }
  if (!divides(heads, q_hidden) || !divides(heads, v_hidden) || q_hidden != k_hidden)
    return RuleResult::unknown_shape(rule, "hidden sizes are not num_heads * head_size");
  int64_t past = 0;
  if (concat_past && has(ctx, 6)) {
    auto p = dims_of_rank(ctx, 6, 4);
    if (!p) return RuleResult::unknown_shape(rule, "past_key shape unknown");
    past = (*p)[2];
  }
  AttentionDims d{b, heads, s, checked_add(past, kv_len, node), q_hidden / heads, v_hidden / heads};
  int64_t bias_flops = 0;
  if (has(ctx, 3))
    bias_flops = checked_add(checked_product({b, s, q_hidden}, node),
                             checked_product({b, kv_len, checked_add(k_hidden, v_hidden, node)}, node), node);
  const int64_t per_score =
      kScaleAndSoftmaxPerScore + has(ctx, 4) + has(ctx, 5) + (node.attr_int("unidirectional", 0) != 0);
  return attention_cost(ctx, rule, d, per_score, 0, bias_flops);
}

// com.microsoft GroupQueryAttention: query [B,S,N*H] (or packed [B,S,(N+2*N_kv)*H]),
// key/value [B,S,N_kv*H], past_key [B,N_kv,P,H]; T = P + S.
RuleResult group_query_attention(const CostContext& ctx) {
  const char* rule = "attention";
  const Node& node = ctx.node();
  const int64_t heads = node.attr_int("num_heads", 0), kv_heads = node.attr_int("kv_num_heads", 0);
  auto q = dims_of_rank(ctx, 0, 3);
  if (!q || heads <= 0 || kv_heads <= 0)
    return RuleResult::unknown_shape(rule, "query shape or head counts unknown");
  const int64_t columns = has(ctx, 1) ? heads : checked_add(heads, checked_mul(2, kv_heads, node), node);
  if (!divides(columns, (*q)[2]) || heads % kv_heads != 0)
    return RuleResult::unknown_shape(rule, "query hidden size is not a multiple of the heads");
  const int64_t b = (*q)[0], s = (*q)[1], head = (*q)[2] / columns;
  int64_t past = 0;
  if (has(ctx, 3)) {
    auto p = dims_of_rank(ctx, 3, 4);
    if (!p) return RuleResult::unknown_shape(rule, "past_key shape unknown");
    past = (*p)[2];
  }
  AttentionDims d{b, heads, s, checked_add(past, s, node), head, head};
  int64_t per_score = kScaleAndSoftmaxPerScore + (node.attr_int("causal", 1) != 0) + has(ctx, 10);
  if (node.attr_float("softcap", 0.0) > 0) per_score += kSoftcapPerScore;
  int64_t rotary_flops = 0;
  if (node.attr_int("do_rotary", 0) != 0) {
    auto cos = dims_of_rank(ctx, 7, 2);
    if (!cos) return RuleResult::unknown_shape(rule, "cos_cache shape unknown");
    rotary_flops =
        checked_product({kRotaryPerElement, b, s, checked_add(heads, kv_heads, node), 2 * (*cos)[1]}, node);
  }
  return attention_cost(ctx, rule, d, per_score, 0, rotary_flops);
}

// ai.onnx Attention (opset 23): Q/K/V 3-D [B,S,N*H] (q_num_heads, kv_num_heads) or
// 4-D [B,N,S,H]; past_key [B,N_kv,P,H]; T = P + kv length.
RuleResult onnx_attention(const CostContext& ctx) {
  const char* rule = "attention";
  const Node& node = ctx.node();
  auto q = ctx.input_dims(0), k = ctx.input_dims(1), v = ctx.input_dims(2);
  if (!q || !k || !v) return RuleResult::unknown_shape(rule, "Q, K or V shape unknown");
  if (q->size() != k->size() || q->size() != v->size() || (q->size() != 3 && q->size() != 4))
    return RuleResult::unknown_shape(rule, "Q, K and V must all be 3-D or all 4-D");
  int64_t heads = 0, s = 0, kv_len = 0, head = 0, v_head = 0;
  if (q->size() == 4) {
    heads = (*q)[1], s = (*q)[2], head = (*q)[3], kv_len = (*k)[2], v_head = (*v)[3];
  } else {
    heads = node.attr_int("q_num_heads", 0);
    const int64_t kv_heads = node.attr_int("kv_num_heads", 0);
    if (!divides(heads, (*q)[2]) || !divides(kv_heads, (*v)[2]))
      return RuleResult::unknown_shape(
          rule, "3-D inputs need q_num_heads and kv_num_heads dividing the hidden sizes");
    s = (*q)[1], kv_len = (*k)[1], head = (*q)[2] / heads, v_head = (*v)[2] / kv_heads;
  }
  int64_t past = 0;
  if (has(ctx, 4)) {
    auto p = dims_of_rank(ctx, 4, 4);
    if (!p) return RuleResult::unknown_shape(rule, "past_key shape unknown");
    past = (*p)[2];
  }
  AttentionDims d{(*q)[0], heads, s, checked_add(past, kv_len, node), head, v_head};
  int64_t per_score = kScaleAndSoftmaxPerScore + has(ctx, 3) + (node.attr_int("is_causal", 0) != 0);
  if (node.attr_float("softcap", 0.0) > 0) per_score += kSoftcapPerScore;
  return attention_cost(ctx, rule, d, per_score, 0, 0);
}

// RotaryEmbedding: 3 FLOPs per rotated element; rotated = elements / head_size *
// rotary dim, the rotary dim being 2 * the last dim of cos_cache.
// com.microsoft: (input, position_ids, cos_cache, sin_cache); ai.onnx 23: (X, cos_cache, sin_cache,
// position_ids).
template <size_t kCosInput>
RuleResult rotary_embedding(const CostContext& ctx) {
  const char* rule = "rotary";
  auto x = ctx.input_dims(0), cos = ctx.input_dims(kCosInput);
  if (!x || !cos || cos->empty() || (x->size() != 3 && x->size() != 4))
    return RuleResult::unknown_shape(rule, "input or cos_cache shape unknown");
  const Node& node = ctx.node();
  const int64_t rotary_dim = 2 * cos->back();
  const int64_t heads = node.attr_int("num_heads", 0);
  int64_t head = 0;
  if (x->size() == 4)
    head = (*x)[3];
  else if (heads > 0 && (*x)[2] % heads == 0)
    head = (*x)[2] / heads;
  else if (heads == 0)
    head = rotary_dim;  // contrib: without num_heads, the head is the rotary dim
  if (head <= 0 || rotary_dim > head)
    return RuleResult::unknown_shape(rule, "head size unknown or below the rotary dim");
  const int64_t elements = checked_product(*x, node);
  return exact(rule, 0, checked_mul(kRotaryPerElement, checked_mul(elements / head, rotary_dim, node), node));
}

// ---- shape rules --------------------------------------------------------------

namespace sh = shape;
using sh::Dim;

std::vector<int64_t> attr_ints(onnx::InferenceContext& ctx, const char* name) {
  const onnx::AttributeProto* a = ctx.getAttribute(name);
  if (!a) return {};
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

// Dim k of input i when its rank is `rank`; unknown otherwise (an omitted input: `absent`).
Dim dim_of(onnx::InferenceContext& ctx, size_t i, int rank, int k, const Dim& absent = sh::unknown()) {
  if (!sh::has_input(ctx, i)) return absent;
  const auto* s = sh::input_shape(ctx, i);
  if (!s || s->dim_size() != rank) return sh::unknown();
  return s->dim(k);
}

int rank_of(onnx::InferenceContext& ctx, size_t i) {
  const auto* s = sh::input_shape(ctx, i);
  return s ? s->dim_size() : -1;
}

void attention_shape(onnx::InferenceContext& ctx) {
  const auto* x = sh::input_shape_of_rank(ctx, 0, 3);
  const auto* w = sh::input_shape_of_rank(ctx, 1, 2);
  const int64_t heads = sh::attr_int(ctx, "num_heads", 0);
  if (heads <= 0) fail_shape_inference("num_heads must be positive");
  Dim q_hidden, v_hidden;
  if (auto sizes = attr_ints(ctx, "qkv_hidden_sizes"); sizes.size() == 3) {
    q_hidden = sh::known(sizes[0]), v_hidden = sh::known(sizes[2]);
  } else if (w) {
    q_hidden = v_hidden = sh::div_exact(w->dim(1), 3);
  }
  const Dim b = x ? x->dim(0) : sh::unknown(), s = x ? x->dim(1) : sh::unknown();
  sh::set_output(ctx, 0, 0, {b, s, v_hidden});
  const Dim total = sh::add(dim_of(ctx, 4, 5, 3, sh::known(0)), s);
  sh::set_output(ctx, 1, 0, {sh::known(2), b, sh::known(heads), total, sh::div_exact(q_hidden, heads)});
}

void multi_head_attention_shape(onnx::InferenceContext& ctx) {
  const int64_t heads = sh::attr_int(ctx, "num_heads", 0);
  if (heads <= 0) fail_shape_inference("num_heads must be positive");
  const auto* q = sh::input_shape(ctx, 0);
  if (!q) return;
  const Dim b = q->dim(0), s = q->dim(1);
  Dim q_hidden, kv_len, v_hidden, v_head;
  Dim past = dim_of(ctx, 6, 4, 2, sh::known(0));
  const int k_rank = rank_of(ctx, 1);
  if (q->dim_size() == 5) {  // packed QKV [B,S,N,3,H]
    q_hidden = v_hidden = sh::mul(q->dim(2), q->dim(4)), kv_len = s;
  } else if (q->dim_size() == 3) {
    q_hidden = q->dim(2);
    if (k_rank == 5) {  // packed KV [B,L,N,2,H]
      kv_len = dim_of(ctx, 1, 5, 1), v_hidden = sh::mul(dim_of(ctx, 1, 5, 2), dim_of(ctx, 1, 5, 4));
    } else if (k_rank == 4) {  // BNSH key/value, used as they are
      kv_len = dim_of(ctx, 1, 4, 2), v_head = dim_of(ctx, 2, 4, 3), past = sh::known(0);
      v_hidden = sh::mul(dim_of(ctx, 2, 4, 1), v_head);
    } else {
      kv_len = dim_of(ctx, 1, 3, 1), v_hidden = dim_of(ctx, 2, 3, 2);
    }
  } else {
    fail_shape_inference("query must be 3-D or packed 5-D");
  }
  if (!sh::value(v_head)) v_head = sh::div_exact(v_hidden, heads);
  sh::set_output(ctx, 0, 0, {b, s, v_hidden});
  const Dim total = sh::add(past, kv_len), n = sh::known(heads);
  sh::set_output(ctx, 1, 0, {b, n, total, sh::div_exact(q_hidden, heads)});
  sh::set_output(ctx, 2, 0, {b, n, total, v_head});
  sh::set_output(ctx, 3, 0, {b, n, s, total});
}

// The value of a constant one-element int32/int64 input (total_sequence_length), when known.
std::optional<int64_t> constant_int(onnx::InferenceContext& ctx, size_t i) {
  if (!sh::has_input(ctx, i)) return std::nullopt;
  const onnx::TensorProto* t = ctx.getInputData(i);
  if (!t) return std::nullopt;
  if (t->int32_data_size() == 1) return t->int32_data(0);
  if (t->int64_data_size() == 1) return t->int64_data(0);
  const std::string& raw = t->raw_data();
  if (t->data_type() == onnx::TensorProto::INT32 && raw.size() == 4) {
    int32_t v;
    std::memcpy(&v, raw.data(), 4);
    return v;
  }
  if (t->data_type() == onnx::TensorProto::INT64 && raw.size() == 8) {
    int64_t v;
    std::memcpy(&v, raw.data(), 8);
    return v;
  }
  return std::nullopt;
}

// present_key/value of GroupQueryAttention: past + S rows, or, when
// total_sequence_length is a constant, max(past, total) rows as ONNX Runtime
// allocates them (a past buffer of max_sequence_length rows is shared).
void group_query_attention_shape(onnx::InferenceContext& ctx) {
  const int64_t heads = sh::attr_int(ctx, "num_heads", 0), kv_heads = sh::attr_int(ctx, "kv_num_heads", 0);
  if (heads <= 0 || kv_heads <= 0 || heads % kv_heads != 0)
    fail_shape_inference("num_heads and kv_num_heads must be positive, num_heads a multiple of kv_num_heads");
  const auto* q = sh::input_shape_of_rank(ctx, 0, 3);
  if (!q) return;
  const Dim b = q->dim(0), s = q->dim(1);
  const int64_t columns = sh::has_input(ctx, 1) ? heads : heads + 2 * kv_heads;
  const Dim head = sh::div_exact(q->dim(2), columns);
  sh::set_output(ctx, 0, 0, {b, s, sh::mul(head, sh::known(heads))});
  const Dim past = dim_of(ctx, 3, 4, 2, sh::known(0));
  Dim present = sh::add(past, s);
  if (auto total = constant_int(ctx, 6)) {
    if (auto p = sh::value(past)) present = sh::known(std::max(*p, *total));
  }
  const size_t cache_type = sh::has_input(ctx, 3) ? 3 : 0;
  sh::set_output(ctx, 1, cache_type, {b, sh::known(kv_heads), present, head});
  sh::set_output(ctx, 2, cache_type, {b, sh::known(kv_heads), present, head});
}

void onnx_attention_shape(onnx::InferenceContext& ctx) {
  const auto* q = sh::input_shape(ctx, 0);
  const auto* k = sh::input_shape(ctx, 1);
  const auto* v = sh::input_shape(ctx, 2);
  if (!q || !k || !v) return;
  if (q->dim_size() != k->dim_size() || q->dim_size() != v->dim_size() ||
      (q->dim_size() != 3 && q->dim_size() != 4))
    fail_shape_inference("Q, K and V must all be 3-D or all 4-D");
  const Dim past = dim_of(ctx, 4, 4, 2, sh::known(0));
  const Dim b = q->dim(0);
  if (q->dim_size() == 4) {
    const Dim total = sh::add(past, k->dim(2));
    sh::set_output(ctx, 0, 0, {b, q->dim(1), q->dim(2), v->dim(3)});
    sh::set_output(ctx, 1, 0, {b, k->dim(1), total, k->dim(3)});
    sh::set_output(ctx, 2, 0, {b, v->dim(1), total, v->dim(3)});
    sh::set_output(ctx, 3, 0, {b, q->dim(1), q->dim(2), total});
    return;
  }
  const int64_t heads = sh::attr_int(ctx, "q_num_heads", 0), kv_heads = sh::attr_int(ctx, "kv_num_heads", 0);
  if (heads <= 0 || kv_heads <= 0) fail_shape_inference("3-D inputs need q_num_heads and kv_num_heads");
  const Dim v_head = sh::div_exact(v->dim(2), kv_heads), total = sh::add(past, k->dim(1));
  sh::set_output(ctx, 0, 0, {b, q->dim(1), sh::mul(v_head, sh::known(heads))});
  sh::set_output(ctx, 1, 0, {b, sh::known(kv_heads), total, sh::div_exact(k->dim(2), kv_heads)});
  sh::set_output(ctx, 2, 0, {b, sh::known(kv_heads), total, v_head});
  sh::set_output(ctx, 3, 0, {b, sh::known(heads), q->dim(1), total});
}

// Rotary embeddings keep their input's type and shape.
void rotary_shape(onnx::InferenceContext& ctx) {
  sh::same_as_input(ctx, 0, 0);
}

}  // namespace

void add_attention_rules(std::vector<CostRule>& rules) {
  static const OpRow kRows[] = {
      {"Attention", 1, contrib_attention,
       "packed QKV projection MACs = B*S*D_in*(q+k+v hidden) + attention core (T = past + S); FLOPs += "
       "B*S*(q+k+v) with bias; per score +1 each for mask_index, attention_bias, unidirectional (causal "
       "counted "
       "over the full S x T)",
       OpTraits{}.shape(attention_shape), nullptr, "com.microsoft"},
      {"MultiHeadAttention", 1, multi_head_attention,
       "attention core (T = past + kv length); FLOPs += 1 per q, k, v element with bias; per score +1 each "
       "for "
       "key_padding_mask, attention_bias, unidirectional (causal counted over the full S x T)",
       OpTraits{}.shape(multi_head_attention_shape), nullptr, "com.microsoft"},
      {"GroupQueryAttention", 1, group_query_attention,
       "attention core with N query heads (T = past + S; K/V heads shared, not counted apart); per score +1 "
       "for "
       "causal (default on; local windows and causal counted over the full S x T), +1 for attention_bias, +3 "
       "for "
       "softcap; do_rotary: + 3 per rotated q and k element",
       OpTraits{}.shape(group_query_attention_shape), nullptr, "com.microsoft"},
      {"RotaryEmbedding", 1, rotary_embedding<2>,
       "3 per rotated element (x1*cos - x2*sin): elements / head_size * rotary dim (2 * cos_cache's last "
       "dim)",
       OpTraits{}.shape(rotary_shape).constant_input(2).constant_input(3), nullptr, "com.microsoft"},
      {"Attention", 23, onnx_attention,
       "attention core: MACs = B*N*S*T*H (QK^T) + B*N*S*T*Hv (AV), T = past + kv length; FLOPs = 2*MACs + 6 "
       "per "
       "score (scale, softmax 5) +1 for attn_mask, +1 for is_causal (counted over the full S x T), +3 for "
       "softcap",
       OpTraits{}.shape(onnx_attention_shape)},
      {"RotaryEmbedding", 23, rotary_embedding<1>,
       "3 per rotated element (x1*cos - x2*sin): elements / head_size * rotary dim (2 * cos_cache's last "
       "dim)",
       OpTraits{}.shape(rotary_shape).constant_input(1).constant_input(2)},
  };
  add_rows(rules, kRows);
}

}  // namespace modelstat::cost

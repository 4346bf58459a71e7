// Normalisation: a constant number of FLOPs per element of the input. The
// statistics (mean: 1 add; variance: sub, square, add = 3) are counted per
// element; the per-group finalisation (divide by count, add epsilon, sqrt,
// reciprocal: a handful of ops per channel/row) is not, being negligible.
#include <string>

#include "analyzer/cost/cost_helpers.hpp"
#include "analyzer/cost/shape_rule_helpers.hpp"
#include "analyzer/op_traits.hpp"

namespace modelstat::cost {
namespace {

RuleResult per_input_element(const CostContext& ctx, int64_t per_element) {
  return flops_per_element(ctx, "normalization", per_element, ctx.input_elements(0), "input shape unknown");
}

// K FLOPs per element of input 0 (elementwise.cc's per_element counts the
// result's elements; the names differ so that one unity batch holds both).
template <int64_t K>
RuleResult per_input_element_k(const CostContext& ctx) {
  return per_input_element(ctx, K);
}

// Inference: scale and shift folded, 2 per element. Training (as the imported
// opset decides, op_training_mode: training_mode=1 from 14, running-stat
// outputs from 7 to 13, is_test=0 before 7): + mean (1) and variance (3).
RuleResult batch_norm(const CostContext& ctx) {
  const bool training = op_training_mode(ctx.node(), ctx.opset());
  return per_input_element(ctx, training ? 6 : 2);
}

// LRN: square-sum over `size` channels (2*size) + bias + alpha/size scaling (2)
// + pow (1) + divide (1) per element.
RuleResult lrn(const CostContext& ctx) {
  const int64_t size = ctx.node().attr_int("size", 0);
  if (size < 1 || size > (int64_t(1) << 30))
    return RuleResult::unknown_shape("normalization:lrn", "invalid size attribute");
  return per_input_element(ctx, 2 * size + 4);
}

// ---- ONNX Runtime's fused normalisations (contrib ops) ----------------------

// Per-element counts of the parts the fusions are made of.
constexpr int64_t kLayerNorm = 8;  // as LayerNormalization
constexpr int64_t kRmsNorm = 4;    // square, sum (mean of squares), mul by 1/rms, mul scale

// SkipLayerNormalization / SkipSimplifiedLayerNormalization: s = input + skip
// (+ bias), then the norm of s over the last dim: 1 + (bias ? 1 : 0) + norm
// per element of the input. Inputs: input, skip, gamma, (beta,) bias.
template <int64_t Norm, size_t BiasInput>
RuleResult skip_norm(const CostContext& ctx) {
  const int64_t per_element = 1 + (ctx.input(BiasInput) ? 1 : 0) + Norm;
  return per_input_element(ctx, per_element);
}

// EmbedLayerNormalization: the three gathers move data; per output element
// word + position (1) + segment (1 when present), then the layer norm (8);
// mask_index sums each mask row (1 per mask element when a mask is given).
RuleResult embed_layer_norm(const CostContext& ctx) {
  const std::string rule = "normalization:embed_layer_norm";
  auto out = ctx.output_elements(0);
  if (!out) return RuleResult::unknown_shape(rule, "output shape unknown");
  const int64_t per_element = 1 + (ctx.input(1) && ctx.input(4) ? 1 : 0) + kLayerNorm;
  int64_t flops = checked_mul(per_element, *out, ctx.node());
  if (ctx.input(7)) {
    auto mask = ctx.input_elements(7);
    if (!mask) return RuleResult::unknown_shape(rule, "mask shape unknown");
    flops = checked_add(flops, *mask, ctx.node());
  }
  return exact(rule, 0, flops);
}

namespace shape = cost::shape;

// Output 0 and output 3 (input_skip_bias_sum) are the input; mean and
// inv_std_var (1, 2) are float, one per row: the input's dims, the last one 1
// (as ONNX Runtime 1.30 shapes them).
void skip_norm_shape(onnx::InferenceContext& ctx) {
  shape::same_as_input(ctx, 0, 0);
  shape::same_as_input(ctx, 3, 0);
  if (auto stats = shape::stat_dims(ctx, 0, -1))
    for (size_t out : {1, 2}) shape::set_output_type(ctx, out, onnx::TensorProto::FLOAT, *stats);
}

// SimplifiedLayerNormalization (ONNX Runtime's RMS norm in the ONNX domain):
// Y is X's shape in scale's type; inv_std_var is float, X's dims with
// [axis, rank) set to 1.
void simplified_norm_shape(onnx::InferenceContext& ctx) {
  if (const auto* x = shape::input_shape(ctx, 0)) {
    std::vector<shape::Dim> dims(x->dim().begin(), x->dim().end());
    shape::set_output(ctx, 0, shape::has_input(ctx, 1) ? 1 : 0, dims);
  }
  if (auto stats = shape::stat_dims(ctx, 0, shape::attr_int(ctx, "axis", -1)))
    shape::set_output_type(ctx, 1, onnx::TensorProto::FLOAT, *stats);
}

// EmbedLayerNormalization: output and embedding_sum are [batch, sequence,
// hidden] (input_ids' dims, word_embedding's dim 1) in the embeddings' type;
// mask_index is int32 [batch].
void embed_layer_norm_shape(onnx::InferenceContext& ctx) {
  const auto* ids = shape::input_shape_of_rank(ctx, 0, 2);
  const auto* word = shape::input_shape_of_rank(ctx, 2, 2);
  if (!ids) return;
  const shape::Dim hidden = word ? word->dim(1) : shape::unknown();
  for (size_t out : {0, 2}) shape::set_output(ctx, out, 2, {ids->dim(0), ids->dim(1), hidden});
  shape::set_output_type(ctx, 1, onnx::TensorProto::INT32, {ids->dim(0)});
}

}  // namespace

void add_normalization_rules(std::vector<CostRule>& rules) {
  static const OpRow kRows[] = {
      {"BatchNormalization", 1, batch_norm,
       "2 per element (inference: folded scale+shift); 6 in training mode (+ mean 1, variance 3): training_mode=1 (14+), "
       "running-stat outputs (7-13), is_test=0 (1-6)",
       OpTraits{}.constant_input(3).constant_input(4)},
      {"InstanceNormalization", 1, per_input_element_k<8>,
       "8 per element: mean 1, variance 3, sub, mul by 1/std, mul scale, add bias"},
      // From opset 1, not ONNX's 17: ONNX Runtime registered its LayerNormalization
      // contrib op in the ONNX domain for opsets 1-16, and its transformer optimizer
      // writes it there; below 17 ONNX has no schema, so the record's shape trait
      // carries the shape through.
      {"LayerNormalization", 1, per_input_element_k<8>,
       "8 per element: mean 1, variance 3, sub, mul by 1/std, mul scale, add bias", OpTraits{}.shape_of_input()},
      {"GroupNormalization", 18, per_input_element_k<8>,
       "8 per element: mean 1, variance 3, sub, mul by 1/std, mul scale, add bias", OpTraits{}.shape_of_input()},
      {"MeanVarianceNormalization", 9, per_input_element_k<6>, "6 per element: mean 1, variance 3, sub, mul by 1/std"},
      {"LpNormalization", 1, per_input_element_k<3>,
       "3 per element: |x| or x^2, sum, divide by the norm (root per row not counted)"},
      {"LRN", 1, lrn, "(2*size + 4) per element: square-sum over size channels, scale, pow, divide"},
      // ONNX's RMS norm (opset 23): Y = X / sqrt(mean(X^2 over [axis, rank)) + epsilon) * scale.
      {"RMSNormalization", 23, per_input_element_k<kRmsNorm>,
       "4 per element: square, sum (mean of squares), mul by 1/rms, mul scale", OpTraits{}.shape_of_input()},
      // ONNX Runtime registers its RMS norm in the ONNX domain from opset 1 (its
      // transformer optimizer writes it there for LLaMA-style models).
      {"SimplifiedLayerNormalization", 1, per_input_element_k<kRmsNorm>,
       "4 per element: square, sum (mean of squares), mul by 1/rms, mul scale",
       OpTraits{}.shape(simplified_norm_shape)},
      // ONNX Runtime's fused transformer normalisations (com.microsoft).
      {"SkipLayerNormalization", 1, skip_norm<kLayerNorm, 4>,
       "(1 + (bias ? 1 : 0) + 8) per element: add skip, add bias, layer norm (8, as LayerNormalization)",
       OpTraits{}.shape(skip_norm_shape), nullptr, "com.microsoft"},
      {"SkipSimplifiedLayerNormalization", 1, skip_norm<kRmsNorm, 3>,
       "(1 + (bias ? 1 : 0) + 4) per element: add skip, add bias, RMS norm (4, as "
       "SimplifiedLayerNormalization)",
       OpTraits{}.shape(skip_norm_shape), nullptr, "com.microsoft"},
      {"EmbedLayerNormalization", 1, embed_layer_norm,
       "(1 + (segment ? 1 : 0) + 8) per output element: word + position (+ segment) embedding adds (the "
       "gathers move data), layer norm (8); + 1 per mask element (mask_index row sums)",
       OpTraits{}.shape(embed_layer_norm_shape), nullptr, "com.microsoft"},
  };
  add_rows(rules, kRows);
}

}  // namespace modelstat::cost

// Normalisation: a constant number of FLOPs per element of the input. The
// statistics (mean: 1 add; variance: sub, square, add = 3) are counted per
// element; the per-group finalisation (divide by count, add epsilon, sqrt,
// reciprocal: a handful of ops per channel/row) is not, being negligible.
#include <string>

#include "analyzer/cost/cost_helpers.hpp"
#include "analyzer/op_traits.hpp"

namespace modelstat::cost {
namespace {

RuleResult per_input_element(const CostContext& ctx, int64_t flops_per_element) {
  const std::string rule = rule_id("normalization", flops_per_element);
  auto n = ctx.input_elements(0);
  if (!n) return RuleResult::unknown_shape(rule, "input shape unknown");
  return exact(rule, 0, checked_mul(flops_per_element, *n, ctx.node()));
}

template <int64_t K>
RuleResult per_element(const CostContext& ctx) {
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

}  // namespace

void add_normalization_rules(std::vector<CostRule>& rules) {
  static const OpRow kRows[] = {
      {"BatchNormalization", 1, batch_norm,
       "2 per element (inference: folded scale+shift); 6 in training mode (+ mean 1, variance 3): training_mode=1 (14+), "
       "running-stat outputs (7-13), is_test=0 (1-6)",
       OpTraits{}.constant_input(3).constant_input(4)},
      {"InstanceNormalization", 1, per_element<8>,
       "8 per element: mean 1, variance 3, sub, mul by 1/std, mul scale, add bias"},
      // From opset 1, not ONNX's 17: ONNX Runtime registered its LayerNormalization
      // contrib op in the ONNX domain for opsets 1-16, and its transformer optimizer
      // writes it there; below 17 ONNX has no schema, so the record's shape trait
      // carries the shape through.
      {"LayerNormalization", 1, per_element<8>,
       "8 per element: mean 1, variance 3, sub, mul by 1/std, mul scale, add bias", OpTraits{}.shape_of_input()},
      {"GroupNormalization", 18, per_element<8>,
       "8 per element: mean 1, variance 3, sub, mul by 1/std, mul scale, add bias", OpTraits{}.shape_of_input()},
      {"MeanVarianceNormalization", 9, per_element<6>, "6 per element: mean 1, variance 3, sub, mul by 1/std"},
      {"LpNormalization", 1, per_element<3>,
       "3 per element: |x| or x^2, sum, divide by the norm (root per row not counted)"},
      {"LRN", 1, lrn, "(2*size + 4) per element: square-sum over size channels, scale, pow, divide"},
  };
  add_rows(rules, kRows);
}

}  // namespace modelstat::cost

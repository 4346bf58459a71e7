// Reductions, scans, selection and losses: FLOPs = a per input element +
// b per output element, constants in the rule docs and docs/COST_MODEL.md.
#include <algorithm>
#include <string>

#include "analyzer/cost/cost_helpers.hpp"
#include "analyzer/loader/shape_fold.hpp"

namespace modelstat::cost {
namespace {

namespace fold = loader::fold;

RuleResult reduce_cost(const CostContext& ctx, int64_t per_input, int64_t per_output) {
  const std::string rule = "reduce:" + std::to_string(per_input) + "/in+" + std::to_string(per_output) + "/out";
  auto in = ctx.input_elements(0);
  if (!in) return RuleResult::unknown_shape(rule, "input shape unknown");
  const Node& node = ctx.node();
  int64_t flops = checked_mul(per_input, *in, node);
  if (per_output) {
    auto out = ctx.output_elements(0);
    if (!out) return RuleResult::unknown_shape(rule, "output shape unknown");
    flops = checked_add(flops, checked_mul(per_output, *out, node), node);
  }
  return exact(rule, 0, flops);
}

template <int64_t PerInput, int64_t PerOutput>
RuleResult reduce(const CostContext& ctx) {
  return reduce_cost(ctx, PerInput, PerOutput);
}

// TopK: a heap selection, ceil(log2(k)) comparisons per input element (at least 1);
// k is read from the output's size along `axis`.
RuleResult top_k(const CostContext& ctx) {
  const char* rule = "topk";
  auto in = ctx.input_elements(0);
  auto y = ctx.output_dims(0);
  if (!in || !y) return RuleResult::unknown_shape(rule, "input or output shape unknown");
  auto axis = normalize_axis(ctx.node().attr_int("axis", -1), y->size());
  if (!axis) return RuleResult::unknown_shape(rule, "axis out of range");
  const int64_t per_element = std::max<int64_t>(1, ceil_log2((*y)[*axis]));
  return exact(rule, 0, checked_mul(*in, per_element, ctx.node()));
}

// Unique: a comparison sort, n*ceil(log2(n)) comparisons for n input elements.
RuleResult unique(const CostContext& ctx) {
  const char* rule = "unique";
  auto in = ctx.input_elements(0);
  if (!in) return RuleResult::unknown_shape(rule, "input shape unknown");
  return exact(rule, 0, checked_mul(*in, ceil_log2(*in), ctx.node()));  // sorting one element: 0 comparisons
}

// NegativeLogLikelihoodLoss: per target element, 1 negate + 1 weight multiply
// (weight given) + 1 accumulate (reduction != none); 1 divide for "mean".
RuleResult nll_loss(const CostContext& ctx) {
  const char* rule = "nll_loss";
  auto targets = ctx.input_elements(1);
  if (!targets) return RuleResult::unknown_shape(rule, "target shape unknown");
  const std::string reduction = ctx.node().attr_string("reduction", "mean");
  int64_t per_target = 1;
  if (ctx.input(2)) ++per_target;
  if (reduction != "none") ++per_target;
  int64_t flops = checked_mul(per_target, *targets, ctx.node());
  if (reduction == "mean") flops = checked_add(flops, 1, ctx.node());
  return exact(rule, 0, flops);
}

// SoftmaxCrossEntropyLoss: log-softmax over the scores (6 per score element:
// max, sub, exp, sum, log, sub) + the NLL work per target element as above.
RuleResult softmax_cross_entropy(const CostContext& ctx) {
  const char* rule = "softmax_cross_entropy";
  auto scores = ctx.input_elements(0);
  auto targets = ctx.input_elements(1);
  if (!scores || !targets) return RuleResult::unknown_shape(rule, "scores or labels shape unknown");
  const std::string reduction = ctx.node().attr_string("reduction", "mean");
  int64_t per_target = 1;
  if (ctx.input(2)) ++per_target;
  if (reduction != "none") ++per_target;
  const Node& node = ctx.node();
  int64_t flops = checked_add(checked_mul(6, *scores, node), checked_mul(per_target, *targets, node), node);
  if (reduction == "mean") flops = checked_add(flops, 1, node);
  return exact(rule, 0, flops);
}

}  // namespace

void add_reduction_rules(std::vector<CostRule>& rules) {
  static const OpRow kRows[] = {
      {"ReduceSum", 1, reduce<1, 0>, "1 add per input element", kSavesNothing, fold::reduce_sum},
      {"ReduceMean", 1, reduce<1, 1>, "1 add per input element + 1 divide per output element", kSavesNothing},
      {"ReduceMax", 1, reduce<1, 0>, "1 comparison per input element", OpTraits{}, fold::reduce_max},
      {"ReduceMin", 1, reduce<1, 0>, "1 comparison per input element", OpTraits{}, fold::reduce_min},
      {"ReduceProd", 1, reduce<1, 0>, "1 multiply per input element", OpTraits{}, fold::reduce_prod},
      {"ReduceL1", 1, reduce<2, 0>, "2 per input element (abs, add)"},
      {"ReduceL2", 1, reduce<2, 1>, "2 per input element (square, add) + 1 sqrt per output element"},
      {"ReduceLogSum", 1, reduce<1, 1>, "1 add per input element + 1 log per output element"},
      {"ReduceLogSumExp", 1, reduce<2, 1>,
       "2 per input element (exp, add) + 1 log per output element (stabilising max not counted)"},
      {"ReduceSumSquare", 1, reduce<2, 0>, "2 per input element (square, add)"},
      {"ArgMax", 1, reduce<1, 0>, "1 comparison per input element"},
      {"ArgMin", 1, reduce<1, 0>, "1 comparison per input element"},
      {"CumSum", 11, reduce<1, 0>, "1 add per input element"},
      {"TopK", 1, top_k, "max(1, ceil(log2(k))) comparisons per input element (heap selection)"},
      {"Unique", 11, unique, "n*ceil(log2(n)) comparisons for n input elements (sort)"},
      {"NegativeLogLikelihoodLoss", 12, nll_loss,
       "per target element: 1 negate + 1 (weight) + 1 (reduction != none); + 1 divide for mean"},
      {"SoftmaxCrossEntropyLoss", 12, softmax_cross_entropy,
       "6 per score element (log-softmax) + NLL work per label element as NegativeLogLikelihoodLoss"},
  };
  add_rows(rules, kRows);
}

}  // namespace modelstat::cost

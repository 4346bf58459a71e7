// Elementwise ops: a constant number of FLOPs per output element. Every
// arithmetic op, comparison, min/max and transcendental (exp, log, tanh, erf,
// sin, ...) counts as 1; composite activations count the ops of the formula in
// the ONNX spec. The constants are tabulated in docs/COST_MODEL.md.
#include <string>

#include "analyzer/cost/cost_helpers.hpp"

namespace modelstat::cost {
namespace {

// Output elements; when the output shape is unknown, the broadcast of the inputs.
std::optional<int64_t> result_elements(const CostContext& ctx) {
  if (auto n = ctx.output_elements(0)) return n;
  std::optional<std::vector<int64_t>> shape;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.input(i)) continue;
    auto dims = ctx.input_dims(i);
    if (!dims) return std::nullopt;
    shape = shape ? broadcast_shapes(*shape, *dims) : dims;
    if (!shape) return std::nullopt;
  }
  if (!shape) return std::nullopt;
  return checked_product(*shape, ctx.node());
}

RuleResult per_element_cost(const CostContext& ctx, int64_t flops_per_element, const char* family = "elementwise") {
  const std::string rule = rule_id(family, flops_per_element);
  auto n = result_elements(ctx);
  if (!n) return RuleResult::unknown_shape(rule, "output shape unknown");
  return exact(rule, 0, checked_mul(flops_per_element, *n, ctx.node()));
}

template <int64_t K>
RuleResult per_element(const CostContext& ctx) {
  return per_element_cost(ctx, K);
}

// Sum/Max/Min of n inputs: n-1 ops per output element.
RuleResult variadic(const CostContext& ctx) {
  const auto n = int64_t(present_inputs(ctx));
  return per_element_cost(ctx, n > 0 ? n - 1 : 0);
}

// Mean of n inputs: n-1 adds + 1 divide per output element.
RuleResult mean(const CostContext& ctx) { return per_element_cost(ctx, int64_t(present_inputs(ctx))); }

// Gelu (opset 20): exact erf form 0.5*x*(1+erf(x/sqrt(2))) = 5; tanh approximation
// 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3))) = 9.
RuleResult gelu(const CostContext& ctx) {
  return per_element_cost(ctx, ctx.node().attr_string("approximate", "none") == "tanh" ? 9 : 5);
}

template <int64_t K>
RuleResult softmax(const CostContext& ctx) {
  return per_element_cost(ctx, K, "softmax");
}

template <int64_t K>
RuleResult quantize(const CostContext& ctx) {
  return per_element_cost(ctx, K, "quantize");
}

// DynamicQuantizeLinear: min and max over the input (2) + quantize (2) per input element.
RuleResult dynamic_quantize(const CostContext& ctx) {
  const std::string rule = rule_id("quantize", 4);
  auto n = ctx.input_elements(0);
  if (!n) return RuleResult::unknown_shape(rule, "input shape unknown");
  return exact(rule, 0, checked_mul(4, *n, ctx.node()));
}

template <int64_t K>
RuleResult window(const CostContext& ctx) {
  const std::string rule = rule_id("window", K);
  auto n = ctx.output_elements(0);
  if (!n) return RuleResult::unknown_shape(rule, "window size unknown");
  return exact(rule, 0, checked_mul(K, *n, ctx.node()));
}

struct Entry {
  const char* op;
  CostFn fn;
  const char* doc;
};

}  // namespace

void add_elementwise_rules(std::vector<CostRule>& rules) {
  static const Entry kEntries[] = {
      // Binary arithmetic, comparison and logic: 1 per output element (broadcast).
      {"Add", per_element<1>, "1 FLOP per output element"},
      {"Sub", per_element<1>, "1 FLOP per output element"},
      {"Mul", per_element<1>, "1 FLOP per output element"},
      {"Div", per_element<1>, "1 FLOP per output element"},
      {"Pow", per_element<1>, "1 FLOP per output element (pow counted as 1)"},
      {"Mod", per_element<1>, "1 op per output element"},
      {"BitShift", per_element<1>, "1 op per output element"},
      {"Equal", per_element<1>, "1 comparison per output element"},
      {"Less", per_element<1>, "1 comparison per output element"},
      {"Greater", per_element<1>, "1 comparison per output element"},
      {"LessOrEqual", per_element<1>, "1 comparison per output element"},
      {"GreaterOrEqual", per_element<1>, "1 comparison per output element"},
      {"And", per_element<1>, "1 op per output element"},
      {"Or", per_element<1>, "1 op per output element"},
      {"Xor", per_element<1>, "1 op per output element"},
      {"BitwiseAnd", per_element<1>, "1 op per output element"},
      {"BitwiseOr", per_element<1>, "1 op per output element"},
      {"BitwiseXor", per_element<1>, "1 op per output element"},
      {"Where", per_element<1>, "1 select per output element"},
      // Variadic.
      {"Sum", variadic, "(inputs-1) adds per output element"},
      {"Max", variadic, "(inputs-1) comparisons per output element"},
      {"Min", variadic, "(inputs-1) comparisons per output element"},
      {"Mean", mean, "(inputs-1) adds + 1 divide per output element"},
      // Unary: 1 per element (transcendentals count as 1).
      {"Relu", per_element<1>, "1 FLOP per element (max(0,x))"},
      {"Neg", per_element<1>, "1 FLOP per element"},
      {"Abs", per_element<1>, "1 FLOP per element"},
      {"Exp", per_element<1>, "1 FLOP per element (transcendental counted as 1)"},
      {"Log", per_element<1>, "1 FLOP per element (transcendental counted as 1)"},
      {"Sqrt", per_element<1>, "1 FLOP per element"},
      {"Reciprocal", per_element<1>, "1 FLOP per element"},
      {"Floor", per_element<1>, "1 FLOP per element"},
      {"Ceil", per_element<1>, "1 FLOP per element"},
      {"Round", per_element<1>, "1 FLOP per element"},
      {"Sign", per_element<1>, "1 FLOP per element"},
      {"Erf", per_element<1>, "1 FLOP per element (transcendental counted as 1)"},
      {"Tanh", per_element<1>, "1 FLOP per element (transcendental counted as 1)"},
      {"Sin", per_element<1>, "1 FLOP per element (transcendental counted as 1)"},
      {"Cos", per_element<1>, "1 FLOP per element (transcendental counted as 1)"},
      {"Tan", per_element<1>, "1 FLOP per element (transcendental counted as 1)"},
      {"Asin", per_element<1>, "1 FLOP per element (transcendental counted as 1)"},
      {"Acos", per_element<1>, "1 FLOP per element (transcendental counted as 1)"},
      {"Atan", per_element<1>, "1 FLOP per element (transcendental counted as 1)"},
      {"Sinh", per_element<1>, "1 FLOP per element (transcendental counted as 1)"},
      {"Cosh", per_element<1>, "1 FLOP per element (transcendental counted as 1)"},
      {"Asinh", per_element<1>, "1 FLOP per element (transcendental counted as 1)"},
      {"Acosh", per_element<1>, "1 FLOP per element (transcendental counted as 1)"},
      {"Atanh", per_element<1>, "1 FLOP per element (transcendental counted as 1)"},
      {"Not", per_element<1>, "1 op per element"},
      {"BitwiseNot", per_element<1>, "1 op per element"},
      {"IsNaN", per_element<1>, "1 comparison per element"},
      {"IsInf", per_element<1>, "1 comparison per element"},
      {"ThresholdedRelu", per_element<1>, "1 per element (compare-select)"},
      // Composite activations: the ops of the spec's formula.
      {"Sigmoid", per_element<4>, "4 per element: 1/(1+exp(-x)) = neg, exp, add, div"},
      {"HardSigmoid", per_element<4>, "4 per element: max(0, min(1, alpha*x+beta)) = mul, add, min, max"},
      {"HardSwish", per_element<5>, "5 per element: x*HardSigmoid(x) = mul, add, min, max, mul"},
      {"Gelu", gelu, "5 per element (erf form: div, erf, add, mul, mul); 9 with approximate=tanh"},
      {"Softplus", per_element<3>, "3 per element: log(exp(x)+1) = exp, add, log"},
      {"Softsign", per_element<3>, "3 per element: x/(1+|x|) = abs, add, div"},
      {"Elu", per_element<4>, "4 per element: compare, exp, sub, mul"},
      {"Selu", per_element<5>, "5 per element: compare, exp, mul, sub, mul (gamma)"},
      {"Celu", per_element<7>, "7 per element: max(0,x) + min(0, alpha*(exp(x/alpha)-1))"},
      {"LeakyRelu", per_element<2>, "2 per element: compare, mul"},
      {"PRelu", per_element<2>, "2 per output element: compare, mul by slope"},
      {"Mish", per_element<5>, "5 per element: x*tanh(log(1+exp(x))) = exp, add, log, tanh, mul"},
      {"Clip", per_element<2>, "2 per element: min, max"},
      {"Shrink", per_element<3>, "3 per element: two compares, one add/sub"},
      // Softmax family, per element of the input/output.
      {"Softmax", softmax<5>, "5 per element: max, sub, exp, sum, div"},
      {"LogSoftmax", softmax<5>, "5 per element: max, sub, exp, sum, sub (log per row not counted)"},
      {"Hardmax", softmax<1>, "1 comparison per element (argmax; one-hot write is data movement)"},
      // Quantisation.
      {"QuantizeLinear", quantize<2>, "2 per element: divide by scale, add zero point (rounding/saturation not counted)"},
      {"DequantizeLinear", quantize<2>, "2 per element: subtract zero point, multiply by scale"},
      {"DynamicQuantizeLinear", dynamic_quantize, "4 per input element: min, max, divide, add zero point"},
      // Generated windows (opset 17), per output element.
      {"HannWindow", window<5>, "5 per output element: 0.5 - 0.5*cos(2*pi*n/N) = div, mul, cos, mul, sub"},
      {"HammingWindow", window<5>, "5 per output element: a0 - a1*cos(2*pi*n/N) = div, mul, cos, mul, sub"},
      {"BlackmanWindow", window<9>, "9 per output element: a0 - a1*cos(2*pi*n/N) + a2*cos(4*pi*n/N)"},
  };
  for (const Entry& e : kEntries) add_rule(rules, e.op, e.fn, e.doc);
}

}  // namespace modelstat::cost

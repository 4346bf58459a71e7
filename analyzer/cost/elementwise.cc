// Elementwise ops: a constant number of FLOPs per output element. One row per
// op: {op, first opset, cost rule, formula, traits, shape-value folding}. Every
// arithmetic op, comparison, min/max and transcendental (exp, log, tanh, erf,
// sin, ...) counts as 1; composite activations count the ops of the formula in
// the ONNX spec. The constants are tabulated in docs/COST_MODEL.md.
#include <string>

#include "analyzer/cost/cost_helpers.hpp"
#include "analyzer/cost/shape_rule_helpers.hpp"
#include "analyzer/loader/shape_fold.hpp"

namespace modelstat::cost {
namespace {

namespace fold = loader::fold;

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

RuleResult per_element_cost(const CostContext& ctx, int64_t flops_each, const char* family = "elementwise") {
  return flops_per_element(ctx, family, flops_each, result_elements(ctx), "output shape unknown");
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

// com.microsoft FastGelu: the tanh approximation 0.5*x*(1+tanh(0.797885*x +
// 0.035677*x^3)) = 9 (x*x*x 2, two scalings 2, add, tanh, add 1, mul x, mul
// 0.5), + 1 for the optional bias added to x first.
RuleResult fast_gelu(const CostContext& ctx) {
  return per_element_cost(ctx, ctx.input(1) ? 10 : 9);
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
  return flops_per_element(ctx, "quantize", 4, ctx.input_elements(0), "input shape unknown");
}

template <int64_t K>
RuleResult window(const CostContext& ctx) {
  return flops_per_element(ctx, "window", K, ctx.output_elements(0), "window size unknown");
}

}  // namespace

void add_elementwise_rules(std::vector<CostRule>& rules) {
  static const OpRow kRows[] = {
      // Binary arithmetic, comparison and logic: 1 per output element (broadcast).
      {"Add", 1, per_element<1>, "1 FLOP per output element",
       kSavesNothing.in_place().scalar_operand_constant(), fold::add},
      {"Sub", 1, per_element<1>, "1 FLOP per output element",
       kSavesNothing.in_place().scalar_operand_constant(), fold::sub},
      {"Mul", 1, per_element<1>, "1 FLOP per output element",
       OpTraits{}.in_place().scalar_operand_constant(), fold::mul},
      {"Div", 1, per_element<1>, "1 FLOP per output element", OpTraits{}.scalar_operand_constant(), fold::div},
      {"Pow", 1, per_element<1>, "1 FLOP per output element (pow counted as 1)", OpTraits{}.constant_input(1),
       fold::pow},
      {"Mod", 10, per_element<1>, "1 op per output element", OpTraits{}, fold::mod},
      {"BitShift", 11, per_element<1>, "1 op per output element"},
      {"Equal", 1, per_element<1>, "1 comparison per output element", OpTraits{}, fold::equal},
      {"Less", 1, per_element<1>, "1 comparison per output element", OpTraits{}, fold::less},
      {"Greater", 1, per_element<1>, "1 comparison per output element", OpTraits{}, fold::greater},
      {"LessOrEqual", 12, per_element<1>, "1 comparison per output element", OpTraits{}, fold::less_or_equal},
      {"GreaterOrEqual", 12, per_element<1>, "1 comparison per output element", OpTraits{}, fold::greater_or_equal},
      {"And", 1, per_element<1>, "1 op per output element", OpTraits{}, fold::logical_and},
      {"Or", 1, per_element<1>, "1 op per output element", OpTraits{}, fold::logical_or},
      {"Xor", 1, per_element<1>, "1 op per output element", OpTraits{}, fold::logical_xor},
      {"BitwiseAnd", 18, per_element<1>, "1 op per output element", OpTraits{}.shape(shape::broadcast_inputs)},
      {"BitwiseOr", 18, per_element<1>, "1 op per output element", OpTraits{}.shape(shape::broadcast_inputs)},
      {"BitwiseXor", 18, per_element<1>, "1 op per output element", OpTraits{}.shape(shape::broadcast_inputs)},
      {"Where", 9, per_element<1>, "1 select per output element", OpTraits{}, fold::where},
      // Variadic.
      {"Sum", 1, variadic, "(inputs-1) adds per output element", kSavesNothing, fold::sum},
      {"Max", 1, variadic, "(inputs-1) comparisons per output element", OpTraits{}, fold::max},
      {"Min", 1, variadic, "(inputs-1) comparisons per output element", OpTraits{}, fold::min},
      {"Mean", 1, mean, "(inputs-1) adds + 1 divide per output element"},
      // Unary: 1 per element (transcendentals count as 1).
      {"Relu", 1, per_element<1>, "1 FLOP per element (max(0,x))", kSavesOutput.in_place()},
      {"Neg", 1, per_element<1>, "1 FLOP per element", kSavesNothing, fold::neg},
      {"Abs", 1, per_element<1>, "1 FLOP per element", OpTraits{}, fold::abs},
      {"Exp", 1, per_element<1>, "1 FLOP per element (transcendental counted as 1)", kSavesOutput.approximate()},
      {"Log", 1, per_element<1>, "1 FLOP per element (transcendental counted as 1)", OpTraits{}.approximate()},
      {"Sqrt", 1, per_element<1>, "1 FLOP per element", kSavesOutput, fold::sqrt},
      {"Reciprocal", 1, per_element<1>, "1 FLOP per element", kSavesOutput, fold::reciprocal},
      {"Floor", 1, per_element<1>, "1 FLOP per element", OpTraits{}, fold::floor},
      {"Ceil", 1, per_element<1>, "1 FLOP per element", OpTraits{}, fold::ceil},
      {"Round", 11, per_element<1>, "1 FLOP per element", OpTraits{}, fold::round},
      {"Sign", 9, per_element<1>, "1 FLOP per element", OpTraits{}, fold::sign},
      {"Erf", 9, per_element<1>, "1 FLOP per element (transcendental counted as 1)", OpTraits{}.approximate()},
      {"Tanh", 1, per_element<1>, "1 FLOP per element (transcendental counted as 1)", kSavesOutput.approximate()},
      {"Sin", 7, per_element<1>, "1 FLOP per element (transcendental counted as 1)", OpTraits{}.approximate()},
      {"Cos", 7, per_element<1>, "1 FLOP per element (transcendental counted as 1)", OpTraits{}.approximate()},
      {"Tan", 7, per_element<1>, "1 FLOP per element (transcendental counted as 1)", OpTraits{}.approximate()},
      {"Asin", 7, per_element<1>, "1 FLOP per element (transcendental counted as 1)", OpTraits{}.approximate()},
      {"Acos", 7, per_element<1>, "1 FLOP per element (transcendental counted as 1)", OpTraits{}.approximate()},
      {"Atan", 7, per_element<1>, "1 FLOP per element (transcendental counted as 1)", OpTraits{}.approximate()},
      {"Sinh", 9, per_element<1>, "1 FLOP per element (transcendental counted as 1)", OpTraits{}.approximate()},
      {"Cosh", 9, per_element<1>, "1 FLOP per element (transcendental counted as 1)", OpTraits{}.approximate()},
      {"Asinh", 9, per_element<1>, "1 FLOP per element (transcendental counted as 1)", OpTraits{}.approximate()},
      {"Acosh", 9, per_element<1>, "1 FLOP per element (transcendental counted as 1)", OpTraits{}.approximate()},
      {"Atanh", 9, per_element<1>, "1 FLOP per element (transcendental counted as 1)", OpTraits{}.approximate()},
      {"Not", 1, per_element<1>, "1 op per element", OpTraits{}, fold::logical_not},
      {"BitwiseNot", 18, per_element<1>, "1 op per element", OpTraits{}.shape_of_input()},
      {"IsNaN", 9, per_element<1>, "1 comparison per element"},
      {"IsInf", 10, per_element<1>, "1 comparison per element"},
      {"ThresholdedRelu", 10, per_element<1>, "1 per element (compare-select)"},
      // Composite activations: the ops of the spec's formula.
      {"Sigmoid", 1, per_element<4>, "4 per element: 1/(1+exp(-x)) = neg, exp, add, div", kSavesOutput.approximate()},
      {"HardSigmoid", 1, per_element<4>, "4 per element: max(0, min(1, alpha*x+beta)) = mul, add, min, max"},
      {"HardSwish", 14, per_element<5>, "5 per element: x*HardSigmoid(x) = mul, add, min, max, mul"},
      {"Gelu", 20, gelu, "5 per element (erf form: div, erf, add, mul, mul); 9 with approximate=tanh",
       OpTraits{}.shape_of_input().approximate()},
      // ONNX Runtime's contrib QuickGelu (com.microsoft, CLIP/OpenAI exports): x*sigmoid(alpha*x),
      // alpha = 1.702 by default. ONNX has no schema for it: its output has input 0's shape.
      {"QuickGelu", 1, per_element<6>, "6 per element: x*sigmoid(alpha*x) = mul, neg, exp, add, div, mul",
       OpTraits{}.shape_of_input().approximate(), nullptr, "com.microsoft"},
      // ONNX Runtime's other GELU forms and bias fusions (com.microsoft); outputs have input 0's shape.
      {"Gelu", 1, per_element<5>, "5 per element (erf form, as ONNX Gelu: div, erf, add, mul, mul)",
       OpTraits{}.shape_of_input().approximate(), nullptr, "com.microsoft"},
      {"FastGelu", 1, fast_gelu,
       "9 per element (tanh form, as ONNX Gelu approximate=tanh) + 1 with the optional bias (added first)",
       OpTraits{}.shape_of_input().approximate(), nullptr, "com.microsoft"},
      {"BiasGelu", 1, per_element<6>, "6 per element: bias add, then Gelu's erf form (5)",
       OpTraits{}.shape_of_input().approximate(), nullptr, "com.microsoft"},
      {"BiasAdd", 1, per_element<2>, "2 per element: X + bias + skip", OpTraits{}.shape_of_input(), nullptr,
       "com.microsoft"},
      {"Softplus", 1, per_element<3>, "3 per element: log(exp(x)+1) = exp, add, log", OpTraits{}.approximate()},
      {"Softsign", 1, per_element<3>, "3 per element: x/(1+|x|) = abs, add, div"},
      {"Elu", 1, per_element<4>, "4 per element: compare, exp, sub, mul", OpTraits{}.approximate()},
      {"Selu", 1, per_element<5>, "5 per element: compare, exp, mul, sub, mul (gamma)", OpTraits{}.approximate()},
      {"Celu", 12, per_element<7>, "7 per element: max(0,x) + min(0, alpha*(exp(x/alpha)-1))", OpTraits{}.approximate()},
      {"LeakyRelu", 1, per_element<2>, "2 per element: compare, mul"},
      {"PRelu", 1, per_element<2>, "2 per output element: compare, mul by slope"},
      {"Mish", 18, per_element<5>, "5 per element: x*tanh(log(1+exp(x))) = exp, add, log, tanh, mul",
       OpTraits{}.shape_of_input().approximate()},
      {"Clip", 1, per_element<2>, "2 per element: min, max", OpTraits{}.in_place().constant_input(1).constant_input(2)},
      {"Shrink", 9, per_element<3>, "3 per element: two compares, one add/sub"},
      // Softmax family, per element of the input/output.
      {"Softmax", 1, softmax<5>, "5 per element: max, sub, exp, sum, div", kSavesOutput.approximate()},
      {"LogSoftmax", 1, softmax<5>, "5 per element: max, sub, exp, sum, sub (log per row not counted)", kSavesOutput.approximate()},
      {"Hardmax", 1, softmax<1>, "1 comparison per element (argmax; one-hot write is data movement)"},
      {"BiasSoftmax", 1, softmax<6>, "6 per element: bias add, then Softmax (5)", kSavesOutput.shape_of_input().approximate(),
       nullptr, "com.microsoft"},
      // Quantisation.
      {"QuantizeLinear", 10, quantize<2>,
       "2 per element: divide by scale, add zero point (rounding/saturation not counted)"},
      {"DequantizeLinear", 10, quantize<2>, "2 per element: subtract zero point, multiply by scale"},
      {"DynamicQuantizeLinear", 11, dynamic_quantize, "4 per input element: min, max, divide, add zero point"},
      // Generated windows (opset 17), per output element.
      {"HannWindow", 17, window<5>, "5 per output element: 0.5 - 0.5*cos(2*pi*n/N) = div, mul, cos, mul, sub"},
      {"HammingWindow", 17, window<5>, "5 per output element: a0 - a1*cos(2*pi*n/N) = div, mul, cos, mul, sub"},
      {"BlackmanWindow", 17, window<9>, "9 per output element: a0 - a1*cos(2*pi*n/N) + a2*cos(4*pi*n/N)"},
  };
  add_rows(rules, kRows);
}

}  // namespace modelstat::cost

// Convolutions: Conv, ConvTranspose and their quantised forms (ConvInteger,
// QLinearConv). MACs come from the weight's dims, so `group` never needs a
// division: W is [C_out, C_in/group, k...] for Conv and [C_in, C_out/group, k...]
// for ConvTranspose.
#include <string>

#include "analyzer/cost/cost_helpers.hpp"
#include "analyzer/cost/shape_rule_helpers.hpp"

namespace modelstat::cost {
namespace {

struct ConvInputs {
  size_t x = 0, w = 1, bias = 2;
  bool has_bias_input = true;
  int64_t requant_per_output = 0;  // QLinearConv: scale multiply + zero-point add
};

// Checks shared by every convolution: weight rank >= 3 and a valid group.
std::optional<std::string> check_conv_attrs(const CostContext& ctx, const std::vector<int64_t>& w) {
  if (w.size() < 3) return "weight rank " + std::to_string(w.size()) + " < 3";
  const int64_t group = ctx.node().attr_int("group", 1);
  if (group < 1) return "invalid group " + std::to_string(group);
  return std::nullopt;
}

// The MACs of a convolution counted over tensor t, the one whose channel dim
// is W's dim 0 (Conv's output, ConvTranspose's input): each of t's elements
// meets a W[1] x kernel slice of the weight, MACs = elements(t) * W[1] *
// prod(kernel). The reason when they cannot be counted; `which` names t in it.
struct ConvMacs {
  int64_t macs = 0;
  int64_t elements = 0;  // t's
};
std::optional<std::string> conv_macs(const CostContext& ctx, size_t w_input, const std::optional<std::vector<int64_t>>& t,
                                     const std::string& which, ConvMacs& out) {
  auto w = ctx.input_dims(w_input);
  if (!w) return std::string("weight shape unknown");
  if (auto bad = check_conv_attrs(ctx, *w)) return bad;
  if (!t) return which + " shape unknown";
  if (t->size() != w->size()) return which + " rank does not match weight rank";
  if ((*t)[1] != (*w)[0]) return which + " channels do not match weight dim 0";
  const Node& node = ctx.node();
  const std::vector<int64_t> kernel(w->begin() + 2, w->end());
  out.elements = checked_product(*t, node);
  out.macs = checked_mul(out.elements, checked_mul((*w)[1], checked_product(kernel, node), node), node);
  return std::nullopt;
}

// Conv: MACs = N * C_out * prod(out_spatial) * (C_in/group) * prod(kernel).
RuleResult conv_cost(const CostContext& ctx, const ConvInputs& in, const char* rule) {
  ConvMacs m;
  if (auto bad = conv_macs(ctx, in.w, ctx.output_dims(0), "output", m)) return RuleResult::unknown_shape(rule, *bad);
  const Node& node = ctx.node();
  const int64_t out_elements = m.elements;  // N * C_out * prod(out_spatial)
  int64_t flops = checked_mul(2, m.macs, node);
  if (in.has_bias_input && ctx.input(in.bias)) flops = checked_add(flops, out_elements, node);
  if (in.requant_per_output)
    flops = checked_add(flops, checked_mul(in.requant_per_output, out_elements, node), node);
  return exact(rule, m.macs, flops);
}

RuleResult conv(const CostContext& ctx) { return conv_cost(ctx, ConvInputs{}, "conv"); }

RuleResult conv_integer(const CostContext& ctx) {
  ConvInputs in;
  in.has_bias_input = false;  // inputs 2 and 3 are zero points, not a bias
  return conv_cost(ctx, in, "conv");
}

RuleResult qlinear_conv(const CostContext& ctx) {
  ConvInputs in;
  in.x = 0;
  in.w = 3;
  in.bias = 8;
  in.requant_per_output = 2;
  return conv_cost(ctx, in, "conv");
}

// ConvTranspose: every input element is multiplied by a C_out/group x kernel
// slice of W: MACs = N * C_in * prod(in_spatial) * (C_out/group) * prod(kernel).
RuleResult conv_transpose(const CostContext& ctx) {
  const char* rule = "conv_transpose";
  ConvMacs m;  // over the input: N * C_in * prod(in_spatial) elements
  if (auto bad = conv_macs(ctx, 1, ctx.input_dims(0), "input", m)) return RuleResult::unknown_shape(rule, *bad);
  const Node& node = ctx.node();
  int64_t flops = checked_mul(2, m.macs, node);
  if (ctx.input(2)) {
    auto out_elements = ctx.output_elements(0);
    if (!out_elements) return RuleResult::unknown_shape(rule, "output shape unknown (bias adds)");
    flops = checked_add(flops, *out_elements, node);
  }
  return exact(rule, m.macs, flops);
}

// com.microsoft FusedConv: activation(Conv(X, W, B) + Z): Conv's count, + 1
// per output element for the optional sum input Z, + the activation's own
// per-element count on every output element (none without `activation`).
RuleResult fused_conv(const CostContext& ctx) {
  const std::string activation = ctx.node().attr_string("activation", "");
  auto per_element =
      activation.empty() ? std::optional<int64_t>(0) : activation_flops_per_element(activation);
  if (!per_element)
    return RuleResult::unknown_shape("conv", "activation '" + activation + "' has no elementwise record");
  RuleResult r = conv_cost(ctx, ConvInputs{}, "conv");
  if (r.status != CostStatus::Exact) return r;
  const int64_t fused = *per_element + (ctx.input(3) ? 1 : 0);
  auto out_elements = ctx.output_elements(0);  // known: conv_cost read the output's dims
  r.flops = checked_add(r.flops, checked_mul(fused, *out_elements, ctx.node()), ctx.node());
  return r;
}

// FusedConv's output is Conv's (ONNX's Conv-11 inference; Z has its shape).
void fused_conv_shape(onnx::InferenceContext& ctx) {
  cost::shape::infer_as(ctx, "Conv", 11);
}

}  // namespace

void add_conv_rules(std::vector<CostRule>& rules) {
  static const OpRow kRows[] = {
      {"Conv", 1, conv,
       "MACs = N*C_out*prod(out_spatial)*(C_in/group)*prod(kernel); FLOPs = 2*MACs + "
       "(bias ? N*C_out*prod(out_spatial) : 0)",
       OpTraits{}.conv_pool(1).dense(DenseFamily::Conv)},
      {"ConvTranspose", 1, conv_transpose,
       "MACs = N*C_in*prod(in_spatial)*(C_out/group)*prod(kernel); FLOPs = 2*MACs + "
       "(bias ? output elements : 0)",
       OpTraits{}.conv_pool(1)},
      {"ConvInteger", 10, conv_integer,
       "as Conv (integer MACs); zero-point subtraction not counted; FLOPs = 2*MACs",
       OpTraits{}.conv_pool(1)},
      {"QLinearConv", 10, qlinear_conv,
       "as Conv (integer MACs); FLOPs = 2*MACs + (bias ? output elements : 0) + 2 per output element "
       "(requantisation: scale multiply, zero-point add)",
       OpTraits{}.conv_pool(3)},
      {"FusedConv", 1, fused_conv,
       "as Conv + (Z ? 1 : 0) per output element (the sum input, added before the activation) + the "
       "activation's own per-element count on every output element",
       OpTraits{}.conv_pool(1).shape(fused_conv_shape).dense(DenseFamily::Conv), nullptr, "com.microsoft"},
  };
  add_rows(rules, kRows);
}

}  // namespace modelstat::cost

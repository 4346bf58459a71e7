// Pattern "gelu": GELU written out as ONNX exporters write it (opset < 20),
//   Div(x, sqrt 2) -> Erf -> Add(1) -> Mul(x) -> Mul(0.5)   (the two Muls in either order),
// runs as the Gelu op (opset 20, erf form) at the Div. The constants must be
// sqrt 2, 1 and 0.5 (one-element float constants whose values the loader
// kept): a Div by 2 or an Add of 2 is another function and runs as written.
// A GELU right after a Gemm/MatMul joins that group instead (matmul_group.cc).
#include "analyzer/fusion/pattern.hpp"

#include <cmath>

namespace modelstat::fusion {

std::optional<GeluMatch> match_gelu_written_out(const PatternContext& ctx, int i) {
  const Graph& g = ctx.g;
  const Node& div = g.nodes[size_t(i)];
  if (!is_op(div, "Div", 2)) return std::nullopt;
  GeluMatch m;
  m.input = div.inputs[0];
  if (m.input < 0 || !is_float(g, m.input) || float_scalar_equal(g, div.inputs[1], std::sqrt(2.0)) < 0)
    return std::nullopt;
  const int erf = only_reader(ctx, div.outputs[0]);
  if (erf < 0 || !is_op(g.nodes[size_t(erf)], "Erf", 1)) return std::nullopt;
  const int erf_out = g.nodes[size_t(erf)].outputs[0];
  const int add = only_reader(ctx, erf_out);
  if (add < 0 || !is_op(g.nodes[size_t(add)], "Add", 2)) return std::nullopt;
  if (float_scalar_equal(g, other_operand(g.nodes[size_t(add)], erf_out), 1.0) < 0) return std::nullopt;
  const int add_out = g.nodes[size_t(add)].outputs[0];
  const int mul1 = only_reader(ctx, add_out);
  if (mul1 < 0 || !is_op(g.nodes[size_t(mul1)], "Mul", 2)) return std::nullopt;
  const int f1 = other_operand(g.nodes[size_t(mul1)], add_out);
  const int mul1_out = g.nodes[size_t(mul1)].outputs[0];
  const int mul2 = only_reader(ctx, mul1_out);
  if (f1 < 0 || mul2 < 0 || !is_op(g.nodes[size_t(mul2)], "Mul", 2)) return std::nullopt;
  const int f2 = other_operand(g.nodes[size_t(mul2)], mul1_out);
  // One factor is x, the other 0.5, in either order.
  const bool x_then_half = f1 == m.input && float_scalar_equal(g, f2, 0.5) >= 0;
  const bool half_then_x = f2 == m.input && float_scalar_equal(g, f1, 0.5) >= 0;
  if (!x_then_half && !half_then_x) return std::nullopt;
  m.output = g.nodes[size_t(mul2)].outputs[0];
  if (!is_float(g, m.output)) return std::nullopt;
  m.members = {erf, add, mul1, mul2};
  return m;
}

std::optional<FusedGroup> match_gelu(const PatternContext& ctx, int node) {
  const std::optional<GeluMatch> m = match_gelu_written_out(ctx, node);
  if (!m) return std::nullopt;
  FusedGroup group;
  group.head = node;
  group.members = m->members;
  group.inputs = {m->input};
  group.output = m->output;
  group.spec = RewriteSpec{"Gelu", "", 20, {}};
  return group;
}

}  // namespace modelstat::fusion

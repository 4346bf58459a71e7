// Pattern "hard_swish": HardSwish written out as exporters write it before
// opset 14 (torchvision's MobileNetV3 at opset 13),
//   Mul(x, HardSigmoid(x; alpha = 1/6, beta = 0.5))   (Mul's operands in either order),
// runs as the HardSwish op (opset 14) at the HardSigmoid: one pass over x
// instead of two. Other alpha / beta are another function and run as written.
#include "analyzer/fusion/pattern.hpp"

#include <cmath>

namespace modelstat::fusion {

std::optional<FusedGroup> match_hard_swish(const PatternContext& ctx, int i) {
  const Graph& g = ctx.g;
  const Node& hs = g.nodes[size_t(i)];
  if (!is_op(hs, "HardSigmoid", 1)) return std::nullopt;
  if (std::abs(hs.attr_float("alpha", 0.2) - 1.0 / 6.0) > 1e-6 || std::abs(hs.attr_float("beta", 0.5) - 0.5) > 1e-6)
    return std::nullopt;
  const int x = hs.inputs[0];
  const int mul = only_reader(ctx, hs.outputs[0]);
  if (x < 0 || !is_float(g, x) || mul < 0 || !is_op(g.nodes[size_t(mul)], "Mul", 2)) return std::nullopt;
  if (other_operand(g.nodes[size_t(mul)], hs.outputs[0]) != x) return std::nullopt;
  FusedGroup group;
  group.head = i;
  group.members = {mul};
  group.inputs = {x};
  group.output = g.nodes[size_t(mul)].outputs[0];
  group.spec = RewriteSpec{"HardSwish", "", 14, {}};
  return group;
}

}  // namespace modelstat::fusion

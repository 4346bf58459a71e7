// Pattern "layer_norm": LayerNormalization written out as exporters write it
// before opset 17 (PyTorch's F.layer_norm over the last dim),
//   m = ReduceMean(x, axes=[-1]); d = Sub(x, m);
//   y = Div(d, Sqrt(Add(ReduceMean(Pow(d, 2) | Mul(d, d), axes=[-1]), eps)))
//   [-> Mul(y, scale[C]) [-> Add(., bias[C])]]
// runs as the LayerNormalization op over the last axis at the first
// ReduceMean. The exponent must be 2 and eps a positive finite constant
// whose value the loader kept; else it is another function and runs as written.
#include "analyzer/fusion/pattern.hpp"

#include <algorithm>
#include <cmath>

namespace modelstat::fusion {

namespace {

// A ReduceMean of t over its last axis only, keeping dims (axes as an attribute: opset < 18).
bool mean_over_last_axis(const Graph& g, const Node& n, int t) {
  if (!is_op(n, "ReduceMean", 1) || n.inputs[0] != t || n.attr_int("keepdims", 1) == 0) return false;
  const std::vector<int64_t> axes = n.attr_ints("axes");
  if (axes.size() != 1) return false;
  const Shape& s = g.tensors[size_t(t)].shape;
  return axes[0] == -1 || (s.rank_known && !s.dims.empty() && axes[0] == int64_t(s.dims.size()) - 1);
}

// A constant of exactly [c] float values (LayerNorm's scale and bias), or -1.
int vector_constant(const Graph& g, int t, int64_t c) {
  const int k = t < 0 ? -1 : constant_source(g, t);
  if (k < 0 || g.tensors[size_t(k)].dtype != DType::Float) return -1;
  const Shape& s = g.tensors[size_t(k)].shape;
  return s.fully_known() && s.dims.size() == 1 && s.dims[0].value == c ? k : -1;
}

}  // namespace

std::optional<FusedGroup> match_layer_norm(const PatternContext& ctx, int i) {
  const Graph& g = ctx.g;
  const Node& mean = g.nodes[size_t(i)];
  if (mean.inputs.empty()) return std::nullopt;
  const int x = mean.inputs[0];
  if (x < 0 || !is_float(g, x) || !mean_over_last_axis(g, mean, x)) return std::nullopt;
  const Shape& xs = g.tensors[size_t(x)].shape;
  if (!xs.rank_known || xs.dims.empty() || !xs.dims.back().known() || xs.dims.back().value < 1) return std::nullopt;
  const int64_t channels = xs.dims.back().value;
  // Sub(x, mean)
  const int sub = only_reader(ctx, mean.outputs[0]);
  if (sub < 0 || !is_op(g.nodes[size_t(sub)], "Sub", 2) || g.nodes[size_t(sub)].inputs[0] != x ||
      g.nodes[size_t(sub)].inputs[1] != mean.outputs[0])
    return std::nullopt;
  const int d = g.nodes[size_t(sub)].outputs[0];
  // d is read by the square (Pow(d, 2) or Mul(d, d)) and by the Div (a node
  // reading it twice is listed twice among its consumers).
  if (d < 0 || ctx.graph_output[size_t(d)]) return std::nullopt;
  std::vector<int> readers = g.tensors[size_t(d)].consumers.to_vector();
  std::sort(readers.begin(), readers.end());
  readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
  if (readers.size() != 2) return std::nullopt;
  int square = -1, div = -1;
  for (int r : readers) {
    const Node& n = g.nodes[size_t(r)];
    if (is_op(n, "Pow", 2) && n.inputs[0] == d && float_scalar_equal(g, n.inputs[1], 2.0) >= 0) square = r;
    else if (is_op(n, "Mul", 2) && n.inputs[0] == d && n.inputs[1] == d) square = r;
    else if (is_op(n, "Div", 2) && n.inputs[0] == d) div = r;
  }
  if (square < 0 || div < 0) return std::nullopt;
  const int var = only_reader(ctx, g.nodes[size_t(square)].outputs[0]);
  if (var < 0 || !mean_over_last_axis(g, g.nodes[size_t(var)], g.nodes[size_t(square)].outputs[0])) return std::nullopt;
  const int add = only_reader(ctx, g.nodes[size_t(var)].outputs[0]);
  if (add < 0 || !is_op(g.nodes[size_t(add)], "Add", 2)) return std::nullopt;
  const int eps_tensor = other_operand(g.nodes[size_t(add)], g.nodes[size_t(var)].outputs[0]);
  if (eps_tensor < 0 || !is_float(g, constant_source(g, eps_tensor))) return std::nullopt;
  const std::optional<double> eps = constant_scalar(g, eps_tensor);
  if (!eps || !(*eps > 0) || !std::isfinite(*eps)) return std::nullopt;
  const int sqrt = only_reader(ctx, g.nodes[size_t(add)].outputs[0]);
  if (sqrt < 0 || !is_op(g.nodes[size_t(sqrt)], "Sqrt", 1)) return std::nullopt;
  if (only_reader(ctx, g.nodes[size_t(sqrt)].outputs[0]) != div ||
      g.nodes[size_t(div)].inputs[1] != g.nodes[size_t(sqrt)].outputs[0])
    return std::nullopt;
  FusedGroup group;
  group.head = i;
  group.members = {sub, square, var, add, sqrt, div};
  int y = g.nodes[size_t(div)].outputs[0], scale = -1, bias = -1;
  // Then Mul by the scale and Add of the bias, each optional ([C] constants, either operand order).
  const int mul = only_reader(ctx, y);
  if (mul >= 0 && is_op(g.nodes[size_t(mul)], "Mul", 2)) {
    scale = vector_constant(g, other_operand(g.nodes[size_t(mul)], y), channels);
    if (scale >= 0) {
      group.members.push_back(mul);
      y = g.nodes[size_t(mul)].outputs[0];
    }
  }
  const int shift = scale >= 0 ? only_reader(ctx, y) : -1;
  if (shift >= 0 && is_op(g.nodes[size_t(shift)], "Add", 2)) {
    bias = vector_constant(g, other_operand(g.nodes[size_t(shift)], y), channels);
    if (bias >= 0) {
      group.members.push_back(shift);
      y = g.nodes[size_t(shift)].outputs[0];
    }
  }
  if (!is_float(g, y)) return std::nullopt;
  group.inputs = {x, scale, bias};
  group.output = y;
  group.spec = RewriteSpec{"LayerNormalization", "", 17, {{"axis", int64_t(-1)}, {"epsilon", *eps}}};
  return group;
}

}  // namespace modelstat::fusion

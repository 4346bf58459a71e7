// Matching helpers the fusion patterns share (pattern.hpp), and the post-op
// chain of the Conv and MatMul groups.
#include <algorithm>
#include <cmath>
#include <limits>

#include "analyzer/fusion/pattern.hpp"

namespace modelstat::fusion {

bool is_float(const Graph& g, int t) { return t >= 0 && g.tensors[size_t(t)].dtype == DType::Float; }

bool is_group_float(const Graph& g, int t) {
  if (t < 0) return false;
  const DType d = g.tensors[size_t(t)].dtype;
  return d == DType::Float || d == DType::Float16;
}

bool same_group_float(const Graph& g, int a, int b) {
  return is_group_float(g, a) && b >= 0 && g.tensors[size_t(a)].dtype == g.tensors[size_t(b)].dtype;
}

bool is_op(const Node& n, const char* type, size_t inputs) {
  return n.domain.empty() && n.op_type == type && n.inputs.size() == inputs && n.outputs.size() == 1;
}

int only_reader(const PatternContext& ctx, int t) {
  if (t < 0 || ctx.graph_output[size_t(t)] || ctx.g.tensors[size_t(t)].consumers.size() != 1) return -1;
  return ctx.g.tensors[size_t(t)].consumers[0];
}

int other_operand(const Node& n, int t) {
  if (n.inputs.size() != 2) return -1;
  if (n.inputs[0] == t && n.inputs[1] != t) return n.inputs[1];
  if (n.inputs[1] == t && n.inputs[0] != t) return n.inputs[0];
  return -1;
}

bool constant_or_absent(const Graph& g, const Node& n, size_t k) {
  return k >= n.inputs.size() || n.inputs[k] < 0 || constant_source(g, n.inputs[k]) >= 0;
}

int float_scalar_equal(const Graph& g, int t, double expected) {
  const int c = t < 0 ? -1 : constant_source(g, t);
  if (c < 0 || g.tensors[size_t(c)].dtype != DType::Float) return -1;
  const std::optional<double> v = constant_scalar(g, c);
  return v && std::abs(*v - expected) <= 1e-6 * std::abs(expected) ? c : -1;
}

int bias_constant(const Graph& g, int t, int64_t n, size_t max_rank) {
  const int c = t < 0 ? -1 : constant_source(g, t);
  if (c < 0 || g.tensors[size_t(c)].dtype != DType::Float) return -1;
  const Shape& s = g.tensors[size_t(c)].shape;
  if (!s.fully_known() || s.dims.empty() || s.dims.size() > max_rank || s.dims.back().value != n) return -1;
  for (size_t d = 0; d + 1 < s.dims.size(); ++d)
    if (s.dims[d].value != 1) return -1;
  return c;
}

bool same_known_shape(const Shape& a, const Shape& b) {
  if (!a.fully_known() || !b.fully_known() || a.dims.size() != b.dims.size()) return false;
  for (size_t i = 0; i < a.dims.size(); ++i)
    if (a.dims[i].value != b.dims[i].value) return false;
  return true;
}

namespace {

// The elementwise op `n`, reading `t` as its input 0, as a post-op with its
// constants resolved; nullopt when it is none (or a bound is not a constant
// whose value is at hand).
std::optional<FusedPostOp> eltwise_post_op(const PatternContext& ctx, const Node& n, int t) {
  using K = FusedPostOp::Kind;
  if (!n.domain.empty() || n.inputs.empty() || n.inputs[0] != t || n.outputs.size() != 1) return std::nullopt;
  const std::string& type = n.op_type;
  if (type == "Relu") return FusedPostOp{K::Relu};
  if (type == "LeakyRelu") return FusedPostOp{K::LeakyRelu, float(n.attr_float("alpha", 0.01))};
  if (type == "Sigmoid") return FusedPostOp{K::Sigmoid};
  if (type == "Tanh") return FusedPostOp{K::Tanh};
  if (type == "HardSwish") return FusedPostOp{K::HardSwish};
  if (type == "HardSigmoid")
    return FusedPostOp{K::HardSigmoid, float(n.attr_float("alpha", 0.2)), float(n.attr_float("beta", 0.5))};
  if (type != "Clip") return std::nullopt;
  FusedPostOp op{K::Clip, -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity()};
  if (ctx.opset < 11) {
    op.alpha = float(n.attr_float("min", op.alpha));
    op.beta = float(n.attr_float("max", op.beta));
    return op;
  }
  // Bounds as inputs (opset >= 11): constants whose values the plan reads.
  for (size_t k = 1; k <= 2; ++k) {
    if (k >= n.inputs.size() || n.inputs[k] < 0) continue;
    const std::optional<double> v = constant_scalar(ctx.g, n.inputs[k]);
    if (!v) return std::nullopt;
    (k == 1 ? op.alpha : op.beta) = float(*v);
  }
  return op;
}

}  // namespace

std::optional<PostOpMatch> next_post_op(const PatternContext& ctx, int t, int head, bool has_residual, bool gelu) {
  const Graph& g = ctx.g;
  if (ctx.graph_output[size_t(t)]) return std::nullopt;
  const auto& readers = g.tensors[size_t(t)].consumers;
  PostOpMatch m;
  if (readers.size() == 1) {
    const int r = readers[0];
    const Node& node = g.nodes[size_t(r)];
    if (ctx.taken(r)) return std::nullopt;
    if (auto op = eltwise_post_op(ctx, node, t)) {
      m.op = *op;
    } else if (gelu && is_op(node, "Gelu", 1)) {
      const std::string approx = node.attr_string("approximate", "none");
      if (approx != "none" && approx != "tanh") return std::nullopt;
      m.op = {approx == "tanh" ? FusedPostOp::Kind::GeluTanh : FusedPostOp::Kind::Gelu};
    } else if (!has_residual && is_op(node, "Add", 2) && node.inputs[0] != node.inputs[1]) {
      const int other = node.inputs[0] == t ? node.inputs[1] : node.inputs[0];
      // A residual computed before the head runs, of the output's shape (no broadcast).
      if (other < 0 || !same_group_float(g, other, t) || g.tensors[size_t(other)].is_constant() ||
          g.tensors[size_t(other)].producer >= head ||
          !same_known_shape(g.tensors[size_t(other)].shape, g.tensors[size_t(t)].shape))
        return std::nullopt;
      m.op = {FusedPostOp::Kind::AddResidual};
      m.op.residual = other;
    } else {
      return std::nullopt;
    }
    m.joined = {r};
    m.next = node.outputs[0];
    return m;
  }
  if (readers.size() != 2) return std::nullopt;
  // SiLU written out: Mul(t, Sigmoid(t)).
  for (int k = 0; k < 2; ++k) {
    const int sig_node = readers[size_t(k)], mul_node = readers[size_t(1 - k)];
    const Node& sig = g.nodes[size_t(sig_node)];
    const Node& mul = g.nodes[size_t(mul_node)];
    if (!is_op(sig, "Sigmoid", 1) || sig.inputs[0] != t || ctx.taken(sig_node) || ctx.taken(mul_node)) continue;
    const int s = sig.outputs[0];
    if (s < 0 || only_reader(ctx, s) != mul_node || !is_op(mul, "Mul", 2)) continue;
    if (!((mul.inputs[0] == t && mul.inputs[1] == s) || (mul.inputs[0] == s && mul.inputs[1] == t))) continue;
    m.op = {FusedPostOp::Kind::Swish, 1.f};
    m.joined = {sig_node, mul_node};
    m.next = mul.outputs[0];
    return m;
  }
  // GELU written out: t read by its Div and by one of its Muls.
  for (int k = 0; gelu && k < 2; ++k) {
    const int div = readers[size_t(k)];
    if (ctx.taken(div)) continue;
    const std::optional<GeluMatch> ge = match_gelu_written_out(ctx, div);
    if (!ge || ge->input != t) continue;
    if (std::find(ge->members.begin(), ge->members.end(), readers[size_t(1 - k)]) == ge->members.end()) continue;
    if (std::any_of(ge->members.begin(), ge->members.end(), [&](int n) { return ctx.taken(n); })) continue;
    m.op = {FusedPostOp::Kind::Gelu};
    m.joined = {div};
    m.joined.insert(m.joined.end(), ge->members.begin(), ge->members.end());
    m.next = ge->output;
    return m;
  }
  return std::nullopt;
}

bool take_post_op(const PatternContext& ctx, int head, bool gelu, int& t, int& residual,
                  std::vector<FusedPostOp>& post_ops, std::vector<int>& members) {
  const std::optional<PostOpMatch> next = next_post_op(ctx, t, head, residual >= 0, gelu);
  if (!next || !same_group_float(ctx.g, next->next, t)) return false;
  if (next->op.kind == FusedPostOp::Kind::AddResidual) residual = next->op.residual;
  post_ops.push_back(next->op);
  members.insert(members.end(), next->joined.begin(), next->joined.end());
  t = next->next;
  return true;
}

}  // namespace modelstat::fusion

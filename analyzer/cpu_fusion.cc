// Conv group plan (cpu_fusion.hpp): which nodes run as one oneDNN convolution.
#include "analyzer/cpu_fusion.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace modelstat {

int constant_source(const Graph& g, int t) {
  for (int depth = 0; t >= 0 && depth < 64; ++depth) {
    const Tensor& tensor = g.tensors[size_t(t)];
    if (tensor.is_constant()) return t;
    if (tensor.producer < 0) return -1;
    const Node& node = g.nodes[size_t(tensor.producer)];
    if (!node.domain.empty() || node.op_type != "Identity" || node.inputs.size() != 1) return -1;
    t = node.inputs[0];
  }
  return -1;
}

namespace {

bool same_known_shape(const Shape& a, const Shape& b) {
  if (!a.fully_known() || !b.fully_known() || a.dims.size() != b.dims.size()) return false;
  for (size_t i = 0; i < a.dims.size(); ++i)
    if (a.dims[i].value != b.dims[i].value) return false;
  return true;
}

bool is_float(const Graph& g, int t) { return t >= 0 && g.tensors[size_t(t)].dtype == DType::Float; }
bool constant_or_absent(const Graph& g, const Node& n, size_t k) {
  return k >= n.inputs.size() || n.inputs[k] < 0 || constant_source(g, n.inputs[k]) >= 0;
}

// The elementwise op `n`, reading `t` as its input 0, as a post-op; false when it is none.
bool eltwise_post_op(const Graph& g, const Node& n, int t, int64_t opset, FusedPostOp& op) {
  using K = FusedPostOp::Kind;
  if (!n.domain.empty() || n.inputs.empty() || n.inputs[0] != t || n.outputs.size() != 1) return false;
  const std::string& type = n.op_type;
  if (type == "Relu") {
    op = {K::Relu};
  } else if (type == "LeakyRelu") {
    op = {K::LeakyRelu, float(n.attr_float("alpha", 0.01))};
  } else if (type == "Sigmoid") {
    op = {K::Sigmoid};
  } else if (type == "Tanh") {
    op = {K::Tanh};
  } else if (type == "HardSwish") {
    op = {K::HardSwish};
  } else if (type == "HardSigmoid") {
    op = {K::HardSigmoid, float(n.attr_float("alpha", 0.2)), float(n.attr_float("beta", 0.5))};
  } else if (type == "Clip") {
    op = {K::Clip, -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity()};
    if (opset < 11) {
      op.alpha = float(n.attr_float("min", op.alpha));
      op.beta = float(n.attr_float("max", op.beta));
    } else {
      if (!constant_or_absent(g, n, 1) || !constant_or_absent(g, n, 2)) return false;
      op.clip_min = n.inputs.size() > 1 ? n.inputs[1] : -1;
      op.clip_max = n.inputs.size() > 2 ? n.inputs[2] : -1;
    }
  } else {
    return false;
  }
  return true;
}

// A BatchNormalization in inference form on `t` with constant statistics.
bool foldable_batch_norm(const Graph& g, const Node& n, int t) {
  if (!n.domain.empty() || n.op_type != "BatchNormalization" || n.inputs.size() < 5 || n.inputs[0] != t) return false;
  if (n.attr_int("training_mode", 0) != 0) return false;
  for (size_t k = 1; k < 5; ++k)
    if (n.inputs[k] < 0 || constant_source(g, n.inputs[k]) < 0) return false;
  for (size_t o = 1; o < n.outputs.size(); ++o)
    if (n.outputs[o] >= 0) return false;  // running statistics asked for: training form
  return true;
}

// The post-op that reads tensor t next (t is no graph output), for a group
// whose head is node `head`: an activation, SiLU written out, a residual Add
// (when the group has none yet) and, where `gelus` is given, GELU (the Gelu
// op, or a GeluGroup reading t: its index into *gelus in *gelu). False when
// none; else `joined` holds the nodes it absorbs and `next` their output.
bool next_post_op(const Graph& g, const std::vector<bool>& graph_output, int64_t opset, int t, int head,
                  bool has_residual, const std::vector<GeluGroup>* gelus, FusedPostOp& op, std::vector<int>& joined,
                  int& next, int* gelu) {
  const auto& readers = g.tensors[size_t(t)].consumers;
  next = -1;
  if (readers.size() == 1) {
    const int r = readers[0];
    const Node& node = g.nodes[size_t(r)];
    if (eltwise_post_op(g, node, t, opset, op)) {
      joined = {r};
      next = node.outputs[0];
    } else if (gelus && node.domain.empty() && node.op_type == "Gelu" && node.inputs.size() == 1 &&
               node.outputs.size() == 1) {
      const std::string approx = node.attr_string("approximate", "none");
      if (approx != "none" && approx != "tanh") return false;
      op = {approx == "tanh" ? FusedPostOp::Kind::GeluTanh : FusedPostOp::Kind::Gelu};
      joined = {r};
      next = node.outputs[0];
    } else if (!has_residual && node.domain.empty() && node.op_type == "Add" && node.inputs.size() == 2 &&
               node.outputs.size() == 1 && node.inputs[0] != node.inputs[1]) {
      const int other = node.inputs[0] == t ? node.inputs[1] : node.inputs[0];
      // A residual computed before the head runs, of the output's shape (no broadcast).
      if (other >= 0 && is_float(g, other) && !g.tensors[size_t(other)].is_constant() &&
          g.tensors[size_t(other)].producer < head &&
          same_known_shape(g.tensors[size_t(other)].shape, g.tensors[size_t(t)].shape)) {
        op = {FusedPostOp::Kind::AddResidual};
        op.residual = other;
        joined = {r};
        next = node.outputs[0];
      }
    }
  } else if (readers.size() == 2) {
    // SiLU written out: Mul(t, Sigmoid(t)).
    for (int k = 0; k < 2 && next < 0; ++k) {
      const Node& sig = g.nodes[size_t(readers[size_t(k)])];
      const Node& mul = g.nodes[size_t(readers[size_t(1 - k)])];
      if (!sig.domain.empty() || sig.op_type != "Sigmoid" || sig.outputs.size() != 1 || sig.inputs[0] != t) continue;
      const int s = sig.outputs[0];
      if (s < 0 || graph_output[size_t(s)] || g.tensors[size_t(s)].consumers.size() != 1 ||
          g.tensors[size_t(s)].consumers[0] != readers[size_t(1 - k)])
        continue;
      if (!mul.domain.empty() || mul.op_type != "Mul" || mul.inputs.size() != 2 || mul.outputs.size() != 1) continue;
      if (!((mul.inputs[0] == t && mul.inputs[1] == s) || (mul.inputs[0] == s && mul.inputs[1] == t))) continue;
      op = {FusedPostOp::Kind::Swish, 1.f};
      joined = {readers[size_t(k)], readers[size_t(1 - k)]};
      next = mul.outputs[0];
    }
    // GELU written out (a GeluGroup): t is read by its Div and by one of its Muls.
    for (size_t k = 0; gelus && next < 0 && k < gelus->size(); ++k) {
      const GeluGroup& ge = (*gelus)[k];
      if (ge.input != t || ge.head < 0) continue;
      const bool div_reads = readers[0] == ge.head || readers[1] == ge.head;
      const int mul_reader = readers[0] == ge.head ? readers[1] : readers[0];
      if (!div_reads || std::find(ge.members.begin(), ge.members.end(), mul_reader) == ge.members.end()) continue;
      op = {FusedPostOp::Kind::Gelu};
      op.gelu_divisor = ge.divisor;
      op.gelu_one = ge.one;
      op.gelu_half = ge.half;
      joined = {ge.head};
      joined.insert(joined.end(), ge.members.begin(), ge.members.end());
      next = ge.output;
      if (gelu) *gelu = int(k);
    }
  }
  return next >= 0;
}

}  // namespace

namespace {
// The GELU groups, after the Conv groups (whose members they leave alone).
void plan_gelus(const Graph& g, const std::vector<bool>& graph_output, CpuFusionPlan& plan);
// The MatMul groups, after the GELU groups (which they may take in).
void plan_matmuls(const Graph& g, const Model& model, const std::vector<bool>& graph_output, CpuFusionPlan& plan);
// LayerNormalization written out, last.
void plan_layer_norms(const Graph& g, const std::vector<bool>& graph_output, CpuFusionPlan& plan);
}  // namespace

CpuFusionPlan plan_cpu_fusion(const Graph& g, const Model& model) {
  CpuFusionPlan plan;
  const size_t n = g.nodes.size();
  plan.group_of.assign(n, -1);
  plan.absorbed.assign(n, false);
  std::vector<bool> graph_output(g.tensors.size(), false);
  for (int t : g.outputs)
    if (t >= 0) graph_output[size_t(t)] = true;
  const int64_t opset = model.opset_version("");
  for (size_t i = 0; i < n; ++i) {
    const Node& conv = g.nodes[i];
    if (!conv.domain.empty() || conv.op_type != "Conv" || plan.group_of[i] >= 0) continue;
    if (conv.inputs.size() < 2 || conv.outputs.size() != 1 || conv.outputs[0] < 0) continue;
    const int x = conv.inputs[0], w = conv.inputs[1];
    if (x < 0 || w < 0 || !is_float(g, x) || !is_float(g, conv.outputs[0])) continue;
    if (constant_source(g, w) < 0) continue;
    const Tensor& weight = g.tensors[size_t(constant_source(g, w))];
    if ( !weight.shape.fully_known() || weight.shape.dims.size() != 4) continue;
    if (!constant_or_absent(g, conv, 2)) continue;

    ConvGroup group;
    group.conv = int(i);
    int t = conv.outputs[0];
    bool has_residual = false;
    for (;;) {
      if (graph_output[size_t(t)]) break;
      const auto& readers = g.tensors[size_t(t)].consumers;
      if (group.post_ops.empty() && group.batch_norm < 0 && readers.size() == 1 &&
          foldable_batch_norm(g, g.nodes[size_t(readers[0])], t)) {
        group.batch_norm = readers[0];
        group.members.push_back(readers[0]);
        t = g.nodes[size_t(readers[0])].outputs[0];
        continue;
      }
      FusedPostOp op;
      int next = -1;
      std::vector<int> joined;
      next_post_op(g, graph_output, opset, t, int(i), has_residual, nullptr, op, joined, next, nullptr);
      if (next < 0 || !is_float(g, next)) break;
      has_residual = has_residual || op.kind == FusedPostOp::Kind::AddResidual;
      group.post_ops.push_back(op);
      for (int m : joined) group.members.push_back(m);
      t = next;
    }
    if (group.members.empty()) {
      // A lone Conv still runs on the prepacked kernel: a group of one.
    }
    group.output = t;
    const int id = int(plan.groups.size());
    plan.group_of[i] = id;
    for (int m : group.members) {
      plan.group_of[size_t(m)] = id;
      plan.absorbed[size_t(m)] = true;
      ++plan.absorbed_count;
    }
    std::sort(group.members.begin(), group.members.end());
    plan.groups.push_back(std::move(group));
  }
  plan_gelus(g, graph_output, plan);
  plan_matmuls(g, model, graph_output, plan);
  plan_layer_norms(g, graph_output, plan);
  return plan;
}

namespace {

// The one reader of tensor t (not a graph output), or -1.
int only_reader(const Graph& g, const std::vector<bool>& graph_output, int t) {
  if (t < 0 || graph_output[size_t(t)] || g.tensors[size_t(t)].consumers.size() != 1) return -1;
  return g.tensors[size_t(t)].consumers[0];
}

bool is_op(const Node& n, const char* type, size_t inputs) {
  return n.domain.empty() && n.op_type == type && n.inputs.size() == inputs && n.outputs.size() == 1;
}

// A one-element float constant (directly or through Identity nodes), or -1.
int scalar_constant(const Graph& g, int t) {
  const int c = constant_source(g, t);
  if (c < 0 || g.tensors[size_t(c)].dtype != DType::Float) return -1;
  return g.tensors[size_t(c)].shape.element_count().value_or(0) == 1 ? c : -1;
}

// The operand of binary node n other than t, or -1 when n does not read t once.
int other_operand(const Node& n, int t) {
  if (n.inputs[0] == t && n.inputs[1] != t) return n.inputs[1];
  if (n.inputs[1] == t && n.inputs[0] != t) return n.inputs[0];
  return -1;
}

void plan_gelus(const Graph& g, const std::vector<bool>& graph_output, CpuFusionPlan& plan) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& div = g.nodes[i];
    if (!is_op(div, "Div", 2) || plan.absorbed[i] || plan.group_of[i] >= 0) continue;
    GeluGroup gelu;
    gelu.head = int(i);
    gelu.input = div.inputs[0];
    gelu.divisor = scalar_constant(g, div.inputs[1]);
    if (gelu.input < 0 || !is_float(g, gelu.input) || gelu.divisor < 0) continue;
    const int erf = only_reader(g, graph_output, div.outputs[0]);
    if (erf < 0 || !is_op(g.nodes[size_t(erf)], "Erf", 1)) continue;
    const int add = only_reader(g, graph_output, g.nodes[size_t(erf)].outputs[0]);
    if (add < 0 || !is_op(g.nodes[size_t(add)], "Add", 2)) continue;
    gelu.one = scalar_constant(g, other_operand(g.nodes[size_t(add)], g.nodes[size_t(erf)].outputs[0]));
    if (gelu.one < 0) continue;
    const int mul1 = only_reader(g, graph_output, g.nodes[size_t(add)].outputs[0]);
    if (mul1 < 0 || !is_op(g.nodes[size_t(mul1)], "Mul", 2)) continue;
    const int f1 = other_operand(g.nodes[size_t(mul1)], g.nodes[size_t(add)].outputs[0]);
    const int mul2 = only_reader(g, graph_output, g.nodes[size_t(mul1)].outputs[0]);
    if (f1 < 0 || mul2 < 0 || !is_op(g.nodes[size_t(mul2)], "Mul", 2)) continue;
    const int f2 = other_operand(g.nodes[size_t(mul2)], g.nodes[size_t(mul1)].outputs[0]);
    if (f2 < 0) continue;
    // One factor is x, the other 0.5, in either order.
    if (f1 == gelu.input && scalar_constant(g, f2) >= 0) gelu.half = scalar_constant(g, f2);
    else if (f2 == gelu.input && scalar_constant(g, f1) >= 0) gelu.half = scalar_constant(g, f1);
    else continue;
    gelu.output = g.nodes[size_t(mul2)].outputs[0];
    if (!is_float(g, gelu.output)) continue;
    gelu.members = {erf, add, mul1, mul2};
    bool taken = false;
    for (int m : gelu.members) taken = taken || plan.absorbed[size_t(m)] || plan.group_of[size_t(m)] >= 0;
    if (taken) continue;
    for (int m : gelu.members) {
      plan.absorbed[size_t(m)] = true;
      ++plan.absorbed_count;
    }
    plan.gelus.push_back(std::move(gelu));
  }
}


// A constant of N float values shaped [N] or [1, .., 1, N] with rank <= max_rank, or -1.
int bias_constant(const Graph& g, int t, int64_t n, size_t max_rank) {
  const int c = t < 0 ? -1 : constant_source(g, t);
  if (c < 0 || g.tensors[size_t(c)].dtype != DType::Float) return -1;
  const Shape& s = g.tensors[size_t(c)].shape;
  if (!s.fully_known() || s.dims.empty() || s.dims.size() > max_rank || s.dims.back().value != n) return -1;
  for (size_t d = 0; d + 1 < s.dims.size(); ++d)
    if (s.dims[d].value != 1) return -1;
  return c;
}

void plan_matmuls(const Graph& g, const Model& model, const std::vector<bool>& graph_output, CpuFusionPlan& plan) {
  const int64_t opset = model.opset_version("");
  std::vector<bool> gelu_taken(plan.gelus.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& node = g.nodes[i];
    const bool gemm = node.op_type == "Gemm";
    if (!node.domain.empty() || (!gemm && node.op_type != "MatMul") || plan.absorbed[i] || plan.group_of[i] >= 0)
      continue;
    if (node.inputs.size() < 2 || node.outputs.size() != 1 || node.outputs[0] < 0) continue;
    const int a = node.inputs[0], y = node.outputs[0];
    if (a < 0 || !is_float(g, a) || !is_float(g, y)) continue;
    const int w = node.inputs[1] < 0 ? -1 : constant_source(g, node.inputs[1]);
    if (w < 0 || g.tensors[size_t(w)].dtype != DType::Float) continue;
    const Shape& ws = g.tensors[size_t(w)].shape;
    if (!ws.fully_known() || ws.dims.size() != 2) continue;
    const Shape& as = g.tensors[size_t(a)].shape;
    if (as.rank_known && as.dims.size() < 2) continue;
    MatMulGroup group;
    group.head = int(i);
    group.weight = w;
    int64_t n = ws.dims[1].value;
    if (gemm) {
      if (opset < 7 || node.attr_int("transA", 0) != 0 || (as.rank_known && as.dims.size() != 2)) continue;
      group.transposed = node.attr_int("transB", 0) != 0;
      n = ws.dims[group.transposed ? 0 : 1].value;
      if (node.inputs.size() > 2 && node.inputs[2] >= 0 && node.attr_float("beta", 1.0) != 0.0) {
        group.bias = bias_constant(g, node.inputs[2], n, 2);
        if (group.bias < 0) continue;
      }
    }
    int t = y;
    const Shape& ys = g.tensors[size_t(y)].shape;
    // Add of a constant bias: the MatMul's, or the Gemm's when it has no C.
    if (group.bias < 0 && !graph_output[size_t(t)] && g.tensors[size_t(t)].consumers.size() == 1 && ys.rank_known) {
      const int r = g.tensors[size_t(t)].consumers[0];
      const Node& add = g.nodes[size_t(r)];
      if (add.domain.empty() && add.op_type == "Add" && add.inputs.size() == 2 && add.outputs.size() == 1 &&
          add.inputs[0] != add.inputs[1] && is_float(g, add.outputs[0])) {
        const int other = add.inputs[0] == t ? add.inputs[1] : add.inputs[0];
        const int c = bias_constant(g, other, n, ys.dims.size());
        if (c >= 0) {
          group.bias = c;
          group.bias_add = r;
          group.bias_output = add.outputs[0];
          group.members.push_back(r);
          t = add.outputs[0];
        }
      }
    }
    bool has_residual = false;
    while (!graph_output[size_t(t)]) {
      FusedPostOp op;
      std::vector<int> joined;
      int next = -1, gelu = -1;
      if (!next_post_op(g, graph_output, opset, t, int(i), has_residual, &plan.gelus, op, joined, next, &gelu)) break;
      if (!is_float(g, next) || (gelu >= 0 && gelu_taken[size_t(gelu)])) break;
      bool taken = false;
      for (int m : joined) taken = taken || plan.group_of[size_t(m)] >= 0 || (plan.absorbed[size_t(m)] && gelu < 0);
      if (taken) break;
      if (gelu >= 0) gelu_taken[size_t(gelu)] = true;
      has_residual = has_residual || op.kind == FusedPostOp::Kind::AddResidual;
      group.post_ops.push_back(op);
      group.stage_members.push_back(joined);
      group.stage_outputs.push_back(next);
      group.members.insert(group.members.end(), joined.begin(), joined.end());
      t = next;
    }
    group.output = t;
    for (int m : group.members) {
      if (plan.absorbed[size_t(m)]) continue;  // a GeluGroup's member, counted already
      plan.absorbed[size_t(m)] = true;
      ++plan.absorbed_count;
    }
    std::sort(group.members.begin(), group.members.end());
    plan.matmuls.push_back(std::move(group));
  }
  // A GELU that joined a MatMul group is no group of its own; its Div is now absorbed too.
  std::vector<GeluGroup> left;
  for (size_t k = 0; k < plan.gelus.size(); ++k) {
    if (!gelu_taken[k]) {
      left.push_back(std::move(plan.gelus[k]));
      continue;
    }
  }
  plan.gelus = std::move(left);
}

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

void plan_layer_norms(const Graph& g, const std::vector<bool>& graph_output, CpuFusionPlan& plan) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& mean = g.nodes[i];
    if (plan.absorbed[i] || plan.group_of[i] >= 0 || mean.inputs.empty()) continue;
    LayerNormGroup ln;
    ln.head = int(i);
    ln.input = mean.inputs[0];
    if (ln.input < 0 || !is_float(g, ln.input) || !mean_over_last_axis(g, mean, ln.input)) continue;
    const Shape& xs = g.tensors[size_t(ln.input)].shape;
    if (!xs.rank_known || xs.dims.empty() || !xs.dims.back().known()) continue;
    ln.channels = xs.dims.back().value;
    if (ln.channels < 1) continue;
    // Sub(x, mean)
    const int sub = only_reader(g, graph_output, mean.outputs[0]);
    if (sub < 0 || !is_op(g.nodes[size_t(sub)], "Sub", 2) || g.nodes[size_t(sub)].inputs[0] != ln.input ||
        g.nodes[size_t(sub)].inputs[1] != mean.outputs[0])
      continue;
    const int d = g.nodes[size_t(sub)].outputs[0];
    // d is read by the square (Pow(d, 2) or Mul(d, d)) and by the Div (a
    // node reading it twice is listed twice among its consumers).
    if (d < 0 || graph_output[size_t(d)]) continue;
    std::vector<int> readers = g.tensors[size_t(d)].consumers;
    std::sort(readers.begin(), readers.end());
    readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
    if (readers.size() != 2) continue;
    int square = -1, div = -1;
    for (int r : readers) {
      const Node& n = g.nodes[size_t(r)];
      if (is_op(n, "Pow", 2) && n.inputs[0] == d && scalar_constant(g, n.inputs[1]) >= 0) {
        square = r;
        ln.exponent = scalar_constant(g, n.inputs[1]);
      } else if (is_op(n, "Mul", 2) && n.inputs[0] == d && n.inputs[1] == d) {
        square = r;
      } else if (is_op(n, "Div", 2) && n.inputs[0] == d) {
        div = r;
      }
    }
    if (square < 0 || div < 0) continue;
    const int var = only_reader(g, graph_output, g.nodes[size_t(square)].outputs[0]);
    if (var < 0 || !mean_over_last_axis(g, g.nodes[size_t(var)], g.nodes[size_t(square)].outputs[0])) continue;
    const int add = only_reader(g, graph_output, g.nodes[size_t(var)].outputs[0]);
    if (add < 0 || !is_op(g.nodes[size_t(add)], "Add", 2)) continue;
    ln.epsilon = scalar_constant(g, other_operand(g.nodes[size_t(add)], g.nodes[size_t(var)].outputs[0]));
    if (ln.epsilon < 0) continue;
    const int sqrt = only_reader(g, graph_output, g.nodes[size_t(add)].outputs[0]);
    if (sqrt < 0 || !is_op(g.nodes[size_t(sqrt)], "Sqrt", 1)) continue;
    if (only_reader(g, graph_output, g.nodes[size_t(sqrt)].outputs[0]) != div ||
        g.nodes[size_t(div)].inputs[1] != g.nodes[size_t(sqrt)].outputs[0])
      continue;
    ln.members = {sub, square, var, add, sqrt, div};
    ln.output = g.nodes[size_t(div)].outputs[0];
    // Then Mul by the scale and Add of the bias, each optional ([C] constants, either operand order).
    const int mul = only_reader(g, graph_output, ln.output);
    if (mul >= 0 && is_op(g.nodes[size_t(mul)], "Mul", 2)) {
      const int k = vector_constant(g, other_operand(g.nodes[size_t(mul)], ln.output), ln.channels);
      if (k >= 0) {
        ln.scale = k;
        ln.members.push_back(mul);
        ln.output = g.nodes[size_t(mul)].outputs[0];
      }
    }
    const int bias = ln.scale >= 0 ? only_reader(g, graph_output, ln.output) : -1;
    if (bias >= 0 && is_op(g.nodes[size_t(bias)], "Add", 2)) {
      const int k = vector_constant(g, other_operand(g.nodes[size_t(bias)], ln.output), ln.channels);
      if (k >= 0) {
        ln.bias = k;
        ln.members.push_back(bias);
        ln.output = g.nodes[size_t(bias)].outputs[0];
      }
    }
    if (!is_float(g, ln.output)) continue;
    bool taken = false;
    for (int m : ln.members) taken = taken || plan.absorbed[size_t(m)] || plan.group_of[size_t(m)] >= 0;
    if (taken) continue;
    std::sort(ln.members.begin(), ln.members.end());
    for (int m : ln.members) {
      plan.absorbed[size_t(m)] = true;
      ++plan.absorbed_count;
    }
    plan.layer_norms.push_back(std::move(ln));
  }
}
}  // namespace

std::string cpu_fusion_notice(int64_t groups, const std::map<std::string, int64_t>& absorbed_by_op) {
  if (groups == 0) return {};
  std::vector<std::pair<std::string, int64_t>> ops(absorbed_by_op.begin(), absorbed_by_op.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string list;
  for (const auto& [op, count] : ops) list += (list.empty() ? "" : ", ") + std::to_string(count) + " " + op;
  std::string text = std::to_string(groups) + " Conv ran as oneDNN fp32 convolutions with prepacked weights";
  if (!list.empty())
    text += " and fused post-ops (" + list + " absorbed: their rows take no time, their work is in the Conv's)";
  return text + "; --fusion off runs every node as written";
}

}  // namespace modelstat

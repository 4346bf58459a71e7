// QDQ fusion plan (qdq_fusion.hpp): which Conv / MatMul / Gemm nodes run on
// their quantized operands, and which DequantizeLinear nodes that absorbs.
#include "profiler/qdq_fusion.hpp"

#include <algorithm>
#include <optional>

namespace modelstat::profiler {

namespace {

bool is_8bit(DType t) { return t == DType::UInt8 || t == DType::Int8; }

std::optional<int64_t> elements(const Tensor& t) {
  if (!t.shape.rank_known) return std::nullopt;
  try {
    return t.shape.element_count();
  } catch (...) {
    return std::nullopt;
  }
}

// What one operand of a fusable node reads through its DequantizeLinear.
struct Operand {
  int dq = -1;  // the DequantizeLinear node
  int q = -1, scale = -1, zero_point = -1;
};

// The DequantizeLinear producing tensor `t` when the fused kernel can read
// its quantized input instead: 8-bit data, a constant float scale of one
// element, or (when `channels` > 0) one per index of `axis` of a constant
// weight of rank `weight_rank`; a constant zero point of the data's type.
std::optional<Operand> dequantized(const Graph& g, int t, bool weight, int64_t axis, int64_t weight_rank) {
  if (t < 0) return std::nullopt;
  const int p = g.tensors[size_t(t)].producer;
  if (p < 0) return std::nullopt;
  const Node& dq = g.nodes[size_t(p)];
  if (!dq.domain.empty() || dq.op_type != "DequantizeLinear" || dq.inputs.size() < 2) return std::nullopt;
  if (dq.attr_int("block_size", 0) != 0) return std::nullopt;  // opset 21 blocked quantization
  Operand o{p, dq.inputs[0], dq.inputs[1], dq.inputs.size() > 2 ? dq.inputs[2] : -1};
  if (o.q < 0 || o.scale < 0) return std::nullopt;
  const Tensor& q = g.tensors[size_t(o.q)];
  const Tensor& scale = g.tensors[size_t(o.scale)];
  if (!is_8bit(q.dtype) || scale.dtype != DType::Float || !scale.is_constant()) return std::nullopt;
  if (o.zero_point >= 0) {
    const Tensor& zp = g.tensors[size_t(o.zero_point)];
    if (zp.dtype != q.dtype || !zp.is_constant()) return std::nullopt;
  }
  const auto n = elements(scale);
  if (!n) return std::nullopt;
  if (!weight) return *n == 1 ? std::optional<Operand>(o) : std::nullopt;
  if (!q.is_constant() || !q.shape.rank_known || int64_t(q.shape.dims.size()) != weight_rank) return std::nullopt;
  if (*n == 1) return o;
  // Per channel: along the output channels, which the DequantizeLinear's axis must name.
  int64_t dq_axis = dq.attr_int("axis", 1);
  if (dq_axis < 0) dq_axis += weight_rank;
  const Dim& channels = q.shape.dims[size_t(axis)];
  if (dq_axis != axis || !channels.known() || channels.value != *n) return std::nullopt;
  if (o.zero_point >= 0) {
    const auto zn = elements(g.tensors[size_t(o.zero_point)]);
    if (!zn || (*zn != 1 && *zn != *n)) return std::nullopt;
  }
  return o;
}

}  // namespace

QdqFusion plan_qdq_fusion(const Graph& g, const Model& model) {
  QdqFusion plan;
  const size_t n = g.nodes.size();
  plan.fused_inputs.resize(n);
  plan.absorbed.assign(n, false);
  if (model.opset_version("") < 10) return plan;  // no QuantizeLinear before opset 10
  std::vector<int> readers_fused(g.tensors.size(), 0);
  for (size_t i = 0; i < n; ++i) {
    const Node& node = g.nodes[i];
    if (!node.domain.empty() || node.inputs.size() < 2 || node.outputs.empty() || node.outputs[0] < 0) continue;
    if (g.tensors[size_t(node.outputs[0])].dtype != DType::Float) continue;
    int64_t axis = 0, rank = 0;
    int bias = -1;
    if (node.op_type == "Conv") {
      // The weight's rank is its quantized tensor's (the DequantizeLinear's input).
      const int w = node.inputs[1], dq = w < 0 ? -1 : g.tensors[size_t(w)].producer;
      if (dq < 0 || g.nodes[size_t(dq)].inputs.empty() || g.nodes[size_t(dq)].inputs[0] < 0) continue;
      const Shape& shape = g.tensors[size_t(g.nodes[size_t(dq)].inputs[0])].shape;
      if (!shape.rank_known || shape.dims.size() < 3) continue;
      rank = int64_t(shape.dims.size());
      bias = node.inputs.size() > 2 ? node.inputs[2] : -1;
    } else if (node.op_type == "MatMul") {
      axis = 1, rank = 2;
    } else if (node.op_type == "Gemm") {
      if (node.attr_int("transA", 0) != 0) continue;
      axis = node.attr_int("transB", 0) != 0 ? 0 : 1, rank = 2;
      bias = node.inputs.size() > 2 ? node.inputs[2] : -1;
    } else {
      continue;
    }
    const auto x = dequantized(g, node.inputs[0], false, 0, 0);
    const auto w = dequantized(g, node.inputs[1], true, axis, rank);
    if (!x || !w) continue;
    plan.fused_inputs[i] = {x->q, x->scale, x->zero_point, w->q, w->scale, w->zero_point, bias};
    ++plan.fused_by_op[node.op_type];
    ++readers_fused[size_t(node.inputs[0])];
    ++readers_fused[size_t(node.inputs[1])];
  }
  // A DequantizeLinear is absorbed when fused nodes are all that read it.
  std::vector<bool> graph_output(g.tensors.size(), false);
  for (int t : g.outputs)
    if (t >= 0) graph_output[size_t(t)] = true;
  for (size_t i = 0; i < n; ++i) {
    const Node& node = g.nodes[i];
    if (node.op_type != "DequantizeLinear" || !node.domain.empty() || node.outputs.empty()) continue;
    const int out = node.outputs[0];
    if (out < 0 || graph_output[size_t(out)] || readers_fused[size_t(out)] == 0) continue;
    if (size_t(readers_fused[size_t(out)]) != g.tensors[size_t(out)].consumers.size()) continue;
    plan.absorbed[i] = true;
    ++plan.absorbed_count;
  }
  return plan;
}

std::string qdq_fusion_notice(const std::map<std::string, int64_t>& fused_by_op, int64_t absorbed) {
  if (fused_by_op.empty()) return {};
  std::vector<std::pair<std::string, int64_t>> ops(fused_by_op.begin(), fused_by_op.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string list;
  for (const auto& [op, count] : ops) list += (list.empty() ? "" : ", ") + std::to_string(count) + " " + op;
  return "QDQ: " + list + " ran as int8 kernels on their quantized operands (" + std::to_string(absorbed) +
         " DequantizeLinear absorbed: their rows take no time, their work is in the fused node's)";
}

}  // namespace modelstat::profiler

// Pattern "qdq": a model quantized in ONNX's QDQ style keeps its float ops
// and wraps them: DequantizeLinear(x_q) and DequantizeLinear(w_q) feed a float
// Conv / MatMul / Gemm, whose output a QuantizeLinear takes back to 8 bits.
// Run as written, such a node dequantizes its operands and computes in float:
// no faster than the float model. ONNX Runtime fuses the pattern into an int8
// kernel; so does the executor (profiler/ops/int8_kernels.hpp):
//
//   - a Conv, MatMul or Gemm whose data and weight are DequantizeLinear
//     outputs of 8-bit tensors (data: one scale and zero point, constants;
//     weight: a constant, one scale or one per output channel) runs as one
//     int8 kernel on the quantized tensors: exact int32 accumulation, then one
//     float scale per output channel and the bias;
//   - a DequantizeLinear that only such nodes read is absorbed: it does not
//     run; it is a member of its first reader's group.
//
// The result is the float op's on the dequantized operands, without the float
// rounding of its sum (equal to within float rounding). The QuantizeLinear
// after the op runs as written.
#include "analyzer/fusion/pattern.hpp"

namespace modelstat::fusion {

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
// element, or (when a weight) one per index of `axis` of a constant weight of
// rank `weight_rank`; a constant zero point of the data's type.
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

// The fused kernel's inputs when node i runs on its quantized operands:
// {x_q, x_scale, x_zero_point, w_q, w_scale, w_zero_point, bias}, and the two
// DequantizeLinear nodes; nullopt when it does not qualify.
struct QdqOperands {
  std::vector<int> inputs;
  int x_dq = -1, w_dq = -1;
};
std::optional<QdqOperands> qdq_operands(const Graph& g, int64_t opset, int i) {
  if (opset < 10) return std::nullopt;  // no QuantizeLinear before opset 10
  const Node& node = g.nodes[size_t(i)];
  if (!node.domain.empty() || node.inputs.size() < 2 || node.outputs.empty() || node.outputs[0] < 0)
    return std::nullopt;
  if (g.tensors[size_t(node.outputs[0])].dtype != DType::Float) return std::nullopt;
  int64_t axis = 0, rank = 0;
  int bias = -1;
  if (node.op_type == "Conv") {
    // The weight's rank is its quantized tensor's (the DequantizeLinear's input).
    const int w = node.inputs[1], dq = w < 0 ? -1 : g.tensors[size_t(w)].producer;
    if (dq < 0 || g.nodes[size_t(dq)].inputs.empty() || g.nodes[size_t(dq)].inputs[0] < 0) return std::nullopt;
    const Shape& shape = g.tensors[size_t(g.nodes[size_t(dq)].inputs[0])].shape;
    if (!shape.rank_known || shape.dims.size() < 3) return std::nullopt;
    rank = int64_t(shape.dims.size());
    bias = node.inputs.size() > 2 ? node.inputs[2] : -1;
  } else if (node.op_type == "MatMul") {
    axis = 1, rank = 2;
  } else if (node.op_type == "Gemm") {
    if (node.attr_int("transA", 0) != 0) return std::nullopt;
    axis = node.attr_int("transB", 0) != 0 ? 0 : 1, rank = 2;
    bias = node.inputs.size() > 2 ? node.inputs[2] : -1;
  } else {
    return std::nullopt;
  }
  const auto x = dequantized(g, node.inputs[0], false, 0, 0);
  const auto w = dequantized(g, node.inputs[1], true, axis, rank);
  if (!x || !w) return std::nullopt;
  return QdqOperands{{x->q, x->scale, x->zero_point, w->q, w->scale, w->zero_point, bias}, x->dq, w->dq};
}

// DequantizeLinear node dq is read by fused nodes only, and node i is the first of them.
bool absorbed_into(const PatternContext& ctx, int dq, int i) {
  const int out = ctx.g.nodes[size_t(dq)].outputs.empty() ? -1 : ctx.g.nodes[size_t(dq)].outputs[0];
  if (out < 0 || ctx.graph_output[size_t(out)]) return false;
  const auto& readers = ctx.g.tensors[size_t(out)].consumers;
  if (readers.empty() || readers.front() != i) return false;
  for (int r : readers) {
    const auto operands = qdq_operands(ctx.g, ctx.opset, r);
    if (!operands || (operands->x_dq != dq && operands->w_dq != dq)) return false;
  }
  return true;
}

}  // namespace

std::optional<FusedGroup> match_qdq(const PatternContext& ctx, int i) {
  const std::optional<QdqOperands> operands = qdq_operands(ctx.g, ctx.opset, i);
  if (!operands) return std::nullopt;
  FusedGroup group;
  group.kind = FusedKind::Qdq;
  group.head = i;
  group.inputs = operands->inputs;
  group.output = ctx.g.nodes[size_t(i)].outputs[0];
  for (int dq : {operands->x_dq, operands->w_dq})
    if (absorbed_into(ctx, dq, i) && (group.members.empty() || group.members[0] != dq)) group.members.push_back(dq);
  return group;
}

}  // namespace modelstat::fusion

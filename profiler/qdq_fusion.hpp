// QDQ models on int8 kernels. A model quantized in ONNX's QDQ style keeps its
// float ops and wraps them: DequantizeLinear(x_q) and DequantizeLinear(w_q)
// feed a float Conv / MatMul / Gemm, whose output a QuantizeLinear takes back
// to 8 bits. Run as written, every such node dequantizes its operands and
// computes in float: no faster than the float model. ONNX Runtime fuses the
// pattern into an int8 kernel; so does the executor, at load:
//
//   - a Conv, MatMul or Gemm whose data and weight are DequantizeLinear
//     outputs of 8-bit tensors (data: one scale and zero point, constants;
//     weight: a constant, one scale or one per output channel) runs as one
//     fused kernel (kQdqDomain in profiler/ops/exec_rule.hpp) on the
//     quantized tensors: oneDNN's int8 convolution / matmul, exact int32
//     accumulation, then one float scale per output channel and the bias;
//   - a DequantizeLinear that only fused nodes read is absorbed: it does not
//     run (its row in a per-layer profile takes no time; its work is in the
//     fused node's time).
//
// The result is the float op's on the dequantized operands, without the float
// rounding of its sum (equal to within float rounding). The QuantizeLinear
// after the op runs as written. Only on the CPU, with oneDNN's int8 kernels
// (int8_kernels_available()); ExecOptions::fuse_qdq turns it off.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "modelstat/graph.hpp"

namespace modelstat::profiler {

struct QdqFusion {
  // Per node of the graph: the tensors the fused kernel reads (x_q, x_scale,
  // x_zero_point, w_q, w_scale, w_zero_point, bias; -1 for an absent one),
  // empty for a node that runs as written.
  std::vector<std::vector<int>> fused_inputs;
  // Per node: a DequantizeLinear whose every reader is fused.
  std::vector<bool> absorbed;
  std::map<std::string, int64_t> fused_by_op;  // op type -> fused nodes
  int64_t absorbed_count = 0;
  bool empty() const { return fused_by_op.empty(); }
};

// The fusion plan of one (sub)graph; `model` gives the opsets.
QdqFusion plan_qdq_fusion(const Graph& g, const Model& model);

// "QDQ: 20 Conv, 1 Gemm ran as int8 kernels on their quantized operands
// (21 DequantizeLinear absorbed, no time of their own)", or empty.
std::string qdq_fusion_notice(const std::map<std::string, int64_t>& fused_by_op, int64_t absorbed);

}  // namespace modelstat::profiler

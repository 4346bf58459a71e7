// Groups on the CPU: what an inference runtime does with a float Conv, Gemm
// or MatMul and the elementwise ops after it, and with GELU and LayerNorm
// written out node by node, planned once at load. (Conv groups first; the
// MatMul, GELU and LayerNorm groups are described at their structs below.)
//
// ONNX Runtime (and PyTorch's optimize_for_inference) run a convolution, the
// BatchNormalization an export may leave after it, a residual Add and an
// activation as one kernel: the activation and the add are applied to each
// output tile while it is still in registers or L1, instead of one more pass
// over the whole tensor per op. The executor does the same on oneDNN's fp32
// convolution (profiler/ops/fp32_conv.hpp) when it plans a graph:
//
//   Conv -> [BatchNormalization] -> ( Relu | LeakyRelu | Clip | HardSigmoid |
//            HardSwish | Sigmoid | Tanh | Sigmoid+Mul (SiLU) | Add of a residual )*
//
// A member joins the group only when the tensor before it is read by the
// group alone (and is no graph output), its attributes are constants, and,
// for an Add, the other operand has the output's shape and is computed before
// the Conv runs (a residual from an earlier branch: in a ResNet block the
// shortcut's Add joins whichever of the two convolutions runs last). The
// BatchNormalization (inference form, constant statistics) is folded into the
// Conv's weights and bias; the rest become oneDNN post-ops, in graph order.
//
// The plan reads the graph only, so it lives with the analyzer: the profiler's
// executor runs it (profiler/ops/fp32_conv.hpp) and `fit` prices by it (a
// member's forward costs nothing of its own: its work is in the group's
// kernel).
//
// The absorbed members do not run; their rows in a per-layer profile take no
// time, and the group's one measured time is on its head, the Conv
// (LayerTiming::fused_into / fused_members). ExecOptions::fuse_cpu (`profile
// --fusion off`) turns this off: every node runs as written.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "modelstat/graph.hpp"

namespace modelstat {

// One post-op of a group, in graph order.
struct FusedPostOp {
  // Gelu: erf form; GeluTanh: tanh approximation (MatMul groups only).
  enum class Kind { Relu, LeakyRelu, Clip, HardSigmoid, HardSwish, Sigmoid, Tanh, Swish, Gelu, GeluTanh, AddResidual };
  Kind kind = Kind::Relu;
  float alpha = 0.f, beta = 0.f;  // LeakyRelu alpha; Clip min, max; HardSigmoid alpha, beta
  int residual = -1;              // AddResidual: the tensor added
  // Clip at opset >= 11: its bounds are constant inputs (-1: absent), read
  // when the kernel is built; below 11 they are attributes, in alpha/beta.
  int clip_min = -1, clip_max = -1;
  // Gelu written out (a GeluGroup's constants: sqrt 2, 1, 0.5), checked when
  // the kernel is built; -1 for the Gelu op.
  int gelu_divisor = -1, gelu_one = -1, gelu_half = -1;
};

struct ConvGroup {
  int conv = -1;                   // the head node
  int batch_norm = -1;             // a folded BatchNormalization node, or -1
  std::vector<FusedPostOp> post_ops;
  std::vector<int> members;        // the absorbed nodes (BN included), in graph order
  int output = -1;                 // the tensor the group writes (its last member's output)
};

// GELU written out as ONNX exporters write it (opset < 20):
//   Div(x, sqrt 2) -> Erf -> Add(1) -> Mul(x) -> Mul(0.5)   (the two Muls in either order)
// run as one erf-GELU kernel at the Div. The plan matches the structure
// (one-element constants); the executor checks the constants' values.
struct GeluGroup {
  int head = -1;                   // the Div
  std::vector<int> members;        // Erf, Add, Mul, Mul, in graph order
  int input = -1, output = -1;     // x, and the last Mul's output
  int divisor = -1, one = -1, half = -1;  // the constants (sqrt 2, 1, 0.5)
};

// Gemm / MatMul with a constant 2-D float weight (directly or through
// Identity nodes), run on profiler/ops/fp32_matmul.hpp's kernel (oneDNN or
// BLAS, whichever is faster for the shape), and the ops after it that its
// kernel applies to the output tile:
//
//   (MatMul | Gemm) -> [Add of a constant bias of N values] ->
//       ( Relu | LeakyRelu | Clip | HardSigmoid | HardSwish | Sigmoid | Tanh |
//         Sigmoid+Mul (SiLU) | Gelu | GELU written out | Add of a residual )*
//
// under the Conv groups' rules (each tensor before a member read by the group
// alone, a residual computed before the head). A GELU written out joins as
// its whole GeluGroup (Div, Erf, Add, Mul, Mul). Gemm qualifies with
// transA = 0 (opset >= 7) and C absent or a constant of N values ([N] or
// [1, N]); alpha and beta fold into the weights and bias. Every qualifying
// node is a group, most of one node; `profile --fusion off` runs the head
// alone (Gemm's C still its bias) and its members as written.
struct MatMulGroup {
  int head = -1;
  int weight = -1;          // B (the constant tensor itself)
  bool transposed = false;  // Gemm transB = 1: the weight is stored N x K
  int bias = -1;            // Gemm's C, or the bias Add's constant: N values; -1 none
  int bias_add = -1;        // the Add whose constant is `bias` (a member), -1 when it is Gemm's C or none
  int bias_output = -1;     // that Add's output
  std::vector<FusedPostOp> post_ops;
  std::vector<std::vector<int>> stage_members;  // per post-op, the nodes it absorbs
  std::vector<int> stage_outputs;               // per post-op, the tensor it writes
  std::vector<int> members;                     // every absorbed node, in graph order
  int output = -1;                              // the tensor the group writes
};

// LayerNormalization written out as exporters write it before opset 17
// (PyTorch's F.layer_norm over the last dim):
//   m = ReduceMean(x, axes=[-1]); d = Sub(x, m);
//   y = Div(d, Sqrt(Add(ReduceMean(Pow(d, 2) | Mul(d, d), axes=[-1]), eps)))
//   [-> Mul(y, scale[C]) [-> Add(., bias[C])]]
// run as one at::layer_norm at the first ReduceMean. The plan matches the
// structure; the executor checks that the exponent is 2 and reads eps.
struct LayerNormGroup {
  int head = -1;                    // the first ReduceMean
  std::vector<int> members;         // Sub, Pow|Mul, ReduceMean, Add, Sqrt, Div[, Mul[, Add]], in graph order
  int input = -1, output = -1;      // x, and the last member's output
  int64_t channels = 0;             // C, x's last dim
  int epsilon = -1;                 // the Add's one-element constant
  int exponent = -1;                // Pow's constant (-1: Mul(d, d))
  int scale = -1, bias = -1;        // [C] constants, or -1
};

struct CpuFusionPlan {
  std::vector<ConvGroup> groups;
  std::vector<MatMulGroup> matmuls;
  std::vector<GeluGroup> gelus;
  std::vector<LayerNormGroup> layer_norms;
  std::vector<int> group_of;       // per node: its Conv group (head or member), -1 for none
  std::vector<bool> absorbed;      // per node: a member (of a Conv, MatMul, GELU or LayerNorm group) that does not run
  int64_t absorbed_count = 0;
  int64_t matmul_members() const {
    int64_t n = 0;
    for (const MatMulGroup& m : matmuls) n += int64_t(m.members.size());
    return n;
  }
  bool empty() const { return groups.empty() && matmuls.empty(); }
};

// The constant tensor `t` is, directly or through a chain of Identity nodes
// (exporters route deduplicated initializers through them); -1 when `t` is
// computed.
int constant_source(const Graph& g, int t);

// The groups of graph `g`: float Convs of rank 4 with constant weights (and
// bias); `model` gives the opsets (Clip's bounds moved to inputs at 11).
CpuFusionPlan plan_cpu_fusion(const Graph& g, const Model& model);

// "53 Conv groups ran as oneDNN fp32 convolutions with their post-ops (49
// Relu, 16 Add absorbed: their rows take no time, their work is in the
// Conv's)", or empty. `absorbed_by_op`: member op type -> nodes.
std::string cpu_fusion_notice(int64_t groups, const std::map<std::string, int64_t>& absorbed_by_op);

}  // namespace modelstat

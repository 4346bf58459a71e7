// Fusion: which ONNX nodes run as one kernel, decided once per (sub)graph, by
// node index, from the graph's structure *and* its constant values. One plan
// serves everyone who must agree on it: the profiler's executor builds one
// step per group from it (profiler/plan.cc), `fit` prices one kernel per
// group from it (analyzer/fit/fit.cc), and a profile's rows name the groups
// it made (LayerTiming::fused_members / fused_into).
//
// An inference runtime (ONNX Runtime's graph transformers, PyTorch's
// optimize_for_inference) runs a convolution with the BatchNormalization and
// activations after it as one kernel, GELU and LayerNorm written out node by
// node as one op, and a QDQ-quantized Conv on its int8 operands. Each such
// rewrite is one pattern (analyzer/fusion/patterns/<name>.cc), listed in
// fusion_patterns() in priority order; a pattern matches at a head node and
// yields a FusedGroup: the head, the members it absorbs, the tensors its
// kernel reads and the tensor it writes. The planner (fusion_plan.cc) takes a
// match only when none of its nodes is taken already. A member does not run:
// its work is in its head's kernel, and its row in a per-layer profile takes
// no time.
//
// What a group runs is one of four kinds: a oneDNN fp32 convolution with
// post-ops (Conv), the fp32 Gemm/MatMul kernel with post-ops (MatMul), an
// int8 kernel on quantized operands (Qdq), or the ordinary kernel of one
// standard ONNX op on the group's inputs (Rewrite: GELU written out runs as
// Gelu, LayerNorm written out as LayerNormalization). A new group of the
// Rewrite kind is one pattern file and one test row; nothing in the executor
// or in `fit` changes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "modelstat/graph.hpp"

namespace modelstat {

// One post-op of a Conv or MatMul group, in graph order, with its constants
// resolved by the plan.
struct FusedPostOp {
  // Gelu: erf form; GeluTanh: tanh approximation (MatMul groups only).
  enum class Kind { Relu, LeakyRelu, Clip, HardSigmoid, HardSwish, Sigmoid, Tanh, Swish, Gelu, GeluTanh, AddResidual };
  Kind kind = Kind::Relu;
  // LeakyRelu alpha; Clip min, max (from attributes below opset 11, from its
  // constant inputs from 11); HardSigmoid alpha, beta; Swish beta.
  float alpha = 0.f, beta = 0.f;
  int residual = -1;  // AddResidual: the tensor added
};

// A oneDNN fp32 convolution: Conv -> [BatchNormalization] -> post-ops.
struct ConvKernelSpec {
  int weight = -1;      // the constant weight tensor (through Identity nodes)
  int bias = -1;        // the constant bias, or -1
  int batch_norm = -1;  // a folded BatchNormalization node, or -1
  std::vector<FusedPostOp> post_ops;
};

// The fp32 Gemm / MatMul kernel (oneDNN or BLAS): A x W [+ bias] -> post-ops.
struct MatMulKernelSpec {
  int weight = -1;          // B, the constant tensor itself
  bool transposed = false;  // Gemm transB = 1: the weight is stored N x K
  double alpha = 1.0;       // Gemm's alpha (folds into the weight)
  int bias = -1;            // Gemm's C, or a bias Add's constant: N values; -1 none
  double beta = 1.0;        // Gemm's beta on its C (folds into the bias)
  int bias_add = -1;        // the Add whose constant is `bias` (a member), -1 when it is Gemm's C or none
  std::vector<FusedPostOp> post_ops;
};

// The standard op a group computes, run by that op's ordinary kernel with
// the group's `inputs` as its inputs and `output` as its output 0.
struct RewriteSpec {
  std::string op_type, domain;
  int64_t opset = 0;  // the op's version the kernel is looked up at
  std::map<std::string, AttrValue> attributes;
};

// The attribute (int 1) a Rewrite group's BatchNormalization carries when its
// Relu runs in the same pass (pattern "batch_norm_relu"); never in a model's
// own nodes.
inline constexpr const char* kFusedReluAttribute = "modelstat_fused_relu";

enum class FusedKind { Conv, MatMul, Qdq, Rewrite };
const char* fused_kind_name(FusedKind kind);

struct FusedGroup {
  std::string pattern;  // the pattern that matched ("conv_group", "gelu", ...)
  FusedKind kind = FusedKind::Rewrite;
  int head = -1;             // the node whose row holds the group's time
  std::vector<int> members;  // the absorbed nodes, in graph order (may be empty: a group of one)
  // The tensors the kernel reads (-1: absent), in the kind's order:
  //   Conv, MatMul: {x, residual};  Rewrite: the op's inputs;
  //   Qdq: {x_q, x_scale, x_zero_point, w_q, w_scale, w_zero_point, bias}.
  std::vector<int> inputs;
  int output = -1;  // the tensor it writes
  std::variant<std::monostate, ConvKernelSpec, MatMulKernelSpec, RewriteSpec> spec;
  // The constant tensors the kernel holds in its own form (packed weights,
  // a folded BatchNormalization's statistics): the executor need not keep them.
  std::vector<int> packed_constants;
};

// What the run that follows the plan does (which patterns apply).
struct FusionOptions {
  bool qdq = false;            // QDQ patterns on int8 kernels (CPU, oneDNN's int8 present)
  bool cpu_groups = false;     // fp32 groups on the CPU: Conv, MatMul post-ops, GELU, LayerNorm
  bool matmul_kernels = false; // fp32 Gemm/MatMul with constant weights on the MatMul kernel, even
                               // with cpu_groups off (then as groups of one: no members)
};

// The options of an inference run: `cpu`, in fp32 (`fp32`: the run's float
// dtype is fp32 or the model's own), fusion on or off, and whether the Gemm
// kernel is forced to BLAS (`gemm_blas`: `--gemm blas`, then with fusion off
// every Gemm/MatMul runs as written); `int8_kernels`: oneDNN's int8 present.
FusionOptions inference_fusion_options(bool cpu, bool fp32, bool fuse, bool gemm_blas, bool int8_kernels);

struct FusionPlan {
  std::vector<FusedGroup> groups;  // in the order the patterns matched them
  std::vector<int> group_of;       // per node: its group (head or member), -1 for none
  std::vector<bool> absorbed;      // per node: a member, which does not run
  int64_t absorbed_count = 0;
  // The group whose head is `node`, or null.
  const FusedGroup* headed_by(int node) const;
  // Groups and absorbed members by pattern (for notices and tests).
  int64_t count(const std::string& pattern) const;
};

// The plan of graph `g` (one scope: a subgraph has a plan of its own);
// `model` gives the opsets.
FusionPlan plan_fusion(const Graph& g, const Model& model, const FusionOptions& options);

// The constant tensor `t` is, directly or through a chain of Identity nodes
// (exporters route deduplicated initializers through them); -1 when `t` is
// computed.
int constant_source(const Graph& g, int t);

// The value of a one-element constant (through Identity nodes) whose bytes
// the loader keeps inline (every tensor up to 4 KiB), of any float or integer
// dtype; nullopt when `t` is computed, not one element, or its bytes are not
// at hand.
std::optional<double> constant_scalar(const Graph& g, int t);

}  // namespace modelstat

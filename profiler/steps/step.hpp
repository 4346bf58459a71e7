// The executor's plan: one typed step per node of a (sub)graph, each with one
// run() and one describe(). What kinds there are, and where each lives:
//
//   OpStep          a node through its op's ATen executor (the registry), with
//                   the fp16/bf16 upcast when its kernel lacks the dtype;
//                   control flow (If, Loop, Scan) is an OpStep whose executor
//                   runs subgraphs; a QDQ group's head is an OpStep on the
//                   int8 executor with the quantized operands (op_step.cc)
//   RewriteStep     a group that computes one standard op (GELU, LayerNorm
//                   written out) through that op's executor (op_step.cc)
//   ConvGroupStep   a Conv group on the prepacked oneDNN convolution
//   MatMulGroupStep a Gemm/MatMul group on the fp32 matmul kernel (group_steps.cc)
//   FoldedStep      a run-invariant node (analyzer/run_invariant.hpp): its
//                   OpStep run once per set of input shapes, its outputs kept
//   ConstantStep    a Constant node whose value the weight store holds
//   AbsorbedStep    a member of a group: nothing runs (group_steps.cc)
//
// The planner (profiler/plan.cc) builds them from the fusion plan; the
// executor (profiler/executor.cc) runs them in order and releases each
// tensor after its last reader.
#pragma once

#include <ATen/ATen.h>

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/fusion/fusion_plan.hpp"
#include "analyzer/run_invariant.hpp"
#include "profiler/executor.hpp"

namespace modelstat::profiler {

struct ExecRule;  // profiler/ops/exec_rule.hpp

// What a step runs against.
struct StepRun {
  const Executor& executor;
  const Graph& graph;
  std::vector<at::Tensor>& env;              // the scope's values, by tensor index
  const Executor::NodeHook* subgraph_hook;   // around the nodes of the subgraphs a step runs; may be null
  uint64_t shape_signature;                  // the run's graph-input shapes (FoldedStep's cache key)
};

// How a node computes when its inputs include fp16/bf16 tensors: unknown
// until a run reaches it, then natively or upcast to fp32 (by dtype).
enum class ReducedPath : uint8_t { Unknown, Native, UpcastHalf, UpcastBFloat16 };

class Step {
 public:
  explicit Step(int node) : node_(node) {}
  virtual ~Step() = default;
  virtual void run(StepRun& r) const = 0;
  // What runs, in a few words: "Relu", "Conv group: brgconv:avx512_core", "absorbed into Conv_3".
  virtual std::string describe() const = 0;
  // A group's kernel (LayerTiming::kernel); empty for a single node.
  virtual std::string kernel() const { return {}; }
  // How it ran its fp16/bf16 inputs (Executor::upcasts).
  virtual ReducedPath reduced_path() const { return ReducedPath::Unknown; }
  int node() const { return node_; }

  std::vector<int> release_after;  // tensors dropped once it has run

 private:
  int node_;
};

struct GraphPlan {
  const Graph* graph = nullptr;              // the graph whose nodes the steps run
  std::vector<std::unique_ptr<Step>> steps;  // one per node, in graph order
  FusionPlan fusion;                         // the groups as they run
  // A subgraph: where each value it reads from an enclosing scope lives in
  // the scope it runs in: (tensor here, tensor of the graph whose node holds it).
  std::vector<std::pair<int, int>> outer;
  int top_level_node = -1;  // a subgraph: the top-level node it runs inside
  // A subgraph: per node, its id in the executor's subgraph_nodes() (what subgraph_hook gets).
  std::vector<int> subgraph_node_ids;
  // Which nodes and values are the same on every run with the same input
  // shapes (analyzer/run_invariant.hpp): the nodes run as FoldedSteps, and a
  // subgraph's plan reads the values its enclosing scope holds.
  RunInvariance invariance;
};

// Builds g's plan (profiler/plan.cc): the fusion plan under `options`, a
// kernel per group (a group whose kernel cannot be built runs as written),
// the release points, and the steps. `weights` drops the constants only
// packed kernels read. `parent`: the enclosing graph of a subgraph.
// `in_loop_body`: g is (inside) a Loop or Scan body, where no node folds.
// `parent_plan`: the plan of `parent` (what of its scope is run-invariant).
std::unique_ptr<GraphPlan> plan_graph(const Graph& g, const Graph* parent, const GraphPlan* parent_plan,
                                      const Model& model, const ExecOptions& options, WeightStore& weights,
                                      bool in_loop_body);

// The notices of what the plans fused (one per kind of group), after every
// plan is built (the Gemm notice counts the kernel choices made meanwhile).
std::vector<std::string> fusion_notices(const std::vector<const GraphPlan*>& plans, const ExecOptions& options,
                                        const GemmChoiceSummary& choices_before);

// ---- step factories (op_step.cc, group_steps.cc)

// `inputs`: what it reads (the node's inputs, or a QDQ group's operands);
// `handover`: per input, an activation it reads last, which it may overwrite.
std::unique_ptr<Step> make_op_step(const Graph& g, int node, const ExecRule* rule, int64_t opset,
                                   std::vector<int> inputs, std::vector<bool> handover);
// A run-invariant node: `op` (its OpStep) run once per input-shape signature,
// its outputs kept and handed out on later runs.
std::unique_ptr<Step> make_folded_step(std::unique_ptr<Step> op, std::vector<int> outputs);
bool is_folded_step(const Step& step);
// A Rewrite group: its op's executor on the group's inputs, writing its output.
std::unique_ptr<Step> make_rewrite_step(const Graph& g, const FusedGroup& group, const ExecRule* rule);
// A Conv / MatMul group's kernel from the weights; nullptr when it cannot be
// built (a constant the store does not hold): the nodes then run as written.
std::unique_ptr<Step> make_conv_group_step(const Graph& g, const Model& model, const FusedGroup& group,
                                           const WeightStore& weights);
std::unique_ptr<Step> make_matmul_group_step(const Graph& g, const FusedGroup& group, const ExecOptions& options,
                                             const WeightStore& weights);
std::unique_ptr<Step> make_constant_step(int node, int output);
std::unique_ptr<Step> make_absorbed_step(int node, std::string head);

// The implementation a MatMul group step runs ("none" before its first run
// when the shape was unknown at load), for the Gemm notice.
std::string matmul_step_implementation(const Step& step);

}  // namespace modelstat::profiler

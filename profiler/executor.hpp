// Runs an ONNX graph (modelstat IR) with ATen ops and oneDNN kernels: a plan
// of typed steps, one per node (profiler/steps/), built once from the fusion
// plan (analyzer/fusion/fusion_plan.hpp) that `fit` prices too.
#pragma once

#include <ATen/ATen.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "modelstat/error.hpp"
#include "analyzer/fusion/fusion_plan.hpp"
#include "modelstat/graph.hpp"
#include "profiler/ops/fp32_matmul.hpp"

namespace modelstat::profiler {

struct ExecOptions {
  at::Device device = at::kCPU;
  // Floating-point compute dtype. fp32 (the default), fp16 or bf16: weights
  // and float inputs are cast to it, and so are the float tensors ops create
  // (Constant, ConstantOfShape, Range, EyeLike, windows, a Cast to fp16/bf16;
  // in fp16/bf16 every float type, so a reduced-precision graph stays reduced;
  // see compute_type in profiler/ops/exec_helpers.hpp). Undefined: the model's
  // own dtypes, as ONNX specifies (weights as stored, inputs as declared,
  // Casts as written): a float16 model computes in float16. In every mode a
  // node whose ATen kernel lacks its fp16/bf16 inputs' dtype on the device
  // runs in fp32 instead (Executor::upcasts). Ops see it, and `device`,
  // through ExecContext.
  at::ScalarType float_dtype = at::kFloat;
  uint64_t seed = 0x5eed;  // inputs and absent (skeleton) weights
  // Elementwise ops may overwrite an activation they are the last to read
  // (ExecContext::input_reusable). Off for autograd: backward may need the
  // value an in-place op would overwrite (train_step.cc turns it off).
  bool in_place = true;
  // QDQ patterns (DequantizeLinear -> Conv / MatMul / Gemm) run as int8
  // kernels on the CPU (analyzer/fusion/patterns/qdq.cc). Off: every node as written.
  bool fuse_qdq = true;
  // Conv groups (analyzer/fusion/fusion_plan.hpp): on the CPU in fp32, a Conv, the
  // BatchNormalization after it and its activations / residual Add run as one
  // oneDNN convolution with prepacked weights. Off (`--fusion off`): every
  // node as written. Off for autograd too (train_step.cc).
  bool fuse_cpu = true;
  // fp32 Gemm / MatMul with constant weights on the CPU (`--gemm`): on
  // oneDNN or BLAS, the faster for each shape (profiler/ops/fp32_matmul.hpp),
  // in both fusion modes. Blas: ATen's matmul as the nodes are written; what
  // a training step uses (autograd runs through ATen).
  GemmBackend gemm = GemmBackend::Auto;
  // For verify's sensitivity rerun: QuantizeLinear and DynamicQuantizeLinear
  // move each value they round by one ulp, up or down at random (a fixed
  // seed per node): the smallest difference float rounding in the ops before
  // them makes between two implementations.
  bool nudge_requantisers = false;
  // For verify's sensitivity rerun: the float outputs of every function
  // runtimes approximate (op_is_approximated: exp, tanh, erf, sigmoid,
  // softmax...) move by one unit in the last place of max(|y|, 1), up or
  // down at random: another runtime's approximation of the same function.
  bool nudge_approximations = false;
  // The caller hands its KV-cache buffers over (a generation loop in ONNX
  // Runtime GenAI's shared-buffer layout, KvCache::layout): a
  // com.microsoft GroupQueryAttention whose past_key / past_value already hold
  // present's rows writes the step's rows into them and returns them as
  // present, instead of a new copy. Off: graph inputs are never written.
  bool share_kv_buffers = false;
};

// Loads every constant of the model as a tensor on the device: inline bytes,
// the payloads the loader located in the model file (memory-mapped), external
// data files, or, when the data is absent (a skeleton model), random values
// from the fixed seed, with a notice.
class WeightStore {
 public:
  WeightStore(const Model& model, const ExecOptions& options);
  // Constant tensor of graph `g` tensor index `t` (defined for initializers and Constant outputs).
  const at::Tensor& get(const Graph* g, int t) const;
  int64_t bytes_loaded() const { return bytes_loaded_; }
  int64_t tensors_randomised() const { return tensors_randomised_; }
  const std::vector<std::string>& notices() const { return notices_; }
  // Drops constant `t` of graph `g`: the executor keeps it in another form
  // (a Conv group's packed weights) and nothing reads it as it is.
  void release(const Graph* g, int t);

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
  int64_t bytes_loaded_ = 0, tensors_randomised_ = 0;
  std::vector<std::string> notices_;
};

// The nodes a run computed in fp32 because ATen has no kernel for their fp16
// or bf16 inputs on the device (LibTorch 1.13's CPU has none for Conv,
// MatMul, pooling, Resize, Relu, Sigmoid... in float16): each such node casts
// its reduced inputs to fp32, runs, and casts its float outputs back to the
// reduced dtype, inside its own timed interval.
struct Upcasts {
  // Reduced dtype ("fp16", "bf16") -> op type -> nodes, subgraph nodes included.
  std::map<std::string, std::map<std::string, int64_t>> nodes_by_dtype;
  // Per top-level node: it, or a node of its subgraphs, ran upcast.
  std::vector<bool> top_level;
  // Per subgraph node (Executor::subgraph_nodes()): it, or a node of its own
  // subgraphs, ran upcast.
  std::vector<bool> subgraph_nodes;
  bool empty() const { return nodes_by_dtype.empty(); }
};

// One notice per reduced dtype, e.g. "ran in fp32 (no fp16 CPU kernel in this
// LibTorch): Conv x119, Resize x39, MaxPool x33" (op types by node count,
// descending); empty when nothing was upcast.
std::vector<std::string> upcast_notices(const Upcasts& upcasts, const at::Device& device);

// What an ATen error thrown while running `node` on `device` means, as the
// project's error (first line of ATen's message, no backtrace): a missing
// kernel for a dtype ("not implemented for 'Half'") and out of memory are
// CannotRun, naming the dtype and what to do; anything else is Runtime.
Error aten_error(const c10::Error& e, const Node& node, const at::Device& device);

// A node inside an If / Loop / Scan subgraph, at any depth.
struct SubgraphNodeInfo {
  std::string path;  // subgraph_node_path: the analysis's row name ("Loop_3/body/MatMul_1")
  std::string op_type;
  int top_level_node = 0;  // the top-level node it runs inside
  // The control-flow node holding its subgraph: its id in subgraph_nodes(),
  // -1 when that is the top-level node.
  int enclosing = -1;
  int depth = 1;  // 1 in a subgraph of a top-level node, 2 one level further down, ...
};

// What one run did beyond its outputs (Executor::observe): the dims of every
// top-level value it computed, and how often each subgraph ran.
struct RunObservation {
  // By top-level tensor index; empty where the run computed no tensor (an
  // absorbed member of a fused group, an omitted output).
  std::vector<std::optional<std::vector<int64_t>>> top_level_dims;
  // Subgraph (an If branch, a Loop / Scan body) -> how many times it ran.
  std::unordered_map<const Graph*, int64_t> subgraph_runs;
};

// The executor's plan of one (sub)graph: a typed step per node
// (profiler/steps/step.hpp), built once from the fusion plan.
struct GraphPlan;

class Executor {
 public:
  // Throws Error(Input) naming the first node whose op has no executor, and
  // Error(CannotRun) for a string graph input, before anything runs.
  Executor(const Model& model, const ExecOptions& options);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Random inputs for the graph inputs (profiler/inputs.cc; shapes from the
  // bound model), never zeros: floats ~ N(0,1); integer inputs uniform in a
  // range that is valid for what consumes them (e.g. token ids below the
  // embedding size), but a one-element integer input that an Equal compares
  // with a one-element constant takes that constant's value (a mode switch
  // such as a sample rate: the If it feeds then takes the branch built for
  // that value).
  std::vector<at::Tensor> make_inputs(uint64_t seed) const;

  // Runs the graph; returns the graph outputs in order. `hook`, when set, is
  // called with (node index, false) before and (node index, true) after each
  // top-level node, on the host thread that enqueues the work. The nodes of
  // subgraphs (If, Loop, Scan) run inside their top-level node's interval;
  // `subgraph_hook`, when set, is called likewise around each execution of
  // one of them (a Loop body's nodes once per trip), with its id in
  // subgraph_nodes(): nested calls nest (an If inside a Loop body: the If's
  // "before", its branch nodes' pairs, its "after").
  using NodeHook = std::function<void(int node, bool after)>;
  // One run that records what it did (RunObservation), on the cold path:
  // not to be called while another thread runs this executor.
  RunObservation observe(const std::vector<at::Tensor>& inputs) const;
  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs, const NodeHook& hook = {},
                              const NodeHook& subgraph_hook = {}) const;
  // Runs `body`, a subgraph of a node of the graph whose values are `scope`
  // (a control-flow step's runner); `subgraph_hook` around each of its nodes.
  // `shape_signature`: the run's (Executor::run), for the folded steps inside.
  std::vector<at::Tensor> run_subgraph(const Graph& body, const std::vector<at::Tensor>& scope,
                                       const std::vector<at::Tensor>& inputs, const NodeHook* subgraph_hook,
                                       uint64_t shape_signature) const;
  // Every node of every subgraph, whether a run reaches it or not, in the
  // analysis's row order (each node, then the nodes of its own subgraphs).
  const std::vector<SubgraphNodeInfo>& subgraph_nodes() const { return subgraph_nodes_; }

  const Model& model() const { return model_; }
  const ExecOptions& options() const { return options_; }
  // ExecOptions::in_place for the runs that follow.
  void set_in_place(bool allowed) { options_.in_place = allowed; }
  // ExecOptions::nudge_requantisers for the runs that follow.
  void set_nudge_requantisers(bool nudge) { options_.nudge_requantisers = nudge; }
  const WeightStore& weights() const { return weights_; }
  // What the executor fused at load, as notices; empty when nothing.
  const std::vector<std::string>& fusion_notices() const { return fusion_notices_; }
  // The top-level graph's fusion plan as the executor runs it (a group
  // whose kernel could not be built runs as written and is not in it).
  const FusionPlan& fusion_plan() const;
  // Top-level node k, a member of a fused group (a DequantizeLinear absorbed
  // into its readers, a member of a Conv, MatMul, GELU or LayerNorm group):
  // the group's head's name; else empty.
  std::string fused_into(int k) const;
  // Top-level node k, the head of a group: its absorbed members' names in
  // graph order (empty for a group of one and for other nodes).
  std::vector<std::string> fused_members(int k) const;
  // Top-level node k, the head of a Conv, MatMul, GELU or LayerNorm group:
  // the kernel that ran it ("brgconv:avx512_core", "onednn brg:avx512_core",
  // "aten::gelu", or "aten (...)" where it fell back); else empty.
  std::string fused_kernel(int k) const;
  // One line per top-level step: what runs at each node (for --explain and tests).
  std::vector<std::string> describe_plan() const;
  // The nodes run in fp32 for want of a kernel for their fp16/bf16 inputs:
  // learnt on the first run that reaches each node (a node whose reduced
  // kernel throws is rerun upcast, and later runs upcast it directly).
  Upcasts upcasts() const;

 private:
  // Plans `sub`, the subgraph labelled `label` of the node whose row name is
  // `holder` (a node of `parent`, planned as `parent_plan`; its id
  // `enclosing`, -1 for a top-level node), and, recursively, the subgraphs
  // of its nodes, which it enters into subgraph_nodes_.
  void plan_subgraph(const Graph& sub, const Graph& parent, const GraphPlan& parent_plan, const std::string& holder,
                     const std::string& label, int top_level_node, int enclosing, int depth, bool in_loop_body);
  // Runs g's steps over env (its tensors; inputs, initializers and outer-scope
  // values already bound). `hook`: for g's own nodes (top-level graph: the
  // run's hook; a subgraph: subgraph_hook); `subgraph_hook`: for the nodes of
  // the subgraphs its nodes run. Either may be null.
  void run_steps(const Graph& g, const GraphPlan& plan, std::vector<at::Tensor>& env, const NodeHook* hook,
                 const NodeHook* subgraph_hook, uint64_t shape_signature) const;

  const Model& model_;
  ExecOptions options_;
  // Set during observe() only: where run_steps and run_subgraph record.
  mutable RunObservation* observation_ = nullptr;
  WeightStore weights_;
  std::unique_ptr<GraphPlan> top_;
  std::unordered_map<const Graph*, std::unique_ptr<GraphPlan>> subplans_;
  std::vector<SubgraphNodeInfo> subgraph_nodes_;
  std::vector<std::string> fusion_notices_;
};

}  // namespace modelstat::profiler

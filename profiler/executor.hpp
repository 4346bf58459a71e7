// Runs an ONNX graph (modelstat IR) node by node with ATen ops.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "modelstat/error.hpp"
#include "modelstat/graph.hpp"

namespace modelstat::profiler {

struct ExecRule;  // profiler/ops/exec_rule.hpp

struct ExecOptions {
  at::Device device = at::kCPU;
  // Floating-point compute dtype: weights and float inputs are cast to it
  // (fp32 by default; fp16 / bf16 on CUDA). In fp16/bf16 the float tensors
  // ops create (Constant, ConstantOfShape, Range, EyeLike, windows, Cast to a
  // float type) take it too, so a reduced-precision graph stays reduced
  // (compute_type in profiler/ops/exec_helpers.hpp). Ops see it, and `device`,
  // through ExecContext.
  at::ScalarType float_dtype = at::kFloat;
  uint64_t seed = 0x5eed;  // inputs and absent (skeleton) weights
  // Elementwise ops may overwrite an activation they are the last to read
  // (ExecContext::input_reusable). Off for autograd: backward may need the
  // value an in-place op would overwrite (train_step.cc turns it off).
  bool in_place = true;
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

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
  int64_t bytes_loaded_ = 0, tensors_randomised_ = 0;
  std::vector<std::string> notices_;
};

// What an ATen error thrown while running `node` on `device` means, as the
// project's error (first line of ATen's message, no backtrace): a missing
// kernel for a dtype ("not implemented for 'Half'") and out of memory are
// CannotRun, naming the dtype and what to do; anything else is Runtime.
Error aten_error(const c10::Error& e, const Node& node, const at::Device& device);

class Executor {
 public:
  // Throws Error(Input) naming the first node whose op has no executor, and
  // Error(CannotRun) for a string graph input, before anything runs.
  Executor(const Model& model, const ExecOptions& options);

  // Random inputs for the graph inputs (shapes from the bound model), never
  // zeros: floats ~ N(0,1); integer inputs uniform in a range that is valid
  // for what consumes them (e.g. token ids below the embedding size), but a
  // one-element integer input that an Equal compares with a one-element
  // constant takes that constant's value (a mode switch such as a sample
  // rate: the If it feeds then takes the branch built for that value).
  std::vector<at::Tensor> make_inputs(uint64_t seed) const;

  // Runs the graph; returns the graph outputs in order. `hook`, when set, is
  // called with (node index, false) before and (node index, true) after each
  // top-level node, on the host thread that enqueues the work. The nodes of
  // subgraphs (If, Loop, Scan) run inside their top-level node's interval.
  using NodeHook = std::function<void(int node, bool after)>;
  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs, const NodeHook& hook = {}) const;

  const Model& model() const { return model_; }
  const ExecOptions& options() const { return options_; }
  // ExecOptions::in_place for the runs that follow.
  void set_in_place(bool allowed) { options_.in_place = allowed; }
  const WeightStore& weights() const { return weights_; }

 private:
  // What run() does at each node, decided once from the graph rather than on
  // every run (for small models the per-run bookkeeping was a visible share of
  // the whole-model time, outside every per-node interval).
  struct NodeStep {
    const ExecRule* rule = nullptr;  // null: a Constant preloaded by the weight store
    int64_t opset = 0;
    std::vector<bool> last_read;     // per input: an activation this node reads last, and once
    std::vector<int> release_after;  // tensors dropped once this node has run
    bool has_subgraphs = false;      // control flow: its ExecContext gets a SubgraphRunner
  };

  // A (sub)graph's steps, and for a subgraph where each value it reads from
  // an enclosing scope lives in the scope it runs in: (tensor here, tensor of
  // the graph whose node holds it). Built once, at construction, for the
  // top-level graph and every subgraph.
  struct GraphPlan {
    std::vector<NodeStep> steps;
    std::vector<std::pair<int, int>> outer;
  };
  class ScopeRunner;  // SubgraphRunner over one scope's values

  GraphPlan plan_graph(const Graph& g, const Graph* parent);
  void plan_subgraphs(const Graph& g);
  // Runs g's nodes over env (its tensors; inputs, initializers and outer-scope
  // values already bound). `hook` only for the top-level graph.
  void run_nodes(const Graph& g, const GraphPlan& plan, std::vector<at::Tensor>& env, const NodeHook* hook) const;
  // Runs `body`, a subgraph of a node of the graph whose values are `scope`.
  std::vector<at::Tensor> run_subgraph(const Graph& body, const std::vector<at::Tensor>& scope,
                                       const std::vector<at::Tensor>& inputs) const;

  const Model& model_;
  ExecOptions options_;
  WeightStore weights_;
  GraphPlan top_;
  std::unordered_map<const Graph*, GraphPlan> subplans_;
};

}  // namespace modelstat::profiler

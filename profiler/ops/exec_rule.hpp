// The executor's op registry: (domain, op type, opset range) -> a function
// that runs one ONNX node with ATen calls. Same OpKey as the analyzer's cost
// rules (include/modelstat/op_key.hpp); one file per op family, mirroring
// analyzer/cost/. tests/profiler/exec_registry_test.cc checks that every op
// record has an executor over the same opset range or is listed in
// analysis_only_ops().
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

#include "modelstat/graph.hpp"
#include "modelstat/op_key.hpp"

namespace modelstat::profiler {

// Runs a subgraph of the node being executed (If's branches, Loop's and
// Scan's body) with its graph inputs bound to `inputs`, in order, and the
// values it reads from enclosing scopes taken from the scope the node runs
// in; returns the subgraph's outputs in order. Set by the executor on the
// ExecContext of nodes that have subgraph attributes.
class SubgraphRunner {
 public:
  virtual ~SubgraphRunner() = default;
  virtual std::vector<at::Tensor> run(const Graph& body, const std::vector<at::Tensor>& inputs) const = 0;
};

// What an executor sees for one node: its IR node, its input tensors (an
// undefined at::Tensor for an omitted optional input), and where it puts its
// outputs. Values of constant inputs (shapes, axes, pads...) are read from
// the input tensors themselves: they are real tensors on the device.
// device() and float_dtype() are the run's (ExecOptions): ops that create
// tensors from attributes alone put them on device(), and float-producing ops
// follow float_dtype() (see compute_type in exec_helpers).
class ExecContext {
 public:
  ExecContext(const Graph& graph, const Node& node, int64_t opset, std::vector<at::Tensor> inputs,
              at::Device device = at::kCPU, at::ScalarType float_dtype = at::kFloat)
      : graph_(graph),
        node_(node),
        opset_(opset),
        inputs_(std::move(inputs)),
        device_(device),
        float_dtype_(float_dtype) {}

  const Node& node() const { return node_; }
  const Graph& graph() const { return graph_; }
  int64_t opset() const { return opset_; }
  // Where the graph runs (ExecOptions::device).
  at::Device device() const { return device_; }
  // The floating-point compute dtype of the run (ExecOptions::float_dtype):
  // Undefined when the run keeps the model's own dtypes; fp32 for a node the
  // executor upcasts (no kernel for its fp16/bf16 inputs).
  at::ScalarType float_dtype() const { return float_dtype_; }
  size_t num_inputs() const { return inputs_.size(); }
  // Undefined tensor when absent.
  const at::Tensor& input(size_t i) const;
  bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i].defined(); }
  size_t num_outputs() const { return node_.outputs.size(); }
  bool wants_output(size_t i) const { return i < node_.outputs.size() && node_.outputs[i] >= 0; }

  // Integer values of a (small) input, e.g. Reshape's shape: copied to the host.
  std::vector<int64_t> input_ints(size_t i) const;
  double input_scalar(size_t i) const;

  std::vector<at::Tensor> outputs;  // filled by the executor function, one per node output

  // Whether input i may be overwritten in place: an activation this node is
  // the last to read, whose storage nothing else shares. Elementwise ops then
  // write into it, as PyTorch's ReLU(inplace=True) does, instead of paying an
  // allocation (and, for large tensors, fresh pages) per op. Set by the executor.
  bool input_reusable(size_t i) const { return i < reusable_.size() && reusable_[i]; }
  void set_reusable(std::vector<bool> reusable) { reusable_ = std::move(reusable); }

  // ExecOptions::nudge_requantisers: a node that rounds floats to a
  // quantisation grid moves each value it rounds by one ulp first.
  bool nudge_requantisers() const { return nudge_requantisers_; }
  void set_nudge_requantisers(bool nudge) { nudge_requantisers_ = nudge; }

  // ExecOptions::share_kv_buffers: a GroupQueryAttention whose past buffers
  // already hold present's rows writes the step's rows into them in place.
  bool share_kv_buffers() const { return share_kv_buffers_; }
  void set_share_kv_buffers(bool share) { share_kv_buffers_ = share; }

  // Control flow: runs one of this node's subgraphs (see SubgraphRunner).
  // Throws Error(Runtime) when the executor set no runner.
  std::vector<at::Tensor> run_subgraph(const Graph& body, const std::vector<at::Tensor>& inputs) const;
  void set_subgraph_runner(const SubgraphRunner* runner) { runner_ = runner; }

 private:
  std::vector<bool> reusable_;
  const SubgraphRunner* runner_ = nullptr;
  bool nudge_requantisers_ = false;
  bool share_kv_buffers_ = false;
  const Graph& graph_;
  const Node& node_;
  int64_t opset_;
  std::vector<at::Tensor> inputs_;
  at::Device device_;
  at::ScalarType float_dtype_;
};

using ExecFn = void (*)(ExecContext&);

struct ExecRule {
  OpKey key;
  ExecFn fn;
};

void add_conv_executors(std::vector<ExecRule>& rules);
void add_gemm_matmul_executors(std::vector<ExecRule>& rules);
void add_recurrent_executors(std::vector<ExecRule>& rules);
void add_elementwise_executors(std::vector<ExecRule>& rules);
void add_normalization_executors(std::vector<ExecRule>& rules);
void add_pooling_executors(std::vector<ExecRule>& rules);
void add_reduction_executors(std::vector<ExecRule>& rules);
void add_shape_ops_executors(std::vector<ExecRule>& rules);
void add_control_flow_executors(std::vector<ExecRule>& rules);
void add_attention_executors(std::vector<ExecRule>& rules);

const std::vector<ExecRule>& all_executors();
const ExecRule* find_executor(const std::string& domain, const std::string& op_type, int64_t opset_version);

// Kernels that run a Conv, MatMul or Gemm together with the DequantizeLinear
// nodes that feed its data and weight (analyzer/fusion/patterns/qdq.cc): not ONNX
// ops, so not in all_executors(). Their ExecContext holds the Conv / MatMul /
// Gemm node and the inputs
//     x_q, x_scale, x_zero_point, w_q, w_scale, w_zero_point, bias (float, or absent)
// where x's scale and zero point are one element and w's one element or one
// per output channel (Conv: axis 0; MatMul: the column; Gemm: N).
void add_qdq_conv_executors(std::vector<ExecRule>& rules);
void add_qdq_gemm_matmul_executors(std::vector<ExecRule>& rules);
// The fused executor for a node of `op_type` whose operands are dequantized, or null.
const ExecRule* find_qdq_executor(const std::string& op_type);
inline constexpr const char* kQdqDomain = "modelstat.qdq";

// Ops with a cost rule but no executor, each with the reason (e.g. sequence
// and optional ops, RoiAlign). Checked by tests/profiler/exec_registry_test.cc.
struct AnalysisOnlyOp {
  const char* op_type;
  const char* reason;
};
const std::vector<AnalysisOnlyOp>& analysis_only_ops();

}  // namespace modelstat::profiler

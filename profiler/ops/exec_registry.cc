// The one visible list of executors, and ExecContext's helpers.
#include <unordered_map>

#include "modelstat/error.hpp"
#include "profiler/ops/exec_rule.hpp"

namespace modelstat::profiler {

const at::Tensor& ExecContext::input(size_t i) const {
  static const at::Tensor undefined;
  return i < inputs_.size() ? inputs_[i] : undefined;
}

std::vector<int64_t> ExecContext::input_ints(size_t i) const {
  if (!has_input(i))
    throw Error(ErrorKind::Input, "input " + std::to_string(i) + " is required", {}, node_.name, node_.op_type);
  // Shape operands are small int64 (or int32) tensors on the CPU: read in
  // place, without the three ATen calls (each a dispatch, ~0.3 us) of the
  // general conversion.
  const at::Tensor& in = inputs_[i];
  if (in.device().is_cpu() && in.is_contiguous()) {
    if (in.scalar_type() == at::kLong) {
      const int64_t* p = in.data_ptr<int64_t>();
      return std::vector<int64_t>(p, p + in.numel());
    }
    if (in.scalar_type() == at::kInt) {
      const int32_t* p = in.data_ptr<int32_t>();
      return std::vector<int64_t>(p, p + in.numel());
    }
  }
  const at::Tensor t = in.to(at::kCPU).to(at::kLong).contiguous();
  const int64_t* p = t.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + t.numel());
}

double ExecContext::input_scalar(size_t i) const {
  if (!has_input(i) || inputs_[i].numel() != 1)
    throw Error(ErrorKind::Input, "input " + std::to_string(i) + " must be a scalar", {}, node_.name, node_.op_type);
  return inputs_[i].to(at::kCPU).to(at::kDouble).item<double>();
}

std::vector<at::Tensor> ExecContext::run_subgraph(const Graph& body, const std::vector<at::Tensor>& inputs) const {
  if (!runner_)
    throw Error(ErrorKind::Runtime, "no subgraph runner for this node (run it through the Executor)", {}, node_.name,
                node_.op_type);
  return runner_->run(body, inputs);
}

const std::vector<ExecRule>& all_executors() {
  static const std::vector<ExecRule> rules = [] {
    std::vector<ExecRule> r;
    add_conv_executors(r);
    add_gemm_matmul_executors(r);
    add_recurrent_executors(r);
    add_elementwise_executors(r);
    add_normalization_executors(r);
    add_pooling_executors(r);
    add_reduction_executors(r);
    add_shape_ops_executors(r);
    add_control_flow_executors(r);
    add_attention_executors(r);
    return r;
  }();
  return rules;
}

const ExecRule* find_executor(const std::string& domain, const std::string& op_type, int64_t opset_version) {
  static const OpIndex<ExecRule> index(all_executors());
  return index.find(domain, op_type, opset_version);
}

const ExecRule* find_qdq_executor(const std::string& op_type) {
  static const std::vector<ExecRule> rules = [] {
    std::vector<ExecRule> r;
    add_qdq_conv_executors(r);
    add_qdq_gemm_matmul_executors(r);
    return r;
  }();
  for (const ExecRule& rule : rules)
    if (rule.key.op_type == op_type) return &rule;
  return nullptr;
}

}  // namespace modelstat::profiler

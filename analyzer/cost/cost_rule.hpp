// The cost-rule registry: one explicit list of (op key -> rule), one file per
// op family (conv.cc, gemm_matmul.cc, elementwise.cc, normalization.cc,
// pooling.cc, reduction.cc, shape_ops.cc, control_flow.cc). A rule computes
// MACs and FLOPs for one node; the caller fills params and bytes from the
// tensors (a rule may override bytes when the op moves less than its inputs,
// e.g. Shape or Reshape).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "modelstat/analysis.hpp"
#include "modelstat/graph.hpp"
#include "modelstat/op_key.hpp"

namespace modelstat::cost {

// What a rule sees: the node, its tensors, and checked arithmetic helpers.
class CostContext {
 public:
  CostContext(const Graph& graph, const Node& node) : graph_(graph), node_(node) {}

  const Node& node() const { return node_; }
  const Graph& graph() const { return graph_; }
  size_t num_inputs() const { return node_.inputs.size(); }
  size_t num_outputs() const { return node_.outputs.size(); }
  // nullptr when the input/output is absent (omitted optional or out of range).
  const Tensor* input(size_t i) const;
  const Tensor* output(size_t i) const;

  // Shape of input/output i when its rank and every dim are known; nullopt otherwise.
  std::optional<std::vector<int64_t>> input_dims(size_t i) const;
  std::optional<std::vector<int64_t>> output_dims(size_t i) const;
  // Element counts (nullopt when unknown).
  std::optional<int64_t> input_elements(size_t i) const;
  std::optional<int64_t> output_elements(size_t i) const;
  // Sum of all present outputs' elements; nullopt if any is unknown.
  std::optional<int64_t> total_output_elements() const;
  std::optional<int64_t> total_input_elements() const;

 private:
  const Graph& graph_;
  const Node& node_;
};

// Checked 64-bit arithmetic: throws modelstat::Error(Input) naming the node on overflow.
int64_t checked_mul(int64_t a, int64_t b, const Node& node);
int64_t checked_add(int64_t a, int64_t b, const Node& node);
int64_t checked_product(const std::vector<int64_t>& v, const Node& node);

// A rule's answer. Unknown when a needed shape is missing: set `status` and `note`.
struct RuleResult {
  CostStatus status = CostStatus::Exact;
  int64_t macs = 0;
  int64_t flops = 0;
  // When set, replace the default bytes (sum of input sizes / sum of output sizes).
  std::optional<int64_t> bytes_read_override, bytes_written_override;
  std::string rule;  // short id of the documented rule: "conv", "elementwise(1/elem)", ...
  std::string note;

  static RuleResult unknown_shape(std::string rule, std::string note) {
    RuleResult r;
    r.status = CostStatus::UnknownShape;
    r.rule = std::move(rule);
    r.note = std::move(note);
    return r;
  }
};

using CostFn = RuleResult (*)(const CostContext&);

struct CostRule {
  OpKey key;
  CostFn fn;
  const char* doc;  // one line: the formula and its constants (shown by `modelstat ops`)
};

// Each op family appends its rules to the list (called from registry.cc, in a
// fixed, visible order).
void add_conv_rules(std::vector<CostRule>& rules);
void add_gemm_matmul_rules(std::vector<CostRule>& rules);
void add_elementwise_rules(std::vector<CostRule>& rules);
void add_normalization_rules(std::vector<CostRule>& rules);
void add_pooling_rules(std::vector<CostRule>& rules);
void add_reduction_rules(std::vector<CostRule>& rules);
void add_shape_ops_rules(std::vector<CostRule>& rules);
void add_control_flow_rules(std::vector<CostRule>& rules);
void add_recurrent_rules(std::vector<CostRule>& rules);

// The registry: all rules, built once.
const std::vector<CostRule>& all_rules();
// Rule for (domain, op_type, opset version); nullptr when none.
const CostRule* find_rule(const std::string& domain, const std::string& op_type,
                          int64_t opset_version);

}  // namespace modelstat::cost

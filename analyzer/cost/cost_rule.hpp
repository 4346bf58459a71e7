// The op records: one record per op (domain, op type, opset range), as ONNX's
// defs.cc keeps one schema per op, one file per op family (conv.cc,
// gemm_matmul.cc, elementwise.cc, normalization.cc, pooling.cc, reduction.cc,
// shape_ops.cc, control_flow.cc, recurrent.cc; contrib-domain ops join the
// family they belong to). A record holds the
// op's cost rule and its documented formula, its traits (view, may run in
// place, what backward saves, which inputs are constants, the conv/pool weight
// input, the dense-contraction family fit prices it with) and its integer
// shape-value folding. Everything in the analyzer that
// needs an op fact reads it here: analyzer/op_traits.hpp, the shape-value
// folding of analyzer/loader/shape_values.cc, the loader's conv/pool checks and
// its domain check, `modelstat ops` and docs/COST_MODEL.md (checked by
// tests/analyzer/registry_test.cc). The profiler registers executors against
// the same keys (profiler/ops/exec_rule.hpp); tests/profiler/exec_registry_test.cc
// checks that both sides cover the same opset ranges.
//
// A cost rule computes MACs and FLOPs for one node; the caller fills params and
// bytes from the tensors (a rule may override bytes when the op moves less than
// its inputs, e.g. Shape or Reshape).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/op_traits.hpp"
#include "modelstat/analysis.hpp"
#include "modelstat/graph.hpp"
#include "modelstat/op_key.hpp"

namespace onnx {
class NodeProto;
struct InferenceContext;
}
namespace modelstat::loader {
struct Folded;
class FoldContext;
}  // namespace modelstat::loader

namespace modelstat::cost {

// What a rule sees: the node, its tensors, the opset the model imports for
// the node's domain (an op whose meaning changed between opsets follows it),
// and checked arithmetic helpers.
class CostContext {
 public:
  CostContext(const Graph& graph, const Node& node, int64_t opset) : graph_(graph), node_(node), opset_(opset) {}

  const Node& node() const { return node_; }
  const Graph& graph() const { return graph_; }
  int64_t opset() const { return opset_; }
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
  int64_t opset_;
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

// Constant folding of one node (analyzer/loader/shape_fold.hpp): the values
// of its outputs from its evaluated inputs, where they can be computed.
using FoldFn = loader::Folded (*)(loader::FoldContext&, const onnx::NodeProto&);

// Type and shape inference of an op ONNX 1.12 has no schema for (ONNX
// Runtime's contrib ops, standard ops of later opsets): the loader hands it to
// ONNX's shape inference as the op's inference function (ONNX's
// InferenceContext; fail_shape_inference() reports a node error).
using ShapeFn = void (*)(onnx::InferenceContext&);

// What an op is beyond its cost (read through analyzer/op_traits.hpp). Built
// by chaining from `OpTraits{}`: OpTraits{}.as_view(), .in_place(),
// .saves(BackwardSaves::Output), .constant_input(3), ...
struct OpTraits {
  static constexpr int kNotConvPool = -2;

  bool view = false;      // output 0 is a view of input 0 (no buffer, no bytes)
  bool may_run_in_place = false;  // elementwise: may overwrite input 0 (inference)
  BackwardSaves backward_saves = BackwardSaves::Inputs;  // what autograd keeps for backward
  uint32_t constant_inputs = 0;        // bit k: input k is a constant of the op, never trained
  bool scalar_operands_constant = false;  // a one-element initializer operand is a constant
  // Conv/pool shape checks in the loader: the weight input's index, -1 for a
  // pool (no weight), kNotConvPool otherwise.
  int conv_pool_weight_input = kNotConvPool;
  bool same_shape_as_input = false;  // output 0 has input 0's type and shape (used for
                                     // ops ONNX has no schema for, e.g. contrib ops)
  ShapeFn shape_rule = nullptr;  // the inference of an op ONNX has no schema for (wins over
                                 // same_shape_as_input)
  DenseFamily dense_family = DenseFamily::None;  // the measured contraction classes it is priced with
  // The input holding weights bit-packed in uint8 (MatMulNBits' B: `bits`, an
  // attribute, per value, default 4), -1 for none: params and the model size
  // by dtype count its values, not its bytes.
  int packed_weight_input = -1;
  // A transcendental or composite function that runtimes approximate
  // (exp, tanh, erf, sigmoid, softmax...): two correct kernels may differ in
  // its last bits (verify's rounding sensitivity nudges its outputs).
  bool approximated = false;

  // (Defined before its callers: clang evaluates them in constant expressions.)
  template <typename T>
  constexpr OpTraits with(T OpTraits::*field, T value) const {
    OpTraits t = *this;
    t.*field = value;
    return t;
  }

  constexpr OpTraits as_view() const { return with(&OpTraits::view, true).saves(BackwardSaves::Nothing); }
  constexpr OpTraits in_place() const { return with(&OpTraits::may_run_in_place, true); }
  constexpr OpTraits saves(BackwardSaves s) const { return with(&OpTraits::backward_saves, s); }
  constexpr OpTraits constant_input(int k) const {
    return with(&OpTraits::constant_inputs, constant_inputs | (uint32_t(1) << k));
  }
  constexpr OpTraits scalar_operand_constant() const { return with(&OpTraits::scalar_operands_constant, true); }
  constexpr OpTraits conv_pool(int weight_input) const { return with(&OpTraits::conv_pool_weight_input, weight_input); }
  constexpr OpTraits shape_of_input() const { return with(&OpTraits::same_shape_as_input, true); }
  constexpr OpTraits shape(ShapeFn f) const { return with(&OpTraits::shape_rule, f); }
  constexpr OpTraits dense(DenseFamily f) const { return with(&OpTraits::dense_family, f); }
  constexpr OpTraits packed_weight(int input) const { return with(&OpTraits::packed_weight_input, input); }
  constexpr OpTraits approximate() const { return with(&OpTraits::approximated, true); }
};

// The op's one record (also called its cost rule: `CostRule` is the same type).
struct CostRule {
  OpKey key;
  CostFn fn;
  const char* doc;  // one line: the formula and its constants (shown by `modelstat ops`)
  OpTraits traits;
  FoldFn fold = nullptr;  // constant folding of small values; nullptr: never folded
};
using OpRecord = CostRule;

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
void add_attention_rules(std::vector<CostRule>& rules);

// The registry: all rules, built once.
const std::vector<CostRule>& all_rules();
// Rule for (domain, op_type, opset version); nullptr when none.
const CostRule* find_rule(const std::string& domain, const std::string& op_type,
                          int64_t opset_version);
// The newest record of (domain, op_type) whatever the opset, for questions
// asked without one (op traits of a Node, shape-value folding); nullptr when none.
const CostRule* find_op(const std::string& domain, const std::string& op_type);
// Whether any record lives in `domain` (normalised), e.g. "com.microsoft".
bool domain_has_records(const std::string& domain);

}  // namespace modelstat::cost

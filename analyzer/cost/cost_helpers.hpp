// Shape and registration helpers shared by the cost-rule families. Private to
// analyzer/cost: every family file includes this instead of repeating
// broadcasting, axis and attribute checks (see docs/COST_MODEL.md for the
// conventions these serve).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/cost/cost_rule.hpp"

namespace modelstat::cost {

constexpr int64_t kLatestOpset = std::numeric_limits<int64_t>::max();

// One row of a family's table: the op's whole record. `since` is ONNX's
// since_version of the op's first schema (tests/analyzer/registry_test.cc
// checks it against ONNX's schema registry); the executor registers the same
// range (tests/profiler/exec_registry_test.cc).
struct OpRow {
  const char* op;
  int64_t since;
  CostFn fn;
  const char* doc;
  OpTraits traits = {};
  FoldFn fold = nullptr;
  const char* domain = "";  // "" = ai.onnx; "com.microsoft" for ONNX Runtime's contrib ops
  int64_t until = kLatestOpset;
};

// Traits most rows use.
constexpr OpTraits kSavesNothing = OpTraits{}.saves(BackwardSaves::Nothing);
constexpr OpTraits kSavesOutput = OpTraits{}.saves(BackwardSaves::Output);
constexpr OpTraits kView = OpTraits{}.as_view();

// Appends the records of a family's table.
void add_rows(std::vector<CostRule>& rules, const OpRow* begin, const OpRow* end);
template <size_t N>
void add_rows(std::vector<CostRule>& rules, const OpRow (&rows)[N]) {
  add_rows(rules, rows, rows + N);
}

// An exact answer.
RuleResult exact(std::string rule, int64_t macs, int64_t flops, std::string note = {});

// A data-movement answer: 0 MACs, 0 FLOPs, default bytes (inputs read, outputs written).
RuleResult data_movement(std::string rule, std::string note = {});

// A metadata-only view (Reshape, Squeeze, ...): 0 FLOPs and no bytes moved.
RuleResult view(std::string rule);

// Elements of output 0, falling back to input 0 when the output's shape is
// unknown (unary ops where both are equal). nullopt when neither is known.
std::optional<int64_t> out_or_in_elements(const CostContext& ctx);

// Number of inputs actually present (omitted optionals excluded).
size_t present_inputs(const CostContext& ctx);
size_t present_outputs(const CostContext& ctx);

// Numpy multidirectional broadcast of two shapes; nullopt when incompatible.
std::optional<std::vector<int64_t>> broadcast_shapes(const std::vector<int64_t>& a,
                                                     const std::vector<int64_t>& b);

// ONNX axis in [-rank, rank-1] to [0, rank); nullopt when out of range.
std::optional<size_t> normalize_axis(int64_t axis, size_t rank);

// Smallest c with 2^c >= n (0 for n <= 1).
int64_t ceil_log2(int64_t n);

// Whether every value is >= 1 (kernel sizes, strides, groups).
bool all_positive(const std::vector<int64_t>& values);

// FLOPs per element of the activation `op` (an ONNX-domain op type, e.g. the
// `activation` attribute of ONNX Runtime's FusedConv / FusedGemm) as that
// op's own record counts it; nullopt when no record is elementwise-costed so.
std::optional<int64_t> activation_flops_per_element(const std::string& op);

// "elementwise:4" style rule ids.
std::string rule_id(const char* family, int64_t per_element);

// The per-element rules: `per_element` FLOPs for each of `elements`, rule id
// rule_id(family, per_element); unknown_shape(`unknown_why`) when the element
// count is not known.
RuleResult flops_per_element(const CostContext& ctx, const char* family, int64_t per_element,
                             std::optional<int64_t> elements, const char* unknown_why);

}  // namespace modelstat::cost

#include "analyzer/cost/cost_helpers.hpp"

#include <algorithm>
#include <charconv>

namespace modelstat::cost {

void add_rows(std::vector<CostRule>& rules, const OpRow* begin, const OpRow* end) {
  for (const OpRow* r = begin; r != end; ++r)
    rules.push_back(CostRule{OpKey{r->domain, r->op, r->since, r->until}, r->fn, r->doc, r->traits, r->fold});
}

std::optional<int64_t> activation_flops_per_element(const std::string& op) {
  const CostRule* rule = find_rule("", op, kLatestOpset);
  if (!rule) return std::nullopt;
  // The record's own rule on a one-element float tensor: its count per element.
  Graph graph;
  Tensor t;
  t.dtype = DType::Float;
  t.shape.rank_known = true;
  t.shape.dims = {Dim{1, {}}};
  graph.tensors = {t, t};
  Node node;
  node.name = "activation";
  node.op_type = op;
  node.inputs = {0};
  node.outputs = {1};
  const RuleResult r = rule->fn(CostContext(graph, node, kLatestOpset));
  if (r.status != CostStatus::Exact || r.macs != 0) return std::nullopt;
  return r.flops;
}

RuleResult exact(std::string rule, int64_t macs, int64_t flops, std::string note) {
  RuleResult r;
  r.macs = macs;
  r.flops = flops;
  r.rule = std::move(rule);
  r.note = std::move(note);
  return r;
}

RuleResult data_movement(std::string rule, std::string note) {
  return exact(std::move(rule), 0, 0, std::move(note));
}

RuleResult view(std::string rule) {
  RuleResult r = exact(std::move(rule), 0, 0);
  r.bytes_read_override = 0;
  r.bytes_written_override = 0;
  return r;
}

std::optional<int64_t> out_or_in_elements(const CostContext& ctx) {
  if (auto n = ctx.output_elements(0)) return n;
  return ctx.input_elements(0);
}

size_t present_inputs(const CostContext& ctx) {
  size_t n = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.input(i)) ++n;
  return n;
}

size_t present_outputs(const CostContext& ctx) {
  size_t n = 0;
  for (size_t i = 0; i < ctx.num_outputs(); ++i)
    if (ctx.output(i)) ++n;
  return n;
}

std::optional<std::vector<int64_t>> broadcast_shapes(const std::vector<int64_t>& a,
                                                     const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    // Right-aligned: position i counts from the last dim.
    const int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    int64_t d = 0;
    if (da == db || db == 1)
      d = da;
    else if (da == 1)
      d = db;
    else
      return std::nullopt;
    out[rank - 1 - i] = d;
  }
  return out;
}

std::optional<size_t> normalize_axis(int64_t axis, size_t rank) {
  const auto r = int64_t(rank);
  if (axis < -r || axis >= r) return std::nullopt;
  return size_t(axis < 0 ? axis + r : axis);
}

int64_t ceil_log2(int64_t n) {
  int64_t c = 0;
  while (c < 63 && (int64_t(1) << c) < n) ++c;
  return c;
}

bool all_positive(const std::vector<int64_t>& values) {
  return std::all_of(values.begin(), values.end(), [](int64_t v) { return v >= 1; });
}

std::string rule_id(const char* family, int64_t per_element) {
  // Built in one string (one per elementwise node of a graph: no temporaries).
  char digits[24];
  const char* end = std::to_chars(digits, digits + sizeof digits, per_element).ptr;
  std::string id(family);
  id += ':';
  id.append(digits, size_t(end - digits));
  return id;
}

RuleResult flops_per_element(const CostContext& ctx, const char* family, int64_t per_element,
                             std::optional<int64_t> elements, const char* unknown_why) {
  std::string rule = rule_id(family, per_element);
  if (!elements) return RuleResult::unknown_shape(std::move(rule), unknown_why);
  return exact(std::move(rule), 0, checked_mul(per_element, *elements, ctx.node()));
}

}  // namespace modelstat::cost

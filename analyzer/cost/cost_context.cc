#include "analyzer/cost/cost_rule.hpp"

#include "modelstat/error.hpp"

namespace modelstat::cost {

namespace {
const Tensor* tensor_at(const Graph& g, const IndexList& ids, size_t i) {
  if (i >= ids.size() || ids[i] < 0) return nullptr;
  return &g.tensors[size_t(ids[i])];
}

std::optional<std::vector<int64_t>> dims_of(const Tensor* t) {
  if (!t || !t->shape.fully_known()) return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(t->shape.dims.size());
  for (const auto& d : t->shape.dims) out.push_back(d.value);
  return out;
}

std::optional<int64_t> sum_elements(const Graph& g, const IndexList& ids) {
  int64_t total = 0;
  for (int id : ids) {
    if (id < 0) continue;
    auto n = g.tensors[size_t(id)].shape.element_count();
    if (!n) return std::nullopt;
    if (__builtin_add_overflow(total, *n, &total)) return std::nullopt;
  }
  return total;
}
}  // namespace

const Tensor* CostContext::input(size_t i) const { return tensor_at(graph_, node_.inputs, i); }
const Tensor* CostContext::output(size_t i) const { return tensor_at(graph_, node_.outputs, i); }

std::optional<std::vector<int64_t>> CostContext::input_dims(size_t i) const { return dims_of(input(i)); }
std::optional<std::vector<int64_t>> CostContext::output_dims(size_t i) const { return dims_of(output(i)); }

std::optional<int64_t> CostContext::input_elements(size_t i) const {
  const Tensor* t = input(i);
  return t ? t->shape.element_count() : std::nullopt;
}
std::optional<int64_t> CostContext::output_elements(size_t i) const {
  const Tensor* t = output(i);
  return t ? t->shape.element_count() : std::nullopt;
}
std::optional<int64_t> CostContext::total_output_elements() const { return sum_elements(graph_, node_.outputs); }
std::optional<int64_t> CostContext::total_input_elements() const { return sum_elements(graph_, node_.inputs); }

int64_t checked_mul(int64_t a, int64_t b, const Node& node) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    throw Error(ErrorKind::Input, "cost overflows 64 bits (dims too large)", {}, node.name, node.op_type);
  return r;
}

int64_t checked_add(int64_t a, int64_t b, const Node& node) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    throw Error(ErrorKind::Input, "cost overflows 64 bits (dims too large)", {}, node.name, node.op_type);
  return r;
}

int64_t checked_product(const std::vector<int64_t>& v, const Node& node) {
  int64_t r = 1;
  for (int64_t x : v) r = checked_mul(r, x, node);
  return r;
}

}  // namespace modelstat::cost

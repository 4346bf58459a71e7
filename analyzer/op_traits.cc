// Op traits read from each op's one record (analyzer/cost/cost_rule.hpp,
// OpTraits): no op lists here. An op without a record (a custom-domain op)
// has none of the traits and backward keeps its inputs.
#include "analyzer/op_traits.hpp"

#include "analyzer/cost/cost_rule.hpp"

namespace modelstat {

namespace {

const cost::OpTraits& traits_of(const Node& n) {
  static const cost::OpTraits kNone{};
  const cost::OpRecord* record = cost::find_op(n.domain, n.op_type);
  return record ? record->traits : kNone;
}

}  // namespace

bool op_output_is_view(const Node& n) { return traits_of(n).view; }

bool op_may_run_in_place(const Node& n) { return traits_of(n).may_run_in_place; }

BackwardSaves op_backward_saves(const Node& n) { return traits_of(n).backward_saves; }

DenseFamily op_dense_family(const Node& n) { return traits_of(n).dense_family; }

bool op_is_approximated(const Node& n) { return traits_of(n).approximated; }

bool op_input_is_constant(const Graph& g, const Node& n, size_t k) {
  const cost::OpTraits& t = traits_of(n);
  if (k < 32 && (t.constant_inputs >> k) & 1u) return true;
  if (t.scalar_operands_constant) {
    const int id = n.inputs[k];
    return id >= 0 && g.tensors[size_t(id)].shape.element_count().value_or(0) == 1;
  }
  return false;
}

int op_packed_weight_input(const Node& n) { return traits_of(n).packed_weight_input; }

int op_packed_weight_bits(const Node& n, size_t k) {
  const int input = traits_of(n).packed_weight_input;
  if (input < 0 || size_t(input) != k) return 0;
  const int64_t bits = n.attr_int("bits", 4);
  return bits >= 1 && bits <= 8 ? int(bits) : 0;
}

bool op_training_mode(const Node& n, int64_t opset) {
  if (!n.domain.empty()) return false;
  if (n.op_type == "BatchNormalization") {
    if (opset >= 14) return n.attr_int("training_mode", 0) != 0;
    if (opset >= 7) {
      for (size_t o = 1; o < n.outputs.size(); ++o)
        if (n.outputs[o] >= 0) return true;
      return false;
    }
    return n.attr_int("is_test", 0) == 0;
  }
  if (n.op_type == "Dropout") return opset < 7 && n.attr_int("is_test", 0) == 0;
  return false;
}

}  // namespace modelstat

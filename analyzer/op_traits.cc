// Transitional home of the op lists that fit and the trainable-weight rule
// used; the op records replace them (issue 10, part 1).
#include "analyzer/op_traits.hpp"

#include <set>
#include <string>

namespace modelstat {

// Ops whose output is a view of input 0 (no new buffer; docs/FIT.md "Activations").
bool op_output_is_view(const Node& n) {
  static const std::set<std::string> kViews = {"Reshape",   "Flatten",  "Squeeze",
                                               "Unsqueeze", "Identity", "Dropout"};
  return n.domain.empty() && kViews.count(n.op_type) > 0;
}

// Elementwise ops a runtime runs in place on input 0 when that input dies at
// the node and has the output's size: what modelstat's executor does (and
// PyTorch's inplace=True activations). Inference only: autograd needs them kept.
bool op_may_run_in_place(const Node& n) {
  static const std::set<std::string> kInPlace = {"Add", "Sub", "Mul", "Relu", "Clip"};
  return n.domain.empty() && kInPlace.count(n.op_type) > 0;
}

BackwardSaves op_backward_saves(const Node& n) {
  static const std::set<std::string> kOutput = {"Relu", "Sigmoid", "Tanh",       "Exp",
                                                "Sqrt", "Softmax", "LogSoftmax", "Reciprocal"};
  static const std::set<std::string> kNothing = {"Add",
                                                 "Sub",
                                                 "Neg",
                                                 "Sum",
                                                 "Concat",
                                                 "Split",
                                                 "Slice",
                                                 "Transpose",
                                                 "Reshape",
                                                 "Flatten",
                                                 "Squeeze",
                                                 "Unsqueeze",
                                                 "Identity",
                                                 "Dropout",
                                                 "Pad",
                                                 "Expand",
                                                 "Tile",
                                                 "Cast",
                                                 "ReduceSum",
                                                 "ReduceMean",
                                                 "GlobalAveragePool",
                                                 "Shape",
                                                 "Size",
                                                 "Constant",
                                                 "ConstantOfShape",
                                                 "Gather"};
  if (!n.domain.empty()) return BackwardSaves::Inputs;
  if (kOutput.count(n.op_type)) return BackwardSaves::Output;
  if (kNothing.count(n.op_type)) return BackwardSaves::Nothing;
  return BackwardSaves::Inputs;  // contractions, Mul, Div, Pow, Clip, Gelu, Erf, pools, norms, and anything
                                 // unlisted
}

bool op_input_is_constant(const Graph& g, const Node& n, size_t k) {
  const int t = n.inputs[k];
  auto one_element = [&](int t) { return g.tensors[size_t(t)].shape.element_count().value_or(0) == 1; };
  bool constant_use = false;
  if (n.domain.empty()) {
    if (n.op_type == "BatchNormalization")
      constant_use = k == 3 || k == 4;
    else if (n.op_type == "Clip")
      constant_use = k == 1 || k == 2;
    else if (n.op_type == "Pow")
      constant_use = k == 1;
    else if (n.op_type == "Add" || n.op_type == "Sub" || n.op_type == "Mul" || n.op_type == "Div")
      constant_use = one_element(t);
  }
  return constant_use;
}

}  // namespace modelstat

// What the rest of modelstat may ask about an op beyond its cost: whether its
// output is a view of its input, whether a runtime may run it in place, what
// autograd saves for its backward, and which of its inputs are constants of
// the op rather than weights a framework would train. Answered from the op's
// one record (see analyzer/cost/cost_rule.hpp); nothing else keeps op lists.
#pragma once

#include <cstddef>
#include <cstdint>

#include "modelstat/graph.hpp"

namespace modelstat {

// What backward needs of a node (PyTorch autograd's saved tensors, by op class).
enum class BackwardSaves { Inputs, Output, Nothing };

// The dense-contraction family of an op: fit prices its forward on the matmul
// curve, and its backward with the backward / forward ratio the device probe
// measured for the family's op classes (profiler/op_cost_probe.cc: "Conv",
// "Conv/1x1", "Conv/depthwise"; "Gemm", "Gemm/thin"). None: the op is its own
// measured class, when the probe measured it.
enum class DenseFamily { None, Conv, Gemm };

// Output 0 is a view of input 0: no new buffer, no bytes moved.
bool op_output_is_view(const Node& node);
// An elementwise op a runtime may run in place on input 0 when that input dies
// at the node and has the output's size (what modelstat's executor does, and
// PyTorch's inplace=True activations). Inference only.
bool op_may_run_in_place(const Node& node);
// What autograd keeps of this node for its backward.
BackwardSaves op_backward_saves(const Node& node);
// The node's dense-contraction family (DenseFamily above).
DenseFamily op_dense_family(const Node& node);
// A transcendental or composite function runtimes approximate (exp, tanh,
// erf, sigmoid, softmax...): two correct kernels may differ in its last bits.
bool op_is_approximated(const Node& node);
// Whether input `k` of `node` (an initializer of `graph`) is a constant of the
// op (BatchNormalization's running statistics, Clip's bounds, Pow's exponent,
// a one-element arithmetic constant) rather than a trainable weight.
bool op_input_is_constant(const Graph& graph, const Node& node, size_t k);

// Bits per value when input `k` of `node` holds weights bit-packed in bytes
// (MatMulNBits' B: its `bits` attribute, default 4); 0 when it does not.
int op_packed_weight_bits(const Node& node, size_t k);
// The one input that can hold bit-packed weights (op_packed_weight_bits is 0
// for every other), or -1 when the op has none.
int op_packed_weight_input(const Node& node);

// Whether a BatchNormalization or Dropout node runs in training mode, by the
// rule of the opset the model imports (`opset`), which changed twice; the one
// place this rule lives (the cost rules and the executor ask it).
// BatchNormalization: is_test=0, the default, before opset 7; from 7 to 13,
// more than Y asked for (the spec's "output case #1"); training_mode from 14.
// Dropout: is_test=0, the default, before opset 7; none from 7 to 11; from
// 12 its training_mode is an input value, seen by the executor only (false
// here). Other ops: false.
bool op_training_mode(const Node& node, int64_t opset);

}  // namespace modelstat

// Pattern "conv_group": a float 2-D or 1-D Conv with a constant weight, the
// BatchNormalization an export may leave after it and its activations and a
// residual Add, as one oneDNN fp32 convolution (profiler/ops/fp32_conv.hpp):
//
//   Conv -> [BatchNormalization] -> ( Relu | LeakyRelu | Clip | HardSigmoid |
//            HardSwish | Sigmoid | Tanh | Sigmoid+Mul (SiLU) | Add of a residual )*
//
// A member joins only when the tensor before it is read by the group alone
// (and is no graph output), its constants' values are at hand, and, for an
// Add, the other operand has the output's shape and is computed before the
// Conv runs (a residual from an earlier branch: in a ResNet block the
// shortcut's Add joins whichever of the two convolutions runs last). The
// BatchNormalization (inference form, constant statistics) folds into the
// weights and bias; the rest become post-ops, in graph order. A Conv alone is
// a group of one: it still runs on the prepacked kernel.
//
// Float16 Convs qualify too (every tensor of the group in the
// Conv's dtype): the kernel computes in fp32 (weights widened once, when it
// is built), its input widened on entry and its output rounded back on exit,
// as a runtime without float16 convolutions on the CPU runs them (ONNX
// Runtime wraps them in Casts); its members' outputs are then not rounded to
// float16 in between.
#include "analyzer/fusion/pattern.hpp"

namespace modelstat::fusion {

namespace {

// A BatchNormalization in inference form on `t` with constant statistics.
bool foldable_batch_norm(const Graph& g, const Node& n, int t) {
  if (!n.domain.empty() || n.op_type != "BatchNormalization" || n.inputs.size() < 5 || n.inputs[0] != t) return false;
  if (n.attr_int("training_mode", 0) != 0) return false;
  for (size_t k = 1; k < 5; ++k)
    if (n.inputs[k] < 0 || constant_source(g, n.inputs[k]) < 0) return false;
  for (size_t o = 1; o < n.outputs.size(); ++o)
    if (n.outputs[o] >= 0) return false;  // running statistics asked for: training form
  return true;
}

}  // namespace

std::optional<FusedGroup> match_conv_group(const PatternContext& ctx, int i) {
  const Graph& g = ctx.g;
  const Node& conv = g.nodes[size_t(i)];
  if (!conv.domain.empty() || conv.op_type != "Conv") return std::nullopt;
  if (conv.inputs.size() < 2 || conv.outputs.size() != 1 || conv.outputs[0] < 0) return std::nullopt;
  const int x = conv.inputs[0], w = conv.inputs[1];
  if (x < 0 || w < 0 || !same_group_float(g, x, conv.outputs[0])) return std::nullopt;
  ConvKernelSpec spec;
  spec.weight = constant_source(g, w);
  if (spec.weight < 0) return std::nullopt;
  const Tensor& weight = g.tensors[size_t(spec.weight)];
  // 2-D convolutions, and 1-D ones (audio, sequence models), which run as 2-D with a height of 1.
  if (!same_group_float(g, x, spec.weight) || !weight.shape.fully_known()) return std::nullopt;
  if (weight.shape.dims.size() != 4 && weight.shape.dims.size() != 3) return std::nullopt;
  if (!constant_or_absent(g, conv, 2)) return std::nullopt;
  if (conv.inputs.size() > 2 && conv.inputs[2] >= 0) spec.bias = constant_source(g, conv.inputs[2]);

  FusedGroup group;
  group.kind = FusedKind::Conv;
  group.head = i;
  group.packed_constants = {spec.weight};
  if (spec.bias >= 0) group.packed_constants.push_back(spec.bias);
  int t = conv.outputs[0], residual = -1;
  for (;;) {
    const auto& readers = g.tensors[size_t(t)].consumers;
    if (!ctx.graph_output[size_t(t)] && spec.post_ops.empty() && spec.batch_norm < 0 && readers.size() == 1 &&
        !ctx.taken(readers[0]) && foldable_batch_norm(g, g.nodes[size_t(readers[0])], t)) {
      spec.batch_norm = readers[0];
      group.members.push_back(readers[0]);
      const Node& bn = g.nodes[size_t(readers[0])];
      for (size_t k = 1; k < 5; ++k) group.packed_constants.push_back(constant_source(g, bn.inputs[k]));
      t = bn.outputs[0];
      continue;
    }
    if (!take_post_op(ctx, i, false, t, residual, spec.post_ops, group.members)) break;
  }
  group.inputs = {x, residual};
  group.output = t;
  group.spec = std::move(spec);
  return group;
}

}  // namespace modelstat::fusion

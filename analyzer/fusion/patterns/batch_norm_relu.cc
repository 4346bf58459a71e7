// Pattern "batch_norm_relu": an inference BatchNormalization whose one reader
// is a Relu (pre-activation blocks: DenseNet's norm -> relu -> conv, the
// pre-activation ResNets), runs as one pass at the BatchNormalization,
//   y = max(x * a + b, 0),  a = scale / sqrt(var + eps),  b = B - mean * a,
// where written as two nodes it reads and writes the activation twice.
// ONNX Runtime runs the pair as one kernel too (its NCHWc transformer makes
// the BatchNormalization a depthwise 1x1 convolution with the Relu fused).
// A BatchNormalization after a Conv is folded into the Conv's group first
// (conv_group.cc, earlier in the list); a training-mode one (batch
// statistics) or one whose output is read elsewhere runs as written.
#include "analyzer/fusion/pattern.hpp"

#include "analyzer/op_traits.hpp"

namespace modelstat::fusion {

std::optional<FusedGroup> match_batch_norm_relu(const PatternContext& ctx, int i) {
  const Graph& g = ctx.g;
  const Node& bn = g.nodes[size_t(i)];
  if (!is_op(bn, "BatchNormalization", 5) || op_training_mode(bn, ctx.opset)) return std::nullopt;
  if (ctx.opset < 9 && bn.attr_int("spatial", 1) == 0) return std::nullopt;  // statistics per activation
  const int x = bn.inputs[0];
  if (x < 0 || !is_float(g, x)) return std::nullopt;
  for (size_t k = 1; k < 5; ++k)
    if (bn.inputs[k] < 0) return std::nullopt;
  const int relu = only_reader(ctx, bn.outputs[0]);
  if (relu < 0 || ctx.taken(relu) || !is_op(g.nodes[size_t(relu)], "Relu", 1)) return std::nullopt;
  FusedGroup group;
  group.head = i;
  group.members = {relu};
  group.inputs.assign(bn.inputs.begin(), bn.inputs.end());
  group.output = g.nodes[size_t(relu)].outputs[0];
  // The node's own attributes (epsilon; before opset 7 is_test, which makes
  // it an inference node), and the Relu.
  RewriteSpec spec{"BatchNormalization", "", ctx.opset, bn.attributes};
  spec.attributes[std::string(kFusedReluAttribute)] = int64_t(1);
  group.spec = std::move(spec);
  return group;
}

}  // namespace modelstat::fusion

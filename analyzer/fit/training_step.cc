// The training step's gradient flow and optimizer update (training_step.hpp).
#include "analyzer/fit/training_step.hpp"

#include <algorithm>

namespace modelstat::fit {

GradientFlow gradient_flow(const Graph& g) { return gradient_flow(g, trainable_initializers(g)); }

GradientFlow gradient_flow(const Graph& g, std::vector<bool> trainable) {
  GradientFlow f;
  f.trainable = std::move(trainable);
  f.requires_grad = f.trainable;
  f.any_input.assign(g.nodes.size(), false);
  f.in_backward.assign(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    for (int t : n.inputs) f.any_input[i] = f.any_input[i] || (t >= 0 && f.requires_grad[size_t(t)]);
    if (!f.any_input[i]) continue;
    for (int t : n.outputs)
      if (t >= 0 && dtype_is_floating(g.tensors[size_t(t)].dtype)) f.requires_grad[size_t(t)] = f.in_backward[i] = true;
  }
  return f;
}

TrainableWeights trainable_weights(const Graph& g, const GradientFlow& flow) {
  TrainableWeights w;
  for (size_t t = 0; t < g.tensors.size(); ++t)
    if (flow.trainable[t]) {
      w.params += g.tensors[t].shape.element_count().value_or(0);
      const int64_t bytes = g.tensors[t].size_bytes().value_or(0);
      w.bytes += bytes;
      w.largest_tensor_bytes = std::max(w.largest_tensor_bytes, bytes);
      w.tensor_bytes.push_back(bytes);
      ++w.tensors;
    }
  return w;
}

OptimizerCost optimizer_cost(Optimizer o) {
  switch (o) {
    // p.add_(g, -lr): read p, g, write p.
    case Optimizer::Sgd: return {3, 1, 0, 0};
    // v.mul_(m) (2), v.add_(g) (3), p.add_(v, -lr) (3).
    case Optimizer::Momentum: return {8, 3, 0, 1};
    // m.mul_ (2), m.add_ (3), v.mul_ (2), v.addcmul_(g, g) (3), t = v.sqrt() (2),
    // d = t / c (2), d.add_(eps) (2), p.addcdiv_(m, d) (4); t and d live together.
    case Optimizer::Adam: return {20, 8, 2, 2};
  }
  return {0, 0, 0, 0};
}

}  // namespace modelstat::fit

// What a training step adds to a forward pass, as the fit forecast models it
// (docs/FIT.md, "Training step"): which tensors need a gradient (one pass over
// the graph, shared by the memory and the latency forecasts), the trainable
// weights, and what one optimizer update does per element and per tensor.
#pragma once

#include <cstdint>
#include <vector>

#include "modelstat/graph.hpp"
#include "modelstat/optimizer.hpp"

namespace modelstat::fit {

// Gradients flow from the trainable weights (trainable_initializers) forward:
// a node with an input that requires grad is differentiated, and its floating
// outputs require grad in turn.
struct GradientFlow {
  std::vector<bool> trainable;      // per tensor: a trainable weight
  std::vector<bool> requires_grad;  // per tensor
  std::vector<bool> any_input;      // per node: some input requires grad (autograd records it)
  std::vector<bool> in_backward;    // per node: and it has a floating output (backward runs through it)
};
GradientFlow gradient_flow(const Graph& g);
// The same with the trainable weights given (a rewritten graph's: training_graph.hpp).
GradientFlow gradient_flow(const Graph& g, std::vector<bool> trainable);

// The trainable weights' totals.
struct TrainableWeights {
  int64_t params = 0;              // elements
  int64_t bytes = 0;
  int64_t tensors = 0;
  int64_t largest_tensor_bytes = 0;
  std::vector<int64_t> tensor_bytes;  // per trainable tensor
};
TrainableWeights trainable_weights(const Graph& g, const GradientFlow& flow);

// One optimizer update as PyTorch's single-tensor (for-loop) optimizers write
// it, gradients then set to none: element accesses per trainable element, ops
// per weight tensor, and temporaries the size of one weight tensor.
struct OptimizerCost {
  int element_accesses;
  int ops_per_tensor;
  int temporaries;
  int state_copies;  // optimizer state per trainable weight (momentum 1, adam 2)
};
OptimizerCost optimizer_cost(Optimizer o);

}  // namespace modelstat::fit

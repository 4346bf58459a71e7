// The graph a training step runs, as the memory forecast sees it
// (docs/FIT.md, "Precision, checkpointing, sharding"): the model's graph with
// each tensor in the dtype the precision computes it in, autocast's casts as
// Cast nodes, and which outputs activation checkpointing recomputes in
// backward instead of keeping.
#pragma once

#include <string>
#include <vector>

#include "modelstat/fit.hpp"
#include "modelstat/graph.hpp"

namespace modelstat::fit {

struct TrainingGraph {
  Graph graph;                    // tensors keep their indices; inserted tensors follow
  std::vector<bool> trainable;    // per tensor: a trainable weight (trainable_initializers of the model's graph)
  std::vector<bool> weight_copy;  // per tensor: a 16-bit copy of a trainable weight (autocast's cached cast)
  // Per node: -1 when autograd keeps what it saves as usual; otherwise the
  // outputs are dropped after their last forward use and recomputed at the
  // backward of that node (checkpointing).
  std::vector<int> recompute_at;
  int recomputed_regions = 0;  // attention cores (selective) or blocks (full) found
  std::string layout;          // which bytes are 16-bit, for the output
};

// The ONNX ops whose executor call LibTorch 1.13's CPU autocast runs in 16
// bits (its lower-precision list: conv, matmul, mm, addmm, bmm, ...).
bool autocast_lower_precision_op(const Node& node);

TrainingGraph training_graph(const Graph& g, const FitOptions& options);

// Full checkpointing's unit: the block a node belongs to, from its name: the
// path up to the first component (not the node's own) that ends in an
// index, e.g. "/encoder/layer.3/attention/MatMul" -> "/encoder/layer.3"
// ("" outside any block). torch.onnx names nodes by module path, and
// checkpointing wraps one such repeated module.
std::string block_of(const std::string& node_name);

}  // namespace modelstat::fit

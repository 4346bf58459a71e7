// Nodes whose outputs are the same on every run of a graph with the same
// input shapes: what an inference runtime computes once, when the session is
// built (ONNX Runtime's constant folding with the shapes it knows), instead
// of on every run. Shape arithmetic is the common case: Shape, Gather of a
// dim, Unsqueeze, Concat, Slice, Cast of sizes, the masks and position ids
// built from them; so is weight rearranging written as nodes (an exporter's
// Slice/Concat reordering of LSTM gates, a Transpose of a weight).
//
// A tensor is run-invariant when it is a constant, an outer-scope value
// that is run-invariant in the scope that defines it (a subgraph of an If
// reading its parent's weights), the output of Shape or Size of a tensor
// whose shape the analysis knows (fixed by the input shapes and the
// constants), or an output of a deterministic node without subgraphs all of
// whose inputs are run-invariant (Dropout excepted: it may draw a random
// mask); an output larger than kMaxFoldBytes stays computed per run. In a
// Loop or Scan body nothing is (a tensor's shape may change between trips).
// The executor runs such a node once per set of input shapes and keeps its
// outputs (profiler/steps/op_step.cc, FoldedStep). Constant nodes themselves
// are not listed: they are constants.
#pragma once

#include <cstdint>
#include <vector>

#include "modelstat/graph.hpp"

namespace modelstat {

// Outputs above this many bytes are recomputed every run (a large mask is
// memory a deployment would not keep twice).
inline constexpr int64_t kMaxFoldBytes = int64_t(1) << 20;

struct RunInvariance {
  std::vector<bool> nodes;    // per node: run-invariant (and not a Constant node)
  std::vector<bool> tensors;  // per tensor: its value is the same on every run with the same input shapes
};

// Of `g`. `in_loop_body`: g is, or is inside, a Loop or Scan body (then
// nothing is). `parent`, `parent_invariance`: for a subgraph, the graph whose
// node holds it and that graph's invariance: an outer-scope value of g is
// invariant where it is in `parent` (the loader imports an outer name into
// every scope between its definition and its reader).
RunInvariance run_invariance(const Graph& g, bool in_loop_body, const Graph* parent = nullptr,
                             const RunInvariance* parent_invariance = nullptr);

}  // namespace modelstat

// Nodes whose outputs are the same on every run of a graph with the same
// input shapes: what an inference runtime computes once, when the session is
// built (ONNX Runtime's constant folding with the shapes it knows), instead
// of on every run. Shape arithmetic is the common case: Shape, Gather of a
// dim, Unsqueeze, Concat, Slice, Cast of sizes, the masks and position ids
// built from them.
//
// A tensor is run-invariant when it is a constant, the output of Shape or
// Size of a tensor whose shape the analysis knows (fixed by the input shapes
// and the constants), or an output of a deterministic node without subgraphs
// all of whose inputs are run-invariant (Dropout excepted: it may draw a
// random mask); an output larger than kMaxFoldBytes stays computed per run.
// In a Loop or Scan body nothing is (a tensor's shape may change between
// trips). The executor runs such a node once per set of input shapes and
// keeps its outputs (profiler/steps/op_step.cc, FoldedStep); `fit` prices it
// at nothing. Constant nodes themselves are not listed: they are constants.
#pragma once

#include <cstdint>
#include <vector>

#include "modelstat/graph.hpp"

namespace modelstat {

// Outputs above this many bytes are recomputed every run (a large mask is
// memory a deployment would not keep twice).
inline constexpr int64_t kMaxFoldBytes = int64_t(1) << 20;

// Per node of `g`: run-invariant (and not a Constant node). `in_loop_body`:
// g is, or is inside, a Loop or Scan body (then none is).
std::vector<bool> run_invariant_nodes(const Graph& g, bool in_loop_body);

}  // namespace modelstat

// The fit forecast's memory (docs/FIT.md, "Memory"): the peak of inference or
// of one training step over the activation buffers of include/modelstat/lifetimes.hpp,
// and the bytes each node allocates afresh ("Fresh memory").
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/fit/training_graph.hpp"
#include "analyzer/fit/training_step.hpp"
#include "modelstat/lifetimes.hpp"
#include "modelstat/fit.hpp"

namespace modelstat::fit {

// How activations share buffers in each forecast: inference lets views share
// their input's buffer and elementwise ops run in place; a training step keeps
// views only (autograd saves the inputs an in-place op would overwrite).
BufferSharing forecast_sharing(bool train);

// A node's workspace during a training step: MaxPool keeps its indices for
// backward (counted as saved), not as scratch.
std::vector<int64_t> training_workspace(const Graph& g, const std::vector<int64_t>& workspace);

// The memory forecast; `workspace`: each node of the model's scratch in a
// forward pass. A training step (options.train) walks `training` (the step's
// graph: precision's dtypes, autocast's casts, checkpointing's recompute
// marks) with `training_workspace_bytes`, its nodes' forward scratch
// (training_workspace derives the step's); inference passes nullptr.
MemoryForecast forecast_memory(const AnalysisResult& analysis, const FitOptions& options,
                               const TrainableWeights& weights, const std::vector<int64_t>& workspace,
                               const TrainingGraph* training, const std::vector<int64_t>& training_workspace_bytes);

// Bytes each node allocates in buffers above `threshold`: the buffers it
// creates (views and in-place results share their input's, as in the memory
// forecast) and its scratch.
std::vector<int64_t> fresh_forward_bytes(const Graph& g, bool train, const std::vector<int64_t>& workspace,
                                         int64_t threshold);

}  // namespace modelstat::fit

// Peak activation memory from tensor lifetimes over the execution order.
#pragma once

#include <cstdint>

#include "modelstat/graph.hpp"

namespace modelstat {

struct PeakMemory {
  int64_t peak_bytes = 0;
  int peak_node = -1;          // index of the node during which the peak occurs
  bool lower_bound = false;    // some activation sizes were unknown (counted as 0)
  int64_t input_bytes = 0;     // graph inputs
  int64_t output_bytes = 0;    // graph outputs
};

// Model: every activation (graph input or node output, not constants) is
// allocated when its producer runs and freed after its last consumer; graph
// outputs live to the end; a node's inputs and outputs are live together
// while it runs. No aliasing is assumed (a Reshape output is its own buffer),
// so this is what a simple allocator without in-place reuse needs.
PeakMemory peak_activation_memory(const Graph& graph);

}  // namespace modelstat

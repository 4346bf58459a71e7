// Tensor lifetimes over the execution order: the one analysis behind every
// "what is live when" question in modelstat. The static analysis' peak
// (`modelstat m.onnx`), the fit forecast's memory (`modelstat fit`) and the
// executor's release plan (profiler/executor.cc) all read it; what differs
// between them is only which tensors may share a buffer (BufferSharing) and
// whether the caller's graph inputs stay live, and each says so in its output
// (docs/COST_MODEL.md, "Peak activation memory"; docs/FIT.md, "Memory").
// Op facts (is a view, may run in place) come from analyzer/op_traits.hpp.
#pragma once

#include <cstdint>
#include <vector>

#include "modelstat/graph.hpp"

namespace modelstat {

// Per tensor: the node that reads it last, and per node the tensors to release
// after it has run. A tensor nobody reads is released right after its
// producer; graph outputs are never released. Weights and graph inputs have
// last uses too (an executor drops its reference to them).
struct TensorLifetimes {
  std::vector<int> last_use;                    // per tensor; its producer when unread; -1 when neither
  std::vector<bool> kept;                       // per tensor: a graph output, live to the end
  std::vector<std::vector<int>> release_after;  // per node: tensors whose lifetime ends with it
};
TensorLifetimes tensor_lifetimes(const Graph& graph);

// Which activations may share one buffer.
enum class BufferSharing {
  None,             // every activation is its own buffer (a simple allocator)
  Views,            // a view (op_output_is_view) shares its input's buffer
  ViewsAndInPlace,  // and an op that may run in place (op_may_run_in_place) reuses an input that dies with
                    // it, read once, of the output's dtype and size (inference only)
};
const char* buffer_sharing_rule(BufferSharing sharing);  // how outputs describe the quantity

// Activation buffers (graph inputs and node outputs; constants are not
// activations): allocated by the node producing their first tensor, freed
// after the last node reading any of their tensors.
struct Buffers {
  std::vector<int> of_tensor;   // per tensor; -1: not an activation
  std::vector<int64_t> bytes;   // per buffer (0 when unknown: see lower_bound)
  std::vector<int> first_node;  // per buffer: its producer (-1: a graph input)
  std::vector<int> last_use;    // per buffer: the last node reading any of its tensors (-1: none)
  std::vector<bool> kept;       // per buffer: holds a graph output (or a kept graph input): lives to the end
  bool lower_bound = false;     // some activation size is unknown (counted as 0)
};
// keep_graph_inputs: the caller owns the inputs, so they stay live throughout
// (as a deployment holds its input batch); otherwise they are freed after
// their last reader like any activation.
Buffers map_buffers(const Graph& graph, BufferSharing sharing, bool keep_graph_inputs);

// The largest live total over the execution order: buffers live at the start
// (graph inputs), then per node its new buffers are added, the total (plus
// that node's transient `workspace`, when given) is compared, and the buffers
// whose last use it is are freed. A node's inputs and outputs are therefore
// live together while it runs.
struct LivePeak {
  int64_t activation_bytes = 0;  // buffers live at the peak
  int64_t workspace_bytes = 0;   // the peak node's workspace
  int node = -1;                 // -1: the peak is the graph inputs alone
};
LivePeak forward_peak(const Buffers& buffers, size_t num_nodes, const std::vector<int64_t>& workspace = {});

// The static analysis' peak (AnalysisTotals::peak_activation_bytes): no buffer
// sharing, graph inputs freed after their last reader.
struct PeakMemory {
  int64_t peak_bytes = 0;
  int peak_node = -1;        // index of the node during which the peak occurs
  bool lower_bound = false;  // some activation sizes were unknown (counted as 0)
  int64_t input_bytes = 0;   // graph inputs
  int64_t output_bytes = 0;  // graph outputs
};
PeakMemory peak_activation_memory(const Graph& graph);

}  // namespace modelstat

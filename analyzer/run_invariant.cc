// Run-invariant nodes (run_invariant.hpp).
#include "analyzer/run_invariant.hpp"

namespace modelstat {

std::vector<bool> run_invariant_nodes(const Graph& g, bool in_loop_body) {
  std::vector<bool> folded(g.nodes.size(), false);
  if (in_loop_body) return folded;
  std::vector<bool> invariant(g.tensors.size(), false);
  for (size_t t = 0; t < g.tensors.size(); ++t) invariant[t] = g.tensors[t].is_constant();
  // Nodes are in topological order: one pass.
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (!n.subgraphs().empty() || n.outputs.empty()) continue;
    if (n.domain.empty() && (n.op_type == "Constant" || n.op_type == "Dropout")) continue;
    bool inputs_invariant = true;
    if (n.domain.empty() && (n.op_type == "Shape" || n.op_type == "Size")) {
      inputs_invariant = !n.inputs.empty() && n.inputs[0] >= 0 && g.tensors[size_t(n.inputs[0])].shape.fully_known();
    } else {
      for (int t : n.inputs) inputs_invariant = inputs_invariant && (t < 0 || invariant[size_t(t)]);
    }
    if (!inputs_invariant) continue;
    bool small = true;
    for (int t : n.outputs) {
      if (t < 0) continue;
      const auto bytes = g.tensors[size_t(t)].size_bytes();
      small = small && bytes && *bytes <= kMaxFoldBytes;
    }
    if (!small) continue;
    folded[i] = true;
    for (int t : n.outputs)
      if (t >= 0) invariant[size_t(t)] = true;
  }
  return folded;
}

}  // namespace modelstat

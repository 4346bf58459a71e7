// Run-invariant nodes (run_invariant.hpp).
#include "analyzer/run_invariant.hpp"

namespace modelstat {

RunInvariance run_invariance(const Graph& g, bool in_loop_body, const Graph* parent,
                             const RunInvariance* parent_invariance) {
  RunInvariance result;
  result.nodes.assign(g.nodes.size(), false);
  result.tensors.assign(g.tensors.size(), false);
  if (in_loop_body) return result;
  std::vector<bool>& invariant = result.tensors;
  for (size_t t = 0; t < g.tensors.size(); ++t) invariant[t] = g.tensors[t].is_constant();
  if (parent && parent_invariance)
    for (const std::string& name : g.outer_scope_inputs) {
      const int here = g.find_tensor(name), there = parent->find_tensor(name);
      if (here >= 0 && there >= 0 && size_t(there) < parent_invariance->tensors.size())
        invariant[size_t(here)] = parent_invariance->tensors[size_t(there)];
    }
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
    result.nodes[i] = true;
    for (int t : n.outputs)
      if (t >= 0) invariant[size_t(t)] = true;
  }
  return result;
}

}  // namespace modelstat

// Tensor lifetimes, activation buffers and the live peak (see lifetimes.hpp).
#include "modelstat/lifetimes.hpp"

#include <algorithm>

#include "analyzer/op_traits.hpp"

namespace modelstat {

namespace {

bool is_activation(const Tensor& t) { return t.role == TensorRole::Input || t.role == TensorRole::Activation; }

// The last node that reads each tensor (TensorLifetimes::last_use).
std::vector<int> last_uses(const Graph& g) {
  std::vector<int> last(g.tensors.size(), -1);
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    for (int c : g.tensors[t].consumers) last[t] = std::max(last[t], c);
    if (last[t] < 0) last[t] = g.tensors[t].producer;  // unread: released right after its producer
  }
  return last;
}

}  // namespace

TensorLifetimes tensor_lifetimes(const Graph& g) {
  TensorLifetimes l;
  l.last_use = last_uses(g);
  l.kept.assign(g.tensors.size(), false);
  l.release_after.resize(g.nodes.size());
  for (int o : g.outputs)
    if (o >= 0) l.kept[size_t(o)] = true;
  for (size_t t = 0; t < g.tensors.size(); ++t)
    if (!l.kept[t] && l.last_use[t] >= 0) l.release_after[size_t(l.last_use[t])].push_back(int(t));
  return l;
}

const char* buffer_sharing_rule(BufferSharing sharing) {
  if (sharing == BufferSharing::None) return "no buffer sharing";
  if (sharing == BufferSharing::Views) return "views share their input's buffer";
  return "views share their input's buffer, elementwise ops run in place";
}

Buffers map_buffers(const Graph& g, BufferSharing sharing, bool keep_graph_inputs) {
  Buffers m;
  m.of_tensor.assign(g.tensors.size(), -1);
  const std::vector<int> last = last_uses(g);
  auto new_buffer = [&](int t, int node) {
    m.of_tensor[size_t(t)] = int(m.bytes.size());
    const auto size = g.tensors[size_t(t)].size_bytes();
    if (!size) m.lower_bound = true;
    m.bytes.push_back(size.value_or(0));
    m.first_node.push_back(node);
    m.last_use.push_back(last[size_t(t)]);
    m.kept.push_back(false);
  };
  for (int t : g.inputs) new_buffer(t, -1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const int in0 = n.inputs.empty() ? -1 : n.inputs[0];
    const int b0 = in0 >= 0 ? m.of_tensor[size_t(in0)] : -1;
    // The input k whose buffer node i may overwrite with output t (the executor's rule, elementwise.cc).
    const auto overwritable = [&](size_t k, int t) {
      const int in = k < n.inputs.size() ? n.inputs[k] : -1;
      const int buffer = in >= 0 ? m.of_tensor[size_t(in)] : -1;
      if (buffer < 0) return -1;
      const Tensor& x = g.tensors[size_t(in)];
      const Tensor& y = g.tensors[size_t(t)];
      return x.role == TensorRole::Activation && m.last_use[size_t(buffer)] == int(i) &&
                     std::count(n.inputs.begin(), n.inputs.end(), in) == 1 && x.dtype == y.dtype && x.size_bytes() &&
                     x.size_bytes() == y.size_bytes()
                 ? buffer
                 : -1;
    };
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      const int t = n.outputs[o];
      if (t < 0 || !is_activation(g.tensors[size_t(t)])) continue;
      int reuse = -1;
      if (sharing != BufferSharing::None && o == 0 && b0 >= 0 && op_output_is_view(n)) reuse = b0;
      if (sharing == BufferSharing::ViewsAndInPlace && o == 0 && op_may_run_in_place(n)) {
        int in_place = overwritable(0, t);
        // Add and Mul take the result into input 1 when input 0 cannot (squeeze-excite's Mul(scale, x)).
        if (in_place < 0 && n.domain.empty() && (n.op_type == "Add" || n.op_type == "Mul"))
          in_place = overwritable(1, t);
        if (in_place >= 0) reuse = in_place;
      }
      if (reuse >= 0) {
        m.of_tensor[size_t(t)] = reuse;
        m.last_use[size_t(reuse)] = std::max(m.last_use[size_t(reuse)], last[size_t(t)]);
      } else {
        new_buffer(t, int(i));
      }
    }
  }
  for (int o : g.outputs)
    if (o >= 0 && m.of_tensor[size_t(o)] >= 0) m.kept[size_t(m.of_tensor[size_t(o)])] = true;
  if (keep_graph_inputs)
    for (int i : g.inputs)
      if (i >= 0 && m.of_tensor[size_t(i)] >= 0) m.kept[size_t(m.of_tensor[size_t(i)])] = true;
  return m;
}

LivePeak forward_peak(const Buffers& m, size_t num_nodes, const std::vector<int64_t>& workspace) {
  // Only the bytes each node allocates and frees matter, summed per node.
  std::vector<int64_t> allocated(num_nodes, 0), freed(num_nodes, 0);
  int64_t live = 0;
  for (size_t b = 0; b < m.bytes.size(); ++b) {
    if (m.first_node[b] < 0) live += m.bytes[b];
    else allocated[size_t(m.first_node[b])] += m.bytes[b];
    if (!m.kept[b] && m.last_use[b] >= 0) freed[size_t(m.last_use[b])] += m.bytes[b];
  }
  LivePeak peak;
  peak.activation_bytes = live;
  for (size_t i = 0; i < num_nodes; ++i) {
    live += allocated[i];
    const int64_t scratch = i < workspace.size() ? workspace[i] : 0;
    if (live + scratch > peak.activation_bytes + peak.workspace_bytes) peak = {live, scratch, int(i)};
    live -= freed[i];
  }
  return peak;
}

PeakMemory peak_activation_memory(const Graph& g) {
  const Buffers buffers = map_buffers(g, BufferSharing::None, /*keep_graph_inputs=*/false);
  const LivePeak peak = forward_peak(buffers, g.nodes.size());
  PeakMemory result;
  result.peak_bytes = peak.activation_bytes;
  result.peak_node = peak.node;
  result.lower_bound = buffers.lower_bound;
  for (int i : g.inputs) result.input_bytes += buffers.bytes[size_t(buffers.of_tensor[size_t(i)])];
  for (int o : g.outputs)
    if (o >= 0 && buffers.of_tensor[size_t(o)] >= 0) result.output_bytes += buffers.bytes[size_t(buffers.of_tensor[size_t(o)])];
  return result;
}

}  // namespace modelstat

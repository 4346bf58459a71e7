#include "analyzer/memory.hpp"

#include <vector>

namespace modelstat {

PeakMemory peak_activation_memory(const Graph& graph) {
  PeakMemory result;
  const size_t num_tensors = graph.tensors.size();
  const int never = int(graph.nodes.size());  // "lives to the end"
  std::vector<int> last_use(num_tensors, -1);
  std::vector<int64_t> bytes(num_tensors, 0);
  std::vector<bool> is_activation(num_tensors, false);

  for (size_t t = 0; t < num_tensors; ++t) {
    const Tensor& tensor = graph.tensors[t];
    is_activation[t] = tensor.role == TensorRole::Input || tensor.role == TensorRole::Activation;
    if (!is_activation[t]) continue;
    auto size = tensor.size_bytes();
    if (size) bytes[t] = *size;
    else result.lower_bound = true;
    for (int c : tensor.consumers) last_use[t] = std::max(last_use[t], c);
    if (last_use[t] < 0) last_use[t] = tensor.producer;  // dead output: freed right after its producer
  }
  for (int o : graph.outputs) {
    last_use[size_t(o)] = never;
    if (is_activation[size_t(o)]) result.output_bytes += bytes[size_t(o)];
  }

  // Frees scheduled per node.
  std::vector<std::vector<int>> frees(graph.nodes.size());
  int64_t live = 0;
  for (int i : graph.inputs) {
    live += bytes[size_t(i)];
    result.input_bytes += bytes[size_t(i)];
  }
  for (size_t t = 0; t < num_tensors; ++t)
    if (is_activation[t] && last_use[t] >= 0 && last_use[t] < never) frees[size_t(last_use[t])].push_back(int(t));
  result.peak_bytes = live;

  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (int o : graph.nodes[n].outputs)
      if (o >= 0 && is_activation[size_t(o)]) live += bytes[size_t(o)];
    if (live > result.peak_bytes) {
      result.peak_bytes = live;
      result.peak_node = int(n);
    }
    for (int t : frees[n]) live -= bytes[size_t(t)];
  }
  return result;
}

}  // namespace modelstat

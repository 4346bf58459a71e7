// The fit forecast's memory (memory_forecast.hpp); rules in docs/FIT.md, "Memory".
#include "analyzer/fit/memory_forecast.hpp"

#include <algorithm>
#include <set>

#include "analyzer/fit/op_classes.hpp"
#include "modelstat/lifetimes.hpp"
#include "analyzer/op_traits.hpp"

namespace modelstat::fit {

namespace {

enum class Phase { Forward, Backward, Optimizer };

struct Peak {
  int64_t activation_bytes = 0;  // without workspace
  int64_t workspace_bytes = 0;
  int64_t gradient_bytes = 0;    // weight gradients live (training)
  int node = -1;
  Phase phase = Phase::Forward;
  int64_t total() const { return activation_bytes + workspace_bytes + gradient_bytes; }
};

void consider(Peak& peak, int64_t live, int64_t workspace, int64_t gradients, int node, Phase phase) {
  if (live + workspace + gradients > peak.total()) peak = {live, workspace, gradients, node, phase};
}

// Inference: buffers allocated when produced, freed after their last reader;
// the node's workspace is live while it runs.
Peak inference_peak(const Graph& g, const std::vector<int64_t>& workspace, bool* lower_bound) {
  const Buffers m = map_buffers(g, forecast_sharing(/*train=*/false), /*keep_graph_inputs=*/true);
  *lower_bound = *lower_bound || m.lower_bound;
  const LivePeak live = forward_peak(m, g.nodes.size(), workspace);
  return {live.activation_bytes, live.workspace_bytes, 0, live.node, Phase::Forward};
}

struct TrainingMemory {
  Peak peak;
  int64_t saved_bytes = 0;  // held for backward at the end of forward
};

// One training step: forward keeps what backward needs (saved tensors, MaxPool
// indices); backward walks the nodes in reverse, allocating activation
// gradients and weight gradients and releasing saved tensors once their last
// user has run; the optimizer then holds every weight gradient and its own
// temporaries (optimizer_transient). Gradients are set to none after each
// update (zero_grad(set_to_none=True)), so none is live during forward.
TrainingMemory training_peak(const Graph& g, const GradientFlow& flow, const std::vector<int64_t>& workspace,
                             int64_t optimizer_transient, bool* lower_bound) {
  const Buffers m = map_buffers(g, forecast_sharing(/*train=*/true), /*keep_graph_inputs=*/true);
  *lower_bound = *lower_bound || m.lower_bound;
  const size_t nodes = g.nodes.size();
  const std::vector<bool>& trainable = flow.trainable;
  const std::vector<bool>& requires_grad = flow.requires_grad;
  const std::vector<bool>& in_backward = flow.in_backward;

  // Saved buffers and the earliest node (in forward order) that saves each:
  // backward runs in reverse, so that node is the last to release it.
  std::vector<int> saved_until(m.bytes.size(), -1);  // -1: not saved; else released after backward of that node
  std::vector<int64_t> extra_saved(nodes, 0);        // MaxPool indices (int64 per output element)
  for (size_t i = 0; i < nodes; ++i) {
    if (!in_backward[i]) continue;
    const Node& n = g.nodes[i];
    std::vector<int> saved;
    switch (op_backward_saves(n)) {
      case BackwardSaves::Inputs: saved = n.inputs; break;
      case BackwardSaves::Output: saved = {n.outputs.empty() ? -1 : n.outputs[0]}; break;
      case BackwardSaves::Nothing: break;
    }
    for (int t : saved) {
      if (t < 0) continue;
      const int b = m.of_tensor[size_t(t)];
      if (b < 0) continue;  // a weight: persistent anyway
      if (saved_until[size_t(b)] < 0 || int(i) < saved_until[size_t(b)]) saved_until[size_t(b)] = int(i);
    }
    if (n.domain.empty() && n.op_type == "MaxPool" && !n.outputs.empty() && n.outputs[0] >= 0) {
      const auto elements = g.tensors[size_t(n.outputs[0])].shape.element_count();
      extra_saved[i] = elements.value_or(0) * 8;
    }
  }

  // Forward.
  std::vector<std::vector<int>> allocs(nodes), frees(nodes);
  int64_t live = 0;
  for (size_t b = 0; b < m.bytes.size(); ++b) {
    if (m.first_node[b] < 0) live += m.bytes[b];
    else allocs[size_t(m.first_node[b])].push_back(int(b));
    if (!m.kept[b] && saved_until[b] < 0 && m.last_use[b] >= 0) frees[size_t(m.last_use[b])].push_back(int(b));
  }
  TrainingMemory result;
  for (size_t i = 0; i < nodes; ++i) {
    for (int b : allocs[i]) live += m.bytes[size_t(b)];
    live += extra_saved[i];
    consider(result.peak, live, workspace[i], 0, int(i), Phase::Forward);
    for (int b : frees[i]) live -= m.bytes[size_t(b)];
  }
  result.saved_bytes = live;

  // Backward: gradients of activations, allocated by the first consumer (in
  // reverse) that produces one, freed after their producer's backward.
  // A view's gradient is a view of its output's gradient.
  std::vector<std::vector<int>> saved_release(nodes);
  for (size_t b = 0; b < m.bytes.size(); ++b)
    if (saved_until[b] >= 0 && !m.kept[b]) saved_release[size_t(saved_until[b])].push_back(int(b));
  std::vector<bool> grad_live(m.bytes.size(), false);
  std::vector<bool> weight_grad_live(g.tensors.size(), false);
  int64_t weight_grads = 0;
  for (int o : g.outputs)
    if (o >= 0 && requires_grad[size_t(o)] && m.of_tensor[size_t(o)] >= 0) {
      grad_live[size_t(m.of_tensor[size_t(o)])] = true;
      live += m.bytes[size_t(m.of_tensor[size_t(o)])];
    }
  for (size_t r = nodes; r-- > 0;) {
    if (!in_backward[r]) continue;
    const Node& n = g.nodes[r];
    for (int t : n.inputs) {
      if (t < 0 || !requires_grad[size_t(t)]) continue;
      if (trainable[size_t(t)]) {
        if (!weight_grad_live[size_t(t)]) {
          weight_grad_live[size_t(t)] = true;
          weight_grads += tensor_bytes(g, t);
        }
        continue;
      }
      const int b = m.of_tensor[size_t(t)];
      if (b < 0 || grad_live[size_t(b)]) continue;
      grad_live[size_t(b)] = true;
      live += m.bytes[size_t(b)];
    }
    consider(result.peak, live, workspace[r], weight_grads, int(r), Phase::Backward);
    // This node produced its outputs: their gradients are consumed now
    // (unless the buffer is shared with an input, as a view's is).
    std::set<int> input_buffers;
    for (int t : n.inputs)
      if (t >= 0 && m.of_tensor[size_t(t)] >= 0) input_buffers.insert(m.of_tensor[size_t(t)]);
    for (int t : n.outputs) {
      if (t < 0) continue;
      const int b = m.of_tensor[size_t(t)];
      if (b >= 0 && grad_live[size_t(b)] && !input_buffers.count(b)) {
        grad_live[size_t(b)] = false;
        live -= m.bytes[size_t(b)];
      }
    }
    for (int b : saved_release[r]) live -= m.bytes[size_t(b)];
    live -= extra_saved[r];
  }
  // Optimizer: every weight gradient, the graph inputs and outputs, its temporaries.
  int64_t outputs = 0;
  for (size_t b = 0; b < m.bytes.size(); ++b)
    if (m.kept[b]) outputs += m.bytes[b];
  consider(result.peak, outputs, optimizer_transient, weight_grads, -1, Phase::Optimizer);
  return result;
}

}  // namespace

BufferSharing forecast_sharing(bool train) { return train ? BufferSharing::Views : BufferSharing::ViewsAndInPlace; }

std::vector<int64_t> training_workspace(const Graph& g, const std::vector<int64_t>& workspace) {
  std::vector<int64_t> out = workspace;
  for (size_t i = 0; i < g.nodes.size() && i < out.size(); ++i)
    if (g.nodes[i].domain.empty() && g.nodes[i].op_type == "MaxPool") out[i] = 0;
  return out;
}

MemoryForecast forecast_memory(const AnalysisResult& analysis, const FitOptions& options, const GradientFlow& flow,
                               const TrainableWeights& weights, const std::vector<int64_t>& workspace) {
  const Graph& g = analysis.model->graph;
  MemoryForecast mem;
  mem.weights_bytes = analysis.totals.weight_bytes;
  for (size_t i = 0; i < workspace.size(); ++i)
    if (workspace[i] > mem.largest_workspace_bytes) {
      mem.largest_workspace_bytes = workspace[i];
      mem.largest_workspace_node = g.nodes[i].name;
    }
  bool lower_bound = false;
  Peak peak_at;
  if (options.train) {
    const OptimizerCost oc = optimizer_cost(options.optimizer);
    mem.trainable_params = weights.params;
    mem.gradient_bytes = weights.bytes;
    mem.optimizer_state_bytes = oc.state_copies * weights.bytes;
    const TrainingMemory tm = training_peak(g, flow, training_workspace(g, workspace),
                                            oc.temporaries * weights.largest_tensor_bytes, &lower_bound);
    peak_at = tm.peak;
    mem.saved_activation_bytes = tm.saved_bytes;
  } else {
    peak_at = inference_peak(g, workspace, &lower_bound);
  }
  mem.activation_peak_bytes = peak_at.activation_bytes;
  mem.activation_sharing = buffer_sharing_rule(forecast_sharing(options.train));
  mem.workspace_bytes = peak_at.workspace_bytes;
  mem.gradient_bytes_at_peak = peak_at.gradient_bytes;
  mem.peak_phase = peak_at.phase == Phase::Forward ? "forward" : peak_at.phase == Phase::Backward ? "backward" : "optimizer";
  mem.peak_node = peak_at.node >= 0 ? g.nodes[size_t(peak_at.node)].name
                                    : std::string(peak_at.phase == Phase::Optimizer ? "(update)" : "(graph inputs)");
  mem.lower_bound = lower_bound;
  mem.total_bytes = mem.weights_bytes + mem.optimizer_state_bytes + mem.gradient_bytes_at_peak +
                    mem.activation_peak_bytes + mem.workspace_bytes;
  return mem;
}

std::vector<int64_t> fresh_forward_bytes(const Graph& g, bool train, const std::vector<int64_t>& workspace,
                                         int64_t threshold) {
  std::vector<int64_t> out(g.nodes.size(), 0);
  if (threshold <= 0) return out;
  const Buffers m = map_buffers(g, forecast_sharing(train), /*keep_graph_inputs=*/true);
  for (size_t b = 0; b < m.bytes.size(); ++b)
    if (m.first_node[b] >= 0 && m.bytes[b] > threshold) out[size_t(m.first_node[b])] += m.bytes[b];
  for (size_t i = 0; i < out.size() && i < workspace.size(); ++i)
    if (workspace[i] > threshold) out[i] += workspace[i];
  return out;
}

}  // namespace modelstat::fit

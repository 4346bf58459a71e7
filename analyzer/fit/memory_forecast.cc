// The fit forecast's memory (memory_forecast.hpp); rules in docs/FIT.md, "Memory".
#include "analyzer/fit/memory_forecast.hpp"

#include <algorithm>
#include <set>

#include "analyzer/fit/op_classes.hpp"
#include "analyzer/fit/sharding.hpp"
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
  int64_t weight_copy_bytes = 0;  // the part of activation_bytes that is 16-bit weight copies
  int64_t total() const { return activation_bytes + workspace_bytes + gradient_bytes; }
};

void consider(Peak& peak, int64_t live, int64_t workspace, int64_t gradients, int node, Phase phase,
              int64_t weight_copies = 0) {
  if (live + workspace + gradients > peak.total()) peak = {live, workspace, gradients, node, phase, weight_copies};
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
// Checkpointing (recompute_at, per node): a recomputed node's saved outputs
// are freed after their last forward use and live again from the backward
// of the node named (where recomputation re-creates them) to their usual
// release. ZeRO-2/3: each weight gradient counts 1/gradient_divisor (reduced
// to its owner as it is produced).
TrainingMemory training_peak(const Graph& g, const GradientFlow& flow, const std::vector<int64_t>& workspace,
                             int64_t optimizer_transient, const std::vector<int>& recompute_at,
                             const std::vector<bool>& weight_copy, int64_t gradient_divisor, bool* lower_bound) {
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
    IndexList saved;
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

  // Which buffers hold a 16-bit weight copy; which are recomputed, and where.
  std::vector<bool> copy_buffer(m.bytes.size(), false);
  for (size_t t = 0; t < weight_copy.size() && t < m.of_tensor.size(); ++t)
    if (weight_copy[t] && m.of_tensor[t] >= 0) copy_buffer[size_t(m.of_tensor[t])] = true;
  std::vector<int> recomputed_at(m.bytes.size(), -1);
  std::vector<std::vector<int>> recreate(nodes);
  for (size_t b = 0; b < m.bytes.size(); ++b) {
    const int producer = m.first_node[b];
    if (producer < 0 || size_t(producer) >= recompute_at.size() || recompute_at[size_t(producer)] < 0) continue;
    if (m.kept[b] || saved_until[b] < 0) continue;  // not held across the step anyway
    recomputed_at[b] = recompute_at[size_t(producer)];
    recreate[size_t(recomputed_at[b])].push_back(int(b));
  }
  int64_t live = 0, copies = 0;
  auto add = [&](size_t b) {
    live += m.bytes[b];
    if (copy_buffer[b]) copies += m.bytes[b];
  };
  auto drop = [&](size_t b) {
    live -= m.bytes[b];
    if (copy_buffer[b]) copies -= m.bytes[b];
  };

  // Forward.
  std::vector<std::vector<int>> allocs(nodes), frees(nodes);
  for (size_t b = 0; b < m.bytes.size(); ++b) {
    if (m.first_node[b] < 0) add(b);
    else allocs[size_t(m.first_node[b])].push_back(int(b));
    const bool held = saved_until[b] >= 0 && recomputed_at[b] < 0;
    if (!m.kept[b] && !held && m.last_use[b] >= 0) frees[size_t(m.last_use[b])].push_back(int(b));
  }
  TrainingMemory result;
  for (size_t i = 0; i < nodes; ++i) {
    for (int b : allocs[i]) add(size_t(b));
    live += extra_saved[i];
    consider(result.peak, live, workspace[i], 0, int(i), Phase::Forward, copies);
    for (int b : frees[i]) drop(size_t(b));
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
    for (int b : recreate[r]) add(size_t(b));  // recomputed for this part of backward
    if (!in_backward[r]) continue;
    const Node& n = g.nodes[r];
    for (int t : n.inputs) {
      if (t < 0 || !requires_grad[size_t(t)]) continue;
      if (trainable[size_t(t)]) {
        if (!weight_grad_live[size_t(t)]) {
          weight_grad_live[size_t(t)] = true;
          weight_grads += tensor_bytes(g, t) / gradient_divisor;
        }
        continue;
      }
      const int b = m.of_tensor[size_t(t)];
      if (b < 0 || grad_live[size_t(b)]) continue;
      grad_live[size_t(b)] = true;
      live += m.bytes[size_t(b)];
    }
    consider(result.peak, live, workspace[r], weight_grads, int(r), Phase::Backward, copies);
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
    for (int b : saved_release[r]) drop(size_t(b));
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

MemoryForecast forecast_memory(const AnalysisResult& analysis, const FitOptions& options,
                               const TrainableWeights& weights, const std::vector<int64_t>& workspace,
                               const TrainingGraph* training, const std::vector<int64_t>& training_workspace_bytes) {
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
  const Graph& step_graph = training ? training->graph : g;
  if (options.train && training) {
    const OptimizerCost oc = optimizer_cost(options.optimizer);
    const bool mixed = options.precision != TrainPrecision::Fp32;
    const bool zero = options.zero_stage >= 0;
    const ModelStateLayout layout = zero_layout(options.precision, options.optimizer, std::max(0, options.zero_stage));
    const int64_t shards = zero ? std::max<int64_t>(1, options.shards) : 1;
    auto per_device = [&](int64_t bytes, bool divided) { return divided ? bytes / shards : bytes; };
    mem.precision = name_of(options.precision);
    mem.precision_layout = training->layout;
    mem.checkpointing = name_of(options.checkpointing);
    mem.recomputed_regions = training->recomputed_regions;
    mem.zero_stage = options.zero_stage;
    mem.shards = shards;
    mem.trainable_params = weights.params;
    // The step's trainable weights in the dtype the layout stores them in.
    int64_t step_weight_bytes = 0;
    for (size_t t = 0; t < training->trainable.size(); ++t)
      if (training->trainable[t]) step_weight_bytes += tensor_bytes(step_graph, int(t));
    mem.gradient_bytes = step_weight_bytes;
    mem.weights_bytes = analysis.totals.weight_bytes - weights.bytes +
                        per_device(step_weight_bytes, zero && layout.parameters_divided);
    // Moments in fp32 per element (the fp32 weights' size), the master copy a
    // 16-bit model's optimizer holds.
    mem.optimizer_state_bytes = per_device(oc.state_copies * weights.bytes, zero && layout.optimizer_divided);
    if (mixed && zero) mem.master_weight_bytes = per_device(weights.params * 4, layout.optimizer_divided);
    for (size_t t = 0; t < training->weight_copy.size(); ++t)
      if (training->weight_copy[t]) mem.low_precision_weight_bytes += tensor_bytes(step_graph, int(t));
    if (zero && layout.parameters_divided)
      mem.gathered_parameter_bytes =
          (layout.parameter_bytes + layout.gradient_bytes) * (weights.largest_tensor_bytes / 4);
    if (zero) {
      if (layout.optimizer_divided && mixed) mem.divided_by_shards.push_back("master weights");
      if (layout.optimizer_divided) mem.divided_by_shards.push_back("optimizer state");
      if (layout.gradients_divided) mem.divided_by_shards.push_back("gradients");
      if (layout.parameters_divided) mem.divided_by_shards.push_back("weights");
      if (mixed && options.optimizer == Optimizer::Adam && options.zero_stage >= 2) {
        const int64_t params = weights.params, largest = weights.largest_tensor_bytes / 4;
        mem.deepspeed_model_states_bytes = options.zero_stage == 2
                                               ? deepspeed_zero2_gpu_bytes(params, shards, false)
                                               : deepspeed_zero3_gpu_bytes(params, largest, shards, false, false);
        mem.deepspeed_estimator = options.zero_stage == 2 ? "estimate_zero2_model_states_mem_needs (4P + 16P/N)"
                                                          : "estimate_zero3_model_states_mem_needs (4L + 18P/N)";
      }
    }
    if (zero || options.precision == TrainPrecision::Fp16 || options.checkpointing != Checkpointing::None)
      mem.basis = "formula-based (not measured)";
    // The update's temporaries are fp32 (Adam's on the fp32 weights or master copy).
    const GradientFlow flow = gradient_flow(step_graph, training->trainable);
    const TrainingMemory tm =
        training_peak(step_graph, flow, fit::training_workspace(step_graph, training_workspace_bytes),
                      oc.temporaries * weights.largest_tensor_bytes, training->recompute_at, training->weight_copy,
                      zero && layout.gradients_divided ? shards : 1, &lower_bound);
    peak_at = tm.peak;
    mem.saved_activation_bytes = tm.saved_bytes;
    mem.low_precision_weight_bytes_at_peak = peak_at.weight_copy_bytes;
  } else {
    peak_at = inference_peak(g, workspace, &lower_bound);
  }
  mem.activation_peak_bytes = peak_at.activation_bytes;
  mem.activation_sharing = buffer_sharing_rule(forecast_sharing(options.train));
  mem.workspace_bytes = peak_at.workspace_bytes;
  mem.gradient_bytes_at_peak = peak_at.gradient_bytes;
  mem.peak_phase = peak_at.phase == Phase::Forward ? "forward" : peak_at.phase == Phase::Backward ? "backward" : "optimizer";
  mem.peak_node = peak_at.node >= 0 ? step_graph.nodes[size_t(peak_at.node)].name
                                    : std::string(peak_at.phase == Phase::Optimizer ? "(update)" : "(graph inputs)");
  mem.lower_bound = lower_bound;
  mem.total_bytes = mem.weights_bytes + mem.master_weight_bytes + mem.optimizer_state_bytes +
                    mem.gradient_bytes_at_peak + mem.activation_peak_bytes + mem.workspace_bytes +
                    mem.gathered_parameter_bytes;
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

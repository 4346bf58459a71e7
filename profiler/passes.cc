// The passes of a profile over one session (session.hpp), each filling its
// part of the result: warm-up, memory, the clean whole-model pass, the
// instrumented per-layer pass, the subgraph pass, copies, concurrency, the
// training step, the context.
#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <tuple>

#include "modelstat/error.hpp"
#include "modelstat/statistics.hpp"
#include "profiler/run_context.hpp"
#include "profiler/sampling.hpp"
#include "profiler/session.hpp"
#include "profiler/train_step.hpp"

namespace modelstat::profiler {

namespace {

// What a run in the model's own dtypes is labelled with (RunContext::dtype):
// the float type holding most of its float constant bytes, else that of its
// first float graph input; fp32 when it has neither.
std::string own_float_dtype(const AnalysisResult& analysis, const Model& model) {
  auto short_name = [](const std::string& onnx) -> std::string {
    if (onnx == "float16") return "fp16";
    if (onnx == "bfloat16") return "bf16";
    if (onnx == "float64") return "fp64";
    if (onnx == "float32") return "fp32";
    return {};
  };
  for (const DTypeSize& d : analysis.size_by_dtype)  // by bytes, descending
    if (!short_name(d.dtype).empty()) return short_name(d.dtype);
  for (int id : model.graph.inputs) {
    const std::string name = short_name(dtype_name(model.graph.tensors[size_t(id)].dtype));
    if (!name.empty()) return name;
  }
  return "fp32";
}

std::vector<at::Tensor> to_host(const std::vector<at::Tensor>& device_tensors) {
  std::vector<at::Tensor> out;
  out.reserve(device_tensors.size());
  for (const auto& t : device_tensors) out.push_back(t.defined() ? t.to(at::kCPU) : t);
  return out;
}

int64_t total_bytes(const std::vector<at::Tensor>& ts) {
  int64_t n = 0;
  for (const auto& t : ts)
    if (t.defined()) n += int64_t(t.numel()) * int64_t(t.element_size());
  return n;
}

// Peak live bytes of one inference, counted as a deployment would hold them:
// the weights, one input set, and everything the run allocates (activations,
// outputs, workspace). What the profiler itself keeps alive besides (the other
// input sets, the first run's outputs) is constant during the run and is left
// out by counting only the growth above the bytes live when the run starts.
MemoryMeasurement measure_inference_memory(MemoryMeter& meter, const Executor& exec,
                                           const std::vector<at::Tensor>& inputs, Device& device,
                                           int64_t weights_bytes) {
  device.synchronize();
  const int64_t live_at_start = meter.live_bytes();
  meter.reset_peak();
  {
    const auto outputs = exec.run(inputs);
    device.synchronize();
  }
  MemoryMeasurement m;
  m.method = meter.method();
  m.weights_bytes = weights_bytes;
  m.inference_peak_bytes = weights_bytes + total_bytes(inputs) + (meter.peak_bytes() - live_at_start);
  return m;
}

// Forward + backward + update under the protocol: one checked step (it also
// allocates the optimizer state), warm-up, then steps under the stopping rule,
// each timed whole and by part with the device's timers. Peak bytes are
// counted as for inference (weights + one input set + growth), over the timed
// steps, so the optimizer state and the gradients are in.
TrainStepResult measure_train_step(const ProfileOptions& o, Device& device, Executor& exec,
                                   const std::vector<std::vector<at::Tensor>>& inputs, MemoryMeter& meter,
                                   int64_t weights_bytes, std::vector<std::string>& notices) {
  OptimizerConfig config;
  config.kind = o.optimizer;
  device.synchronize();
  const int64_t live_at_start = meter.live_bytes();
  TrainStep train(exec, config, o.train_precision);
  train.step(inputs[0]);
  device.synchronize();
  warm_up(o, device, [&](size_t i) { train.step(inputs[(i + 1) % inputs.size()]); });

  auto whole = device.interval_timer(), forward = device.interval_timer(), backward = device.interval_timer(),
       optimizer = device.interval_timer();
  const StepTimers timers{whole.get(), forward.get(), backward.get(), optimizer.get()};
  std::vector<double> forward_s, backward_s, optimizer_s;
  meter.reset_peak();
  TrainStepResult r;
  r.time = sample_until_stable(o, "train step", [&](size_t i) {
    train.step(inputs[i % inputs.size()], timers);
    const double seconds = whole->seconds();  // waits for the step's last event
    forward_s.push_back(forward->seconds());
    backward_s.push_back(backward->seconds());
    optimizer_s.push_back(optimizer->seconds());
    return seconds;
  });
  r.optimizer = name_of(config.kind);
  r.precision = name_of(o.train_precision);
  r.loss = kTrainLossDescription;
  r.trainable_params = train.trainable_params();
  r.forward_seconds = stats::summarize(forward_s).median;
  r.backward_seconds = stats::summarize(backward_s).median;
  r.optimizer_seconds = stats::summarize(optimizer_s).median;
  r.peak_bytes = weights_bytes + total_bytes(inputs[0]) + (meter.peak_bytes() - live_at_start);
  r.memory_method = meter.method();
  for (const auto& n : train.notices()) notices.push_back(n);
  return r;
}

// Pass 3, for a model with control flow: the nodes inside If / Loop / Scan
// subgraphs, each execution between two markers (a Loop body's nodes once
// per trip), one wait per iteration; apart from the per-layer pass so that
// its top-level times carry none of these markers. A node's time in a run is
// the sum over its calls; nested calls (an If in a Loop body) pair their
// markers through a stack of open ones.
void measure_subgraph_nodes_impl(const ProfileOptions& o, Device& device, const Executor& exec,
                            const std::vector<std::vector<at::Tensor>>& inputs, const Upcasts& upcasts,
                            ProfileResult& result) {
  const std::vector<SubgraphNodeInfo>& nodes = exec.subgraph_nodes();
  struct Open {
    int id;
    size_t marker;
  };
  struct Closed {
    int id;
    size_t start, end;
  };
  std::vector<Open> open;
  std::vector<Closed> closed;
  auto markers = device.marker_timer();
  const Executor::NodeHook hook = [&](int id, bool after) {
    if (!after) {
      open.push_back({id, markers->append()});
      return;
    }
    const size_t end = markers->append();
    if (open.empty() || open.back().id != id)
      throw Error(ErrorKind::Runtime, "subgraph node '" + nodes[size_t(id)].path + "' ended before it began");
    closed.push_back({id, open.back().marker, end});
    open.pop_back();
  };
  // Per node: this run's seconds and calls, and over the runs that called it,
  // the run's seconds, its seconds per call and the calls in all.
  std::vector<double> run_seconds(nodes.size());
  std::vector<int64_t> run_calls(nodes.size());
  std::vector<std::vector<double>> per_run(nodes.size()), per_call(nodes.size());
  std::vector<int64_t> calls(nodes.size(), 0);
  auto instrumented_run = [&](size_t i) {
    open.clear();
    closed.clear();
    markers->reset(0);
    exec.run(inputs[i % inputs.size()], {}, hook);
    return markers->offsets();
  };
  // Untimed: sizes the marker pool and the bookkeeping to one run's, so that
  // no timed interval holds their growth.
  instrumented_run(0);
  result.subgraph_layer_sum = sample_until_stable(o, "subgraph nodes", [&](size_t i) {
    const std::vector<double> offsets = instrumented_run(i);
    std::fill(run_seconds.begin(), run_seconds.end(), 0.0);
    std::fill(run_calls.begin(), run_calls.end(), 0);
    for (const Closed& c : closed) {
      run_seconds[size_t(c.id)] += offsets[c.end] - offsets[c.start];
      ++run_calls[size_t(c.id)];
    }
    double sum = 0;  // the time inside the subgraphs of top-level nodes
    for (size_t k = 0; k < nodes.size(); ++k) {
      if (run_calls[k] == 0) continue;
      per_run[k].push_back(run_seconds[k]);
      per_call[k].push_back(run_seconds[k] / double(run_calls[k]));
      calls[k] += run_calls[k];
      if (nodes[k].depth == 1) sum += run_seconds[k];
    }
    return sum;
  });
  for (size_t k = 0; k < nodes.size(); ++k) {
    if (per_run[k].empty()) continue;  // never called: an If's untaken branch
    LayerTiming lt;
    lt.index = nodes[k].top_level_node;
    lt.name = nodes[k].path;
    lt.op_type = nodes[k].op_type;
    lt.time = to_summary(per_run[k], result.subgraph_layer_sum.stop_reason);
    lt.upcast_to_fp32 = upcasts.subgraph_nodes[k];
    lt.depth = nodes[k].depth;
    lt.calls_per_run = double(calls[k]) / double(per_run[k].size());
    lt.median_per_call = stats::summarize(per_call[k]).median;
    result.subgraph_layers.push_back(std::move(lt));
  }
}

}  // namespace

void warm_up_pass(ProfileSession& s) {
  warm_up(s.options, *s.device, [&](size_t i) { s.executor->run(s.inputs[i % s.inputs.size()]); });
}

void memory_pass(ProfileSession& s, ProfileResult& result) {
  result.memory = measure_inference_memory(*s.meter, *s.executor, s.inputs[0], *s.device, s.weights_bytes);
}

namespace {

// One clean whole-model run of sample i: the compute alone, or with the copies
// under --end-to-end.
double clean_run(ProfileSession& s, IntervalTimer& interval, size_t i) {
  const ProfileOptions& o = s.options;
  const auto& host = s.host_inputs[i % s.host_inputs.size()];
  interval.start();
  if (o.end_to_end) {
    auto out = s.executor->run(to_device(host, s.device->torch_device()));
    auto back = to_host(out);
    interval.stop();
    return interval.seconds();
  }
  s.executor->run(s.inputs[i % s.inputs.size()]);
  interval.stop();
  return interval.seconds();
}

}  // namespace

void whole_model_pass(ProfileSession& s, ProfileResult& result) {
  auto interval = s.device->interval_timer();
  result.end_to_end = s.options.end_to_end;
  result.whole = sample_until_stable(s.options, "whole model", [&](size_t i) { return clean_run(s, *interval, i); });
  result.cold.steady_state_median = result.whole.median;
}

void whole_and_layer_passes(ProfileSession& s, ProfileResult& result) {
  if (s.model->graph.nodes.empty()) {
    whole_model_pass(s, result);
    return;
  }
  auto interval = s.device->interval_timer();
  result.end_to_end = s.options.end_to_end;
  LayerSampler layers(*s.device, *s.executor);
  std::tie(result.whole, result.layer_sum) = sample_interleaved_until_stable(
      s.options, "whole model + per layer", [&](size_t i) { return clean_run(s, *interval, i); },
      [&](size_t i) {
        return layers.sample(
            [&](const Executor::NodeHook& hook) { s.executor->run(s.inputs[i % s.inputs.size()], hook); });
      });
  result.cold.steady_state_median = result.whole.median;
  layers.add_layers(s.upcasts, result.layer_sum.stop_reason, result.layers);
}

LayerSampler::LayerSampler(Device& device, const Executor& exec)
    : exec_(exec), nodes_(exec.model().graph.nodes.size()), markers_(device.marker_timer()), per_node_(nodes_) {}

double LayerSampler::sample(const std::function<void(const Executor::NodeHook&)>& run) {
  markers_->reset(nodes_ + 1);
  run([&](int node, bool after) {
    if (!after && node == 0) markers_->mark(0);
    if (after) markers_->mark(size_t(node) + 1);
  });
  const std::vector<double> intervals = markers_->intervals();
  double sum = 0;
  for (size_t k = 0; k < nodes_ && k < intervals.size(); ++k) {
    per_node_[k].push_back(intervals[k]);
    sum += intervals[k];
  }
  return sum;
}

void LayerSampler::add_layers(const Upcasts& upcasts, const std::string& stop_reason,
                              std::vector<LayerTiming>& out) const {
  const Graph& g = exec_.model().graph;
  for (size_t k = 0; k < nodes_; ++k) {
    LayerTiming lt;
    lt.index = int(k);
    lt.name = g.nodes[k].name;
    lt.op_type = g.nodes[k].op_type;
    lt.time = to_summary(per_node_[k], stop_reason);
    lt.upcast_to_fp32 = k < upcasts.top_level.size() && upcasts.top_level[k];
    lt.fused_into = exec_.fused_into(int(k));
    lt.fused_members = exec_.fused_members(int(k));
    lt.kernel = exec_.fused_kernel(int(k));
    out.push_back(std::move(lt));
  }
}

void subgraph_pass(ProfileSession& s, ProfileResult& result) {
  if (s.executor->subgraph_nodes().empty()) return;
  measure_subgraph_nodes_impl(s.options, *s.device, *s.executor, s.inputs, s.upcasts, result);
}

void copy_pass(ProfileSession& s, ProfileResult& result) {
  const ProfileOptions& o = s.options;
  result.h2d_bytes = total_bytes(s.host_inputs[0]);
  result.d2h_bytes = total_bytes(s.first_outputs);
  if (s.device->torch_device().is_cpu()) {
    // Inputs and outputs already live in host memory: there is no copy to time.
    result.notices.push_back("no host-device copies on the CPU: H2D / D2H not measured");
    return;
  }
  ProfileOptions copies = o;
  copies.max_seconds = std::min(o.max_seconds, 2.0);
  copies.min_seconds = std::min(o.min_seconds, 0.2);
  auto interval = s.device->interval_timer();
  const at::Device device = s.device->torch_device();
  result.h2d = sample_until_stable(copies, "H2D copies", [&](size_t i) {
    interval->start();
    auto d = to_device(s.host_inputs[i % s.host_inputs.size()], device);
    interval->stop();
    return interval->seconds();
  });
  result.d2h = sample_until_stable(copies, "D2H copies", [&](size_t) {
    interval->start();
    auto h = to_host(s.first_outputs);
    interval->stop();
    return interval->seconds();
  });
}

void concurrency_pass(ProfileSession& s, ProfileResult& result) {
  const ProfileOptions& o = s.options;
  if (o.concurrency <= 0) return;
  Executor& exec = *s.executor;
  Device& device = *s.device;
  ConcurrencyResult c;
  c.requests_in_flight = o.concurrency;
  c.mechanism = device.concurrency_mechanism();
  std::vector<std::vector<double>> latencies(size_t(o.concurrency));
  std::atomic<bool> stop{false};
  const double window = std::max(o.min_seconds, 1.0);
  const auto start = Clock::now();
  std::vector<std::thread> workers;
  // The cores are split between the workers: ATen's count is per thread (set in
  // each worker), a BLAS pool's is per process (set once, here).
  const int threads_per_worker = std::max(1, s.threads / o.concurrency);
  set_intra_op_threads(threads_per_worker);
  // Each worker owns its inputs and, on CUDA, its own stream (Device decides).
  for (int w = 0; w < o.concurrency; ++w) {
    workers.emplace_back([&, w] {
      auto scope = device.worker_scope();  // CUDA: a stream of its own
      at::set_num_threads(threads_per_worker);
      auto timer = device.interval_timer();
      const auto& in = s.inputs[size_t(w) % s.inputs.size()];
      while (!stop.load()) {
        timer->start();
        exec.run(in);
        timer->stop();
        latencies[size_t(w)].push_back(timer->seconds());
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(window));
  stop = true;
  for (auto& th : workers) th.join();
  const double elapsed = since(start);
  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  c.throughput = elapsed > 0 ? double(all.size()) / elapsed : 0;
  c.latency = to_summary(all, "fixed window of " + std::to_string(window) + " s");
  result.concurrency = c;
  set_intra_op_threads(s.threads);
}

void train_step_pass(ProfileSession& s, ProfileResult& result) {
  result.train_step =
      measure_train_step(s.options, *s.device, *s.executor, s.inputs, *s.meter, s.weights_bytes, result.notices);
}

void describe_pass(ProfileSession& s, ProfileResult& result) {
  describe_run(*s.device, result.context);
  result.context.dtype = s.options.dtype != ComputeDtype::Own ? name_of(s.options.dtype)
                         : s.options.train_step              ? "fp32"
                                                             : own_float_dtype(result.analysis, *s.model);
  result.context.batch = leading_batch(*s.model);
}

}  // namespace modelstat::profiler

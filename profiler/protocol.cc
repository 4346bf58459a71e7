// The measurement protocol of METHODOLOGY.md, in order:
//   cold path (load, weight upload, first inference) -> warm-up by count and
//   time -> clean whole-model pass (no instrumentation) -> instrumented
//   per-layer pass (markers between nodes, one wait per iteration) -> for a
//   model with If / Loop / Scan, the subgraph pass (markers around the nodes
//   inside subgraphs only, one wait per iteration) -> H2D /
//   D2H copies timed apart -> optional batch sweep, max-batch search and
//   concurrency, measured memory and a measured training step. Every
//   stopping decision goes through a StoppingCriterion.
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "modelstat/statistics.hpp"
#include "modelstat/error.hpp"
#include "modelstat/profile.hpp"
#include "profiler/device.hpp"
#include "profiler/executor.hpp"
#include "profiler/host_memory.hpp"
#include "profiler/memory_meter.hpp"
#include "profiler/progress.hpp"
#include "profiler/run_context.hpp"
#include "profiler/sampling.hpp"
#include "profiler/stopping.hpp"
#include "modelstat/training_setup.hpp"
#include "profiler/train_step.hpp"

namespace modelstat {

namespace profiler {
namespace {

// The run's float dtype: --dtype's, else the model's own dtypes (Undefined),
// but fp32 for a training step (train_step.hpp: fp32 only).
at::ScalarType float_dtype(const ProfileOptions& o) {
  if (o.dtype.empty()) return o.train_step ? at::kFloat : at::ScalarType::Undefined;
  if (o.dtype == "fp32") return at::kFloat;
  if (o.dtype == "fp16") return at::kHalf;
  if (o.dtype == "bf16") return at::kBFloat16;
  throw Error(ErrorKind::Usage, "--dtype must be fp32, fp16 or bf16, got '" + o.dtype + "'");
}

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

std::vector<at::Tensor> to_device(const std::vector<at::Tensor>& host, const at::Device& device) {
  std::vector<at::Tensor> out;
  out.reserve(host.size());
  for (const auto& t : host) out.push_back(t.to(device, /*non_blocking=*/true));
  return out;
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

int64_t leading_batch(const Model& model) {
  for (int i : model.graph.inputs) {
    const auto& s = model.graph.tensors[size_t(i)].shape;
    if (s.rank_known && !s.dims.empty() && s.dims[0].known()) return s.dims[0].value;
  }
  return 0;
}

// LoadOptions that set the leading dim of every graph input to `batch`.
LoadOptions with_batch(const Model& model, const LoadOptions& base, int64_t batch) {
  LoadOptions o = base;
  for (int i : model.graph.inputs) {
    const Tensor& t = model.graph.tensors[size_t(i)];
    if (!t.shape.fully_known() || t.shape.dims.empty()) continue;
    std::vector<int64_t> dims;
    for (const auto& d : t.shape.dims) dims.push_back(d.value);
    dims[0] = batch;
    o.input_shapes[t.name] = dims;
  }
  return o;
}

// What a run with `input_sets` sets holds in host memory (host_memory.hpp);
// the refusal text, empty when it fits.
// `weights_alone` says whether the constants by themselves exceed what is
// free (no batch makes such a run fit).
std::string host_memory_refusal(const AnalysisResult& analysis, const ProfileOptions& o, const Device& device,
                                int input_sets, bool train_step, bool* weights_alone = nullptr) {
  RunShape run;
  run.on_cpu = device.torch_device().is_cpu();
  run.input_sets = input_sets;
  if (train_step) {
    const Optimizer kind = parse_optimizer(o.optimizer);
    run.optimizer_states = kind == Optimizer::Adam ? 2 : kind == Optimizer::Momentum ? 1 : 0;
  }
  const HostMemoryEstimate estimate = estimate_host_memory(analysis, run);
  if (weights_alone) {
    HostMemoryEstimate weights_only;
    weights_only.weights = estimate.weights;
    *weights_alone = !exceeds_host_memory(weights_only).empty();
  }
  return exceeds_host_memory(estimate);
}

// A batch sweep or max-batch search rebinds the leading dim; a model that fixes
// it cannot be rebound. Say so before anything is measured, not after.
void check_batch_can_vary(const std::string& path, const Model& model, const LoadOptions& load) {
  const int64_t base = leading_batch(model);
  try {
    (void)load_model(path, with_batch(model, load, base == 2 ? 3 : 2));
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Runtime) throw;
    throw Error(ErrorKind::Usage,
                "--batch-sweep / --max-batch need a model whose batch (leading) dim can vary, and this one cannot: " +
                    e.message() + " (export it with a symbolic batch dim, e.g. torch.onnx.export(..., "
                    "dynamic_axes={'input': {0: 'batch'}}))");
  }
}

struct BatchRun {
  bool fits = false;
  std::string failure;
  TimingSummary time;
};

// One batch size: bind, build, warm up briefly, measure with the stopping rule.
BatchRun run_batch(const std::string& path, const Model& base_model, const LoadOptions& load,
                   const ProfileOptions& o, Device& device, int64_t batch) {
  BatchRun r;
  try {
    Model model = load_model(path, with_batch(base_model, load, batch));
    // Past what the host has free the run is not tried: with overcommit the
    // kernel would kill the process rather than the allocation fail.
    const std::string refusal = host_memory_refusal(analyze_model(model), o, device, 1, false);
    if (!refusal.empty()) {
      r.failure = "exceeds host memory: " + refusal;
      return r;
    }
    ExecOptions eo;
    eo.device = device.torch_device();
    eo.float_dtype = float_dtype(o);
    eo.seed = o.seed;
    eo.fuse_qdq = o.fuse && !o.train_step;
    eo.fuse_cpu = o.fuse && !o.train_step;
    eo.gemm = o.train_step ? GemmBackend::Blas : parse_gemm_backend(o.gemm);
    Executor exec(model, eo);
    const auto inputs = to_device(exec.make_inputs(o.seed), device.torch_device());
    ProfileOptions quick = o;
    quick.warmup_iterations = 2;
    quick.warmup_seconds = 0.1;
    quick.min_iterations = std::min<int64_t>(o.min_iterations, 5);
    quick.min_seconds = std::min(o.min_seconds, 0.3);
    quick.max_seconds = std::min(o.max_seconds, 3.0);
    quick.target_rel_ci = std::max(o.target_rel_ci, 0.02);
    warm_up(quick, device, [&](size_t) { exec.run(inputs); });
    auto timer = device.interval_timer();
    r.time = sample_until_stable(quick, "batch", [&](size_t) {
      timer->start();
      exec.run(inputs);
      timer->stop();
      return timer->seconds();
    });
    r.fits = true;
  } catch (const std::exception& e) {
    if (!is_out_of_memory(e)) throw;
    r.fits = false;
    r.failure = "out of memory";
  }
  return r;
}

BatchPoint to_point(int64_t batch, const BatchRun& r) {
  BatchPoint p;
  p.batch = batch;
  p.fits = r.fits;
  p.failure = r.failure;
  if (r.fits) {
    p.median = r.time.median;
    // batch * iterations / elapsed, with elapsed the sum of the measured runs.
    double elapsed = 0;
    for (double s : r.time.samples) elapsed += s;
    p.throughput = elapsed > 0 ? double(batch) * double(r.time.samples.size()) / elapsed : 0;
  }
  return p;
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
  config.kind = parse_optimizer(o.optimizer);
  device.synchronize();
  const int64_t live_at_start = meter.live_bytes();
  TrainStep train(exec, config, parse_train_precision(o.train_precision));
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
  r.optimizer = optimizer_name(config.kind);
  r.precision = train_precision_name(parse_train_precision(o.train_precision));
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
void measure_subgraph_nodes(const ProfileOptions& o, Device& device, const Executor& exec,
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

ProfileResult profile(const std::string& path, const LoadOptions& load, const ProfileOptions& o) {
  ProfileResult result;
  const int threads = resolve_threads(o.threads);
  configure_host_allocator();  // before the model's tensors are allocated
  set_intra_op_threads(threads);
  std::unique_ptr<Device> device = make_device(o.device);
  if (o.device == "cpu" && !o.dtype.empty() && o.dtype != "fp32")
    throw Error(ErrorKind::Usage,
                "--dtype " + o.dtype +
                    " is for CUDA; on the CPU a model runs in its own dtypes (an fp16/bf16 node "
                    "without a CPU kernel in fp32), or wholly in fp32 with --dtype fp32");
  if (o.train_step) {
    parse_optimizer(o.optimizer);  // bad flags fail before anything is measured
    const TrainPrecision precision = parse_train_precision(o.train_precision);
    if (precision == TrainPrecision::Fp16 || (precision == TrainPrecision::Bf16 && o.device != "cpu"))
      throw Error(ErrorKind::Usage, "--precision " + o.train_precision +
                                        " is not measured here: a bf16 step runs on the CPU (LibTorch 1.13's CPU "
                                        "autocast is bf16 only); 'modelstat fit --precision' forecasts the others");
    if (!o.dtype.empty() && o.dtype != "fp32")
      throw Error(ErrorKind::Usage, "--train-step runs fp32 (no mixed-precision training)");
  }

  // Cold path 1: model load (read, parse, bind, infer shapes).
  auto t = Clock::now();
  Model model = load_model(path, load);
  result.cold.model_load = since(t);
  result.analysis = analyze_model(model);
  // Refused before any tensor is allocated (host_memory.hpp says why).
  bool weights_alone = false;
  const std::string refusal =
      host_memory_refusal(result.analysis, o, *device, std::max(1, o.input_sets), o.train_step, &weights_alone);
  if (!refusal.empty() && weights_alone)
    throw Error(ErrorKind::CannotRun, "the model's constants alone, at the sizes their dims declare, do not fit in "
                                      "this machine's memory: " + refusal +
                                          "; no batch makes this run fit (a larger machine, or a file whose dims "
                                          "are what it holds)");
  if (!refusal.empty())
    throw Error(ErrorKind::CannotRun, "the bound input shapes do not fit in this machine's memory: " + refusal +
                                          "; profile a smaller batch (--dim, --input or --default-batch)");
  if (!o.batch_sweep.empty() || o.find_max_batch) check_batch_can_vary(path, model, load);

  // Cold path 2: weights to the device.
  ExecOptions eo;
  eo.device = device->torch_device();
  eo.float_dtype = float_dtype(o);
  eo.seed = o.seed;
  eo.fuse_qdq = o.fuse && !o.train_step;
  eo.fuse_cpu = o.fuse && !o.train_step;
  eo.gemm = o.train_step ? GemmBackend::Blas : parse_gemm_backend(o.gemm);
  // Measured memory counts from before the weights are placed (memory_meter.hpp).
  std::unique_ptr<MemoryMeter> meter;
  if (o.measure_memory || o.train_step) meter = make_memory_meter(device->torch_device());
  const int64_t live_before_weights = meter ? meter->live_bytes() : 0;
  t = Clock::now();
  Executor exec(model, eo);  // names an unsupported op before anything is timed
  device->synchronize();
  result.cold.weight_upload = since(t);
  const int64_t weights_bytes = meter ? meter->live_bytes() - live_before_weights : 0;
  for (const auto& n : exec.weights().notices()) result.notices.push_back(n);
  for (const auto& n : exec.fusion_notices()) result.notices.push_back(n);
  result.fusion = eo.fuse_cpu ? "on" : "off";

  // Inputs: several random sets (fixed seeds, never zeros), rotated.
  const int sets = std::max(1, o.input_sets);
  std::vector<std::vector<at::Tensor>> host_inputs, inputs;
  for (int k = 0; k < sets; ++k) {
    host_inputs.push_back(exec.make_inputs(o.seed + uint64_t(k)));
    inputs.push_back(to_device(host_inputs.back(), device->torch_device()));
  }
  device->synchronize();

  // Cold path 3: the first inference pays for lazy initialisation.
  auto interval = device->interval_timer();
  interval->start();
  std::vector<at::Tensor> outputs = exec.run(inputs[0]);
  interval->stop();
  result.cold.first_inference = interval->seconds();
  // The first run learnt which nodes have no kernel for their fp16/bf16
  // inputs: every timing below runs them upcast, and says so.
  const Upcasts upcasts = exec.upcasts();
  for (const auto& n : upcast_notices(upcasts, device->torch_device())) result.notices.push_back(n);

  warm_up(o, *device, [&](size_t i) { exec.run(inputs[i % inputs.size()]); });
  if (o.measure_memory) result.memory = measure_inference_memory(*meter, exec, inputs[0], *device, weights_bytes);

  // Pass 1: clean whole-model latency, no per-layer instrumentation.
  result.end_to_end = o.end_to_end;
  result.whole = sample_until_stable(o, "whole model", [&](size_t i) {
    const auto& host = host_inputs[i % host_inputs.size()];
    interval->start();
    if (o.end_to_end) {
      auto out = exec.run(to_device(host, device->torch_device()));
      auto back = to_host(out);
      interval->stop();
      return interval->seconds();
    }
    exec.run(inputs[i % inputs.size()]);
    interval->stop();
    return interval->seconds();
  });
  result.cold.steady_state_median = result.whole.median;

  // Pass 2: per-layer times from markers between nodes, one wait per iteration.
  const size_t n = model.graph.nodes.size();
  if (o.per_layer && n > 0) {
    auto markers = device->marker_timer();
    std::vector<std::vector<double>> per_node(n);
    result.layer_sum = sample_until_stable(o, "per layer", [&](size_t i) {
      markers->reset(n + 1);
      exec.run(inputs[i % inputs.size()], [&](int node, bool after) {
        if (!after && node == 0) markers->mark(0);
        if (after) markers->mark(size_t(node) + 1);
      });
      const std::vector<double> intervals = markers->intervals();
      double sum = 0;
      for (size_t k = 0; k < n && k < intervals.size(); ++k) {
        per_node[k].push_back(intervals[k]);
        sum += intervals[k];
      }
      return sum;
    });
    for (size_t k = 0; k < n; ++k) {
      LayerTiming lt;
      lt.index = int(k);
      lt.name = model.graph.nodes[k].name;
      lt.op_type = model.graph.nodes[k].op_type;
      lt.time = to_summary(per_node[k], result.layer_sum.stop_reason);
      lt.upcast_to_fp32 = upcasts.top_level[k];
      lt.fused_into = exec.fused_into(int(k));
      lt.fused_members = exec.fused_members(int(k));
      lt.kernel = exec.fused_kernel(int(k));
      result.layers.push_back(std::move(lt));
    }
  }
  // Pass 3: the nodes inside subgraphs, when there are any.
  if (o.per_layer && !exec.subgraph_nodes().empty())
    measure_subgraph_nodes(o, *device, exec, inputs, upcasts, result);

  // Transfers, timed apart from compute.
  result.h2d_bytes = total_bytes(host_inputs[0]);
  result.d2h_bytes = total_bytes(outputs);
  ProfileOptions copies = o;
  copies.max_seconds = std::min(o.max_seconds, 2.0);
  copies.min_seconds = std::min(o.min_seconds, 0.2);
  if (device->torch_device().is_cpu()) {
    // Inputs and outputs already live in host memory: there is no copy to time.
    result.notices.push_back("no host-device copies on the CPU: H2D / D2H not measured");
  } else {
    result.h2d = sample_until_stable(copies, "H2D copies", [&](size_t i) {
      interval->start();
      auto d = to_device(host_inputs[i % host_inputs.size()], device->torch_device());
      interval->stop();
      return interval->seconds();
    });
    result.d2h = sample_until_stable(copies, "D2H copies", [&](size_t) {
      interval->start();
      auto h = to_host(outputs);
      interval->stop();
      return interval->seconds();
    });
  }

  // Throughput: batch sweep and max-batch search.
  const int64_t base_batch = leading_batch(model);
  for (int64_t b : o.batch_sweep) {
    if (b < 1) throw Error(ErrorKind::Usage, "batch sizes must be positive");
    result.batch_sweep.push_back(to_point(b, run_batch(path, model, load, o, *device, b)));
  }
  if (o.find_max_batch) {
    // Doubling until out of memory (or the limit), then binary search between
    // the last fit and the first failure.
    int64_t good = 0, bad = 0;
    for (int64_t b = 1; b <= o.max_batch_limit; b *= 2) {
      BatchRun r = run_batch(path, model, load, o, *device, b);
      result.batch_sweep.push_back(to_point(b, r));
      if (!r.fits) {
        bad = b;
        break;
      }
      good = b;
      if (b > o.max_batch_limit / 2) break;
    }
    while (bad > 0 && bad - good > 1) {
      const int64_t mid = good + (bad - good) / 2;
      BatchRun r = run_batch(path, model, load, o, *device, mid);
      result.batch_sweep.push_back(to_point(mid, r));
      (r.fits ? good : bad) = mid;
    }
    result.max_batch = good;
    if (bad == 0)
      result.notices.push_back("max-batch search stopped at the limit " + std::to_string(good) +
                               " without running out of memory (raise --max-batch-limit)");
    std::sort(result.batch_sweep.begin(), result.batch_sweep.end(),
              [](const BatchPoint& a, const BatchPoint& b) { return a.batch < b.batch; });
  }

  // Concurrency: N independent requests in flight.
  if (o.concurrency > 0) {
    ConcurrencyResult c;
    c.requests_in_flight = o.concurrency;
    c.mechanism = device->concurrency_mechanism();
    std::vector<std::vector<double>> latencies(size_t(o.concurrency));
    std::atomic<bool> stop{false};
    const double window = std::max(o.min_seconds, 1.0);
    const auto start = Clock::now();
    std::vector<std::thread> workers;
    // The cores are split between the workers: ATen's count is per thread (set in
    // each worker), a BLAS pool's is per process (set once, here).
    const int threads_per_worker = std::max(1, threads / o.concurrency);
    set_intra_op_threads(threads_per_worker);
    // Each worker owns its inputs and, on CUDA, its own stream (Device decides).
    for (int w = 0; w < o.concurrency; ++w) {
      workers.emplace_back([&, w] {
        auto scope = device->worker_scope();  // CUDA: a stream of its own
        at::set_num_threads(threads_per_worker);
        auto timer = device->interval_timer();
        const auto& in = inputs[size_t(w) % inputs.size()];
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
    set_intra_op_threads(threads);
  }

  // Last, as it updates the weights: one training step.
  if (o.train_step)
    result.train_step = measure_train_step(o, *device, exec, inputs, *meter, weights_bytes, result.notices);

  // Context: a number without its conditions is not reusable.
  describe_run(*device, result.context);
  result.context.dtype = !o.dtype.empty() ? o.dtype
                         : o.train_step   ? "fp32"
                                          : own_float_dtype(result.analysis, model);
  result.context.batch = base_batch;
  return result;
}

}  // namespace profiler

ProfileResult profile_model(const std::string& path, const LoadOptions& load, const ProfileOptions& options) {
  try {
    return profiler::profile(path, load, options);
  } catch (const Error& e) {
    if (!e.file().empty()) throw;
    throw Error(e.kind(), e.message(), path, e.node(), e.op());
  } catch (const std::exception& e) {
    // One line: ATen's messages carry a C++ backtrace after the first line.
    const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
    std::string what = c10_error ? c10_error->what_without_backtrace() : e.what();
    what = what.substr(0, what.find('\n'));
    if (profiler::is_out_of_memory(e))
      throw Error(ErrorKind::CannotRun,
                  "out of memory: " + what + "; profile a smaller batch (--dim, --input or --default-batch)", path);
    throw Error(ErrorKind::Runtime, what, path);
  }
}

}  // namespace modelstat

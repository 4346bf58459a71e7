// The cold path of a profile: the session every pass runs against (session.hpp).
#include "profiler/session.hpp"

#include "modelstat/error.hpp"
#include "modelstat/training_setup.hpp"
#include "profiler/given_inputs.hpp"
#include "profiler/host_memory.hpp"
#include "profiler/observed_run.hpp"
#include "profiler/run_context.hpp"
#include "profiler/run_setup.hpp"
#include "profiler/sampling.hpp"

namespace modelstat::profiler {

std::string host_memory_refusal(const AnalysisResult& analysis, const ProfileOptions& o, const Device& device,
                                int input_sets, bool train_step, bool* weights_alone) {
  RunShape run;
  run.on_cpu = device.torch_device().is_cpu();
  run.input_sets = input_sets;
  if (train_step) run.optimizer_states = o.optimizer == Optimizer::Adam ? 2 : o.optimizer == Optimizer::Momentum ? 1 : 0;
  const HostMemoryEstimate estimate = estimate_host_memory(analysis, run);
  if (weights_alone) {
    HostMemoryEstimate weights_only;
    weights_only.weights = estimate.weights;
    *weights_alone = !exceeds_host_memory(weights_only).empty();
  }
  return exceeds_host_memory(estimate);
}

int64_t leading_batch(const Model& model) {
  for (int i : model.graph.inputs) {
    const auto& shape = model.graph.tensors[size_t(i)].shape;
    if (shape.rank_known && !shape.dims.empty() && shape.dims[0].known()) return shape.dims[0].value;
  }
  return 0;
}

std::vector<at::Tensor> to_device(const std::vector<at::Tensor>& host, const at::Device& device) {
  std::vector<at::Tensor> out;
  out.reserve(host.size());
  for (const auto& t : host) out.push_back(t.to(device, /*non_blocking=*/true));
  return out;
}

ProfileSession open_session(const std::string& path, const LoadOptions& load, const ProfileOptions& o,
                            ProfileResult& result) {
  check_run_options(o);
  apply_float32_math(o.dtype, o.device == DeviceKind::Cuda && !o.train_step);
  ProfileSession s;
  s.options = o;
  s.load = load;
  s.threads = resolve_threads(o.threads);
  configure_host_allocator();  // before the model's tensors are allocated
  set_intra_op_threads(s.threads);
  s.device = make_device(name_of(o.device));

  // Cold path 1: model load (read, parse, bind, infer shapes).
  auto t = Clock::now();
  s.file = std::make_unique<ModelFile>(path);
  if (!o.inputs_dir.empty()) {
    // --inputs binds the dims its files hold where nothing else does.
    LoadOptions unbound = load;
    unbound.require_bound_inputs = false;
    for (auto& [name, dims] : given_input_shapes(s.file->bind(unbound).graph, o))
      s.load.input_shapes.emplace(name, std::move(dims));
  }
  s.model = std::make_shared<const Model>(s.file->bind(s.load));
  result.cold.model_load = since(t);
  result.analysis = analyze_model(*s.model);
  result.analysis.model = s.model;
  // Refused before any tensor is allocated (host_memory.hpp says why).
  bool weights_alone = false;
  const std::string refusal =
      host_memory_refusal(result.analysis, o, *s.device, std::max(1, o.input_sets), o.train_step, &weights_alone);
  if (!refusal.empty() && weights_alone)
    throw Error(ErrorKind::CannotRun, "the model's constants alone, at the sizes their dims declare, do not fit in "
                                      "this machine's memory: " + refusal +
                                          "; no batch makes this run fit (a larger machine, or a file whose dims "
                                          "are what it holds)");
  if (!refusal.empty())
    throw Error(ErrorKind::CannotRun, "the bound input shapes do not fit in this machine's memory: " + refusal +
                                          "; profile a smaller batch (--dim, --input or --default-batch)");
  if (!o.batch_sweep.empty() || o.find_max_batch) check_batch_can_vary(*s.file, *s.model, s.load);

  // Cold path 2: weights to the device. Measured memory counts from before
  // the weights are placed (memory_meter.hpp). A training step's executor
  // runs every pass: fp32, node by node.
  const at::Device device = s.device->torch_device();
  if (o.measure_memory || o.train_step) s.meter = make_memory_meter(device);
  const int64_t live_before_weights = s.meter ? s.meter->live_bytes() : 0;
  t = Clock::now();
  s.executor = std::make_unique<Executor>(
      *s.model, exec_options(o, device, o.train_step ? ExecPurpose::TrainStep : ExecPurpose::Inference));
  s.device->synchronize();
  result.cold.weight_upload = since(t);
  s.weights_bytes = s.meter ? s.meter->live_bytes() - live_before_weights : 0;
  for (const auto& n : s.executor->weights().notices()) result.notices.push_back(n);
  for (const auto& n : s.executor->fusion_notices()) result.notices.push_back(n);
  result.fusion = s.executor->options().fuse_cpu ? "on" : "off";

  // Inputs: several random sets (fixed seeds, never zeros), rotated; the
  // values the user gave (--value, --inputs) in every set.
  const GivenValues given = read_given_values(s.model->graph, o);
  result.context.seed = o.seed;
  result.context.given_inputs = given.described;
  const int sets = std::max(1, o.input_sets);
  for (int k = 0; k < sets; ++k) {
    s.host_inputs.push_back(s.executor->make_inputs(o.seed + uint64_t(k)));
    feed_given_values(given, s.host_inputs.back());
    s.inputs.push_back(to_device(s.host_inputs.back(), device));
  }
  s.device->synchronize();

  // Cold path 3: the first inference pays for lazy initialisation.
  auto interval = s.device->interval_timer();
  interval->start();
  s.first_outputs = s.executor->run(s.inputs[0]);
  interval->stop();
  result.cold.first_inference = interval->seconds();
  // The first run learnt which nodes have no kernel for their fp16/bf16
  // inputs: every timing after it runs them upcast, and says so.
  s.upcasts = s.executor->upcasts();
  for (const auto& n : upcast_notices(s.upcasts, device)) result.notices.push_back(n);
  // What ran: branches, trips, shapes the analysis could not infer.
  count_what_ran(s, result);
  return s;
}

}  // namespace modelstat::profiler

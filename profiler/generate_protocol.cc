// `--generate P:G` measured (METHODOLOGY rule 14): the KV cache recognised
// and the request checked against the model's context before anything runs;
// the model loaded once, bound at the first decode step's shapes (the
// executor runs whatever shapes a step brings: fused kernels pick a plan per
// row count and keep it); a cold first generation, warm-up generations, then
// generations under the stopping rule (one sample: the end-to-end time), the
// peak memory of one more; then each phase (the prefill, decode steps at the
// first, middle and last context) measured alone with the cache it had:
// a clean pass and the instrumented per-node pass, as `profile` times a
// graph, and its analysis at the step's bindings (which fit prices:
// forecast_generation).
#include <ATen/Parallel.h>

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>

#include "modelstat/error.hpp"
#include "modelstat/generation.hpp"
#include "modelstat/statistics.hpp"
#include "profiler/device.hpp"
#include "profiler/executor.hpp"
#include "profiler/generate.hpp"
#include "profiler/host_memory.hpp"
#include "profiler/memory_meter.hpp"
#include "profiler/run_context.hpp"
#include "profiler/run_setup.hpp"
#include "profiler/sampling.hpp"
#include "profiler/session.hpp"
#include "profiler/torch_errors.hpp"

namespace modelstat {

namespace profiler {
namespace {

std::string short_dtype(DType t) {
  switch (t) {
    case DType::Float16: return "fp16";
    case DType::BFloat16: return "bf16";
    case DType::Double: return "fp64";
    default: return "fp32";
  }
}

// The decode steps measured alone: the first, the middle and the last (contexts P + k, k = 1 .. G - 1).
std::vector<int64_t> decode_phase_steps(int64_t generate) {
  std::vector<int64_t> steps;
  for (int64_t k : {int64_t(1), generate / 2, generate - 1})
    if (k >= 1 && k <= generate - 1 && std::find(steps.begin(), steps.end(), k) == steps.end()) steps.push_back(k);
  return steps;
}

// What a generation records of itself, for the error when it runs out of
// memory: the context of the step running, and the longest one completed.
struct LoopPosition {
  int64_t running = 0, completed = 0;
};

// Runs `fn` (a generation or a phase's step), turning out of memory into the
// error that names the context it happened at and the last that fitted.
template <typename Fn>
void with_oom_context(const LoopPosition& p, int64_t prompt, Fn&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    if (!is_out_of_memory(e)) throw;
    std::string what = p.running <= prompt
                           ? "out of memory in the prefill of " + std::to_string(prompt) + " tokens (no context fitted)"
                           : "out of memory at context " + std::to_string(p.running) +
                                 " tokens; the last context that fitted: " + std::to_string(p.completed);
    throw Error(ErrorKind::CannotRun,
                what + "; generate fewer tokens or use a shorter prompt (--generate P:G), or a smaller batch");
  }
}

// The samples of decode steps 1 .. G-1 of one generation.
std::vector<double> decode_steps(const std::vector<double>& steps) {
  return std::vector<double>(steps.begin() + 1, steps.end());
}

double sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

TokenRate rate_of(const std::vector<double>& samples) {
  TokenRate r;
  r.samples = samples;
  r.mean = stats::mean(samples);
  r.stddev = samples.size() > 1 ? stats::sample_stddev(samples) : 0.0;
  return r;
}

// A phase alone, under the stopping rule: the clean step and the step with a
// marker between nodes (one wait per step), `profile`'s two passes, taken
// alternately (a decode step is ~40 ms of memory-bound work: two passes a few
// seconds apart differed by more than the instrumentation on a shared machine).
void measure_phase(const ProfileOptions& o, Device& device, const Executor& exec, const GenerationLoop& loop,
                   const GenerationLoop::State& state, GenerationPhase& phase) {
  ProfileResult& p = phase.profile;
  auto run = [&](const Executor::NodeHook& hook) {
    GenerationLoop::State s = state;  // the cache tensors are shared: a step reads them, and
    loop.step(s, hook);              // a shared buffer's step rewrites only its own rows
  };
  warm_up(o, device, [&](size_t) { run({}); });
  auto interval = device.interval_timer();
  LayerSampler layers(device, exec);
  std::tie(p.whole, p.layer_sum) = sample_interleaved_until_stable(
      o, (phase.name + " step, clean and per layer").c_str(),
      [&](size_t) {
        interval->start();
        run({});
        interval->stop();
        return interval->seconds();
      },
      [&](size_t) { return layers.sample(run); });
  layers.add_layers(exec.upcasts(), p.layer_sum.stop_reason, p.layers);
  p.fusion = exec.options().fuse_cpu ? "on" : "off";
}

}  // namespace

GenerationResult generate(const std::string& path, const LoadOptions& load, const ProfileOptions& o,
                          const GenerationOptions& gen) {
  if (gen.prompt < 1 || gen.generate < 1)
    throw Error(ErrorKind::Usage, "--generate P:G needs a prompt of at least 1 token and at least 1 generated token");
  GenerationResult r;
  r.model_path = path;
  r.prompt = gen.prompt;
  r.generate = gen.generate;
  r.tokens = token_choice_name(gen.tokens);
  r.slo = gen.slo;
  const int threads = resolve_threads(o.threads);
  configure_host_allocator();
  set_intra_op_threads(threads);
  check_run_options(o);
  apply_float32_math(o.dtype, o.device == DeviceKind::Cuda && !o.train_step);
  std::unique_ptr<Device> device = make_device(name_of(o.device));

  // The cache, on the model as the user bound it, and the request against the model's context.
  auto t = Clock::now();
  const Model unbound = load_model(path, load);
  const std::optional<KvCache> found = find_kv_cache(unbound, load.kv_pairs);
  if (!found) throw Error(ErrorKind::Usage, std::string("--generate: ") + kNoKvCacheRecognised);
  if (found->past_dim.empty() || found->seq_dim.empty())
    throw Error(ErrorKind::Usage,
                "--generate: the KV cache input '" + found->tensors.front().input + "' or the token input has no "
                "symbolic sequence dim (the model is exported for fixed lengths, or --dim binds it), so its steps "
                "cannot change length: --generate binds the sequence dims itself");
  r.kv_cache = *found;
  const int64_t longest = gen.prompt + gen.generate;
  if (found->max_context > 0 && longest > found->max_context)
    throw Error(ErrorKind::Usage,
                "--generate " + std::to_string(gen.prompt) + ":" + std::to_string(gen.generate) + " needs " +
                    std::to_string(longest) + " tokens of context (prompt + generated), and the model holds at most " +
                    std::to_string(found->max_context) + " (its " + found->max_context_source +
                    "): generate at most " + std::to_string(std::max<int64_t>(found->max_context - gen.prompt, 0)) +
                    " tokens after this prompt, or shorten it");
  auto bound_options = [&](int64_t seq, int64_t past) {
    LoadOptions b = load;
    for (const auto& [dim, value] : found->bindings(seq, past)) {
      if (load.dim_values.count(dim))
        throw Error(ErrorKind::Usage, "--generate binds '" + dim + "' at every step, which --dim binds too: drop it");
      b.dim_values[dim] = value;
    }
    return b;
  };
  // Bound at the first decode step: the kernels chosen at load are those of the many decode steps.
  const Model model = load_model(path, bound_options(1, gen.prompt));
  r.cold.model_load = since(t);

  // The phases' analyses: each step's costs at its own bindings (and the memory check at the longest).
  std::vector<int64_t> phase_steps = {0};
  for (int64_t k : decode_phase_steps(gen.generate)) phase_steps.push_back(k);
  for (int64_t k : phase_steps) {
    GenerationPhase phase;
    phase.name = k == 0 ? "prefill" : "decode";
    phase.tokens = k == 0 ? gen.prompt : 1;
    phase.context = gen.prompt + k;
    phase.bindings = found->bindings(phase.tokens, phase.context - phase.tokens);
    phase.profile.analysis = analyze_file(path, bound_options(phase.tokens, phase.context - phase.tokens));
    r.phases.push_back(std::move(phase));
  }
  // The record's cache: as found, sized at the last decode step's bindings.
  if (const auto& sized = r.phases.back().profile.analysis.kv_cache) r.kv_cache = *sized;
  {
    RunShape shape;
    shape.on_cpu = device->torch_device().is_cpu();
    const std::string refusal =
        exceeds_host_memory(estimate_host_memory(r.phases.back().profile.analysis, shape));
    if (!refusal.empty())
      throw Error(ErrorKind::CannotRun, "--generate: the step at context " + std::to_string(r.phases.back().context) +
                                            " does not fit in this machine's memory: " + refusal +
                                            "; generate fewer tokens, use a shorter prompt or a smaller batch");
  }

  ExecOptions eo = exec_options(o, device->torch_device(), ExecPurpose::Inference);
  eo.share_kv_buffers = found->layout == "shared buffer";
  std::unique_ptr<MemoryMeter> meter = make_memory_meter(device->torch_device());
  const int64_t live_before_weights = meter->live_bytes();
  t = Clock::now();
  Executor exec(model, eo);
  device->synchronize();
  r.cold.weight_upload = since(t);
  const int64_t weights_bytes = meter->live_bytes() - live_before_weights;
  for (const auto& n : exec.weights().notices()) r.notices.push_back(n);
  for (const auto& n : exec.fusion_notices()) r.notices.push_back(n);

  const DecoderIo io = decoder_io(model, *found);
  r.input_roles = io.describe(model);
  r.logits = model.graph.tensors[size_t(model.graph.outputs[size_t(io.logits_output)])].name;
  int64_t batch = 1;
  for (size_t i = 0; i < io.roles.size(); ++i)
    if (io.roles[i] == InputRole::Tokens) {
      const Shape& s = model.graph.tensors[size_t(model.graph.inputs[i])].shape;
      batch = s.dims.front().known() ? s.dims.front().value : load.default_batch;
    }
  r.batch = batch;
  GenerationLoop loop(exec, *found, io, batch, gen.prompt, gen.generate, gen.tokens, o.seed);

  // Every generation records where it is, for an out-of-memory error.
  LoopPosition progress;
  auto watch = [&](const GenerationLoop::State& s) {
    progress.completed = std::max(progress.completed, s.past_length);
    progress.running = s.past_length + s.tokens.size(1);
  };
  auto timer = device->interval_timer();
  GenerationLoop::Timings last;
  auto one_generation = [&] {
    with_oom_context(progress, gen.prompt, [&] { last = loop.generate(*timer, watch); });
    progress.completed = std::max(progress.completed, progress.running);
  };

  // Cold: the first generation pays for lazy initialisation and the kernels' first choices.
  one_generation();
  r.cold.first_inference = last.step_seconds.front();
  const Upcasts upcasts = exec.upcasts();
  for (const auto& n : upcast_notices(upcasts, device->torch_device())) r.notices.push_back(n);
  int64_t warmups = 0;
  warm_up(o, *device, [&](size_t) {
    one_generation();
    ++warmups;
  });
  r.warmup_generations = warmups;

  // Measured generations: one sample each, its end-to-end time. A generation
  // can take longer than --max-time (meant for a pass of short runs): the
  // time-out never cuts the generations below --iters of them (1.5 x the last
  // generation's time a generation).
  ProfileOptions measured = o;
  measured.max_seconds = std::max(o.max_seconds, 1.5 * double(o.min_iterations) * sum(last.step_seconds));
  std::vector<double> ttft, tpot, itl, e2e, pp, tg;
  std::vector<std::vector<double>> per_step(size_t(gen.generate));
  std::vector<at::Tensor> first_tokens;
  const TimingSummary whole = sample_until_stable(measured, "generations", [&](size_t i) {
    one_generation();
    const std::vector<double>& s = last.step_seconds;
    const std::vector<double> decode = decode_steps(s);
    ttft.push_back(s.front());
    if (!decode.empty()) tpot.push_back(sum(decode) / double(decode.size()));
    itl.insert(itl.end(), decode.begin(), decode.end());
    for (size_t k = 0; k < s.size(); ++k) per_step[k].push_back(s[k]);
    pp.push_back(double(batch * gen.prompt) / s.front());
    if (!decode.empty()) tg.push_back(double(batch) * double(decode.size()) / sum(decode));
    if (i == 0) first_tokens = last.tokens;
    e2e.push_back(sum(s));
    return e2e.back();
  });
  r.ttft = to_summary(ttft, whole.stop_reason);
  r.end_to_end = whole;
  if (!tpot.empty()) r.tpot = to_summary(tpot, whole.stop_reason);
  if (!itl.empty()) r.itl = to_summary(itl, whole.stop_reason);
  r.prompt_tokens_per_second = rate_of(pp);
  if (!tg.empty()) r.generation_tokens_per_second = rate_of(tg);
  for (size_t k = 1; k < per_step.size(); ++k)
    r.step_curve.push_back({gen.prompt + int64_t(k), stats::summarize(per_step[k]).median});
  fit_step_curve(r);
  r.cold.steady_state_median = whole.median;

  const at::Tensor prompt = loop.prompt_tokens().to(at::kCPU);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<int64_t> p(size_t(gen.prompt)), g;
    for (int64_t k = 0; k < gen.prompt; ++k) p[size_t(k)] = prompt[b][k].item<int64_t>();
    for (const at::Tensor& step : first_tokens) g.push_back(step.to(at::kCPU)[b].item<int64_t>());
    r.prompt_tokens.push_back(std::move(p));
    r.generated_tokens.push_back(std::move(g));
  }

  // Peak memory of one more generation: the weights, and what the generation allocates on top.
  device->synchronize();
  const int64_t live_at_start = meter->live_bytes();
  meter->reset_peak();
  one_generation();
  device->synchronize();
  r.peak_memory_bytes = weights_bytes + (meter->peak_bytes() - live_at_start);
  r.memory_method = meter->method();
  r.kv_cache_bytes = last.cache_bytes;

  // The phases: their loop medians, forecasts and, with layers, their own passes.
  std::map<int64_t, GenerationLoop::State> states;  // step -> the state before it
  if (o.per_layer)
    with_oom_context(progress, gen.prompt, [&] {
      loop.generate(*timer, [&](const GenerationLoop::State& s) {
        watch(s);
        if (std::find(phase_steps.begin(), phase_steps.end(), s.step) != phase_steps.end())
          states.emplace(s.step, loop.snapshot(s));
      });
    });
  for (size_t i = 0; i < r.phases.size(); ++i) {
    GenerationPhase& phase = r.phases[i];
    const int64_t k = phase_steps[i];
    phase.loop_median_seconds = k == 0 ? r.ttft.median : r.step_curve[size_t(k - 1)].median_seconds;
    if (o.per_layer) with_oom_context(progress, gen.prompt, [&] {
        measure_phase(o, *device, exec, loop, states.at(k), phase);
      });
  }

  describe_run(*device, r.context);
  r.context.dtype = o.dtype != ComputeDtype::Own ? std::string(name_of(o.dtype))
                                                : short_dtype(model.graph.tensors[size_t(model.graph.find_tensor(
                                                                             found->tensors.front().input))]
                                                       .dtype);
  r.context.batch = batch;
  for (GenerationPhase& phase : r.phases) phase.profile.context = r.context;
  judge_slo(r);
  return r;
}

}  // namespace profiler

GenerationResult profile_generation(const std::string& path, const LoadOptions& load, const ProfileOptions& options,
                                    const GenerationOptions& generation) {
  try {
    return profiler::generate(path, load, options, generation);
  } catch (const Error& e) {
    if (!e.file().empty()) throw;
    throw Error(e.kind(), e.message(), path, e.node(), e.op());
  } catch (const std::exception& e) {
    const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
    std::string what = c10_error ? c10_error->what_without_backtrace() : e.what();
    throw Error(ErrorKind::Runtime, what.substr(0, what.find('\n')), path);
  }
}

}  // namespace modelstat

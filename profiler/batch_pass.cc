// Throughput (METHODOLOGY rule 7): the batch sweep and the largest batch
// that fits (doubling, then binary search, out-of-memory caught), each batch
// the session's model rebound: the file is read once per profile.
#include <algorithm>

#include "modelstat/error.hpp"
#include "profiler/sampling.hpp"
#include "profiler/session.hpp"
#include "profiler/torch_errors.hpp"

namespace modelstat::profiler {

namespace {

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

struct BatchRun {
  bool fits = false;
  std::string failure;
  TimingSummary time;
};

// One batch size: bind, build, warm up briefly, measure with the stopping rule.
BatchRun run_batch(const ProfileSession& s, int64_t batch) {
  const ProfileOptions& o = s.options;
  Device& device = *s.device;
  BatchRun r;
  try {
    Model model = s.file->bind(with_batch(*s.model, s.load, batch));
    // Past what the host has free the run is not tried: with overcommit the
    // kernel would kill the process rather than the allocation fail.
    const std::string refusal = host_memory_refusal(analyze_model(model), o, device, 1, false);
    if (!refusal.empty()) {
      r.failure = "exceeds host memory: " + refusal;
      return r;
    }
    Executor exec(model, s.executor->options());
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

}  // namespace

// A batch sweep or max-batch search rebinds the leading dim; a model that fixes
// it cannot be rebound. Say so before anything is measured, not after.
void check_batch_can_vary(const ModelFile& file, const Model& model, const LoadOptions& load) {
  const int64_t base = leading_batch(model);
  try {
    (void)file.bind(with_batch(model, load, base == 2 ? 3 : 2));
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Runtime) throw;
    throw Error(ErrorKind::Usage,
                "--batch-sweep / --max-batch need a model whose batch (leading) dim can vary, and this one cannot: " +
                    e.message() + " (export it with a symbolic batch dim, e.g. torch.onnx.export(..., "
                    "dynamic_axes={'input': {0: 'batch'}}))");
  }
}

void batch_pass(ProfileSession& s, ProfileResult& result) {
  const ProfileOptions& o = s.options;
  if (o.batch_sweep.empty() && !o.find_max_batch) return;
  for (int64_t b : o.batch_sweep) {
    if (b < 1) throw Error(ErrorKind::Usage, "batch sizes must be positive");
    result.batch_sweep.push_back(to_point(b, run_batch(s, b)));
  }
  if (!o.find_max_batch) return;
  // Doubling until out of memory (or the limit), then binary search between
  // the last fit and the first failure.
  int64_t good = 0, bad = 0;
  for (int64_t b = 1; b <= o.max_batch_limit; b *= 2) {
    BatchRun r = run_batch(s, b);
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
    BatchRun r = run_batch(s, mid);
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

}  // namespace modelstat::profiler

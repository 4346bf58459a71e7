#include "profiler/sampling.hpp"

#include <algorithm>

#include "modelstat/statistics.hpp"

namespace modelstat::profiler {

TimingSummary to_summary(const std::vector<double>& samples, const std::string& reason) {
  TimingSummary s;
  s.samples = samples;
  s.stop_reason = reason;
  if (samples.empty()) return s;
  const stats::SampleStats st = stats::summarize(samples);
  s.count = st.count;
  s.mean = st.mean;
  s.median = st.median;
  s.stddev = st.stddev;
  s.cv = st.cv;
  s.min = st.min;
  s.max = st.max;
  s.p50 = st.p50;
  s.p90 = st.p90;
  s.p95 = st.p95;
  s.p99 = st.p99;
  s.median_ci_low = st.median_ci_low;
  s.median_ci_high = st.median_ci_high;
  s.rel_ci = st.median_rel_ci_half_width;
  return s;
}

StoppingConfig stopping_config(const ProfileOptions& o) {
  StoppingConfig c;
  c.min_iterations = o.min_iterations;
  c.min_seconds = o.min_seconds;
  c.max_seconds = o.max_seconds;
  c.max_iterations = o.max_iterations;
  c.target_rel_ci = o.target_rel_ci;
  return c;
}

WarmupConfig warmup_config(const ProfileOptions& o) {
  return WarmupConfig{o.warmup_iterations, o.warmup_seconds, std::max(10.0, o.warmup_seconds)};
}

void warm_up(const ProfileOptions& o, Device& device, const std::function<void(size_t)>& run_once) {
  const WarmupConfig config = warmup_config(o);
  const auto start = Clock::now();
  for (int64_t i = 0; !warmup_done(config, i, since(start)); ++i) {
    run_once(size_t(i));
    device.synchronize();
  }
}

}  // namespace modelstat::profiler

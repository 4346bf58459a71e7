#include "profiler/sampling.hpp"

#include <algorithm>

#include "analyzer/measurements/timing_summary.hpp"

namespace modelstat::profiler {

TimingSummary to_summary(const std::vector<double>& samples, const std::string& reason) {
  return summarize_timing(samples, reason);
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

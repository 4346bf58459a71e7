// The measuring loop every timed pass shares (METHODOLOGY rules 3 and 5):
// warm-up by count and time, then samples under the stopping criterion, and
// the summary of the samples. `profile` (protocol.cc) and `pipeline`
// (pipeline.cc) both time through these, so the two never differ in warm-up,
// stopping rule or statistics.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "modelstat/profile.hpp"
#include "profiler/device.hpp"
#include "profiler/progress.hpp"
#include "profiler/stopping.hpp"

namespace modelstat::profiler {

using Clock = std::chrono::steady_clock;

inline double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The statistics of `samples` (stats::summarize), with the stop reason.
TimingSummary to_summary(const std::vector<double>& samples, const std::string& reason);

// The stopping rule of the options (--iters, --min-time, --max-time, --max-iters, --target-rel-ci).
StoppingConfig stopping_config(const ProfileOptions& o);

// The warm-up rule of the options (--warmup, --warmup-time), capped at
// max(10 s, --warmup-time) so a model that takes 30 s a run is not warmed up five times.
WarmupConfig warmup_config(const ProfileOptions& o);

// Runs `one` repeatedly under the stopping criterion; `one` returns a sample.
template <typename Fn>
TimingSummary sample_until_stable(const ProfileOptions& o, const char* label, Fn&& one) {
  MedianCiCriterion criterion(stopping_config(o));
  std::vector<double> samples;
  Progress progress(label, o.max_seconds);
  const auto start = Clock::now();
  while (true) {
    samples.push_back(one(samples.size()));
    const double elapsed = since(start);
    progress.update(elapsed, samples.size());
    if (criterion.should_stop(samples, elapsed)) break;
  }
  progress.done();
  return to_summary(samples, criterion.reason());
}

// Warm-up runs (run_once(i)), each followed by a device synchronisation.
void warm_up(const ProfileOptions& o, Device& device, const std::function<void(size_t)>& run_once);

}  // namespace modelstat::profiler

// The measuring loop every timed pass shares (METHODOLOGY rules 3 and 5):
// warm-up by count and time, then samples under the stopping criterion, and
// the summary of the samples. `profile` (protocol.cc) and `pipeline`
// (pipeline.cc) both time through these, so the two never differ in warm-up,
// stopping rule or statistics.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <utility>
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

// Two kinds of run alternated, `a` then `b`, each under its own stopping
// criterion and until both stop (the time-out is shared): the clean and the
// instrumented pass of one step taken side by side, so that a slow minute of a
// shared machine lands on both alike and their ratio shows the instrumentation,
// not the drift between two passes a few seconds apart (generation phases).
template <typename FnA, typename FnB>
std::pair<TimingSummary, TimingSummary> sample_interleaved_until_stable(const ProfileOptions& o, const char* label,
                                                                        FnA&& a, FnB&& b) {
  MedianCiCriterion stop_a(stopping_config(o)), stop_b(stopping_config(o));
  std::vector<double> samples_a, samples_b;
  Progress progress(label, o.max_seconds);
  const auto start = Clock::now();
  bool done_a = false, done_b = false;
  while (!(done_a && done_b)) {
    samples_a.push_back(a(samples_a.size()));
    samples_b.push_back(b(samples_b.size()));
    const double elapsed = since(start);
    progress.update(elapsed, samples_b.size());
    // Both keep running until both have stopped: pairs stay pairs.
    done_a = stop_a.should_stop(samples_a, elapsed) || done_a;
    done_b = stop_b.should_stop(samples_b, elapsed) || done_b;
  }
  progress.done();
  return {to_summary(samples_a, stop_a.reason()), to_summary(samples_b, stop_b.reason())};
}

// Warm-up runs (run_once(i)), each followed by a device synchronisation.
void warm_up(const ProfileOptions& o, Device& device, const std::function<void(size_t)>& run_once);

}  // namespace modelstat::profiler

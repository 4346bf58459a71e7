// How `modelstat device` times one operation (ceilings_probe.cc, op_cost_probe.cc):
// warm-up, repetitions sized to a minimum sample time, then samples until the
// median's confidence interval is narrow enough (METHODOLOGY "Runtime measurement").
#pragma once

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "modelstat/statistics.hpp"
#include "profiler/ceilings_plan.hpp"
#include "profiler/device.hpp"
#include "profiler/progress.hpp"
#include "profiler/stopping.hpp"

namespace modelstat::profiler {

inline double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

struct Timed {
  double seconds = 0;  // median seconds of one call
  std::string stop_reason;
  bool converged = false;
};

// Median duration of one call of `op`:
//  1. warm-up by count and time (plan.warmup), synchronising after each call;
//  2. repetitions per sample: doubled from 1 until one timed sample of that
//     many back-to-back calls lasts plan.min_sample_seconds (these runs warm
//     up too), as google/benchmark sizes its iteration counts;
//  3. samples of `reps` calls each, timed by the device's interval timer and
//     divided by reps, until plan.stopping's median-CI rule stops (its
//     time-out raised to fit min_iterations samples of a slow op).
template <typename Op>
Timed median_seconds(Device& device, const CeilingsPlan& plan, const std::string& label, Op&& op) {
  auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; !warmup_done(plan.warmup, i, seconds_since(start)); ++i) {
    op();
    device.synchronize();
  }

  auto timer = device.interval_timer();
  auto timed_batch = [&](int64_t reps) {
    timer->start();
    for (int64_t r = 0; r < reps; ++r) op();
    timer->stop();
    return timer->seconds();
  };
  constexpr int64_t kMaxReps = int64_t(1) << 20;
  int64_t reps = 1;
  double batch_seconds = timed_batch(reps);
  while (batch_seconds < plan.min_sample_seconds && reps < kMaxReps) {
    reps *= 2;
    batch_seconds = timed_batch(reps);
  }

  // The time-out bounds the wait for convergence; it never cuts a slow op
  // (a 1 GiB copy, a 2048^3 product on one core) below the minimum count.
  StoppingConfig stopping = plan.stopping;
  stopping.max_seconds = std::max(stopping.max_seconds, 1.5 * double(stopping.min_iterations) * batch_seconds);
  MedianCiCriterion criterion(stopping);
  std::vector<double> samples;
  Progress progress(label, stopping.max_seconds);
  start = std::chrono::steady_clock::now();
  while (true) {
    samples.push_back(timed_batch(reps) / double(reps));
    const double elapsed = seconds_since(start);
    progress.update(elapsed, samples.size());
    if (criterion.should_stop(samples, elapsed)) break;
  }
  progress.done();
  std::sort(samples.begin(), samples.end());
  Timed t;
  t.seconds = stats::median(samples);
  t.stop_reason = criterion.reason();
  t.converged = t.stop_reason.rfind("converged", 0) == 0;
  return t;
}

// Records in notes a measurement that stopped at its time-out or iteration cap.
inline void note_if_unconverged(const Timed& t, const std::string& what, std::vector<std::string>& notes) {
  if (!t.converged) notes.push_back(what + ": " + t.stop_reason);
}

}  // namespace modelstat::profiler

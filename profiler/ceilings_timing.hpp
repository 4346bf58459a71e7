// How `modelstat device` times one operation (ceilings_probe.cc, op_cost_probe.cc):
// warm-up, repetitions sized to a minimum sample time, then samples until the
// median's confidence interval is narrow enough (METHODOLOGY "Runtime measurement").
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
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

// A call at least this long is a sample of its own (median_seconds).
constexpr double kHeavyCallSeconds = 0.1;

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
  // An op of kHeavyCallSeconds or more a call is a sample of its own: the
  // sizing call (one call, after the warm-up) is the first sample, and 3
  // samples are its minimum count (each already averages a long interval).
  // The conv samples' points of 0.1 s or more a call took 8 calls each
  // before, 59 s of the Zen 3 VM's 426 s calibration.
  StoppingConfig stopping = plan.stopping;
  std::vector<double> samples;
  if (reps == 1 && batch_seconds >= kHeavyCallSeconds) {
    stopping.min_iterations = std::min<int64_t>(stopping.min_iterations, 3);
    samples.push_back(batch_seconds);
  }
  stopping.max_seconds = std::max(stopping.max_seconds, 1.5 * double(stopping.min_iterations) * batch_seconds);
  MedianCiCriterion criterion(stopping);
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

// A probe stage of many points with a time allotment (CeilingsPlan::allot:
// the matmul curves, the op classes, the conv samples, the optimizer
// updates). While the stage is on schedule (its elapsed time within the
// allotment's share of the points done, this one included), a point gets the
// plan as it is. Behind schedule, a point's
// stopping rule takes any interval: it stops at its minimum count and time
// (those times halved), as a point whose CI converged at once would, instead of waiting
// out a time-out that a noisy machine reaches on point after point. On the
// Zen 3 VM of the seventeenth session the conv samples took 185-205 s
// (a fifth of their points at their time-out) where the Zen 4 VMs took 104,
// and the calibration 426-452 s against the 300 s bound; a quiet machine is
// never behind and runs every point as before.
class StageSchedule {
 public:
  StageSchedule(double allotted_seconds, size_t expected_points)
      : allotted_(allotted_seconds), expected_(std::max<size_t>(1, expected_points)),
        start_(std::chrono::steady_clock::now()) {}

  // The plan of the next point (counts it).
  CeilingsPlan next(const CeilingsPlan& plan) {
    const double share = allotted_ * double(std::min(done_ + 1, expected_)) / double(expected_);
    ++done_;
    if (seconds_since(start_) <= share) return plan;
    ++behind_;
    CeilingsPlan p = plan;
    p.stopping.target_rel_ci = std::numeric_limits<double>::infinity();  // stop at the minimums
    // and half the minimum times (the minimum counts stay): the conv samples'
    // points at their minimums alone took 107 s on the Zen 3 VM.
    p.stopping.min_seconds *= 0.5;
    p.warmup.min_seconds *= 0.5;
    return p;
  }

  // "<stage>: 40 of 300 points behind its 105 s schedule (timed to their
  // minimum count and half their minimum time)"; empty when none was.
  std::string note(const std::string& stage) const {
    if (behind_ == 0) return {};
    return stage + ": " + std::to_string(behind_) + " of " + std::to_string(done_) + " points behind its " +
           std::to_string(int(allotted_ + 0.5)) + " s schedule (timed to their minimum count and half their minimum time)";
  }

  // The notes of the stage's end: note(stage) when it ran behind, and
  // "<stage>: <measured> of <points> points in <seconds> s" since it began.
  void note_end(const std::string& stage, size_t measured, size_t points, std::vector<std::string>& notes) const {
    if (std::string behind = note(stage); !behind.empty()) notes.push_back(behind);
    char text[160];
    std::snprintf(text, sizeof text, "%s: %zu of %zu points in %.1f s", stage.c_str(), measured, points,
                  seconds_since(start_));
    notes.push_back(text);
  }

 private:
  double allotted_;
  size_t expected_;
  std::chrono::steady_clock::time_point start_;
  size_t done_ = 0, behind_ = 0;
};

// Records in notes a measurement that stopped at its time-out or iteration cap.
inline void note_if_unconverged(const Timed& t, const std::string& what, std::vector<std::string>& notes) {
  if (!t.converged) notes.push_back(what + ": " + t.stop_reason);
}

}  // namespace modelstat::profiler

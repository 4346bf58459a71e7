// Synthetic sample streams: the loop below stands in for the timing loop, with a fake
// clock advancing by each sample (plus a fixed overhead), so tests are fast and exact.
#include "profiler/stopping.hpp"

#include <gtest/gtest.h>

#include <random>

#include "modelstat/error.hpp"

namespace modelstat::profiler {
namespace {

struct RunResult {
  size_t iterations = 0;
  double elapsed = 0;
  std::string reason;
};

// Feeds samples from `next()` until the criterion stops (or a safety cap).
template <typename Next>
RunResult run(StoppingCriterion& criterion, Next next, double overhead_seconds = 0.0) {
  std::vector<double> samples;
  double elapsed = 0.0;
  while (samples.size() < 5'000'000) {
    const double s = next();
    samples.push_back(s);
    elapsed += s + overhead_seconds;
    if (criterion.should_stop(samples, elapsed)) break;
  }
  return {samples.size(), elapsed, criterion.reason()};
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

TEST(Stopping, ConvergesOnceMinimumsAreMetForATightDistribution) {
  // 10 ms +- 0.1 % uniform noise: the median CI is far inside 1 % from the start, so the
  // minimum time (1 s = ~100 iterations) is what decides.
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> noise(0.00999, 0.01001);
  MedianCiCriterion c;
  const RunResult r = run(c, [&] { return noise(rng); });
  EXPECT_TRUE(starts_with(r.reason, "converged: rel CI ")) << r.reason;
  EXPECT_GE(r.elapsed, 1.0);
  EXPECT_LE(r.iterations, 102u);  // stops at the first iteration past 1 s
  EXPECT_NE(r.reason.find("<= 1.00%"), std::string::npos) << r.reason;
}

TEST(Stopping, MinimumIterationsHoldEvenWhenTimeIsUp) {
  // 0.5 s per sample: 1 s is reached after 2 samples, but 10 iterations are required.
  MedianCiCriterion c;
  const RunResult r = run(c, [] { return 0.5; });
  EXPECT_EQ(r.iterations, 10u);
  EXPECT_TRUE(starts_with(r.reason, "converged")) << r.reason;
}

TEST(Stopping, MinimumTimeHoldsEvenWhenIterationsAreEnough) {
  StoppingConfig config;
  config.min_seconds = 2.0;
  MedianCiCriterion c(config);
  const RunResult r = run(c, [] { return 0.001; });
  EXPECT_GE(r.elapsed, 2.0);
  EXPECT_LE(r.elapsed, 2.0 + 0.001 * 40);  // plus at most one evaluation step (n / 64)
}

TEST(Stopping, TimesOutOnANoisyStream) {
  // Uniform on [5, 15] ms: the 95 % median CI needs ~n = 2e5 samples to reach 0.1 %,
  // i.e. far beyond the 10 s time-out (about 1000 samples).
  std::mt19937_64 rng(2);
  std::uniform_real_distribution<double> noisy(0.005, 0.015);
  StoppingConfig config;
  config.target_rel_ci = 0.001;
  MedianCiCriterion c(config);
  const RunResult r = run(c, [&] { return noisy(rng); });
  EXPECT_GE(r.elapsed, 10.0);
  EXPECT_LT(r.elapsed, 10.02);
  EXPECT_TRUE(starts_with(r.reason, "time-out after 10.0 s: rel CI ")) << r.reason;
  EXPECT_NE(r.reason.find("> 0.10%"), std::string::npos) << r.reason;
  EXPECT_GT(c.last_rel_ci(), 0.001);
}

TEST(Stopping, IterationCap) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> noisy(0.5e-6, 1.5e-6);
  StoppingConfig config;
  config.max_iterations = 500;
  config.target_rel_ci = 0.0001;
  config.min_seconds = 0.0;
  MedianCiCriterion c(config);
  const RunResult r = run(c, [&] { return noisy(rng); });
  EXPECT_EQ(r.iterations, 500u);
  EXPECT_TRUE(starts_with(r.reason, "iteration cap 500 reached: rel CI ")) << r.reason;
}

TEST(Stopping, TimeOutBeforeAnyIntervalSaysSo) {
  // 4 s per sample: the time-out comes after 3 samples, too few for a 95 % interval.
  MedianCiCriterion c;
  const RunResult r = run(c, [] { return 4.0; });
  EXPECT_EQ(r.iterations, 3u);
  EXPECT_TRUE(starts_with(r.reason, "time-out after 12.0 s: rel CI n/a (3 samples")) << r.reason;
}

TEST(Stopping, ZeroTargetNeverConvergesEvenOnIdenticalSamples) {
  StoppingConfig config;
  config.target_rel_ci = 0.0;
  config.max_seconds = 3.0;
  MedianCiCriterion c(config);
  const RunResult r = run(c, [] { return 0.01; });
  EXPECT_TRUE(starts_with(r.reason, "time-out")) << r.reason;
}

TEST(Stopping, EvaluatesRarelyOnLongRuns) {
  // 1e5 iterations of 1 us: the interval must not be recomputed every iteration.
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> noisy(0.5e-6, 1.5e-6);
  StoppingConfig config;
  config.min_seconds = 0.0;
  config.target_rel_ci = 0.0;  // run to the cap
  config.max_iterations = 100'000;
  MedianCiCriterion c(config);
  const RunResult r = run(c, [&] { return noisy(rng); });
  EXPECT_EQ(r.iterations, 100'000u);
  // Geometric schedule, growth 1/64: about 64 * ln(1e5 / 64) + 64 ~ 535 evaluations.
  EXPECT_LT(c.evaluations(), 700);
  EXPECT_GT(c.evaluations(), 100);
}

TEST(Stopping, ResetsWhenAStreamStartsOver) {
  MedianCiCriterion c;
  RunResult first = run(c, [] { return 0.5; });
  EXPECT_EQ(first.iterations, 10u);
  // Same object, new run (fewer samples than last seen): state must not leak.
  RunResult second = run(c, [] { return 0.5; });
  EXPECT_EQ(second.iterations, 10u);
  c.reset();
  EXPECT_EQ(c.evaluations(), 0);
  EXPECT_EQ(c.reason(), "running: no samples yet");
}

TEST(Stopping, ReasonWhileRunning) {
  MedianCiCriterion c;
  std::vector<double> samples = {0.01, 0.01};
  EXPECT_FALSE(c.should_stop(samples, 0.02));
  EXPECT_TRUE(starts_with(c.reason(), "running: minimums not met (2/10 iterations")) << c.reason();
}

TEST(Stopping, WorksThroughTheInterface) {
  std::unique_ptr<StoppingCriterion> c = make_default_stopping_criterion();
  const RunResult r = run(*c, [] { return 0.25; });
  EXPECT_EQ(r.iterations, 10u);
}

TEST(Stopping, ValidatesConfig) {
  StoppingConfig bad;
  bad.min_seconds = 20.0;  // > max_seconds
  EXPECT_THROW(MedianCiCriterion{bad}, Error);
  bad = {};
  bad.min_iterations = 10;
  bad.max_iterations = 5;
  EXPECT_THROW(validate(bad), Error);
  bad = {};
  bad.target_rel_ci = -0.1;
  EXPECT_THROW(validate(bad), Error);
  bad = {};
  bad.confidence = 1.0;
  EXPECT_THROW(validate(bad), Error);
  EXPECT_NO_THROW(validate(StoppingConfig{}));
}

TEST(Stopping, Warmup) {
  const WarmupConfig w;                    // 5 iterations and 0.5 s, at most 10 s
  EXPECT_FALSE(warmup_done(w, 0, 100.0));  // always at least one run
  EXPECT_FALSE(warmup_done(w, 4, 1.0));
  EXPECT_FALSE(warmup_done(w, 5, 0.4));
  EXPECT_TRUE(warmup_done(w, 5, 0.5));
  EXPECT_TRUE(warmup_done(w, 1, 30.0));  // one 30 s run is warm-up enough
}

}  // namespace
}  // namespace modelstat::profiler

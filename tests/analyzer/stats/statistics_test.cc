// Hand-computed values; each expectation says where its number comes from.
#include "modelstat/statistics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>

#include "modelstat/error.hpp"

namespace modelstat::stats {
namespace {

std::vector<double> one_to(int n) {
  std::vector<double> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 1.0);
  return v;
}

TEST(Statistics, PercentileIsHyndmanFanType7) {
  const std::vector<double> x = {1, 2, 3, 4};
  // h = (n-1) p = 3 * 0.9 = 2.7 -> x[2] + 0.7 (x[3] - x[2]) = 3.7 (numpy.percentile(x, 90)).
  EXPECT_DOUBLE_EQ(percentile(x, 0.9), 3.7);
  EXPECT_DOUBLE_EQ(percentile(x, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(percentile(x, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(percentile(x, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(percentile(x, 0.25), 1.75);  // h = 0.75
  // 1..100 at 0.99: h = 98.01 -> 99 + 0.01 = 99.01 (numpy gives 99.01).
  EXPECT_NEAR(percentile(one_to(100), 0.99), 99.01, 1e-12);
  EXPECT_DOUBLE_EQ(percentile({7.0}, 0.3), 7.0);
  EXPECT_TRUE(std::isnan(percentile({}, 0.5)));
}

TEST(Statistics, MedianOddAndEven) {
  EXPECT_DOUBLE_EQ(median({1, 3, 8}), 3.0);
  EXPECT_DOUBLE_EQ(median({1, 3, 8, 10}), 5.5);
}

TEST(Statistics, MeanAndSampleStddev) {
  const std::vector<double> x = {2, 4, 4, 4, 5, 5, 7, 9};
  EXPECT_DOUBLE_EQ(mean(x), 5.0);
  // Sum of squared deviations = 9+1+1+1+0+0+4+16 = 32; s = sqrt(32 / 7) = 2.13808993529939...
  EXPECT_NEAR(sample_stddev(x), 2.138089935299395, 1e-12);
  EXPECT_DOUBLE_EQ(sample_stddev({3.0}), 0.0);
  EXPECT_TRUE(std::isnan(sample_stddev({})));
  EXPECT_TRUE(std::isnan(mean({})));
}

TEST(Statistics, MedianCiRanksMatchExactBinomial) {
  // n = 10, 95 %: P(B <= 1) = 11/1024 = 0.0107 <= 0.025 < P(B <= 2) = 56/1024,
  // so l = 2, u = 9, coverage 1 - 22/1024 = 0.978515625.
  MedianCiRanks r = median_ci_ranks(10, 0.95);
  EXPECT_EQ(r.lower, 2);
  EXPECT_EQ(r.upper, 9);
  EXPECT_DOUBLE_EQ(r.coverage, 1.0 - 22.0 / 1024.0);
  EXPECT_TRUE(r.reaches_confidence);
  // n = 6: P(B <= 0) = 1/64 <= 0.025 -> (1, 6), coverage 62/64. The smallest n that works.
  r = median_ci_ranks(6, 0.95);
  EXPECT_EQ(r.lower, 1);
  EXPECT_EQ(r.upper, 6);
  EXPECT_DOUBLE_EQ(r.coverage, 0.96875);
  EXPECT_TRUE(r.reaches_confidence);
  // n = 5: even (1, 5) covers only 1 - 2/32 = 0.9375 < 0.95.
  r = median_ci_ranks(5, 0.95);
  EXPECT_EQ(r.lower, 1);
  EXPECT_EQ(r.upper, 5);
  EXPECT_DOUBLE_EQ(r.coverage, 0.9375);
  EXPECT_FALSE(r.reaches_confidence);
  // n = 30: (10, 21); n = 100: (40, 61), coverage 0.9648 (tables, e.g. Conover).
  r = median_ci_ranks(30, 0.95);
  EXPECT_EQ(r.lower, 10);
  EXPECT_EQ(r.upper, 21);
  EXPECT_NEAR(r.coverage, 0.957226054742932, 1e-9);
  r = median_ci_ranks(100, 0.95);
  EXPECT_EQ(r.lower, 40);
  EXPECT_EQ(r.upper, 61);
  EXPECT_NEAR(r.coverage, 0.964799799782295, 1e-9);
  // Large n agrees with the normal approximation l = floor((n - z sqrt(n)) / 2 + 1/2), z = 1.959964.
  r = median_ci_ranks(1'000'000, 0.95);
  EXPECT_NEAR(static_cast<double>(r.lower), std::floor((1e6 - 1.959964 * 1000.0) / 2.0 + 0.5), 1.0);
  EXPECT_EQ(r.upper, 1'000'001 - r.lower);
  EXPECT_GE(r.coverage, 0.95);
  EXPECT_LT(r.coverage, 0.9502);
  // n = 1: no interval at all.
  r = median_ci_ranks(1, 0.95);
  EXPECT_EQ(r.lower, 1);
  EXPECT_EQ(r.upper, 1);
  EXPECT_FALSE(r.reaches_confidence);
  EXPECT_THROW(median_ci_ranks(10, 1.0), Error);
}

TEST(Statistics, MedianCiCoverageIsAtLeastTheConfidenceForEveryN) {
  for (int64_t n = 6; n <= 400; ++n) {
    const MedianCiRanks r = median_ci_ranks(n, 0.95);
    ASSERT_TRUE(r.reaches_confidence) << n;
    ASSERT_GE(r.coverage, 0.95) << n;
    ASSERT_LE(r.lower, r.upper) << n;
  }
}

TEST(Statistics, MedianConfidenceInterval) {
  const std::vector<double> x = one_to(100);
  const MedianInterval ci = median_confidence_interval(x, 0.95);
  EXPECT_DOUBLE_EQ(ci.median, 50.5);
  EXPECT_DOUBLE_EQ(ci.low, 40.0);   // x_(40)
  EXPECT_DOUBLE_EQ(ci.high, 61.0);  // x_(61)
  EXPECT_DOUBLE_EQ(ci.rel_half_width(), (61.0 - 40.0) / 2.0 / 50.5);
  EXPECT_TRUE(std::isinf(median_confidence_interval({0.0, 0.0, 0.0, 0.0, 0.0, 0.0}).rel_half_width()));
}

TEST(Statistics, UnsortedIntervalEqualsSortedInterval) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(0.0, 0.5);
  for (int n : {1, 2, 3, 5, 6, 7, 10, 31, 100, 101, 1000, 4097}) {
    std::vector<double> x(static_cast<size_t>(n));
    for (double& v : x) v = dist(rng);
    std::vector<double> sorted = x;
    std::sort(sorted.begin(), sorted.end());
    const MedianInterval want = median_confidence_interval(sorted, 0.95);
    const MedianInterval got = median_confidence_interval_unsorted(x, 0.95);
    EXPECT_DOUBLE_EQ(got.median, want.median) << n;
    EXPECT_DOUBLE_EQ(got.low, want.low) << n;
    EXPECT_DOUBLE_EQ(got.high, want.high) << n;
    EXPECT_EQ(got.reaches_confidence, want.reaches_confidence) << n;
  }
}

TEST(Statistics, SummarizeOneToHundred) {
  std::vector<double> x = one_to(100);
  std::shuffle(x.begin(), x.end(), std::mt19937(1));
  const SampleStats s = summarize(x);
  EXPECT_EQ(s.count, 100);
  EXPECT_DOUBLE_EQ(s.mean, 50.5);
  EXPECT_DOUBLE_EQ(s.median, 50.5);
  EXPECT_DOUBLE_EQ(s.p50, 50.5);
  // Sample variance of 1..n is n (n + 1) / 12 = 841.666...
  EXPECT_NEAR(s.stddev, std::sqrt(100.0 * 101.0 / 12.0), 1e-9);
  EXPECT_NEAR(s.cv, std::sqrt(100.0 * 101.0 / 12.0) / 50.5, 1e-12);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 100.0);
  EXPECT_NEAR(s.p90, 90.1, 1e-12);   // h = 89.1
  EXPECT_NEAR(s.p95, 95.05, 1e-12);  // h = 94.05
  EXPECT_NEAR(s.p99, 99.01, 1e-12);  // h = 98.01
  EXPECT_DOUBLE_EQ(s.median_ci_low, 40.0);
  EXPECT_DOUBLE_EQ(s.median_ci_high, 61.0);
  EXPECT_DOUBLE_EQ(s.median_rel_ci_half_width, 10.5 / 50.5);
  EXPECT_DOUBLE_EQ(s.median_ci_confidence, 0.95);
  EXPECT_NEAR(s.median_ci_coverage, 0.9648, 1e-4);
}

TEST(Statistics, SummarizeEmptyIsNaN) {
  const SampleStats s = summarize({});
  EXPECT_EQ(s.count, 0);
  EXPECT_TRUE(std::isnan(s.mean));
  EXPECT_TRUE(std::isnan(s.median));
  EXPECT_TRUE(std::isnan(s.p99));
  EXPECT_TRUE(std::isnan(s.median_rel_ci_half_width));
}

TEST(Statistics, MannWhitneyTortoiseAndHare) {
  // Wikipedia, "Mann-Whitney U test", Illustration: six tortoises (T) and six hares (H)
  // finish in the order T H H H H H T T T T T H. As finishing positions:
  const std::vector<double> tortoise = {1, 7, 8, 9, 10, 11};
  const std::vector<double> hare = {2, 3, 4, 5, 6, 12};
  // R_T = 46 -> U_T' = 46 - 21 = 25 pairs with the tortoise behind; U = min(25, 11) = 11
  // (the article's U_T = 11, the times a tortoise beat a hare).
  // sigma = sqrt(6 * 6 * 13 / 12) = sqrt(39); z = (25 - 18 - 0.5) / sqrt(39) = 1.040833;
  // p = erfc(z / sqrt 2) = 0.297953.
  MannWhitneyResult r = mann_whitney_u(tortoise, hare);
  EXPECT_DOUBLE_EQ(r.u_a, 25.0);
  EXPECT_DOUBLE_EQ(r.u, 11.0);
  EXPECT_NEAR(r.z, 6.5 / std::sqrt(39.0), 1e-12);
  EXPECT_NEAR(r.p_value, 0.297953061608168, 1e-9);
  EXPECT_NEAR(r.prob_a_greater, 25.0 / 36.0, 1e-12);
  // Without continuity correction: z = 7 / sqrt(39) = 1.120897, p = 0.262332.
  r = mann_whitney_u(tortoise, hare, /*continuity_correction=*/false);
  EXPECT_NEAR(r.z, 7.0 / std::sqrt(39.0), 1e-12);
  EXPECT_NEAR(r.p_value, 0.262331675408357, 1e-9);
  // Swapping the samples flips the sign of z only.
  EXPECT_NEAR(mann_whitney_u(hare, tortoise).z, -6.5 / std::sqrt(39.0), 1e-12);
}

TEST(Statistics, MannWhitneyTieCorrection) {
  // a = {1, 2, 2, 3}, b = {2, 3, 4, 5}. Pooled ranks: 1 -> 1; the three 2s -> 3;
  // the two 3s -> 5.5; 4 -> 7; 5 -> 8. R_a = 1 + 3 + 3 + 5.5 = 12.5, U_a = 12.5 - 10 = 2.5.
  // Tie term sum(t^3 - t) = 24 + 6 = 30; sigma^2 = 16/12 * (9 - 30/56) = 11.2857142857.
  // z = (2.5 - 8 + 0.5) / sqrt(11.2857142857) = -1.488351; p = 0.136658.
  const MannWhitneyResult r = mann_whitney_u({1, 2, 2, 3}, {2, 3, 4, 5});
  EXPECT_DOUBLE_EQ(r.u_a, 2.5);
  EXPECT_DOUBLE_EQ(r.u, 2.5);
  EXPECT_NEAR(r.z, -5.0 / std::sqrt(16.0 / 12.0 * (9.0 - 30.0 / 56.0)), 1e-12);
  EXPECT_NEAR(r.p_value, 0.136658247738148, 1e-9);
}

TEST(Statistics, MannWhitneyDegenerateInputs) {
  MannWhitneyResult r = mann_whitney_u({}, {1, 2});
  EXPECT_DOUBLE_EQ(r.p_value, 1.0);
  r = mann_whitney_u({3, 3, 3}, {3, 3});  // all tied: sigma = 0
  EXPECT_DOUBLE_EQ(r.z, 0.0);
  EXPECT_DOUBLE_EQ(r.p_value, 1.0);
  EXPECT_DOUBLE_EQ(r.u_a, 3.0);  // every pair a tie, counted 1/2: 6 pairs / 2
}

TEST(Statistics, MannWhitneyDetectsAShift) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0.0, 1.0);
  std::vector<double> a, b;
  for (int i = 0; i < 200; ++i) {
    a.push_back(10.0 + noise(rng));
    b.push_back(11.0 + noise(rng));
  }
  const MannWhitneyResult r = mann_whitney_u(a, b);
  EXPECT_LT(r.z, 0.0);
  EXPECT_LT(r.p_value, 1e-6);
}

TEST(Statistics, MannWhitneyExactSmallSamples) {
  // a = {1, 2, 3} below every b = {4, 5, 6}: U_a = 0, and of the C(6, 3) = 20 equally likely
  // rank arrangements only this one has U = 0, so p = 2 * 1/20 = 0.1 (by hand). The normal
  // approximation says z = (0 - 4.5 + 0.5) / sqrt(3 * 3 * 7 / 12) = -1.7457, p = 0.0809: for
  // samples this small it is off by a fifth.
  EXPECT_NEAR(mann_whitney_exact_p({1, 2, 3}, {4, 5, 6}), 0.1, 1e-12);
  EXPECT_NEAR(mann_whitney_u({1, 2, 3}, {4, 5, 6}).p_value, std::erfc(4.0 / std::sqrt(5.25) / std::sqrt(2.0)),
              1e-12);
  // Tortoise and hare (above): U = 11. Enumerating all C(12, 6) = 924 arrangements in plain
  // Python (itertools.combinations, no SciPy) finds 143 with U <= 11: p = 2 * 143 / 924.
  const std::vector<double> tortoise = {1, 7, 8, 9, 10, 11}, hare = {2, 3, 4, 5, 6, 12};
  EXPECT_NEAR(mann_whitney_exact_p(tortoise, hare), 286.0 / 924.0, 1e-12);
  EXPECT_NEAR(mann_whitney_exact_p(hare, tortoise), 286.0 / 924.0, 1e-12);  // two-sided: symmetric
  // Identical samples would be ties: no exact answer.
  EXPECT_TRUE(std::isnan(mann_whitney_exact_p({1, 2}, {2, 3})));
  EXPECT_TRUE(std::isnan(mann_whitney_exact_p({}, {2, 3})));
  // Too many pairs for the exact count: NaN, the caller uses the normal approximation.
  EXPECT_TRUE(std::isnan(mann_whitney_exact_p(one_to(60), one_to(60), 2500)));
  // Interleaved halves (U = n_a n_b / 2 exactly): p = 1.
  EXPECT_NEAR(mann_whitney_exact_p({1, 4}, {2, 3}), 1.0, 1e-12);
}

TEST(Statistics, BootstrapRatio) {
  std::mt19937_64 rng(5);
  std::lognormal_distribution<double> dist(0.0, 0.1);
  std::vector<double> a, b;
  for (int i = 0; i < 300; ++i) {
    b.push_back(dist(rng));
    a.push_back(2.0 * dist(rng));
  }
  const RatioInterval r = bootstrap_ci_ratio(a, b, 0.95, 1000, 11);
  EXPECT_LE(r.low, r.ratio);
  EXPECT_GE(r.high, r.ratio);
  EXPECT_LT(r.low, 2.0);
  EXPECT_GT(r.high, 2.0);
  EXPECT_GT(r.low, 1.9);
  EXPECT_LT(r.high, 2.1);
  const RatioInterval again = bootstrap_ci_ratio(a, b, 0.95, 1000, 11);
  EXPECT_DOUBLE_EQ(again.low, r.low);  // deterministic for a seed
  EXPECT_DOUBLE_EQ(again.high, r.high);
  EXPECT_THROW(bootstrap_ci_ratio({}, b), Error);
}

TEST(Statistics, BootstrapRatioSmallCasesByHand) {
  // Constant sets: every resample has the same median, the interval is a point.
  RatioInterval r = bootstrap_ci_ratio({2, 2, 2}, {1, 1}, 0.95, 500, 1);
  EXPECT_DOUBLE_EQ(r.ratio, 2.0);
  EXPECT_DOUBLE_EQ(r.low, 2.0);
  EXPECT_DOUBLE_EQ(r.high, 2.0);
  // a = {1, 3} (even n: the median averages the two middle values): a resample is {1, 1},
  // {1, 3}, {3, 1} or {3, 3}, median 1, 2, 2, 3 with probabilities 1/4, 1/2, 1/4. Over b = {1}
  // the ratio is that median; the 2.5% and 97.5% points of 2000 such draws are 1 and 3 (each
  // end holds ~25% of them, far more than 2.5%).
  r = bootstrap_ci_ratio({1, 3}, {1}, 0.95, 2000, 7);
  EXPECT_DOUBLE_EQ(r.ratio, 2.0);
  EXPECT_DOUBLE_EQ(r.low, 1.0);
  EXPECT_DOUBLE_EQ(r.high, 3.0);
  // A 40% interval sits inside the middle half, where every draw is 2.
  r = bootstrap_ci_ratio({1, 3}, {1}, 0.40, 2000, 7);
  EXPECT_DOUBLE_EQ(r.low, 2.0);
  EXPECT_DOUBLE_EQ(r.high, 2.0);
}

}  // namespace
}  // namespace modelstat::stats

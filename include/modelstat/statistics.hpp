// Sample statistics for runtime measurements (METHODOLOGY "Runtime measurement", rule 5).
//
// Small free functions, each with its formula next to it, in the manner of nvbench's
// detail/statistics.cuh. Samples are durations in seconds; nothing here knows whether they
// came from CUDA events or the host clock (that distinction lives in profiler/timer.hpp and
// the result model, which keep GPU time and CPU time apart). Implemented by its own library
// (modelstat_stats, analyzer/stats/), not by the profiler, because `modelstat compare` tests
// saved samples in the `modelstat` binary, which never links LibTorch.
//
// Conventions:
//   * Percentiles use linear interpolation between closest ranks: Hyndman & Fan (1996)
//     type 7, which is NumPy's default (`numpy.percentile(..., method="linear")`), R's
//     default and Excel's PERCENTILE.INC. p is a fraction in [0, 1], not a percent.
//   * The standard deviation is the sample standard deviation (divisor n - 1).
//   * The confidence interval of the median is distribution-free (order statistics), so it
//     stays honest for the skewed, heavy-tailed latency distributions seen in practice.
#pragma once

#include <cstdint>
#include <vector>

namespace modelstat::stats {

// Everything a report shows about one set of samples. Times in seconds.
// For an empty sample set, count is 0 and every other field is NaN.
struct SampleStats {
  int64_t count = 0;
  double mean = 0, median = 0, stddev = 0, cv = 0, min = 0, max = 0;
  double p50 = 0, p90 = 0, p95 = 0, p99 = 0;
  // Distribution-free confidence interval of the median (see median_confidence_interval).
  double median_ci_low = 0, median_ci_high = 0;
  // (median_ci_high - median_ci_low) / 2 / median; the quantity the stopping rule targets.
  double median_rel_ci_half_width = 0;
  // Confidence that was asked for, and the coverage the order-statistic interval really has
  // (>= the confidence, except for tiny n where no interval can reach it: see
  // MedianInterval::reaches_confidence).
  double median_ci_confidence = 0, median_ci_coverage = 0;
};

// All statistics of `samples` (taken by value: sorted once, in place).
// `confidence` is for the median interval, in (0, 1).
SampleStats summarize(std::vector<double> samples, double confidence = 0.95);

// ---- Location and spread -------------------------------------------------------------

// mean = (1/n) * sum_i x_i. NaN for n = 0.
double mean(const std::vector<double>& x);

// s = sqrt( sum_i (x_i - mean)^2 / (n - 1) )   (two-pass, Bessel-corrected).
// 0 for n = 1, NaN for n = 0.
double sample_stddev(const std::vector<double>& x);

// Ordinary least-squares line y = slope * x + intercept through (x_i, y_i):
//   slope = sum_i (x_i - mean x)(y_i - mean y) / sum_i (x_i - mean x)^2,
//   intercept = mean y - slope * mean x.
// slope 0 and intercept mean y when every x is the same; NaN both for n = 0 or
// x and y of different lengths. (A decode step's time against its context.)
struct LineFit {
  double slope = 0, intercept = 0;
};
LineFit least_squares_line(const std::vector<double>& x, const std::vector<double>& y);

// Percentile of ascending-sorted data, Hyndman-Fan type 7 (NumPy default):
//   h = (n - 1) * p,   lo = floor(h),
//   Q(p) = x[lo] + (h - lo) * (x[lo + 1] - x[lo])        (0-based x; x[n] := x[n - 1]).
// p in [0, 1] (clamped). NaN for n = 0.
double percentile(const std::vector<double>& sorted, double p);

// median = percentile(sorted, 0.5): the middle value, or the mean of the two middle values.
double median(const std::vector<double>& sorted);
// The median of values in any order (sorts a copy); NaN-free input expected.
double median_of(std::vector<double> values);

// ---- Confidence interval of the median --------------------------------------------------

// 1-based ranks (l, u) of the order statistics bounding the median's confidence interval.
//
// For any continuous distribution with median m, the number B of samples below m is
// Binomial(n, 1/2), so
//   P( x_(l) <= m < x_(u) ) = P( l <= B <= u - 1 ) = 1 - 2 * P(B <= l - 1)     (u = n + 1 - l).
// We pick the largest l with P(B <= l - 1) <= (1 - confidence) / 2, from the exact
// binomial CDF P(B <= k) = 2^-n * sum_{j<=k} C(n, j) for every n: the pmf is summed in log
// space from 10 standard deviations (5 sqrt(n)) below n/2, where the neglected mass is
// < 1e-23, so the cost is O(sqrt(n)) and no normal approximation is needed.
// (The normal approximation l ~ (n - z sqrt(n)) / 2 + 1/2 gives the same ranks for large n,
// e.g. l = 40, u = 61 for n = 100 at 95 %.)
// coverage = 1 - 2 * P(B <= l - 1).
// When even (x_(1), x_(n)) cannot reach the confidence (n < 6 at 95 %), the ranks are
// (1, n), coverage is what that interval gives and reaches_confidence is false.
struct MedianCiRanks {
  int64_t lower = 0;  // l, 1-based
  int64_t upper = 0;  // u, 1-based
  double coverage = 0;
  bool reaches_confidence = false;
};
MedianCiRanks median_ci_ranks(int64_t n, double confidence);

struct MedianInterval {
  double median = 0;
  double low = 0, high = 0;
  double coverage = 0;
  bool reaches_confidence = false;
  // (high - low) / 2 / median. +infinity when the median is 0 (or the sample set empty).
  double rel_half_width() const;
};

// Interval [x_(l), x_(u)] from median_ci_ranks on ascending-sorted data. O(1).
MedianInterval median_confidence_interval(const std::vector<double>& sorted, double confidence = 0.95);

// Same interval on unsorted data, by selection (std::nth_element) instead of sorting: O(n).
// Reorders `values`. Used by the stopping rule, which re-evaluates as samples arrive.
MedianInterval median_confidence_interval_unsorted(std::vector<double>& values, double confidence = 0.95);

// ---- Comparing two sample sets ------------------------------------------------------------

struct MannWhitneyResult {
  double u_a = 0;               // U of sample a: number of pairs (a_i, b_j) with a_i > b_j, ties count 1/2
  double u = 0;                 // min(U_a, U_b), the textbook statistic
  double z = 0;                 // normal approximation, signed: > 0 when a tends to be larger than b
  double p_value = 1;           // two-sided, from z
  double prob_a_greater = 0.5;  // common-language effect size U_a / (n_a * n_b)
};

// Mann-Whitney U test (Wilcoxon rank-sum), normal approximation with tie correction.
//   Rank the pooled n = n_a + n_b samples, tied values getting the average of their ranks;
//   R_a = sum of a's ranks;  U_a = R_a - n_a (n_a + 1) / 2;  U_b = n_a n_b - U_a.
//   mu = n_a n_b / 2
//   sigma^2 = n_a n_b / 12 * ( (n + 1) - sum_t (t^3 - t) / (n (n - 1)) )   (t: size of each tie group)
//   z = (U_a - mu -+ 0.5) / sigma   (continuity correction of 0.5 towards 0, as SciPy's default)
//   p = 2 * (1 - Phi(|z|)) = erfc(|z| / sqrt(2)).
// The normal approximation is fine for n_a, n_b >= ~8; the timing loop gives hundreds.
// Empty input or all-equal values (sigma = 0) give z = 0, p = 1.
MannWhitneyResult mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b,
                                 bool continuity_correction = true);

// Exact two-sided p-value of the Mann-Whitney U test, for small samples without ties.
//   Under H0 (both samples from one continuous distribution) every assignment of the pooled
//   ranks to a is equally likely, so P(U_a = u) = c(u; n_a, n_b) / C(n_a + n_b, n_a), where
//   c(u; m, n), the number of rank arrangements with U = u, satisfies
//     c(u; m, n) = c(u - n; m - 1, n) + c(u; m, n - 1),   c(0; m, 0) = c(0; 0, n) = 1
//   (the largest pooled value belongs to a, beating all n values of b, or to b).
//   U is symmetric about n_a n_b / 2, so p = min(1, 2 * P(U <= min(U_a, U_b))).
// This is SciPy's `mannwhitneyu(..., method="exact")`. Returns NaN when there are ties (the
// exact null distribution above assumes none), when either sample is empty, or when
// n_a * n_b > max_pairs (the cost is O(n_a * n_b * U) with U <= n_a n_b / 2; the normal
// approximation is accurate long before 50 x 50).
double mann_whitney_exact_p(const std::vector<double>& a, const std::vector<double>& b,
                            int64_t max_pairs = 2500);

struct RatioInterval {
  double ratio = 0;  // median(a) / median(b)
  double low = 0, high = 0;
};

// Percentile-bootstrap confidence interval of median(a) / median(b):
//   repeat `resamples` times: draw n_a values from a and n_b from b with replacement,
//   r* = median(a*) / median(b*); the interval is the ((1-c)/2, (1+c)/2) type-7 percentiles
//   of the r*. Deterministic for a given seed (std::mt19937_64). O(resamples * (n_a + n_b)).
RatioInterval bootstrap_ci_ratio(const std::vector<double>& a, const std::vector<double>& b,
                                 double confidence = 0.95, int resamples = 2000, uint64_t seed = 42);

}  // namespace modelstat::stats

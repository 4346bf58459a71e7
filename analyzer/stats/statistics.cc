// Formulas are stated next to the declarations in statistics.hpp; comments here say only
// what the code cannot.
#include "modelstat/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "modelstat/error.hpp"
#include "modelstat/profile.hpp"

namespace modelstat {
// Declared in modelstat/profile.hpp: the method every percentile and median CI here uses.
const char* const kPercentileMethod =
    "percentiles: linear interpolation between closest ranks (Hyndman-Fan type 7, NumPy default); "
    "median 95% CI: distribution-free, binomial order statistics";
}  // namespace modelstat

namespace modelstat::stats {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

void check_confidence(double confidence, const char* who) {
  if (!(confidence > 0.0 && confidence < 1.0)) {
    throw Error(ErrorKind::Usage,
                std::string(who) + ": confidence must be in (0, 1), got " + std::to_string(confidence));
  }
}

}  // namespace

double mean(const std::vector<double>& x) {
  if (x.empty()) return kNaN;
  // Accumulate in long double: latency samples are all of one sign and similar size, so
  // plain summation is accurate; the wider accumulator costs nothing measurable here.
  long double sum = 0;
  for (double v : x) sum += v;
  return static_cast<double>(sum / static_cast<long double>(x.size()));
}

double sample_stddev(const std::vector<double>& x) {
  if (x.empty()) return kNaN;
  if (x.size() == 1) return 0.0;
  const double m = mean(x);
  long double ss = 0;
  for (double v : x) ss += static_cast<long double>(v - m) * (v - m);
  return std::sqrt(static_cast<double>(ss / static_cast<long double>(x.size() - 1)));
}

LineFit least_squares_line(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.empty() || x.size() != y.size()) return {kNaN, kNaN};
  const double mx = mean(x), my = mean(y);
  long double sxy = 0, sxx = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += static_cast<long double>(x[i] - mx) * (y[i] - my);
    sxx += static_cast<long double>(x[i] - mx) * (x[i] - mx);
  }
  if (sxx == 0) return {0.0, my};
  const double slope = static_cast<double>(sxy / sxx);
  return {slope, my - slope * mx};
}

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return kNaN;
  p = std::clamp(p, 0.0, 1.0);
  const double h = static_cast<double>(sorted.size() - 1) * p;
  const size_t lo = static_cast<size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted.back();
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[lo + 1] - sorted[lo]);
}

double median(const std::vector<double>& sorted) {
  return percentile(sorted, 0.5);
}

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return median(values);
}

MedianCiRanks median_ci_ranks(int64_t n, double confidence) {
  check_confidence(confidence, "median_ci_ranks");
  MedianCiRanks r;
  if (n <= 0) return r;
  const double tail = (1.0 - confidence) / 2.0;
  const double nd = static_cast<double>(n);

  // Walk the binomial(n, 1/2) CDF upwards from j0.
  // Start 10 sigma (sigma = sqrt(n)/2) below the mean; the mass below is negligible.
  const int64_t j0 = std::max<int64_t>(0, static_cast<int64_t>(std::floor(nd / 2.0 - 5.0 * std::sqrt(nd))));
  const double log_half_n = nd * std::log(0.5);
  const auto log_pmf = [&](int64_t j) {
    const double jd = static_cast<double>(j);
    return std::lgamma(nd + 1.0) - std::lgamma(jd + 1.0) - std::lgamma(nd - jd + 1.0) + log_half_n;
  };
  double pmf = std::exp(log_pmf(j0));  // P(B = j)
  double cdf = 0.0;                    // P(B <= j - 1)
  int64_t l = 0;                       // the largest l found so far with P(B <= l - 1) <= tail
  double below_l = 0.0;                // P(B <= l - 1) for that l
  for (int64_t j = j0; j <= n; ++j) {
    // Here cdf = P(B <= j - 1): is l = j acceptable?
    if (cdf > tail) break;
    l = j;
    below_l = cdf;
    cdf += pmf;
    pmf *= static_cast<double>(n - j) / static_cast<double>(j + 1);  // C(n, j+1) / C(n, j)
  }
  // l = 0 means even (x_(1), x_(n)) is too narrow (j0 = 0 and P(B <= 0) = 2^-n > tail):
  // report that interval with the coverage it really has.
  r.reaches_confidence = l >= 1;
  if (l == 0) {
    l = 1;
    below_l = std::exp(log_half_n);
  }
  r.lower = l;
  r.upper = n + 1 - l;
  r.coverage = std::max(0.0, 1.0 - 2.0 * below_l);
  return r;
}

double MedianInterval::rel_half_width() const {
  if (!(std::abs(median) > 0.0)) return kInf;  // also catches NaN
  return (high - low) / 2.0 / std::abs(median);
}

MedianInterval median_confidence_interval(const std::vector<double>& sorted, double confidence) {
  const MedianCiRanks r = median_ci_ranks(static_cast<int64_t>(sorted.size()), confidence);
  MedianInterval out;
  if (sorted.empty()) {
    out.median = out.low = out.high = kNaN;
    return out;
  }
  out.median = median(sorted);
  out.low = sorted[static_cast<size_t>(r.lower - 1)];
  out.high = sorted[static_cast<size_t>(r.upper - 1)];
  out.coverage = r.coverage;
  out.reaches_confidence = r.reaches_confidence;
  return out;
}

MedianInterval median_confidence_interval_unsorted(std::vector<double>& values, double confidence) {
  const size_t n = values.size();
  const MedianCiRanks r = median_ci_ranks(static_cast<int64_t>(n), confidence);
  MedianInterval out;
  if (n == 0) {
    out.median = out.low = out.high = kNaN;
    return out;
  }
  // Select the upper middle element; everything left of it is <= it, everything right >=.
  const size_t mid = n / 2;
  const auto begin = values.begin();
  std::nth_element(begin, begin + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper_mid = values[mid];
  if (n % 2 == 1) {
    out.median = upper_mid;
  } else {
    const double lower_mid = *std::max_element(begin, begin + static_cast<std::ptrdiff_t>(mid));
    out.median = lower_mid + 0.5 * (upper_mid - lower_mid);  // type 7 at p = 0.5
  }
  // Lower bound (0-based index lower-1 <= mid) lies in the left part, upper bound in the right.
  const size_t lo = static_cast<size_t>(r.lower - 1), hi = static_cast<size_t>(r.upper - 1);
  if (lo < mid) {
    std::nth_element(begin, begin + static_cast<std::ptrdiff_t>(lo),
                     begin + static_cast<std::ptrdiff_t>(mid));
  }
  out.low = values[lo];
  if (hi > mid) {
    std::nth_element(begin + static_cast<std::ptrdiff_t>(mid + 1), begin + static_cast<std::ptrdiff_t>(hi),
                     values.end());
  }
  out.high = values[hi];
  out.coverage = r.coverage;
  out.reaches_confidence = r.reaches_confidence;
  return out;
}

SampleStats summarize(std::vector<double> samples, double confidence) {
  check_confidence(confidence, "summarize");
  SampleStats s;
  s.count = static_cast<int64_t>(samples.size());
  s.median_ci_confidence = confidence;
  if (samples.empty()) {
    s.mean = s.median = s.stddev = s.cv = s.min = s.max = kNaN;
    s.p50 = s.p90 = s.p95 = s.p99 = kNaN;
    s.median_ci_low = s.median_ci_high = s.median_rel_ci_half_width = s.median_ci_coverage = kNaN;
    return s;
  }
  std::sort(samples.begin(), samples.end());
  s.mean = mean(samples);
  s.stddev = sample_stddev(samples);
  s.cv = s.mean != 0.0 ? s.stddev / s.mean : kNaN;  // coefficient of variation = s / mean
  s.min = samples.front();
  s.max = samples.back();
  s.p50 = percentile(samples, 0.50);
  s.p90 = percentile(samples, 0.90);
  s.p95 = percentile(samples, 0.95);
  s.p99 = percentile(samples, 0.99);
  s.median = s.p50;
  const MedianInterval ci = median_confidence_interval(samples, confidence);
  s.median_ci_low = ci.low;
  s.median_ci_high = ci.high;
  s.median_rel_ci_half_width = ci.rel_half_width();
  s.median_ci_coverage = ci.coverage;
  return s;
}

MannWhitneyResult mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b,
                                 bool continuity_correction) {
  MannWhitneyResult r;
  const size_t na = a.size(), nb = b.size();
  if (na == 0 || nb == 0) return r;

  // Pool as (value, from_a) and sort; equal values form one tie group sharing the mean rank.
  std::vector<std::pair<double, bool>> pooled;
  pooled.reserve(na + nb);
  for (double v : a) pooled.emplace_back(v, true);
  for (double v : b) pooled.emplace_back(v, false);
  std::sort(pooled.begin(), pooled.end(), [](const auto& x, const auto& y) { return x.first < y.first; });

  const double n = static_cast<double>(na + nb);
  double rank_sum_a = 0.0, tie_term = 0.0;  // tie_term = sum_t (t^3 - t)
  for (size_t i = 0; i < pooled.size();) {
    size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double mean_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;  // ranks i+1..j
    for (size_t k = i; k < j; ++k) {
      if (pooled[k].second) rank_sum_a += mean_rank;
    }
    tie_term += t * t * t - t;
    i = j;
  }
  const double nad = static_cast<double>(na), nbd = static_cast<double>(nb);
  r.u_a = rank_sum_a - nad * (nad + 1.0) / 2.0;
  const double u_b = nad * nbd - r.u_a;
  r.u = std::min(r.u_a, u_b);
  r.prob_a_greater = r.u_a / (nad * nbd);

  const double mu = nad * nbd / 2.0;
  const double var = nad * nbd / 12.0 * ((n + 1.0) - (n > 1.0 ? tie_term / (n * (n - 1.0)) : 0.0));
  if (!(var > 0.0)) return r;  // every value equal: no evidence either way (z = 0, p = 1)
  double diff = r.u_a - mu;
  if (continuity_correction) diff = diff > 0 ? std::max(0.0, diff - 0.5) : std::min(0.0, diff + 0.5);
  r.z = diff / std::sqrt(var);
  r.p_value = std::min(1.0, std::erfc(std::abs(r.z) / std::sqrt(2.0)));
  return r;
}

double mann_whitney_exact_p(const std::vector<double>& a, const std::vector<double>& b, int64_t max_pairs) {
  const int64_t na = static_cast<int64_t>(a.size()), nb = static_cast<int64_t>(b.size());
  if (na == 0 || nb == 0 || na * nb > max_pairs) return kNaN;
  std::vector<std::pair<double, bool>> pooled;  // (value, from_a)
  pooled.reserve(a.size() + b.size());
  for (double v : a) pooled.emplace_back(v, true);
  for (double v : b) pooled.emplace_back(v, false);
  std::sort(pooled.begin(), pooled.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  // U_a = pairs with a_i > b_j: for each a value, the b values below it.
  int64_t u_a = 0, b_below = 0;
  for (size_t i = 0; i < pooled.size(); ++i) {
    if (i > 0 && pooled[i].first == pooled[i - 1].first) return kNaN;  // a tie
    if (pooled[i].second) {
      u_a += b_below;
    } else {
      ++b_below;
    }
  }
  const int64_t u_obs = std::min(u_a, na * nb - u_a);

  // counts[n][u] = c(u; m, n) for the current m, u <= u_obs only (smaller u never needs larger).
  const size_t width = static_cast<size_t>(u_obs) + 1;
  std::vector<std::vector<double>> counts(static_cast<size_t>(nb) + 1, std::vector<double>(width, 0.0));
  for (auto& row : counts) row[0] = 1.0;  // m = 0: the only arrangement has U = 0
  for (int64_t m = 1; m <= na; ++m) {
    // In place: row n still holds m - 1 and row n - 1 already holds m. Walking u downwards
    // reads row[u - n] before this pass overwrites it.
    for (int64_t n = 1; n <= nb; ++n) {
      auto& row = counts[static_cast<size_t>(n)];
      const auto& prev_n = counts[static_cast<size_t>(n - 1)];
      for (int64_t u = u_obs; u >= 0; --u) {
        const double from_a = u >= n ? row[static_cast<size_t>(u - n)] : 0.0;
        row[static_cast<size_t>(u)] = from_a + prev_n[static_cast<size_t>(u)];
      }
    }
  }
  const auto& last = counts[static_cast<size_t>(nb)];
  const double tail_count = std::accumulate(last.begin(), last.end(), 0.0);
  // C(n_a + n_b, n_a), every arrangement.
  const double total =
      std::exp(std::lgamma(static_cast<double>(na + nb + 1)) - std::lgamma(static_cast<double>(na + 1)) -
               std::lgamma(static_cast<double>(nb + 1)));
  return std::min(1.0, 2.0 * tail_count / total);
}

RatioInterval bootstrap_ci_ratio(const std::vector<double>& a, const std::vector<double>& b,
                                 double confidence, int resamples, uint64_t seed) {
  check_confidence(confidence, "bootstrap_ci_ratio");
  if (a.empty() || b.empty()) throw Error(ErrorKind::Usage, "bootstrap_ci_ratio: empty sample set");
  if (resamples < 1) throw Error(ErrorKind::Usage, "bootstrap_ci_ratio: resamples must be >= 1");

  // The median of a resample, without building it. With x sorted, drawing indices and
  // taking values is monotone, so the resample's order statistics are x at the order
  // statistics of the drawn indices: count the draws per index, then walk the counts to the
  // middle. O(n) integer work instead of a selection over n doubles (5x faster here), and the
  // same distribution as resampling the values themselves.
  struct Resampler {
    std::vector<double> sorted;
    std::vector<uint32_t> counts;
    explicit Resampler(const std::vector<double>& x) : sorted(x), counts(x.size()) {
      std::sort(sorted.begin(), sorted.end());
    }
    double median_of_resample(std::mt19937_64& rng) {
      const size_t n = sorted.size();
      std::fill(counts.begin(), counts.end(), 0u);
      if (n < (uint64_t(1) << 32)) {
        // Two indices per 64-bit draw, each floor(u32 * n / 2^32) (Lemire's multiply-shift):
        // no rejection loop; the bias, under n / 2^32 per index, is far below what a
        // percentile of a few thousand resamples can show. The draws are most of the cost.
        const uint64_t n64 = n;
        size_t i = 0;
        for (; i + 1 < n; i += 2) {
          const uint64_t r = rng();
          ++counts[((r & 0xffffffffu) * n64) >> 32];
          ++counts[((r >> 32) * n64) >> 32];
        }
        if (i < n) ++counts[((rng() & 0xffffffffu) * n64) >> 32];
      } else {
        std::uniform_int_distribution<size_t> pick(0, n - 1);
        for (size_t i = 0; i < n; ++i) ++counts[pick(rng)];
      }
      // Type 7 at p = 0.5: 0-based order statistics lo = (n - 1) / 2 and hi = n / 2.
      const size_t lo_rank = (n - 1) / 2, hi_rank = n / 2;
      size_t seen = 0, j = 0;
      while (seen + counts[j] <= lo_rank) seen += counts[j++];
      const double lower = sorted[j];
      while (seen + counts[j] <= hi_rank) seen += counts[j++];
      return lower + 0.5 * (sorted[j] - lower);
    }
  };

  Resampler ra(a), rb(b);
  RatioInterval out;
  out.ratio = median(ra.sorted) / median(rb.sorted);
  std::mt19937_64 rng(seed);
  std::vector<double> ratios;
  ratios.reserve(static_cast<size_t>(resamples));
  for (int k = 0; k < resamples; ++k) {
    const double ma = ra.median_of_resample(rng);
    ratios.push_back(ma / rb.median_of_resample(rng));
  }
  std::sort(ratios.begin(), ratios.end());
  out.low = percentile(ratios, (1.0 - confidence) / 2.0);
  out.high = percentile(ratios, (1.0 + confidence) / 2.0);
  return out;
}

}  // namespace modelstat::stats

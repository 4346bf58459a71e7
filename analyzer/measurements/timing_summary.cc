#include "analyzer/measurements/timing_summary.hpp"

#include "modelstat/statistics.hpp"

namespace modelstat {

TimingSummary summarize_timing(const std::vector<double>& samples, const std::string& stop_reason) {
  TimingSummary s;
  s.samples = samples;
  s.stop_reason = stop_reason;
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

}  // namespace modelstat

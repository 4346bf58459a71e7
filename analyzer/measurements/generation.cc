// The generation record's own rules (include/modelstat/generation.hpp): the
// token choice's names, the step curve's line, the SLO verdicts and the join
// of each phase on the roofline. No LibTorch: `report --generate` and the
// writers' tests build records without running anything.
#include <cmath>

#include "modelstat/error.hpp"
#include "modelstat/generation.hpp"
#include "modelstat/statistics.hpp"

namespace modelstat {

const char* const kGenerationJsonSchemaVersion = "1.0";

const char* token_choice_name(TokenChoice c) { return c == TokenChoice::Greedy ? "greedy" : "random"; }

TokenChoice parse_token_choice(const std::string& text) {
  if (text == "greedy") return TokenChoice::Greedy;
  if (text == "random") return TokenChoice::Random;
  throw Error(ErrorKind::Usage, "--tokens must be greedy or random, got '" + text + "'");
}

void fit_step_curve(GenerationResult& result) {
  std::vector<double> x, y;
  for (const ContextPoint& p : result.step_curve) {
    if (!std::isfinite(p.median_seconds)) continue;
    x.push_back(double(p.context));
    y.push_back(p.median_seconds);
  }
  if (x.size() < 2) {
    result.step_slope_seconds_per_token = 0;
    result.step_intercept_seconds = y.empty() ? 0 : y.front();
    return;
  }
  const stats::LineFit line = stats::least_squares_line(x, y);
  result.step_slope_seconds_per_token = line.slope;
  result.step_intercept_seconds = line.intercept;
}

void judge_slo(GenerationResult& result) {
  result.slo_verdicts.clear();
  if (!result.slo) return;
  auto judge = [&](const char* metric, const std::optional<double>& limit, const TimingSummary& measured) {
    if (!limit) return;
    SloVerdict v;
    v.metric = metric;
    v.limit_seconds = *limit;
    v.measured_seconds = measured.p99;
    v.met = measured.count > 0 && measured.p99 <= *limit;
    result.slo_verdicts.push_back(v);
  };
  judge("ttft", result.slo->ttft_seconds, result.ttft);
  judge("tpot", result.slo->tpot_seconds, result.tpot);
}

void join_generation(GenerationResult& result, const DeviceCeilings& ceilings) {
  for (GenerationPhase& phase : result.phases)
    if (!phase.profile.layers.empty()) phase.joined = join_profile(phase.profile, ceilings);
}

}  // namespace modelstat

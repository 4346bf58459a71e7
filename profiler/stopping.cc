#include "profiler/stopping.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "modelstat/statistics.hpp"
#include "modelstat/error.hpp"

namespace modelstat::profiler {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string format(const char* fmt, double a, double b = 0, double c = 0, double d = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, a, b, c, d);
  return buf;
}

// "0.63%" for a relative width, or a note when there is no interval yet.
std::string rel_ci_text(double rel, bool evaluated, int64_t count, double confidence) {
  if (!evaluated) return "rel CI not evaluated";
  if (!std::isfinite(rel)) {
    return format("rel CI n/a (%.0f samples: too few for a %.0f%% interval)", static_cast<double>(count),
                  confidence * 100.0);
  }
  return format("rel CI %.2f%%", rel * 100.0);
}

}  // namespace

void validate(const StoppingConfig& c) {
  const auto fail = [](const std::string& what) { throw Error(ErrorKind::Usage, "stopping rule: " + what); };
  if (c.min_iterations < 0 || c.max_iterations < 1) fail("iteration limits must be min >= 0, max >= 1");
  if (c.min_iterations > c.max_iterations) fail("min_iterations > max_iterations");
  if (!(c.min_seconds >= 0.0) || !(c.max_seconds >= 0.0)) fail("time limits must be >= 0 seconds");
  if (c.min_seconds > c.max_seconds) fail("min_seconds > max_seconds");
  if (!(c.target_rel_ci >= 0.0)) fail("target relative CI must be >= 0");
  if (!(c.confidence > 0.0 && c.confidence < 1.0)) fail("confidence must be in (0, 1)");
}

StoppingCriterion::~StoppingCriterion() = default;

MedianCiCriterion::MedianCiCriterion(StoppingConfig config) : config_(config), last_rel_ci_(kInf) {
  validate(config_);
  reset();
}

void MedianCiCriterion::reset() {
  scratch_.clear();
  next_evaluation_at_ = 0;
  last_count_ = 0;
  last_rel_ci_ = kInf;
  evaluations_ = 0;
  reason_ = "running: no samples yet";
}

double MedianCiCriterion::evaluate(const std::vector<double>& samples) {
  scratch_.assign(samples.begin(), samples.end());
  const stats::MedianInterval ci = stats::median_confidence_interval_unsorted(scratch_, config_.confidence);
  ++evaluations_;
  const size_t n = samples.size();
  next_evaluation_at_ = n + std::max<size_t>(1, n / 64);
  return ci.reaches_confidence ? ci.rel_half_width() : kInf;
}

bool MedianCiCriterion::should_stop(const std::vector<double>& samples, double elapsed_seconds) {
  const size_t n = samples.size();
  if (n < last_count_) reset();  // a new run with the same object
  last_count_ = n;
  const auto count = static_cast<int64_t>(n);

  const bool minimums_met = count >= config_.min_iterations && elapsed_seconds >= config_.min_seconds;
  const bool timed_out = elapsed_seconds >= config_.max_seconds;
  const bool capped = count >= config_.max_iterations;

  bool evaluated_now = false;
  if (n > 0 && ((minimums_met && n >= next_evaluation_at_) || timed_out || capped)) {
    last_rel_ci_ = evaluate(samples);
    evaluated_now = true;
  }
  const bool evaluated = evaluations_ > 0;
  // target_rel_ci = 0 means "never converge": a zero-width interval (identical samples)
  // must not end a run whose user asked for the time-out.
  const bool converged =
      minimums_met && evaluated_now && config_.target_rel_ci > 0.0 && last_rel_ci_ <= config_.target_rel_ci;
  const std::string ci = rel_ci_text(last_rel_ci_, evaluated, count, config_.confidence);
  const double target_pct = config_.target_rel_ci * 100.0;
  // " > 1.00%", or " <= 1.00%" when a hard limit came before the minimums were met;
  // nothing to compare while there is no interval.
  std::string vs_target;
  if (evaluated && std::isfinite(last_rel_ci_)) {
    vs_target = format(last_rel_ci_ <= config_.target_rel_ci ? " <= %.2f%%" : " > %.2f%%", target_pct);
  }

  if (converged) {
    reason_ = "converged: " + ci + vs_target +
              format(" (%.0f iterations, %.2f s)", static_cast<double>(count), elapsed_seconds);
    return true;
  }
  if (timed_out) {
    reason_ = format("time-out after %.1f s: ", elapsed_seconds) + ci + vs_target +
              format(" (%.0f iterations)", static_cast<double>(count));
    return true;
  }
  if (capped) {
    reason_ = format("iteration cap %.0f reached: ", static_cast<double>(config_.max_iterations)) + ci +
              vs_target + format(" (%.2f s)", elapsed_seconds);
    return true;
  }
  if (!minimums_met) {
    reason_ =
        format("running: minimums not met (%.0f/%.0f iterations, %.2f/%.2f s)", static_cast<double>(count),
               static_cast<double>(config_.min_iterations), elapsed_seconds, config_.min_seconds);
  } else {
    reason_ = "running: " + ci + vs_target;
  }
  return false;
}

std::string MedianCiCriterion::reason() const {
  return reason_;
}

std::unique_ptr<StoppingCriterion> make_default_stopping_criterion(const StoppingConfig& config) {
  return std::make_unique<MedianCiCriterion>(config);
}

bool warmup_done(const WarmupConfig& config, int64_t iterations, double elapsed_seconds) {
  if (iterations < 1) return false;
  if (elapsed_seconds >= config.max_seconds) return true;
  return iterations >= config.min_iterations && elapsed_seconds >= config.min_seconds;
}

}  // namespace modelstat::profiler

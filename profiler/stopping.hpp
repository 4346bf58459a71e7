// When to stop measuring (METHODOLOGY "Runtime measurement", rules 3 and 5).
//
// A stopping criterion is a pluggable object, as in nvbench: the timing loop appends one
// sample per iteration and asks should_stop(samples, elapsed) after each; reason() then says
// why it stopped, for the report. The default, MedianCiCriterion, is rule 5: a minimum
// number of iterations and a minimum time, then until the median's relative confidence
// interval is narrow enough, or a time-out / iteration cap is hit.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace modelstat::profiler {

struct StoppingConfig {
  int64_t min_iterations = 10;
  double min_seconds = 1.0;     // of measuring wall time
  double max_seconds = 10.0;    // time-out: stop even if not converged
  double target_rel_ci = 0.01;  // target for (ci_high - ci_low) / 2 / median; 0 = run to the time-out
  int64_t max_iterations = 1'000'000;
  double confidence = 0.95;  // of the median's confidence interval
};

// Throws modelstat::Error(Usage) for an inconsistent configuration (negative values,
// min > max, confidence outside (0, 1)).
void validate(const StoppingConfig& config);

class StoppingCriterion {
 public:
  virtual ~StoppingCriterion();
  // samples: every measured iteration so far (seconds, GPU or CPU time as the loop measured);
  // elapsed_seconds: host wall time since measuring began (includes loop overhead), which is
  // what the time limits are about. Called after every iteration; must be cheap on average.
  virtual bool should_stop(const std::vector<double>& samples, double elapsed_seconds) = 0;
  // Why the last should_stop() returned what it did, one line for the report.
  virtual std::string reason() const = 0;
  // Forget state kept between calls, before measuring a new configuration. A criterion
  // also resets itself when it sees fewer samples than at its previous call.
  virtual void reset() {}
};

// METHODOLOGY rule 5. Stops when
//     (count >= min_iterations AND elapsed >= min_seconds AND median CI reaches the
//      confidence AND rel CI half-width <= target_rel_ci)
//  OR elapsed >= max_seconds  OR  count >= max_iterations.
//
// Cost: the interval is found by selection (O(n)), not by sorting, and once the minimums are
// met it is re-evaluated only when the sample count has grown by 1/64 since the last
// evaluation (at least 1). The total work is then O(64 n) over a run of n iterations, and a
// stop can come at most ~1.6 % of iterations later than an every-iteration check would.
class MedianCiCriterion final : public StoppingCriterion {
 public:
  explicit MedianCiCriterion(StoppingConfig config = {});
  bool should_stop(const std::vector<double>& samples, double elapsed_seconds) override;
  // "converged: rel CI 0.6% <= 1.0% (1234 iterations, 1.52 s)"
  // "time-out after 10.0 s: rel CI 2.3% > 1.0% (873 iterations)"
  // "iteration cap 1000000 reached: rel CI 1.2% > 1.0% (4.10 s)"
  // "running: ..." while should_stop() is false.
  std::string reason() const override;
  void reset() override;

  const StoppingConfig& config() const { return config_; }
  // Relative CI half-width at the last evaluation; +infinity before the first, or while
  // the interval cannot reach the confidence (fewer than 6 samples at 95 %).
  double last_rel_ci() const { return last_rel_ci_; }
  // How many times the interval was evaluated (for tests and overhead accounting).
  int64_t evaluations() const { return evaluations_; }

 private:
  double evaluate(const std::vector<double>& samples);

  StoppingConfig config_;
  std::vector<double> scratch_;
  size_t next_evaluation_at_ = 0;
  size_t last_count_ = 0;
  double last_rel_ci_;
  int64_t evaluations_ = 0;
  std::string reason_;
};

std::unique_ptr<StoppingCriterion> make_default_stopping_criterion(const StoppingConfig& config = {});

// Warm-up (METHODOLOGY rule 3): run until both minimums are met, but stop at max_seconds
// however few iterations that was (a model taking 30 s per run gets its one warm-up run,
// not five). At least one warm-up iteration is always run.
struct WarmupConfig {
  int64_t min_iterations = 5;
  double min_seconds = 0.5;
  double max_seconds = 10.0;
};

// True when warm-up may end after `iterations` runs taking `elapsed_seconds` in all.
bool warmup_done(const WarmupConfig& config, int64_t iterations, double elapsed_seconds);

}  // namespace modelstat::profiler

// forecast_generation (modelstat/generation.hpp): each phase of a measured
// generation priced as `fit --context` prices the prefill and a decode step,
// forecast_fit on the analysis at the phase's own bindings (docs/FIT.md,
// "Decoders"), its error against the step's median inside the loop.
#include "modelstat/fit.hpp"
#include "modelstat/generation.hpp"

namespace modelstat {

void forecast_generation(GenerationResult& result, const DeviceCeilings& ceilings) {
  FitOptions options;
  if (result.context.dtype == "fp16" || result.context.dtype == "bf16") options.compute_dtype = result.context.dtype;
  for (GenerationPhase& phase : result.phases) {
    phase.forecast_seconds = forecast_fit(phase.profile.analysis, ceilings, options).latency.total_seconds;
    phase.forecast_error = phase.loop_median_seconds > 0
                               ? std::optional<double>((*phase.forecast_seconds - phase.loop_median_seconds) /
                                                       phase.loop_median_seconds)
                               : std::nullopt;
  }
  result.forecast_ceilings = ceilings.source + " ceilings of " + ceilings.device_name +
                             (ceilings.device_kind == "cpu"
                                  ? ", " + std::to_string(ceilings.threads) + (ceilings.threads == 1 ? " thread" : " threads")
                                  : "");
}

}  // namespace modelstat

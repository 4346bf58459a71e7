// The measurement protocol of METHODOLOGY.md, in order, as passes over one
// session (session.hpp):
//   cold path (load, weight upload, first inference) -> warm-up by count and
//   time -> clean whole-model pass (no instrumentation) and instrumented
//   per-layer pass (markers between nodes, one wait per iteration), their runs
//   alternated so that both see the same minutes of a shared machine -> for a
//   model with If / Loop / Scan, the subgraph pass (markers around the nodes
//   inside subgraphs only, one wait per iteration) -> H2D / D2H copies timed
//   apart -> optional batch sweep, max-batch search and concurrency, measured
//   memory and a measured training step. Every stopping decision goes
//   through a StoppingCriterion.
#include "modelstat/error.hpp"
#include "modelstat/profile.hpp"
#include "profiler/session.hpp"
#include "profiler/torch_errors.hpp"

namespace modelstat {

namespace profiler {

ProfileResult profile(const std::string& path, const LoadOptions& load, const ProfileOptions& o) {
  ProfileResult result;
  ProfileSession s = open_session(path, load, o, result);
  warm_up_pass(s);
  if (o.measure_memory) memory_pass(s, result);
  if (o.per_layer) {
    whole_and_layer_passes(s, result);
    subgraph_pass(s, result);
  } else {
    whole_model_pass(s, result);
  }
  copy_pass(s, result);
  batch_pass(s, result);
  concurrency_pass(s, result);
  // Last, as it updates the weights.
  if (o.train_step) train_step_pass(s, result);
  // A number without its conditions is not reusable.
  describe_pass(s, result);
  return result;
}

}  // namespace profiler

ProfileResult profile_model(const std::string& path, const LoadOptions& load, const ProfileOptions& options) {
  try {
    return profiler::profile(path, load, options);
  } catch (const std::exception& e) {
    throw profiler::error_from(e, path, "profile a smaller batch (--dim, --input or --default-batch)");
  }
}

}  // namespace modelstat

// Comparing two profile runs (`modelstat compare BASE.json NEW.json`): per-node and
// whole-model deltas of the median, each with a significance test on the raw samples,
// and a gate that CI pipelines can fail on. compare_runs() computes every figure
// (analyzer/measurements/compare.cc); the writers (tools/writers/compare_*_writer.cc) only
// format a Comparison. Plain data, no LibTorch.
//
// The test, per sample pair (base A, new B), times in seconds:
//   delta       = median(B) / median(A) - 1                 (+0.20: 20% slower)
//   p           = two-sided Mann-Whitney U p-value of A vs B: exact for small samples
//                 without ties (n_a * n_b <= 2500), else the normal approximation with
//                 tie and continuity corrections (include/modelstat/statistics.hpp)
//   ratio CI    = percentile-bootstrap (1 - alpha) interval of median(B) / median(A),
//                 fixed seed, so a comparison is reproducible; for a node only when
//                 p < alpha (otherwise the verdict cannot need it), always for the whole model
//   significant = p < alpha  AND  the ratio CI lies entirely on one side of 1
//   regression  = significant AND delta >  threshold
//   improvement = significant AND delta < -threshold
// Medians and rank tests, not means and t-tests: latency samples are skewed and
// heavy-tailed (a busy machine adds a long right tail), and neither the median nor the
// ranks care how far out an outlier lies.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "modelstat/profile.hpp"

namespace modelstat {

extern const char* const kCompareJsonSchemaVersion;

// The part of a profile document (docs/profile-json.md) a comparison needs. Read from a
// profile JSON ("kind": "profile") or a report JSON ("kind": "report"), which nests the
// whole profile document under "profile".
struct RunSamples {
  std::string origin;         // file name, for messages
  std::string document_kind;  // "profile" or "report"
  std::string model_path;     // analysis.model.path
  RunContext context;
  std::optional<int64_t> total_flops;  // analysis.totals.flops; empty when unknown
  std::vector<double> whole;           // whole.samples_s, seconds, run order
  struct Layer {
    int index = 0;  // execution order (analysis.nodes[].index)
    std::string name, op_type;
    std::vector<double> samples;  // time.samples_s, seconds
  };
  std::vector<Layer> layers;    // graph order
  int64_t dropped_samples = 0;  // null entries (non-finite timer values) left out
};

// Parses a profile or report JSON document. Throws Error(Input) naming `origin` and what
// is wrong: not JSON, not a modelstat profile/report, an unsupported major version, a
// missing field, no whole-model samples.
RunSamples read_run_samples(const std::string& json_text, const std::string& origin);
// Reads and parses a file; Error(Input) when it cannot be read.
RunSamples load_run_samples(const std::string& path);

struct CompareOptions {
  // Relative slowdown (or speed-up) of the median that counts, as a fraction: 0.10 = 10%
  // (asv's default factor, 1.1). Measured (bench/compare/README.md, bench/RESULTS.md):
  // back-to-back profiles of one model on the shared 2-vCPU VM differed by 2% on a quiet
  // moment and by 5.7% (significant, with drift inside each run) on an ordinary one, so 5%
  // cried wolf; while other jobs ran the machine's own speed moved by 10-50% between runs
  // a minute apart, which no threshold below that tells from a code change: the drift and
  // CV warnings say when that is happening. Quieter machines can pass --threshold 5%.
  double threshold = 0.10;
  double alpha = 0.05;           // significance level; the ratio CI has confidence 1 - alpha
  int resamples = 2000;          // bootstrap resamples per interval
  uint64_t seed = 42;            // bootstrap seed
  bool per_node_gate = false;    // the gate also fails on a regressed node carrying gate_min_share
  double gate_min_share = 0.01;  // of the per-layer time (sum of medians), on either side
};

enum class Verdict {
  Regression,   // significantly slower, by more than the threshold
  Improvement,  // significantly faster, by more than the threshold
  Unchanged,    // not significant, or within the threshold
  NoData,       // a side has no samples
};
const char* verdict_name(Verdict v);  // "regression", "improvement", "unchanged", "no data"

// One pair of sample sets, base against new. NaN where a side has no samples.
struct SampleDelta {
  int64_t count_base = 0, count_new = 0;
  double median_base = 0, median_new = 0;      // seconds
  double delta = 0;                            // median_new / median_base - 1
  double ratio_ci_low = 0, ratio_ci_high = 0;  // CI of median_new / median_base (NaN: not computed)
  double p_value = 1;                          // two-sided Mann-Whitney U
  bool exact_p = false;                        // exact null distribution (else normal approximation)
  bool significant = false;                    // p < alpha and the ratio CI excludes 1
  Verdict verdict = Verdict::NoData;
};

// A node present in both runs.
struct NodeDelta {
  std::string name, op_type;  // as in the base run
  std::string new_name;       // the new run's name when it differs (matched by index)
  int index_base = 0, index_new = 0;
  double share_base = 0, share_new = 0;  // median / sum of all layer medians, 0..1 (NaN: no samples)
  bool gated = false;                    // share >= gate_min_share on either side
  SampleDelta time;
};

// A node timed in only one of the runs.
struct UnmatchedNode {
  int index = 0;
  std::string name, op_type;
  double median = 0;  // seconds; NaN without samples
};

struct Comparison {
  CompareOptions options;
  std::string base_origin, new_origin;
  std::string base_document_kind, new_document_kind;
  std::string base_model_path, new_model_path;
  RunContext base_context, new_context;
  SampleDelta whole;             // whole-model pass (no per-layer instrumentation)
  std::string matched_by;        // "name" or "index"
  std::vector<NodeDelta> nodes;  // the base run's graph order
  // Indices into nodes, most important first: regressions, improvements, then the rest;
  // within each, by the absolute change of the median in seconds, descending.
  std::vector<int> ranked_nodes;
  std::vector<UnmatchedNode> only_in_base, only_in_new;
  // Differences in conditions that make the comparison questionable (device, dtype,
  // threads, batch, model FLOPs, ...), and samples too few or too noisy to trust.
  std::vector<std::string> warnings;
  std::vector<std::string> notices;  // how nodes were matched, samples left out
  // The gate: the whole model regressed, or (per_node_gate) one of these nodes did.
  bool whole_regressed = false;
  std::vector<int> gated_node_regressions;  // indices into nodes
  bool gate_failed() const { return whole_regressed || !gated_node_regressions.empty(); }
};

// Compares `next` against `base`. Throws Error(Usage) for options out of range.
Comparison compare_runs(const RunSamples& base, const RunSamples& next, const CompareOptions& options = {});


}  // namespace modelstat

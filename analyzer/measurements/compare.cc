// compare_runs: two profile runs, node by node, with a significance test on the raw
// samples. The test and the verdicts are stated once, in modelstat/compare.hpp.
#include "modelstat/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "analyzer/measurements/json_input.hpp"
#include "analyzer/measurements/record_json.hpp"
#include "modelstat/statistics.hpp"
#include "modelstat/error.hpp"

namespace modelstat {

const char* const kCompareJsonSchemaVersion = "1.0.0";

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A whole-model CV above this suggests the machine was busy during the run: on a quiet
// machine the profiles in bench/compare/README.md stay at 3-6%.
constexpr double kNoisyCv = 0.10;

[[noreturn]] void bad_document(const std::string& origin, const std::string& what) {
  throw Error(ErrorKind::Input, what, origin);
}

// The smallest two-sided p-value an exact rank test can give for these sizes:
// 2 / C(n_a + n_b, n_a), when the samples do not overlap at all.
double smallest_possible_p(int64_t na, int64_t nb) {
  const double log_c = std::lgamma(static_cast<double>(na + nb + 1)) -
                       std::lgamma(static_cast<double>(na + 1)) - std::lgamma(static_cast<double>(nb + 1));
  return std::min(1.0, 2.0 * std::exp(-log_c));
}

// always_ci: compute the ratio interval even when the rank test is not significant.
SampleDelta compare_samples(const std::vector<double>& base, const std::vector<double>& next,
                            const CompareOptions& o, bool always_ci) {
  SampleDelta d;
  d.count_base = static_cast<int64_t>(base.size());
  d.count_new = static_cast<int64_t>(next.size());
  d.median_base = base.empty() ? kNaN : stats::median_of(base);
  d.median_new = next.empty() ? kNaN : stats::median_of(next);
  d.delta = d.median_new / d.median_base - 1.0;
  d.ratio_ci_low = d.ratio_ci_high = kNaN;
  d.p_value = kNaN;
  if (base.empty() || next.empty()) {
    d.verdict = Verdict::NoData;
    return d;
  }
  const double exact = stats::mann_whitney_exact_p(base, next);
  d.exact_p = !std::isnan(exact);
  d.p_value = d.exact_p ? exact : stats::mann_whitney_u(base, next).p_value;
  // For a node the interval only matters when the rank test is significant (the verdict
  // needs both), and it is the costly part (resamples x (n_a + n_b) draws), so a node with
  // p >= alpha gets none; the whole model always gets one (how large could the change be?).
  if (d.median_base > 0 && (always_ci || d.p_value < o.alpha)) {
    const stats::RatioInterval ci = stats::bootstrap_ci_ratio(next, base, 1.0 - o.alpha, o.resamples, o.seed);
    d.ratio_ci_low = ci.low;
    d.ratio_ci_high = ci.high;
  }
  // The CI must exclude 1 on the side the medians moved to; NaN compares false.
  const bool ci_excludes_one = d.delta > 0 ? d.ratio_ci_low > 1.0 : d.ratio_ci_high < 1.0;
  d.significant = d.p_value < o.alpha && ci_excludes_one;
  d.verdict = Verdict::Unchanged;
  if (d.significant && d.delta > o.threshold) d.verdict = Verdict::Regression;
  if (d.significant && d.delta < -o.threshold) d.verdict = Verdict::Improvement;
  return d;
}

// Medians of every layer and their sum (the denominator of the shares).
std::vector<double> layer_medians(const RunSamples& run, double& sum) {
  std::vector<double> medians;
  sum = 0;
  for (const auto& l : run.layers) {
    medians.push_back(l.samples.empty() ? kNaN : stats::median_of(l.samples));
    if (!l.samples.empty()) sum += medians.back();
  }
  return medians;
}

// Names can key the match when every node has one and no two share it.
bool names_usable(const RunSamples& run) {
  std::map<std::string, int> seen;
  for (const auto& l : run.layers)
    if (l.name.empty() || ++seen[l.name] > 1) return false;
  return true;
}

void context_warnings(const RunSamples& a, const RunSamples& b, std::vector<std::string>& out) {
  const auto differ = [&](const char* what, const std::string& x, const std::string& y) {
    if (x != y) out.push_back(fmt::format("{} differs: base '{}', new '{}'", what, x, y));
  };
  differ("device kind", a.context.device_kind, b.context.device_kind);
  differ("device", a.context.device_name, b.context.device_name);
  differ("dtype", a.context.dtype, b.context.dtype);
  if (a.context.threads != b.context.threads)
    out.push_back(fmt::format("threads differ: base {}, new {}", a.context.threads, b.context.threads));
  if (a.context.batch != b.context.batch)
    out.push_back(fmt::format("batch differs: base {}, new {}", a.context.batch, b.context.batch));
  if (a.total_flops && b.total_flops && *a.total_flops != *b.total_flops) {
    out.push_back(fmt::format("model FLOPs differ: base {}, new {} (x{:.3g}): the runs did different work",
                              *a.total_flops, *b.total_flops,
                              static_cast<double>(*b.total_flops) / static_cast<double>(*a.total_flops)));
  }
  differ("LibTorch version", a.context.torch_version, b.context.torch_version);
  differ("timer", a.context.timer, b.context.timer);
  differ("host", a.context.host, b.context.host);
}

// Samples too few for the test to ever reach alpha, or too noisy to trust.
void sample_warnings(const RunSamples& a, const RunSamples& b, const CompareOptions& o,
                     std::vector<std::string>& out) {
  const int64_t na = static_cast<int64_t>(a.whole.size()), nb = static_cast<int64_t>(b.whole.size());
  const double floor_p = smallest_possible_p(na, nb);
  if (floor_p >= o.alpha) {
    out.push_back(
        fmt::format("only {} and {} whole-model samples: even fully separated samples give p = {:.3g}, "
                    "not below alpha = {:g}, so no regression can be detected; measure longer "
                    "(--min-time, --iters)",
                    na, nb, floor_p, o.alpha));
  }
  for (const RunSamples* run : {&a, &b}) {
    // Samples are in run order: if the second half differs from the first as much as a
    // regression would, the machine's speed changed during the run, and it can as well
    // between the runs, which no test on the samples can tell from a code change.
    const size_t n = run->whole.size();
    if (n >= 8) {
      const auto mid = run->whole.begin() + static_cast<std::ptrdiff_t>(n / 2);
      const std::vector<double> first(run->whole.begin(), mid), second(mid, run->whole.end());
      const double drift = stats::median_of(second) / stats::median_of(first) - 1.0;
      const double exact = stats::mann_whitney_exact_p(first, second);
      const double p = std::isnan(exact) ? stats::mann_whitney_u(first, second).p_value : exact;
      if (p < o.alpha && std::abs(drift) > o.threshold)
        out.push_back(
            fmt::format("{} run: the machine's speed changed during the run (second half of the whole-model "
                        "samples {:+.1f}% against the first, p = {:.2g}); it can change between runs as "
                        "well: profile both back to back on a quiet machine",
                        run == &a ? "base" : "new", drift * 100.0, p));
    }
    const stats::SampleStats s = stats::summarize(run->whole);
    if (s.count >= 2 && s.cv > kNoisyCv) {
      out.push_back(
          fmt::format("{} run: the whole-model samples vary a lot (CV {:.1f}%): the machine was probably "
                      "busy; a busy machine slows a run as much as a code change does",
                      run == &a ? "base" : "new", s.cv * 100.0));
    }
  }
}

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Regression:
      return "regression";
    case Verdict::Improvement:
      return "improvement";
    case Verdict::Unchanged:
      return "unchanged";
    case Verdict::NoData:
      break;
  }
  return "no data";
}

namespace {

// The document's run, read with the field readers of json_input.hpp (a refused
// field is named by its path); document-level problems are said as such.
RunSamples run_from_document(const Json& doc, const std::string& origin) {
  if (!doc.is_object()) bad_document(origin, "not a modelstat profile or report document (not a JSON object)");
  RunSamples run;
  run.origin = origin;
  run.document_kind = json_string_or(doc, "kind");
  const Json* profile = &doc;
  if (run.document_kind == "report") {
    const auto it = doc.find("profile");
    if (it == doc.end() || !it->is_object()) bad_document(origin, "a report document without its \"profile\" object");
    profile = &*it;
    if (json_string_or(*profile, "kind") != "profile")
      bad_document(origin, "the report's \"profile\" object is not a profile document");
  } else if (run.document_kind != "profile") {
    bad_document(origin, run.document_kind.empty()
                             ? std::string("not a modelstat profile or report document (no \"kind\")")
                             : "a \"" + run.document_kind + "\" document, not a profile or report");
  }
  const std::string version = json_string_or(*profile, "schema_version");
  if (version.substr(0, version.find('.')) != "1")
    json_expected(*profile, "schema_version", "a profile schema version this modelstat reads (1.x)");

  const Json& p = *profile;
  from_json(json_object(p, "context"), run.context);
  if (const Json* analysis = json_field_if(p, "analysis")) {
    if (const Json* model = json_field_if(*analysis, "model")) run.model_path = json_string_or(*model, "path");
    if (const Json* totals = json_field_if(*analysis, "totals")) {
      // null: unknown, not zero.
      if (json_field_if(*totals, "flops"))
        run.total_flops = json_integer(*totals, "flops", 0, std::numeric_limits<int64_t>::max());
    }
  }
  // The records' own from_json (record_json.hpp), as the writers' to_json wrote them.
  const Json& whole = json_object(p, "whole");
  TimingSummary whole_time;
  from_json(whole, whole_time);
  run.whole = std::move(whole_time.samples);
  run.dropped_samples += dropped_samples(whole);
  const Json& layers = json_array(p, "layers");
  run.layers.reserve(layers.size());
  for (const Json& l : layers) {
    LayerTiming timing;
    from_json(l, timing);
    run.dropped_samples += dropped_samples(l.at("time"));
    RunSamples::Layer layer;
    layer.index = timing.index;
    layer.name = std::move(timing.name);
    layer.op_type = std::move(timing.op_type);
    layer.samples = std::move(timing.time.samples);
    run.layers.push_back(std::move(layer));
  }
  if (run.whole.empty()) bad_document(origin, "the profile has no whole-model samples (whole.samples_s is empty)");
  return run;
}

}  // namespace

RunSamples read_run_samples(const std::string& json_text, const std::string& origin) {
  return read_json_record(parse_json_document(json_text, origin), origin,
                          [&](const Json& doc) { return run_from_document(doc, origin); });
}

RunSamples load_run_samples(const std::string& path) {
  return read_json_record(read_json_file(path), path, [&](const Json& doc) { return run_from_document(doc, path); });
}

Comparison compare_runs(const RunSamples& base, const RunSamples& next, const CompareOptions& options) {
  if (!(options.threshold >= 0.0) || !std::isfinite(options.threshold))
    throw_usage("the threshold must be a finite fraction >= 0");
  if (!(options.alpha > 0.0 && options.alpha < 1.0)) throw_usage("alpha must be in (0, 1)");
  if (options.resamples < 1) throw_usage("the bootstrap needs at least 1 resample");
  if (!(options.gate_min_share >= 0.0 && options.gate_min_share <= 1.0))
    throw_usage("the per-node gate share must be in [0, 1]");

  Comparison r;
  r.options = options;
  r.base_origin = base.origin;
  r.new_origin = next.origin;
  r.base_document_kind = base.document_kind;
  r.new_document_kind = next.document_kind;
  r.base_model_path = base.model_path;
  r.new_model_path = next.model_path;
  r.base_context = base.context;
  r.new_context = next.context;
  context_warnings(base, next, r.warnings);
  sample_warnings(base, next, options, r.warnings);
  if (base.dropped_samples + next.dropped_samples > 0)
    r.notices.push_back(fmt::format("{} null samples (non-finite timer values) left out",
                                    base.dropped_samples + next.dropped_samples));

  r.whole = compare_samples(base.whole, next.whole, options, /*always_ci=*/true);

  // ---- match the nodes: by name when names identify them, else by position
  std::vector<std::pair<size_t, size_t>> pairs;  // (base layer, new layer)
  const size_t nb = base.layers.size(), nn = next.layers.size();
  bool by_name = names_usable(base) && names_usable(next);
  if (by_name) {
    std::map<std::string, size_t> new_by_name;
    for (size_t j = 0; j < nn; ++j) new_by_name[next.layers[j].name] = j;
    for (size_t i = 0; i < nb; ++i)
      if (const auto it = new_by_name.find(base.layers[i].name); it != new_by_name.end())
        pairs.emplace_back(i, it->second);
    // Few common names but the same number of nodes: most likely the same graph exported
    // with other names, so positions pair them better than the few coincidences.
    if (pairs.size() * 2 < std::min(nb, nn) && nb == nn) {
      r.notices.push_back(fmt::format(
          "only {} of {} node names match between the runs: nodes matched by position", pairs.size(), nb));
      by_name = false;
      pairs.clear();
    }
  } else if (nb > 0 || nn > 0) {
    r.notices.push_back("node names are empty or repeated in a run: nodes matched by position");
  }
  if (!by_name)
    for (size_t i = 0; i < std::min(nb, nn); ++i) pairs.emplace_back(i, i);
  r.matched_by = by_name ? "name" : "index";

  double sum_base = 0, sum_new = 0;
  const std::vector<double> med_base = layer_medians(base, sum_base), med_new = layer_medians(next, sum_new);
  std::vector<bool> base_matched(nb, false), new_matched(nn, false);
  int op_mismatches = 0;
  for (const auto& [i, j] : pairs) {
    const auto& lb = base.layers[i];
    const auto& ln = next.layers[j];
    base_matched[i] = new_matched[j] = true;
    NodeDelta d;
    d.name = lb.name;
    d.op_type = lb.op_type;
    if (ln.name != lb.name) d.new_name = ln.name;
    if (ln.op_type != lb.op_type) ++op_mismatches;
    d.index_base = lb.index;
    d.index_new = ln.index;
    d.share_base = sum_base > 0 ? med_base[i] / sum_base : kNaN;
    d.share_new = sum_new > 0 ? med_new[j] / sum_new : kNaN;
    d.gated = d.share_base >= options.gate_min_share || d.share_new >= options.gate_min_share;
    d.time = compare_samples(lb.samples, ln.samples, options, /*always_ci=*/false);
    r.nodes.push_back(std::move(d));
  }
  if (op_mismatches > 0)
    r.notices.push_back(fmt::format("{} matched node pairs have different op types", op_mismatches));
  for (size_t i = 0; i < nb; ++i)
    if (!base_matched[i])
      r.only_in_base.push_back(
          {base.layers[i].index, base.layers[i].name, base.layers[i].op_type, med_base[i]});
  for (size_t j = 0; j < nn; ++j)
    if (!new_matched[j])
      r.only_in_new.push_back(
          {next.layers[j].index, next.layers[j].name, next.layers[j].op_type, med_new[j]});
  if (nb == 0 || nn == 0)
    r.notices.push_back("a run has no per-layer timings (profiled with --no-layers): whole model only");

  // ---- rank: regressions, improvements, the rest; each by |change in seconds|
  r.ranked_nodes.resize(r.nodes.size());
  for (size_t k = 0; k < r.nodes.size(); ++k) r.ranked_nodes[k] = static_cast<int>(k);
  const auto group = [](Verdict v) {
    return v == Verdict::Regression ? 0 : v == Verdict::Improvement ? 1 : 2;
  };
  const auto change = [](const NodeDelta& d) {
    const double c = std::abs(d.time.median_new - d.time.median_base);
    return std::isnan(c) ? -1.0 : c;
  };
  std::stable_sort(r.ranked_nodes.begin(), r.ranked_nodes.end(), [&](int x, int y) {
    const NodeDelta &a = r.nodes[static_cast<size_t>(x)], &b = r.nodes[static_cast<size_t>(y)];
    if (group(a.time.verdict) != group(b.time.verdict)) return group(a.time.verdict) < group(b.time.verdict);
    return change(a) > change(b);
  });

  // ---- the gate
  r.whole_regressed = r.whole.verdict == Verdict::Regression;
  if (options.per_node_gate)
    for (int k : r.ranked_nodes)
      if (r.nodes[static_cast<size_t>(k)].gated &&
          r.nodes[static_cast<size_t>(k)].time.verdict == Verdict::Regression)
        r.gated_node_regressions.push_back(k);
  return r;
}

}  // namespace modelstat

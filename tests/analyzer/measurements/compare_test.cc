// modelstat compare: hand-made sample arrays and hand-written profile documents.
// Every expected p-value, delta and verdict is worked out in the comment beside it.
#include "modelstat/compare.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/measurements/json_input.hpp"
#include "analyzer/measurements/record_json.hpp"
#include "modelstat/error.hpp"
#include "test_support.hpp"
#include "tools/writers/compare_writers.hpp"

namespace modelstat {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::contains;

// 1.00, 1.01, ..., 1.09 (n = 10): median 1.045.
std::vector<double> base_samples(int n = 10, double start = 1.0, double step = 0.01) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(start + step * i);
  return v;
}

std::vector<double> scaled(std::vector<double> v, double factor) {
  for (double& x : v) x *= factor;
  return v;
}

struct LayerSpec {
  std::string name, op_type;
  std::vector<double> samples;
};

// A profile document with the fields compare reads (docs/profile-json.md); the
// rest of a real document is not needed and is left out.
json profile_doc(const std::vector<double>& whole, const std::vector<LayerSpec>& layers = {}, int batch = 1,
                 int threads = 1, int64_t flops = 1000000) {
  json layer_array = json::array();
  int index = 0;
  for (const LayerSpec& l : layers)
    layer_array.push_back(
        {{"index", index++}, {"name", l.name}, {"op_type", l.op_type}, {"time", {{"samples_s", l.samples}}}});
  return {{"schema_version", "1.0.0"},
          {"tool", "modelstat"},
          {"kind", "profile"},
          {"context",
           {{"device_name", "Test CPU"},
            {"device_kind", "cpu"},
            {"torch_version", "1.13.0"},
            {"threads", threads},
            {"dtype", "fp32"},
            {"batch", batch},
            {"timer", "steady_clock"},
            {"date", "2024-01-01T00:00:00Z"},
            {"host", "test"}}},
          {"whole", {{"count", whole.size()}, {"samples_s", whole}}},
          {"layers", layer_array},
          {"analysis", {{"model", {{"path", "m.onnx"}}}, {"totals", {{"flops", flops}}}}}};
}

RunSamples run_of(const json& doc, const std::string& origin = "test.json") {
  return read_run_samples(doc.dump(), origin);
}

Comparison compare_docs(const json& a, const json& b, CompareOptions o = {}) {
  return compare_runs(run_of(a, "base.json"), run_of(b, "new.json"), o);
}

// ------------------------------------------------------------------ the test itself

TEST(Compare, IdenticalSamplesAreUnchanged) {
  const auto a = base_samples();
  const Comparison c = compare_docs(profile_doc(a), profile_doc(a));
  // Every value appears once in each run: U_a = n_a n_b / 2 = 50 = mu, so z = 0 and p = 1
  // (ties, so the normal approximation is used). The medians are equal: delta 0.
  EXPECT_DOUBLE_EQ(c.whole.delta, 0.0);
  EXPECT_DOUBLE_EQ(c.whole.p_value, 1.0);
  EXPECT_FALSE(c.whole.exact_p);
  EXPECT_FALSE(c.whole.significant);
  EXPECT_LE(c.whole.ratio_ci_low, 1.0);
  EXPECT_GE(c.whole.ratio_ci_high, 1.0);
  EXPECT_EQ(c.whole.verdict, Verdict::Unchanged);
  EXPECT_FALSE(c.gate_failed());
  EXPECT_TRUE(c.warnings.empty()) << c.warnings.front();
}

TEST(Compare, TwentyPercentSlowerIsARegression) {
  const auto a = base_samples();
  const auto b = scaled(a, 1.2);
  const Comparison c = compare_docs(profile_doc(a), profile_doc(b));
  // Medians 1.045 and 1.254: delta = 0.2. Every b (>= 1.2) exceeds every a (<= 1.09), so U_a = 0;
  // only 1 of the C(20, 10) = 184756 rank arrangements gives U = 0: p = 2 / 184756 (exact).
  EXPECT_NEAR(c.whole.median_base, 1.045, 1e-12);
  EXPECT_NEAR(c.whole.median_new, 1.254, 1e-12);
  EXPECT_NEAR(c.whole.delta, 0.2, 1e-12);
  EXPECT_TRUE(c.whole.exact_p);
  EXPECT_NEAR(c.whole.p_value, 2.0 / 184756.0, 1e-15);
  // Any bootstrap ratio is a b-median over an a-median: at least 1.2 / 1.09 = 1.1009, at most
  // 1.308 / 1.0 = 1.308.
  EXPECT_GE(c.whole.ratio_ci_low, 1.2 / 1.09 - 1e-12);
  EXPECT_LE(c.whole.ratio_ci_high, 1.308 + 1e-12);
  EXPECT_TRUE(c.whole.significant);
  EXPECT_EQ(c.whole.verdict, Verdict::Regression);
  EXPECT_TRUE(c.whole_regressed);
  EXPECT_TRUE(c.gate_failed());
  // A threshold above the change: significant, but not a regression.
  CompareOptions loose;
  loose.threshold = 0.25;
  EXPECT_EQ(compare_docs(profile_doc(a), profile_doc(b), loose).whole.verdict, Verdict::Unchanged);
}

TEST(Compare, SignificantButBelowTheThresholdIsNotARegression) {
  // a = 1.000 .. 1.009 (step 0.001), b = 1.03 a: fully separated (1.009 < 1.03), p = 2 / 184756,
  // but the medians differ by 3% < 5%.
  const auto a = base_samples(10, 1.0, 0.001);
  const Comparison c = compare_docs(profile_doc(a), profile_doc(scaled(a, 1.03)));
  EXPECT_NEAR(c.whole.delta, 0.03, 1e-12);
  EXPECT_TRUE(c.whole.significant);
  EXPECT_EQ(c.whole.verdict, Verdict::Unchanged);
  EXPECT_FALSE(c.gate_failed());
  CompareOptions tight;
  tight.threshold = 0.02;
  EXPECT_EQ(compare_docs(profile_doc(a), profile_doc(scaled(a, 1.03)), tight).whole.verdict,
            Verdict::Regression);
}

TEST(Compare, SmallNoiseWithinTheThresholdPasses) {
  // b_i = a_i (1 +- 1%), alternating: the sets interleave, nothing is significant.
  const auto a = base_samples();
  std::vector<double> b = a;
  for (size_t i = 0; i < b.size(); ++i) b[i] *= i % 2 ? 0.99 : 1.01;
  const Comparison c = compare_docs(profile_doc(a), profile_doc(b));
  EXPECT_LT(std::abs(c.whole.delta), 0.01);
  EXPECT_GT(c.whole.p_value, 0.5);
  EXPECT_FALSE(c.whole.significant);
  EXPECT_EQ(c.whole.verdict, Verdict::Unchanged);
  EXPECT_FALSE(c.gate_failed());
}

TEST(Compare, FasterIsAnImprovementAndPassesTheGate) {
  const auto a = base_samples();
  const Comparison c = compare_docs(profile_doc(a), profile_doc(scaled(a, 0.8)));
  EXPECT_NEAR(c.whole.delta, -0.2, 1e-12);
  EXPECT_LE(c.whole.ratio_ci_high, 0.8 * 1.09 / 1.0 + 1e-12);  // at most max(b) / min(a)
  EXPECT_EQ(c.whole.verdict, Verdict::Improvement);
  EXPECT_FALSE(c.gate_failed());
}

TEST(Compare, MannWhitneyPValueOfASmallCaseByHand) {
  // base {1, 2, 3}, new {4, 5, 6}: U_base = 0. Of the C(6, 3) = 20 equally likely ways to split
  // the ranks 1..6 into two sets of 3, only one gives U = 0 (and one U = 9): p = 2 * 1/20 = 0.1.
  // (Checked by enumerating itertools.combinations(range(6), 3) in plain Python.)
  // The medians differ by +150% but the test cannot say so: no 3-vs-3 outcome reaches p < 0.05,
  // which the warnings say.
  const Comparison c = compare_docs(profile_doc({1, 2, 3}), profile_doc({4, 5, 6}));
  EXPECT_TRUE(c.whole.exact_p);
  EXPECT_NEAR(c.whole.p_value, 0.1, 1e-12);
  EXPECT_NEAR(c.whole.delta, 1.5, 1e-12);
  EXPECT_FALSE(c.whole.significant);
  EXPECT_EQ(c.whole.verdict, Verdict::Unchanged);
  // (Next to it, both sets are noisy: CV 50% and 20%.)
  ASSERT_FALSE(c.warnings.empty());
  EXPECT_TRUE(contains(c.warnings[0], "only 3 and 3 whole-model samples")) << c.warnings[0];
  EXPECT_TRUE(contains(c.warnings[0], "p = 0.1,")) << c.warnings[0];
}

TEST(Compare, BootstrapIsReproducible) {
  const auto a = base_samples(30, 1.0, 0.003);
  std::vector<double> b = scaled(a, 1.05);
  std::swap(b[3], b[17]);
  const Comparison c1 = compare_docs(profile_doc(a), profile_doc(b));
  const Comparison c2 = compare_docs(profile_doc(a), profile_doc(b));
  EXPECT_EQ(c1.whole.ratio_ci_low, c2.whole.ratio_ci_low);
  EXPECT_EQ(c1.whole.ratio_ci_high, c2.whole.ratio_ci_high);
}

// ------------------------------------------------------------------ nodes

TEST(Compare, NodesMatchByNameAndUnmatchedAreListed) {
  const auto a = base_samples();
  const json base = profile_doc(a, {{"conv", "Conv", a}, {"relu", "Relu", a}, {"old", "Add", a}});
  const json next =
      profile_doc(a, {{"relu", "Relu", a}, {"conv", "Conv", scaled(a, 1.2)}, {"new", "Mul", a}});
  const Comparison c = compare_docs(base, next);
  EXPECT_EQ(c.matched_by, "name");
  ASSERT_EQ(c.nodes.size(), 2u);
  EXPECT_EQ(c.nodes[0].name, "conv");  // base graph order
  EXPECT_EQ(c.nodes[0].index_base, 0);
  EXPECT_EQ(c.nodes[0].index_new, 1);
  EXPECT_EQ(c.nodes[0].time.verdict, Verdict::Regression);
  EXPECT_EQ(c.nodes[1].time.verdict, Verdict::Unchanged);
  // Shares of the base run: three layers with equal medians, 1/3 each.
  EXPECT_NEAR(c.nodes[0].share_base, 1.0 / 3.0, 1e-12);
  ASSERT_EQ(c.only_in_base.size(), 1u);
  EXPECT_EQ(c.only_in_base[0].name, "old");
  ASSERT_EQ(c.only_in_new.size(), 1u);
  EXPECT_EQ(c.only_in_new[0].name, "new");
  EXPECT_EQ(c.only_in_new[0].op_type, "Mul");
  // Regressions rank first.
  EXPECT_EQ(c.ranked_nodes.front(), 0);
  // Without --per-node-gate a node regression does not fail the gate.
  EXPECT_FALSE(c.gate_failed());
}

TEST(Compare, NodesFallBackToPositionWhenNamesDiffer) {
  const auto a = base_samples();
  const json base = profile_doc(a, {{"n1", "Conv", a}, {"n2", "Relu", a}, {"n3", "Gemm", a}});
  const json next = profile_doc(a, {{"m1", "Conv", a}, {"m2", "Relu", a}, {"m3", "Gemm", a}});
  const Comparison c = compare_docs(base, next);
  EXPECT_EQ(c.matched_by, "index");
  ASSERT_EQ(c.nodes.size(), 3u);
  EXPECT_EQ(c.nodes[2].name, "n3");
  EXPECT_EQ(c.nodes[2].new_name, "m3");
  ASSERT_EQ(c.notices.size(), 1u);
  EXPECT_TRUE(contains(c.notices[0], "only 0 of 3 node names match")) << c.notices[0];
  EXPECT_TRUE(c.only_in_base.empty());
  EXPECT_TRUE(c.only_in_new.empty());
}

TEST(Compare, EmptyOrRepeatedNamesMatchByPosition) {
  const auto a = base_samples();
  const json base = profile_doc(a, {{"", "Conv", a}, {"", "Relu", a}});
  const json next = profile_doc(a, {{"", "Conv", a}});
  const Comparison c = compare_docs(base, next);
  EXPECT_EQ(c.matched_by, "index");
  ASSERT_EQ(c.nodes.size(), 1u);
  ASSERT_EQ(c.only_in_base.size(), 1u);
  EXPECT_EQ(c.only_in_base[0].op_type, "Relu");
  ASSERT_FALSE(c.notices.empty());
  EXPECT_TRUE(contains(c.notices[0], "empty or repeated"));
}

TEST(Compare, PerNodeGateCountsOnlyNodesCarryingTime) {
  const auto a = base_samples();
  // big: medians 1.045 (x99); tiny: 0.01045 -> share 0.01045 / (99 * 1.045 + 0.01045) = 0.0001.
  std::vector<LayerSpec> base_layers, new_layers;
  for (int i = 0; i < 99; ++i) {
    base_layers.push_back({"big" + std::to_string(i), "Conv", a});
    new_layers.push_back({"big" + std::to_string(i), "Conv", a});
  }
  base_layers.push_back({"tiny", "Relu", scaled(a, 0.01)});
  new_layers.push_back({"tiny", "Relu", scaled(a, 0.02)});  // twice as slow
  CompareOptions gate;
  gate.per_node_gate = true;
  Comparison c = compare_docs(profile_doc(a, base_layers), profile_doc(a, new_layers), gate);
  const NodeDelta& tiny = c.nodes.back();
  EXPECT_EQ(tiny.time.verdict, Verdict::Regression);
  EXPECT_NEAR(tiny.share_base, 0.01 / (99 + 0.01), 1e-12);
  EXPECT_FALSE(tiny.gated);  // 0.01% and 0.02% of the time: under 1% in both runs
  EXPECT_FALSE(c.gate_failed());

  // Now a big node regresses: it carries 1.045 / (99 * 1.045 + 0.01045) = 1/99.01 = 1.01% of the
  // base run's time, over the 1% the gate asks for.
  new_layers[5].samples = scaled(a, 1.2);
  c = compare_docs(profile_doc(a, base_layers), profile_doc(a, new_layers), gate);
  EXPECT_TRUE(c.nodes[5].gated);
  ASSERT_EQ(c.gated_node_regressions.size(), 1u);
  EXPECT_EQ(c.gated_node_regressions[0], 5);
  EXPECT_FALSE(c.whole_regressed);
  EXPECT_TRUE(c.gate_failed());
  // The same runs without the flag pass.
  EXPECT_FALSE(compare_docs(profile_doc(a, base_layers), profile_doc(a, new_layers)).gate_failed());
}

// ------------------------------------------------------------------ warnings

TEST(Compare, ContextDifferencesAreWarnings) {
  const auto a = base_samples();
  const Comparison c =
      compare_docs(profile_doc(a, {}, 1, 1, 1000), profile_doc(scaled(a, 4), {}, 4, 2, 4000));
  std::string all;
  for (const auto& w : c.warnings) all += w + "\n";
  EXPECT_TRUE(contains(all, "batch differs: base 1, new 4")) << all;
  EXPECT_TRUE(contains(all, "threads differ: base 1, new 2")) << all;
  EXPECT_TRUE(contains(all, "model FLOPs differ")) << all;
  EXPECT_EQ(c.warnings.size(), 3u) << all;
}

TEST(Compare, NoisySamplesAreAWarning) {
  // {1, 1, 1, 2, 1, 1, 1, 2}: mean 1.25, s = sqrt((6 * 0.0625 + 2 * 0.5625) / 7) = 0.463,
  // CV = 37% > 10%.
  const auto a = base_samples();
  const Comparison c = compare_docs(profile_doc(a), profile_doc({1, 1, 1, 2, 1, 1, 1, 2}));
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_TRUE(contains(c.warnings[0], "new run")) << c.warnings[0];
}

TEST(Compare, SpeedChangeDuringARunIsAWarning) {
  // Run order: ten samples at 1.00..1.09, then ten at 1.30..1.39. The halves do not overlap
  // (p = 2 / C(20, 10)) and their medians differ by 1.345 / 1.045 - 1 = +28.7% > 5%.
  std::vector<double> drifting = base_samples();
  for (double v : base_samples(10, 1.3)) drifting.push_back(v);
  // The new run holds 1.00..1.19 in the order 1.00 + 0.01 * (7 i mod 20): halves with medians
  // 1.075 and 1.115, +3.7%, under the threshold: no warning for it.
  std::vector<double> steady;
  for (int i = 0; i < 20; ++i) steady.push_back(1.0 + 0.01 * ((7 * i) % 20));
  const Comparison c = compare_docs(profile_doc(drifting), profile_doc(steady));
  std::string all;
  for (const auto& w : c.warnings) all += w + "\n";
  EXPECT_TRUE(contains(all, "base run: the machine's speed changed during the run")) << all;
  EXPECT_TRUE(contains(all, "+28.7%")) << all;
  EXPECT_FALSE(contains(all, "new run: the machine's speed")) << all;
}

// ------------------------------------------------------------------ reading documents

TEST(CompareInput, ReadsAProfileAndAReportNestingOne) {
  const json profile = profile_doc({0.5, 0.25, 0.75}, {{"n", "Conv", {0.1, 0.2}}});
  RunSamples p = run_of(profile);
  EXPECT_EQ(p.document_kind, "profile");
  EXPECT_EQ(p.whole, (std::vector<double>{0.5, 0.25, 0.75}));
  ASSERT_EQ(p.layers.size(), 1u);
  EXPECT_EQ(p.layers[0].samples, (std::vector<double>{0.1, 0.2}));
  EXPECT_EQ(p.context.batch, 1);
  EXPECT_EQ(*p.total_flops, 1000000);
  EXPECT_EQ(p.model_path, "m.onnx");

  const json report = {
      {"schema_version", "1.0"}, {"tool", "modelstat"}, {"kind", "report"}, {"profile", profile}};
  RunSamples r = run_of(report);
  EXPECT_EQ(r.document_kind, "report");
  EXPECT_EQ(r.whole, p.whole);
  EXPECT_EQ(r.layers.size(), 1u);
}

TEST(CompareInput, HandWrittenDocumentWithNullSamples) {
  // As docs/profile-json.md allows: a null sample (non-finite timer value) is left out.
  const std::string text = R"({
    "schema_version": "1.2.0", "tool": "modelstat", "kind": "profile",
    "context": {"device_name": "cpu0", "device_kind": "cpu", "threads": 2, "dtype": "fp32", "batch": 8},
    "whole": {"count": 3, "samples_s": [0.001, null, 0.003]},
    "layers": [{"index": 0, "name": "a", "op_type": "Relu", "time": {"count": 0, "samples_s": []}}],
    "analysis": {"totals": {"flops": null}}
  })";
  const RunSamples r = read_run_samples(text, "hand.json");
  EXPECT_EQ(r.whole, (std::vector<double>{0.001, 0.003}));
  EXPECT_EQ(r.dropped_samples, 1);
  EXPECT_FALSE(r.total_flops.has_value());  // null: unknown, not zero
  EXPECT_EQ(r.context.threads, 2);
  EXPECT_EQ(r.context.batch, 8);
  EXPECT_TRUE(r.layers[0].samples.empty());
  // A layer without samples compares as "no data".
  const Comparison c = compare_runs(r, r);
  EXPECT_EQ(c.nodes[0].time.verdict, Verdict::NoData);
}

// Profile 1.4.0 adds subgraph_layers: a document with them is read as one
// without (compare compares the top-level layers, whose times hold theirs),
// and a layer record reads its subgraph fields back, or their defaults from
// an older document.
TEST(CompareInput, ReadsDocumentsWithAndWithoutSubgraphLayers) {
  json doc = profile_doc({0.5, 0.25, 0.75}, {{"Loop_1", "Loop", {0.1, 0.2}}});
  doc["schema_version"] = "1.4.0";
  doc["subgraph_layer_sum"] = {{"count", 2}, {"samples_s", {0.05, 0.06}}};
  doc["subgraph_layers"] = json::array({{{"index", 0},
                                         {"name", "Loop_1/body/MatMul_1"},
                                         {"op_type", "MatMul"},
                                         {"upcast_to_fp32", false},
                                         {"depth", 1},
                                         {"calls_per_run", 5.0},
                                         {"median_per_call_s", 0.011},
                                         {"time", {{"count", 2}, {"samples_s", {0.05, 0.06}}}}}});
  const RunSamples run = run_of(doc);
  ASSERT_EQ(run.layers.size(), 1u);
  EXPECT_EQ(run.layers[0].name, "Loop_1");

  const LayerTiming sub = Json::parse(doc["subgraph_layers"][0].dump()).get<LayerTiming>();
  EXPECT_EQ(sub.name, "Loop_1/body/MatMul_1");
  EXPECT_EQ(sub.depth, 1);
  EXPECT_EQ(sub.calls_per_run, 5.0);
  EXPECT_EQ(sub.median_per_call, 0.011);
  EXPECT_EQ(sub.time.samples, (std::vector<double>{0.05, 0.06}));
  // Written back, the same keys in the same order.
  const Json written = sub;
  EXPECT_EQ(written["calls_per_run"], 5.0);
  std::vector<std::string> keys;
  for (const auto& item : written.items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"index", "name", "op_type", "upcast_to_fp32", "depth",
                                            "calls_per_run", "median_per_call_s", "time"}));
  // A top-level layer of an older document: no subgraph fields, the defaults.
  const LayerTiming top = Json::parse(doc["layers"][0].dump()).get<LayerTiming>();
  EXPECT_EQ(top.depth, 0);
  EXPECT_EQ(top.calls_per_run, 1.0);
  EXPECT_FALSE(Json(top).contains("depth"));
  EXPECT_FALSE(Json(top).contains("calls_per_run"));
  // A subgraph field of the wrong kind is refused, naming it.
  const Json bad = Json::parse(R"({"index": 0, "name": "n", "op_type": "Relu", "calls_per_run": -1,
                                  "time": {"count": 0, "samples_s": []}})");
  try {
    (void)read_json_record(bad, "bad.json", [](const Json& d) { return d.get<LayerTiming>(); });
    ADD_FAILURE() << "a negative calls_per_run was read";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "field \"calls_per_run\"")) << e.what();
  }
}

void expect_input_error(const std::string& text, const std::string& fragment) {
  try {
    read_run_samples(text, "bad.json");
    ADD_FAILURE() << "no error for: " << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2) << e.what();
    EXPECT_TRUE(contains(e.what(), fragment)) << e.what();
    EXPECT_TRUE(contains(e.what(), "bad.json")) << e.what();
    EXPECT_FALSE(contains(e.what(), "\n")) << e.what();
  }
}

TEST(CompareInput, MalformedDocumentsAreInputErrors) {
  expect_input_error("{not json", "not valid JSON");
  expect_input_error("[1, 2]", "not a JSON object");
  expect_input_error(R"({"tool": "modelstat"})", "no \"kind\"");
  expect_input_error(R"({"kind": "analysis", "schema_version": "1.0.0"})", "\"analysis\" document");
  expect_input_error(R"({"kind": "report", "schema_version": "1.0"})", "without its \"profile\"");
  json doc = profile_doc({1.0});
  doc["schema_version"] = "2.0.0";
  expect_input_error(doc.dump(), "field \"schema_version\": expected a profile schema version this modelstat reads (1.x), got \"2.0.0\"");
  doc = profile_doc({});
  expect_input_error(doc.dump(), "no whole-model samples");
  doc = profile_doc({1.0});
  doc["whole"]["samples_s"] = "fast";
  expect_input_error(doc.dump(), "field \"whole.samples_s\": expected an array, got \"fast\"");
  doc = profile_doc({1.0});
  doc.erase("layers");
  expect_input_error(doc.dump(), "field \"layers\": missing");
}

TEST(CompareInput, OptionsOutOfRangeAreUsageErrors) {
  const RunSamples r = run_of(profile_doc({1.0, 2.0}));
  CompareOptions o;
  o.alpha = 1.5;
  EXPECT_THROW(compare_runs(r, r, o), Error);
  o = {};
  o.threshold = -0.1;
  EXPECT_THROW(compare_runs(r, r, o), Error);
}

// ------------------------------------------------------------------ writers

Comparison regression_example() {
  const auto a = base_samples();
  return compare_docs(
      profile_doc(a, {{"/layer|1/Conv", "Conv", a}, {"relu", "Relu", a}}),
      profile_doc(scaled(a, 1.2), {{"/layer|1/Conv", "Conv", scaled(a, 1.2)}, {"relu", "Relu", a}}));
}

std::string render(const Comparison& c, const std::string& format, int top = 10) {
  std::ostringstream out;
  ReportOptions o;
  o.top = top;
  make_compare_writer(format)->write(c, o, out);
  return out.str();
}

TEST(CompareWriters, TableShowsVerdictsAndTheResult) {
  const std::string text = render(regression_example(), "table");
  EXPECT_TRUE(contains(text, "Whole model")) << text;
  EXPECT_TRUE(contains(text, "+20.0%")) << text;
  EXPECT_TRUE(contains(text, "REGRESSION")) << text;
  EXPECT_TRUE(contains(text, "not significant")) << text;  // relu: identical samples
  EXPECT_TRUE(contains(text, "FAIL: regression beyond 10%")) << text;
  EXPECT_FALSE(contains(text, "\x1b[")) << "no colour unless asked";
  // --top 0: no node rows.
  EXPECT_FALSE(contains(render(regression_example(), "table", 0), "/layer|1/Conv"));
  // Warnings come before everything else.
  const auto a = base_samples();
  const std::string warned = render(compare_docs(profile_doc(a, {}, 1), profile_doc(a, {}, 2)), "table");
  EXPECT_LT(warned.find("Warnings"), warned.find("Whole model")) << warned;
  EXPECT_TRUE(contains(warned, "PASS: no regression beyond 10%")) << warned;
}

TEST(CompareWriters, MarkdownTablesAreWellFormed) {
  const std::string text = render(regression_example(), "md");
  const auto lines = test::lines_of(text);
  bool node_table = false;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    if (lines[i].rfind("| node |", 0) != 0) continue;
    node_table = true;
    const size_t cells = test::md_cells(lines[i]);
    EXPECT_EQ(cells, 9u);
    EXPECT_TRUE(test::is_md_delimiter_row(lines[i + 1], cells)) << lines[i + 1];
    for (size_t k = i + 2; k < lines.size() && !lines[k].empty(); ++k)
      EXPECT_EQ(test::md_cells(lines[k]), cells) << lines[k];
  }
  EXPECT_TRUE(node_table) << text;
  EXPECT_TRUE(contains(text, "/layer\\|1/Conv")) << "a | in a name is escaped\n" << text;
}

TEST(CompareWriters, JsonCarriesEveryNodeAndTheGate) {
  const json j = json::parse(render(regression_example(), "json", 0));  // --top does not cut JSON
  EXPECT_EQ(j["kind"], "compare");
  EXPECT_EQ(j["schema_version"], kCompareJsonSchemaVersion);
  EXPECT_NEAR(j["whole"]["delta"].get<double>(), 0.2, 1e-12);
  EXPECT_EQ(j["whole"]["verdict"], "regression");
  EXPECT_EQ(j["whole"]["p_method"], "exact");
  EXPECT_NEAR(j["whole"]["p_value"].get<double>(), 2.0 / 184756.0, 1e-15);
  ASSERT_EQ(j["nodes"].size(), 2u);
  EXPECT_EQ(j["nodes"][0]["name"], "/layer|1/Conv");
  EXPECT_EQ(j["nodes"][1]["verdict"], "unchanged");
  EXPECT_EQ(j["gate"]["failed"], true);
  EXPECT_EQ(j["gate"]["whole_regressed"], true);
  EXPECT_EQ(j["test"]["threshold"], 0.10);
  EXPECT_EQ(j["base"]["context"]["batch"], 1);
  EXPECT_THROW(make_compare_writer("csv"), Error);
}

// The whole output of every format for the regression example.
TEST(WritersGolden, CompareEveryFormat) {
  test::expect_golden_formats("compare", {"table", "json", "md"}, [&](const std::string& format) {
    return render(regression_example(), format);
  });
}

// ------------------------------------------------------------------ the command

struct RunResult {
  int exit_code = -1;
  std::string out, err;
};

class CompareCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("modelstat_compare_test_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

  static std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  RunResult run(const std::string& args) {
    const fs::path out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    const std::string cmd = "timeout 60 " + std::string(MODELSTAT_BINARY) + " compare " + args + " >" +
                            out.string() + " 2>" + err.string();
    const int status = std::system(cmd.c_str());
    RunResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }

  fs::path dir_;
};

TEST_F(CompareCli, ExitCodesGateARegression) {
  const auto a = base_samples();
  const std::string base = write("base.json", profile_doc(a).dump());
  const std::string same = write("same.json", profile_doc(a).dump());
  const std::string slow = write("slow.json", profile_doc(scaled(a, 1.2)).dump());

  RunResult r = run(base + " " + same);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "PASS")) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;

  r = run(base + " " + slow);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "REGRESSION")) << r.out;
  EXPECT_EQ(r.err.rfind("modelstat: regression beyond 10%: whole model +20.0%", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;

  // The threshold as a percentage or a fraction; above the change, the gate passes.
  EXPECT_EQ(run(base + " " + slow + " --threshold 25%").exit_code, 0);
  EXPECT_EQ(run(base + " " + slow + " --threshold 0.25").exit_code, 0);
  EXPECT_EQ(run(base + " " + slow + " --threshold 10%").exit_code, 1);

  // JSON to a file; the exit code and the stderr line stay.
  r = run(base + " " + slow + " -f json -o " + (dir_ / "cmp.json").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(json::parse(slurp(dir_ / "cmp.json"))["gate"]["failed"], true);
}

TEST_F(CompareCli, ReportDocumentsAreAccepted) {
  const auto a = base_samples();
  const json report = {
      {"schema_version", "1.0"}, {"kind", "report"}, {"profile", profile_doc(scaled(a, 1.2))}};
  const RunResult r =
      run(write("base.json", profile_doc(a).dump()) + " " + write("report.json", report.dump()));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
}

TEST_F(CompareCli, PerNodeGateFlag) {
  const auto a = base_samples();
  const std::string base = write("base.json", profile_doc(a, {{"x", "Conv", a}, {"y", "Relu", a}}).dump());
  const std::string next =
      write("next.json", profile_doc(a, {{"x", "Conv", scaled(a, 1.5)}, {"y", "Relu", a}}).dump());
  EXPECT_EQ(run(base + " " + next).exit_code, 0);
  const RunResult r = run(base + " " + next + " --per-node-gate");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "node x +50.0%")) << r.err;
}

TEST_F(CompareCli, BadInputExitsTwoWithOneLine) {
  const std::string good = write("good.json", profile_doc(base_samples()).dump());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {write("garbage.json", "{\"kind\": \"profile\", "), "not valid JSON"},
      {write("analysis.json", R"({"kind": "analysis", "schema_version": "1.0.0"})"),
       "not a profile or report"},
      {write("empty.json", profile_doc({}).dump()), "no whole-model samples"},
      {(dir_ / "missing.json").string(), "cannot read"},
  };
  for (const auto& [path, fragment] : cases) {
    const RunResult r = run(good + " " + path);
    EXPECT_EQ(r.exit_code, 2) << path << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("modelstat: error: ", 0), 0u) << r.err;
    EXPECT_TRUE(contains(r.err, fragment)) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  // Usage errors: an ambiguous threshold, a missing operand.
  RunResult r = run(good + " " + good + " --threshold 5");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "ambiguous")) << r.err;
  EXPECT_EQ(run(good).exit_code, 2);
}

TEST_F(CompareCli, HelpExplainsTheTestAndTheGate) {
  const RunResult r = run("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(contains(r.out, "Mann-Whitney")) << r.out;
  EXPECT_TRUE(contains(r.out, "--per-node-gate")) << r.out;
  EXPECT_TRUE(contains(r.out, "exit code")) << r.out;
}

}  // namespace
}  // namespace modelstat

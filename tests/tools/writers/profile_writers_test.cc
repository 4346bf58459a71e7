// Golden-shape tests of the profile report writers (tools/writers/profile_*),
// in the manner of report_writers_test.cc: each format is pinned by its
// structure (parses, validates, right columns, exact numbers, required lines),
// not by a byte-for-byte golden file.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "modelstat/error.hpp"
#include "modelstat/joined.hpp"
#include "modelstat/profile.hpp"
#include "test_support.hpp"
#include "tools/writers/writer_checks.hpp"
#include "tools/writers/format_util.hpp"
#include "tools/writers/writers.hpp"

namespace modelstat {
namespace {


// 2^53 + 1: the smallest positive integer a double cannot hold.
constexpr int64_t kBeyondDouble = 9007199254740993LL;
// 0.30000000000000004: needs all 17 significant digits to read back exactly.
const double kTricky = 0.1 + 0.2;
// A name with every character that needs escaping somewhere: comma and quote
// (CSV), '|' (Markdown), backslash and quote (JSON).
const char* const kNastyName = "/blocks.0/attn,\"proj\"|out\\x";

TimingSummary timing(double median, int64_t count, std::vector<double> samples = {}) {
  TimingSummary t;
  t.count = count;
  t.median = t.p50 = median;
  t.mean = median * 1.02;
  t.stddev = median * 0.04;
  t.cv = t.stddev / t.mean;
  t.min = median * 0.95;
  t.max = median * 1.6;
  t.p90 = median * 1.1;
  t.p95 = median * 1.2;
  t.p99 = median * 1.5;
  t.median_ci_low = median * 0.992;
  t.median_ci_high = median * 1.008;
  t.rel_ci = 0.008;
  t.stop_reason = "median 95% CI within 1% (target)";
  t.samples = std::move(samples);
  return t;
}

using test::cost_node;

LayerTiming layer(int index, const NodeReport& n, double median) {
  LayerTiming l;
  l.index = index;
  l.name = n.name;
  l.op_type = n.op_type;
  l.time = timing(median, 4, {median, median * 0.99, median * 1.01, median * 1.2});
  return l;
}

// Three layers: an exact Conv, a MatMul with a nasty name and a MAC count
// beyond a double's integers, and an op the analyzer has no rule for.
ProfileResult sample_profile() {
  ProfileResult r;
  AnalysisResult& a = r.analysis;
  a.model_path = "models/sample.onnx";
  a.producer = "pytorch 2.1.0";
  a.ir_version = 8;
  a.opsets = {{"", 17}};
  a.inputs = {GraphValue{"input", "float32", test::make_shape({1, 3, 224, 224})}};
  a.outputs = {GraphValue{"scores", "float32", test::make_shape({1, 100})}};
  a.nodes = {cost_node(0, "/conv1/Conv", "Conv", CostStatus::Exact, 118013952, 236027904, 639744, 3211264),
             cost_node(1, kNastyName, "MatMul", CostStatus::Exact, kBeyondDouble, 2 * kBeyondDouble, 5046272, 117440512),
             cost_node(2, "nms", "NonMaxSuppression", CostStatus::UnknownOp, 0, 0, 0, 0)};
  a.nodes[2].cost.note = "no cost rule for NonMaxSuppression";
  a.totals.nodes = 3;
  a.totals.nodes_exact = 2;
  a.totals.nodes_unknown_op = 1;
  a.totals.macs = kBeyondDouble + 118013952;
  a.totals.flops = 2 * kBeyondDouble + 236027904;
  a.notices = {"analysis notice"};

  RunContext& c = r.context;
  c.device_name = "NVIDIA H100 80GB HBM3";
  c.device_kind = "cuda";
  c.driver_version = "550.54.15";
  c.runtime_version = "CUDA 12.4";
  c.torch_version = "2.3.0";
  c.threads = 16;
  c.dtype = "fp32";
  c.batch = 1;
  c.clocks = "sm 1980 MHz, mem 2619 MHz";
  c.date = "2024-05-01T12:00:00Z";
  c.host = "gpu-node-7";
  c.timer = "cuda events on the execution stream";

  r.cold = {0.0123, 0.0456, 0.31, 0.001};
  // 1000 samples: enough to show that long sample arrays are wrapped.
  std::vector<double> whole_samples;
  for (int i = 0; i < 1000; ++i) whole_samples.push_back(0.001 + 1e-7 * (i % 17));
  whole_samples[0] = kTricky / 300.0;
  whole_samples[1] = kTricky;
  r.whole = timing(0.001, 1000, whole_samples);
  r.layer_sum = timing(0.001031, 4, {0.001031, 0.00103, 0.001032, 0.0012});
  r.layers = {layer(0, a.nodes[0], 0.0004), layer(1, a.nodes[1], 0.0006), layer(2, a.nodes[2], 0.00003)};
  r.h2d = timing(0.00005, 200, {0.00005, 0.000051});
  r.h2d_bytes = 602112;
  r.d2h_bytes = 400;  // d2h not measured: count 0
  r.end_to_end = false;
  r.batch_sweep = {{1, true, "", 0.001, 1000.0},
                   {8, true, "", 0.004, 2000.0},
                   {64, true, "", 0.025, 2560.0},
                   {128, false, "out of memory", 0, 0}};
  r.max_batch = 96;
  ConcurrencyResult conc;
  conc.requests_in_flight = 4;
  conc.throughput = 2500;
  conc.latency = timing(0.0016, 500, {0.0016, 0.0017});
  conc.mechanism = "CUDA streams";
  r.concurrency = conc;
  MemoryMeasurement memory;
  memory.method = "CUDA: caching allocator statistics";
  memory.weights_bytes = 46758400;
  memory.inference_peak_bytes = kBeyondDouble;  // exact through the writer
  r.memory = memory;
  TrainStepResult train;
  train.optimizer = "adam";
  train.loss = "sum of mean(output^2)";
  train.trainable_params = 11689512;
  train.time = timing(0.02, 3, {0.02, 0.021, 0.019});
  train.forward_seconds = 0.006;
  train.backward_seconds = 0.012;
  train.optimizer_seconds = 0.002;
  train.peak_bytes = 187000000;
  train.memory_method = "CUDA: caching allocator statistics";
  r.train_step = train;
  r.notices = {"GPU clocks were not locked; expect more variance"};
  return r;
}

// The sample grouped by block: "/conv1/" (layer 0), "/blocks.0/" (layer 1),
// "(other)" (nms, layer 2: no cost rule).
ProfileResult grouped_profile() {
  ProfileResult r = sample_profile();
  apply_grouping(r, GroupRule::parse("block"));
  return r;
}

// A model with control flow: Relu_1, Loop_2 (its body: MatMul_1, and If_2
// whose then branch the analysis counted, its condition unknown), Neg_3.
// The subgraph pass timed the body's nodes five times a run, the then
// branch's Add three times and the else branch's Sub twice: the analysis has
// no row for the Sub.
ProfileResult subgraph_profile() {
  ProfileResult r;
  AnalysisResult& a = r.analysis;
  a.model_path = "models/loop.onnx";
  a.nodes = {cost_node(0, "Relu_1", "Relu", CostStatus::Exact, 0, 8, 32, 32),
             cost_node(1, "Loop_2", "Loop", CostStatus::Exact, 160, 360, 1000, 200),
             cost_node(2, "Neg_3", "Neg", CostStatus::Exact, 0, 8, 32, 32)};
  a.nodes[1].subgraph_nodes = 3;
  a.subgraph_nodes = {
      cost_node(1, "Loop_2/body/MatMul_1", "MatMul", CostStatus::Exact, 160, 320, 800, 160),
      cost_node(1, "Loop_2/body/If_2", "If", CostStatus::Exact, 0, 40, 100, 20),
      cost_node(1, "Loop_2/body/If_2/then_branch/Add_1", "Add", CostStatus::Exact, 0, 40, 100, 20)};
  a.totals.nodes = 6;
  a.totals.nodes_exact = 6;
  a.totals.macs = 160;
  a.totals.flops = 376;
  r.context.device_name = "cpu0";
  r.context.device_kind = "cpu";
  r.context.threads = 1;
  r.context.dtype = "fp32";
  r.context.batch = 1;
  r.whole = timing(0.0002, 3, {0.0002, 0.00021, 0.00019});
  r.layer_sum = timing(0.00021, 3, {0.00021, 0.00022, 0.0002});
  r.layers = {layer(0, a.nodes[0], 0.00001), layer(1, a.nodes[1], 0.00019), layer(2, a.nodes[2], 0.00001)};
  r.subgraph_layer_sum = timing(0.00017, 3, {0.00017, 0.00018, 0.00016});
  auto sub = [](const std::string& name, const std::string& op, int depth, double calls, double median) {
    return test::subgraph_layer(1, name, op, depth, calls,
                                timing(median, 3, {median, median * 0.99, median * 1.01}));
  };
  r.subgraph_layers = {sub("Loop_2/body/MatMul_1", "MatMul", 1, 5, 0.0001),
                       sub("Loop_2/body/If_2", "If", 1, 5, 0.00006),
                       sub("Loop_2/body/If_2/then_branch/Add_1", "Add", 2, 3, 0.00002),
                       sub("Loop_2/body/If_2/else_branch/Sub_1", "Sub", 2, 2, 0.00001)};
  return r;
}

std::string render(const std::string& format, const ProfileResult& r, const ReportOptions& options = {}) {
  std::ostringstream out;
  make_profile_writer(format)->write(r, options, out);
  return out.str();
}

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// ------------------------------------------------------------------- helpers

TEST(ProfileFormatTest, HumanSeconds) {
  using report_detail::human_seconds;
  EXPECT_EQ(human_seconds(0), "0 s");
  EXPECT_EQ(human_seconds(2.3e-7), "230 ns");
  EXPECT_EQ(human_seconds(5e-6), "5.00 \xC2\xB5s");
  EXPECT_EQ(human_seconds(0.0012345), "1.23 ms");
  EXPECT_EQ(human_seconds(0.0123), "12.3 ms");
  EXPECT_EQ(human_seconds(0.31), "310 ms");
  EXPECT_EQ(human_seconds(0.0009996), "1.00 ms");  // not "1000 µs"
  EXPECT_EQ(human_seconds(47.0), "47.0 s");
  EXPECT_EQ(human_seconds(1234.0), "1234 s");
  EXPECT_EQ(human_seconds(-0.0015), "-1.50 ms");
  EXPECT_EQ(human_seconds(4e-10), "0.4 ns");
  EXPECT_EQ(human_seconds(NAN), "-");
  EXPECT_EQ(report_detail::signed_percent(0.031), "+3.1%");
  EXPECT_EQ(report_detail::signed_percent(-0.004), "-0.4%");
  EXPECT_EQ(report_detail::signed_percent(0.0001), "0.0%");
  EXPECT_EQ(report_detail::percent_of(1e-5, 1.0), "<0.1%");
  EXPECT_EQ(report_detail::percent_of(1.0, 0.0), "-");
}

TEST(ProfileWriterTest, PercentileMethodIsStated) {
  EXPECT_STREQ(kPercentileMethod,
               "percentiles: linear interpolation between closest ranks (Hyndman-Fan type 7, NumPy default); "
               "median 95% CI: distribution-free, binomial order statistics");
}

TEST(ProfileWriterTest, LayerFiguresJoinTimeAndCost) {
  const ProfileResult r = sample_profile();
  const double sum = layer_median_sum(r);
  EXPECT_DOUBLE_EQ(sum, 0.00103);
  const LayerCost conv = join_layer(r, r.layers[0], sum);
  ASSERT_TRUE(conv.flops && conv.achieved_flops_per_second && conv.achieved_bytes_per_second && conv.share_of_time);
  EXPECT_DOUBLE_EQ(*conv.achieved_flops_per_second, 236027904 / 0.0004);
  EXPECT_DOUBLE_EQ(*conv.achieved_bytes_per_second, (639744 + 3211264) / 0.0004);
  EXPECT_DOUBLE_EQ(*conv.share_of_time, 0.0004 / 0.00103);
  const LayerCost nms = join_layer(r, r.layers[2], sum);
  EXPECT_FALSE(nms.flops || nms.achieved_flops_per_second || nms.achieved_bytes_per_second)
      << "unknown op: unknown, not zero";
  EXPECT_TRUE(nms.share_of_time);
  ASSERT_TRUE(report_detail::instrumentation_overhead(r));
  EXPECT_NEAR(*report_detail::instrumentation_overhead(r), 0.031, 1e-12);
  const auto hot = report_detail::hotspot_layers(r, 2);
  ASSERT_EQ(hot.size(), 2u);
  EXPECT_EQ(hot[0]->index, 1);
  EXPECT_EQ(hot[1]->index, 0);
}

// ----------------------------------------------------------------------- JSON

TEST(ProfileWriterTest, JsonHasEveryFieldInOrder) {
  const ProfileResult r = sample_profile();
  const std::string text = render("json", r);
  const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(text);
  std::vector<std::string> keys;
  for (const auto& item : doc.items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"schema_version",
                                            "tool",
                                            "kind",
                                            "percentile_method",
                                            "context",
                                            "cold_start",
                                            "whole",
                                            "layer_sum",
                                            "instrumentation_overhead",
                                            "fusion",
                                            "throughput_samples_per_s",
                                            "layers",
                                            "subgraph_layer_sum",
                                            "subgraph_layers",
                                            "group_by",
                                            "groups",
                                            "transfers",
                                            "batch_sweep",
                                            "max_batch",
                                            "concurrency",
                                            "memory",
                                            "train_step",
                                            "control_flow",
                                            "analysis",
                                            "notices"}));
  EXPECT_EQ(doc["schema_version"], kProfileJsonSchemaVersion);
  EXPECT_EQ(std::string(kProfileJsonSchemaVersion).rfind("1.", 0), 0u) << "the schema describes major 1";
  EXPECT_EQ(doc["kind"], "profile");
  EXPECT_EQ(doc["percentile_method"], kPercentileMethod);
  EXPECT_EQ(doc["context"]["device_name"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(doc["context"]["timer"], "cuda events on the execution stream");
  EXPECT_EQ(doc["cold_start"]["first_inference_s"].get<double>(), 0.31);
  EXPECT_NEAR(doc["instrumentation_overhead"].get<double>(), 0.031, 1e-12);
  EXPECT_DOUBLE_EQ(doc["throughput_samples_per_s"].get<double>(), 1000.0);

  ASSERT_EQ(doc["layers"].size(), 3u);
  EXPECT_EQ(doc["layers"][1]["name"], kNastyName);
  EXPECT_EQ(doc["layers"][0]["cost_status"], "exact");
  EXPECT_EQ(doc["layers"][0]["time"]["samples_s"].size(), 4u);  // one array per layer
  EXPECT_TRUE(doc["layers"][2]["flops"].is_null()) << "unknown op: null, not 0";
  EXPECT_TRUE(doc["layers"][2]["achieved_gflops"].is_null());
  EXPECT_EQ(doc["layers"][2]["cost_status"], "unknown_op");
  double shares = 0;
  for (const auto& l : doc["layers"]) shares += l["share_of_layer_sum"].get<double>();
  EXPECT_NEAR(shares, 1.0, 1e-12);

  EXPECT_EQ(doc["transfers"]["h2d"]["bytes"].get<int64_t>(), 602112);
  EXPECT_NEAR(doc["transfers"]["h2d"]["gb_per_s"].get<double>(), 12.04224, 1e-9);
  EXPECT_EQ(doc["transfers"]["d2h"]["time"]["count"].get<int64_t>(), 0);
  EXPECT_TRUE(doc["transfers"]["d2h"]["time"]["median_s"].is_null()) << "no samples: null, not 0";
  EXPECT_TRUE(doc["transfers"]["d2h"]["gb_per_s"].is_null());
  EXPECT_EQ(doc["transfers"]["end_to_end"], false);
  EXPECT_EQ(doc["batch_sweep"].size(), 4u);
  EXPECT_EQ(doc["batch_sweep"][3]["fits"], false);
  EXPECT_EQ(doc["batch_sweep"][3]["failure"], "out of memory");
  EXPECT_TRUE(doc["batch_sweep"][3]["median_s"].is_null());
  EXPECT_EQ(doc["max_batch"].get<int64_t>(), 96);
  EXPECT_EQ(doc["concurrency"]["requests_in_flight"], 4);
  EXPECT_EQ(doc["concurrency"]["latency"]["count"], 500);
  EXPECT_EQ(doc["notices"], nlohmann::ordered_json::array({r.notices[0]}));
}

TEST(ProfileWriterTest, JsonNumbersAreExact) {
  const ProfileResult r = sample_profile();
  const std::string text = render("json", r);
  const json doc = json::parse(text);
  // Doubles: every raw sample reads back bit for bit.
  const json& samples = doc["whole"]["samples_s"];
  ASSERT_EQ(samples.size(), r.whole.samples.size());
  for (size_t i = 0; i < samples.size(); ++i)
    ASSERT_TRUE(same_bits(samples[i].get<double>(), r.whole.samples[i])) << i << ": " << samples[i].dump();
  EXPECT_TRUE(contains(text, "0.30000000000000004"));
  EXPECT_TRUE(same_bits(doc["whole"]["samples_s"][1].get<double>(), kTricky));
  // Integers beyond 2^53: exact digits in the text and through the parser.
  EXPECT_TRUE(contains(text, "\"macs\": 9007199254740993"));
  EXPECT_EQ(doc["layers"][1]["macs"].get<int64_t>(), kBeyondDouble);
  EXPECT_EQ(doc["layers"][1]["flops"].get<int64_t>(), 2 * kBeyondDouble);
  EXPECT_EQ(doc["analysis"]["totals"]["macs"].get<int64_t>(), kBeyondDouble + 118013952);
}

TEST(ProfileWriterTest, JsonLinesStayReasonable) {
  const std::string text = render("json", sample_profile());
  const auto lines = lines_of(text);
  // Only a long string (the conventions, a long node name) may exceed the
  // width: sample arrays are wrapped.
  for (const std::string& line : lines)
    if (line.size() > 200 && line.find("\": \"") == std::string::npos) ADD_FAILURE() << "long line: " << line;
  EXPECT_LT(lines.size(), 600u) << "1000 whole-model samples do not take 1000 lines";
}

TEST(ProfileWriterTest, JsonNestsTheAnalysisDocumentUnchanged) {
  const ProfileResult r = sample_profile();
  ReportOptions options;
  options.top = 1;
  std::ostringstream analysis;
  make_analysis_writer("json")->write(r.analysis, options, analysis);
  const json doc = json::parse(render("json", r, options));
  EXPECT_EQ(doc["analysis"], json::parse(analysis.str()));
  const std::vector<std::string> errors =
      SchemaValidator().validate(test::load_source_json("docs/analysis.schema.json"), doc["analysis"]);
  EXPECT_TRUE(errors.empty()) << ::testing::PrintToString(errors);
}

TEST(ProfileWriterTest, JsonValidatesAgainstSchema) {
  const json schema = test::load_source_json("docs/profile.schema.json");
  ProfileResult no_extras = sample_profile();
  no_extras.concurrency.reset();
  no_extras.max_batch = 0;
  no_extras.batch_sweep.clear();
  no_extras.memory.reset();
  no_extras.train_step.reset();
  for (const ProfileResult& r : {sample_profile(), no_extras, grouped_profile(), ProfileResult{}}) {
    const json doc = json::parse(render("json", r));
    const std::vector<std::string> errors = SchemaValidator().validate(schema, doc);
    EXPECT_TRUE(errors.empty()) << ::testing::PrintToString(errors);
  }
  const json doc = json::parse(render("json", no_extras));
  EXPECT_TRUE(doc["concurrency"].is_null());
  EXPECT_TRUE(doc["max_batch"].is_null());
  EXPECT_TRUE(doc["memory"].is_null()) << "not measured: null";
  EXPECT_TRUE(doc["train_step"].is_null());
}

TEST(ProfileWriterTest, JsonMemoryAndTrainStepKeys) {
  const ProfileResult r = sample_profile();
  const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(render("json", r));
  // The fit validation reads these names: pinned with their order.
  std::vector<std::string> keys;
  for (const auto& item : doc["memory"].items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"method", "weights_bytes", "inference_peak_bytes"}));
  keys.clear();
  for (const auto& item : doc["train_step"].items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"optimizer", "precision", "loss", "trainable_params", "time", "forward_s",
                                            "backward_s", "optimizer_s", "peak_bytes", "memory_method"}));
  EXPECT_EQ(doc["memory"]["weights_bytes"].get<int64_t>(), 46758400);
  EXPECT_EQ(doc["memory"]["inference_peak_bytes"].get<int64_t>(), kBeyondDouble);
  EXPECT_EQ(doc["train_step"]["optimizer"], "adam");
  EXPECT_EQ(doc["train_step"]["trainable_params"].get<int64_t>(), 11689512);
  EXPECT_EQ(doc["train_step"]["time"]["count"].get<int64_t>(), 3);
  EXPECT_EQ(doc["train_step"]["time"]["samples_s"].size(), 3u);
  EXPECT_EQ(doc["train_step"]["backward_s"].get<double>(), 0.012);
  EXPECT_EQ(doc["train_step"]["peak_bytes"].get<int64_t>(), 187000000);
  // A step with no samples: part medians are null, not 0.
  ProfileResult unmeasured = r;
  unmeasured.train_step->time = TimingSummary{};
  const json doc2 = json::parse(render("json", unmeasured));
  EXPECT_TRUE(doc2["train_step"]["forward_s"].is_null());
  EXPECT_TRUE(SchemaValidator().validate(test::load_source_json("docs/profile.schema.json"), doc2).empty());
}

TEST(ProfileWriterTest, HumanReportsShowMemoryAndTrainStep) {
  const ProfileResult r = sample_profile();
  for (const char* format : {"table", "md"}) {
    const std::string text = render(format, r);
    EXPECT_TRUE(contains(text, "Memory (measured by the allocator)")) << format;
    EXPECT_TRUE(contains(text, "44.6 MiB (46,758,400 bytes)")) << format;
    EXPECT_TRUE(contains(text, "Training step (adam, fp32)")) << format;
    EXPECT_TRUE(contains(text, "11.69 M (11,689,512)")) << format;
    EXPECT_TRUE(contains(text, "12.0 ms (60.0%)")) << format << ": backward median and its share of the step";
  }
  ProfileResult without = r;
  without.memory.reset();
  without.train_step.reset();
  EXPECT_FALSE(contains(render("table", without), "Training step"));
  EXPECT_FALSE(contains(render("table", without), "Memory (measured"));
}

TEST(ProfileWriterTest, SchemaValidatorRejectsBrokenProfiles) {
  const json schema = test::load_source_json("docs/profile.schema.json");
  SchemaValidator validator;
  const json good = json::parse(render("json", sample_profile()));
  ASSERT_TRUE(validator.validate(schema, good).empty());

  json missing = good;
  missing["whole"].erase("p99_s");  // inside a $ref'd definition
  EXPECT_FALSE(validator.validate(schema, missing).empty());
  json wrong_type = good;
  wrong_type["layers"][0]["time"]["count"] = 1.5;
  EXPECT_FALSE(validator.validate(schema, wrong_type).empty());
  json bad_sample = good;
  bad_sample["layers"][0]["time"]["samples_s"][0] = "fast";
  EXPECT_FALSE(validator.validate(schema, bad_sample).empty());
  json extra = good;
  extra["transfers"]["h2d"]["undocumented"] = 1;
  EXPECT_FALSE(validator.validate(schema, extra).empty());
  json bad_kind = good;
  bad_kind["kind"] = "analysis";
  EXPECT_FALSE(validator.validate(schema, bad_kind).empty());
}

TEST(ProfileWriterTest, JsonLeavesNamesThatSpellAPlaceholderAlone) {
  ProfileResult r = sample_profile();
  r.layers[0].name = "@@modelstat-profile-samples-0@@";
  r.notices.push_back("@@modelstat-profile-analysis@@");
  const json doc = json::parse(render("json", r));
  EXPECT_EQ(doc["layers"][0]["name"], "@@modelstat-profile-samples-0@@");
  EXPECT_EQ(doc["notices"][1], "@@modelstat-profile-analysis@@");
  EXPECT_EQ(doc["whole"]["samples_s"].size(), 1000u);
  EXPECT_TRUE(doc["analysis"].is_object());
}

// ------------------------------------------------------------------------ CSV

TEST(ProfileWriterTest, CsvHasHeaderAndOneQuotedRowPerLayer) {
  const ProfileResult r = sample_profile();
  const auto records = parse_csv(render("csv", r));
  const std::vector<std::string> header = {"index",           "name",          "op_type",
                                           "median_s",        "mean_s",        "p90_s",
                                           "p99_s",           "min_s",         "max_s",
                                           "stddev_s",        "runs",          "share_of_layer_sum",
                                           "flops",           "macs",          "bytes",
                                           "achieved_gflops", "achieved_gbps", "upcast_to_fp32",
                                           "depth",           "calls_per_run", "median_per_call_s"};
  ASSERT_EQ(records.size(), 1 + r.layers.size());
  EXPECT_EQ(records[0], header);
  for (const auto& record : records) EXPECT_EQ(record.size(), header.size());

  const auto& matmul = records[2];
  EXPECT_EQ(matmul[1], kNastyName);  // comma, quotes and backslash survive
  EXPECT_EQ(matmul[2], "MatMul");
  EXPECT_TRUE(same_bits(std::stod(matmul[3]), 0.0006));  // shortest round-trip decimal
  EXPECT_EQ(matmul[10], "4");
  EXPECT_EQ(matmul[13], "9007199254740993");
  EXPECT_EQ(matmul[12], "18014398509481986");
  EXPECT_TRUE(same_bits(std::stod(records[1][15]), 236027904 / 0.0004 / 1e9));
  const auto& nms = records[3];
  EXPECT_EQ(nms[2], "NonMaxSuppression");
  EXPECT_EQ(nms[12], "") << "unknown op: empty, not 0";
  EXPECT_EQ(nms[15], "");
  double shares = 0;
  for (size_t i = 1; i < records.size(); ++i) shares += std::stod(records[i][11]);
  EXPECT_NEAR(shares, 1.0, 1e-12);
  for (size_t i = 1; i < records.size(); ++i) EXPECT_EQ(records[i][17], "0") << "no layer ran upcast";
}

// A layer that ran in fp32 for want of an fp16/bf16 kernel is marked in the
// per-layer and hotspot rows ("MatMul^", with the legend once per table), and
// flagged in JSON and CSV; the others are not.
TEST(ProfileWriterTest, UpcastLayerIsMarked) {
  ProfileResult r = sample_profile();
  r.layers[1].upcast_to_fp32 = true;  // the MatMul
  for (const char* format : {"table", "md"}) {
    const std::string text = render(format, r);
    EXPECT_TRUE(contains(text, "MatMul^")) << format << "\n" << text;
    EXPECT_FALSE(contains(text, "Conv^")) << format;
    EXPECT_TRUE(contains(text, "^ ran in fp32: no kernel for its fp16/bf16 dtype")) << format;
    EXPECT_FALSE(contains(render(format, sample_profile()), "^ ran in fp32")) << format;
  }
  const json doc = json::parse(render("json", r));
  EXPECT_FALSE(doc["layers"][0]["upcast_to_fp32"].get<bool>());
  EXPECT_TRUE(doc["layers"][1]["upcast_to_fp32"].get<bool>());
  const auto csv = parse_csv(render("csv", r));
  EXPECT_EQ(csv[2][17], "1");
  EXPECT_EQ(csv[1][17], "0");
}

// ------------------------------------------------------------------- Markdown

TEST(ProfileWriterTest, MarkdownTablesHaveConsistentColumns) {
  // Tables: context, cold start, whole, layer sum, copies, per-layer, hotspots, batch sweep,
  // concurrency, memory, training step.
  const auto lines = test::expect_markdown_report(
      render("md", sample_profile()), 11,
      {"## Context", "## Cold start", "## Whole-model latency", "## Layer sum vs whole model", "## Host-device copies",
       "## Per-layer times (3 layers", "## Hotspots (top 3 by median time)", "## Batch sweep",
       "## Concurrency (4 requests in flight)", "## Notices", "> percentiles: linear interpolation",
       "| instrumentation overhead | +3.1% |", "attn,\"proj\"\\|out", "- note: GPU clocks were not locked"});
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "# modelstat profile: models/sample.onnx");
}

// ---------------------------------------------------------------------- table

// A node name of hundreds of characters (tf2onnx) widens no line of the
// profile's table: the node columns elide it, notes wrap.
TEST(ProfileWriterTest, LongNodeNamesWidenNoLine) {
  auto widest = [](const std::string& text) {
    size_t w = 0, start = 0;
    while (start <= text.size()) {
      const size_t end = std::min(text.find('\n', start), text.size());
      w = std::max(w, report_detail::display_width(text.substr(start, end - start)));
      start = end + 1;
    }
    return w;
  };
  auto with_name = [](const std::string& name) {
    ProfileResult r = sample_profile();
    r.analysis.nodes[1].name = name;
    r.layers[1].name = name;
    r.notices.push_back("a note naming " + name);
    return r;
  };
  // Names at the elision width (40 columns) set the table's width...
  const size_t width = widest(render("table", with_name(std::string(40, 'a'))));
  // ... which a name of 292 does not pass.
  const ProfileResult r = with_name("WireFrameModel_with_alpha/" + std::string(260, 'b') + "/Relu6");
  EXPECT_LE(widest(render("table", r)), width) << render("table", r);
}

TEST(ProfileWriterTest, TableHasTheKeyLines) {
  const ProfileResult r = sample_profile();
  const std::string text = render("table", r);
  for (const char* needle : {
           "modelstat profile: models/sample.onnx",
           "percentiles: linear interpolation between closest ranks (Hyndman-Fan type 7",
           "convention: ",
           "H2D (inputs)",
           "588.0 KiB",
           "12.0",
           "0 (not measured)",
           "the whole-model latency does not include these copies",
           "Per-layer times (3 layers, graph order; instrumented pass)",
           "GFLOP/s",
           "Hotspots (top 3 by median time)",
           "FLOPs coverage: 2/3 nodes exact",
           "Batch sweep",
           "failed: out of memory",
           "max batch: 96",
           "Concurrency (4 requests in flight)",
           "note: GPU clocks were not locked; expect more variance",
       })
    EXPECT_TRUE(contains(text, needle)) << "missing: " << needle << "\n" << text;
  // "key   value" lines, whatever the key column's width.
  const std::vector<std::pair<std::string, std::string>> fields = {
      {"device", "NVIDIA H100 80GB HBM3 (cuda)"},
      {"runtime / driver", "CUDA 12.4 / 550.54.15"},
      {"LibTorch", "2.3.0"},
      {"threads", "16"},
      {"dtype", "fp32"},
      {"batch", "1"},
      {"timer", "cuda events on the execution stream"},
      {"date", "2024-05-01T12:00:00Z"},
      {"host", "gpu-node-7"},
      {"model load", "12.3 ms"},
      {"weight upload", "45.6 ms"},
      {"first inference", "310 ms (310x the steady state)"},
      {"steady state (median)", "1.00 ms"},
      {"median", "1.00 ms"},
      {"median 95% CI", "992 \xC2\xB5s .. 1.01 ms (\xC2\xB1" "0.8%)"},
      {"mean", "1.02 ms"},
      {"std", "40.0 \xC2\xB5s"},
      {"CV", "3.9%"},
      {"min", "950 \xC2\xB5s"},
      {"max", "1.60 ms"},
      {"p90", "1.10 ms"},
      {"p95", "1.20 ms"},
      {"p99", "1.50 ms"},
      {"runs", "1,000"},
      {"stopped", "median 95% CI within 1% (target)"},
      {"copies", "not included (compute only; H2D / D2H timed apart)"},
      {"throughput", "1,000 samples/s (batch 1 / median 1.00 ms)"},
      {"layer sum (median)", "1.03 ms"},
      {"whole model (median)", "1.00 ms"},
      {"instrumentation overhead", "+3.1%"},
      {"throughput", "2,500 requests/s = 2,500 samples/s (2.50x one request at a time)"},
      {"latency p99", "2.40 ms"},
  };
  const auto all_lines = lines_of(text);
  for (const auto& [key, value] : fields) {
    bool found = false;
    for (const std::string& line : all_lines) {
      const size_t k = line.find_first_not_of(' ');
      if (k == std::string::npos || line.compare(k, key.size(), key) != 0) continue;
      const size_t v = line.find_first_not_of(' ', k + key.size());
      found = found || (v >= k + key.size() + 2 && v != std::string::npos && line.substr(v) == value);
    }
    EXPECT_TRUE(found) << "no line \"" << key << "  " << value << "\"\n" << text;
  }
  EXPECT_FALSE(contains(text, "\x1b[")) << "no colour unless asked";

  // The per-layer table: graph order, rows no wider than the rule, and the
  // unknown op's FLOPs shown as unknown.
  const auto lines = lines_of(text);
  size_t header = 0;
  while (header < lines.size() && lines[header].find("#  node") == std::string::npos) ++header;
  ASSERT_LT(header + 4, lines.size());
  const size_t rule = report_detail::display_width(lines[header + 1]);
  for (size_t i = 0; i < 3; ++i) EXPECT_LE(report_detail::display_width(lines[header + 2 + i]), rule);
  EXPECT_TRUE(contains(lines[header + 2], "/conv1/Conv"));
  EXPECT_TRUE(contains(lines[header + 2], "400 \xC2\xB5s"));
  EXPECT_TRUE(contains(lines[header + 2], "38.8%"));  // 0.4 / 1.03
  EXPECT_TRUE(contains(lines[header + 2], "590"));    // GFLOP/s
  EXPECT_TRUE(contains(lines[header + 4], "nms"));
  EXPECT_TRUE(contains(lines[header + 4], "unknown")) << "an unknown op's FLOPs are unknown, not 0";
}

TEST(ProfileWriterTest, HumanFormatsHonourOptions) {
  const ProfileResult r = sample_profile();
  test::expect_human_formats_honour_options(
      [&](const std::string& format, const ReportOptions& o) { return render(format, r, o); }, "Per-layer times",
      "instrumentation overhead");
}

TEST(ProfileWriterTest, EveryFormatHandlesAnEmptyResult) {
  const ProfileResult empty;
  for (const char* format : {"table", "json", "csv", "md"})
    EXPECT_FALSE(render(format, empty).empty()) << format;
  const std::string table = render("table", empty);
  EXPECT_TRUE(contains(table, "0 (not measured)"));
  EXPECT_TRUE(contains(table, "per-layer pass not run"));
  EXPECT_FALSE(contains(table, "Concurrency"));
  EXPECT_EQ(parse_csv(render("csv", empty)).size(), 1u);
}

// --------------------------------------------------------------- subgraphs

// The nodes inside subgraphs follow their top-level node, indented by their
// depth, with their calls per run; the model's other rows are as without them.
TEST(ProfileWriterTest, SubgraphRowsSitIndentedUnderTheirParent) {
  const ProfileResult r = subgraph_profile();
  const std::string text = render("table", r);
  const auto lines = lines_of(text);
  auto line_of = [&](const std::string& needle) {
    for (size_t i = 0; i < lines.size(); ++i)
      if (contains(lines[i], needle)) return i;
    ADD_FAILURE() << "no line with " << needle << "\n" << text;
    return size_t(0);
  };
  const std::vector<std::string> order = {"  Loop_2  ",        "Loop_2/body/MatMul_1", "Loop_2/body/If_2  ",
                                          "then_branch/Add_1", "else_branch/Sub_1",    "Neg_3"};
  for (size_t k = 1; k < order.size(); ++k)
    EXPECT_EQ(line_of(order[k]), line_of(order[k - 1]) + 1) << order[k];
  // Indented two spaces a level more than the top-level names, under a "calls" column.
  const size_t top = lines[line_of("Neg_3")].find("Neg_3");
  EXPECT_EQ(lines[line_of("MatMul_1")].find("Loop_2/body/MatMul_1"), top + 2);
  EXPECT_EQ(lines[line_of("then_branch/Add_1")].find("Loop_2/body/If_2/then_branch/Add_1"), top + 4);
  EXPECT_TRUE(contains(text, "calls"));
  EXPECT_TRUE(contains(text, "4 subgraph nodes that ran"));
  EXPECT_TRUE(contains(lines[line_of("MatMul_1")], " 5 "));
  EXPECT_TRUE(contains(lines[line_of("then_branch/Add_1")], " 3 "));
  // The subgraph rows are not hotspots: their time is in their parent's.
  size_t hotspots = 0;
  while (hotspots < lines.size() && !contains(lines[hotspots], "Hotspots")) ++hotspots;
  for (size_t i = hotspots; i < lines.size(); ++i) EXPECT_FALSE(contains(lines[i], "/body/")) << lines[i];

  const std::string md = render("md", r);
  expect_well_formed_md_tables(lines_of(md));
  EXPECT_TRUE(contains(md, "| &nbsp;&nbsp;Loop_2/body/MatMul_1 |"));
  EXPECT_TRUE(contains(md, "| &nbsp;&nbsp;&nbsp;&nbsp;Loop_2/body/If_2/then_branch/Add_1 |"));
  // Without control flow there is no calls column.
  EXPECT_FALSE(contains(render("table", sample_profile()), "calls"));
}

TEST(ProfileWriterTest, SubgraphRowsInCsvAndJson) {
  const ProfileResult r = subgraph_profile();
  const auto csv = parse_csv(render("csv", r));
  ASSERT_EQ(csv.size(), 1 + r.layers.size() + r.subgraph_layers.size());
  const std::vector<std::string> names = {"Relu_1",
                                          "Loop_2",
                                          "Loop_2/body/MatMul_1",
                                          "Loop_2/body/If_2",
                                          "Loop_2/body/If_2/then_branch/Add_1",
                                          "Loop_2/body/If_2/else_branch/Sub_1",
                                          "Neg_3"};
  for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(csv[i + 1][1], names[i]);
  EXPECT_EQ(csv[3][0], "1");   // the Loop's index
  EXPECT_EQ(csv[3][18], "1");  // depth
  EXPECT_EQ(csv[3][19], "5");  // calls per run
  EXPECT_TRUE(same_bits(std::stod(csv[3][20]), 0.0001 / 5));
  EXPECT_EQ(csv[3][12], "320");  // the analysis row's FLOPs, per run
  EXPECT_EQ(csv[5][18], "2");
  EXPECT_EQ(csv[6][12], "") << "no analysis row for the else branch's Sub: unknown, not 0";
  EXPECT_EQ(csv[2][18], "0");  // the Loop itself
  EXPECT_EQ(csv[2][19], "1");

  const json doc = json::parse(render("json", r));
  EXPECT_TRUE(SchemaValidator().validate(test::load_source_json("docs/profile.schema.json"), doc).empty());
  EXPECT_EQ(doc["subgraph_layer_sum"]["count"], 3);
  ASSERT_EQ(doc["subgraph_layers"].size(), 4u);
  const json& matmul = doc["subgraph_layers"][0];
  EXPECT_EQ(matmul["name"], "Loop_2/body/MatMul_1");
  EXPECT_EQ(matmul["index"], 1);
  EXPECT_EQ(matmul["depth"], 1);
  EXPECT_EQ(matmul["calls_per_run"].get<double>(), 5.0);
  EXPECT_TRUE(same_bits(matmul["median_per_call_s"].get<double>(), 0.0001 / 5));
  EXPECT_EQ(matmul["flops"], 320);
  EXPECT_TRUE(same_bits(matmul["achieved_gflops"].get<double>(), 320 / 0.0001 / 1e9));
  EXPECT_TRUE(doc["subgraph_layers"][3]["flops"].is_null());
  EXPECT_TRUE(doc["subgraph_layers"][3]["cost_status"].is_null());
  // A top-level row has none of the subgraph fields.
  EXPECT_FALSE(doc["layers"][1].contains("depth"));
  EXPECT_FALSE(doc["layers"][1].contains("calls_per_run"));
  // A profile without control flow writes the fields empty.
  const json plain = json::parse(render("json", sample_profile()));
  EXPECT_EQ(plain["subgraph_layers"], json::array());
  EXPECT_EQ(plain["subgraph_layer_sum"]["count"], 0);
}

// Layer medians 0.4 ms, 0.6 ms and 0.03 ms: the shares of their sum, 1.03 ms.
TEST(ProfileWriterTest, GroupRowsStandInForTheLayerRows) {
  const ProfileResult r = grouped_profile();
  const std::string table = render("table", r);
  EXPECT_TRUE(contains(
      table, "Per-block times (--group-by block: 3 groups of 3 nodes, in order of first appearance)"));
  EXPECT_FALSE(contains(table, "Per-layer times"));
  EXPECT_TRUE(contains(table, "Hotspots"));  // still per layer

  const auto csv = parse_csv(render("csv", r));
  ASSERT_EQ(csv.size(), 4u);
  EXPECT_EQ(csv[0], (std::vector<std::string>{"group", "first_index", "layers", "layers_not_exact",
                                              "median_sum_s", "share_of_layer_sum", "flops", "macs", "bytes",
                                              "share_of_flops", "achieved_gflops", "achieved_gbps"}));
  const std::vector<std::string>& conv = csv[1];
  EXPECT_EQ(conv[0], "/conv1/");
  EXPECT_EQ(std::stod(conv[4]), 0.0004);
  EXPECT_DOUBLE_EQ(std::stod(conv[5]), 0.4 / 1.03);
  EXPECT_EQ(conv[6], "236027904");
  EXPECT_EQ(conv[7], "118013952");
  EXPECT_EQ(conv[8], "3851008");  // 639,744 read + 3,211,264 written
  EXPECT_DOUBLE_EQ(std::stod(conv[10]), 236027904 / 0.0004 / 1e9);
  EXPECT_EQ(csv[2][0], "/blocks.0/");
  EXPECT_EQ(csv[2][6], "18014398509481986");  // 2 x (2^53 + 1), exact
  // nms: timed, not costed: its rates and FLOP share are unknown (empty), not 0.
  EXPECT_EQ(csv[3], (std::vector<std::string>{"(other)", "2", "1", "1", "3e-05", csv[3][5], "0", "0", "0", "",
                                              "", ""}));
  EXPECT_DOUBLE_EQ(std::stod(csv[3][5]), 0.03 / 1.03);

  const json doc = json::parse(render("json", r));
  EXPECT_EQ(doc["group_by"], "block");
  ASSERT_EQ(doc["groups"].size(), 3u);
  EXPECT_EQ(doc["groups"][1]["flops"].get<int64_t>(), 2 * kBeyondDouble);
  EXPECT_TRUE(doc["groups"][2]["achieved_gflops"].is_null());
  EXPECT_EQ(doc["layers"].size(), 3u);
  // The nested analysis carries the same rule's cost sums.
  EXPECT_EQ(doc["analysis"]["group_by"], "block");
  EXPECT_EQ(doc["analysis"]["groups"].size(), 3u);

  const std::string md = render("md", r);
  EXPECT_TRUE(contains(md, "Per-block times (--group-by block"));
  expect_well_formed_md_tables(lines_of(md));

  const json plain = json::parse(render("json", sample_profile()));
  EXPECT_TRUE(plain["group_by"].is_null());
  EXPECT_EQ(plain["groups"], json::array());

  // --no-layers: no times to group, no group table (the JSON keeps the
  // analysis's cost groups).
  ProfileResult no_layers = sample_profile();
  no_layers.layers.clear();
  apply_grouping(no_layers, GroupRule::parse("block"));
  EXPECT_TRUE(no_layers.groups.empty());
  const std::string text = render("table", no_layers);
  EXPECT_FALSE(contains(text, "Per-block times"));
  EXPECT_FALSE(contains(text, "Per-layer times"));
  EXPECT_EQ(json::parse(render("json", no_layers))["analysis"]["groups"].size(), 3u);
}

// The whole output of every format for the sample profile (what
// DISABLED_PrintSampleReports printed to eyeball): a change shows as a diff of
// tests/data/golden/profile.*. The run's date, host and LibTorch version are
// normalised away.
TEST(WritersGolden, ProfileEveryFormat) {
  test::expect_golden_formats("profile", {"table", "json", "csv", "md"},
                              [&](const std::string& format) { return render(format, sample_profile()); },
                              {"gpu-node-7", "2.3.0"});
}

TEST(WritersGolden, ProfileGroupedEveryFormat) {
  test::expect_golden_formats("profile-groups", {"table", "json", "csv", "md"},
                              [&](const std::string& format) { return render(format, grouped_profile()); },
                              {"gpu-node-7", "2.3.0"});
}

TEST(WritersGolden, ProfileSubgraphsEveryFormat) {
  test::expect_golden_formats("profile-subgraphs", {"table", "json", "csv", "md"},
                              [&](const std::string& format) { return render(format, subgraph_profile()); },
                              {});
}

}  // namespace
}  // namespace modelstat

// Golden-shape tests of the joined-report writers (tools/writers/joined_*),
// in the manner of profile_writers_test.cc: a hand-made profile and ceilings
// go through join_profile, and each format is pinned by its structure and by
// figures worked out by hand here, not by a byte-for-byte golden file.
//
// The device: peak 50 TFLOP/s (fp32), bandwidth 3 TB/s, ridge 16.67 FLOP/B.
//   0 /conv1/Conv  236,027,904 FLOPs, 3,851,008 B  median 10 us  I = 61.3  compute
//   1 <nasty>        2,097,152 FLOPs, 12,582,912 B median 10 us  I = 0.167 memory
//   2 nms          no cost rule                    median  5 us
// Five instrumented iterations; per-layer samples (us), iteration sums:
//   conv   5 10 10 20 20
//   matmul 3 15  6 20 10
//   nms    2  5  4 10 10
//   sum   10 30 20 50 40   -> median 30: iteration 1, durations 10, 15, 5 us
// Copies: H2D median 4 us, D2H median 2 us; whole-model median 28 us.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "modelstat/error.hpp"
#include "modelstat/joined.hpp"
#include "tools/writers/writers.hpp"
#include "test_support.hpp"
#include "tools/writers/writer_checks.hpp"
#include "tools/writers/joined_writers.hpp"

namespace modelstat {
namespace {


// Comma and quote (CSV), '|' (Markdown), backslash and quote (JSON).
const char* const kNastyName = "/blocks.0/attn,\"proj\"|out\\x";

using test::cost_node;

TimingSummary timing(double median, std::vector<double> samples) {
  TimingSummary t;
  t.count = int64_t(samples.size());
  t.median = t.p50 = t.mean = median;
  t.min = *std::min_element(samples.begin(), samples.end());
  t.max = *std::max_element(samples.begin(), samples.end());
  t.p90 = t.p95 = t.p99 = t.max;
  t.median_ci_low = t.min;
  t.median_ci_high = t.max;
  t.stop_reason = "iteration cap";
  t.samples = std::move(samples);
  return t;
}

std::vector<double> micros(std::vector<double> us) {
  for (double& v : us) v *= 1e-6;
  return us;
}

ProfileResult sample_profile() {
  ProfileResult p;
  AnalysisResult& a = p.analysis;
  a.model_path = "models/sample.onnx";
  a.opsets = {{"", 17}};
  a.nodes = {cost_node(0, "/conv1/Conv", "Conv", CostStatus::Exact, 118013952, 236027904, 639744, 3211264),
             cost_node(1, kNastyName, "MatMul", CostStatus::Exact, 1048576, 2097152, 8388608, 4194304),
             cost_node(2, "nms", "NonMaxSuppression", CostStatus::UnknownOp, 0, 0, 0, 0)};
  a.nodes[0].input_shapes = {"1x3x224x224", "64x3x7x7"};
  a.nodes[0].output_shapes = {"1x64x112x112"};
  a.totals.nodes = 3;
  a.totals.nodes_exact = 2;
  a.totals.nodes_unknown_op = 1;
  a.totals.macs = 118013952 + 1048576;
  a.totals.flops = 236027904 + 2097152;

  RunContext& c = p.context;
  c.device_name = "NVIDIA H100 80GB HBM3";
  c.device_kind = "cuda";
  c.torch_version = "2.3.0";
  c.threads = 16;
  c.dtype = "fp32";
  c.batch = 1;
  c.date = "2024-05-01T12:00:00Z";
  c.host = "gpu-node-7";
  c.timer = "cuda events on the execution stream";

  p.whole = timing(28e-6, micros({28, 27, 29, 28}));
  p.layer_sum = timing(30e-6, micros({10, 30, 20, 50, 40}));
  const std::vector<std::vector<double>> samples = {{5, 10, 10, 20, 20}, {3, 15, 6, 20, 10}, {2, 5, 4, 10, 10}};
  const double medians[] = {10e-6, 10e-6, 5e-6};
  for (size_t i = 0; i < 3; ++i) {
    LayerTiming l;
    l.index = int(i);
    l.name = a.nodes[i].name;
    l.op_type = a.nodes[i].op_type;
    l.time = timing(medians[i], micros(samples[i]));
    p.layers.push_back(l);
  }
  p.h2d = timing(4e-6, micros({4, 4, 5}));
  p.h2d_bytes = 602112;
  p.d2h = timing(2e-6, micros({2, 2, 3}));
  p.d2h_bytes = 400;
  p.notices = {"GPU clocks were not locked; expect more variance"};
  return p;
}

DeviceCeilings sample_ceilings() {
  DeviceCeilings c;
  c.device_kind = "cuda";
  c.device_name = "NVIDIA H100 80GB HBM3";
  c.source = "measured";
  c.date = "2024-04-30";
  c.host = "gpu-node-7";
  c.memory_bandwidth = 3e12;
  c.copy_bytes = 1 << 30;
  c.op_overhead_seconds = 3e-6;
  c.matmul = {MatmulCeiling{"fp32", 5e13, 8192, {{1024, 3e13}, {8192, 5e13}}},
              MatmulCeiling{"fp16", 7e14, 8192, {}}};
  return c;
}

JoinedReport sample_report() { return join_profile(sample_profile(), sample_ceilings()); }

// Grouped by a regex that only "/conv1/Conv" matches: "/conv1/" (node 0) and
// "(other)" (the MatMul, exact, and nms, no cost rule: a partly known group).
JoinedReport grouped_report() {
  ProfileResult p = sample_profile();
  apply_grouping(p, GroupRule::parse("re:^/conv1/"));
  return join_profile(std::move(p), sample_ceilings());
}

// The sample with control flow: /conv1/Conv, then Loop_2, whose body holds
// MatMul_1 and If_2; the analysis counted the If's then branch (Relu_1), the
// profile's subgraph pass also saw its else branch (Neg_1) run.
//   Loop_2/body/MatMul_1   8,000,000 FLOPs  400,000 B  median 20 us  I = 20   compute  4 calls
//   Loop_2/body/If_2       (0 FLOPs, 0 B)              median  4 us           none     4 calls
//   .../then_branch/Relu_1      4,000 FLOPs   32,000 B  median  2 us  I = 0.125 memory 3 calls
//   .../else_branch/Neg_1  (no analysis row)            median  1 us                    1 call
JoinedReport subgraph_report() {
  ProfileResult p = sample_profile();
  p.analysis.nodes.resize(1);
  p.analysis.nodes.push_back(
      cost_node(1, "Loop_2", "Loop", CostStatus::Exact, 4000000, 8004000, 400000, 32000));
  p.analysis.nodes[1].subgraph_nodes = 3;
  p.analysis.subgraph_nodes = {
      cost_node(1, "Loop_2/body/MatMul_1", "MatMul", CostStatus::Exact, 4000000, 8000000, 300000, 100000),
      cost_node(1, "Loop_2/body/If_2", "If", CostStatus::Exact, 0, 0, 0, 0),
      cost_node(1, "Loop_2/body/If_2/then_branch/Relu_1", "Relu", CostStatus::Exact, 0, 4000, 16000, 16000)};
  p.analysis.totals.nodes = 5;
  p.analysis.totals.nodes_exact = 5;
  p.analysis.totals.nodes_unknown_op = 0;
  p.analysis.totals.flops = 236027904 + 8004000;
  p.layers.resize(2);
  p.layers[1].name = "Loop_2";
  p.layers[1].op_type = "Loop";
  p.layers[1].time = timing(30e-6, micros({29, 30, 30, 31, 30}));
  p.subgraph_layer_sum = timing(26e-6, micros({26, 25, 27}));
  auto sub = [](const std::string& name, const std::string& op, int depth, double calls, double median_us) {
    return test::subgraph_layer(1, name, op, depth, calls,
                                timing(median_us * 1e-6, micros({median_us, median_us, median_us})));
  };
  p.subgraph_layers = {sub("Loop_2/body/MatMul_1", "MatMul", 1, 4, 20),
                       sub("Loop_2/body/If_2", "If", 1, 4, 4),
                       sub("Loop_2/body/If_2/then_branch/Relu_1", "Relu", 2, 3, 2),
                       sub("Loop_2/body/If_2/else_branch/Neg_1", "Neg", 2, 1, 1)};
  return join_profile(p, sample_ceilings());
}

std::string render(const std::string& format, const JoinedReport& r, const ReportOptions& options = {}) {
  std::ostringstream out;
  make_joined_writer(format)->write(r, options, out);
  return out.str();
}

// A "key   value" line of the terminal table, whatever the key column's width.
bool has_field(const std::string& text, const std::string& key, const std::string& value) {
  for (const std::string& line : lines_of(text)) {
    const size_t k = line.find_first_not_of(' ');
    if (k == std::string::npos || line.compare(k, key.size(), key) != 0) continue;
    const size_t v = line.find_first_not_of(' ', k + key.size());
    if (v != std::string::npos && v >= k + key.size() + 2 && line.substr(v) == value) return true;
  }
  return false;
}

// The row of a terminal table whose cells, split on runs of 2+ spaces, start with `first`.
std::vector<std::string> table_row(const std::string& text, const std::string& first, const std::string& second) {
  for (const std::string& line : lines_of(text)) {
    std::vector<std::string> cells;
    std::string cell;
    for (size_t i = 0; i <= line.size(); ++i) {
      const bool gap = i == line.size() || (line[i] == ' ' && i + 1 < line.size() && line[i + 1] == ' ');
      if (!gap) {
        cell += line[i];
        continue;
      }
      if (!cell.empty() && cell != " ") cells.push_back(cell[0] == ' ' ? cell.substr(1) : cell);
      cell.clear();
    }
    if (cells.size() > 1 && cells[0] == first && cells[1] == second) return cells;
  }
  return {};
}

TEST(JoinedWriterTest, SiRates) {
  EXPECT_EQ(report::si_rate(5e13, "FLOP/s"), "50.0 TFLOP/s");
  EXPECT_EQ(report::si_rate(3e12, "B/s"), "3.00 TB/s");
  EXPECT_EQ(report::si_rate(8.5044662857e12, "FLOP/s"), "8.50 TFLOP/s");
  EXPECT_EQ(report::si_rate(999.7e9, "FLOP/s"), "1.00 TFLOP/s") << "never 1000 G";
  EXPECT_EQ(report::si_rate(123.4, "B/s"), "123 B/s");
  EXPECT_EQ(report::si_rate(0, "B/s"), "-");
  EXPECT_EQ(report::si_rate(NAN, "B/s"), "-");
}

// ---------------------------------------------------------------------- table

TEST(JoinedWriterTest, TableHasHeaderCeilingsWholeModelAndSections) {
  const std::string text = render("table", sample_report());
  EXPECT_EQ(lines_of(text)[0], "modelstat report: models/sample.onnx");
  const std::vector<std::pair<std::string, std::string>> fields = {
      {"model", "models/sample.onnx"},
      {"device", "NVIDIA H100 80GB HBM3 (cuda)"},
      {"threads", "16"},
      {"dtype", "fp32"},
      {"batch", "1"},
      {"source", "measured 2024-04-30 on gpu-node-7"},
      {"peak", "50.0 TFLOP/s (fp32 matmul)"},
      {"memory bandwidth", "3.00 TB/s (bytes read + written, large copy)"},
      {"ridge intensity", "16.7 FLOP/B against the copy (compute-bound at or above it)"},  // 5e13 / 3e12
      {"whole model (median)", "28.0 \xC2\xB5s (clean pass)"},
      {"layer sum", "25.0 \xC2\xB5s (sum of per-node medians, instrumented pass)"},
      {"FLOPs", "238.13 M (238,125,056)"},
      {"achieved", "8.50 TFLOP/s (FLOPs / whole-model median)"},  // 238,125,056 / 28 us
      {"efficiency", "17.0% of the fp32 matmul peak"},  // 8.504e12 / 5e13; no machine roof in these ceilings
  };
  for (const auto& [key, value] : fields) EXPECT_TRUE(has_field(text, key, value)) << key << "  " << value << "\n" << text;
  for (const char* needle : {"Hotspots (top 3 by median time)", "Per-node roofline (3 nodes, graph order)",
                             "By op type (by time)", "convention: ", "roofline: GFLOP/s = FLOPs / median",
                             "note: 1 node(s) have no exact cost",
                             "note: GPU clocks were not locked; expect more variance",
                             "FLOPs coverage: 2/3 nodes exact"})
    EXPECT_TRUE(contains(text, needle)) << "missing: " << needle << "\n" << text;
  EXPECT_FALSE(contains(text, "\x1b[")) << "no colour unless asked";

  // Per-node rows: # node op MACs FLOPs bytes median %time %FLOPs GFLOP/s GB/s FLOP/B bound eff.
  const auto conv = table_row(text, "0", "/conv1/Conv");
  ASSERT_EQ(conv.size(), 14u) << text;
  EXPECT_EQ(conv[4], "236.03 M");
  EXPECT_EQ(conv[5], "3.67 MiB");            // 3,851,008 B
  EXPECT_EQ(conv[6], "10.0 \xC2\xB5s");
  EXPECT_EQ(conv[7], "40.0%");               // 10 / 25
  EXPECT_EQ(conv[8], "99.1%");               // 236,027,904 / 238,125,056
  EXPECT_EQ(conv[9], "23,603");              // 236,027,904 / 10 us / 1e9
  EXPECT_EQ(conv[10], "385");                // 3,851,008 / 10 us / 1e9
  EXPECT_EQ(conv[11], "61.3");               // 236,027,904 / 3,851,008
  EXPECT_EQ(conv[12], "compute");
  EXPECT_EQ(conv[13], "47.2%");              // 2.36e13 / 5e13
  const auto nms = table_row(text, "2", "nms");
  ASSERT_EQ(nms.size(), 14u);
  EXPECT_EQ(nms[4], "unknown") << "an unknown op's FLOPs are unknown, not 0";
  EXPECT_EQ(nms[7], "20.0%");
  EXPECT_EQ(nms[9], "-");
  EXPECT_EQ(nms[12], "-");
  EXPECT_EQ(nms[13], "-");
  // Hotspot rank 3 is nms (5 us); ranks 1 and 2 tie at 10 us and keep graph order.
  const auto first = table_row(text, "1", "0");
  ASSERT_EQ(first.size(), 15u);
  EXPECT_EQ(first[2], "/conv1/Conv");
  const auto matmul = table_row(text, "2", "1");
  ASSERT_EQ(matmul.size(), 15u);
  EXPECT_EQ(matmul[13], "memory");
  EXPECT_EQ(matmul[14], "41.9%");            // 12,582,912 / 10 us / 3e12
}

TEST(JoinedWriterTest, HumanFormatsHonourOptions) {
  const JoinedReport r = sample_report();
  test::expect_human_formats_honour_options(
      [&](const std::string& format, const ReportOptions& o) { return render(format, r, o); }, "Per-node roofline",
      "By op type");
  ReportOptions options;
  options.top = 99;
  EXPECT_TRUE(contains(render("table", r, options), "Hotspots (top 3 by median time)"));
}

TEST(JoinedWriterTest, DatasheetCeilingsAreLabelled) {
  DeviceCeilings c = sample_ceilings();
  c.source = "datasheet: h100-sxm";
  const std::string text = render("table", join_profile(sample_profile(), c));
  EXPECT_TRUE(has_field(text, "source", "datasheet: h100-sxm (vendor figures, not measured on this device)")) << text;
}

// ------------------------------------------------------------------- Markdown

TEST(JoinedWriterTest, MarkdownTablesHaveConsistentColumns) {
  // Tables: context, ceilings, whole model, hotspots, per-node, by op type.
  const auto lines = test::expect_markdown_report(
      render("md", sample_report()), 6,
      {"## Context", "## Roofline ceilings", "## Whole model", "## Hotspots (top 3", "## Per-node roofline (3 nodes",
       "## By op type", "## Notices", "| ridge intensity | 16.7 FLOP/B", "attn,\"proj\"\\|out", "- note: GPU clocks"});
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "# modelstat report: models/sample.onnx");
}

// ------------------------------------------------------------------------ CSV

TEST(JoinedWriterTest, CsvHasEveryNodeWithExactFigures) {
  ReportOptions options;
  options.show_all_nodes = false;  // CSV keeps every node regardless
  options.top = 1;
  const auto records = parse_csv(render("csv", sample_report(), options));
  const std::vector<std::string> header = {"index",
                                           "name",
                                           "op_type",
                                           "cost_status",
                                           "macs",
                                           "flops",
                                           "bytes",
                                           "median_s",
                                           "share_of_time",
                                           "share_of_flops",
                                           "achieved_flops_per_s",
                                           "achieved_bytes_per_s",
                                           "arithmetic_intensity",
                                           "bound",
                                           "attainable_flops_per_s",
                                           "efficiency",
                                           "upcast_to_fp32",
                                           "depth",
                                           "calls_per_run"};
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[0], header);
  for (const auto& record : records) EXPECT_EQ(record.size(), header.size());
  const auto& conv = records[1];
  EXPECT_EQ(conv[5], "236027904");
  EXPECT_EQ(conv[6], "3851008");
  EXPECT_DOUBLE_EQ(std::stod(conv[7]), 10e-6);
  EXPECT_DOUBLE_EQ(std::stod(conv[8]), 10.0 / 25.0);
  EXPECT_DOUBLE_EQ(std::stod(conv[10]), 236027904 / 10e-6);
  EXPECT_DOUBLE_EQ(std::stod(conv[12]), 236027904.0 / 3851008.0);
  EXPECT_EQ(conv[13], "compute");
  EXPECT_DOUBLE_EQ(std::stod(conv[14]), 5e13);  // min(peak, bandwidth x 61.3)
  EXPECT_DOUBLE_EQ(std::stod(conv[15]), 236027904 / 10e-6 / 5e13);
  const auto& matmul = records[2];
  EXPECT_EQ(matmul[1], kNastyName);
  EXPECT_EQ(matmul[13], "memory");
  EXPECT_DOUBLE_EQ(std::stod(matmul[14]), 3e12 * (2097152.0 / 12582912.0));
  EXPECT_DOUBLE_EQ(std::stod(matmul[15]), 12582912 / 10e-6 / 3e12);
  const auto& nms = records[3];
  EXPECT_EQ(nms[3], "unknown_op");
  for (size_t i : {4, 5, 6, 9, 10, 11, 12, 13, 14, 15}) EXPECT_EQ(nms[i], "") << "unknown, not 0: " << header[i];
  EXPECT_DOUBLE_EQ(std::stod(nms[8]), 5.0 / 25.0) << "its time still has a share";
  for (size_t i = 1; i < records.size(); ++i) EXPECT_EQ(records[i][16], "0") << "no node ran upcast";
}

// A node that ran in fp32 for want of an fp16/bf16 kernel (the profile's
// LayerTiming::upcast_to_fp32) is marked in every format that has node rows,
// and only that node: "MatMul^" with the legend in the human tables, ^fp32 in
// HTML, true / 1 in JSON, CSV and the trace.
TEST(JoinedWriterTest, UpcastNodeIsMarkedInEveryFormat) {
  ProfileResult p = sample_profile();
  p.layers[1].upcast_to_fp32 = true;  // the MatMul
  const JoinedReport r = join_profile(std::move(p), sample_ceilings());
  ASSERT_TRUE(r.nodes[1].upcast_to_fp32);
  ReportOptions options;
  options.top = 3;
  for (const char* format : {"table", "md"}) {
    const std::string text = render(format, r, options);
    EXPECT_TRUE(contains(text, "MatMul^")) << format << "\n" << text;
    EXPECT_FALSE(contains(text, "Conv^")) << format;
    EXPECT_TRUE(contains(text, "^ ran in fp32: no kernel for its fp16/bf16 dtype")) << format << "\n" << text;
    EXPECT_TRUE(contains(render(format, sample_report(), options), "MatMul ")) << format;
    EXPECT_FALSE(contains(render(format, sample_report(), options), "^ ran in fp32")) << format;
  }
  const std::vector<std::string> html = lines_of(render("html", r, options));
  EXPECT_EQ(std::count_if(html.begin(), html.end(),
                          [](const std::string& l) { return contains(l, ">^fp32</span>"); }),
            2)
      << "the hotspot row and the layer row";
  const json doc = json::parse(render("json", r, options));
  EXPECT_FALSE(doc["nodes"][0]["upcast_to_fp32"].get<bool>());
  EXPECT_TRUE(doc["nodes"][1]["upcast_to_fp32"].get<bool>());
  EXPECT_TRUE(doc["profile"]["layers"][1]["upcast_to_fp32"].get<bool>());
  const auto csv = parse_csv(render("csv", r, options));
  EXPECT_EQ(csv[2][16], "1");
  EXPECT_EQ(csv[1][16], "0");
  const json trace = json::parse(render("trace", r, options));
  int flagged = 0;
  for (const auto& e : trace["traceEvents"])
    if (e.contains("args") && e["args"].contains("upcast_to_fp32")) {
      ++flagged;
      EXPECT_EQ(e["cat"], "MatMul");
    }
  EXPECT_EQ(flagged, 1);
}

// ----------------------------------------------------------------------- JSON

TEST(JoinedWriterTest, JsonHasEveryFieldInOrder) {
  ReportOptions options;
  options.top = 2;
  const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(render("json", sample_report(), options));
  std::vector<std::string> keys;
  for (const auto& item : doc.items()) keys.push_back(item.key());
  EXPECT_EQ(keys,
            (std::vector<std::string>{"schema_version", "tool", "kind", "cost_convention", "context",
                                      "ceilings", "roofline", "whole", "hotspots", "nodes", "subgraph_nodes",
                                      "group_by", "groups", "by_op_type", "notices", "profile"}));
  EXPECT_EQ(doc["schema_version"], kJoinedJsonSchemaVersion);
  EXPECT_EQ(doc["kind"], "report");
  EXPECT_EQ(doc["context"]["model"], "models/sample.onnx");
  EXPECT_EQ(doc["ceilings"]["source"], "measured");
  // One key set: the report's ceilings are the saved file's object, less its version.
  nlohmann::ordered_json file = nlohmann::ordered_json::parse(ceilings_to_json(sample_ceilings()));
  file.erase("schema_version");
  EXPECT_EQ(doc["ceilings"], file);
  EXPECT_EQ(doc["ceilings"]["matmul"][0]["curve"].size(), 2u);
  EXPECT_DOUBLE_EQ(doc["roofline"]["peak_flops_per_s"].get<double>(), 5e13);
  EXPECT_DOUBLE_EQ(doc["roofline"]["ridge_flops_per_byte"].get<double>(), 5e13 / 3e12);
  EXPECT_DOUBLE_EQ(doc["whole"]["achieved_flops_per_s"].get<double>(), 238125056 / 28e-6);
  EXPECT_DOUBLE_EQ(doc["whole"]["layer_sum_s"].get<double>(), 25e-6);
  EXPECT_EQ(doc["whole"]["flops"].get<int64_t>(), 238125056);
  EXPECT_EQ(doc["hotspots"], nlohmann::ordered_json::array({0, 1}));
  ASSERT_EQ(doc["nodes"].size(), 3u);
  EXPECT_EQ(doc["nodes"][1]["name"], kNastyName);
  EXPECT_EQ(doc["nodes"][1]["bound"], "memory");
  EXPECT_TRUE(doc["nodes"][2]["flops"].is_null()) << "unknown op: null, not 0";
  EXPECT_TRUE(doc["nodes"][2]["efficiency"].is_null());
  EXPECT_EQ(doc["nodes"][2]["bound"], "none");
  ASSERT_EQ(doc["by_op_type"].size(), 3u);
  EXPECT_EQ(doc["by_op_type"][2]["op_type"], "NonMaxSuppression");
  EXPECT_EQ(doc["by_op_type"][2]["nodes_not_exact"], 1);
  EXPECT_TRUE(doc["by_op_type"][2]["achieved_flops_per_s"].is_null());
  bool says_no_exact_cost = false;
  for (const auto& notice : doc["notices"])
    says_no_exact_cost = says_no_exact_cost || notice.get<std::string>().find("no exact cost") != std::string::npos;
  EXPECT_TRUE(says_no_exact_cost) << doc["notices"].dump();
}

TEST(JoinedWriterTest, JsonNestsTheProfileDocumentExactly) {
  const JoinedReport r = sample_report();
  ReportOptions options;
  options.top = 2;
  std::ostringstream profile;
  make_profile_writer("json")->write(r.profile, options, profile);
  const std::string text = render("json", r, options);
  EXPECT_EQ(json::parse(text)["profile"], json::parse(profile.str()));
  // Byte for byte, once the nesting's two-space indent is taken off.
  const size_t at = text.find("\n  \"profile\": ");
  ASSERT_NE(at, std::string::npos);
  std::string nested = text.substr(at + std::string("\n  \"profile\": ").size());
  nested = nested.substr(0, nested.rfind("\n}"));
  std::string unindented;
  for (const std::string& line : lines_of(nested)) {
    if (!unindented.empty()) {
      EXPECT_EQ(line.rfind("  ", 0), 0u) << line;
    }
    unindented += (unindented.empty() ? line : line.substr(2)) + "\n";
  }
  EXPECT_EQ(unindented, profile.str());
}

TEST(JoinedWriterTest, JsonValidatesAgainstSchemas) {
  const json report_schema = test::load_source_json("docs/report.schema.json");
  const json profile_schema = test::load_source_json("docs/profile.schema.json");
  DeviceCeilings sheet = sample_ceilings();
  sheet.source = "datasheet: h100-sxm";
  sheet.matmul[0].curve.clear();
  ProfileResult cpu = sample_profile();
  cpu.context.device_kind = "cpu";
  cpu.h2d = cpu.d2h = TimingSummary{};
  DeviceCeilings cpu_ceilings = sample_ceilings();
  cpu_ceilings.device_kind = "cpu";
  for (const JoinedReport& r : {sample_report(), grouped_report(), join_profile(sample_profile(), sheet),
                                join_profile(cpu, cpu_ceilings)}) {
    const json doc = json::parse(render("json", r));
    std::vector<std::string> errors = SchemaValidator().validate(report_schema, doc);
    EXPECT_TRUE(errors.empty()) << ::testing::PrintToString(errors);
    errors = SchemaValidator().validate(profile_schema, doc["profile"]);
    EXPECT_TRUE(errors.empty()) << ::testing::PrintToString(errors);
  }
}

// fit's forecast beside the measurement (join_forecast): node 0 forecast at
// 12 us against its 10 us median (1.20x), node 1 at 5 us against 10 us
// (0.50x); node 2's forecast row names another node, so it gets none. The
// whole model: 35 us forecast against the 28 us median, +25.0%.
JoinedReport forecast_report() {
  JoinedReport r = sample_report();
  FitReport f;
  f.latency.forward_seconds = 35e-6;
  NodeForecast a, b, c;
  a.index = 0, a.name = "/conv1/Conv", a.forward_seconds = 12e-6;
  b.index = 1, b.name = kNastyName, b.forward_seconds = 5e-6;
  c.index = 2, c.name = "not_nms", c.forward_seconds = 1e-6;
  f.nodes = {a, b, c};
  join_forecast(r, f);
  return r;
}

TEST(JoinedWriterTest, TheForecastSitsBesideTheMeasurementInEveryFormat) {
  const JoinedReport r = forecast_report();
  ASSERT_TRUE(r.forecast_seconds && r.forecast_error);
  EXPECT_NEAR(*r.forecast_error, 0.25, 1e-12);
  EXPECT_FALSE(r.nodes[2].forecast_seconds) << "a forecast row of another name is not joined";

  const json doc = json::parse(render("json", r));
  EXPECT_EQ(doc["schema_version"], "2.6");
  EXPECT_DOUBLE_EQ(doc["whole"]["forecast_s"].get<double>(), 35e-6);
  EXPECT_NEAR(doc["whole"]["forecast_error"].get<double>(), 0.25, 1e-12);
  EXPECT_DOUBLE_EQ(doc["nodes"][0]["forecast_s"].get<double>(), 12e-6);
  EXPECT_FALSE(doc["nodes"][2].contains("forecast_s"));
  const std::vector<std::string> errors =
      SchemaValidator().validate(test::load_source_json("docs/report.schema.json"), doc);
  EXPECT_TRUE(errors.empty()) << ::testing::PrintToString(errors);

  const std::string table = render("table", r);
  EXPECT_NE(table.find("fc/meas"), std::string::npos) << table;
  EXPECT_NE(table.find("1.20x"), std::string::npos) << table;
  EXPECT_NE(table.find("0.50x"), std::string::npos) << table;
  EXPECT_NE(table.find("+25.0% vs the whole-model median"), std::string::npos) << table;

  const auto records = parse_csv(render("csv", r));
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[0].back(), "forecast_s");
  EXPECT_DOUBLE_EQ(std::stod(records[1].back()), 12e-6);
  EXPECT_EQ(records[3].back(), "");

  const std::string html = render("html", r);
  EXPECT_NE(html.find("Forecast (fit)"), std::string::npos);
  EXPECT_NE(html.find("<th>fc/meas</th>"), std::string::npos);

  // Without a forecast, no forecast column anywhere (older documents read back the same).
  const std::string plain = render("table", sample_report());
  EXPECT_EQ(plain.find("fc/meas"), std::string::npos);
  EXPECT_EQ(parse_csv(render("csv", sample_report()))[0].back(), "calls_per_run");
}

TEST(JoinedWriterTest, AReportWithoutAForecastSaysWhy) {
  JoinedReport r = sample_report();
  r.forecast_note = "no forecast: the ceilings have no fp32 matmul figure";
  const json doc = json::parse(render("json", r));
  EXPECT_EQ(doc["whole"]["forecast_note"], r.forecast_note);
  EXPECT_FALSE(doc["whole"].contains("forecast_s"));
  EXPECT_NE(render("table", r).find("no forecast: the ceilings have no fp32 matmul figure"), std::string::npos);
}

TEST(JoinedWriterTest, SchemaRejectsBrokenReports) {
  const json schema = test::load_source_json("docs/report.schema.json");
  SchemaValidator validator;
  const json good = json::parse(render("json", sample_report()));
  ASSERT_TRUE(validator.validate(schema, good).empty());
  json missing = good;
  missing["nodes"][0].erase("efficiency");
  EXPECT_FALSE(validator.validate(schema, missing).empty());
  json bad_bound = good;
  bad_bound["nodes"][0]["bound"] = "latency";
  EXPECT_FALSE(validator.validate(schema, bad_bound).empty());
  json share = good;
  share["nodes"][0]["share_of_time"] = 1.5;
  EXPECT_FALSE(validator.validate(schema, share).empty());
  json extra = good;
  extra["roofline"]["undocumented"] = 1;
  EXPECT_FALSE(validator.validate(schema, extra).empty());
  json not_profile = good;
  not_profile["profile"]["kind"] = "analysis";
  EXPECT_FALSE(validator.validate(schema, not_profile).empty());
}

// ---------------------------------------------------------------------- trace

// Parses a trace and checks what every viewer needs: the object form, each
// event's required keys by phase, and no two complete events overlapping on
// one track. Returns the complete events by tid.
std::map<int, std::vector<json>> check_trace(const std::string& text) {
  const json doc = json::parse(text);
  EXPECT_TRUE(doc.is_object());
  EXPECT_TRUE(doc["traceEvents"].is_array());
  EXPECT_TRUE(doc["displayTimeUnit"] == "ms" || doc["displayTimeUnit"] == "ns");
  std::map<int, std::vector<json>> tracks;
  for (const json& e : doc["traceEvents"]) {
    for (const char* key : {"name", "ph", "pid", "tid"}) EXPECT_TRUE(e.contains(key)) << key << " in " << e.dump();
    EXPECT_TRUE(e["name"].is_string());
    if (e["ph"] == "M") {
      EXPECT_TRUE(e["args"].is_object()) << e.dump();
      continue;
    }
    EXPECT_EQ(e["ph"], "X") << e.dump();
    for (const char* key : {"ts", "dur", "cat", "args"}) EXPECT_TRUE(e.contains(key)) << key << " in " << e.dump();
    EXPECT_GE(e["ts"].get<double>(), 0.0);
    EXPECT_GE(e["dur"].get<double>(), 0.0);
    tracks[e["tid"].get<int>()].push_back(e);
  }
  for (auto& [tid, events] : tracks) {
    std::sort(events.begin(), events.end(),
              [](const json& a, const json& b) { return a["ts"].get<double>() < b["ts"].get<double>(); });
    for (size_t i = 1; i < events.size(); ++i)
      EXPECT_GE(events[i]["ts"].get<double>(), events[i - 1]["ts"].get<double>() + events[i - 1]["dur"].get<double>())
          << "overlap on track " << tid << ": " << events[i].dump();
  }
  return tracks;
}

TEST(JoinedWriterTest, TraceDrawsTheMedianIterationBackToBack) {
  const std::string text = render("trace", sample_report());
  auto tracks = check_trace(text);
  const json doc = json::parse(text);
  EXPECT_EQ(doc["otherData"]["iteration"], 1);
  EXPECT_EQ(doc["otherData"]["iterations"], 5);

  // Nodes: iteration 1 is 10 + 15 + 5 = 30 us, after the 4 us H2D.
  const std::vector<json>& nodes = tracks[1];
  ASSERT_EQ(nodes.size(), 3u);
  const double expected_ts[] = {4, 14, 29}, expected_dur[] = {10, 15, 5};
  double sum = 0;
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(nodes[i]["ts"].get<double>(), expected_ts[i], 1e-9) << nodes[i].dump();
    EXPECT_NEAR(nodes[i]["dur"].get<double>(), expected_dur[i], 1e-9);
    sum += nodes[i]["dur"].get<double>();
  }
  EXPECT_NEAR(sum, 30.0, 1e-9) << "durations add up to the drawn iteration's layer sum";
  EXPECT_NEAR(doc["otherData"]["iteration_layer_sum_us"].get<double>(), 30.0, 1e-9);
  EXPECT_EQ(nodes[0]["name"], "/conv1/Conv");
  EXPECT_EQ(nodes[0]["cat"], "Conv");
  EXPECT_EQ(nodes[0]["args"]["op_type"], "Conv");
  EXPECT_EQ(nodes[0]["args"]["flops"].get<int64_t>(), 236027904);
  EXPECT_EQ(nodes[0]["args"]["bytes"].get<int64_t>(), 3851008);
  EXPECT_EQ(nodes[0]["args"]["input_shapes"], "1x3x224x224, 64x3x7x7");
  EXPECT_EQ(nodes[0]["args"]["output_shapes"], "1x64x112x112");
  EXPECT_EQ(nodes[0]["args"]["bound"], "compute");
  EXPECT_NEAR(nodes[0]["args"]["share_of_time"].get<double>(), 0.4, 1e-12);
  EXPECT_EQ(nodes[1]["name"], kNastyName);
  EXPECT_TRUE(nodes[2]["args"]["flops"].is_null());

  // Copies on their own track: H2D before the nodes, D2H after.
  const std::vector<json>& copies = tracks[2];
  ASSERT_EQ(copies.size(), 2u);
  EXPECT_EQ(copies[0]["name"], "H2D (inputs)");
  EXPECT_NEAR(copies[0]["ts"].get<double>(), 0.0, 1e-12);
  EXPECT_NEAR(copies[0]["dur"].get<double>(), 4.0, 1e-9);
  EXPECT_EQ(copies[1]["name"], "D2H (outputs)");
  EXPECT_NEAR(copies[1]["ts"].get<double>(), 34.0, 1e-9);
  EXPECT_NEAR(copies[1]["dur"].get<double>(), 2.0, 1e-9);
  // The clean whole-model median beside them.
  ASSERT_EQ(tracks[3].size(), 1u);
  EXPECT_NEAR(tracks[3][0]["dur"].get<double>(), 28.0, 1e-9);

  // Metadata names the process (the device) and every track used.
  std::map<int, std::string> thread_names;
  std::string process;
  for (const json& e : doc["traceEvents"]) {
    if (e["name"] == "process_name") process = e["args"]["name"];
    if (e["name"] == "thread_name") thread_names[e["tid"].get<int>()] = e["args"]["name"];
  }
  EXPECT_EQ(process, "NVIDIA H100 80GB HBM3 (cuda)");
  for (int tid : {1, 2, 3}) EXPECT_TRUE(thread_names.count(tid)) << tid;
  EXPECT_TRUE(contains(thread_names[1], "iteration 1 of 5"));
}

TEST(JoinedWriterTest, TraceOnTheCpuStartsAtZeroWithoutCopies) {
  ProfileResult cpu = sample_profile();
  cpu.context.device_kind = "cpu";
  cpu.h2d = cpu.d2h = TimingSummary{};
  DeviceCeilings c = sample_ceilings();
  c.device_kind = "cpu";
  auto tracks = check_trace(render("trace", join_profile(cpu, c)));
  EXPECT_FALSE(tracks.count(2)) << "no copy track when no copy was measured";
  ASSERT_EQ(tracks[1].size(), 3u);
  EXPECT_EQ(tracks[1][0]["ts"].get<double>(), 0.0);
  EXPECT_NEAR(tracks[1][2]["ts"].get<double>() + tracks[1][2]["dur"].get<double>(), 30.0, 1e-9);
}

TEST(JoinedWriterTest, MedianIterationRule) {
  ProfileResult p = sample_profile();
  EXPECT_EQ(report::median_iteration(p).index, 1u);
  EXPECT_EQ(report::median_iteration(p).count, 5u);
  // Four iterations, sums 10, 30, 20, 50: the lower median (20) is iteration 2.
  for (LayerTiming& l : p.layers) l.time.samples.pop_back();
  EXPECT_EQ(report::median_iteration(p).index, 2u);
  EXPECT_EQ(report::median_iteration(p).count, 4u);
  // A layer with fewer samples limits the iterations every layer has.
  p.layers[1].time.samples.resize(2);  // sums 10, 30 -> lower median 10: iteration 0
  EXPECT_EQ(report::median_iteration(p).index, 0u);
  EXPECT_EQ(report::median_iteration(p).count, 2u);
  for (LayerTiming& l : p.layers) l.time.samples.clear();
  test::expect_error([&] { report::median_iteration(p); }, ErrorKind::Usage);
}

TEST(JoinedWriterTest, ANodeWithoutSamplesIsShownAsNotMeasured) {
  ProfileResult p = sample_profile();
  p.layers[1].time = TimingSummary{};  // the MatMul: no samples, median 0
  const JoinedReport r = join_profile(std::move(p), sample_ceilings());
  const json doc = json::parse(render("json", r));
  const json& matmul = doc["nodes"][1];
  for (const char* key : {"median_s", "share_of_time", "achieved_flops_per_s", "efficiency"})
    EXPECT_TRUE(matmul[key].is_null()) << key << ": not measured is null, not 0";
  EXPECT_EQ(matmul["flops"].get<int64_t>(), 2097152) << "its cost is still known";
  EXPECT_TRUE(SchemaValidator().validate(test::load_source_json("docs/report.schema.json"), doc).empty());
  EXPECT_EQ(table_row(render("table", r), "1", kNastyName).at(6), "-");
  // The trace draws the nodes that have samples: 10 + 5 us in iteration 1 (sums 7, 15, 14, 30, 30).
  auto tracks = check_trace(render("trace", r));
  ASSERT_EQ(tracks[1].size(), 2u);
  EXPECT_NEAR(tracks[1][1]["ts"].get<double>() + tracks[1][1]["dur"].get<double>(), 4 + 15.0, 1e-9);
}

// ----------------------------------------------------------- subgraph nodes

// The nodes inside subgraphs follow their parent in every format with node
// rows, indented, with their calls per run, joined with the analysis's
// subgraph rows by name; they are neither hotspots nor in the op-type sums.
TEST(JoinedWriterTest, SubgraphNodesFollowTheirParentInEveryFormat) {
  const JoinedReport r = subgraph_report();
  const std::vector<std::string> order = {"/conv1/Conv",
                                          "Loop_2",
                                          "Loop_2/body/MatMul_1",
                                          "Loop_2/body/If_2",
                                          "Loop_2/body/If_2/then_branch/Relu_1",
                                          "Loop_2/body/If_2/else_branch/Neg_1"};
  // Table and Markdown: the per-node table, in this order, indented.
  // (The terminal shortens the deepest names: their ends say enough.)
  const std::vector<std::string> ends = {"/conv1/Conv", "Loop_2",        "body/MatMul_1",
                                         "body/If_2",   "branch/Relu_1", "branch/Neg_1"};
  for (const char* format : {"table", "md"}) {
    SCOPED_TRACE(format);
    const std::string text = render(format, r);
    const std::string nodes = text.substr(text.find("Per-node roofline"));
    size_t at = 0;
    for (const std::string& name : ends) {
      const size_t next = nodes.find(name, at);
      ASSERT_NE(next, std::string::npos) << name << "\n" << nodes;
      at = next + name.size();
    }
    EXPECT_TRUE(contains(nodes, "4 subgraph nodes that ran"));
    EXPECT_TRUE(contains(nodes, "calls"));
  }
  const std::string md = render("md", r);
  expect_well_formed_md_tables(lines_of(md));
  EXPECT_TRUE(contains(md, "| &nbsp;&nbsp;&nbsp;&nbsp;Loop_2/body/If_2/then_branch/Relu_1 |"));
  const std::string table = render("table", r);
  for (const std::string& line : lines_of(table.substr(0, table.find("Per-node roofline"))))
    EXPECT_FALSE(contains(line, "/body/")) << "a subgraph node among the hotspots: " << line;
  for (const std::string& line : lines_of(table.substr(table.find("By op type"))))
    EXPECT_FALSE(contains(line, "MatMul")) << "a subgraph node in the op-type sums: " << line;

  // CSV: rows in the same order, with depth and calls per run.
  const auto csv = parse_csv(render("csv", r));
  ASSERT_EQ(csv.size(), 1 + order.size());
  for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(csv[i + 1][1], order[i]);
  const auto& matmul = csv[3];
  EXPECT_EQ(matmul[0], "1");
  EXPECT_EQ(matmul[5], "8000000");
  EXPECT_DOUBLE_EQ(std::stod(matmul[10]), 8000000 / 20e-6);
  EXPECT_EQ(matmul[13], "compute");  // 20 FLOP/B, above the ridge
  EXPECT_EQ(matmul[17], "1");
  EXPECT_EQ(matmul[18], "4");
  const auto& relu = csv[5];
  EXPECT_EQ(relu[13], "memory");
  EXPECT_DOUBLE_EQ(std::stod(relu[15]), 32000 / 2e-6 / 3e12);
  EXPECT_EQ(relu[17], "2");
  EXPECT_EQ(relu[18], "3");
  EXPECT_EQ(csv[6][3], "unknown_op") << "no analysis row for the else branch's Neg";
  EXPECT_EQ(csv[6][5], "");

  // JSON: subgraph_nodes, after nodes; valid against both schemas.
  const json doc = json::parse(render("json", r));
  EXPECT_TRUE(SchemaValidator().validate(test::load_source_json("docs/report.schema.json"), doc).empty());
  EXPECT_TRUE(
      SchemaValidator().validate(test::load_source_json("docs/profile.schema.json"), doc["profile"]).empty());
  ASSERT_EQ(doc["subgraph_nodes"].size(), 4u);
  EXPECT_EQ(doc["subgraph_nodes"][0]["name"], "Loop_2/body/MatMul_1");
  EXPECT_EQ(doc["subgraph_nodes"][0]["depth"], 1);
  EXPECT_EQ(doc["subgraph_nodes"][0]["calls_per_run"].get<double>(), 4.0);
  EXPECT_EQ(doc["subgraph_nodes"][0]["flops"], 8000000);
  EXPECT_EQ(doc["subgraph_nodes"][2]["depth"], 2);
  EXPECT_TRUE(doc["subgraph_nodes"][3]["flops"].is_null());
  EXPECT_FALSE(doc["nodes"][1].contains("depth")) << "a top-level node has no subgraph fields";
  EXPECT_EQ(doc["hotspots"].size(), 2u);
  bool said = false;
  for (const auto& n : doc["notices"])
    said = said || contains(n.get<std::string>(), "1 subgraph node(s) ran that");
  EXPECT_TRUE(said) << doc["notices"].dump();

  // HTML: the rows under their parent, indented by depth, with a calls column.
  const std::string html = render("html", r);
  EXPECT_TRUE(contains(html, "<th>calls</th>"));
  EXPECT_TRUE(contains(html, "padding-left:1em\" title=\"Loop_2/body/MatMul_1\""));
  EXPECT_TRUE(contains(html, "padding-left:2em\" title=\"Loop_2/body/If_2/then_branch/Relu_1\""));
  EXPECT_LT(html.find("title=\"Loop_2\""), html.find("title=\"Loop_2/body/MatMul_1\""));
  EXPECT_FALSE(contains(render("html", sample_report()), "<th>calls</th>"));
}

// Medians 10, 10 and 5 us (sum 25 us); FLOPs 236,027,904, 2,097,152 and
// unknown; bytes 3,851,008, 12,582,912 and unknown.
TEST(JoinedWriterTest, GroupRowsStandInForTheNodeRows) {
  const JoinedReport r = grouped_report();
  for (const char* format : {"table", "md"}) {
    SCOPED_TRACE(format);
    const std::string text = render(format, r);
    EXPECT_TRUE(contains(text, "Per-group roofline (--group-by re:^/conv1/: 2 groups of 3 nodes"));
    EXPECT_FALSE(contains(text, "Per-node roofline"));
  }
  const std::vector<std::string> other = table_row(render("table", r), "(other)", "1");
  ASSERT_FALSE(other.empty());
  EXPECT_EQ(other.at(2), "2");        // nodes
  EXPECT_EQ(other.at(3), "2.10 M?");  // the MatMul's FLOPs; nms unknown: a lower bound

  const auto csv = parse_csv(render("csv", r));
  ASSERT_EQ(csv.size(), 3u);
  EXPECT_EQ(csv[0], (std::vector<std::string>{"group", "first_index", "count", "nodes_not_exact", "macs",
                                              "flops", "bytes", "time_s", "share_of_time", "share_of_flops",
                                              "achieved_flops_per_s", "achieved_bytes_per_s"}));
  EXPECT_EQ(csv[1][0], "/conv1/");
  EXPECT_EQ(csv[1][5], "236027904");
  EXPECT_DOUBLE_EQ(std::stod(csv[1][8]), 10.0 / 25.0);
  EXPECT_DOUBLE_EQ(std::stod(csv[1][10]), 236027904 / 10e-6);
  EXPECT_EQ(csv[2][0], "(other)");
  EXPECT_EQ(csv[2][2], "2");
  EXPECT_EQ(csv[2][3], "1");
  EXPECT_EQ(csv[2][6], "12582912");
  EXPECT_DOUBLE_EQ(std::stod(csv[2][7]), 15e-6);
  EXPECT_DOUBLE_EQ(std::stod(csv[2][11]), 12582912 / 15e-6);

  const json doc = json::parse(render("json", r));
  EXPECT_EQ(doc["group_by"], "re:^/conv1/");
  ASSERT_EQ(doc["groups"].size(), 2u);
  EXPECT_EQ(doc["groups"][1]["count"], 2);
  EXPECT_DOUBLE_EQ(doc["groups"][1]["share_of_time"].get<double>(), 15.0 / 25.0);
  EXPECT_EQ(doc["nodes"].size(), 3u);
  EXPECT_EQ(doc["profile"]["groups"].size(), 2u);  // the profile document's own

  // HTML: a group table beside every layer's; the trace stays per node.
  const std::string html = render("html", r);
  EXPECT_TRUE(contains(html, "<section id=\"groups\">"));
  EXPECT_TRUE(contains(html, "<a href=\"#groups\">"));
  EXPECT_TRUE(contains(html, "<section id=\"layers\">"));
  EXPECT_FALSE(contains(render("html", sample_report()), "id=\"groups\""));
  EXPECT_EQ(render("trace", r), render("trace", sample_report()));
}

// The whole output of every format for the sample report (what
// DISABLED_PrintSampleJoinedReports printed to eyeball): a change shows as a
// diff of tests/data/golden/joined.*. The run's and the ceilings' dates and
// hosts and the LibTorch version are normalised away.
TEST(WritersGolden, JoinedEveryFormat) {
  test::expect_golden_formats("joined", {"table", "json", "csv", "md", "html", "trace"},
                              [&](const std::string& format) { return render(format, sample_report()); },
                              {"gpu-node-7", "2.3.0"});
}

// The page as what --group-by changes in the ungrouped one (joined.html).
TEST(WritersGolden, JoinedGroupedEveryFormat) {
  test::expect_golden_formats("joined-groups", {"table", "json", "csv", "md"},
                              [&](const std::string& format) { return render(format, grouped_report()); },
                              {"gpu-node-7", "2.3.0"});
  test::expect_golden_variant("joined-groups.html.diff", render("html", grouped_report()),
                              render("html", sample_report()), {"gpu-node-7", "2.3.0"});
}

TEST(WritersGolden, JoinedSubgraphsEveryFormat) {
  test::expect_golden_formats("joined-subgraphs", {"table", "csv", "md"},
                              [&](const std::string& format) { return render(format, subgraph_report()); },
                              {"gpu-node-7", "2.3.0"});
}

}  // namespace
}  // namespace modelstat

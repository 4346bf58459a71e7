// Tests of the analysis writers: every format's whole output is pinned by a
// golden file (tests/data/golden/analysis.*, WritersGolden below; regenerate
// with MODELSTAT_UPDATE_GOLDEN=1), and the behaviour behind it by the other
// tests: exact integers, escaping, the schema, the options, empty input.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "modelstat/error.hpp"
#include "modelstat/grouping.hpp"
#include "test_support.hpp"
#include "tools/writers/writer_checks.hpp"
#include "tools/writers/format_util.hpp"
#include "tools/writers/writers.hpp"

namespace modelstat {
namespace {

using nlohmann::json;

// 2^53 + 1: the smallest positive integer a double cannot hold. Seeing it come
// back intact proves no writer or reader went through a double.
constexpr int64_t kBeyondDouble = 9007199254740993LL;

// A node name with every character that needs escaping somewhere: a comma and
// a quote (CSV), a '|' (Markdown).
const char* const kNastyName = "/blocks.0/attn,\"proj\"|out";
const char* const kLongName = "/model/backbone/stage1/block0/branch2/conv1/Conv_with_a_long_suffix";

using test::cost_node;

AnalysisResult sample_result() {
  AnalysisResult r;
  r.model_path = "models/sample.onnx";
  r.producer = "pytorch 2.1.0";
  r.ir_version = 8;
  r.opsets = {{"", 17}, {"com.microsoft", 1}};
  r.file_size_bytes = 46827520;
  r.inputs = {GraphValue{"input", "float32", test::make_shape({1, 3, 224, 224})}};
  r.outputs = {GraphValue{"boxes", "float32", Shape{true, {Dim{-1, {}}, Dim{4, {}}}}},
               GraphValue{"scores", "float32", Shape{true, {Dim{-1, "batch"}, Dim{100, {}}}}}};

  NodeReport conv = cost_node(0, kLongName, "Conv", CostStatus::Exact);
  conv.input_shapes = {"1x3x224x224", "64x3x7x7"};
  conv.output_shapes = {"1x64x112x112"};
  conv.cost.params = 9408;
  conv.cost.macs = 118013952;
  conv.cost.flops = 236027904;
  conv.cost.bytes_read = 639744;
  conv.cost.bytes_written = 3211264;
  conv.cost.weight_bytes = 37632;
  conv.cost.rule = "conv";

  NodeReport matmul = cost_node(1, kNastyName, "MatMul", CostStatus::Exact);
  matmul.input_shapes = {"1x64x112x112", "112x4096"};
  matmul.output_shapes = {"1x64x112x4096"};
  matmul.cost.params = 458752;
  matmul.cost.macs = kBeyondDouble;
  matmul.cost.flops = 2 * kBeyondDouble;
  matmul.cost.bytes_read = 5046272;
  matmul.cost.bytes_written = 117440512;
  matmul.cost.weight_bytes = 1835008;
  matmul.cost.rule = "matmul";
  matmul.cost.note = "note with \"quotes\", commas\nand a newline";

  NodeReport nms = cost_node(2, "nms", "NonMaxSuppression", CostStatus::UnknownOp);
  nms.input_shapes = {"1x?x4", "1x1x?"};
  nms.output_shapes = {"?x3"};
  nms.output_dtype = "int64";
  nms.cost.note = "no cost rule for NonMaxSuppression";

  NodeReport reshape = cost_node(3, "reshape_3", "Reshape", CostStatus::UnknownShape);
  reshape.input_shapes = {"?x3", "2"};
  reshape.output_shapes = {"batchx100"};
  reshape.cost.note = "shape depends on dim 'batch'";
  reshape.cost.rule = "shape_ops";

  r.nodes = {conv, matmul, nms, reshape};

  r.by_op_type = {{"MatMul", 1, 458752, kBeyondDouble, 2 * kBeyondDouble, 122486784, 0},
                  {"Conv", 1, 9408, 118013952, 236027904, 3851008, 0},
                  {"NonMaxSuppression", 1, 0, 0, 0, 0, 1},
                  {"Reshape", 1, 0, 0, 0, 0, 1}};
  r.size_by_dtype = {{"float32", 2, 468160, 1872640}, {"int64", 1, 2, 16}};
  r.shared_weights = {{"embed.weight", 458752, {kNastyName, "lm_head"}}};
  r.unknown_dims = {"batch"};
  r.notices = {"1 graph input had no batch size; used 1"};

  AnalysisTotals& t = r.totals;
  t.nodes = 4;
  t.nodes_exact = 2;
  t.nodes_unknown_shape = 1;
  t.nodes_unknown_op = 1;
  t.params = 468160;
  t.macs = kBeyondDouble + 118013952;
  t.flops = 2 * kBeyondDouble + 236027904;
  t.bytes_read = 639744 + 5046272;
  t.bytes_written = 3211264 + 117440512;
  t.weight_bytes = 1872656;
  t.peak_activation_bytes = 120651776;
  t.peak_at_node = kNastyName;
  t.peak_is_lower_bound = true;
  t.input_bytes = 602112;
  t.output_bytes = 0;
  r.analysis_seconds = 0.0123;
  return r;
}

// The sample grouped by block: the long name has no layer index, so its
// first path component "/model/" (node 0); "/blocks.0/" (node 1); "nms" and
// "reshape_3" have no block: "(other)", both not exact.
AnalysisResult grouped_result() {
  AnalysisResult r = sample_result();
  apply_grouping(r, GroupRule::parse("block"));
  return r;
}

std::string render(const std::string& format, const AnalysisResult& r, const ReportOptions& options = {}) {
  std::ostringstream out;
  make_analysis_writer(format)->write(r, options, out);
  return out.str();
}


json load_schema() {
  return test::load_source_json("docs/analysis.schema.json");
}

// ------------------------------------------------------------------- human units

TEST(ReportFormatTest, HumanCount) {
  EXPECT_EQ(human_count(0), "0");
  EXPECT_EQ(human_count(7), "7");
  EXPECT_EQ(human_count(999), "999");
  EXPECT_EQ(human_count(1000), "1.00 K");
  EXPECT_EQ(human_count(4200), "4.20 K");
  EXPECT_EQ(human_count(11689512), "11.69 M");   // 11.689512 M
  EXPECT_EQ(human_count(1814083944), "1.81 G");  // 1.814083944 G
  EXPECT_EQ(human_count(999994), "999.99 K");
  EXPECT_EQ(human_count(999999), "1.00 M");  // 999.999 K would print as 1000.00 K
  EXPECT_EQ(human_count(-1500), "-1.50 K");
  EXPECT_EQ(human_count(kBeyondDouble), "9.01 P");  // 9.007199... * 10^15
  EXPECT_EQ(human_count(INT64_MAX), "9.22 E");      // 9.223372... * 10^18
  EXPECT_EQ(human_count(INT64_MIN), "-9.22 E");
}

TEST(ReportFormatTest, HumanBytes) {
  EXPECT_EQ(human_bytes(0), "0 B");
  EXPECT_EQ(human_bytes(1023), "1023 B");
  EXPECT_EQ(human_bytes(1024), "1.00 KiB");
  EXPECT_EQ(human_bytes(1536), "1.50 KiB");
  EXPECT_EQ(human_bytes(10240), "10.0 KiB");
  EXPECT_EQ(human_bytes(46758048), "44.6 MiB");  // 46758048 / 2^20 = 44.5919
  EXPECT_EQ(human_bytes(3211264), "3.06 MiB");   // 3.0625 MiB
  EXPECT_EQ(human_bytes(1048575), "1.00 MiB");   // 1023.999 KiB would print as 1024.0 KiB
  EXPECT_EQ(human_bytes(3LL << 30), "3.00 GiB");
  EXPECT_EQ(human_bytes(-2048), "-2.00 KiB");
}

TEST(ReportFormatTest, HelperFormatting) {
  using namespace report_detail;
  EXPECT_EQ(group_digits(0), "0");
  EXPECT_EQ(group_digits(999), "999");
  EXPECT_EQ(group_digits(1000), "1,000");
  EXPECT_EQ(group_digits(-1234567), "-1,234,567");
  EXPECT_EQ(group_digits(kBeyondDouble), "9,007,199,254,740,993");
  EXPECT_EQ(percent(1, 3), "33.3%");
  EXPECT_EQ(percent(5, 0), "-");
  EXPECT_EQ(percent(0, 7), "0.0%");
  EXPECT_EQ(percent(7, 7), "100.0%");
  EXPECT_EQ(percent(1, 100000), "<0.1%");       // not "0.0%": it is something
  EXPECT_EQ(percent(99999, 100000), ">99.9%");  // not "100.0%": it is not all

  AnalysisTotals t;
  t.nodes = 125;
  t.nodes_exact = 123;
  EXPECT_EQ(coverage_percent(t), "98.4%");
  t.nodes = 10000;
  t.nodes_exact = 9999;  // 99.99% must not read as complete
  EXPECT_EQ(coverage_percent(t), "99.9%");
  t.nodes_exact = 10000;
  EXPECT_EQ(coverage_percent(t), "100.0%");
  t.nodes = 0;
  t.nodes_exact = 0;
  EXPECT_EQ(coverage_percent(t), "100.0%");
}

TEST(ReportFormatTest, Ellipsize) {
  using namespace report_detail;
  EXPECT_EQ(ellipsize("short", 40), "short");
  EXPECT_EQ(ellipsize("abcdefghij", 5), "ab\xE2\x80\xA6ij");
  EXPECT_EQ(display_width(ellipsize(kLongName, 40)), 40u);
  // Never cuts through a multi-byte character: "é" is two bytes, one column.
  const std::string accented = "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9";
  EXPECT_EQ(display_width(accented), 6u);
  EXPECT_EQ(ellipsize(accented, 4), "\xC3\xA9\xC3\xA9\xE2\x80\xA6\xC3\xA9");
}

// display_width counts 8 bytes a step: a character of 1-4 bytes at every
// position of ASCII text of every length up to 24 (across each 8-byte step and
// the tail), and runs of them, are one column each.
TEST(ReportFormatTest, DisplayWidthAtEveryPosition) {
  using namespace report_detail;
  const std::string characters[] = {"x", "\xC3\xA9", "\xE2\x80\xA6", "\xF0\x9F\x98\x80"};  // x é … U+1F600
  for (const std::string& ch : characters) {
    for (size_t ascii = 0; ascii <= 24; ++ascii) {
      for (size_t at = 0; at <= ascii; ++at) {
        std::string text(ascii, 'a');
        text.insert(at, ch);
        EXPECT_EQ(display_width(text), ascii + 1) << ascii << " ASCII bytes, a " << ch.size() << "-byte character at " << at;
      }
    }
    for (size_t count = 0; count <= 20; ++count) {
      std::string run;
      for (size_t i = 0; i < count; ++i) run += ch;
      EXPECT_EQ(display_width(run), count) << count << " characters of " << ch.size() << " bytes";
    }
  }
  // Bytes 0x80-0xBF (continuation) are no column, every other byte is one.
  std::string all;
  for (int b = 1; b < 256; ++b) all += char(b);
  EXPECT_EQ(display_width(all), 255u - 64u);
}

// ----------------------------------------------------------------------- JSON

TEST(ReportWriterTest, JsonHasEveryFieldWithExactIntegers) {
  const AnalysisResult r = sample_result();
  const std::string text = render("json", r);
  // ordered_json keeps the document's key order, which the writer promises is stable.
  const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(text);  // throws on invalid JSON

  EXPECT_EQ(doc.begin().key(), "schema_version");  // ordered keys
  EXPECT_EQ(doc["schema_version"], kAnalysisJsonSchemaVersion);
  EXPECT_EQ(std::string(kAnalysisJsonSchemaVersion).rfind("2.", 0), 0u)
      << "docs/analysis.schema.json describes major version 2";
  // 2.0: inputs and outputs as objects; a dim is a number, a symbol or null.
  EXPECT_EQ(doc["model"]["inputs"][0].dump(), R"({"name":"input","dtype":"float32","dims":[1,3,224,224]})");
  EXPECT_EQ(doc["model"]["outputs"][0].dump(), R"({"name":"boxes","dtype":"float32","dims":[null,4]})");
  EXPECT_EQ(doc["model"]["outputs"][1].dump(), R"({"name":"scores","dtype":"float32","dims":["batch",100]})");
  EXPECT_EQ(doc["tool"], "modelstat");
  EXPECT_EQ(doc["kind"], "analysis");
  EXPECT_EQ(doc["model"]["opsets"][1]["domain"], "com.microsoft");
  EXPECT_EQ(doc["model"]["file_size_bytes"].get<int64_t>(), 46827520);

  // The raw text holds the exact decimal digits, not 9007199254740992.
  EXPECT_TRUE(contains(text, "\"macs\": 9007199254740993"));
  EXPECT_EQ(doc["totals"]["macs"].get<int64_t>(), r.totals.macs);
  EXPECT_EQ(doc["totals"]["flops"].get<int64_t>(), r.totals.flops);
  EXPECT_EQ(doc["totals"]["peak_is_lower_bound"], true);
  EXPECT_EQ(doc["totals"]["peak_at_node"], kNastyName);

  const std::vector<std::string> node_fields = {
      "index",         "name",         "op_type",       "domain",       "input_shapes",
      "output_shapes", "output_dtype", "status",        "params",       "macs",
      "flops",         "bytes_read",   "bytes_written", "weight_bytes", "arithmetic_intensity",
      "rule",          "note",         "subgraph_nodes"};
  ASSERT_EQ(doc["nodes"].size(), r.nodes.size());
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    const nlohmann::ordered_json& n = doc["nodes"][i];
    const NodeReport& want = r.nodes[i];
    std::vector<std::string> keys;
    for (const auto& item : n.items()) keys.push_back(item.key());
    EXPECT_EQ(keys, node_fields) << "node " << i;
    EXPECT_EQ(n["index"].get<int64_t>(), want.index);
    EXPECT_EQ(n["name"], want.name);
    EXPECT_EQ(n["params"].get<int64_t>(), want.cost.params);
    EXPECT_EQ(n["macs"].get<int64_t>(), want.cost.macs);
    EXPECT_EQ(n["flops"].get<int64_t>(), want.cost.flops);
    EXPECT_EQ(n["bytes_read"].get<int64_t>(), want.cost.bytes_read);
    EXPECT_EQ(n["bytes_written"].get<int64_t>(), want.cost.bytes_written);
    EXPECT_EQ(n["weight_bytes"].get<int64_t>(), want.cost.weight_bytes);
    EXPECT_EQ(n["note"], want.cost.note);
  }
  EXPECT_EQ(doc["nodes"][1]["macs"].get<int64_t>(), kBeyondDouble);
  EXPECT_EQ(doc["nodes"][0]["status"], "exact");
  EXPECT_EQ(doc["nodes"][2]["status"], "unknown_op");
  EXPECT_EQ(doc["nodes"][3]["status"], "unknown_shape");

  EXPECT_EQ(doc["by_op_type"][0]["macs"].get<int64_t>(), kBeyondDouble);
  EXPECT_EQ(doc["size_by_dtype"].size(), 2u);
  EXPECT_EQ(doc["shared_weights"][0]["consumers"].size(), 2u);
  EXPECT_EQ(doc["hotspots"], nlohmann::ordered_json::array({1, 0}));  // by FLOPs; zero-FLOP nodes left out
  EXPECT_EQ(doc["unknown_dims"], nlohmann::ordered_json::array({"batch"}));
  EXPECT_EQ(doc["notices"].size(), 1u);
  EXPECT_DOUBLE_EQ(doc["analysis_seconds"].get<double>(), 0.0123);
}

TEST(ReportWriterTest, JsonKeepsAllNodesAndHonoursTop) {
  ReportOptions options;
  options.show_all_nodes = false;
  options.top = 0;
  const json doc = json::parse(render("json", sample_result(), options));
  EXPECT_EQ(doc["nodes"].size(), 4u);
  EXPECT_TRUE(doc["hotspots"].empty());
  options.top = 1;
  EXPECT_EQ(json::parse(render("json", sample_result(), options))["hotspots"], json::array({1}));
}

TEST(ReportWriterTest, JsonValidatesAgainstSchema) {
  const json schema = load_schema();
  SchemaValidator validator;
  for (const AnalysisResult& r : {sample_result(), grouped_result(), AnalysisResult{}}) {
    const std::vector<std::string> errors = validator.validate(schema, json::parse(render("json", r)));
    EXPECT_TRUE(errors.empty()) << ::testing::PrintToString(errors);
  }
}

// A decoder at --context: kv_cache and decoder filled, every format renders
// them (sample_models/tiny_gpt2_kv.onnx; figures checked in tests/analyzer/decoder_test.cc).
TEST(ReportWriterTest, DecoderViewsInEveryFormat) {
  const AnalysisResult r = modelstat::analyze_decoder(
      std::string(MODELSTAT_SOURCE_DIR) + "/sample_models/tiny_gpt2_kv.onnx", modelstat::LoadOptions{}, 16, 8);
  const json doc = json::parse(render("json", r));
  EXPECT_TRUE(SchemaValidator().validate(load_schema(), doc).empty());
  EXPECT_EQ(doc["kv_cache"]["bytes_per_token"].get<int64_t>(), 1024);
  EXPECT_EQ(doc["decoder"]["prefill"]["tokens"].get<int64_t>(), 8);
  EXPECT_EQ(doc["decoder"]["decode"]["bindings"]["past"].get<int64_t>(), 15);
  const std::string table = render("table", r);
  EXPECT_TRUE(contains(table, "Decoder at context 16 (prefill of 8 tokens"));
  EXPECT_TRUE(contains(table, "KV cache: 4 tensors (past_key_values.0.key -> present.0.key"));
  const std::string md = render("md", r);
  EXPECT_TRUE(contains(md, "## Decoder at context 16"));
  test::expect_well_formed_md_tables(lines_of(md));
}

TEST(ReportWriterTest, SchemaValidatorRejectsBrokenDocuments) {
  const json schema = load_schema();
  SchemaValidator validator;
  const json good = json::parse(render("json", sample_result()));

  json missing = good;
  missing["totals"].erase("flops");
  EXPECT_FALSE(validator.validate(schema, missing).empty());

  json wrong_type = good;
  wrong_type["nodes"][0]["macs"] = 1.5;
  EXPECT_FALSE(validator.validate(schema, wrong_type).empty());

  json bad_enum = good;
  bad_enum["nodes"][0]["status"] = "maybe";
  EXPECT_FALSE(validator.validate(schema, bad_enum).empty());

  json extra = good;
  extra["model"]["undocumented"] = 1;
  EXPECT_FALSE(validator.validate(schema, extra).empty());
}

// ------------------------------------------------------------------------ CSV

TEST(ReportWriterTest, CsvHasHeaderAndOneQuotedRowPerNode) {
  const AnalysisResult r = sample_result();
  const auto records = parse_csv(render("csv", r));
  const std::vector<std::string> header = {
      "index",       "name", "op_type", "domain",     "output_shapes", "output_dtype", "status",
      "params",      "macs", "flops",   "bytes_read", "bytes_written", "weight_bytes", "arithmetic_intensity",
      "flops_share", "rule", "note"};
  ASSERT_EQ(records.size(), 1 + r.nodes.size());
  EXPECT_EQ(records[0], header);
  for (const auto& record : records) EXPECT_EQ(record.size(), header.size());

  const auto& matmul = records[2];
  EXPECT_EQ(matmul[0], "1");
  EXPECT_EQ(matmul[1], kNastyName);  // comma and quotes survive the round trip
  EXPECT_EQ(matmul[6], "exact");
  EXPECT_EQ(matmul[8], "9007199254740993");
  EXPECT_EQ(matmul[9], "18014398509481986");
  EXPECT_NEAR(std::stod(matmul[14]), 1.0, 1e-6);           // flops_share
  EXPECT_NEAR(std::stod(records[1][14]), 1.31e-8, 1e-10);  // tiny shares keep their digits
  EXPECT_EQ(matmul[16], r.nodes[1].cost.note);             // embedded newline too
  EXPECT_EQ(records[3][6], "unknown_op");
  EXPECT_EQ(records[4][6], "unknown_shape");
  EXPECT_EQ(records[4][4], "batchx100");
}

// ------------------------------------------------------------------- Markdown

TEST(ReportWriterTest, MarkdownTablesHaveConsistentColumns) {
  // Tables: summary, per-layer, by op type, by dtype, shared weights, hotspots. An intraword '_'
  // needs no escape (Conv_with_a_long_suffix).
  const auto lines = test::expect_markdown_report(
      render("md", sample_result()), 6,
      {"attn,\"proj\"\\|out", "Conv_with_a_long_suffix", "| unknown op |", "## Coverage",
       "2/4 nodes exact (50.0%); 1 unknown shape, 1 unknown op (NonMaxSuppression)",
       "- note: 1 graph input had no batch size; used 1", "## Hotspots (top 2 by FLOPs)"});
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0].rfind("# ", 0), 0u);
}

TEST(ReportWriterTest, MarkdownHonoursOptions) {
  ReportOptions options;
  options.show_all_nodes = false;
  options.top = 0;
  const std::string text = render("md", sample_result(), options);
  EXPECT_FALSE(contains(text, "## Per-layer costs"));
  EXPECT_FALSE(contains(text, "## Hotspots"));
  EXPECT_TRUE(contains(text, "## By op type"));
}

// ---------------------------------------------------------------------- table

TEST(ReportWriterTest, TableHasEverySection) {
  const AnalysisResult r = sample_result();
  const std::string text = render("table", r);
  for (const char* needle :
       {"modelstat: models/sample.onnx",
        "producer",
        "pytorch 2.1.0",
        "ai.onnx 17, com.microsoft 1",
        "44.7 MiB (46,827,520 bytes)",
        "input: float32 1x3x224x224",
        "scores: float32 batchx100",
        "convention: ",
        "Per-layer costs (4 nodes)",
        "output shape",
        "%FLOPs",
        "Totals",
        "468.16 K (468,160), deduplicated",
        "9.01 P (9,007,199,372,754,945)",
        "at node /blocks.0/attn,\"proj\"|out (lower bound",
        "Model size by dtype",
        "Shared weights: 1 weight shared by several nodes, counted once",
        "By op type",
        "Hotspots (top 2 by FLOPs)",
        "coverage: 2/4 nodes exact (50.0%); 1 unknown shape, 1 unknown op (NonMaxSuppression)",
        "unknown dims: batch",
        "note: 1 graph input had no batch size; used 1",
        "analysis time: 12.3 ms"})
    EXPECT_TRUE(contains(text, needle)) << "missing: " << needle << "\n" << text;
  EXPECT_TRUE(contains(text, report_detail::kStatusLegend));
  EXPECT_FALSE(contains(text, kLongName)) << "long names are ellipsized";
  EXPECT_TRUE(contains(text, report_detail::ellipsize(kLongName, 40)));
  EXPECT_FALSE(contains(text, "\x1b[")) << "no colour unless asked";

  // Every line of the per-layer table is as wide as its dashed rule at most,
  // and the numeric columns end in the same column (right-aligned).
  const auto lines = lines_of(text);
  size_t header = 0;
  while (header < lines.size() && lines[header].find("  #  node") == std::string::npos) ++header;
  ASSERT_LT(header + 2 + r.nodes.size(), lines.size());
  const size_t rule_width = report_detail::display_width(lines[header + 1]);
  const size_t flops_end = lines[header].find("FLOPs  ") + 5;
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    const std::string& row = lines[header + 2 + i];
    EXPECT_LE(report_detail::display_width(row), rule_width) << row;
  }
  EXPECT_NE(lines[header + 3].find("18.01 P"), std::string::npos);
  EXPECT_EQ(report_detail::display_width(lines[header + 3].substr(0, lines[header + 3].find("18.01 P") + 7)),
            report_detail::display_width(lines[header].substr(0, flops_end)));
}

// The widest line of a text, in display columns.
size_t widest_line(const std::string& text) {
  size_t widest = 0, start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    widest = std::max(widest, report_detail::display_width(text.substr(start, end - start)));
    start = end + 1;
  }
  return widest;
}

// A tf2onnx node name runs to hundreds of characters: the table shows it
// elided, with the node's index where it elides (two long names that
// share a head and a tail stay apart), and no line grows with it.
TEST(ReportWriterTest, LongNodeNamesAreElidedWithTheirIndex) {
  // The widest the table gets with names at the elision width (40 columns)...
  auto with_name = [](const std::string& name) {
    AnalysisResult r = sample_result();
    r.nodes[1].name = name;
    r.totals.peak_at_node = name;
    r.totals.peak_at_index = 1;
    r.notices.push_back("first unknown shape: node 1 '" + name + "' (MatMul) has every input sized");
    return r;
  };
  const size_t width = widest_line(render("table", with_name(std::string(40, 'a'))));
  // ... is the widest it gets with a name of 292.
  const std::string long_name = "WireFrameModel_with_alpha/" + std::string(260, 'b') + "/Relu6";
  const AnalysisResult r = with_name(long_name);
  const std::string text = render("table", r);
  EXPECT_LE(widest_line(text), width + 3) << text;  // + "#1 "
  EXPECT_TRUE(contains(text, "at node #1 WireFrameModel_with_\xE2\x80\xA6" "bbbbbbbbbbbbb/Relu6")) << text;
  // The JSON keeps the whole name.
  EXPECT_TRUE(contains(render("json", r), long_name));
}

TEST(ReportWriterTest, TableHonoursOptions) {
  ReportOptions options;
  options.show_all_nodes = false;
  options.top = 0;
  const std::string plain = render("table", sample_result(), options);
  EXPECT_FALSE(contains(plain, "Per-layer costs"));
  EXPECT_FALSE(contains(plain, "Hotspots"));
  EXPECT_TRUE(contains(plain, "coverage: "));

  options.color = true;
  EXPECT_TRUE(contains(render("table", sample_result(), options), "\x1b["));
}

// The table formats each distinct count of the per-layer rows once, in a
// memo of 4,096 slots a column (slot: the value times 0x9E3779B97F4A7C15,
// top 12 bits), and a row's cells are views of the memo's texts until the
// row is added. 1 and 4,182 share a slot, as do 2 and 2,586: a memo shared
// by the params, MACs and FLOPs columns overwrote a row's params text with
// its MACs (or FLOPs) text before the row was added (d4e96dd). Every cell is
// checked against the value written by hand.
TEST(ReportWriterTest, TableCellsOfOneRowWhoseValuesShareAMemoSlot) {
  AnalysisResult r;
  r.model_path = "memo.onnx";
  auto row = [](int index, const char* name, int64_t params, int64_t macs, int64_t flops) {
    NodeReport n = cost_node(index, name, "MatMul", CostStatus::Exact, macs, flops);
    n.output_shapes = {"1x64"};
    n.cost.params = params;
    return n;
  };
  r.nodes = {row(0, "node_a", 1, 4182, 8364), row(1, "node_b", 4182, 1, 2), row(2, "node_c", 2, 0, 2586)};
  r.totals.nodes = r.totals.nodes_exact = 3;
  r.totals.params = 4185;
  r.totals.macs = 4183;
  r.totals.flops = 10952;
  const std::string text = render("table", r);
  // index, name, op, output shape, params, MACs, FLOPs, then the bytes ("0 B").
  for (const char* cells : {R"(\n +0  node_a +MatMul +1x64 +1 +4\.18 K +8\.36 K +0 B )",
                            R"(\n +1  node_b +MatMul +1x64 +4\.18 K +1 +2 +0 B )",
                            R"(\n +2  node_c +MatMul +1x64 +2 +0 +2\.59 K +0 B )"})
    EXPECT_TRUE(std::regex_search(text, std::regex(cells))) << "no row matches " << cells << "\n" << text;
}

TEST(ReportWriterTest, EveryFormatHandlesAnEmptyResult) {
  const AnalysisResult empty;
  for (const char* format : {"table", "json", "csv", "md"})
    EXPECT_FALSE(render(format, empty).empty()) << format;
  EXPECT_TRUE(contains(render("table", empty), "coverage: 0/0 nodes exact (100.0%)"));
  EXPECT_EQ(parse_csv(render("csv", empty)).size(), 1u);
}

TEST(ReportWriterTest, GroupRowsStandInForTheNodeRows) {
  const AnalysisResult r = grouped_result();
  const std::string table = render("table", r);
  EXPECT_TRUE(contains(
      table, "Per-block costs (--group-by block: 3 groups of 4 nodes, in order of first appearance)"));
  EXPECT_FALSE(contains(table, "Per-layer costs"));
  EXPECT_TRUE(contains(table, "Hotspots"));  // still per node

  // CSV: one row per group, exact integers (the sample's node figures, summed by hand).
  const auto csv = parse_csv(render("csv", r));
  ASSERT_EQ(csv.size(), 4u);
  EXPECT_EQ(csv[0], (std::vector<std::string>{"group", "first_index", "nodes", "nodes_not_exact", "params",
                                              "macs", "flops", "bytes_read", "bytes_written", "weight_bytes",
                                              "flops_share"}));
  EXPECT_EQ(csv[1], (std::vector<std::string>{"/model/", "0", "1", "0", "9408", "118013952", "236027904",
                                              "639744", "3211264", "37632", "1.31022e-08"}));
  EXPECT_EQ(csv[2][0], "/blocks.0/");
  EXPECT_EQ(csv[2][5], "9007199254740993");
  EXPECT_EQ(csv[3], (std::vector<std::string>{"(other)", "2", "2", "2", "0", "0", "0", "0", "0", "0", "0"}));

  // JSON: the rule and the groups beside every node.
  const json doc = json::parse(render("json", r));
  EXPECT_EQ(doc["group_by"], "block");
  EXPECT_EQ(doc["nodes"].size(), 4u);
  ASSERT_EQ(doc["groups"].size(), 3u);
  EXPECT_EQ(doc["groups"][1]["key"], "/blocks.0/");
  EXPECT_EQ(doc["groups"][1]["macs"].get<int64_t>(), kBeyondDouble);
  EXPECT_EQ(doc["groups"][2]["nodes_not_exact"], 2);

  const std::string md = render("md", r);
  EXPECT_TRUE(contains(md, "## Per-block costs (--group-by block: 3 groups of 4 nodes"));
  EXPECT_FALSE(contains(md, "## Per-layer costs"));
  expect_well_formed_md_tables(lines_of(md));

  // Without a rule: null and no groups, and the node rows.
  const json plain = json::parse(render("json", sample_result()));
  EXPECT_TRUE(plain["group_by"].is_null());
  EXPECT_EQ(plain["groups"], json::array());
  EXPECT_EQ(parse_csv(render("csv", sample_result())).size(), 5u);
}

// The whole output of every format for the sample result. The analysis time
// is what a run measures; it is normalised away.
TEST(WritersGolden, AnalysisEveryFormat) {
  test::expect_golden_formats("analysis", {"table", "json", "csv", "md"},
                              [&](const std::string& format) { return render(format, sample_result()); });
}

TEST(WritersGolden, AnalysisGroupedEveryFormat) {
  test::expect_golden_formats("analysis-groups", {"table", "json", "csv", "md"},
                              [&](const std::string& format) { return render(format, grouped_result()); });
}

}  // namespace
}  // namespace modelstat

// Tests of the HTML joined report (tools/writers/joined_html_writer.cc) and its
// SVG helpers (tools/writers/svg_chart.*). The page's markup is pinned by golden
// files (tests/data/golden/joined-small*.html, JoinedHtmlGolden below;
// regenerate with MODELSTAT_UPDATE_GOLDEN=1); the tests here check behaviour:
// nothing loaded from the network, model strings escaped, which nodes each
// chart plots, the options, no NaN/Inf for degenerate input. The JoinedReport
// comes from the real join_profile on hand-built profiles, so the expected
// figures below are worked out by hand from the fixture, not copied from the
// writer.
//
// MODELSTAT_HTML_EXAMPLE=path.html makes JoinedHtml.ExamplePage write its
// page (a synthetic ResNet-18-like profile) there, to look at it:
//   tools/render_html.sh path.html path.png
// MODELSTAT_HTML_PROFILE_JSON=profile.json (from `modelstat profile -f json`)
// with MODELSTAT_HTML_EXAMPLE makes JoinedHtml.ExamplePage write the
// page of that real profile instead, against illustrative (unmeasured) ceilings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/measurements/record_json.hpp"
#include "modelstat/ceilings.hpp"
#include "modelstat/joined.hpp"
#include "modelstat/profile.hpp"
#include "tools/writers/writers.hpp"
#include "tools/writers/svg_chart.hpp"
#include "test_support.hpp"

namespace modelstat {
namespace {

namespace svg = report::svg;

// ------------------------------------------------------------ helpers

size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size()))
    ++n;
  return n;
}

// The text from `id="ID"` to the first `closing` after it ("" when the id is missing).
std::string element(const std::string& html, const std::string& id, const std::string& closing) {
  const size_t begin = html.find("id=\"" + id + "\"");
  if (begin == std::string::npos) return {};
  const size_t end = html.find(closing, begin);
  return html.substr(begin, end == std::string::npos ? std::string::npos : end + closing.size() - begin);
}

// "nan", "inf", "infinity" as a word, any case: what a non-finite double prints as.
bool has_non_finite_token(const std::string& html) {
  static const std::regex re("(^|[^A-Za-z])(nan|inf|infinity)([^A-Za-z]|$)", std::regex::icase);
  return std::regex_search(html, re);
}

TimingSummary timing(double median, std::vector<double> samples = {}) {
  TimingSummary t;
  t.count = samples.empty() ? 1 : int64_t(samples.size());
  t.median = t.p50 = t.mean = t.min = t.max = median;
  t.p90 = t.p95 = t.p99 = median;
  t.samples = std::move(samples);
  return t;
}

struct NodeSpec {
  std::string name, op;
  CostStatus status;
  int64_t flops, bytes;
  double seconds;
};

// A profile from node specs: analysis nodes with their cost, one layer timing
// each, totals summed from the specs.
ProfileResult profile_of(const std::vector<NodeSpec>& specs) {
  ProfileResult p;
  AnalysisResult& a = p.analysis;
  a.model_path = "models/small.onnx";
  for (size_t i = 0; i < specs.size(); ++i) {
    const NodeSpec& s = specs[i];
    NodeReport n;
    n.index = int(i);
    n.name = s.name;
    n.op_type = s.op;
    n.cost.status = s.status;
    n.cost.flops = s.flops;
    n.cost.macs = s.op == "Conv" || s.op == "Gemm" ? s.flops / 2 : 0;
    n.cost.bytes_read = s.bytes / 2;
    n.cost.bytes_written = s.bytes - s.bytes / 2;
    a.nodes.push_back(n);
    a.totals.nodes += 1;
    a.totals.nodes_exact += s.status == CostStatus::Exact ? 1 : 0;
    a.totals.nodes_unknown_op += s.status == CostStatus::UnknownOp ? 1 : 0;
    a.totals.flops += s.flops;
    a.totals.macs += n.cost.macs;
    LayerTiming l;
    l.index = int(i);
    l.name = s.name;
    l.op_type = s.op;
    l.time = timing(s.seconds, {s.seconds});
    p.layers.push_back(l);
  }
  RunContext& c = p.context;
  c.device_name = "Test CPU";
  c.device_kind = "cpu";
  c.dtype = "fp32";
  c.threads = 4;
  c.batch = 1;
  c.timer = "steady_clock";
  return p;
}

using test::cpu_ceilings;

// Six nodes: three with FLOPs and time (Conv, Relu with a hostile name, Gemm),
// a Reshape with no FLOPs, an op without a cost rule, and an Add timed at 0.
const char* const kScriptName = "<script>alert(1)</script>";
std::vector<NodeSpec> small_specs() {
  return {{"/stem/Conv", "Conv", CostStatus::Exact, 2000000, 100000, 1e-3},
          {kScriptName, "Relu", CostStatus::Exact, 50000, 400000, 2e-4},
          {"/reshape", "Reshape", CostStatus::Exact, 0, 0, 6e-6},
          {"/fc/Gemm", "Gemm", CostStatus::Exact, 1000000, 50000, 4e-4},
          {"/nms", "NonMaxSuppression", CostStatus::UnknownOp, 0, 0, 3e-4},
          {"/add", "Add", CostStatus::Exact, 10000, 120000, 0}};
}

ProfileResult small_profile() {
  ProfileResult p = profile_of(small_specs());
  // 20 samples from 2.3 to 4.2 ms; the summary's figures are set by hand.
  std::vector<double> samples;
  for (int i = 0; i < 20; ++i) samples.push_back(2.3e-3 + 1e-4 * i);
  p.whole = timing(2.5e-3, samples);
  p.whole.p90 = 3.0e-3;
  p.whole.p99 = 4.0e-3;
  p.whole.count = 20;
  return p;
}

std::string html_of(const JoinedReport& r, ReportOptions options = {}) {
  std::ostringstream out;
  make_joined_writer("html")->write(r, options, out);
  return out.str();
}

// ------------------------------------------------------------ page shape

// The whole page for the small profile with a batch sweep against a datasheet
// whose long source name keeps its kind in the badge: one document, every
// section and chart, the summary's figures. (The page without a sweep against
// measured ceilings is joined.html, JoinedEveryFormat.)
TEST(WritersGolden, JoinedHtmlPage) {
  ProfileResult p = small_profile();
  p.batch_sweep = {{1, true, "", 2e-3, 500}, {4, true, "", 5e-3, 800}, {16, true, "", 1.6e-2, 1000},
                   {64, false, "out of memory", 0, 0}};
  test::expect_golden("joined-small-sweep-datasheet.html",
                      html_of(join_profile(p, cpu_ceilings(50e9, 100e9, "datasheet: a very long accelerator name, rev 2"))));
}

TEST(JoinedHtml, OneDocumentEndingWithIt) {
  const std::string html = html_of(join_profile(small_profile(), cpu_ceilings(50e9, 100e9)));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(count_of(html, "<html"), 1u);
  EXPECT_EQ(count_of(html, "</html>"), 1u);
  // The page ends with the document, nothing after it.
  EXPECT_EQ(html.substr(html.size() - 8), "</html>\n");
}

TEST(JoinedHtml, LoadsNothingFromTheNetwork) {
  const std::string html = html_of(join_profile(small_profile(), cpu_ceilings(50e9, 100e9)));
  EXPECT_EQ(count_of(html, "http:"), 0u);
  EXPECT_EQ(count_of(html, "https:"), 0u);
  EXPECT_EQ(count_of(html, "src="), 0u);
  EXPECT_EQ(count_of(html, "@import"), 0u);
  EXPECT_EQ(count_of(html, "url("), 0u);
  EXPECT_EQ(count_of(html, "<link"), 0u);
  EXPECT_EQ(count_of(html, "<img"), 0u);
  // Every link is an anchor inside the page.
  EXPECT_EQ(count_of(html, "href=\""), count_of(html, "href=\"#"));
}

TEST(JoinedHtml, ModelStringsAreEscaped) {
  std::vector<NodeSpec> specs = small_specs();
  specs[3].op = "Op\"><img onerror=alert(2)>";  // an op type is model input too
  ProfileResult p = profile_of(specs);
  p.analysis.model_path = "models/<b>bold</b>.onnx";
  p.notices.push_back("notice about <script>");
  const std::string html = html_of(join_profile(std::move(p), cpu_ceilings(50e9, 100e9)));
  EXPECT_EQ(count_of(html, "<script>alert(1)"), 0u);
  EXPECT_EQ(count_of(html, "<script"), 1u);  // the page's own sorting script
  // The name shows (escaped) in the scatter and roofline tooltips and in the layer table.
  EXPECT_GE(count_of(html, "&lt;script&gt;alert(1)&lt;/script&gt;"), 3u);
  EXPECT_EQ(count_of(html, "<img"), 0u);
  EXPECT_NE(html.find("Op&quot;&gt;&lt;img onerror=alert(2)&gt;"), std::string::npos);
  EXPECT_EQ(count_of(html, "<b>bold"), 0u);
  EXPECT_NE(html.find("models/&lt;b&gt;bold&lt;/b&gt;.onnx"), std::string::npos);
  EXPECT_NE(html.find("notice about &lt;script&gt;"), std::string::npos);
}

// ------------------------------------------------------------ charts

TEST(JoinedHtml, ScatterHasOnePointPerNodeWithFlopsAndTime) {
  const std::string html = html_of(join_profile(small_profile(), cpu_ceilings(50e9, 100e9)));
  const std::string scatter = element(html, "chart-scatter", "</figure>");
  ASSERT_FALSE(scatter.empty());
  // Conv, the Relu and Gemm; Reshape (0 FLOPs), NonMaxSuppression (unknown: 0)
  // and Add (0 s) have no place on log axes.
  EXPECT_EQ(count_of(scatter, "class=\"pt\""), 3u);
  EXPECT_NE(scatter.find("3 nodes with no FLOPs or no time not shown"), std::string::npos);
  // Log-log with decade ticks: FLOPs from 50 K to 2 M span 10 K .. 10 M,
  // times from 0.2 to 1 ms span 100 µs .. 1 ms.
  for (const char* tick : {">10K<", ">100K<", ">1M<", ">10M<", ">100 µs<", ">1 ms<"})
    EXPECT_NE(scatter.find(tick), std::string::npos) << tick;
  // A legend entry per plotted op type.
  const std::string legend = scatter.substr(scatter.find("class=\"legend\""));
  for (const char* op : {">Conv<", ">Relu<", ">Gemm<"}) EXPECT_NE(legend.find(op), std::string::npos) << op;
  EXPECT_EQ(legend.find(">Reshape<"), std::string::npos);
}

// A fused member (here the Relu, fused into the stem Conv's group) took only
// its marker's time; its work is in the group's row: it is not a point of its
// own, and the note says so apart from the nodes with no place on log axes.
TEST(JoinedHtml, ScatterLeavesFusedMembersToTheirGroupsPoint) {
  ProfileResult p = small_profile();
  p.layers[1].fused_into = "/stem/Conv";
  p.layers[0].fused_members = {p.layers[1].name};
  const std::string scatter = element(html_of(join_profile(p, cpu_ceilings(50e9, 100e9))), "chart-scatter", "</figure>");
  ASSERT_FALSE(scatter.empty());
  EXPECT_EQ(count_of(scatter, "class=\"pt\""), 2u);  // Conv (its group) and Gemm
  EXPECT_NE(scatter.find("3 nodes with no FLOPs or no time not shown"), std::string::npos);
  EXPECT_NE(scatter.find("1 fused member not shown: its work is in its group's point."), std::string::npos);
}

TEST(JoinedHtml, PlottedOpTypesGetThePaletteFirst) {
  // Ten op types with no FLOPs take more time than the one with FLOPs; the
  // palette (9 colours, the first #4e79a7) still goes to the MatMul first,
  // since only it is on the scatter, and the slowest of the others gets the 2nd.
  std::vector<NodeSpec> specs;
  for (int i = 0; i < 10; ++i)
    specs.push_back({"/shape" + std::to_string(i), "ShapeOp" + std::to_string(i), CostStatus::Exact, 0, 64,
                     1e-3 * (10 - i)});
  specs.push_back({"/mm", "MatMul", CostStatus::Exact, 1000000, 10000, 1e-4});
  const std::string html = html_of(join_profile(profile_of(specs), cpu_ceilings(50e9, 100e9)));
  const std::string scatter = element(html, "chart-scatter", "</figure>");
  EXPECT_EQ(count_of(scatter, "class=\"pt\""), 1u);
  EXPECT_NE(scatter.find("fill=\"#4e79a7\""), std::string::npos);
  EXPECT_EQ(scatter.find("other type"), std::string::npos);
  const std::string bars = element(html, "chart-optype", "</figure>");
  EXPECT_NE(bars.find(">ShapeOp0</text><rect"), std::string::npos);
  EXPECT_NE(bars.find("fill=\"#f28e2b\""), std::string::npos);  // ShapeOp0, the 2nd colour
  // 1 + 8 types with their own colour; ShapeOp8 and ShapeOp9 share the grey.
  EXPECT_EQ(count_of(bars, "fill=\"#bab0ac\""), 2u);
}

TEST(JoinedHtml, RooflineHasRoofsRidgeAndOneMarkerPerCostedNode) {
  const std::string html =
      html_of(join_profile(small_profile(), cpu_ceilings(50e9, 100e9, "datasheet: test-x")));
  const std::string roof = element(html, "chart-roofline", "</figure>");
  ASSERT_FALSE(roof.empty());
  EXPECT_EQ(count_of(roof, "class=\"rpt"), 3u);
  EXPECT_EQ(count_of(roof, "class=\"roof\""), 1u);
  // ridge = 100 GFLOP/s / 50 GB/s = 2 FLOP/byte.
  EXPECT_NE(roof.find("ridge 2 FLOP/B"), std::string::npos);
  EXPECT_NE(roof.find("100 GFLOP/s fp32"), std::string::npos);
  EXPECT_NE(roof.find("50 GB/s"), std::string::npos);
  EXPECT_NE(roof.find("datasheet: test-x"), std::string::npos);
  // The Relu: 50,000 FLOPs over 400,000 bytes = 0.125 FLOP/B, below the ridge.
  EXPECT_NE(roof.find("intensity 0.125 FLOP/B, memory-bound"), std::string::npos);
  // The Conv: 2,000,000 / 100,000 = 20 FLOP/B, above the ridge; 2 GFLOP/s of 100 = 2%.
  EXPECT_NE(roof.find("intensity 20 FLOP/B, compute-bound, efficiency 2.0%"), std::string::npos);
}

// Ceilings 2.0: the machine roof (400 GFLOP/s) is the compute roof, the
// matmul (100) is drawn as "achievable", each cache level faster than DRAM
// gets its own line, and each node names the level its bytes fit in. The
// profile runs with small_profile()'s threads; roofs at 1 and 64 threads
// make the nearest count's the one used (its figures differ from the other's).
TEST(JoinedHtml, RooflineDrawsMachineCacheAndAchievableRoofs) {
  DeviceCeilings c = cpu_ceilings(50e9, 100e9);
  const int threads = small_profile().context.threads;
  c.compute_roofs = {{"fp32", "fma zmm", threads, 400e9, true}, {"fp32", "fma zmm", threads + 63, 9e12, true}};
  c.memory_levels = {{"L1", threads, 150000, 0, 0, 0, 800e9}, {"L2", threads, 1000000, 0, 0, 0, 200e9},
                     {"DRAM", threads, 0, 0, 0, 0, 40e9}, {"DRAM", threads + 63, 0, 0, 0, 0, 7e12}};
  const std::string html = html_of(join_profile(small_profile(), c));
  const std::string roof = element(html, "chart-roofline", "</figure>");
  ASSERT_FALSE(roof.empty());
  EXPECT_NE(roof.find("machine peak: 400 GFLOP/s fp32"), std::string::npos);
  EXPECT_NE(roof.find("achievable: 100 GFLOP/s fp32 matmul"), std::string::npos);
  EXPECT_EQ(count_of(roof, "class=\"level-roof\""), 2u);  // L1 and L2; DRAM is the main roof
  EXPECT_NE(roof.find("L1 800 GB/s"), std::string::npos);
  EXPECT_NE(roof.find("L2 200 GB/s"), std::string::npos);
  EXPECT_NE(roof.find("DRAM 40 GB/s"), std::string::npos);
  EXPECT_EQ(roof.find("7 TB/s"), std::string::npos) << "the other thread count's levels are not drawn";
  // The Conv: 100,000 bytes fit L1 (150,000); 2 GFLOP/s of the 400 machine peak = 0.5%.
  EXPECT_NE(roof.find("compute-bound (L1), efficiency 0.5%"), std::string::npos);
  const std::string summary = element(html, "summary", "</header>");
  EXPECT_NE(summary.find("of the fp32 machine peak"), std::string::npos);
}

TEST(JoinedHtml, SummaryFiguresAreWorkedOutFromTheRun) {
  const std::string html = html_of(join_profile(small_profile(), cpu_ceilings(50e9, 100e9)));
  const std::string summary = element(html, "summary", "</header>");
  ASSERT_FALSE(summary.empty());
  EXPECT_NE(summary.find("2.50 ms"), std::string::npos);
  EXPECT_NE(summary.find("p90 3.00 ms"), std::string::npos);
  EXPECT_NE(summary.find("p99 4.00 ms"), std::string::npos);
  // Layer medians: 1 + 0.2 + 0.006 + 0.4 + 0.3 + 0 = 1.906 ms; 1.906 / 2.5 - 1 = -23.8%.
  EXPECT_NE(summary.find("1.91 ms"), std::string::npos);
  EXPECT_NE(summary.find("-23.8% vs the whole-model median"), std::string::npos);
  // 3,060,000 FLOPs / 2.5 ms = 1.224 GFLOP/s, 1.2% of 100 GFLOP/s.
  EXPECT_NE(summary.find("1.22 GFLOP/s"), std::string::npos);
  EXPECT_NE(summary.find("1.2% of the fp32 matmul peak"), std::string::npos);  // no machine roof here
  EXPECT_NE(summary.find("100 GFLOP/s"), std::string::npos);
  EXPECT_NE(summary.find("50 GB/s"), std::string::npos);
}

TEST(JoinedHtml, OpTypeBarsAndHistogram) {
  const std::string html = html_of(join_profile(small_profile(), cpu_ceilings(50e9, 100e9)));
  const std::string bars = element(html, "chart-optype", "</figure>");
  // Six op types, one bar each; the Conv's 1 ms of 1.906 ms is 52.5%.
  EXPECT_EQ(count_of(bars, "<rect"), 6u);
  EXPECT_NE(bars.find("52.5% &#183; 1.00 ms"), std::string::npos);
  const std::string hist = element(html, "chart-latency", "</figure>");
  // 20 samples: ceil(2 * 20^(1/3)) = ceil(5.43) = 6 bins of (4.2 - 2.3) / 6 ms,
  // holding 4, 3, 3, 3, 3 and 4 samples (never empty here).
  EXPECT_EQ(count_of(hist, "class=\"bin\""), 6u);
  EXPECT_EQ(count_of(hist, ": 4 runs</title>"), 2u);
  EXPECT_EQ(count_of(hist, ": 3 runs</title>"), 4u);
  for (const char* marker : {"median 2.50 ms", "p90 3.00 ms", "p99 4.00 ms"})
    EXPECT_NE(hist.find(marker), std::string::npos) << marker;
}

TEST(JoinedHtml, HistogramGoesLogarithmicOverMoreThanADecade) {
  ProfileResult p = small_profile();
  // 0.1 ms to 10 ms: ceil(2 * 4^(1/3)) = ceil(3.17) = 4 bins, equal in log(time),
  // with edges 0.1, 0.316, 1, 3.16 and 10 ms: counts 2, 0, 1, 1.
  p.whole.samples = {1e-4, 2e-4, 1.5e-3, 1e-2};
  const std::string hist =
      element(html_of(join_profile(p, cpu_ceilings(50e9, 100e9))), "chart-latency", "</figure>");
  EXPECT_EQ(count_of(hist, "class=\"bin\""), 3u);
  EXPECT_EQ(count_of(hist, ": 2 runs</title>"), 1u);
  EXPECT_EQ(count_of(hist, ": 1 run</title>"), 2u);
  EXPECT_NE(hist.find("bins and axis are logarithmic"), std::string::npos);
  for (const char* tick : {">100 µs<", ">1 ms<", ">10 ms<"})
    EXPECT_NE(hist.find(tick), std::string::npos) << tick;
}

TEST(JoinedHtml, TablesFollowTheOptions) {
  const JoinedReport r = join_profile(small_profile(), cpu_ceilings(50e9, 100e9));
  ReportOptions options;
  options.top = 2;
  std::string html = html_of(r, options);
  const std::string hot = element(html, "hotspots", "</section>");
  // The two slowest: the Conv (1 ms), then the Gemm (0.4 ms).
  EXPECT_EQ(count_of(hot, "<tr>"), 3u);  // header + 2
  const size_t conv = hot.find("/stem/Conv"), gemm = hot.find("/fc/Gemm");
  ASSERT_NE(conv, std::string::npos);
  ASSERT_NE(gemm, std::string::npos);
  EXPECT_LT(conv, gemm);
  EXPECT_EQ(count_of(element(html, "layers", "</section>"), "<tr>"), 7u);    // header + 6 nodes
  EXPECT_EQ(count_of(element(html, "op-types", "</section>"), "<tr>"), 7u);  // header + 6 types

  options.top = 0;
  options.show_all_nodes = false;
  html = html_of(r, options);
  EXPECT_EQ(count_of(element(html, "hotspots", "</section>"), "<tr>"), 0u);
  EXPECT_EQ(count_of(element(html, "layers", "</section>"), "<tr>"), 0u);
}

TEST(JoinedHtml, BatchSectionSwitchesBetweenCurveAndNote) {
  ProfileResult p = small_profile();
  std::string html = html_of(join_profile(p, cpu_ceilings(50e9, 100e9)));
  std::string batch = element(html, "chart-batch", "</figure>");
  EXPECT_NE(batch.find("id=\"batch-none\""), std::string::npos);
  EXPECT_NE(batch.find("--batch-sweep 1,2,4,8"), std::string::npos);
  EXPECT_EQ(batch.find("<svg"), std::string::npos);

  auto point = [](int64_t batch_size, bool fits, double median, const char* failure = "") {
    BatchPoint b;
    b.batch = batch_size;
    b.fits = fits;
    b.median = median;
    b.throughput = fits ? double(batch_size) / median : 0;
    b.failure = failure;
    return b;
  };
  p.batch_sweep = {point(1, true, 2e-3), point(4, true, 5e-3), point(16, true, 1.6e-2),
                   point(64, false, 0, "out of memory")};
  html = html_of(join_profile(p, cpu_ceilings(50e9, 100e9)));
  batch = element(html, "chart-batch", "</figure>");
  EXPECT_EQ(batch.find("batch-none"), std::string::npos);
  EXPECT_EQ(count_of(batch, "<svg"), 1u);
  // Three batches that ran, one point each in the latency and the throughput panel.
  EXPECT_EQ(count_of(batch, "class=\"pt-batch\""), 6u);
  // batch 4 in 5 ms: 800 samples/s.
  EXPECT_NE(batch.find("batch 4: 5.00 ms per batch, 800 samples/s"), std::string::npos);
  EXPECT_NE(batch.find("Did not run: batch 64 (out of memory)"), std::string::npos);

  // A sweep in which nothing ran: a note, no chart.
  p.batch_sweep = {point(8, false, 0, "out of memory")};
  html = html_of(join_profile(p, cpu_ceilings(50e9, 100e9)));
  batch = element(html, "chart-batch", "</figure>");
  EXPECT_EQ(batch.find("<svg"), std::string::npos);
  EXPECT_NE(batch.find("No batch size of the sweep ran"), std::string::npos);
}

// ------------------------------------------------------------ degenerate input

TEST(JoinedHtml, DegenerateInputNeverPrintsNanOrInf) {
  // All FLOPs zero, one whole-model sample, no batch sweep.
  ProfileResult p = profile_of({{"a", "Reshape", CostStatus::Exact, 0, 0, 1e-6},
                                {"b", "Identity", CostStatus::Exact, 0, 64, 2e-6},
                                {"c", "Custom", CostStatus::UnknownOp, 0, 0, 0}});
  p.whole = timing(4e-6, {4e-6});
  JoinedReport r = join_profile(p, cpu_ceilings(50e9, 100e9));
  std::string html = html_of(r);
  EXPECT_FALSE(has_non_finite_token(html));
  EXPECT_EQ(count_of(element(html, "chart-scatter", "</figure>"), "class=\"pt\""), 0u);
  EXPECT_NE(html.find("No node has both FLOPs and a measured time"), std::string::npos);
  EXPECT_NE(html.find("3 nodes with no FLOPs or no time not shown"), std::string::npos);
  EXPECT_NE(html.find("Only one sample"), std::string::npos);
  EXPECT_NE(html.find("id=\"batch-none\""), std::string::npos);

  // No ceilings at all, every time zero, no samples.
  p.whole = TimingSummary{};
  for (auto& l : p.layers) l.time = timing(0);
  DeviceCeilings none;
  none.device_kind = "cpu";
  html = html_of(join_profile(p, none));
  EXPECT_FALSE(has_non_finite_token(html));
  EXPECT_NE(html.find("No raw whole-model samples"), std::string::npos);
  EXPECT_NE(html.find("no ceilings"), std::string::npos);

  // Everything hand-set to non-finite values must still print none of them.
  r.whole_achieved_flops_per_second = NAN;
  r.whole_efficiency = INFINITY;
  r.nodes[0].median_seconds = INFINITY;
  r.nodes[0].share_of_time = NAN;
  r.nodes[1].arithmetic_intensity = NAN;
  r.profile.whole.samples = {1e-3, NAN, INFINITY, 2e-3};
  r.profile.whole.median = NAN;
  html = html_of(r);
  EXPECT_FALSE(has_non_finite_token(html));
}

TEST(JoinedHtml, NonFiniteCheckCatchesWhatItShould) {
  // The check itself: it finds the tokens and leaves ordinary words alone.
  EXPECT_TRUE(has_non_finite_token("x=\"nan\""));
  EXPECT_TRUE(has_non_finite_token("1 inf s"));
  EXPECT_TRUE(has_non_finite_token("-Infinity"));
  EXPECT_TRUE(has_non_finite_token("NaN"));
  EXPECT_FALSE(has_non_finite_token("first inference, information, nano"));
}

// ------------------------------------------------------------ svg helpers

TEST(SvgChart, EscapeAndNumbers) {
  EXPECT_EQ(svg::escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(svg::num(12.5), "12.5");
  EXPECT_EQ(svg::num(12.0), "12");
  EXPECT_EQ(svg::num(0.126), "0.13");  // at most 2 decimals
  EXPECT_EQ(svg::num(-0.001), "0");
  EXPECT_EQ(svg::num(NAN), "0");
  EXPECT_EQ(svg::num(INFINITY), "0");
}

TEST(SvgChart, Labels) {
  EXPECT_EQ(svg::si_label(1e9), "1G");
  EXPECT_EQ(svg::si_label(1e4), "10K");
  EXPECT_EQ(svg::si_label(2.5e-6), "2.5\xC2\xB5");
  EXPECT_EQ(svg::si_label(0.1), "0.1");
  EXPECT_EQ(svg::si_label(999960), "1M");  // 999.96 K at 3 digits is 1 M, not "1e+03K"
  EXPECT_EQ(svg::si_label(0), "0");
  EXPECT_EQ(svg::si_label(NAN), "-");
  EXPECT_EQ(svg::si_text(1.234e10, "FLOP/s"), "12.3 GFLOP/s");
  EXPECT_EQ(svg::seconds_label(1e-3), "1 ms");
  EXPECT_EQ(svg::seconds_label(2e-5), "20 \xC2\xB5s");
  EXPECT_EQ(svg::seconds_label(1.25e-3), "1.25 ms");
  EXPECT_EQ(svg::seconds_label(999.9e-9), "1 \xC2\xB5s");
  EXPECT_EQ(svg::seconds_label(INFINITY), "-");
}

TEST(SvgChart, LogScaleSpansWholeDecades) {
  const svg::Scale s = svg::Scale::log10(3, 2000, 0, 400);
  EXPECT_DOUBLE_EQ(s.lo(), 1);
  EXPECT_DOUBLE_EQ(s.hi(), 1e4);
  const std::vector<double> majors = s.major_ticks();
  ASSERT_EQ(majors.size(), 5u);
  EXPECT_DOUBLE_EQ(majors[2], 100);
  EXPECT_EQ(s.minor_ticks().size(), 4u * 8u);  // 2..9 in each of 4 decades
  // 4 decades over 400 px: 100 px each.
  EXPECT_NEAR(s(10), 100, 1e-9);
  EXPECT_NEAR(s(1000), 300, 1e-9);
  // One value: one decade around it.
  const svg::Scale one = svg::Scale::log10(5, 5, 0, 100);
  EXPECT_DOUBLE_EQ(one.lo(), 1);
  EXPECT_DOUBLE_EQ(one.hi(), 10);
  // 20 decades: every 3rd labelled (ceil(20 / 8)), no minor ticks.
  const svg::Scale wide = svg::Scale::log10(1e-10, 1e10, 0, 100);
  EXPECT_EQ(wide.major_ticks().size(), 7u);  // 1e-10, 1e-7, ..., 1e8
  EXPECT_TRUE(wide.minor_ticks().empty());
}

TEST(SvgChart, LinearScaleUsesRoundTicks) {
  // 0 .. 7.3 in about 5 ticks: step 2 (7.3 / 5 = 1.46 -> 2), axis 0 .. 8.
  const svg::Scale s = svg::Scale::linear(0, 7.3, 0, 80, 5);
  EXPECT_DOUBLE_EQ(s.lo(), 0);
  EXPECT_DOUBLE_EQ(s.hi(), 8);
  EXPECT_EQ(s.major_ticks(), (std::vector<double>{0, 2, 4, 6, 8}));
  EXPECT_NEAR(s(4), 40, 1e-9);
  // 2.3 .. 4.2 ms in 6: step 0.5 ms (1.9 / 6 = 0.317 -> 0.5), axis 2 .. 4.5 ms.
  const svg::Scale t = svg::Scale::linear(2.3e-3, 4.2e-3, 0, 100, 6);
  EXPECT_NEAR(t.lo(), 2e-3, 1e-15);
  EXPECT_NEAR(t.hi(), 4.5e-3, 1e-15);
  EXPECT_EQ(t.major_ticks().size(), 6u);
  // A single value gets a range around it.
  const svg::Scale one = svg::Scale::linear(5, 5, 0, 100);
  EXPECT_LT(one.lo(), 5);
  EXPECT_GT(one.hi(), 5);
}

TEST(SvgChart, BinCounts) {
  // Bins of width 1 over [0, 4]: 4 falls in the last (closed) bin; -1, 5 and NaN are outside.
  const std::vector<size_t> counts = svg::bin_counts({0, 0.5, 1, 2.9, 3, 4, -1, 5, NAN}, 0, 4, 4);
  EXPECT_EQ(counts, (std::vector<size_t>{2, 1, 1, 2}));
}

// ------------------------------------------------------------ example page

// A synthetic ResNet-18-like profile (conv FLOPs from the real layer shapes at
// 224x224, times from plausible CPU rates) against 50 GB/s and 100 GFLOP/s:
// the page this test writes when MODELSTAT_HTML_EXAMPLE is set previews the
// writer without running a model (docs/report-resnet50.png is a real run).
ProfileResult resnet_like_profile() {
  std::vector<NodeSpec> specs;
  uint64_t state = 12345;
  auto jitter = [&state]() {  // deterministic 0.85 .. 1.15
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return 0.85 + 0.3 * double(state >> 11) / double(1ULL << 53);
  };
  auto conv = [&](const std::string& name, int64_t cin, int64_t cout, int64_t k, int64_t hw_out,
                  int64_t hw_in) {
    const int64_t macs = cout * hw_out * hw_out * cin * k * k;
    const int64_t flops = 2 * macs + cout * hw_out * hw_out;
    const int64_t bytes = 4 * (cin * hw_in * hw_in + cout * cin * k * k + cout + cout * hw_out * hw_out);
    specs.push_back(
        {name, "Conv", CostStatus::Exact, flops, bytes, double(flops) / (70e9 * jitter()) + 8e-6});
  };
  auto elementwise = [&](const std::string& name, const std::string& op, int64_t elements, int inputs) {
    const int64_t bytes = 4 * elements * (inputs + 1);
    specs.push_back({name, op, CostStatus::Exact, elements, bytes, double(bytes) / (28e9 * jitter()) + 3e-6});
  };
  conv("/conv1/Conv", 3, 64, 7, 112, 224);
  elementwise("/relu/Relu", "Relu", 64 * 112 * 112, 1);
  specs.push_back({"/maxpool/MaxPool", "MaxPool", CostStatus::Exact, 64 * 56 * 56 * 9,
                   4 * 64 * (112 * 112 + 56 * 56), 4 * 64 * (112 * 112 + 56 * 56) / 15e9});
  const int64_t widths[] = {64, 128, 256, 512}, sizes[] = {56, 28, 14, 7};
  int64_t cin = 64, hw_in = 56;
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t c = widths[stage], hw = sizes[stage];
    for (int block = 0; block < 2; ++block) {
      const std::string prefix = "/layer" + std::to_string(stage + 1) + "/layer" + std::to_string(stage + 1) +
                                 "." + std::to_string(block);
      const int64_t in = block == 0 ? cin : c, in_hw = block == 0 ? hw_in : hw;
      conv(prefix + "/conv1/Conv", in, c, 3, hw, in_hw);
      elementwise(prefix + "/relu/Relu", "Relu", c * hw * hw, 1);
      conv(prefix + "/conv2/Conv", c, c, 3, hw, hw);
      if (block == 0 && stage > 0) conv(prefix + "/downsample/downsample.0/Conv", in, c, 1, hw, in_hw);
      elementwise(prefix + "/Add", "Add", c * hw * hw, 2);
      elementwise(prefix + "/relu_1/Relu", "Relu", c * hw * hw, 1);
    }
    cin = c;
    hw_in = hw;
  }
  specs.push_back({"/avgpool/GlobalAveragePool", "GlobalAveragePool", CostStatus::Exact, 512 * 49,
                   4 * (512 * 49 + 512), 9e-6});
  specs.push_back({"/Flatten", "Flatten", CostStatus::Exact, 0, 0, 1.5e-6});
  specs.push_back({"/fc/Gemm", "Gemm", CostStatus::Exact, 2 * 512 * 1000 + 1000,
                   4 * (512 + 512 * 1000 + 2000), 4 * (512 + 512 * 1000 + 2000) / 20e9});

  ProfileResult p = profile_of(specs);
  p.analysis.model_path = "models/resnet18.onnx";
  p.context.device_name = "AMD EPYC 7B13 (example)";
  p.context.threads = 8;
  p.context.torch_version = "1.13.1";
  p.context.date = "2025-01-01T00:00:00Z";
  p.context.host = "example-host";
  double layer_sum = 0;
  for (const auto& s : specs) layer_sum += s.seconds;
  // Whole-model samples: a tight body a little under the layer sum, and a tail.
  std::vector<double> samples;
  for (int i = 0; i < 300; ++i) {
    double v = layer_sum * 0.96 * (0.97 + 0.06 * (jitter() - 0.85) / 0.3);
    if (i % 37 == 5) v *= 1.25;
    samples.push_back(v);
  }
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  auto pct = [&sorted](double q) {  // type 7, as the profiler's
    const double h = q * double(sorted.size() - 1);
    const size_t lo = size_t(std::floor(h));
    return sorted[lo] + (h - double(lo)) * (sorted[std::min(lo + 1, sorted.size() - 1)] - sorted[lo]);
  };
  p.whole = timing(pct(0.5), samples);
  p.whole.count = int64_t(samples.size());
  p.whole.min = sorted.front();
  p.whole.max = sorted.back();
  p.whole.p90 = pct(0.9);
  p.whole.p95 = pct(0.95);
  p.whole.p99 = pct(0.99);
  double sum = 0, sum_sq = 0;
  for (double v : samples) sum += v;
  p.whole.mean = sum / double(samples.size());
  for (double v : samples) sum_sq += (v - p.whole.mean) * (v - p.whole.mean);
  p.whole.stddev = std::sqrt(sum_sq / double(samples.size() - 1));
  p.whole.cv = p.whole.stddev / p.whole.mean;
  p.whole.median_ci_low = p.whole.median * 0.995;
  p.whole.median_ci_high = p.whole.median * 1.005;
  p.whole.stop_reason = "median 95% CI within 1% (target)";
  p.analysis.totals.params = 11689512;  // torchvision's resnet18
  for (int64_t b : {1, 2, 4, 8, 16, 32}) {
    BatchPoint point;
    point.batch = b;
    point.median = p.whole.median * (0.55 + 0.45 * double(b)) * (b >= 16 ? 1.1 : 1.0);
    point.throughput = double(b) / point.median;
    p.batch_sweep.push_back(point);
  }
  BatchPoint oom;
  oom.batch = 64;
  oom.fits = false;
  oom.failure = "out of memory";
  p.batch_sweep.push_back(oom);
  p.notices.push_back("example data: a synthetic ResNet-18-like profile, not a measurement");
  return p;
}

// The fields of a `modelstat profile -f json` document the page shows
// (docs/profile-json.md), read back for a preview; not a general reader.
ProfileResult profile_from_json(const Json& d) {
  ProfileResult p;
  auto seconds = [](const Json& j, const char* key) {
    return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
  };
  // The timings, the context and the layers through the readers `compare` uses.
  p.context = d["context"].get<RunContext>();
  p.cold.model_load = seconds(d["cold_start"], "model_load_s");
  p.cold.weight_upload = seconds(d["cold_start"], "weight_upload_s");
  p.cold.first_inference = seconds(d["cold_start"], "first_inference_s");
  p.whole = d["whole"].get<TimingSummary>();
  for (const auto& l : d["layers"]) p.layers.push_back(l.get<LayerTiming>());
  for (const auto& b : d["batch_sweep"]) {
    BatchPoint point;
    point.batch = b["batch"].get<int64_t>();
    point.fits = b["fits"].get<bool>();
    point.failure = b.value("failure", "");
    point.median = seconds(b, "median_s");
    point.throughput = seconds(b, "throughput_samples_per_s");
    p.batch_sweep.push_back(point);
  }
  p.notices = d.value("notices", std::vector<std::string>{});
  const auto& a = d["analysis"];
  p.analysis.model_path = a["model"].value("path", "");
  const auto& totals = a["totals"];
  p.analysis.totals.nodes = totals.value("nodes", int64_t(0));
  p.analysis.totals.nodes_exact = totals.value("nodes_exact", int64_t(0));
  p.analysis.totals.nodes_unknown_shape = totals.value("nodes_unknown_shape", int64_t(0));
  p.analysis.totals.nodes_unknown_op = totals.value("nodes_unknown_op", int64_t(0));
  p.analysis.totals.params = totals.value("params", int64_t(0));
  p.analysis.totals.macs = totals.value("macs", int64_t(0));
  p.analysis.totals.flops = totals.value("flops", int64_t(0));
  for (const auto& n : a["nodes"]) {
    NodeReport node;
    node.index = n["index"].get<int>();
    node.name = n["name"].get<std::string>();
    node.op_type = n["op_type"].get<std::string>();
    const std::string status = n.value("status", "exact");
    node.cost.status = status == "exact"           ? CostStatus::Exact
                       : status == "unknown_shape" ? CostStatus::UnknownShape
                                                   : CostStatus::UnknownOp;
    node.cost.macs = n.value("macs", int64_t(0));
    node.cost.flops = n.value("flops", int64_t(0));
    node.cost.bytes_read = n.value("bytes_read", int64_t(0));
    node.cost.bytes_written = n.value("bytes_written", int64_t(0));
    p.analysis.nodes.push_back(node);
  }
  p.analysis.notices = a.value("notices", std::vector<std::string>{});
  return p;
}

// The example page: the synthetic ResNet-18-like profile, or, when
// MODELSTAT_HTML_PROFILE_JSON names a `modelstat profile -f json` document,
// that real profile against illustrative (unmeasured) ceilings. Written to
// MODELSTAT_HTML_EXAMPLE when that is set.
TEST(JoinedHtml, ExamplePage) {
  JoinedReport r;
  size_t unplottable = 0;  // nodes with no FLOPs or no time
  if (const char* profile_path = std::getenv("MODELSTAT_HTML_PROFILE_JSON")) {
    std::ifstream in(profile_path);
    ASSERT_TRUE(in) << profile_path;
    const ProfileResult p = profile_from_json(Json::parse(in));
    DeviceCeilings ceilings =
        cpu_ceilings(50e9, 100e9, "example: 50 GB/s and 100 GFLOP/s, not measured on this device");
    ceilings.device_kind = p.context.device_kind;
    ceilings.device_name = p.context.device_name;
    ceilings.threads = p.context.threads;
    r = join_profile(p, ceilings);
    for (const auto& n : r.nodes) unplottable += n.flops > 0 && n.median_seconds > 0 ? 0 : 1;
  } else {
    DeviceCeilings ceilings = cpu_ceilings(50e9, 100e9);
    ceilings.device_name = "AMD EPYC 7B13 (example)";
    ceilings.threads = 8;
    ceilings.date = "2025-01-01T00:00:00Z";
    r = join_profile(resnet_like_profile(), ceilings);
    unplottable = 1;  // the Flatten: no FLOPs
  }
  const std::string html = html_of(r);
  EXPECT_FALSE(has_non_finite_token(html));
  EXPECT_EQ(count_of(element(html, "chart-scatter", "</figure>"), "class=\"pt\""),
            r.nodes.size() - unplottable);
  // Every node with FLOPs also has bytes here, so the roofline holds the same nodes.
  EXPECT_EQ(count_of(element(html, "chart-roofline", "</figure>"), "class=\"rpt"),
            r.nodes.size() - unplottable);
  if (const char* path = std::getenv("MODELSTAT_HTML_EXAMPLE")) {
    std::ofstream(path) << html;
    std::cout << "wrote " << path << " (" << html.size() << " bytes, " << r.nodes.size() << " nodes)\n";
  }
}

}  // namespace
}  // namespace modelstat

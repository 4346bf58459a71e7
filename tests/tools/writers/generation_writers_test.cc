// The generation record's rules and writers on a record built by hand (no
// LibTorch): the step curve's line, the SLO verdicts, and every format:
// figures derived by hand from the record's values, and each whole output
// pinned by a golden file (tests/data/golden/generation*).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "modelstat/error.hpp"
#include "modelstat/generation.hpp"
#include "modelstat/statistics.hpp"
#include "test_support.hpp"
#include "tools/writers/generation_writers.hpp"

namespace modelstat {
namespace {

using nlohmann::json;
using test::contains;
using test::cost_node;
using test::lines_of;
using test::parse_csv;

TimingSummary timing(std::vector<double> samples) {
  const stats::SampleStats s = stats::summarize(samples);
  TimingSummary t;
  t.count = s.count;
  t.mean = s.mean, t.median = s.median, t.stddev = s.stddev, t.cv = s.cv, t.min = s.min, t.max = s.max;
  t.p50 = s.p50, t.p90 = s.p90, t.p95 = s.p95, t.p99 = s.p99;
  t.median_ci_low = s.median_ci_low, t.median_ci_high = s.median_ci_high;
  t.rel_ci = s.median_rel_ci_half_width;
  t.stop_reason = "iteration cap";
  t.samples = std::move(samples);
  return t;
}

// A phase of two nodes: a MatMul (2 MFLOPs per token, 4 MB of weights) and a Softmax.
GenerationPhase phase(const std::string& name, int64_t tokens, int64_t context, double matmul_s, double softmax_s) {
  GenerationPhase p;
  p.name = name;
  p.tokens = tokens;
  p.context = context;
  p.bindings = {{"seq", tokens}, {"past", context - tokens}};
  AnalysisResult& a = p.profile.analysis;
  a.model_path = "models/decoder.onnx";
  a.nodes = {cost_node(0, "/h.0/mlp/MatMul", "MatMul", CostStatus::Exact, 1000000 * tokens, 2000000 * tokens,
                       4000000 + 4096 * tokens, 4096 * tokens),
             cost_node(1, "/h.0/attn/Softmax", "Softmax", CostStatus::Exact, 0, 5 * context, 4 * context, 4 * context)};
  a.totals.nodes = a.totals.nodes_exact = 2;
  a.totals.flops = 2000000 * tokens + 5 * context;
  a.totals.bytes_read = 4000000 + 4096 * tokens + 4 * context;
  a.totals.bytes_written = 4096 * tokens + 4 * context;
  p.profile.whole = timing({matmul_s + softmax_s, matmul_s + softmax_s});
  p.profile.layer_sum = timing({1.02 * (matmul_s + softmax_s), 1.02 * (matmul_s + softmax_s)});
  for (int k = 0; k < 2; ++k) {
    LayerTiming l;
    l.index = k;
    l.name = a.nodes[size_t(k)].name;
    l.op_type = a.nodes[size_t(k)].op_type;
    l.time = timing({k == 0 ? matmul_s : softmax_s, k == 0 ? matmul_s : softmax_s});
    p.profile.layers.push_back(l);
  }
  p.profile.context.threads = 1;
  p.profile.context.device_kind = "cpu";
  return p;
}

// P = 4, G = 3, batch 1, two measured generations. Steps (ms): generation 0: 10 (TTFT), 4, 6;
// generation 1: 12, 5, 7. TPOT 5 and 6 ms; ITL 4, 6, 5, 7 ms; the step curve: context 5 -> 4.5 ms,
// context 6 -> 6.5 ms (medians of 4, 5 and of 6, 7).
GenerationResult sample_generation() {
  GenerationResult r;
  r.model_path = "models/decoder.onnx";
  r.context.device_name = "Test CPU";
  r.context.device_kind = "cpu";
  r.context.threads = 1;
  r.context.dtype = "fp32";
  r.context.batch = 1;
  r.context.date = "2024-05-01T12:00:00Z";
  r.context.host = "test-host";
  r.context.torch_version = "1.13.0";
  r.prompt = 4;
  r.generate = 3;
  r.batch = 1;
  r.tokens = "greedy";
  r.kv_cache.tensors = {{"past_key_values.0.key", "present.0.key", 2}, {"past_key_values.0.value", "present.0.value", 2}};
  r.kv_cache.recognised_by = "name";
  r.kv_cache.layout = "separate";
  r.kv_cache.max_context = 128;
  r.kv_cache.max_context_source = "position table 'wpe.weight' (128 rows)";
  r.kv_cache.bytes_per_token = 512;
  r.kv_cache.past_bytes = 5 * 512, r.kv_cache.present_bytes = 6 * 512;
  r.kv_cache.past_length = 5, r.kv_cache.present_length = 6;
  r.input_roles = {"input_ids: the tokens [batch, new]", "past_key_values.0.key: KV cache: the previous step's present.0.key"};
  r.logits = "logits";
  r.warmup_generations = 1;
  r.ttft = timing({10e-3, 12e-3});
  r.tpot = timing({5e-3, 6e-3});
  r.itl = timing({4e-3, 6e-3, 5e-3, 7e-3});
  r.end_to_end = timing({20e-3, 24e-3});
  r.prompt_tokens_per_second = {375.0, 35.355339059327378, {400.0, 4.0 / 12e-3}};
  r.generation_tokens_per_second = {183.33333333333334, 23.570226039551585, {200.0, 2.0 / 12e-3}};
  r.step_curve = {{5, 4.5e-3}, {6, 6.5e-3}};
  fit_step_curve(r);
  r.peak_memory_bytes = 1 << 20;
  r.memory_method = "counted";
  r.kv_cache_bytes = 6 * 512;
  r.prompt_tokens = {{1, 2, 3, 4}};
  r.generated_tokens = {{9, 8, 7}};
  r.phases = {phase("prefill", 4, 4, 8e-3, 1e-3), phase("decode", 1, 6, 4e-3, 2e-3)};
  r.phases[0].loop_median_seconds = 11e-3;
  r.phases[1].loop_median_seconds = 6.5e-3;
  r.phases[0].forecast_seconds = 10e-3, r.phases[0].forecast_error = -1.0 / 11;
  r.phases[1].forecast_seconds = 7.8e-3, r.phases[1].forecast_error = 0.2;
  r.forecast_ceilings = "measured ceilings of Test CPU, 1 thread";
  r.slo = Slo{"ttft=11ms,tpot=30ms", 11e-3, 30e-3, ""};
  judge_slo(r);
  r.notices = {"a notice"};
  return r;
}

std::string render(const std::string& format, const GenerationResult& r, ReportOptions options = {}) {
  std::ostringstream out;
  make_generation_writer(format)->write(r, options, out);
  return out.str();
}

TEST(Generation, StepCurveLineAndSloVerdictsByHand) {
  const GenerationResult r = sample_generation();
  // Two points (5, 4.5 ms) and (6, 6.5 ms): slope 2 ms a token, intercept 4.5 - 5 * 2 = -5.5 ms.
  EXPECT_NEAR(r.step_slope_seconds_per_token, 2e-3, 1e-15);
  EXPECT_NEAR(r.step_intercept_seconds, -5.5e-3, 1e-15);
  // TTFT p99 of {10, 12} ms: 10 + 0.99 * 2 = 11.98 ms > 11 ms: not met; TPOT p99 5.99 ms <= 30 ms: met.
  ASSERT_EQ(r.slo_verdicts.size(), 2u);
  EXPECT_EQ(r.slo_verdicts[0].metric, "ttft");
  EXPECT_NEAR(r.slo_verdicts[0].measured_seconds, 11.98e-3, 1e-12);
  EXPECT_FALSE(r.slo_verdicts[0].met);
  EXPECT_TRUE(r.slo_verdicts[1].met);
  EXPECT_FALSE(r.slo_met());
  // least_squares_line on three points of one line, and on a vertical set.
  const stats::LineFit line = stats::least_squares_line({1, 2, 3}, {5, 7, 9});
  EXPECT_DOUBLE_EQ(line.slope, 2.0);
  EXPECT_DOUBLE_EQ(line.intercept, 3.0);
  const stats::LineFit flat = stats::least_squares_line({2, 2}, {1, 3});
  EXPECT_DOUBLE_EQ(flat.slope, 0.0);
  EXPECT_DOUBLE_EQ(flat.intercept, 2.0);
  EXPECT_EQ(parse_token_choice("random"), TokenChoice::Random);
  EXPECT_THROW(parse_token_choice("beam"), Error);
}

TEST(Generation, TableAndJsonFigures) {
  GenerationResult r = sample_generation();
  const std::string text = render("table", r);
  EXPECT_EQ(lines_of(text)[0], "modelstat generation: models/decoder.onnx (prompt 4, 3 generated, batch 1)");
  for (const char* part : {"pp4", "tg2", "375 \xC2\xB1 35.4", "183 \xC2\xB1 23.6", "2.00 s per 1k tokens",
                           "4.50 ms at context 5", "NOT MET", "+20.0%", "-9.1%", "max context  128 tokens"})
    EXPECT_TRUE(contains(text, part)) << part << "\n" << text;
  const json doc = json::parse(render("json", r));
  EXPECT_EQ(doc["kind"], "generation");
  EXPECT_EQ(doc["schema_version"], kGenerationJsonSchemaVersion);
  EXPECT_EQ(doc["request"]["decode_steps"], 2);
  EXPECT_DOUBLE_EQ(doc["step_slope_s_per_1k_tokens"].get<double>(), 2.0);
  EXPECT_EQ(doc["itl"]["samples_s"].size(), 4u);
  EXPECT_EQ(doc["kv_cache"]["layout"], "separate");
  EXPECT_EQ(doc["kv_cache"]["max_context"], 128);
  EXPECT_FALSE(doc["slo"]["met"].get<bool>());
  ASSERT_EQ(doc["phases"].size(), 2u);
  // The decode phase: layer sum 1.02 x the clean step.
  EXPECT_NEAR(doc["phases"][1]["layer_sum_vs_clean"].get<double>(), 0.02, 1e-12);
  EXPECT_DOUBLE_EQ(doc["phases"][1]["forecast_error"].get<double>(), 0.2);
  EXPECT_TRUE(doc["phases"][1]["roofline_nodes"].is_null());
  // The MatMul of the decode step: 2 MFLOPs in 4 ms = 0.5 GFLOP/s, (4,000,000 + 8,192) B / 4 ms.
  EXPECT_DOUBLE_EQ(doc["phases"][1]["layers"][0]["achieved_gflops"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(doc["phases"][1]["layers"][0]["achieved_gbps"].get<double>(), 4008192 / 4e-3 / 1e9);
}

TEST(Generation, CsvStepAndNodeRows) {
  const auto rows = parse_csv(render("csv", sample_generation()));
  ASSERT_EQ(rows.size(), 1u + 2 * 3 + 2 * 2);  // header, 2 generations x 3 steps, 2 phases x 2 nodes
  EXPECT_EQ(rows[0][0], "kind");
  // Generation 1: TTFT 12 ms at context 4, then 5 and 7 ms at contexts 5 and 6.
  EXPECT_EQ(rows[4], (std::vector<std::string>{"step", "1", "0", "prefill", "4", "", "", "0.012", "", "", "", "", ""}));
  EXPECT_EQ(rows[6][4], "6");
  EXPECT_DOUBLE_EQ(std::stod(rows[6][7]), 7e-3);
  EXPECT_EQ(rows[9][0], "node");
  EXPECT_EQ(rows[9][3], "decode");
  EXPECT_EQ(rows[9][5], "/h.0/mlp/MatMul");
}

TEST(WritersGolden, GenerationEveryFormat) {
  test::expect_golden_formats("generation", {"table", "json", "csv", "md", "html"},
                              [&](const std::string& format) { return render(format, sample_generation()); },
                              {"test-host", "1.13.0"});
}

// report --generate: each phase joined on a CPU roofline of 100 GFLOP/s and 20 GB/s (ridge 5 FLOP/B).
TEST(WritersGolden, GenerationReportEveryFormat) {
  GenerationResult r = sample_generation();
  DeviceCeilings c = test::cpu_ceilings(2e10, 1e11);
  c.threads = 1;
  c.date = "2024-04-30";
  c.host = "test-host";
  c.matmul[0].best_size = 1024;
  join_generation(r, c);
  ASSERT_TRUE(r.phases[1].joined.has_value());
  // The decode MatMul: 2 MFLOPs over 4,008,192 B, 0.5 FLOP/B: memory-bound; the prefill's, 8 MFLOPs over
  // 4,032,768 B, 1.98 FLOP/B, memory-bound too below the ridge.
  EXPECT_EQ(r.phases[1].joined->nodes[0].bound, Bound::Memory);
  const json doc = json::parse(render("json", r));
  EXPECT_EQ(doc["phases"][1]["roofline_nodes"][0]["bound"], "memory");
  EXPECT_DOUBLE_EQ(doc["roofline"]["peak_flops_per_s"].get<double>(), 1e11);
  const std::string text = render("table", r);
  EXPECT_TRUE(contains(text, "Per node, prefill against decode@6")) << text;
  test::expect_golden_formats("generation-report", {"table", "json", "md"},
                              [&](const std::string& format) { return render(format, r); },
                              {"test-host", "1.13.0"});
  // The page as what the roofline join adds to generation.html.
  test::expect_golden_variant("generation-report.html.diff", render("html", r), render("html", sample_generation()),
                              {"test-host", "1.13.0"});
}

}  // namespace
}  // namespace modelstat

// `modelstat profile --generate P:G` and `report --generate P:G` through the
// binary: the document's shape in every format (counts that follow from P, G
// and the number of measured generations, the phases and their nodes), and
// every bad input ending in one line and its exit code: no KV cache (2, naming
// what was looked for and --kv), more tokens than the model's context (2,
// refused before anything runs), out of memory at a long context (2, with the
// last context that fitted), an input the loop cannot feed, bad flags, an SLO
// not met (3). Timings are not asserted (bench/ measures them).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>
#include <sstream>
#include <string>
#include <vector>

#include "profiler/onnx_builder.hpp"
#include "test_support.hpp"

namespace {

using RunResult = modelstat::test::CliResult;

std::string sample(const std::string& name) { return std::string(MODELSTAT_SOURCE_DIR) + "/sample_models/" + name; }

std::string temp_path(const std::string& name) {
  return testing::TempDir() + "/modelstat_generate_" + std::to_string(getpid()) + "_" + name;
}

using modelstat::test::read_file;

RunResult run(const std::string& args) { return modelstat::test::run_modelstat_cli(args); }

// Short budgets: the point is the document's shape.
const char* const kQuick = " --threads 1 --warmup 1 --iters 2 --max-time 0.3";

void expect_one_line_error(const RunResult& r, int code, const std::vector<std::string>& parts) {
  EXPECT_EQ(r.exit_code, code) << r.err;
  EXPECT_EQ(r.err.rfind("modelstat: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line:\n" << r.err;
  for (const std::string& part : parts) EXPECT_NE(r.err.find(part), std::string::npos) << part << " in " << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(CliGenerate, JsonCountsFollowFromPromptGenerateAndGenerations) {
  const RunResult r = run("profile " + sample("tiny_gpt2_kv.onnx") + " --generate 8:6" + kQuick + " -f json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["kind"], "generation");
  EXPECT_EQ(doc["request"]["prompt"], 8);
  EXPECT_EQ(doc["request"]["generate"], 6);
  EXPECT_EQ(doc["request"]["decode_steps"], 5);
  const int64_t generations = doc["ttft"]["count"].get<int64_t>();
  EXPECT_GE(generations, 2);
  EXPECT_EQ(doc["end_to_end"]["count"], generations);
  EXPECT_EQ(doc["tpot"]["count"], generations);
  EXPECT_EQ(doc["itl"]["count"], 5 * generations);  // every decode step of every generation
  EXPECT_EQ(doc["prompt_tokens_per_s"]["samples"].size(), size_t(generations));
  EXPECT_EQ(doc["llama_bench_names"]["prompt"], "pp8");
  EXPECT_EQ(doc["llama_bench_names"]["generation"], "tg5");
  // The step curve: contexts 9 .. 13, one point per decode step.
  ASSERT_EQ(doc["step_curve"].size(), 5u);
  for (size_t k = 0; k < 5; ++k) EXPECT_EQ(doc["step_curve"][k]["context"], 9 + int64_t(k));
  EXPECT_TRUE(doc["step_slope_s_per_1k_tokens"].is_number());
  ASSERT_EQ(doc["tokens"]["prompt"].size(), 1u);
  EXPECT_EQ(doc["tokens"]["prompt"][0].size(), 8u);
  EXPECT_EQ(doc["tokens"]["generated"][0].size(), 6u);
  for (const auto& t : doc["tokens"]["generated"][0]) EXPECT_LT(t.get<int64_t>(), 256);
  EXPECT_EQ(doc["kv_cache"]["layout"], "separate");
  EXPECT_EQ(doc["kv_cache"]["recognised_by"], "name");
  EXPECT_EQ(doc["kv_cache"]["max_context"], 128);
  // At the end: 13 rows of 2 layers x (key + value) x 4 heads x 16 floats.
  EXPECT_EQ(doc["memory"]["kv_cache_bytes"], 13 * 2 * 2 * 4 * 16 * 4);
  EXPECT_GT(doc["memory"]["peak_bytes"].get<int64_t>(), doc["memory"]["kv_cache_bytes"].get<int64_t>());
  // The prefill and the decode steps at the first, middle and last context, each timed per node.
  ASSERT_EQ(doc["phases"].size(), 4u);
  const std::vector<std::pair<std::string, int64_t>> phases = {{"prefill", 8}, {"decode", 9}, {"decode", 11},
                                                               {"decode", 13}};
  for (size_t i = 0; i < 4; ++i) {
    const auto& p = doc["phases"][i];
    EXPECT_EQ(p["name"], phases[i].first);
    EXPECT_EQ(p["context"], phases[i].second);
    EXPECT_EQ(p["tokens"], i == 0 ? 8 : 1);
    EXPECT_EQ(p["bindings"]["past"], i == 0 ? 0 : phases[i].second - 1);
    EXPECT_GT(p["clean_step"]["count"].get<int64_t>(), 0);
    EXPECT_GT(p["layers"].size(), 100u);
    EXPECT_EQ(p["layers"].size(), doc["phases"][0]["layers"].size());
    EXPECT_TRUE(p["roofline_nodes"].is_null());  // profile: no join
  }
  EXPECT_TRUE(doc["slo"].is_null());
}

TEST(CliGenerate, SharedBufferModelAndEveryTextFormat) {
  const std::string base = "profile " + sample("tiny_gqa_kv.onnx") + " --generate 6:5 --no-layers" + kQuick;
  const RunResult json = run(base + " -f json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["kv_cache"]["layout"], "shared buffer");
  // One buffer of prompt + generated rows: 2 layers x 2 tensors x 2 KV heads x 11 rows x 16 floats.
  EXPECT_EQ(doc["memory"]["kv_cache_bytes"], 2 * 2 * 2 * 11 * 16 * 4);
  ASSERT_EQ(doc["phases"].size(), 4u);
  EXPECT_TRUE(doc["phases"][0]["layers"].empty());  // --no-layers
  const RunResult table = run(base);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  for (const char* part : {"TTFT (prefill + first token)", "TPOT (decode step mean)", "pp6", "tg4",
                           "shared buffer (ONNX Runtime GenAI's", "per 1k tokens", "attention_mask: ones"})
    EXPECT_NE(table.out.find(part), std::string::npos) << part << " in\n" << table.out;
  const RunResult md = run(base + " -f md");
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_NE(md.out.find("| TTFT (prefill + first token) |"), std::string::npos) << md.out;
  const RunResult csv = run(base + " -f csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  std::istringstream lines(csv.out);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line.rfind("kind,generation,step,phase,context,", 0), 0u) << line;
  size_t steps = 0, prefills = 0;
  while (std::getline(lines, line)) {
    steps += line.rfind("step,", 0) == 0;
    prefills += line.find(",prefill,6,") != std::string::npos;  // step 0 of each generation, context P
  }
  EXPECT_GE(prefills, 2u);
  EXPECT_EQ(steps, 5 * prefills);  // G steps a generation: the prefill and 4 decode steps
}

// CPU ceilings for one thread: 100 GFLOP/s fp32, 20 GB/s (test_support.hpp).
std::string write_ceilings() {
  return modelstat::test::write_test_cpu_ceilings(temp_path("ceilings.json"));
}

TEST(CliGenerate, ReportJoinsEachPhaseAndForecastsIt) {
  const std::string html = temp_path("gen.html"), csv = temp_path("gen.csv");
  const RunResult r = run("report " + sample("tiny_gpt2_kv.onnx") + " --generate 8:4" + kQuick + " --ceilings " +
                          write_ceilings() + " --group-by block -f json --html " + html + " --csv " + csv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["roofline"]["peak_flops_per_s"], 1e11);
  EXPECT_EQ(doc["group_by"], "block");
  ASSERT_EQ(doc["phases"].size(), 4u);  // prefill; decode at 9, 10, 11
  for (const auto& p : doc["phases"]) {
    EXPECT_EQ(p["roofline_nodes"].size(), p["layers"].size());
    EXPECT_TRUE(p["forecast_s"].is_number());
    EXPECT_TRUE(p["forecast_error"].is_number());
    EXPECT_FALSE(p["groups"].empty());
    for (const auto& n : p["roofline_nodes"]) EXPECT_TRUE(n.contains("bound"));
  }
  const std::string page = read_file(html);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find("<svg"), std::string::npos);
  EXPECT_NE(page.find("Decode step time against context"), std::string::npos);
  EXPECT_EQ(page.find("http://"), page.find("http://www.w3.org/2000/svg"));  // nothing external
  const std::string table = read_file(csv);
  EXPECT_NE(table.find("\nnode,,,prefill,8,"), std::string::npos);
  EXPECT_NE(table.find("\nnode,,,decode,11,"), std::string::npos);
}

TEST(CliGenerate, SloVerdictsAndTheirExitCode) {
  const std::string base = "profile " + sample("tiny_gpt2_kv.onnx") + " --generate 4:3 --no-layers" + kQuick;
  const RunResult missed = run(base + " --slo ttft=1ns,tpot=1ns");
  EXPECT_EQ(missed.exit_code, 3) << missed.err;
  EXPECT_NE(missed.out.find("NOT MET"), std::string::npos) << missed.out;
  // MLPerf's llama3_1-8b Server limits (2 s, 100 ms) on a toy decoder.
  const RunResult met = run(base + " --slo mlperf:llama3_1-8b -f json");
  ASSERT_EQ(met.exit_code, 0) << met.err;
  const auto doc = nlohmann::json::parse(met.out);
  EXPECT_EQ(doc["slo"]["ttft_limit_s"], 2.0);
  EXPECT_EQ(doc["slo"]["tpot_limit_s"], 0.1);
  EXPECT_TRUE(doc["slo"]["met"].get<bool>());
  EXPECT_EQ(doc["slo"]["verdicts"].size(), 2u);
}

TEST(CliGenerate, BadInputsEndInOneLineWithTheirExitCode) {
  const std::string quick = kQuick;
  // No KV cache: what was looked for, and the flag that names one.
  expect_one_line_error(run("profile " + sample("tiny_bert.onnx") + " --generate 4:4" + quick), 2,
                        {"no KV cache recognised", "past*", "present*", "--kv PAST=PRESENT"});
  // More tokens than the position table holds: refused before anything runs.
  expect_one_line_error(run("profile " + sample("tiny_gpt2_kv.onnx") + " --generate 100:29" + quick), 2,
                        {"needs 129 tokens of context", "holds at most 128", "position table 'wpe.weight'",
                         "generate at most 28"});
  expect_one_line_error(run("profile " + sample("tiny_gqa_kv.onnx") + " --generate 120:9" + quick), 2,
                        {"holds at most 128", "GroupQueryAttention cos_cache"});
  // --kv naming part of the cache: the other cache inputs are inputs the loop cannot feed.
  expect_one_line_error(run("profile " + sample("tiny_gpt2_kv.onnx") + " --generate 4:4" + quick +
                            " --kv past_key_values.0.key=present.0.key"),
                        2, {"past_key_values.0.value", "none of what a generation step feeds", "--kv"});
  expect_one_line_error(run("profile " + sample("tiny_gpt2_kv.onnx") + " --generate 4:4" + quick + " --kv nope=present.0.key"),
                        2, {"--kv nope=present.0.key", "is not a graph input"});
  expect_one_line_error(run("profile " + sample("tiny_gpt2_kv.onnx") + " --generate 4x4" + quick), 2,
                        {"--generate takes P:G"});
  expect_one_line_error(run("profile " + sample("tiny_gpt2_kv.onnx") + " --generate 4:4 --slo ttft=fast" + quick), 2,
                        {"--slo ttft"});
  expect_one_line_error(run("profile " + sample("tiny_gpt2_kv.onnx") + " --generate 4:4 --slo mlperf:gpt-9" + quick),
                        2, {"no such MLPerf profile", "mlperf:llama3_1-8b-interactive"});
  expect_one_line_error(run("profile " + sample("tiny_gpt2_kv.onnx") + " --generate 4:1 --slo tpot=1s" + quick), 2,
                        {"TPOT", "at least 2 tokens"});
  expect_one_line_error(run("profile " + sample("tiny_gpt2_kv.onnx") + " --generate 4:4 --batch-sweep 1,2" + quick),
                        2, {"--generate and --batch-sweep do not combine"});
  expect_one_line_error(run("profile " + sample("tiny_gpt2_kv.onnx") + " --generate 4:4 --dim past=3" + quick), 2,
                        {"has no symbolic sequence dim", "--dim"});
}

// A cache of 16 MiB a token ([batch, 1, past, 4 Mi] floats; the step's row is the
// token id times a constant row): under a 3 GB address-space limit the loop runs
// out of memory some tens of tokens in, is caught, and names that context and the
// last one that fitted (or, on a host with less free memory than the last step
// needs, is refused before it runs).
TEST(CliGenerate, OutOfMemoryAtALongContextNamesTheLastContextThatFitted) {
  using modelstat::test::add_node;
  constexpr int64_t kRow = int64_t(1) << 22;
  onnx::ModelProto proto = modelstat::test::new_model(17);
  onnx::GraphProto* g = proto.mutable_graph();
  auto info = [](onnx::ValueInfoProto* v, const std::string& name, int elem, const std::vector<std::string>& dims) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    for (const std::string& d : dims) {
      auto* dim = tt->mutable_shape()->add_dim();
      if (std::isdigit(static_cast<unsigned char>(d[0]))) dim->set_dim_value(std::stoll(d));
      else dim->set_dim_param(d);
    }
  };
  info(g->add_input(), "input_ids", onnx::TensorProto::INT64, {"batch", "seq"});
  info(g->add_input(), "past_key_values.0.key", onnx::TensorProto::FLOAT, {"batch", "1", "past", std::to_string(kRow)});
  info(g->add_output(), "logits", onnx::TensorProto::FLOAT, {"batch", "1", "1"});
  info(g->add_output(), "present.0.key", onnx::TensorProto::FLOAT, {"batch", "1", "total", std::to_string(kRow)});
  modelstat::test::float_init(g, "row", {1, 1, 1, kRow}, std::vector<float>(size_t(kRow), 0.5f));
  modelstat::test::int64_init(g, "axes_13", {2}, {1, 3});
  modelstat::test::int64_init(g, "axes_23", {2}, {2, 3});
  modelstat::test::int64_init(g, "axes_2", {1}, {2});
  modelstat::test::int_attr(add_node(g, "Cast", {"input_ids"}, {"ids_f"}), "to", onnx::TensorProto::FLOAT);
  add_node(g, "Unsqueeze", {"ids_f", "axes_13"}, {"ids4"});
  add_node(g, "Mul", {"ids4", "row"}, {"rows"});
  modelstat::test::int_attr(add_node(g, "Concat", {"past_key_values.0.key", "rows"}, {"present.0.key"}), "axis", 2);
  modelstat::test::int_attr(add_node(g, "ReduceSum", {"present.0.key", "axes_23"}, {"sums"}), "keepdims", 0);
  add_node(g, "Unsqueeze", {"sums", "axes_2"}, {"logits"});
  const std::string file = temp_path("big_cache.onnx");
  modelstat::test::save_model(proto, file);

  const RunResult r =
      modelstat::test::run_shell_command("ulimit -v 3000000; exec " + std::string(MODELSTAT_BINARY) +
                                         " profile " + file + " --generate 2:150 --no-layers" + kQuick);
  ASSERT_NO_FATAL_FAILURE(modelstat::test::expect_one_line_usage_error(r));
  const std::string& err = r.err;
  const bool caught = err.find("out of memory at context ") != std::string::npos;
  const bool refused = err.find("does not fit in this machine's memory") != std::string::npos;
  EXPECT_TRUE(caught || refused) << err;
  if (caught) {
    // "out of memory at context C tokens; the last context that fitted: C - 1".
    const size_t at = err.find("out of memory at context ") + 25;
    const int64_t context = std::stoll(err.substr(at));
    const size_t fitted = err.find("the last context that fitted: ");
    ASSERT_NE(fitted, std::string::npos) << err;
    EXPECT_EQ(std::stoll(err.substr(fitted + 30)), context - 1) << err;
    EXPECT_GT(context, 2);
    EXPECT_LT(context, 152);
  }
}

}  // namespace

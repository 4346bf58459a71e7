// End-to-end `modelstat report` through the binary on sample_models/tiny_cnn.onnx
// with a ceilings file the test writes: every format parses and has its
// shape, the extra outputs of one run agree with each other, and bad flags
// exit 2 before anything is measured. Timings are not asserted (bench/).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "profiler/onnx_builder.hpp"
#include "test_support.hpp"

namespace {

using RunResult = modelstat::test::CliResult;

std::string temp_path(const std::string& name) {
  return testing::TempDir() + "/modelstat_report_" + std::to_string(getpid()) + "_" + name;
}

using modelstat::test::read_file;

RunResult run(const std::string& args, const std::string& env = {}) {
  return modelstat::test::run_modelstat_cli(args, env);
}

std::string model() { return std::string(MODELSTAT_SOURCE_DIR) + "/sample_models/tiny_cnn.onnx"; }

// CPU ceilings for one thread: 100 GFLOP/s fp32, 20 GB/s (test_support.hpp).
std::string write_ceilings() {
  return modelstat::test::write_test_cpu_ceilings(temp_path("ceilings.json"));
}

// Short budgets: the point is the report's shape, not the numbers.
const char* const kQuick = " --threads 1 --warmup 1 --warmup-time 0 --iters 3 --min-time 0 --max-time 0.3";

// The subgraph nodes of a Loop (tests/profiler/onnx_builder.hpp) join the
// analysis's subgraph rows by name, in the JSON and under their parent in CSV.
TEST(CliReport, SubgraphNodesJoinTheirAnalysisRows) {
  const std::string file = temp_path("loop.onnx");
  modelstat::test::save_model(modelstat::test::loop_five_model(), file);
  const std::string csv_file = temp_path("loop.csv");
  const RunResult r =
      run("report " + file + kQuick + " --ceilings " + write_ceilings() + " -f json --csv " + csv_file);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["subgraph_nodes"].size(), 3u);
  const auto& matmul = doc["subgraph_nodes"][0];
  EXPECT_EQ(matmul["name"], "Loop_2/body/MatMul_1");
  EXPECT_EQ(matmul["calls_per_run"].get<double>(), 5.0);
  EXPECT_EQ(matmul["cost_status"], "exact");
  EXPECT_EQ(matmul["macs"], 160);  // [2, 4] x [4, 4]: 32 MACs a trip, 5 trips
  const std::string csv = read_file(csv_file);
  const size_t loop = csv.find("\n1,Loop_2,"), body = csv.find("\n1,Loop_2/body/MatMul_1,"),
               neg = csv.find("\n2,Neg_3,");
  EXPECT_LT(loop, body);
  EXPECT_LT(body, neg);
  std::remove(file.c_str());
  std::remove(csv_file.c_str());
}

TEST(CliReport, EveryFormatFromOneRun) {
  const std::string ceilings = write_ceilings();
  const std::string json_file = temp_path("report.json"), csv_file = temp_path("report.csv"),
                    md_file = temp_path("report.md"), trace_file = temp_path("report.trace.json");
  const RunResult r = run("report " + model() + kQuick + " --ceilings " + ceilings + " --json " + json_file +
                          " --csv " + csv_file + " --md " + md_file + " --trace " + trace_file);
  ASSERT_EQ(r.exit_code, 0) << r.err;

  // Table on stdout.
  for (const char* needle : {"modelstat report: ", "Roofline ceilings", "measured 2024-05-01 on test",
                             "100 GFLOP/s (fp32 matmul)", "20.0 GB/s", "5.00 FLOP/B", "Hotspots (top 10 by median time)",
                             "Per-node roofline (14 nodes, graph order)", "By op type (by time)",
                             "the ceilings were measured on 'test cpu'"})
    EXPECT_NE(r.out.find(needle), std::string::npos) << "missing: " << needle << "\n" << r.out;

  // JSON: the joined figures and the whole profile document.
  const auto doc = nlohmann::json::parse(read_file(json_file));
  EXPECT_EQ(doc["kind"], "report");
  EXPECT_EQ(doc["profile"]["kind"], "profile");
  const size_t nodes = doc["profile"]["analysis"]["nodes"].size();
  EXPECT_EQ(nodes, 14u);
  ASSERT_EQ(doc["nodes"].size(), nodes);
  EXPECT_EQ(doc["profile"]["layers"].size(), nodes);
  EXPECT_EQ(doc["profile"]["whole"]["samples_s"].size(), doc["profile"]["whole"]["count"].get<size_t>());
  EXPECT_DOUBLE_EQ(doc["roofline"]["ridge_flops_per_byte"].get<double>(), 5.0);
  EXPECT_EQ(doc["context"]["threads"], 1);
  double shares = 0;
  for (const auto& n : doc["nodes"]) {
    shares += n["share_of_time"].get<double>();
    // The bound follows the intensity and the ridge (5 FLOP/B).
    if (n["bound"] == "compute") {
      EXPECT_GE(n["arithmetic_intensity"].get<double>(), 5.0) << n.dump();
    } else if (n["bound"] == "memory") {
      EXPECT_LT(n["arithmetic_intensity"].get<double>(), 5.0) << n.dump();
    }
  }
  EXPECT_NEAR(shares, 1.0, 1e-9);
  // fit's forecast with the same ceilings: the whole model's is the sum of its nodes', and its
  // error is against the whole-model median.
  ASSERT_TRUE(doc["whole"].contains("forecast_s")) << doc["whole"].dump();
  double forecast_sum = 0;
  for (const auto& n : doc["nodes"]) forecast_sum += n.value("forecast_s", 0.0);
  EXPECT_GT(forecast_sum, 0);
  EXPECT_NEAR(forecast_sum, doc["whole"]["forecast_s"].get<double>(), 1e-12);
  EXPECT_NEAR(doc["whole"]["forecast_error"].get<double>(),
              doc["whole"]["forecast_s"].get<double>() / doc["whole"]["median_s"].get<double>() - 1, 1e-9);
  EXPECT_NE(r.out.find("fc/meas"), std::string::npos) << r.out;

  // CSV: a header and one row per node, the same nodes as the JSON.
  std::istringstream csv(read_file(csv_file));
  std::string line;
  size_t rows = 0;
  ASSERT_TRUE(std::getline(csv, line));
  EXPECT_EQ(line.rfind("index,name,op_type,cost_status,", 0), 0u) << line;
  while (std::getline(csv, line)) ++rows;
  EXPECT_EQ(rows, nodes);

  // Markdown.
  const std::string md = read_file(md_file);
  EXPECT_EQ(md.rfind("# modelstat report: ", 0), 0u);
  EXPECT_NE(md.find("## Per-node roofline"), std::string::npos);

  // Trace: one complete event per node on track 1, back to back from 0 (no copies on the CPU).
  const auto trace = nlohmann::json::parse(read_file(trace_file));
  double end = 0, sum = 0;
  size_t drawn = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X" || e["tid"] != 1) continue;
    EXPECT_NEAR(e["ts"].get<double>(), end, 1e-6) << e.dump();
    end = e["ts"].get<double>() + e["dur"].get<double>();
    sum += e["dur"].get<double>();
    ++drawn;
  }
  EXPECT_EQ(drawn, nodes);
  EXPECT_NEAR(sum, trace["otherData"]["iteration_layer_sum_us"].get<double>(), 1e-6);
}

// --group-by with a regex on tiny_bert (--dim seq=16): its two layers
// (65 nodes each, from node 14 and node 88; tests/analyzer/grouping_test.cc
// counts them) and the 35 other nodes; every format from one run, the group
// sums equal to the node sums of the same document.
TEST(CliReport, GroupByRegexInEveryFormat) {
  const std::string ceilings = write_ceilings();
  const std::string bert = std::string(MODELSTAT_SOURCE_DIR) + "/sample_models/tiny_bert.onnx --dim seq=16";
  const std::string json_file = temp_path("groups.json"), csv_file = temp_path("groups.csv"),
                    md_file = temp_path("groups.md"), html_file = temp_path("groups.html");
  const RunResult r = run("report " + bert + kQuick + " --ceilings " + ceilings +
                          R"( --group-by 're:^/layers\.(\d+)/' --json )" + json_file + " --csv " + csv_file +
                          " --md " + md_file + " --html " + html_file);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(R"(Per-group roofline (--group-by re:^/layers\.(\d+)/: 3 groups of 165 nodes)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("Per-node roofline"), std::string::npos);

  const auto doc = nlohmann::json::parse(read_file(json_file));
  ASSERT_EQ(doc["groups"].size(), 3u);
  const std::vector<std::tuple<std::string, int, int>> expected = {
      {"(other)", 0, 35}, {"0", 14, 65}, {"1", 88, 65}};
  double seconds = 0;
  int64_t flops = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto& g = doc["groups"][i];
    EXPECT_EQ(g["key"], std::get<0>(expected[i]));
    EXPECT_EQ(g["first_index"], std::get<1>(expected[i]));
    EXPECT_EQ(g["count"], std::get<2>(expected[i]));
    seconds += g["time_s"].get<double>();
    flops += g["flops"].get<int64_t>();
  }
  const auto& layer0 = doc["groups"][1];
  EXPECT_DOUBLE_EQ(layer0["achieved_flops_per_s"].get<double>(),
                   double(layer0["flops"].get<int64_t>()) / layer0["time_s"].get<double>());
  double node_seconds = 0;
  int64_t node_flops = 0;
  for (const auto& n : doc["nodes"]) {
    node_seconds += n["median_s"].get<double>();
    // A fused group's member keeps its own cost on its row; its head's row counts it too.
    if (!n.contains("fused_into")) node_flops += n["flops"].get<int64_t>();
  }
  EXPECT_NEAR(seconds, node_seconds, 1e-9 * node_seconds);
  EXPECT_EQ(flops, node_flops);
  EXPECT_EQ(flops, doc["whole"]["flops"].get<int64_t>());

  const std::vector<std::string> csv = modelstat::test::lines_of(read_file(csv_file));
  ASSERT_EQ(csv.size(), 4u);
  EXPECT_EQ(csv[0].rfind("group,first_index,count,", 0), 0u) << csv[0];
  EXPECT_EQ(csv[2].rfind("0,14,65,", 0), 0u) << csv[2];
  EXPECT_NE(read_file(md_file).find("## Per-group roofline (--group-by re:"), std::string::npos);
  EXPECT_NE(read_file(html_file).find("<section id=\"groups\">"), std::string::npos);
}

TEST(CliReport, FormatsOnStdout) {
  const std::string ceilings = write_ceilings();
  for (const char* format : {"json", "trace", "csv", "md"}) {
    const RunResult r = run("report " + model() + kQuick + " --ceilings " + ceilings + " -f " + format + " --top 3");
    ASSERT_EQ(r.exit_code, 0) << format << ": " << r.err;
    if (std::string(format) == "json") {
      const auto doc = nlohmann::json::parse(r.out);
      EXPECT_EQ(doc["hotspots"].size(), 3u);
    } else if (std::string(format) == "trace") {
      EXPECT_TRUE(nlohmann::json::parse(r.out)["traceEvents"].is_array());
    } else if (std::string(format) == "csv") {
      EXPECT_EQ(r.out.rfind("index,name,", 0), 0u);
    } else {
      EXPECT_NE(r.out.find("## Hotspots (top 3 by median time)"), std::string::npos);
    }
  }
}

TEST(CliReport, SavedCeilingsOfThisDeviceAreUsed) {
  // Saved ceilings match when kind, name and thread count are this run's: take
  // the device name from a profile of the same machine.
  const RunResult profile = run("profile " + model() + kQuick + " --no-layers -f json");
  ASSERT_EQ(profile.exit_code, 0) << profile.err;
  const std::string device = nlohmann::json::parse(profile.out)["context"]["device_name"];
  const std::string dir = temp_path("saved");
  ASSERT_EQ(system(("mkdir -p " + dir).c_str()), 0);
  nlohmann::json c = nlohmann::json::parse(read_file(write_ceilings()));
  c["device_name"] = device;
  std::ofstream(dir + "/ceilings-cpu.json") << c.dump();
  const RunResult r = run("report " + model() + kQuick + " -f json", "MODELSTAT_CEILINGS_DIR=" + dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["ceilings"]["device_name"], device);
  EXPECT_DOUBLE_EQ(doc["roofline"]["peak_flops_per_s"].get<double>(), 1e11);
  for (const auto& n : doc["notices"]) EXPECT_EQ(n.get<std::string>().find("quick"), std::string::npos) << n;
}

TEST(CliReport, BadFlagsAreUsageErrors) {
  const std::string ceilings = write_ceilings();
  struct Case {
    std::string args, says;
  };
  for (const Case& c : std::vector<Case>{
           {" --no-layers --ceilings " + ceilings, "per-layer pass"},
           {" -f xml --ceilings " + ceilings, "xml"},
           {" --ceilings " + temp_path("absent.json"), "cannot read ceilings file"},
           {" --datasheet h100-sxm", "cuda"},  // GPU datasheet for a CPU run
           {" --datasheet no-such-gpu", "no-such-gpu"},
           {" --ceilings " + ceilings + " --datasheet h100-sxm", "excludes"},
           {" --ceilings " + ceilings + " --device cuda", "cpu"},
           {" --ceilings " + ceilings + " --bogus", "bogus"},
           {" --ceilings " + ceilings + " --scaling", "--threads N > 1"},  // kQuick has --threads 1
       }) {
    const RunResult r = run("report " + model() + kQuick + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << c.args << ": nothing may be reported";
  }
  // A malformed ceilings file is bad input, also 2.
  const std::string bad = temp_path("bad_ceilings.json");
  std::ofstream(bad) << "{\"schema_version\": \"1.0\"}";
  const RunResult r = run("report " + model() + kQuick + " --ceilings " + bad);
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

// --scaling: the 1-thread run beside the 2-thread one, every timed top-level
// node once, each row's speedup and efficiency from its own two medians.
TEST(CliReport, ScalingComparesOneThreadWithN) {
  const std::string json_file = temp_path("scaling.json");
  const RunResult r = run("report " + model() + " --threads 2 --scaling --warmup 1 --warmup-time 0 --iters 3 "
                          "--min-time 0 --max-time 0.3 --json " + json_file + " --ceilings " + write_ceilings());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Thread scaling (1 -> 2 threads, by time lost)"), std::string::npos) << r.out;
  const auto doc = nlohmann::json::parse(read_file(json_file));
  ASSERT_TRUE(doc.contains("scaling"));
  const auto& v = doc["scaling"];
  EXPECT_EQ(v["threads"], 2);
  EXPECT_EQ(doc["profile"]["context"]["threads"], 2);
  ASSERT_FALSE(v["nodes"].empty());
  double previous_lost = 1e9;
  for (const auto& n : v["nodes"]) {
    const double one = n["one_thread_s"].get<double>(), two = n["s"].get<double>();
    EXPECT_NEAR(n["speedup"].get<double>(), one / two, 1e-9 * one / two);
    EXPECT_NEAR(n["efficiency"].get<double>(), one / two / 2, 1e-9);
    EXPECT_NEAR(n["lost_s"].get<double>(), two - one / 2, 1e-12);
    EXPECT_LE(n["lost_s"].get<double>(), previous_lost) << "rows by time lost, largest first";
    previous_lost = n["lost_s"].get<double>();
    EXPECT_EQ(n["why"].is_null(), n["efficiency"].get<double>() >= 0.7) << n.dump();
  }
  EXPECT_NE(doc["notices"].dump().find("profiled at 1 thread, then at 2 threads"), std::string::npos)
      << doc["notices"].dump();
}

TEST(CliReport, HelpExplainsCeilingsAndFormats) {
  const RunResult r = run("report --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* needle : {"--ceilings", "--datasheet", "--trace", "--html", "modelstat device", "quick",
                             "table, json, csv, md, html or trace", "--no-layers", "--min-time"})
    EXPECT_NE(r.out.find(needle), std::string::npos) << "missing: " << needle << "\n" << r.out;
}

}  // namespace

// `modelstat pipeline` end to end through the binary, on the CPU: a
// three-stage pipeline (tiny_cnn -> busy host work -> a Softmax
// post-processing model on the host) in every output format, frames in
// flight, the timer comparison, --layers, and bad descriptions refused with
// exit 2 naming the stage. Timings are not asserted (bench/ measures them);
// the relations that hold by construction are (a busy stage spins at least
// its time; the in-flight timeline's spans of one stage never overlap).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "profiler/onnx_builder.hpp"
#include "scratch_folder.hpp"
#include "test_support.hpp"

namespace {

using modelstat::test::run_modelstat_cli;
using Json = nlohmann::json;

const std::string kModels = std::string(MODELSTAT_SOURCE_DIR) + "/sample_models";
const char* const kQuick = " --threads 1 --warmup 1 --warmup-time 0 --iters 3 --min-time 0 --max-time 0.5";

class CliPipeline : public modelstat::test::ScratchFolder {
 protected:
  // softmax.onnx: logits [1,10] -> probs [1,10] (a post-processing step), and
  // pipe.json: tiny_cnn -> 1 ms of busy host work -> softmax on the host.
  std::string write_pipeline() {
    onnx::ModelProto m = modelstat::test::new_model(13);
    onnx::GraphProto* g = m.mutable_graph();
    g->set_name("post");
    modelstat::test::value_info(g->add_input(), "logits", onnx::TensorProto::FLOAT, {1, 10});
    modelstat::test::value_info(g->add_output(), "probs", onnx::TensorProto::FLOAT, {1, 10});
    modelstat::test::add_node(g, "Softmax", {"logits"}, {"probs"});
    modelstat::test::save_model(m, path("softmax.onnx"));
    const std::string pipe = path("pipe.json");
    std::ofstream(pipe) << R"({"version": 1, "stages": [
      {"name": "cnn", "model": ")" << kModels << R"(/tiny_cnn.onnx"},
      {"name": "numpy", "host": {"busy_ms": 1.0}},
      {"name": "post", "host": {"model": "softmax.onnx"}, "inputs": {"logits": "cnn.logits"}}]})";
    return pipe;
  }
};

TEST_F(CliPipeline, ThreeStageJsonHasEveryStageInEveryView) {
  const std::string pipe = write_pipeline();
  const auto r = run_modelstat_cli("pipeline " + pipe + kQuick + " --timer-comparison --in-flight 2 --layers -f json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(r.out);
  EXPECT_EQ(doc["kind"], "pipeline");
  EXPECT_EQ(doc["schema_version"].get<std::string>().substr(0, 2), "1.");
  const std::vector<std::string> names = {"cnn", "numpy", "post"};
  const std::vector<std::string> kinds = {"model", "host_busy", "host_model"};
  ASSERT_EQ(doc["stages"].size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(doc["stages"][k]["name"], names[k]);
    EXPECT_EQ(doc["stages"][k]["kind"], kinds[k]);
  }
  EXPECT_EQ(doc["stages"][2]["inputs"][0]["from_stage"], 0);
  EXPECT_EQ(doc["stages"][2]["inputs"][0]["from_output"], "logits");
  // Per-stage samples in the events pass, each stage with as many as the pass ran.
  const Json& staged = doc["staged"];
  ASSERT_EQ(staged["stages"].size(), 3u);
  const int64_t iterations = staged["stage_sum"]["count"].get<int64_t>();
  EXPECT_GE(iterations, 3);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(staged["stages"][k]["stage"], names[k]);
    EXPECT_EQ(staged["stages"][k]["time"]["samples_s"].size(), size_t(iterations));
    EXPECT_GT(staged["stages"][k]["time"]["median_s"].get<double>(), 0.0);
  }
  // The busy stage spins for its 1 ms at least, every iteration.
  EXPECT_GE(staged["stages"][1]["time"]["min_s"].get<double>(), 0.001);
  EXPECT_GE(doc["end_to_end"]["count"].get<int64_t>(), 3);
  // Timer comparison: three ways, each with every stage.
  ASSERT_TRUE(doc["timer_comparison"].is_object());
  std::set<std::string> methods;
  for (const Json& m : doc["timer_comparison"]["methods"]) {
    methods.insert(m["method"]);
    ASSERT_EQ(m["stages"].size(), 3u);
    EXPECT_GE(m["end_to_end"]["count"].get<int64_t>(), 3);
  }
  EXPECT_EQ(methods, (std::set<std::string>{"host timer, no sync", "sync after every stage", "events"}));
  EXPECT_NE(doc["timer_comparison"]["note"].get<std::string>().find("agree"), std::string::npos);
  // Frames in flight: every stage's service time, a bottleneck among them.
  const Json& f = doc["in_flight"];
  ASSERT_TRUE(f.is_object());
  EXPECT_EQ(f["frames_in_flight"], 2);
  ASSERT_EQ(f["stages"].size(), 3u);
  EXPECT_GT(f["throughput_per_s"].get<double>(), 0.0);
  EXPECT_EQ(f["latency"]["samples_s"].size(), f["frames"].get<size_t>());
  const int bottleneck = f["bottleneck_stage"].get<int>();
  ASSERT_GE(bottleneck, 0);
  for (size_t k = 0; k < 3; ++k)
    EXPECT_LE(f["stages"][k]["time"]["median_s"].get<double>(), f["stages"][bottleneck]["time"]["median_s"].get<double>());
  EXPECT_EQ(f["intra_op_threads_per_stage"], 1);
  // --layers: the two model stages, each with one row per node of its graph.
  ASSERT_EQ(doc["layers"].size(), 2u);
  EXPECT_EQ(doc["layers"][0]["stage"], "cnn");
  EXPECT_EQ(doc["layers"][1]["stage"], "post");
  EXPECT_EQ(doc["layers"][1]["layers"].size(), 1u);  // the one Softmax
  EXPECT_EQ(doc["layers"][1]["layers"][0]["op_type"], "Softmax");
}

TEST_F(CliPipeline, TraceHasOneTrackPerStageAndInFlightSpansOfAStageNeverOverlap) {
  const std::string pipe = write_pipeline();
  const auto r = run_modelstat_cli("pipeline " + pipe + kQuick + " --in-flight 2 -f trace --html " + path("p.html") +
                                   " --csv " + path("p.csv") + " --md " + path("p.md"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(r.out);
  // Per process (1: one iteration at a time, 2: frames in flight): a named track per stage.
  std::map<int, std::map<int, std::string>> tracks;
  std::map<int, std::map<int, std::vector<std::pair<double, double>>>> spans;
  for (const Json& e : doc["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") tracks[e["pid"]][e["tid"]] = e["args"]["name"];
    if (e["ph"] == "X") spans[e["pid"]][e["tid"]].push_back({e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()});
  }
  ASSERT_EQ(tracks.size(), 2u);
  for (const auto& [pid, by_tid] : tracks) {
    EXPECT_EQ(by_tid.size(), 3u) << "process " << pid;
    EXPECT_EQ(by_tid.at(1), "0 cnn");
    EXPECT_EQ(by_tid.at(2), "1 numpy");
    EXPECT_EQ(by_tid.at(3), "2 post");
    // Every stage drew spans, on its own track only.
    ASSERT_EQ(spans[pid].size(), 3u) << "process " << pid;
    for (const auto& [tid, list] : spans[pid]) EXPECT_TRUE(by_tid.count(tid));
  }
  // A stage is one worker: its spans follow each other on its track.
  for (const auto& [tid, list] : spans[2]) {
    auto sorted = list;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 1; i < sorted.size(); ++i) EXPECT_LE(sorted[i - 1].second, sorted[i].first + 1e-3) << tid;
  }
  const std::string html = read(path("p.html"));
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // no external resource
  const std::string csv = read(path("p.csv"));
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "section,method,stage_index,stage,kind,clock,count,median_s,mean_s,p90_s,p95_s,p99_s,min_s,max_s,cv,"
            "throughput_per_s");
  EXPECT_NE(csv.find("in_flight,in flight 2,0,cnn,model"), std::string::npos);
  EXPECT_NE(read(path("p.md")).find("| 1 | numpy |"), std::string::npos);
}

TEST_F(CliPipeline, ChainShortcutTableSaysWhyTheTimersAgreeOnTheCpu) {
  write_pipeline();
  const auto r = run_modelstat_cli("pipeline " + kModels + "/tiny_cnn.onnx " + path("softmax.onnx") + kQuick +
                                   " --host-busy-ms 0.5 --timer-comparison");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* text : {"tiny_cnn", "host1", "softmax", "sum of stage medians", "end to end (pass 1, clean path)",
                           "host timer, no sync (enqueue only)", "sync after every stage", "events",
                           "on the CPU the three agree"})
    EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
}

// 10 ms of busy host work between two sub-millisecond models: that stage
// bounds the throughput, and the report names it.
TEST_F(CliPipeline, InFlightNamesTheBusyHostStageAsTheBottleneck) {
  write_pipeline();
  const auto r = run_modelstat_cli("pipeline " + kModels + "/tiny_cnn.onnx " + path("softmax.onnx") + kQuick +
                                   " --host-busy-ms 10 --in-flight 2 -f json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json f = Json::parse(r.out)["in_flight"];
  ASSERT_EQ(f["stages"].size(), 3u);
  EXPECT_EQ(f["bottleneck_stage"], 1);
  EXPECT_EQ(f["stages"][1]["stage"], "host1");
  EXPECT_GE(f["stages"][1]["time"]["median_s"].get<double>(), 0.010);
  // The bound it sets is 1 / its median service time, at most 100 frames/s.
  EXPECT_LE(f["bottleneck_bound_per_s"].get<double>(), 100.0);
}

TEST_F(CliPipeline, BadDescriptionsExitTwoNamingTheStage) {
  write_pipeline();
  const std::string bad = path("bad.json");
  std::ofstream(bad) << R"({"stages": [{"name": "first", "model": ")" << kModels
                     << R"(/tiny_cnn.onnx"}, {"name": "second", "model": "softmax.onnx", "inputs": {"logits": "first.probs"}}]})";
  auto r = run_modelstat_cli("pipeline " + bad + kQuick);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("stage 'second'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'probs'"), std::string::npos) << r.err;
  r = run_modelstat_cli("pipeline " + kModels + "/tiny_cnn.onnx" + kQuick);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("two models"), std::string::npos) << r.err;
  r = run_modelstat_cli("pipeline " + path("pipe.json") + " --dim batch=2" + kQuick);
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace

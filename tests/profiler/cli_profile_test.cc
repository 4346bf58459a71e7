// End-to-end `modelstat profile` through the binary: the report's shape, and
// the bad-input paths (unsupported op, shape mismatch, out of memory, no
// CUDA) end with a clear one-line error and the documented exit code.
// Timings themselves are not asserted here (bench/ measures them).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "test_support.hpp"

namespace {

using RunResult = modelstat::test::CliResult;

RunResult run(const std::string& args) {
  return modelstat::test::run_modelstat_cli(args);
}

std::string sample(const std::string& name) { return std::string(MODELSTAT_SOURCE_DIR) + "/sample_models/" + name; }

// Short budgets: the point is the protocol's shape, not the numbers.
const char* const kQuick = " --threads 1 --warmup 1 --warmup-time 0 --iters 3 --min-time 0 --max-time 0.5";

TEST(CliProfile, JsonHasBothPassesColdStartContextAndRawSamples) {
  const RunResult r = run("profile " + sample("tiny_cnn.onnx") + kQuick + " -f json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["kind"], "profile");
  EXPECT_GE(doc["whole"]["count"].get<int64_t>(), 3);
  EXPECT_EQ(doc["whole"]["samples_s"].size(), doc["whole"]["count"].get<size_t>());
  EXPECT_GT(doc["whole"]["median_s"].get<double>(), 0.0);
  // One layer per node of the graph, in graph order, each with its own samples.
  const size_t nodes = doc["analysis"]["nodes"].size();
  ASSERT_EQ(doc["layers"].size(), nodes);
  for (size_t i = 0; i < nodes; ++i) EXPECT_EQ(doc["layers"][i]["index"].get<size_t>(), i);
  EXPECT_GT(doc["layer_sum"]["median_s"].get<double>(), 0.0);
  EXPECT_GT(doc["cold_start"]["first_inference_s"].get<double>(), 0.0);
  EXPECT_EQ(doc["context"]["threads"].get<int>(), 1);
  EXPECT_FALSE(doc["context"]["timer"].get<std::string>().empty());
}

// Every process allocates by the same rule (glibc's adaptive thresholds fixed),
// says so in its context, and the environment can keep glibc's default.
TEST(CliProfile, ContextNamesTheHostAllocatorConfiguration) {
  const std::string args = "profile " + sample("tiny_cnn.onnx") + kQuick + " --no-layers -f json";
  RunResult r = run(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string fixed = nlohmann::json::parse(r.out)["context"]["allocator"].get<std::string>();
#if defined(__GLIBC__)
  EXPECT_NE(fixed.find("fixed thresholds"), std::string::npos) << fixed;
  r = modelstat::test::run_modelstat_cli(args, "MODELSTAT_GLIBC_MALLOC=dynamic");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string dynamic = nlohmann::json::parse(r.out)["context"]["allocator"].get<std::string>();
  EXPECT_NE(dynamic.find("dynamic thresholds"), std::string::npos) << dynamic;
#else
  EXPECT_FALSE(fixed.empty());
#endif
}

TEST(CliProfile, SkeletonModelRunsWithSeededWeightsAndSaysSo) {
  const RunResult r = run("profile " + sample("custom_model_part1.onnx") + kQuick + " -f json --dim batch=2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  bool said = false;
  for (const auto& n : doc["notices"]) said = said || n.get<std::string>().find("skeleton") != std::string::npos;
  EXPECT_TRUE(said) << doc["notices"].dump();
}

TEST(CliProfile, UnsupportedOpIsNamedBeforeAnythingRuns) {
  const RunResult r = run("profile " + std::string(MODELSTAT_SOURCE_DIR) +
                          "/tests/data/bad/unknown_domain.onnx --allow-custom-domains" + kQuick);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("no executor"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("node '"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << "nothing may be reported as measured";
}

TEST(CliProfile, ShapeMismatchBetweenBindingAndModel) {
  const RunResult r = run("profile " + sample("tiny_cnn.onnx") + " --input input:1x3x64x64" + kQuick);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("shape mismatch"), std::string::npos) << r.err;
}

// MemAvailable of /proc/meminfo, bytes (0 when unreadable).
int64_t mem_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

// A batch of custom_model whose fp32 1x3x224x224 inputs alone take twice what
// the host has free: refused from the estimate, before any tensor exists (with
// overcommit, allocating it could get the process killed instead).
TEST(CliProfile, InputsBeyondTheFreeHostMemoryAreRefusedUpFront) {
  const int64_t available = mem_available_bytes();
  ASSERT_GT(available, 0);
  const int64_t per_sample = 3 * 224 * 224 * 4;
  const int64_t batch = 2 * available / per_sample + 1;
  const RunResult r = run("profile " + sample("custom_model.onnx") + " --dim batch=" + std::to_string(batch) + kQuick);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("modelstat: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line:\n" << r.err;
  for (const char* part : {"do not fit in this machine's memory: needs about ", "GiB available (", "--dim"})
    EXPECT_NE(r.err.find(part), std::string::npos) << part << " in " << r.err;
  EXPECT_TRUE(r.out.empty());
}

// Out of memory during the run (the estimate fits what the host has free, the
// allocation fails: here under a 3 GB address-space limit) is caught and
// reported as exit 2 with what to do, never a crash. custom_model_part1 at
// batch 100: two input sets of 1.2 GiB each.
TEST(CliProfile, OutOfMemoryDuringTheRunIsCaught) {
  const std::string err_file = testing::TempDir() + "/modelstat_oom_stderr.txt";
  const std::string cmd = "ulimit -v 3000000; exec " + std::string(MODELSTAT_BINARY) + " profile " +
                          sample("custom_model_part1.onnx") + " --dim batch=100 --no-layers" + kQuick + " 2>" + err_file;
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  const int status = pclose(pipe);
  std::ifstream in(err_file);
  const std::string err((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status) << ": " << err;
  EXPECT_EQ(WEXITSTATUS(status), 2) << err;
  EXPECT_EQ(err.rfind("modelstat: error: ", 0), 0u) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << "one line, no ATen backtrace:\n" << err;
  // Caught during the run, or (on a host with under ~3 GB free) refused up front.
  const bool caught = err.find("out of memory") != std::string::npos;
  const bool refused = err.find("available (") != std::string::npos;
  EXPECT_TRUE(caught || refused) << err;
  if (mem_available_bytes() > (int64_t(4) << 30)) {
    EXPECT_TRUE(caught) << err;
  }
  EXPECT_NE(err.find("smaller batch"), std::string::npos) << err;
  EXPECT_TRUE(out.empty()) << out;
}

// Dims whose byte size overflows 64 bits: refused with the tensor named.
TEST(CliProfile, AbsurdBatchIsRefusedAsOverflow) {
  RunResult r = run("profile " + sample("custom_model.onnx") + " --dim batch=1000000000000" + kQuick);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("overflows 64 bits"), std::string::npos) << r.err;
  r = run("profile " + sample("tiny_cnn.onnx") + " --input input:4611686018427387904x3x32x32" + kQuick);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// A batch-sweep point past the free memory is not run: it is reported as not
// fitting, the others are measured.
TEST(CliProfile, BatchSweepPointBeyondTheFreeHostMemoryIsNotRun) {
  const int64_t available = mem_available_bytes();
  ASSERT_GT(available, 0);
  // custom_model_part1's input is [batch,1024,56,56] fp32.
  const std::string huge = std::to_string(2 * available / (1024 * 56 * 56 * 4) + 1);
  const RunResult r =
      run("profile " + sample("custom_model_part1.onnx") + kQuick + " --no-layers --batch-sweep 1," + huge + " -f json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["batch_sweep"].size(), 2u);
  EXPECT_TRUE(doc["batch_sweep"][0]["fits"].get<bool>()) << doc["batch_sweep"].dump();
  EXPECT_FALSE(doc["batch_sweep"][1]["fits"].get<bool>()) << doc["batch_sweep"].dump();
  EXPECT_NE(doc["batch_sweep"][1]["failure"].get<std::string>().find("exceeds host memory"), std::string::npos)
      << doc["batch_sweep"].dump();
}

TEST(CliProfile, CudaOrHalfPrecisionWithoutCudaAreUsageErrors) {
  RunResult r = run("profile " + sample("tiny_cnn.onnx") + " --dtype fp16" + kQuick);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = run("profile " + sample("tiny_cnn.onnx") + " --device cuda" + kQuick);
  // A CUDA build on a GPU machine runs; everywhere else this is a clear usage error.
  if (r.exit_code != 0) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("cuda"), std::string::npos) << r.err;
  }
}

TEST(CliProfile, BatchSweepReportsThroughputPerBatch) {
  const RunResult r = run("profile " + sample("custom_model_part1.onnx") + kQuick + " --no-layers --batch-sweep 1,4 -f json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["batch_sweep"].size(), 2u);
  for (const auto& p : doc["batch_sweep"]) EXPECT_GT(p["throughput_samples_per_s"].get<double>(), 0.0) << p.dump();
}

TEST(CliProfile, MemoryAndTrainStepReportMeasuredBytesAndTimes) {
  const RunResult r =
      run("profile " + sample("tiny_cnn.onnx") + kQuick + " --no-layers --memory --train-step --optimizer sgd -f json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  const auto& memory = doc["memory"];
  ASSERT_TRUE(memory.is_object()) << doc["memory"].dump();
  // tiny_cnn's initializers, all fp32: 5,882 parameters + 32 BatchNormalization
  // running statistics, 4 bytes each.
  EXPECT_EQ(memory["weights_bytes"].get<int64_t>(), (5882 + 32) * 4);
  // The peak holds the weights, the 1x3x32x32 input and at least the first
  // Conv's 1x16x32x32 output (both fp32).
  EXPECT_GE(memory["inference_peak_bytes"].get<int64_t>(), (5882 + 32 + 3 * 32 * 32 + 16 * 32 * 32) * 4);
  EXPECT_FALSE(memory["method"].get<std::string>().empty());

  const auto& train = doc["train_step"];
  ASSERT_TRUE(train.is_object()) << doc["train_step"].dump();
  EXPECT_EQ(train["optimizer"], "sgd");
  EXPECT_EQ(train["trainable_params"].get<int64_t>(), 5882);
  EXPECT_GE(train["time"]["count"].get<int64_t>(), 3);
  EXPECT_EQ(train["time"]["samples_s"].size(), train["time"]["count"].get<size_t>());
  for (const char* part : {"forward_s", "backward_s", "optimizer_s"}) EXPECT_GT(train[part].get<double>(), 0.0) << part;
  // Training holds at least what inference does, plus the gradients.
  EXPECT_GE(train["peak_bytes"].get<int64_t>(), memory["inference_peak_bytes"].get<int64_t>());
  EXPECT_GE(train["peak_bytes"].get<int64_t>(), memory["weights_bytes"].get<int64_t>() + 5882 * 4);
  EXPECT_FALSE(train["loss"].get<std::string>().empty());
  EXPECT_EQ(train["memory_method"], memory["method"]);
}

TEST(CliProfile, OptimizerWithoutTrainStepIsAUsageError) {
  RunResult r = run("profile " + sample("tiny_cnn.onnx") + kQuick + " --optimizer sgd");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = run("profile " + sample("tiny_cnn.onnx") + kQuick + " --train-step --optimizer lamb");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(r.out.empty());
}

}  // namespace

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
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>
#include <string>
#include <vector>

#include "profiler/onnx_builder.hpp"
#include "profiler/ops/direct_kernels.hpp"
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

// The OpenMP wait policy: modelstat's launcher sets OMP_WAIT_POLICY=PASSIVE
// unless the user set it, and so does modelstat-profiler started on its own
// (it re-executes itself: libgomp reads the variable only when it loads); the
// context says which. The profiler's own environment is read back through
// the run context, the only place it shows.
TEST(CliProfile, ContextSaysWhoChoseTheOpenMpWaitPolicy) {
  auto policy = [](const RunResult& r) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out)["context"]["openmp"].get<std::string>();
  };
  const std::string args = "profile " + sample("tiny_cnn.onnx") + kQuick + " --no-layers -f json";
  const std::string unset = "-u OMP_WAIT_POLICY -u MODELSTAT_OMP_WAIT_POLICY";
  // modelstat's default: PASSIVE, and a GOMP_SPINCOUNT when the CPUs were idle at start (a load the
  // test cannot control: "OMP_WAIT_POLICY=PASSIVE, GOMP_SPINCOUNT=3000 (modelstat's default: ...").
  auto ours = [](const std::string& p) {
    return p.rfind("OMP_WAIT_POLICY=PASSIVE", 0) == 0 && p.find(" (modelstat's default") != std::string::npos;
  };
  const std::string by_default = policy(modelstat::test::run_modelstat_cli(args, unset));
  EXPECT_TRUE(ours(by_default)) << by_default;
  EXPECT_EQ(policy(modelstat::test::run_modelstat_cli(args, "-u MODELSTAT_OMP_WAIT_POLICY OMP_WAIT_POLICY=active")),
            "OMP_WAIT_POLICY=active (set by the user)");
  // modelstat-profiler started directly, without the launcher.
  const std::string profiler = std::filesystem::path(MODELSTAT_BINARY).parent_path() / "modelstat-profiler";
  FILE* pipe = popen(("env " + unset + " " + profiler + " " + args + " 2>/dev/null").c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  ASSERT_EQ(pclose(pipe), 0);
  const std::string direct = nlohmann::json::parse(out)["context"]["openmp"].get<std::string>();
  EXPECT_TRUE(ours(direct)) << direct;
}

// OpenBLAS's worker threads spin ~2^28 cycles after each call unless
// OPENBLAS_THREAD_TIMEOUT says otherwise: modelstat sets 4 unless the user
// set it, and the context's BLAS line says who did.
TEST(CliProfile, ContextSaysWhoChoseTheOpenBlasThreadTimeout) {
  auto blas = [](const RunResult& r) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out)["context"]["blas"].get<std::string>();
  };
  const std::string args = "profile " + sample("tiny_cnn.onnx") + kQuick + " --no-layers -f json";
  const std::string ours = blas(modelstat::test::run_modelstat_cli(
      args, "-u OPENBLAS_THREAD_TIMEOUT -u MODELSTAT_OPENBLAS_THREAD_TIMEOUT -u MODELSTAT_OMP_WAIT_POLICY"));
  if (ours.rfind("OpenBLAS", 0) != 0) {  // a LibTorch without OpenBLAS: nothing to set, nothing said
    EXPECT_EQ(ours.find("OPENBLAS_THREAD_TIMEOUT"), std::string::npos) << ours;
    return;
  }
  EXPECT_NE(ours.find("OPENBLAS_THREAD_TIMEOUT=4 (modelstat's default"), std::string::npos) << ours;
  const std::string users = blas(modelstat::test::run_modelstat_cli(
      args, "-u MODELSTAT_OPENBLAS_THREAD_TIMEOUT -u MODELSTAT_OMP_WAIT_POLICY OPENBLAS_THREAD_TIMEOUT=10"));
  EXPECT_NE(users.find("OPENBLAS_THREAD_TIMEOUT=10 (set by the user)"), std::string::npos) << users;
}

// A Loop with a constant trip count of 5 (tests/profiler/onnx_builder.hpp):
// the table lists its body's nodes right under it, indented, with 5 calls a
// run, and the JSON has them as subgraph_layers named as the analysis's rows.
// A QDQ model: x -> QuantizeLinear -> DequantizeLinear -> Conv <- DequantizeLinear <- int8 weight.
// The Conv runs as one int8 kernel: a notice says so, the two absorbed
// DequantizeLinear rows are marked (table "*" and its legend, JSON fused_into)
// and get no rate; --no-fuse runs every node as written.
onnx::ModelProto qdq_conv_model() {
  using modelstat::test::add_node;
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("qdq_conv");
  modelstat::test::value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 4, 8, 8});
  modelstat::test::float_init(g, "s", {}, {0.05f});
  modelstat::test::int32_data_init(g, "zp", onnx::TensorProto::UINT8, {}, {128});
  std::vector<int32_t> w_q(6 * 4 * 3 * 3);
  for (size_t i = 0; i < w_q.size(); ++i) w_q[i] = int32_t(i % 17) - 8;
  modelstat::test::int32_data_init(g, "w_q", onnx::TensorProto::INT8, {6, 4, 3, 3}, w_q);
  modelstat::test::float_init(g, "w_s", {6}, {0.01f, 0.02f, 0.03f, 0.01f, 0.02f, 0.03f});
  add_node(g, "QuantizeLinear", {"x", "s", "zp"}, {"x_q"});
  add_node(g, "DequantizeLinear", {"x_q", "s", "zp"}, {"x_dq"});
  onnx::NodeProto* dqw = add_node(g, "DequantizeLinear", {"w_q", "w_s"}, {"w_dq"});
  onnx::AttributeProto* axis = dqw->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  add_node(g, "Conv", {"x_dq", "w_dq"}, {"y"});
  g->add_output()->set_name("y");
  return m;
}

TEST(CliProfile, QdqConvRunsFusedAndItsDequantizersAreMarked) {
  const std::string file = testing::TempDir() + "/modelstat_cli_qdq_" + std::to_string(getpid()) + ".onnx";
  modelstat::test::save_model(qdq_conv_model(), file);
  RunResult r = run("profile " + file + kQuick + " -f json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  bool noticed = false;
  for (const auto& n : doc["notices"]) noticed = noticed || n.get<std::string>().find("QDQ: 1 Conv") == 0;
  ASSERT_TRUE(noticed) << doc["notices"].dump();
  ASSERT_EQ(doc["layers"].size(), 4u);
  EXPECT_FALSE(doc["layers"][0].contains("fused_into"));  // QuantizeLinear runs
  EXPECT_EQ(doc["layers"][1]["fused_into"], "Conv_4");
  EXPECT_EQ(doc["layers"][2]["fused_into"], "Conv_4");
  EXPECT_FALSE(doc["layers"][3].contains("fused_into"));

  r = run("profile " + file + kQuick);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("DequantizeLinear*"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("* fused into another node's kernel"), std::string::npos) << r.out;

  r = run("profile " + file + kQuick + " --no-fuse -f json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  doc = nlohmann::json::parse(r.out);
  for (const auto& n : doc["notices"]) EXPECT_EQ(n.get<std::string>().find("QDQ:"), std::string::npos) << n;
  for (const auto& l : doc["layers"]) EXPECT_FALSE(l.contains("fused_into")) << l.dump();
  std::remove(file.c_str());
}

// x -> Conv -> BatchNormalization -> Relu -> y: on the CPU the three run as
// one oneDNN kernel (a Conv group). The JSON's Conv row names its members and
// carries the group's FLOPs (the analysis's Conv + BN + Relu); the members'
// rows name the Conv (fused_into); --fusion off (and --no-fuse) has one row
// per node, none fused.
onnx::ModelProto conv_bn_relu_model() {
  using modelstat::test::add_node;
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("conv_bn_relu");
  modelstat::test::value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 4, 8, 8});
  std::vector<float> w(6 * 4 * 3 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(int(i % 13) - 6) * 0.05f;
  modelstat::test::float_init(g, "w", {6, 4, 3, 3}, w);
  modelstat::test::float_init(g, "scale", {6}, {1.f, 0.5f, 2.f, 1.5f, 0.8f, 1.2f});
  modelstat::test::float_init(g, "beta", {6}, {0.1f, -0.2f, 0.f, 0.3f, -0.1f, 0.2f});
  modelstat::test::float_init(g, "mean", {6}, {0.f, 0.1f, -0.1f, 0.2f, 0.f, 0.05f});
  modelstat::test::float_init(g, "var", {6}, {1.f, 2.f, 0.5f, 1.f, 1.5f, 0.7f});
  onnx::NodeProto* conv = add_node(g, "Conv", {"x", "w"}, {"c"});
  modelstat::test::ints_attr(conv, "pads", {1, 1, 1, 1});
  add_node(g, "BatchNormalization", {"c", "scale", "beta", "mean", "var"}, {"bn"});
  add_node(g, "Relu", {"bn"}, {"y"});
  g->add_output()->set_name("y");
  return m;
}

TEST(CliProfile, ConvGroupIsOneRowNamingItsMembersAndFusionOffIsOneRowPerNode) {
  const std::string file = testing::TempDir() + "/modelstat_cli_convbn_" + std::to_string(getpid()) + ".onnx";
  modelstat::test::save_model(conv_bn_relu_model(), file);
  RunResult r = run("profile " + file + kQuick + " -f json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["fusion"], "on");
  ASSERT_EQ(doc["layers"].size(), 3u);
  const auto& conv = doc["layers"][0];
  ASSERT_TRUE(conv.contains("fused_members")) << conv.dump();
  EXPECT_EQ(conv["fused_members"], nlohmann::json::array({doc["layers"][1]["name"], doc["layers"][2]["name"]}));
  EXPECT_EQ(doc["layers"][1]["op_type"], "BatchNormalization");
  EXPECT_EQ(doc["layers"][2]["op_type"], "Relu");
  EXPECT_FALSE(conv["kernel"].get<std::string>().empty());
  EXPECT_EQ(doc["layers"][1]["fused_into"], conv["name"]);
  EXPECT_EQ(doc["layers"][2]["fused_into"], conv["name"]);
  // The group's FLOPs: the analysis's rows of its three nodes, summed.
  int64_t group_flops = 0;
  for (const auto& node : doc["analysis"]["nodes"]) group_flops += node["flops"].get<int64_t>();
  EXPECT_EQ(conv["flops"].get<int64_t>(), group_flops);
  EXPECT_EQ(conv["achieved_gflops"].is_null(), false);

  r = run("profile " + file + kQuick);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Conv+2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Relu*"), std::string::npos) << r.out;

  for (const char* off : {" --fusion off", " --no-fuse"}) {
    r = run("profile " + file + kQuick + off + " -f json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc["fusion"], "off") << off;
    ASSERT_EQ(doc["layers"].size(), 3u);
    for (size_t k = 0; k < 3; ++k) {
      const auto& l = doc["layers"][k];
      EXPECT_FALSE(l.contains("fused_into") || l.contains("fused_members")) << off << " " << l.dump();
      EXPECT_EQ(l["flops"], doc["analysis"]["nodes"][k]["flops"]) << off;
      EXPECT_FALSE(l["achieved_gflops"].is_null()) << off << " each node ran and has a rate";
    }
  }
  std::remove(file.c_str());
}

// tiny_bert's MatMuls with constant weights run as MatMul groups: a notice
// says where they ran and how the choice was made; --gemm names the backend
// in each head's kernel; --fusion off keeps the backend and drops the members
// (--gemm blas --fusion off: every node as written, at::matmul, no kernel).
TEST(CliProfile, GemmBackendIsChosenNamedAndForcedInBothFusionModes) {
  const std::string bert = std::string(MODELSTAT_SOURCE_DIR) + "/sample_models/tiny_bert.onnx --dim seq=16";
  for (const char* gemm : {"auto", "onednn", "blas"}) {
    for (const char* fusion : {"on", "off"}) {
      const RunResult r = run("profile " + bert + kQuick + " --gemm " + gemm + " --fusion " + fusion + " -f json");
      ASSERT_EQ(r.exit_code, 0) << r.err;
      const auto doc = nlohmann::json::parse(r.out);
      const bool as_written = std::string(gemm) == "blas" && std::string(fusion) == "off";
      bool notice = false;
      for (const auto& n : doc["notices"])
        notice = notice || n.get<std::string>().find("Gemm/MatMul with constant weights") != std::string::npos;
      EXPECT_EQ(notice, !as_written) << gemm << " " << fusion << " " << doc["notices"].dump();
      int heads = 0, members = 0;
      for (const auto& l : doc["layers"]) {
        if (l.contains("fused_into")) ++members;
        if ((l["op_type"] != "MatMul" && l["op_type"] != "Gemm") || !l.contains("kernel")) continue;
        ++heads;
        const std::string kernel = l["kernel"];
        if (std::string(gemm) == "blas") {
          EXPECT_EQ(kernel, "blas (--gemm blas)") << l.dump();
        } else if (std::string(gemm) == "onednn") {
          EXPECT_EQ(kernel.rfind("onednn", 0), 0u) << l.dump();
        } else {
          // --gemm auto: oneDNN or BLAS, whichever measured faster; a Gemm of a few rows and at most
          // 256k MACs (the pooler's one row) runs as a direct loop (profiler/ops/direct_kernels.hpp).
          const bool small = l["macs"].get<int64_t>() <= modelstat::kDirectGemmMaxMacs;
          EXPECT_TRUE(kernel.rfind("onednn", 0) == 0 || kernel.rfind("blas", 0) == 0 ||
                      (small && kernel == "direct loop"))
              << l.dump();
        }
      }
      EXPECT_EQ(heads > 0, !as_written) << gemm << " " << fusion;
      if (std::string(fusion) == "on") {
        EXPECT_GT(members, 0) << "bias Adds join their MatMul";
      } else {
        EXPECT_EQ(members, 0);
      }
    }
  }
}

TEST(CliProfile, SubgraphNodesHaveRowsUnderTheirParent) {
  const std::string file = testing::TempDir() + "/modelstat_cli_loop_" + std::to_string(getpid()) + ".onnx";
  modelstat::test::save_model(modelstat::test::loop_five_model(), file);
  RunResult r = run("profile " + file + kQuick);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> lines = modelstat::test::lines_of(r.out);
  const auto loop = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find(" Loop_2 ") != std::string::npos && l.find("Loop ") != std::string::npos;
  });
  ASSERT_NE(loop, lines.end()) << r.out;
  const size_t name_column = loop->find("Loop_2");
  const std::vector<std::string> body = {"Loop_2/body/MatMul_1", "Loop_2/body/Add_2",
                                         "Loop_2/body/Identity_3"};
  for (size_t k = 0; k < body.size(); ++k) {
    ASSERT_LT(size_t(loop - lines.begin()) + 1 + k, lines.size());
    const std::string& line = *(loop + 1 + std::ptrdiff_t(k));
    EXPECT_EQ(line.find(body[k]), name_column + 2) << "indented under the Loop: " << line;
    EXPECT_NE(line.find(" 5 "), std::string::npos) << "5 calls a run: " << line;
  }
  EXPECT_NE((loop + 4)->find("Neg_3"), std::string::npos) << *(loop + 4);

  r = run("profile " + file + kQuick + " -f json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["subgraph_layers"].size(), body.size());
  for (size_t k = 0; k < body.size(); ++k) {
    EXPECT_EQ(doc["subgraph_layers"][k]["name"], body[k]);
    EXPECT_EQ(doc["subgraph_layers"][k]["name"], doc["analysis"]["subgraph_nodes"][k]["name"]);
    EXPECT_EQ(doc["subgraph_layers"][k]["index"], 1);
    EXPECT_EQ(doc["subgraph_layers"][k]["calls_per_run"].get<double>(), 5.0);
  }
  EXPECT_GT(doc["subgraph_layer_sum"]["count"].get<int64_t>(), 0);
  std::remove(file.c_str());
}

// --group-by block on tiny_bert: the groups hold the nodes counted by hand
// from its names (tests/analyzer/grouping_test.cc lists them), and their times
// and FLOPs add up to the layers' of the same document.
TEST(CliProfile, GroupByBlockSumsTheLayersPerBlock) {
  const std::string args =
      "profile " + sample("tiny_bert.onnx") + " --dim seq=16" + kQuick + " --group-by block";
  RunResult r = run(args + " -f json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["group_by"], "block");
  const std::vector<std::pair<std::string, int>> expected = {
      {"(other)", 31},    {"/tok/", 1},       {"/pos/", 1}, {"/ln/", 1},
      {"/layers.0/", 65}, {"/layers.1/", 65}, {"/pool/", 1}};
  ASSERT_EQ(doc["groups"].size(), expected.size());
  double seconds = 0, share = 0;
  int64_t flops = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto& g = doc["groups"][i];
    EXPECT_EQ(g["key"], expected[i].first);
    EXPECT_EQ(g["layers"], expected[i].second) << expected[i].first;
    seconds += g["median_sum_s"].get<double>();
    share += g["share_of_layer_sum"].get<double>();
    flops += g["flops"].get<int64_t>();
  }
  double layer_seconds = 0;
  for (const auto& l : doc["layers"]) layer_seconds += l["time"]["median_s"].get<double>();
  EXPECT_EQ(doc["layers"].size(), 165u);
  EXPECT_NEAR(seconds, layer_seconds, 1e-9 * layer_seconds);
  EXPECT_NEAR(share, 1.0, 1e-9);
  EXPECT_EQ(flops, doc["analysis"]["totals"]["flops"].get<int64_t>());
  EXPECT_EQ(doc["analysis"]["groups"].size(), expected.size());

  r = run(args + " -f csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> lines = modelstat::test::lines_of(r.out);
  ASSERT_EQ(lines.size(), 1 + expected.size());
  EXPECT_EQ(lines[0].rfind("group,first_index,layers,", 0), 0u) << lines[0];
  EXPECT_EQ(lines[5].rfind("/layers.0/,14,65,", 0), 0u) << lines[5];

  // A bad rule fails before anything is measured.
  r = run("profile " + sample("tiny_bert.onnx") + kQuick + " --group-by nodes");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--group-by must be block, op or re:PATTERN"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
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
  EXPECT_NE(fixed.find("no mmap"), std::string::npos) << fixed;
  r = modelstat::test::run_modelstat_cli(args, "MODELSTAT_GLIBC_MALLOC=mmap");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string mmap = nlohmann::json::parse(r.out)["context"]["allocator"].get<std::string>();
  EXPECT_NE(mmap.find("mmap above 32 MiB"), std::string::npos) << mmap;
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
  const RunResult r = modelstat::test::run_shell_command(
      "ulimit -v 3000000; exec " + std::string(MODELSTAT_BINARY) + " profile " +
      sample("custom_model_part1.onnx") + " --dim batch=100 --no-layers" + kQuick);
  ASSERT_NO_FATAL_FAILURE(modelstat::test::expect_one_line_usage_error(r));
  const std::string& err = r.err;
  // Caught during the run, or (on a host with under ~3 GB free) refused up front.
  const bool caught = err.find("out of memory") != std::string::npos;
  const bool refused = err.find("available (") != std::string::npos;
  EXPECT_TRUE(caught || refused) << err;
  if (mem_available_bytes() > (int64_t(4) << 30)) {
    EXPECT_TRUE(caught) << err;
  }
  EXPECT_NE(err.find("smaller batch"), std::string::npos) << err;
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

// --dtype tf32 asks for CUDA's TF32 tensor-core math; --dtype fp32 on CUDA turns it off in both
// cuBLAS and cuDNN (LibTorch's default leaves cuDNN's convolutions in TF32), and the run context says
// which math ran.
TEST(CliProfile, Tf32IsCudaMathAndFp32OnCudaTurnsItOff) {
  RunResult r = run("profile " + sample("tiny_cnn.onnx") + " --dtype tf32" + kQuick);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--dtype tf32 is for CUDA"), std::string::npos) << r.err;
  r = run("profile " + sample("tiny_cnn.onnx") + " --device cuda --dtype tf32 --no-layers -f json" + kQuick);
  if (r.exit_code == 2 && r.err.find("cuda") != std::string::npos) GTEST_SKIP() << "no CUDA: " << r.err;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["context"]["blas"], "cuBLAS, TF32 on; cuDNN, TF32 on");
  r = run("profile " + sample("tiny_cnn.onnx") + " --device cuda --dtype fp32 --no-layers -f json" + kQuick);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["context"]["blas"], "cuBLAS, TF32 off; cuDNN, TF32 off");
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

// ------------------------------------------------ crafted model files (issue 11)
// Hand-made files that target the executor's load path: entries that try to
// tell it where weight bytes lie, ranges that overflow, payloads that
// disagree with their dims. Each must be refused with exit 2 and a message
// naming the problem, by the analysis and by `profile` alike: never a signal.
struct CraftedCase {
  std::string name;
  std::function<void(onnx::TensorProto&)> craft;  // applied to the weight W
  int64_t weight_elements;                         // W's (and X's) element count
  int analyze_exit;                                // what plain `modelstat FILE` gives
  std::string keyword;                             // in profile's message
  std::string extra_wire;                          // raw wire bytes appended to W's message
};

void append_field(std::string& out, uint32_t field, const std::string& bytes) {
  for (uint64_t v = (uint64_t(field) << 3) | 2, pass = 0; pass < 2; ++pass, v = bytes.size()) {
    while (v >= 0x80) {
      out.push_back(char(uint8_t(v) | 0x80));
      v >>= 7;
    }
    out.push_back(char(v));
  }
  out += bytes;
}

// X[1,n] + W[1,n] -> Y, W crafted. Built as wire bytes so that W can carry
// what protobuf's API would not write (a varint that never ends).
std::string write_crafted(const CraftedCase& c, const std::filesystem::path& dir) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto g;
  g.set_name("crafted");
  auto io = [&](onnx::ValueInfoProto* v, const char* name) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_value(1);
    tt->mutable_shape()->add_dim()->set_dim_value(c.weight_elements);
  };
  io(g.add_input(), "X");
  io(g.add_output(), "Y");
  auto* n = g.add_node();
  n->set_op_type("Add");
  n->set_name("add");
  n->add_input("X");
  n->add_input("W");
  n->add_output("Y");
  onnx::TensorProto w;
  w.set_name("W");
  w.set_data_type(onnx::TensorProto::FLOAT);
  w.add_dims(1);
  w.add_dims(c.weight_elements);
  w.set_raw_data(std::string(size_t(c.weight_elements) * 4, '\0'));
  c.craft(w);
  std::string graph = g.SerializeAsString();
  append_field(graph, 5, w.SerializeAsString() + c.extra_wire);  // GraphProto.initializer
  std::string model = m.SerializeAsString();
  append_field(model, 7, graph);  // ModelProto.graph
  const auto path = dir / (c.name + ".onnx");
  std::ofstream out(path, std::ios::binary);
  out << model;
  return path.string();
}

void add_entry(onnx::TensorProto& t, const std::string& key, const std::string& value) {
  auto* e = t.add_external_data();
  e->set_key(key);
  e->set_value(value);
}

TEST(CliProfile, CraftedWeightLocationsAreRefusedNotFollowed) {
  const auto dir = std::filesystem::temp_directory_path() / ("modelstat_crafted_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream data(dir / "crafted_weights.bin", std::ios::binary);
    data << std::string(4096 * 4, '\0');
  }
  const int64_t big = 4096;  // 16 KiB of weights: stripped by the loader
  const int64_t small = 8;   // 32 bytes: kept inline
  auto external = [](const std::string& key, const std::string& value) {
    return [key, value](onnx::TensorProto& t) {
      t.clear_raw_data();
      t.set_data_location(onnx::TensorProto::EXTERNAL);
      add_entry(t, "location", "crafted_weights.bin");
      add_entry(t, key, value);
    };
  };
  const std::vector<CraftedCase> cases = {
      {"inband_huge_offset", [](onnx::TensorProto& t) { add_entry(t, "modelstat.payload", "9:9223372036854775800:100"); },
       big, 2, "modelstat.payload", ""},
      {"inband_negative_length", [](onnx::TensorProto& t) { add_entry(t, "modelstat.payload", "9:-5:-1"); }, big, 2,
       "modelstat.payload", ""},
      {"inband_range_over_header", [](onnx::TensorProto& t) { add_entry(t, "modelstat.payload", "9:0:32"); }, small, 2,
       "modelstat.payload", ""},
      {"inband_marker_on_unstripped",
       [](onnx::TensorProto& t) { add_entry(t, "modelstat.stripped_payload_bytes", "32"); }, small, 2,
       "modelstat.stripped_payload_bytes", ""},
      {"external_offset_overflows", external("offset", "9223372036854775800"), big, 2, "runs past the end", ""},
      {"external_negative_length", external("length", "-7"), big, 2, "negative", ""},
      // The executor alone reads payloads: the analysis succeeds, profile refuses.
      {"raw_data_shorter_than_dims", [](onnx::TensorProto& t) { t.mutable_raw_data()->resize(4096 * 4 - 4); }, big, 0,
       "bytes, expected", ""},
      {"packed_varint_never_ends",
       [](onnx::TensorProto& t) {
         t.clear_raw_data();
         t.set_data_type(onnx::TensorProto::INT64);
       },
       big, 0, "varint", [] {
         std::string field;  // int64_data (7), packed: 20000 bytes, every one with the continuation bit
         append_field(field, 7, std::string(20000, '\xff'));
         return field;
       }()},
      // 4 TiB of floats claimed, 16 KiB present: refused before any allocation
      // (by the memory estimate; on a machine with 4 TiB free, by the byte count).
      {"dims_claim_2_to_40_elements", [](onnx::TensorProto& t) { t.set_dims(1, int64_t(1) << 40); }, big, 0,
       "constants alone", ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = write_crafted(c, dir);
    const RunResult analysed = run("'" + path + "' -f json -o /dev/null");
    EXPECT_EQ(analysed.exit_code, c.analyze_exit) << analysed.err;
    const RunResult r = run("profile '" + path + "'" + kQuick + " --no-layers");
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find(c.keyword), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  std::filesystem::remove_all(dir);
}

// Inputs that once crashed a fuzz target (tools/fuzz.sh analyze|executor):
// `profile` takes each through the executor's load path and must end in an
// orderly way, run (0) or refused (2), never by a signal or an uncaught
// LibTorch error (exit 1).
TEST(CliProfile, FuzzRegressionsEndCleanly) {
  const std::filesystem::path dir = std::filesystem::path(MODELSTAT_SOURCE_DIR) / "tests/data/fuzz_regressions";
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    ++seen;
    const RunResult r = run("profile '" + entry.path().string() + "'" + kQuick + " --no-layers -f json -o /dev/null");
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 2) << entry.path() << " exit " << r.exit_code << "\n" << r.err;
  }
  EXPECT_GT(seen, 0);
}

// Whole-pipeline checks on the committed sample models, with every expected
// figure computed by hand from the architecture (see the comments), not from
// modelstat's output.
#include <gtest/gtest.h>

#include <string>

#include "modelstat/analysis.hpp"
#include "modelstat/error.hpp"

namespace {

using modelstat::AnalysisResult;
using modelstat::LoadOptions;

std::string sample(const std::string& name) { return std::string(MODELSTAT_SOURCE_DIR) + "/sample_models/" + name; }

bool has_notice(const AnalysisResult& r, const std::string& needle) {
  for (const auto& n : r.notices)
    if (n.find(needle) != std::string::npos) return true;
  return false;
}

// seeds/001 CustomModel: Conv(3->512,k3,s2,p1) GELU Conv(512->1024,k3,s2,p1) GELU
// AvgPool(1) Flatten Linear(1024,2048) GELU Linear(2048,512) GELU Linear(512,1); 224x224 input.
//   conv1: out 512x112x112, MACs = 512*112*112 * 3*3*3     = 173,408,256
//   conv2: out 1024x56x56,  MACs = 1024*56*56 * 512*3*3    = 14,797,504,512
//   fc:    1024*2048 + 2048*512 + 512*1                    = 3,146,240
//   total per image                                        = 14,974,059,008
//   params: (27*512+512) + (4608*1024+1024) + (1024*2048+2048) + (2048*512+512) + (512+1)
//         = 14,336 + 4,719,616 + 2,099,200 + 1,049,088 + 513 = 7,882,753
constexpr int64_t kCustomMacsPerImage = 14974059008LL;
constexpr int64_t kCustomParams = 7882753;

TEST(SampleModels, CustomModelSkeletonMatchesHandCount) {
  const AnalysisResult r = modelstat::analyze_file(sample("custom_model.onnx"), LoadOptions{});
  EXPECT_EQ(r.totals.macs, kCustomMacsPerImage);
  EXPECT_EQ(r.totals.params, kCustomParams);
  EXPECT_EQ(r.totals.nodes_exact, r.totals.nodes);
  EXPECT_TRUE(has_notice(r, "skeleton")) << "absent external data must be reported";
  EXPECT_TRUE(has_notice(r, "batch dim")) << "the defaulted batch must be reported";
  // Weights are fp32: 4 bytes per param (no other constants are that large).
  ASSERT_FALSE(r.size_by_dtype.empty());
  EXPECT_EQ(r.size_by_dtype[0].dtype, "float32");
  EXPECT_GE(r.size_by_dtype[0].bytes, 4 * kCustomParams);
}

TEST(SampleModels, BatchBindingScalesMacsLinearly) {
  LoadOptions o;
  o.dim_values["batch"] = 32;
  const AnalysisResult r = modelstat::analyze_file(sample("custom_model.onnx"), o);
  EXPECT_EQ(r.totals.macs, 32 * kCustomMacsPerImage);
  EXPECT_EQ(r.totals.params, kCustomParams);
  EXPECT_FALSE(has_notice(r, "batch dim"));
  // Input is 32x3x224x224 fp32.
  EXPECT_EQ(r.totals.input_bytes, 32LL * 3 * 224 * 224 * 4);
}

TEST(SampleModels, InputFlagBindsFullShape) {
  LoadOptions o;
  o.input_shapes["x"] = {2, 3, 224, 224};
  const AnalysisResult r = modelstat::analyze_file(sample("custom_model.onnx"), o);
  EXPECT_EQ(r.totals.macs, 2 * kCustomMacsPerImage);
}

TEST(SampleModels, PartsAddUpToTheWhole) {
  const AnalysisResult whole = modelstat::analyze_file(sample("custom_model.onnx"), LoadOptions{});
  const AnalysisResult p0 = modelstat::analyze_file(sample("custom_model_part0.onnx"), LoadOptions{});
  const AnalysisResult p1 = modelstat::analyze_file(sample("custom_model_part1.onnx"), LoadOptions{});
  EXPECT_EQ(p0.totals.macs + p1.totals.macs, whole.totals.macs);
  EXPECT_EQ(p0.totals.params + p1.totals.params, whole.totals.params);
  // part1 alone: the three Linear layers.
  EXPECT_EQ(p1.totals.macs, 1024 * 2048 + 2048 * 512 + 512);
}

TEST(SampleModels, TiedWeightCountedOnce) {
  // One 16x16 initializer W read by two MatMuls: 256 params, reported as shared.
  const AnalysisResult r = modelstat::analyze_file(sample("tied_weights.onnx"), LoadOptions{});
  EXPECT_EQ(r.totals.params, 256);
  ASSERT_EQ(r.shared_weights.size(), 1u);
  EXPECT_EQ(r.shared_weights[0].name, "W");
  EXPECT_EQ(r.shared_weights[0].consumers.size(), 2u);
  // batch 1: two [1,16]x[16,16] products = 2 * 256 MACs.
  EXPECT_EQ(r.totals.macs, 512);
}

TEST(SampleModels, ConstantNodeWeightsCountButShapeConstantsDoNot) {
  // Conv weight 4x3x3x3 stored in a Constant node (108 floats) + an int64[2]
  // Reshape target (not params). Conv on 1x3x8x8, no padding -> 1x4x6x6:
  // MACs = 4*6*6 * 3*3*3 = 3888.
  const AnalysisResult r = modelstat::analyze_file(sample("constant_weights.onnx"), LoadOptions{});
  EXPECT_EQ(r.totals.params, 108);
  EXPECT_EQ(r.totals.macs, 3888);
}

TEST(SampleModels, ExternalDataPresentIsNotASkeleton) {
  // W1 64x128, b1 128, W2 128x10, b2 10 = 8192 + 128 + 1280 + 10 = 9610 params.
  const AnalysisResult r = modelstat::analyze_file(sample("external_data.onnx"), LoadOptions{});
  EXPECT_EQ(r.totals.params, 9610);
  EXPECT_EQ(r.totals.macs, 64 * 128 + 128 * 10);
  EXPECT_FALSE(has_notice(r, "skeleton"));
}

TEST(SampleModels, ControlFlowSubgraphsAreCountedNotCrashed) {
  const AnalysisResult r = modelstat::analyze_file(sample("control_flow.onnx"), LoadOptions{});
  ASSERT_EQ(r.nodes.size(), 2u);
  for (const auto& n : r.nodes) EXPECT_GT(n.subgraph_nodes, 0) << n.name;
  EXPECT_GT(r.totals.flops, 0);
}

TEST(SampleModels, EverySampleAnalysesWithFullCoverageOnceDimsAreBound) {
  for (const char* name : {"tiny_cnn.onnx", "tiny_yolo.onnx", "tiny_bert.onnx", "tiny_gpt2.onnx"}) {
    SCOPED_TRACE(name);
    LoadOptions o;
    o.dim_values["seq"] = 16;
    AnalysisResult r;
    ASSERT_NO_THROW(r = modelstat::analyze_file(sample(name), o));
    EXPECT_GT(r.totals.macs, 0);
    EXPECT_GT(r.totals.params, 0);
    EXPECT_GT(r.totals.peak_activation_bytes, 0);
    EXPECT_EQ(r.totals.nodes_unknown_op, 0);
  }
}

TEST(SampleModels, UnboundSequenceDimIsReportedNotCountedAsZero) {
  // tiny_bert's input_ids is [batch, seq]; without --dim seq the attention
  // nodes cannot be sized: they must be marked and 'seq' listed.
  const AnalysisResult r = modelstat::analyze_file(sample("tiny_bert.onnx"), LoadOptions{});
  EXPECT_GT(r.totals.nodes_unknown_shape, 0);
  bool seq_listed = false;
  for (const auto& d : r.unknown_dims) seq_listed = seq_listed || d.find("seq") != std::string::npos;
  EXPECT_TRUE(seq_listed);
}

}  // namespace

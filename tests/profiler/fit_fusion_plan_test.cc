// `fit` prices the kernels the executor runs (issue 33): the fused groups an
// inference forecast prices (NodeForecast::fused_head, op_cost "fused") are
// the groups the executor builds (Executor::fusion_plan()), node by node, on
// every sample model and on hand-made graphs where a constant's value or a
// computed operand blocks a fusion the structure alone would allow.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "analyzer/fusion/fusion_plan.hpp"
#include "modelstat/analysis.hpp"
#include "modelstat/fit.hpp"
#include "profiler/executor.hpp"
#include "tests/profiler/ir_model.hpp"
#include "tests/test_support.hpp"

namespace modelstat::profiler {
namespace {

// Per node: the head of the group it runs in as the executor built it (-1: alone).
std::vector<int> executor_heads(const Executor& exec, size_t nodes) {
  std::vector<int> heads(nodes, -1);
  const FusionPlan& plan = exec.fusion_plan();
  for (size_t i = 0; i < nodes && i < plan.group_of.size(); ++i)
    if (plan.group_of[i] >= 0) heads[i] = plan.groups[size_t(plan.group_of[i])].head;
  return heads;
}

// Per node: the head fit priced it with, and whether it priced it at 0 as a member.
void expect_same_groups(const AnalysisResult& analysis, const std::string& what) {
  ExecOptions options;  // inference on the CPU, fusion on: what `profile` and `report` run
  const Executor exec(*analysis.model, options);
  const FitReport fit = forecast_fit(analysis, test::cpu_ceilings(1e10, 1e11), FitOptions{});
  const size_t n = analysis.model->graph.nodes.size();
  ASSERT_EQ(fit.nodes.size(), n) << what;
  const std::vector<int> heads = executor_heads(exec, n);
  const FusionPlan& plan = exec.fusion_plan();
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(fit.nodes[i].fused_head, heads[i]) << what << ": node " << i << " " << fit.nodes[i].name;
    EXPECT_EQ(fit.nodes[i].op_cost == "fused", bool(plan.absorbed[i])) << what << ": node " << i;
  }
}

AnalysisResult analysis_of(const Model& m) {
  AnalysisResult a = analyze_model(m);
  a.model = std::make_shared<Model>(m);
  return a;
}

TEST(FitFusionPlan, EverySampleModelIsPricedAsTheExecutorGroupsIt) {
  int models = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(MODELSTAT_SOURCE_DIR) + "/sample_models")) {
    if (entry.path().extension() != ".onnx") continue;
    LoadOptions o;
    o.default_batch = 1;
    o.dim_values = {{"seq", 16}, {"past", 4}, {"past_seq", 4}, {"total_seq", 20}};
    const AnalysisResult a = analyze_file(entry.path().string(), o);
    expect_same_groups(a, entry.path().filename().string());
    ++models;
  }
  EXPECT_GE(models, 13);
}

TEST(FitFusionPlan, ConstantsThatBlockAFusionBlockItInBoth) {
  // 1. GELU written out with a divisor of 2 (not sqrt 2): another function, runs as written.
  // 2. A Conv whose weight is a graph input: no packed kernel, runs as written.
  // 3. Conv -> BatchNormalization whose scale is computed (Relu of a constant):
  //    the Conv is a group of one, the BatchNormalization runs on its own.
  // 4. Clip with a computed bound after a Conv: not a post-op.
  for (int variant = 0; variant < 4; ++variant) {
    IrModel m;
    if (variant == 0) {
      const int x = m.input("x", {2, 8});
      const int d = m.node("Div", {x, m.weight("two", at::full({}, 2.f))})[0];
      const int e = m.node("Erf", {d})[0];
      const int a = m.node("Add", {e, m.weight("one", at::full({}, 1.f))})[0];
      m.output(m.node("Mul", {m.node("Mul", {x, a})[0], m.weight("half", at::full({}, 0.5f))})[0]);
    } else {
      const int x = m.input("x", {1, 4, 8, 8});
      const int w = variant == 1 ? m.input("w", {4, 4, 3, 3}) : m.weight("w", at::ones({4, 4, 3, 3}));
      const int y = m.node("Conv", {x, w}, 1, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}})[0];
      if (variant == 2) {
        const int scale = m.node("Relu", {m.weight("s", at::ones({4}))})[0];
        m.output(m.node("BatchNormalization", {y, scale, m.weight("b", at::zeros({4})), m.weight("mean", at::zeros({4})),
                                               m.weight("var", at::ones({4}))})[0]);
      } else if (variant == 3) {
        const int low = m.node("Neg", {m.weight("l", at::full({}, 1.f))})[0];
        m.output(m.node("Clip", {y, low, m.weight("h", at::full({}, 6.f))})[0]);
      } else {
        m.output(y);
      }
    }
    const AnalysisResult a = analysis_of(m.model);
    expect_same_groups(a, "variant " + std::to_string(variant));
    // And the block holds: nothing absorbed in any variant.
    const Executor exec(m.model, ExecOptions{});
    EXPECT_EQ(exec.fusion_plan().absorbed_count, 0) << variant;
  }
}

// A 1x1 Conv (x 1x16x8x8, w 32x16x1x1) with a residual Add of a second input
// runs as one oneDNN convolution with a sum post-op; with conv samples in the
// ceilings fit prices it at the rate of the sample of its kind nearest its
// product: M = 64 positions, N = 32, K = 16; FLOPs 2 x 64 x 32 x 16 = 65,536,
// at the sample's 2e10 FLOP/s 3.2768e-6 s; the residual's 8,192 bytes
// (32 x 64 floats) at 1e-10 s a byte 8.192e-7 s; no call cost, scratch or
// memory term (the samples were timed with them). The sample of another kind
// (kxk) at the same product is not used. Without samples: the matmul curve,
// and no scratch pass either (the executor's kernel prepacks its weights).
TEST(FitFusionPlan, ConvGroupIsPricedOnTheConvSamplesOfItsKindWithItsResidual) {
  IrModel m;
  const int x = m.input("x", {1, 16, 8, 8});
  const int r = m.input("r", {1, 32, 8, 8});
  const int y = m.node("Conv", {x, m.weight("w", at::ones({32, 16, 1, 1}))})[0];
  const int z = m.node("Add", {y, r})[0];
  for (const auto& [t, dims] : std::vector<std::pair<int, std::vector<int64_t>>>{{y, {1, 32, 8, 8}}, {z, {1, 32, 8, 8}}})
    m.model.graph.tensors[size_t(t)].shape = test::make_shape(dims);
  m.output(z);
  const AnalysisResult a = analysis_of(m.model);
  DeviceCeilings c = test::cpu_ceilings(1e10, 1e11);
  const FitReport plain = forecast_fit(a, c, FitOptions{});
  EXPECT_EQ(plain.nodes[0].op_cost, "");
  EXPECT_DOUBLE_EQ(plain.nodes[0].scratch_seconds, 0.0);
  EXPECT_EQ(plain.nodes[1].op_cost, "fused");
  c.conv_samples = {{"kxk", 64, 32, 16, 1e9}, {"1x1", 64, 32, 16, 2e10}, {"1x1", 4096, 512, 512, 9e10}};
  c.conv_residual_seconds_per_byte = 1e-10;
  const FitReport f = forecast_fit(a, c, FitOptions{});
  const NodeForecast& head = f.nodes[0];
  EXPECT_EQ(head.op_cost, "conv 1x1");
  EXPECT_NEAR(head.compute_seconds, 3.2768e-6, 1e-15);
  EXPECT_NEAR(head.kernel_seconds, 8.192e-7, 1e-15);
  EXPECT_DOUBLE_EQ(head.overhead_seconds, 0.0);
  EXPECT_DOUBLE_EQ(head.scratch_seconds, 0.0);
  EXPECT_NEAR(head.forward_seconds, 3.2768e-6 + 8.192e-7, 1e-15);
  EXPECT_EQ(f.nodes[1].op_cost, "fused");
  EXPECT_NEAR(f.latency.forward_seconds, 3.2768e-6 + 8.192e-7, 1e-15);
}

// A depthwise 5x5 Conv at stride 2 (x 1x16x16x16, w 16x1x5x5, group 16, pad
// 2: output 1x16x8x8) followed by Sigmoid and Mul (SiLU) runs as one group
// whose SiLU is a pass over the output after the kernel. fit prices it at the
// depthwise op class's line (measured on a 3x3): its bytes, input 16,384 +
// weight 1,600 + output 4,096 = 22,080, at 1e-9 s a byte 2.208e-5 s, plus the
// class's 1e-6 s fixed cost; the SiLU over the 4,096-byte output at 2e-10 s a
// byte adds 8.192e-7 s. With depthwise samples of its kind (dw/s2) at its M =
// 64 positions and N = 16 channels, 3x3 (K = 9) at 2e9 FLOP/s and 5x5 (K =
// 25) at 4e9, the class's line is scaled by 25/9 x 2e9/4e9 = 25/18: the 5x5
// does 25/9 of the work at twice the rate. Samples of the other kind (dw,
// stride 1) do not scale it.
TEST(FitFusionPlan, DepthwiseConvGroupIsPricedOnItsClassScaledByItsTapsWithItsTrailingSilu) {
  IrModel m;
  const int x = m.input("x", {1, 16, 16, 16});
  const int y = m.node("Conv", {x, m.weight("w", at::ones({16, 1, 5, 5}))}, 1,
                       {{"group", int64_t(16)}, {"kernel_shape", std::vector<int64_t>{5, 5}},
                        {"pads", std::vector<int64_t>{2, 2, 2, 2}}, {"strides", std::vector<int64_t>{2, 2}}})[0];
  const int s = m.node("Sigmoid", {y})[0];
  const int z = m.node("Mul", {y, s})[0];
  for (int t : {y, s, z}) m.model.graph.tensors[size_t(t)].shape = test::make_shape({1, 16, 8, 8});
  m.output(z);
  const AnalysisResult a = analysis_of(m.model);
  DeviceCeilings c = test::cpu_ceilings(1e10, 1e11);
  OpCost depthwise;
  depthwise.op = "Conv/depthwise";
  depthwise.fixed_seconds = 1e-6;
  depthwise.seconds_per_byte = 1e-9;
  c.op_costs = {depthwise};
  c.conv_silu_seconds_per_byte = 2e-10;
  c.conv_samples = {{"dw", 64, 16, 9, 1e9}, {"dw", 64, 16, 25, 8e9}};
  const FitReport plain = forecast_fit(a, c, FitOptions{});
  ASSERT_EQ(plain.nodes.size(), 3u);
  EXPECT_EQ(plain.nodes[0].op_cost, "Conv/depthwise");
  EXPECT_NEAR(plain.nodes[0].kernel_seconds, 2.208e-5 + 8.192e-7, 1e-15);
  EXPECT_NEAR(plain.nodes[0].forward_seconds, 2.208e-5 + 1e-6 + 8.192e-7, 1e-15);
  c.conv_samples.push_back({"dw/s2", 64, 16, 9, 2e9});
  c.conv_samples.push_back({"dw/s2", 64, 16, 25, 4e9});
  const FitReport f = forecast_fit(a, c, FitOptions{});
  const NodeForecast& head = f.nodes[0];
  EXPECT_EQ(head.op_cost, "Conv/depthwise");
  EXPECT_NEAR(head.kernel_seconds, 2.208e-5 * 25.0 / 18.0 + 8.192e-7, 1e-15);
  EXPECT_NEAR(head.forward_seconds, 2.208e-5 * 25.0 / 18.0 + 1e-6 + 8.192e-7, 1e-15);
  EXPECT_EQ(f.nodes[1].op_cost, "fused");
  EXPECT_EQ(f.nodes[2].op_cost, "fused");
}

// A QDQ Conv (x_q u8 1x8x8x8, w_q s8 8x8x3x3, pad 1) runs as one int8 kernel:
// with an int8 curve in the ceilings fit prices it there. By hand: MACs =
// 512 outputs x 72 taps = 36,864, FLOPs 73,728; on a flat 400 G op/s curve
// 1.8432e-7 s. Bytes the kernel moves: x_q 512 + its scale 4 and zero point 1,
// w_q 576 + 4 + 1, the float output 2,048 = 3,146, at 10 GB/s 3.146e-7 s.
// Without an int8 curve the head stays priced as fp32 arithmetic.
TEST(FitFusionPlan, Int8GroupIsPricedOnTheInt8Curve) {
  IrModel m;
  const int x = m.input("x_q", {1, 8, 8, 8}, DType::UInt8);
  const int xf = m.node("DequantizeLinear", {x, m.weight("xs", at::full({}, 0.05f)),
                                             m.weight("xz", at::full({}, 128, at::kByte))})[0];
  const int wf = m.node("DequantizeLinear", {m.weight("w_q", at::ones({8, 8, 3, 3}, at::kChar)),
                                             m.weight("ws", at::full({}, 0.01f)), m.weight("wz", at::zeros({}, at::kChar))})[0];
  const int y = m.node("Conv", {xf, wf}, 1, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}})[0];
  // As shape inference would have them.
  for (const auto& [t, dims] : std::vector<std::pair<int, std::vector<int64_t>>>{
           {xf, {1, 8, 8, 8}}, {wf, {8, 8, 3, 3}}, {y, {1, 8, 8, 8}}})
    m.model.graph.tensors[size_t(t)].shape = test::make_shape(dims);
  m.output(y);
  const AnalysisResult a = analysis_of(m.model);
  DeviceCeilings c = test::cpu_ceilings(1e10, 1e11);
  const FitReport fp32 = forecast_fit(a, c, FitOptions{});
  EXPECT_NE(fp32.nodes[2].op_cost, "int8");
  c.matmul.push_back(test::flat_matmul_curve("int8", 4e11));
  const FitReport r = forecast_fit(a, c, FitOptions{});
  const NodeForecast& head = r.nodes[2];
  EXPECT_EQ(head.op_type, "Conv");
  EXPECT_EQ(head.op_cost, "int8");
  EXPECT_EQ(head.fused_head, 2);
  EXPECT_NEAR(head.compute_seconds, 1.8432e-7, 1e-12);
  EXPECT_NEAR(head.memory_seconds, 3.146e-7, 1e-12);
  EXPECT_DOUBLE_EQ(head.scratch_seconds, 0.0);
  EXPECT_NEAR(head.forward_seconds, 3.146e-7 + head.overhead_seconds, 1e-12);
  EXPECT_EQ(r.nodes[0].op_cost, "fused");
  EXPECT_EQ(r.nodes[1].op_cost, "fused");
}

// A weight transposed by a node is the same on every run: the executor runs
// that node once and keeps its output (profiler/plan.cc), so an inference
// forecast prices it at 0; a training step runs it every time.
TEST(FitFusionPlan, RunInvariantNodesCostNothingPerInference) {
  IrModel m;
  const int x = m.input("x", {2, 8});
  const int wt = m.node("Transpose", {m.weight("w", at::ones({4, 8}))}, 1, {{"perm", std::vector<int64_t>{1, 0}}})[0];
  const int y = m.node("MatMul", {x, wt})[0];
  const int z = m.node("Relu", {y})[0];
  for (const auto& [t, dims] : std::vector<std::pair<int, std::vector<int64_t>>>{{wt, {8, 4}}, {y, {2, 4}}, {z, {2, 4}}})
    m.model.graph.tensors[size_t(t)].shape = test::make_shape(dims);
  m.output(z);
  const AnalysisResult a = analysis_of(m.model);
  const FitReport r = forecast_fit(a, test::cpu_ceilings(1e10, 1e11), FitOptions{});
  EXPECT_EQ(r.nodes[0].op_cost, "run-invariant");
  EXPECT_DOUBLE_EQ(r.nodes[0].forward_seconds, 0.0);
  EXPECT_GT(r.nodes[1].forward_seconds, 0.0) << "the product of the input runs every time";
  FitOptions train;
  train.train = true;
  const FitReport t = forecast_fit(a, test::cpu_ceilings(1e10, 1e11), train);
  EXPECT_NE(t.nodes[0].op_cost, "run-invariant");
  EXPECT_GT(t.nodes[0].forward_seconds, 0.0);
}

}  // namespace
}  // namespace modelstat::profiler

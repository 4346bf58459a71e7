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

// A measured op class with its inference line: a fixed cost and a cost per byte.
OpCost op_class(const std::string& op, double fixed_seconds, double seconds_per_byte) {
  OpCost c;
  c.op = op;
  c.fixed_seconds = fixed_seconds;
  c.seconds_per_byte = seconds_per_byte;
  return c;
}

// Shapes for tensors the hand-made graph leaves unshaped (node outputs), by tensor index.
void set_shapes(IrModel& m, std::initializer_list<std::pair<int, std::vector<int64_t>>> shapes) {
  for (const auto& [t, dims] : shapes) m.model.graph.tensors[size_t(t)].shape = test::make_shape(dims);
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
  set_shapes(m, {{y, {1, 32, 8, 8}}, {z, {1, 32, 8, 8}}});
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

// An image as fed (NCHW) is turned channels-last before a Conv group's kernel
// (profiler/ops/fp32_conv.cc): fit adds the ceilings' cost per byte of that
// input (conv_layout_seconds_per_byte) to a Conv reading a graph input, here
// through a normalising Sub of a constant: x is 1x3x8x8 floats, 768 bytes, at
// 1e-9 s a byte 7.68e-7 s. Not to the Conv after it, which reads the first
// one's channels-last output, nor to a Conv reading a one-channel input
// (already channels-last).
TEST(FitFusionPlan, AConvReadingAnImageAsFedPaysTheLayoutConversion) {
  IrModel m;
  const int x = m.input("x", {1, 3, 8, 8});
  const int xn = m.node("Sub", {x, m.weight("mean", at::full({1, 3, 1, 1}, 0.5))})[0];
  const int y = m.node("Conv", {xn, m.weight("w", at::ones({4, 3, 1, 1}))})[0];
  const int z = m.node("Conv", {y, m.weight("w2", at::ones({4, 4, 1, 1}))})[0];
  set_shapes(m, {{xn, {1, 3, 8, 8}}, {y, {1, 4, 8, 8}}, {z, {1, 4, 8, 8}}});
  m.output(z);
  IrModel gray;
  const int g = gray.input("g", {1, 1, 8, 8});
  const int gy = gray.node("Conv", {g, gray.weight("w", at::ones({4, 1, 1, 1}))})[0];
  set_shapes(gray, {{gy, {1, 4, 8, 8}}});
  gray.output(gy);
  DeviceCeilings c = test::cpu_ceilings(1e10, 1e11);
  c.conv_samples = {{"1x1", 64, 4, 3, 1e10}, {"1x1", 64, 4, 4, 1e10}, {"1x1", 64, 4, 1, 1e10}};
  const FitReport before = forecast_fit(analysis_of(m.model), c, FitOptions{});
  const FitReport gray_before = forecast_fit(analysis_of(gray.model), c, FitOptions{});
  c.conv_layout_seconds_per_byte = 1e-9;
  const FitReport after = forecast_fit(analysis_of(m.model), c, FitOptions{});
  const FitReport gray_after = forecast_fit(analysis_of(gray.model), c, FitOptions{});
  ASSERT_EQ(after.nodes.size(), 3u);
  EXPECT_EQ(after.nodes[1].op_cost, "conv 1x1");
  EXPECT_NEAR(after.nodes[1].kernel_seconds - before.nodes[1].kernel_seconds, 7.68e-7, 1e-15);
  EXPECT_NEAR(after.nodes[1].forward_seconds - before.nodes[1].forward_seconds, 7.68e-7, 1e-15);
  EXPECT_DOUBLE_EQ(after.nodes[2].forward_seconds, before.nodes[2].forward_seconds);
  EXPECT_DOUBLE_EQ(after.nodes[0].forward_seconds, before.nodes[0].forward_seconds);
  EXPECT_DOUBLE_EQ(gray_after.nodes[0].forward_seconds, gray_before.nodes[0].forward_seconds);
}

// A decoder step reads its KV cache from a graph input, which the run
// before pushed out of the caches when the model's weights and inputs pass
// the last-level cache: a measured class reading a graph input is then priced
// at the copy bandwidth, not the rate of the cache level its bytes would fit.
// The Concat appends 1x1x256 to a 1x1024x256 cache (inputs 1,048,576 + 1,024
// bytes, output 1,049,600: 2,099,200 bytes); the L3 holds 4 MiB at 1e11 B/s,
// the copy runs at 1e10. With a 256 x 8192 weight (8 MiB) beside it the
// Concat takes 2,099,200 / 1e10 = 2.0992e-4 s; with a 256 x 256 weight (256
// KiB) the model fits the L3 and it takes 2,099,200 / 1e11 = 2.0992e-5 s.
// The MatMul, which reads a graph input too, is not a measured class here.
TEST(FitFusionPlan, ACacheReadFromAGraphInputStreamsFromMemoryWhenTheModelPassesTheCache) {
  auto model = [](int64_t width) {
    IrModel m;
    const int past = m.input("past", {1, 1024, 256});
    const int fresh = m.input("new", {1, 1, 256});
    const int cache = m.node("Concat", {past, fresh}, 1, {{"axis", int64_t(1)}})[0];
    set_shapes(m, {{cache, {1, 1025, 256}}});
    const int x = m.input("x", {1, 256});
    const int y = m.node("MatMul", {x, m.weight("w", at::zeros({256, width}))})[0];
    set_shapes(m, {{y, {1, width}}});
    m.output(cache);
    m.output(y);
    return analysis_of(m.model);
  };
  DeviceCeilings c = test::cpu_ceilings(1e10, 1e11);
  c.threads = 1;
  MemoryLevel l3;
  l3.level = "L3";
  l3.threads = 1;
  l3.capacity_bytes = 4 << 20;
  l3.bytes_per_second = 1e11;
  c.memory_levels = {l3};
  const OpCost concat = op_class("Concat", 1e-6, 1e-13);
  c.op_costs = {concat};
  const FitReport large = forecast_fit(model(8192), c, FitOptions{});
  const FitReport small = forecast_fit(model(256), c, FitOptions{});
  ASSERT_EQ(large.nodes[0].op_type, "Concat");
  EXPECT_NEAR(large.nodes[0].memory_seconds, 2.0992e-4, 1e-16);
  EXPECT_NEAR(small.nodes[0].memory_seconds, 2.0992e-5, 1e-16);
  // Without cache levels in the ceilings nothing says the model passes one:
  // the rule before (no level holds it: the copy bandwidth) stands.
  c.memory_levels.clear();
  EXPECT_NEAR(forecast_fit(model(256), c, FitOptions{}).nodes[0].memory_seconds, 2.0992e-4, 1e-16);
}

// GELU written out (x / sqrt 2, Erf, + 1, x *, * 0.5) runs as one GELU
// kernel at its Div; with the Gelu class measured, fit prices that row at
// the class's line in the group's bytes: x and y are 1x64x32 floats, 8,192
// bytes each, 16,384 at 1e-9 s a byte 1.6384e-5 s, plus the class's 2e-6 s;
// the Div class (4e-11 s a byte) no longer prices it. Its members stay at 0.
// A MatMul group whose GELU is a post-op (x 1x64 by a 64 x 32 weight, GELU
// after it) adds the pass over its 1x32 output: 2 x 128 bytes x 1e-9 s.
TEST(FitFusionPlan, AGeluKernelIsPricedOnTheGeluClass) {
  auto gelu = [](IrModel& m, int x) {
    const int d = m.node("Div", {x, m.weight("sqrt2", at::full({}, float(std::sqrt(2.0))))})[0];
    const int e = m.node("Erf", {d})[0];
    const int a = m.node("Add", {e, m.weight("one", at::full({}, 1.f))})[0];
    return m.node("Mul", {m.node("Mul", {x, a})[0], m.weight("half", at::full({}, 0.5f))})[0];
  };
  IrModel m;
  const int y = gelu(m, m.input("x", {1, 64, 32}));
  for (int t = 0; t < int(m.model.graph.tensors.size()); ++t)
    if (m.model.graph.tensors[size_t(t)].role == TensorRole::Activation)
      set_shapes(m, {{t, {1, 64, 32}}});
  m.output(y);
  IrModel mm;
  const int p = mm.node("MatMul", {mm.input("x", {1, 64}), mm.weight("w", at::ones({64, 32}))})[0];
  const int q = gelu(mm, p);
  for (int t = 0; t < int(mm.model.graph.tensors.size()); ++t)
    if (mm.model.graph.tensors[size_t(t)].role == TensorRole::Activation)
      set_shapes(mm, {{t, {1, 32}}});
  mm.output(q);
  DeviceCeilings c = test::cpu_ceilings(1e12, 1e11);
  const OpCost div = op_class("Div", 0, 4e-11);
  c.op_costs = {div};
  const FitReport without = forecast_fit(analysis_of(mm.model), c, FitOptions{});
  const OpCost g = op_class("Gelu", 2e-6, 1e-9);
  c.op_costs.push_back(g);
  const FitReport f = forecast_fit(analysis_of(m.model), c, FitOptions{});
  ASSERT_EQ(f.nodes.size(), 5u);
  EXPECT_EQ(f.nodes[0].op_cost, "Gelu");
  EXPECT_NEAR(f.nodes[0].kernel_seconds, 1.6384e-5, 1e-15);
  EXPECT_NEAR(f.nodes[0].forward_seconds, 1.6384e-5 + 2e-6, 1e-15);
  for (size_t i = 1; i < 5; ++i) EXPECT_EQ(f.nodes[i].op_cost, "fused") << i;
  const FitReport with = forecast_fit(analysis_of(mm.model), c, FitOptions{});
  ASSERT_EQ(with.nodes[0].op_type, "MatMul");
  EXPECT_EQ(with.nodes[1].op_cost, "fused");
  EXPECT_NEAR(with.nodes[0].forward_seconds - without.nodes[0].forward_seconds, 2 * 128 * 1e-9, 1e-15);
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
  const OpCost depthwise = op_class("Conv/depthwise", 1e-6, 1e-9);
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

// The executor's conv kernels compute output channels in whole blocks of the
// vector's fp32 lanes (DeviceCeilings::conv_channel_block), so fit prices a
// conv writing 20 channels as one writing the next multiple. A 1x1 Conv, x
// 1x16x8x8, w 20x16x1x1: M = 64 positions, K = 16; two 1x1 samples at 2e10
// FLOP/s (N 16 and 32: that rate everywhere, and no product below the grid,
// whose floor conv_seconds_at would apply). Block 16: N runs as 32, FLOPs 2 x
// 64 x 32 x 16 = 65,536, 3.2768e-6 s; block 8: N 24, 49,152 FLOPs, 2.4576e-6
// s; no block (0, a file before 2.7): N 20, 40,960 FLOPs, 2.048e-6 s. A conv
// writing 32 channels costs the same with or without a block.
TEST(FitFusionPlan, AConvWritingChannelsBetweenBlocksIsPricedAtTheNextWholeBlock) {
  auto model = [](int64_t channels) {
    IrModel m;
    const int x = m.input("x", {1, 16, 8, 8});
    const int y = m.node("Conv", {x, m.weight("w", at::ones({channels, 16, 1, 1}))})[0];
    set_shapes(m, {{y, {1, channels, 8, 8}}});
    m.output(y);
    return analysis_of(m.model);
  };
  const AnalysisResult twenty = model(20), thirty_two = model(32);
  DeviceCeilings c = test::cpu_ceilings(1e10, 1e11);
  c.conv_samples = {{"1x1", 64, 16, 16, 2e10}, {"1x1", 64, 32, 16, 2e10}};
  const double none = forecast_fit(twenty, c, FitOptions{}).nodes[0].compute_seconds;
  const double whole_none = forecast_fit(thirty_two, c, FitOptions{}).nodes[0].compute_seconds;
  c.conv_channel_block = 8;
  const double eight = forecast_fit(twenty, c, FitOptions{}).nodes[0].compute_seconds;
  c.conv_channel_block = 16;
  const FitReport sixteen = forecast_fit(twenty, c, FitOptions{});
  EXPECT_EQ(sixteen.nodes[0].op_cost, "conv 1x1");
  EXPECT_NEAR(none, 2.048e-6, 1e-15);
  EXPECT_NEAR(eight, 2.4576e-6, 1e-15);
  EXPECT_NEAR(sixteen.nodes[0].compute_seconds, 3.2768e-6, 1e-15);
  EXPECT_NEAR(sixteen.nodes[0].forward_seconds, 3.2768e-6, 1e-15);
  EXPECT_NEAR(forecast_fit(thirty_two, c, FitOptions{}).nodes[0].compute_seconds, whole_none, 1e-18);
  EXPECT_NEAR(whole_none, 3.2768e-6, 1e-15);
}

// A model whose run the last-level cache holds keeps its weights there from
// one run to the next: fit prices its convs at the samples' hot rate. A 1x1
// Conv, x 1x16x8x8, w 32x16x1x1 (2,048 B), output 8,192 B: one run touches
// 10,240 B (weight_bytes + bytes_written). One sample, 1e10 FLOP/s cold and
// 4e10 hot; 65,536 FLOPs. Largest cache level measured to hold E bytes:
//   E = 1 MiB: 10,240 <= 0.75 E, share 0, hot: 1.6384e-6 s
//   E = 8,192: 10,240 >= 1.25 E, share 1, cold: 6.5536e-6 s
//   E = 10,240: (10,240 - 7,680) / 5,120 = 0.5: 1 / (0.5 / 4e10 + 0.5 / 1e10) = 1.6e10, 4.096e-6 s
// A curve plateau no cache matched ("level 4") is not a cache; no levels at all: cold.
TEST(FitFusionPlan, AConvOfARunTheCacheHoldsIsPricedAtItsSamplesHotRate) {
  IrModel m;
  const int x = m.input("x", {1, 16, 8, 8});
  const int y = m.node("Conv", {x, m.weight("w", at::ones({32, 16, 1, 1}))})[0];
  set_shapes(m, {{y, {1, 32, 8, 8}}});
  m.output(y);
  const AnalysisResult a = analysis_of(m.model);
  ASSERT_EQ(a.totals.weight_bytes + a.totals.bytes_written, 10240);
  DeviceCeilings c = test::cpu_ceilings(1e10, 1e11);
  c.conv_samples = {{"1x1", 64, 32, 16, 1e10, 4e10}};
  EXPECT_NEAR(forecast_fit(a, c, FitOptions{}).nodes[0].compute_seconds, 6.5536e-6, 1e-15);
  auto with_cache = [&](int64_t edge) {
    DeviceCeilings d = c;
    MemoryLevel l3;
    l3.level = "L3";
    l3.threads = c.threads;
    l3.capacity_bytes = int64_t(32) << 20;
    l3.measured_edge_bytes = edge;
    l3.bytes_per_second = 2e11;
    MemoryLevel plateau = l3;
    plateau.level = "level 4";
    plateau.capacity_bytes = plateau.measured_edge_bytes = int64_t(1) << 30;
    d.memory_levels = {l3, plateau};
    return forecast_fit(a, d, FitOptions{}).nodes[0].compute_seconds;
  };
  EXPECT_NEAR(with_cache(int64_t(1) << 20), 1.6384e-6, 1e-15);
  EXPECT_NEAR(with_cache(8192), 6.5536e-6, 1e-15);
  EXPECT_NEAR(with_cache(10240), 4.096e-6, 1e-15);
}

// A depthwise conv's channels are its kernel's vector dimension: its class
// line is scaled by the next whole block over its channels. x 1x20x8x8, w
// 20x1x3x3, pad 1: bytes input 5,120 + weight 720 + output 5,120 = 10,960, at
// the class's 1e-9 s a byte 1.096e-5 s (plus its 1e-6 s fixed cost); with
// block 16 the line is x 32/20: 1.7536e-5 s.
TEST(FitFusionPlan, ADepthwiseConvIsPricedOverWholeChannelBlocks) {
  IrModel m;
  const int x = m.input("x", {1, 20, 8, 8});
  const int y = m.node("Conv", {x, m.weight("w", at::ones({20, 1, 3, 3}))}, 1,
                       {{"group", int64_t(20)}, {"kernel_shape", std::vector<int64_t>{3, 3}},
                        {"pads", std::vector<int64_t>{1, 1, 1, 1}}})[0];
  set_shapes(m, {{y, {1, 20, 8, 8}}});
  m.output(y);
  const AnalysisResult a = analysis_of(m.model);
  DeviceCeilings c = test::cpu_ceilings(1e10, 1e11);
  c.op_costs = {op_class("Conv/depthwise", 1e-6, 1e-9)};
  c.conv_samples = {{"dw", 64, 32, 9, 1e9}};
  const FitReport plain = forecast_fit(a, c, FitOptions{});
  EXPECT_EQ(plain.nodes[0].op_cost, "Conv/depthwise");
  EXPECT_NEAR(plain.nodes[0].kernel_seconds, 1.096e-5, 1e-15);
  c.conv_channel_block = 16;
  const FitReport f = forecast_fit(a, c, FitOptions{});
  EXPECT_NEAR(f.nodes[0].kernel_seconds, 1.7536e-5, 1e-15);
  EXPECT_NEAR(f.nodes[0].forward_seconds, 1.7536e-5 + 1e-6, 1e-15);
}

// A QDQ Conv as an analysed model: x_q u8 1x8x8x8 and w_q s8 8x8x3x3 through
// DequantizeLinear, pad 1 (nodes 0 and 1 the DequantizeLinears, 2 the Conv).
AnalysisResult qdq_conv_analysis() {
  IrModel m;
  const int x = m.input("x_q", {1, 8, 8, 8}, DType::UInt8);
  const int xf = m.node("DequantizeLinear", {x, m.weight("xs", at::full({}, 0.05f)),
                                             m.weight("xz", at::full({}, 128, at::kByte))})[0];
  const int wf = m.node("DequantizeLinear", {m.weight("w_q", at::ones({8, 8, 3, 3}, at::kChar)),
                                             m.weight("ws", at::full({}, 0.01f)), m.weight("wz", at::zeros({}, at::kChar))})[0];
  const int y = m.node("Conv", {xf, wf}, 1, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}})[0];
  // As shape inference would have them.
  set_shapes(m, {{xf, {1, 8, 8, 8}}, {wf, {8, 8, 3, 3}}, {y, {1, 8, 8, 8}}});
  m.output(y);
  return analysis_of(m.model);
}

// A QDQ Conv (x_q u8 1x8x8x8, w_q s8 8x8x3x3, pad 1) runs as one int8 kernel:
// with an int8 curve in the ceilings fit prices it there. By hand: MACs =
// 512 outputs x 72 taps = 36,864, FLOPs 73,728; on a flat 400 G op/s curve
// 1.8432e-7 s. Bytes the kernel moves: x_q 512 + its scale 4 and zero point 1,
// w_q 576 + 4 + 1, the float output 2,048 = 3,146, at 10 GB/s 3.146e-7 s.
// Without an int8 curve the head stays priced as fp32 arithmetic.
TEST(FitFusionPlan, Int8GroupIsPricedOnTheInt8Curve) {
  const AnalysisResult a = qdq_conv_analysis();
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

// With int8 conv samples (schema 2.11) the same QDQ Conv is priced on them,
// not on the curve: its product M = 64 positions, N = 8 channels, K = 8 x 9
// taps is the "int8 kxk" sample's own point, at 2e11 op/s 73,728 / 2e11 =
// 3.6864e-7 s (the "int8 1x1" sample at the same point, 1e9 op/s, is another
// kind and not read). The forward: that over the 3.146e-7 s of memory, plus
// the call cost. A ConvInteger of the same shapes (u8 weight, the weight at
// input 1) reads the same sample.
TEST(FitFusionPlan, Int8ConvsArePricedOnTheInt8ConvSamples) {
  DeviceCeilings c = test::cpu_ceilings(1e10, 1e11);
  c.matmul.push_back(test::flat_matmul_curve("int8", 4e11));
  c.conv_samples = {{"int8 kxk", 64, 8, 72, 2e11}, {"int8 1x1", 64, 8, 72, 1e9}};
  const FitReport r = forecast_fit(qdq_conv_analysis(), c, FitOptions{});
  const NodeForecast& head = r.nodes[2];
  EXPECT_EQ(head.op_cost, "int8");
  EXPECT_NEAR(head.compute_seconds, 3.6864e-7, 1e-15);
  EXPECT_NEAR(head.compute_flops_per_second, 2e11, 1e3);
  EXPECT_NEAR(head.memory_seconds, 3.146e-7, 1e-15);
  EXPECT_NEAR(head.forward_seconds, 3.6864e-7 + head.overhead_seconds, 1e-15);

  IrModel m;
  const int x = m.input("x_q", {1, 8, 8, 8}, DType::UInt8);
  const int y = m.node("ConvInteger", {x, m.weight("w_q", at::ones({8, 8, 3, 3}, at::kByte))}, 1,
                       {{"pads", std::vector<int64_t>{1, 1, 1, 1}}})[0];
  set_shapes(m, {{y, {1, 8, 8, 8}}});
  m.output(y);
  const FitReport integer = forecast_fit(analysis_of(m.model), c, FitOptions{});
  EXPECT_EQ(integer.nodes[0].op_cost, "int8");
  EXPECT_NEAR(integer.nodes[0].compute_seconds, 3.6864e-7, 1e-15);
  // Ceilings without the samples: the curve's 73,728 / 4e11.
  c.conv_samples.clear();
  EXPECT_NEAR(forecast_fit(qdq_conv_analysis(), c, FitOptions{}).nodes[2].compute_seconds, 1.8432e-7, 1e-15);
}

// The executor's Conv groups write channels-last and a Conv group copies any
// other input channels-last before its kernel (profiler/ops/fp32_conv.cc), so
// fit adds conv_layout_seconds_per_byte x the input's bytes to a Conv reading
// a Reshape of an activation (here a channel shuffle through Reshape,
// Transpose, Reshape: 1x8x8x8, 2,048 bytes, at 1e-9 s a byte 2.048e-6 s), and
// nothing to a Conv reading a Relu of a Conv's output (channels-last as
// written) or a Slice of one (exec_slice keeps its input's layout); the first
// Conv reads the image as fed and pays for it (1x4x8x8: 1,024 bytes). The
// Slice of channels 0-3 of the channels-last 1x8x8x8 is not dense in NHWC
// (its channels are narrowed inside the 8x8 positions): a strided copy on the
// Transpose class's line, its 2,048 bytes read and 1,024 written: 3,072 x
// 1e-10 s + 2e-6 s. The first Reshape of the channels-last 1x8x8x8 copies it
// (ATen's reshape cannot view it): 2 x 2,048 bytes on that line, 4,096 x
// 1e-10 + 2e-6 s; the second reshapes the Transpose's plain output: a view,
// its per-op cost only.
TEST(FitFusionPlan, AConvReadingASlicedOrReshapedActivationPaysTheLayoutCopy) {
  IrModel m;
  const int x = m.input("x", {1, 4, 8, 8});
  const int y = m.node("Conv", {x, m.weight("w", at::ones({8, 4, 1, 1}))})[0];
  const int r = m.node("Relu", {y})[0];
  const int a = m.node("Conv", {r, m.weight("wa", at::ones({4, 8, 1, 1}))})[0];
  const int sl = m.node("Slice", {y, m.int_weight("starts", {0}), m.int_weight("ends", {4}), m.int_weight("axes", {1}),
                                  m.int_weight("steps", {1})})[0];
  const int b = m.node("Conv", {sl, m.weight("wb", at::ones({4, 4, 1, 1}))})[0];
  const int five = m.node("Reshape", {y, m.int_weight("five", {1, 2, 4, 8, 8})})[0];
  const int tr = m.node("Transpose", {five}, 1, {{"perm", std::vector<int64_t>{0, 2, 1, 3, 4}}})[0];
  const int four = m.node("Reshape", {tr, m.int_weight("four", {1, 8, 8, 8})})[0];
  const int c2 = m.node("Conv", {four, m.weight("wc", at::ones({4, 8, 1, 1}))})[0];
  set_shapes(m, {{y, {1, 8, 8, 8}}, {r, {1, 8, 8, 8}}, {a, {1, 4, 8, 8}}, {sl, {1, 4, 8, 8}}, {b, {1, 4, 8, 8}},
                 {five, {1, 2, 4, 8, 8}}, {tr, {1, 4, 2, 8, 8}}, {four, {1, 8, 8, 8}}, {c2, {1, 4, 8, 8}}});
  m.output(a);
  m.output(b);
  m.output(c2);
  const AnalysisResult an = analysis_of(m.model);
  DeviceCeilings c = test::cpu_ceilings(1e10, 1e11);
  c.conv_samples = {{"1x1", 64, 8, 4, 1e10}, {"1x1", 64, 4, 8, 1e10}, {"1x1", 64, 4, 4, 1e10}};
  c.op_costs = {op_class("Transpose", 2e-6, 1e-10)};
  const FitReport before = forecast_fit(an, c, FitOptions{});
  c.conv_layout_seconds_per_byte = 1e-9;
  const FitReport after = forecast_fit(an, c, FitOptions{});
  auto node = [&](const FitReport& f, int tensor) -> const NodeForecast& {
    return f.nodes[size_t(m.model.graph.tensors[size_t(tensor)].producer)];
  };
  EXPECT_EQ(node(after, a).op_cost, "conv 1x1");
  EXPECT_DOUBLE_EQ(node(after, a).forward_seconds, node(before, a).forward_seconds);
  EXPECT_NEAR(node(after, y).forward_seconds - node(before, y).forward_seconds, 1.024e-6, 1e-15);
  EXPECT_DOUBLE_EQ(node(after, b).forward_seconds, node(before, b).forward_seconds);
  EXPECT_NEAR(node(after, c2).forward_seconds - node(before, c2).forward_seconds, 2.048e-6, 1e-15);
  const NodeForecast& slice = node(after, sl);
  EXPECT_EQ(slice.op_type, "Slice");
  EXPECT_EQ(slice.op_cost, "Transpose");
  EXPECT_NEAR(slice.kernel_seconds, 3072 * 1e-10, 1e-15);
  EXPECT_NEAR(slice.overhead_seconds, 2e-6, 1e-15);
  const NodeForecast& reshape = node(after, five);
  EXPECT_EQ(reshape.op_cost, "Transpose");
  EXPECT_NEAR(reshape.kernel_seconds, 4096 * 1e-10, 1e-15);
  const NodeForecast& view = node(after, four);
  EXPECT_EQ(view.op_type, "Reshape");
  EXPECT_DOUBLE_EQ(view.kernel_seconds, 0.0);
}

// A dilated conv runs on oneDNN's im2col + GEMM, not the direct kernels the
// conv samples timed: fit leaves it off the samples (op_cost not "conv kxk")
// and adds its columns' traffic at the copy bandwidth. x 1x8x12x12, w
// 8x8x3x3 at dilation 2, pads 2: M = 144 positions, K = 8 x 9 = 72, the
// columns 144 x 72 floats written and read, 82,944 bytes at 1e10 B/s:
// 8.2944e-6 s of scratch. The same conv undilated (pads 1) is priced on the
// samples, with no scratch.
TEST(FitFusionPlan, ADilatedConvIsPricedAsIm2colAndGemm) {
  auto model = [](int64_t dilation) {
    IrModel m;
    const int x = m.input("x", {1, 8, 12, 12});
    const std::map<std::string, AttrValue> attrs = {{"dilations", std::vector<int64_t>{dilation, dilation}},
                                                    {"pads", std::vector<int64_t>{dilation, dilation, dilation, dilation}}};
    const int y = m.node("Conv", {x, m.weight("w", at::ones({8, 8, 3, 3}))}, 1, attrs)[0];
    set_shapes(m, {{y, {1, 8, 12, 12}}});
    m.output(y);
    return analysis_of(m.model);
  };
  DeviceCeilings c = test::cpu_ceilings(1e10, 1e11);
  c.conv_samples = {{"kxk", 144, 8, 72, 2e10}};
  const NodeForecast dilated = forecast_fit(model(2), c, FitOptions{}).nodes[0];
  EXPECT_NE(dilated.op_cost, "conv kxk");
  EXPECT_NEAR(dilated.scratch_seconds, 82944 / 1e10, 1e-15);
  const NodeForecast plain = forecast_fit(model(1), c, FitOptions{}).nodes[0];
  EXPECT_EQ(plain.op_cost, "conv kxk");
  EXPECT_DOUBLE_EQ(plain.scratch_seconds, 0.0);
}

// A grouped conv is one call over its groups: each group's product at the
// samples' time less a call's fixed part (the cheapest sample's time), that
// part once. x 1x32x8x8, w 32x8x3x3 in 4 groups (8 channels each, a whole
// block of 8): M = 64, N = 8, K = 72 a group, at the sample there (1e10
// FLOP/s: 7.3728e-6 s); the cheapest sample, 16 x 8 x 8 at 1e9, took
// 2.048e-6 s: 2.048e-6 + 4 x (7.3728e-6 - 2.048e-6) = 2.33472e-5 s. The same
// channels in 8 groups of 4 (fewer than the block) run with pairs of groups
// merged (profiler/ops/fp32_conv.cc): 4 products of N = 8, K = 72, the same
// price.
TEST(FitFusionPlan, AGroupedConvIsOneCallOverItsGroupsMergedBelowTheBlock) {
  auto model = [](int64_t groups) {
    IrModel m;
    const int x = m.input("x", {1, 32, 8, 8});
    const std::map<std::string, AttrValue> attrs = {{"group", groups},
                                                    {"pads", std::vector<int64_t>{1, 1, 1, 1}}};
    const int y = m.node("Conv", {x, m.weight("w", at::ones({32, 32 / groups, 3, 3}))}, 1, attrs)[0];
    set_shapes(m, {{y, {1, 32, 8, 8}}});
    m.output(y);
    return analysis_of(m.model);
  };
  DeviceCeilings c = test::cpu_ceilings(1e10, 1e11);
  c.conv_samples = {{"kxk", 64, 8, 72, 1e10}, {"kxk", 16, 8, 8, 1e9}};
  c.conv_channel_block = 8;
  for (int64_t groups : {int64_t(4), int64_t(8)}) {
    const NodeForecast f = forecast_fit(model(groups), c, FitOptions{}).nodes[0];
    EXPECT_EQ(f.op_cost, "conv kxk") << groups << " groups";
    EXPECT_NEAR(f.compute_seconds, 2.33472e-5, 1e-15) << groups << " groups";
  }
}

// exec_slice makes a Slice's result dense in its input's layout: no copy
// when the slice is one already. Of the graph input 1x8x4x4 (NCHW, 512
// bytes): channels 0-3 are a view; rows 0-1 of every channel (1x8x2x4, 256
// bytes) are a strided copy, 768 bytes on the Transpose class's line (1e-9 s
// a byte: 7.68e-7 s, + its 2e-6 s); every other channel (steps 2) is a copy
// too (256 + 512 bytes). Of a Conv's channels-last output 1x8x4x4, rows 0-1
// are a view (NHWC: the batch of 1, then the narrowed rows, then whole rows of
// pixels), and channels 0-3 a copy.
TEST(FitFusionPlan, ASliceIsAViewOnlyWhenItsResultIsDense) {
  IrModel m;
  const int x = m.input("x", {1, 8, 4, 4});
  auto slice = [&](int from, int64_t start, int64_t end, int64_t axis, int64_t step) {
    const std::string k = std::to_string(from) + "_" + std::to_string(axis) + "_" + std::to_string(step);
    return m.node("Slice", {from, m.int_weight("s" + k, {start}), m.int_weight("e" + k, {end}),
                            m.int_weight("a" + k, {axis}), m.int_weight("t" + k, {step})})[0];
  };
  const int channels = slice(x, 0, 4, 1, 1);
  const int rows = slice(x, 0, 2, 2, 1);
  const int every_other = slice(x, 0, 8, 1, 2);
  const int y = m.node("Conv", {x, m.weight("w", at::ones({8, 8, 1, 1}))})[0];
  const int cl_rows = slice(y, 0, 2, 2, 1);
  const int cl_channels = slice(y, 0, 4, 1, 1);
  set_shapes(m, {{channels, {1, 4, 4, 4}}, {rows, {1, 8, 2, 4}}, {every_other, {1, 4, 4, 4}}, {y, {1, 8, 4, 4}},
                 {cl_rows, {1, 8, 2, 4}}, {cl_channels, {1, 4, 4, 4}}});
  for (int t : {channels, rows, every_other, cl_rows, cl_channels}) m.output(t);
  const AnalysisResult an = analysis_of(m.model);
  DeviceCeilings c = test::cpu_ceilings(1e10, 1e11);
  c.op_costs = {op_class("Transpose", 2e-6, 1e-9)};
  const FitReport f = forecast_fit(an, c, FitOptions{});
  auto node = [&](int tensor) -> const NodeForecast& {
    return f.nodes[size_t(m.model.graph.tensors[size_t(tensor)].producer)];
  };
  for (int t : {channels, cl_rows}) {
    EXPECT_DOUBLE_EQ(node(t).kernel_seconds, 0.0) << node(t).name;
    EXPECT_DOUBLE_EQ(node(t).memory_seconds, 0.0) << node(t).name;
    EXPECT_DOUBLE_EQ(node(t).forward_seconds, node(t).overhead_seconds) << node(t).name;
  }
  EXPECT_EQ(node(rows).op_cost, "Transpose");
  EXPECT_NEAR(node(rows).kernel_seconds, 768 * 1e-9, 1e-15);
  EXPECT_NEAR(node(rows).overhead_seconds, 2e-6, 1e-15);
  EXPECT_NEAR(node(every_other).kernel_seconds, 768 * 1e-9, 1e-15);
  EXPECT_NEAR(node(cl_channels).kernel_seconds, 768 * 1e-9, 1e-15);
}

// A MaxPool pools an NCHW input channels-last after a copy
// (profiler/ops/pooling.cc): reading the graph input (1x4x8x8 floats, 1,024
// bytes) it adds 1,024 x 1e-9 s to its class's price; its output is then
// channels-last, so the Conv reading it adds nothing, and a MaxPool of that
// Conv's output adds nothing either.
TEST(FitFusionPlan, AMaxPoolOfAnNchwInputPaysTheLayoutCopyAndLeavesChannelsLast) {
  IrModel m;
  const int x = m.input("x", {1, 4, 8, 8});
  const std::map<std::string, AttrValue> pool = {{"kernel_shape", std::vector<int64_t>{2, 2}},
                                                 {"strides", std::vector<int64_t>{2, 2}}};
  const int p = m.node("MaxPool", {x}, 1, pool)[0];
  const int y = m.node("Conv", {p, m.weight("w", at::ones({4, 4, 1, 1}))})[0];
  const int q = m.node("MaxPool", {y}, 1, pool)[0];
  set_shapes(m, {{p, {1, 4, 4, 4}}, {y, {1, 4, 4, 4}}, {q, {1, 4, 2, 2}}});
  m.output(q);
  const AnalysisResult a = analysis_of(m.model);
  DeviceCeilings c = test::cpu_ceilings(1e10, 1e11);
  const OpCost maxpool = op_class("MaxPool", 1e-6, 1e-8);
  c.op_costs = {maxpool};
  c.conv_samples = {{"1x1", 16, 4, 4, 1e10}};
  const FitReport before = forecast_fit(a, c, FitOptions{});
  c.conv_layout_seconds_per_byte = 1e-9;
  const FitReport after = forecast_fit(a, c, FitOptions{});
  ASSERT_EQ(after.nodes.size(), 3u);
  EXPECT_EQ(after.nodes[0].op_cost, "MaxPool");
  EXPECT_NEAR(after.nodes[0].forward_seconds - before.nodes[0].forward_seconds, 1.024e-6, 1e-15);
  EXPECT_EQ(after.nodes[1].op_cost, "conv 1x1");
  EXPECT_DOUBLE_EQ(after.nodes[1].forward_seconds, before.nodes[1].forward_seconds);
  EXPECT_DOUBLE_EQ(after.nodes[2].forward_seconds, before.nodes[2].forward_seconds);
}

// A Concat of two Conv groups' outputs (channels-last, 1x8x8x8 each, joined
// on channels into 1x16x8x8: 2,048 + 2,048 bytes read, 4,096 written, 8,192
// in all) is priced on the Concat/channels-last class when the ceilings have
// it: 8,192 x 1e-9 s + its 3e-6 s; the same Concat of two graph inputs (NCHW,
// copied in blocks) on the Concat class: 8,192 x 1e-10 + 1e-6. Ceilings
// without the channels-last class price both on the Concat class. A Concat
// of a Slice of a Conv's output (channels-last: exec_slice keeps its input's
// layout) and another Conv's output interleaves too.
TEST(FitFusionPlan, AConcatOfChannelsLastBranchesIsPricedOnItsOwnClass) {
  IrModel m;
  const int x = m.input("x", {1, 4, 8, 8});
  const int p = m.node("Conv", {x, m.weight("wp", at::ones({8, 4, 1, 1}))})[0];
  const int q = m.node("Conv", {x, m.weight("wq", at::ones({8, 4, 1, 1}))})[0];
  const int cl = m.node("Concat", {p, q}, 1, {{"axis", int64_t(1)}})[0];
  const int u = m.input("u", {1, 8, 8, 8});
  const int v = m.input("v", {1, 8, 8, 8});
  const int plain = m.node("Concat", {u, v}, 1, {{"axis", int64_t(1)}})[0];
  const int half =
      m.node("Slice", {p, m.int_weight("starts", {0}), m.int_weight("ends", {4}), m.int_weight("axes", {1})})[0];
  const int viewed = m.node("Concat", {half, q}, 1, {{"axis", int64_t(1)}})[0];
  set_shapes(m, {{p, {1, 8, 8, 8}}, {q, {1, 8, 8, 8}}, {cl, {1, 16, 8, 8}}, {plain, {1, 16, 8, 8}},
                 {half, {1, 4, 8, 8}}, {viewed, {1, 12, 8, 8}}});
  m.output(cl);
  m.output(plain);
  m.output(viewed);
  const AnalysisResult a = analysis_of(m.model);
  DeviceCeilings c = test::cpu_ceilings(1e10, 1e11);
  const OpCost concat = op_class("Concat", 1e-6, 1e-10);
  c.op_costs = {concat};
  const FitReport old_ceilings = forecast_fit(a, c, FitOptions{});
  EXPECT_EQ(old_ceilings.nodes[2].op_cost, "Concat");
  const OpCost channels_last = op_class("Concat/channels-last", 3e-6, 1e-9);
  c.op_costs.push_back(channels_last);
  const FitReport f = forecast_fit(a, c, FitOptions{});
  ASSERT_EQ(f.nodes[2].op_type, "Concat");
  EXPECT_EQ(f.nodes[2].op_cost, "Concat/channels-last");
  EXPECT_NEAR(f.nodes[2].kernel_seconds, 8192 * 1e-9, 1e-15);
  EXPECT_NEAR(f.nodes[2].overhead_seconds, 3e-6, 1e-15);
  EXPECT_EQ(f.nodes[3].op_cost, "Concat");
  EXPECT_NEAR(f.nodes[3].kernel_seconds, 8192 * 1e-10, 1e-15);
  EXPECT_NEAR(f.nodes[3].overhead_seconds, 1e-6, 1e-15);
  // A Slice of a channels-last tensor stays channels-last: the Concat reading
  // it (1,024 + 2,048 bytes read, 3,072 written) interleaves as well.
  const NodeForecast& joined = f.nodes[size_t(m.model.graph.tensors[size_t(viewed)].producer)];
  EXPECT_EQ(joined.op_cost, "Concat/channels-last");
  EXPECT_NEAR(joined.kernel_seconds, 6144 * 1e-9, 1e-15);
  FitOptions train;
  train.train = true;
  EXPECT_EQ(forecast_fit(a, c, train).nodes[2].op_cost, "Concat") << "a training step runs NCHW";
}

// A CPU Concat writes its largest part's layout (the first of equal ones) and
// copies a part held in the other layout into it first (concat_rows): fit
// adds that part's bytes x conv_layout_seconds_per_byte. A graph input u
// (plain, 1x8x8x8: 2,048 bytes) first and a Conv's channels-last output of
// the same size: written plain (the Concat class), the Conv's part copied,
// 2,048 x 1e-9 s more than without the layout rate. A Conv's 1x16x8x8 output
// first with u: written channels-last (Concat/channels-last), u copied,
// 2,048 x 1e-9 s as well. Two Conv outputs: nothing added.
TEST(FitFusionPlan, AConcatCopiesPartsOfTheOtherLayoutFirst) {
  IrModel m;
  const int x = m.input("x", {1, 4, 8, 8});
  const int u = m.input("u", {1, 8, 8, 8});
  const int p = m.node("Conv", {x, m.weight("wp", at::ones({8, 4, 1, 1}))})[0];
  const int q = m.node("Conv", {x, m.weight("wq", at::ones({16, 4, 1, 1}))})[0];
  const int plain_first = m.node("Concat", {u, p}, 1, {{"axis", int64_t(1)}})[0];
  const int cl_largest = m.node("Concat", {q, u}, 1, {{"axis", int64_t(1)}})[0];
  const int both_cl = m.node("Concat", {p, q}, 1, {{"axis", int64_t(1)}})[0];
  set_shapes(m, {{p, {1, 8, 8, 8}}, {q, {1, 16, 8, 8}}, {plain_first, {1, 16, 8, 8}}, {cl_largest, {1, 24, 8, 8}},
                 {both_cl, {1, 24, 8, 8}}});
  for (int t : {plain_first, cl_largest, both_cl}) m.output(t);
  const AnalysisResult a = analysis_of(m.model);
  DeviceCeilings c = test::cpu_ceilings(1e10, 1e11);
  c.op_costs = {op_class("Concat", 1e-6, 1e-10), op_class("Concat/channels-last", 3e-6, 1e-10)};
  const FitReport before = forecast_fit(a, c, FitOptions{});
  c.conv_layout_seconds_per_byte = 1e-9;
  const FitReport after = forecast_fit(a, c, FitOptions{});
  auto node = [&](const FitReport& f, int tensor) -> const NodeForecast& {
    return f.nodes[size_t(m.model.graph.tensors[size_t(tensor)].producer)];
  };
  EXPECT_EQ(node(after, plain_first).op_cost, "Concat");
  EXPECT_NEAR(node(after, plain_first).kernel_seconds - node(before, plain_first).kernel_seconds, 2.048e-6, 1e-15);
  EXPECT_EQ(node(after, cl_largest).op_cost, "Concat/channels-last");
  EXPECT_NEAR(node(after, cl_largest).kernel_seconds - node(before, cl_largest).kernel_seconds, 2.048e-6, 1e-15);
  EXPECT_EQ(node(after, both_cl).op_cost, "Concat/channels-last");
  EXPECT_DOUBLE_EQ(node(after, both_cl).kernel_seconds, node(before, both_cl).kernel_seconds);
}

// LayerNormalization written out over the last axis (ReduceMean, Sub, Pow 2,
// ReduceMean, Add eps, Sqrt, Div, Mul scale, Add bias) runs as one
// at::layer_norm on its first ReduceMean's row: with the LayerNormalization
// class measured, fit prices that row at the class's line in the group's
// bytes, x and y 1x16x32 floats, 2,048 bytes each: 4,096 x 1e-9 s + 3e-6 s.
// Its members stay at 0.
TEST(FitFusionPlan, ALayerNormWrittenOutIsPricedOnTheLayerNormClass) {
  IrModel m;
  const int x = m.input("x", {1, 16, 32});
  const std::map<std::string, AttrValue> last = {{"axes", std::vector<int64_t>{-1}}};
  const int mean = m.node("ReduceMean", {x}, 1, last)[0];
  const int d = m.node("Sub", {x, mean})[0];
  const int sq = m.node("Pow", {d, m.weight("two", at::full({}, 2.f))})[0];
  const int var = m.node("ReduceMean", {sq}, 1, last)[0];
  const int ve = m.node("Add", {var, m.weight("eps", at::full({}, 1e-5f))})[0];
  const int sd = m.node("Sqrt", {ve})[0];
  const int n = m.node("Div", {d, sd})[0];
  const int sc = m.node("Mul", {n, m.weight("scale", at::ones({32}))})[0];
  const int y = m.node("Add", {sc, m.weight("bias", at::zeros({32}))})[0];
  for (int t : {d, sq, n, sc, y}) m.model.graph.tensors[size_t(t)].shape = test::make_shape({1, 16, 32});
  for (int t : {mean, var, ve, sd}) m.model.graph.tensors[size_t(t)].shape = test::make_shape({1, 16, 1});
  m.output(y);
  DeviceCeilings c = test::cpu_ceilings(1e10, 1e11);
  const OpCost ln = op_class("LayerNormalization", 3e-6, 1e-9);
  c.op_costs = {ln};
  const FitReport f = forecast_fit(analysis_of(m.model), c, FitOptions{});
  ASSERT_EQ(f.nodes.size(), 9u);
  EXPECT_EQ(f.nodes[0].op_cost, "LayerNormalization");
  EXPECT_NEAR(f.nodes[0].kernel_seconds, 4096 * 1e-9, 1e-15);
  EXPECT_NEAR(f.nodes[0].forward_seconds, 4096 * 1e-9 + 3e-6, 1e-15);
  for (size_t i = 1; i < 9; ++i) EXPECT_EQ(f.nodes[i].op_cost, "fused") << i;
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
  set_shapes(m, {{wt, {8, 4}}, {y, {2, 4}}, {z, {2, 4}}});
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

// CPU groups (analyzer/fusion/patterns/*.cc, profiler/ops/fp32_conv.hpp, fp32_matmul.hpp):
// which nodes a group takes, which it must leave alone, and what the fused
// kernel computes, against the graph's arithmetic written out here in double
// with ATen (at::convolution on double tensors, then each member's formula):
// equal to within float rounding. The unfused executor (fuse_cpu off) is
// checked against the same reference, so both modes agree with it.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>

#include "analyzer/fusion/fusion_plan.hpp"
#include "profiler/executor.hpp"
#include "profiler/ops/fp32_conv.hpp"
#include "profiler/ops/fp32_matmul.hpp"
#include "tests/profiler/ir_model.hpp"

namespace modelstat::profiler {
namespace {

at::Tensor randn(const std::vector<int64_t>& dims, uint64_t seed, double scale = 1.0) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::randn(dims, gen, at::TensorOptions().dtype(at::kFloat)) * scale;
}

std::map<std::string, AttrValue> conv_attrs(std::vector<int64_t> strides, std::vector<int64_t> pads,
                                            std::vector<int64_t> dilations, int64_t group) {
  return {{"strides", strides}, {"pads", pads}, {"dilations", dilations}, {"group", group}};
}

// The executor's output 0 for input x, fused or node by node.
at::Tensor run(const Model& model, const std::vector<at::Tensor>& inputs, bool fuse) {
  ExecOptions options;
  options.fuse_cpu = fuse;
  Executor exec(model, options);
  return exec.run(inputs)[0];
}

void expect_close(const at::Tensor& actual, const at::Tensor& expected, const char* what) {
  ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
  const double scale = std::max(1.0, expected.abs().max().item<double>());
  const double err = (actual.to(at::kDouble) - expected).abs().max().item<double>();
  EXPECT_LE(err, 2e-5 * scale) << what << ": max abs error " << err << " of max |expected| " << scale;
}

// Conv in double: ONNX pads (begin..., end...) applied explicitly.
at::Tensor conv_double(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, std::vector<int64_t> strides,
                       std::vector<int64_t> pads, std::vector<int64_t> dilations, int64_t group) {
  const at::Tensor padded = at::constant_pad_nd(x.to(at::kDouble), {pads[1], pads[3], pads[0], pads[2]}, 0.0);
  return at::convolution(padded, w.to(at::kDouble), b.defined() ? b.to(at::kDouble) : at::Tensor(), strides, {0, 0},
                         dilations, false, {0, 0}, group);
}

at::Tensor per_channel(const at::Tensor& v) { return v.to(at::kDouble).reshape({1, -1, 1, 1}); }

// The fusion plan of an fp32 CPU inference run with fusion on.
FusionPlan cpu_plan(const Model& model) {
  return plan_fusion(model.graph, model, inference_fusion_options(true, true, true, false, false));
}

// The plan's groups of one pattern, in order.
std::vector<FusedGroup> groups_of(const FusionPlan& plan, const std::string& pattern) {
  std::vector<FusedGroup> out;
  for (const FusedGroup& g : plan.groups)
    if (g.pattern == pattern) out.push_back(g);
  return out;
}
const ConvKernelSpec& conv_spec(const FusedGroup& g) { return std::get<ConvKernelSpec>(g.spec); }
const MatMulKernelSpec& matmul_spec(const FusedGroup& g) { return std::get<MatMulKernelSpec>(g.spec); }

TEST(CpuFusion, ConvBatchNormReluIsOneGroupAndMatchesTheUnfusedArithmetic) {
  IrModel m;
  const at::Tensor xv = randn({1, 8, 10, 10}, 1), wv = randn({16, 8, 3, 3}, 2, 0.2), bv = randn({16}, 3);
  const at::Tensor scale = randn({16}, 4).abs() + 0.5, beta = randn({16}, 5), mean = randn({16}, 6),
                   var = randn({16}, 7).abs() + 0.2;
  const int x = m.input("x", {1, 8, 10, 10});
  const int c = m.node("Conv", {x, m.weight("w", wv), m.weight("b", bv)}, 1, conv_attrs({1, 1}, {1, 1, 1, 1}, {1, 1}, 1))[0];
  const int bn = m.node("BatchNormalization", {c, m.weight("s", scale), m.weight("beta", beta), m.weight("mean", mean),
                                               m.weight("var", var)}, 1, {{"epsilon", 1e-3}})[0];
  const int y = m.node("Relu", {bn})[0];
  m.output(y);

  const FusionPlan plan = cpu_plan(m.model);
    const std::vector<FusedGroup> convs = groups_of(plan, "conv_group");
  ASSERT_EQ(convs.size(), 1u);
  EXPECT_EQ(convs[0].head, 0);
  EXPECT_EQ(conv_spec(convs[0]).batch_norm, 1);
  EXPECT_EQ(convs[0].members, (std::vector<int>{1, 2}));
  EXPECT_EQ(convs[0].output, y);

  Executor exec(m.model, ExecOptions{});
  EXPECT_EQ(exec.fused_members(0), (std::vector<std::string>{"BatchNormalization_1", "Relu_2"}));
  EXPECT_EQ(exec.fused_into(1), "Conv_0");
  EXPECT_EQ(exec.fused_into(2), "Conv_0");
  EXPECT_FALSE(exec.fused_kernel(0).empty());
  ASSERT_EQ(exec.fusion_notices().size(), 1u);

  const at::Tensor expected =
      at::relu((conv_double(xv, wv, bv, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1) - per_channel(mean)) /
                   at::sqrt(per_channel(var) + 1e-3) * per_channel(scale) + per_channel(beta));
  expect_close(exec.run({xv})[0], expected, "fused");
  expect_close(run(m.model, {xv}, false), expected, "unfused");
}

// a = Conv1x1(x); y = Relu(Conv3x3(a) + a): the second Conv takes the Add
// (its residual `a` is computed before it) and the Relu; the first Conv's
// output has two readers, so it is a group of one.
TEST(CpuFusion, ConvAddResidualReluMatchesTheUnfusedArithmetic) {
  IrModel m;
  const at::Tensor xv = randn({1, 6, 9, 9}, 11), w1 = randn({12, 6, 1, 1}, 12, 0.3), w2 = randn({12, 12, 3, 3}, 13, 0.1),
                   b2 = randn({12}, 14);
  const int x = m.input("x", {1, 6, 9, 9});
  const int a = m.node("Conv", {x, m.weight("w1", w1)})[0];
  const int c = m.node("Conv", {a, m.weight("w2", w2), m.weight("b2", b2)}, 1, conv_attrs({1, 1}, {1, 1, 1, 1}, {1, 1}, 1))[0];
  const int s = m.node("Add", {c, a})[0];
  const int y = m.node("Relu", {s})[0];
  m.output(y);
  const FusionPlan plan = cpu_plan(m.model);
    const std::vector<FusedGroup> convs = groups_of(plan, "conv_group");
  ASSERT_EQ(convs.size(), 2u);
  EXPECT_TRUE(convs[0].members.empty());
  EXPECT_EQ(convs[1].members, (std::vector<int>{2, 3}));
  ASSERT_EQ(conv_spec(convs[1]).post_ops.size(), 2u);
  EXPECT_EQ(conv_spec(convs[1]).post_ops[0].kind, FusedPostOp::Kind::AddResidual);
  EXPECT_EQ(conv_spec(convs[1]).post_ops[0].residual, a);

  const at::Tensor av = conv_double(xv, w1, {}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1);
  const at::Tensor expected = at::relu(conv_double(av, w2, b2, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1) + av);
  expect_close(run(m.model, {xv}, true), expected, "fused");
  expect_close(run(m.model, {xv}, false), expected, "unfused");
}

// Conv followed by one activation: each becomes the group's post-op.
struct ActivationCase {
  const char* name;
  std::function<int(IrModel&, int)> add;  // appends the activation to tensor t, returns its output
  std::function<at::Tensor(const at::Tensor&)> reference;  // in double
};

TEST(CpuFusion, ActivationsRunAsPostOpsAndMatchTheirFormulas) {
  const std::vector<ActivationCase> cases = {
      {"Clip (ReLU6, bounds as inputs)",
       [](IrModel& m, int t) {
         return m.node("Clip", {t, m.weight("lo", at::full({}, 0.f)), m.weight("hi", at::full({}, 6.f))})[0];
       },
       [](const at::Tensor& v) { return at::clamp(v, 0.0, 6.0); }},
      {"HardSwish", [](IrModel& m, int t) { return m.node("HardSwish", {t})[0]; },
       [](const at::Tensor& v) { return v * at::clamp(v / 6.0 + 0.5, 0.0, 1.0); }},
      {"HardSigmoid", [](IrModel& m, int t) { return m.node("HardSigmoid", {t}, 1, {{"alpha", 0.25}, {"beta", 0.4}})[0]; },
       [](const at::Tensor& v) { return at::clamp(v * 0.25 + 0.4, 0.0, 1.0); }},
      {"SiLU (Sigmoid + Mul)",
       [](IrModel& m, int t) { return m.node("Mul", {t, m.node("Sigmoid", {t})[0]})[0]; },
       [](const at::Tensor& v) { return v * at::sigmoid(v); }},
      {"LeakyRelu", [](IrModel& m, int t) { return m.node("LeakyRelu", {t}, 1, {{"alpha", 0.1}})[0]; },
       [](const at::Tensor& v) { return at::where(v > 0, v, v * 0.1); }},
      {"Tanh", [](IrModel& m, int t) { return m.node("Tanh", {t})[0]; }, [](const at::Tensor& v) { return at::tanh(v); }},
  };
  for (const ActivationCase& c : cases) {
    IrModel m;
    const at::Tensor xv = randn({1, 5, 8, 8}, 21) * 3, wv = randn({7, 5, 3, 3}, 22, 0.4), bv = randn({7}, 23);
    const int x = m.input("x", {1, 5, 8, 8});
    const int conv = m.node("Conv", {x, m.weight("w", wv), m.weight("b", bv)}, 1,
                            conv_attrs({1, 1}, {1, 1, 1, 1}, {1, 1}, 1))[0];
    m.output(c.add(m, conv));
    const FusionPlan plan = cpu_plan(m.model);
    const std::vector<FusedGroup> convs = groups_of(plan, "conv_group");
    ASSERT_EQ(convs.size(), 1u) << c.name;
    EXPECT_EQ(conv_spec(convs[0]).post_ops.size(), 1u) << c.name;
    EXPECT_EQ(plan.absorbed_count, int64_t(m.model.graph.nodes.size() - 1)) << c.name;
    const at::Tensor expected = c.reference(conv_double(xv, wv, bv, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1));
    expect_close(run(m.model, {xv}, true), expected, c.name);
    expect_close(run(m.model, {xv}, false), expected, c.name);
  }
}

// Windows: strides, asymmetric pads, dilations, groups and depthwise.
TEST(CpuFusion, StridedPaddedDilatedGroupedAndDepthwiseConvsMatchTheReference) {
  struct Case {
    const char* name;
    int64_t cin, cout, k, group;
    std::vector<int64_t> strides, pads, dilations;
  };
  const std::vector<Case> cases = {
      {"strided", 8, 16, 3, 1, {2, 2}, {1, 1, 1, 1}, {1, 1}},
      {"asymmetric pads", 8, 16, 3, 1, {1, 2}, {0, 1, 2, 1}, {1, 1}},
      {"dilated", 8, 8, 3, 1, {1, 1}, {2, 2, 2, 2}, {2, 2}},
      {"grouped", 8, 12, 3, 4, {1, 1}, {1, 1, 1, 1}, {1, 1}},
      {"depthwise", 16, 16, 3, 16, {1, 1}, {1, 1, 1, 1}, {1, 1}},
      {"depthwise strided 5x5", 16, 16, 5, 16, {2, 2}, {2, 2, 2, 2}, {1, 1}},
      {"stem 7x7 stride 2, 3 channels", 3, 16, 7, 1, {2, 2}, {3, 3, 3, 3}, {1, 1}},
      {"1x1", 32, 24, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}},
  };
  for (const Case& c : cases) {
    IrModel m;
    const at::Tensor xv = randn({1, c.cin, 13, 11}, 31), wv = randn({c.cout, c.cin / c.group, c.k, c.k}, 32, 0.2),
                     bv = randn({c.cout}, 33);
    const int x = m.input("x", {1, c.cin, 13, 11});
    const int conv = m.node("Conv", {x, m.weight("w", wv), m.weight("b", bv)}, 1,
                            conv_attrs(c.strides, c.pads, c.dilations, c.group))[0];
    m.output(m.node("Relu", {conv})[0]);
    const at::Tensor expected = at::relu(conv_double(xv, wv, bv, c.strides, c.pads, c.dilations, c.group));
    Executor exec(m.model, ExecOptions{});
    EXPECT_EQ(exec.fused_members(0), std::vector<std::string>{"Relu_1"}) << c.name;
    expect_close(exec.run({xv})[0], expected, c.name);
    expect_close(run(m.model, {xv}, false), expected, c.name);
  }
}

// Nodes a group must leave alone: an activation whose input has another
// reader, a BatchNormalization in training form, an Add whose other operand
// is computed after the Conv, and a Conv output that is a graph output.
TEST(CpuFusion, DoesNotFuseWhatWouldChangeTheGraphsValues) {
  const at::Tensor wv = randn({4, 4, 3, 3}, 41, 0.3);
  {  // Conv output read by the Relu and by an Add: the Relu cannot overwrite it.
    IrModel m;
    const int x = m.input("x", {1, 4, 6, 6});
    const int c = m.node("Conv", {x, m.weight("w", wv)}, 1, conv_attrs({1, 1}, {1, 1, 1, 1}, {1, 1}, 1))[0];
    const int r = m.node("Relu", {c})[0];
    m.output(m.node("Add", {r, c})[0]);
    const FusionPlan plan = cpu_plan(m.model);
    const std::vector<FusedGroup> convs = groups_of(plan, "conv_group");
    ASSERT_EQ(convs.size(), 1u);
    EXPECT_TRUE(convs[0].members.empty());
    EXPECT_EQ(plan.absorbed_count, 0);
    const at::Tensor xv = randn({1, 4, 6, 6}, 42);
    const at::Tensor cv = conv_double(xv, wv, {}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1);
    expect_close(run(m.model, {xv}, true), at::relu(cv) + cv, "two readers");
  }
  {  // Relu's output used twice (by the Add and as a graph output): the group stops at the Relu.
    IrModel m;
    const int x = m.input("x", {1, 4, 6, 6});
    const int c = m.node("Conv", {x, m.weight("w", wv)}, 1, conv_attrs({1, 1}, {1, 1, 1, 1}, {1, 1}, 1))[0];
    const int r = m.node("Relu", {c})[0];
    m.output(m.node("Add", {r, x})[0]);
    m.output(r);
    const FusionPlan plan = cpu_plan(m.model);
    const std::vector<FusedGroup> convs = groups_of(plan, "conv_group");
    ASSERT_EQ(convs.size(), 1u);
    EXPECT_EQ(convs[0].members, std::vector<int>{1});
  }
  {  // BatchNormalization with training_mode = 1: not folded.
    IrModel m;
    const int x = m.input("x", {1, 4, 6, 6});
    const int c = m.node("Conv", {x, m.weight("w", wv)}, 1, conv_attrs({1, 1}, {1, 1, 1, 1}, {1, 1}, 1))[0];
    const at::Tensor ones = at::ones({4}), zeros = at::zeros({4});
    m.output(m.node("BatchNormalization", {c, m.weight("s", ones), m.weight("b", zeros), m.weight("m", zeros),
                                           m.weight("v", ones)}, 1, {{"training_mode", int64_t(1)}})[0]);
    const FusionPlan plan = cpu_plan(m.model);
    const std::vector<FusedGroup> convs = groups_of(plan, "conv_group");
    ASSERT_EQ(convs.size(), 1u);
    EXPECT_EQ(conv_spec(convs[0]).batch_norm, -1);
    EXPECT_TRUE(convs[0].members.empty());
  }
  {  // Add of a tensor computed after the Conv: not a residual the kernel can read.
    IrModel m;
    const int x = m.input("x", {1, 4, 6, 6});
    const int c = m.node("Conv", {x, m.weight("w", wv)}, 1, conv_attrs({1, 1}, {1, 1, 1, 1}, {1, 1}, 1))[0];
    const int later = m.node("Sigmoid", {x})[0];
    m.output(m.node("Add", {c, later})[0]);
    const FusionPlan plan = cpu_plan(m.model);
    const std::vector<FusedGroup> convs = groups_of(plan, "conv_group");
    EXPECT_EQ(plan.absorbed_count, 0);
    const at::Tensor xv = randn({1, 4, 6, 6}, 43);
    expect_close(run(m.model, {xv}, true),
                 conv_double(xv, wv, {}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1) + at::sigmoid(xv.to(at::kDouble)),
                 "later operand");
  }
  {  // fuse_cpu off: nothing is grouped.
    IrModel m;
    const int x = m.input("x", {1, 4, 6, 6});
    m.output(m.node("Relu", {m.node("Conv", {x, m.weight("w", wv)})[0]})[0]);
    ExecOptions off;
    off.fuse_cpu = false;
    Executor exec(m.model, off);
    EXPECT_TRUE(exec.fused_members(0).empty());
    EXPECT_EQ(exec.fused_into(1), "");
    EXPECT_TRUE(exec.fusion_notices().empty());
  }
}

// 1-D convolutions (audio front ends, sequence models) run on the same kernel
// as 2-D ones of height 1: strided, padded, dilated, grouped, with a bias,
// a residual Add and a Relu, against the arithmetic in double.
TEST(CpuFusion, OneDimensionalConvGroupsMatchTheReference) {
  struct Case {
    int64_t stride, pad, dilation, group;
  };
  for (const Case& c : {Case{1, 1, 1, 1}, Case{2, 2, 1, 1}, Case{1, 2, 2, 2}, Case{1, 1, 1, 6}}) {
    SCOPED_TRACE(c.stride * 1000 + c.pad * 100 + c.dilation * 10 + c.group);
    IrModel m;
    const at::Tensor xv = randn({2, 6, 40}, 131), wv = randn({6, 6 / c.group, 3}, 132, 0.3), bv = randn({6}, 133);
    const int x = m.input("x", {2, 6, 40});
    const std::map<std::string, AttrValue> attrs = {{"strides", std::vector<int64_t>{c.stride}},
                                                    {"pads", std::vector<int64_t>{c.pad, c.pad}},
                                                    {"dilations", std::vector<int64_t>{c.dilation}},
                                                    {"group", c.group}};
    const int y = m.node("Relu", {m.node("Conv", {x, m.weight("w", wv), m.weight("b", bv)}, 1, attrs)[0]})[0];
    m.output(y);
    const FusionPlan plan = cpu_plan(m.model);
    const std::vector<FusedGroup> convs = groups_of(plan, "conv_group");
    ASSERT_EQ(convs.size(), 1u);
    EXPECT_EQ(convs[0].members, std::vector<int>{1});
    const at::Tensor padded = at::constant_pad_nd(xv.to(at::kDouble), {c.pad, c.pad}, 0.0);
    const at::Tensor expected = at::relu(at::convolution(padded, wv.to(at::kDouble), bv.to(at::kDouble), {c.stride},
                                                         {0}, {c.dilation}, false, {0}, c.group));
    expect_close(run(m.model, {xv}, true), expected, "fused 1-D");
    expect_close(run(m.model, {xv}, false), expected, "unfused 1-D");
  }
}

// Weights an exporter routes through Identity nodes are still constants.
TEST(CpuFusion, WeightsThroughIdentityNodesAreConstants) {
  IrModel m;
  const at::Tensor wv = randn({4, 4, 1, 1}, 51), bv = randn({4}, 52);
  const int x = m.input("x", {1, 4, 5, 5});
  const int b = m.node("Identity", {m.weight("b", bv)})[0];
  const int c = m.node("Conv", {x, m.weight("w", wv), b})[0];
  m.output(m.node("Relu", {c})[0]);
  EXPECT_EQ(constant_source(m.model.graph, b), m.model.graph.nodes[0].inputs[0]);
  const FusionPlan plan = cpu_plan(m.model);
    const std::vector<FusedGroup> convs = groups_of(plan, "conv_group");
  ASSERT_EQ(convs.size(), 1u);
  EXPECT_EQ(convs[0].members, std::vector<int>{2});
  const at::Tensor xv = randn({1, 4, 5, 5}, 53);
  expect_close(run(m.model, {xv}, true), at::relu(conv_double(xv, wv, bv, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1)), "identity");
}

// The packed kernel runs a second input shape (a batch of 3) from its packed weights alone.
TEST(CpuFusion, KernelRunsANewShapeFromItsPackedWeights) {
  const at::Tensor wv = randn({8, 4, 3, 3}, 61, 0.3), bv = randn({8}, 62);
  Fp32ConvKernel kernel(wv, bv, 1, {{FusedPostOp::Kind::Relu}});
  Window w;
  w.kernel = {3, 3};
  w.strides = {1, 1};
  w.dilations = {1, 1};
  w.pads_begin = {1, 1};
  w.pads_end = {1, 1};
  kernel.prepare({1, 4, 7, 7}, w);
  for (int64_t n : {1, 3}) {
    const at::Tensor xv = randn({n, 4, 7, 7}, 63);
    expect_close(kernel.run(xv, w, {}), at::relu(conv_double(xv, wv, bv, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1)), "batch");
  }
  // A 3-channel image as fed (NCHW), which the kernel interleaves with its own
  // loop before the primitive: batch 2, rows and columns of different counts.
  const at::Tensor w3 = randn({8, 3, 3, 3}, 64, 0.3), b3 = randn({8}, 65);
  Fp32ConvKernel stem(w3, b3, 1, {});
  const at::Tensor x3 = randn({2, 3, 9, 5}, 66);
  ASSERT_TRUE(x3.is_contiguous());
  expect_close(stem.run(x3, w, {}), conv_double(x3, w3, b3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1), "3-channel image");
}

// The same convolutions on oneDNN's blocked layout (reorders at the kernel's
// edges, ConvLayout::Blocked) and on channels-last: both match the double
// reference, with a residual (the sum post-op reads the reordered residual), a
// trailing SiLU, strides, batch 2 and channels that do not fill a block (the
// blocked layout pads them).
TEST(CpuFusion, BlockedAndChannelsLastConvsMatchTheDoubleReference) {
  using Kind = FusedPostOp::Kind;
  struct Case {
    int64_t n, c, o, h, stride;
    std::vector<FusedPostOp> post_ops;
  };
  const std::vector<Case> cases = {
      {1, 16, 24, 9, 1, {{Kind::AddResidual}, {Kind::Relu}}},
      {2, 8, 16, 11, 2, {{Kind::Relu}}},
      {1, 16, 16, 7, 1, {{Kind::Swish, 1.f, 0.f}}},
      {1, 12, 20, 8, 1, {}},
  };
  uint64_t seed = 300;
  for (const Case& c : cases) {
    const at::Tensor wv = randn({c.o, c.c, 3, 3}, seed++, 0.2), bv = randn({c.o}, seed++);
    const int64_t ho = (c.h + 2 - 3) / c.stride + 1;
    const at::Tensor xv = randn({c.n, c.c, c.h, c.h}, seed++).contiguous(at::MemoryFormat::ChannelsLast);
    const at::Tensor rv = randn({c.n, c.o, ho, ho}, seed++);
    Window w;
    w.kernel = {3, 3};
    w.strides = {c.stride, c.stride};
    w.dilations = {1, 1};
    w.pads_begin = {1, 1};
    w.pads_end = {1, 1};
    at::Tensor expected = conv_double(xv, wv, bv, {c.stride, c.stride}, {1, 1, 1, 1}, {1, 1}, 1);
    const bool residual = !c.post_ops.empty() && c.post_ops[0].kind == Kind::AddResidual;
    if (residual) expected = expected + rv.to(at::kDouble);
    for (const FusedPostOp& op : c.post_ops) {
      if (op.kind == Kind::Relu) expected = at::relu(expected);
      if (op.kind == Kind::Swish) expected = expected * at::sigmoid(expected);
    }
    for (ConvLayout layout : {ConvLayout::ChannelsLast, ConvLayout::Blocked}) {
      const bool blocked = layout == ConvLayout::Blocked;
      Fp32ConvKernel kernel(wv, bv, 1, c.post_ops, layout);
      const at::Tensor y = kernel.run(xv, w, residual ? rv : at::Tensor());
      const std::string what = std::string(blocked ? "blocked " : "channels-last ") + std::to_string(c.c) + "->" +
                               std::to_string(c.o) + " stride " + std::to_string(c.stride);
      expect_close(y, expected, what.c_str());
      EXPECT_TRUE(y.is_contiguous(at::MemoryFormat::ChannelsLast)) << what;
      if (fp32_conv_kernels_available()) {
        EXPECT_EQ(kernel.implementation().find("blocked") != std::string::npos, blocked)
            << what << ": " << kernel.implementation();
      }
    }
  }
}

// A dilated 3x3 (Ultra-Light-Fast's RFB branches, dilation 5), for which
// oneDNN may offer the blocked layout only im2col + GEMM: the blocked layout,
// even forced, is taken only with a direct kernel (a GEMM on it would add the
// reorders and nothing else); the values match the double reference either way.
TEST(CpuFusion, DilatedConvTakesTheBlockedLayoutOnlyWithADirectKernel) {
  const at::Tensor wv = randn({16, 16, 3, 3}, 350, 0.2), bv = randn({16}, 351);
  const at::Tensor xv = randn({1, 16, 20, 20}, 352).contiguous(at::MemoryFormat::ChannelsLast);
  Window w;
  w.kernel = {3, 3};
  w.strides = {1, 1};
  w.dilations = {5, 5};
  w.pads_begin = {5, 5};
  w.pads_end = {5, 5};
  const at::Tensor expected = conv_double(xv, wv, bv, {1, 1}, {5, 5, 5, 5}, {5, 5}, 1);
  for (ConvLayout layout : {ConvLayout::Auto, ConvLayout::Blocked}) {
    Fp32ConvKernel kernel(wv, bv, 1, {}, layout);
    const at::Tensor y = kernel.run(xv, w, at::Tensor());
    expect_close(y, expected, "dilated 3x3");
    const std::string impl = kernel.implementation();
    EXPECT_FALSE(impl.find("blocked") != std::string::npos && impl.find("gemm") != std::string::npos) << impl;
  }
}

// Grouped convolutions of 2 and 4 channels per group (ResNeXt-50 32x4d's
// first stage has 4), which oneDNN may run on im2col + GEMM and the kernel
// then runs with adjacent groups merged (block-diagonal weights): the same
// values as the double reference, with a residual and ReLU, on a second
// input shape too (the merge is made once, at the first), on either layout
// (the blocked one forced: the merged weight's dims, not the model's).
TEST(CpuFusion, GroupedConvsOfFewChannelsPerGroupMatchTheDoubleReference) {
  using Kind = FusedPostOp::Kind;
  uint64_t seed = 400;
  Window w;
  w.kernel = {3, 3};
  w.dilations = {1, 1};
  w.pads_begin = {1, 1};
  w.pads_end = {1, 1};
  for (int64_t per_group : {2, 4})
    for (int64_t stride : {1, 2})
      for (ConvLayout layout : {ConvLayout::Auto, ConvLayout::Blocked}) {
        const int64_t channels = 32, group = channels / per_group;
        const at::Tensor wv = randn({channels, per_group, 3, 3}, seed++, 0.3), bv = randn({channels}, seed++);
        Fp32ConvKernel kernel(wv, bv, group, {{Kind::AddResidual}, {Kind::Relu}}, layout);
        w.strides = {stride, stride};
        for (int64_t n : {1, 2}) {
          const at::Tensor xv = randn({n, channels, 10, 10}, seed++).contiguous(at::MemoryFormat::ChannelsLast);
          const int64_t ho = (10 + 2 - 3) / stride + 1;
          const at::Tensor rv = randn({n, channels, ho, ho}, seed++);
          const at::Tensor expected =
              at::relu(conv_double(xv, wv, bv, {stride, stride}, {1, 1, 1, 1}, {1, 1}, group) + rv.to(at::kDouble));
          const std::string what = std::to_string(per_group) + " per group, stride " + std::to_string(stride) +
                                   ", batch " + std::to_string(n) + " (" + kernel.implementation() + ")";
          expect_close(kernel.run(xv, w, rv), expected, what.c_str());
        }
      }
}

// GELU written out (Div by sqrt 2, Erf, Add 1, Mul by x, Mul by 0.5; the Muls
// in either order) runs as one kernel at the Div; other constants do not.
TEST(CpuFusion, GeluWrittenOutRunsAsOneKernelOnlyWithItsConstants) {
  for (int variant = 0; variant < 3; ++variant) {
    IrModel m;
    const int x = m.input("x", {2, 3, 17});
    const float divisor = variant == 2 ? 2.0f : float(std::sqrt(2.0));
    const int d = m.node("Div", {x, m.weight("sqrt2", at::full({}, divisor))})[0];
    const int e = m.node("Erf", {d})[0];
    const int a = m.node("Add", {e, m.weight("one", at::full({}, 1.f))})[0];
    const int half = m.weight("half", at::full({}, 0.5f));
    const int y = variant == 1 ? m.node("Mul", {x, m.node("Mul", {a, half})[0]})[0]
                               : m.node("Mul", {m.node("Mul", {x, a})[0], half})[0];
    m.output(y);
    const FusionPlan plan = cpu_plan(m.model);
    const std::vector<FusedGroup> convs = groups_of(plan, "conv_group");
    // The plan checks the constants too: a divisor of 2 is another function.
    const std::vector<FusedGroup> gelus = groups_of(plan, "gelu");
    ASSERT_EQ(gelus.size(), variant < 2 ? 1u : 0u) << variant;
    if (variant < 2) {
      EXPECT_EQ(gelus[0].members, (std::vector<int>{1, 2, 3, 4})) << variant;
    }
    Executor exec(m.model, ExecOptions{});
    if (variant < 2) {
      EXPECT_EQ(exec.fused_members(0), (std::vector<std::string>{"Erf_1", "Add_2", "Mul_3", "Mul_4"})) << variant;
      EXPECT_EQ(exec.fused_kernel(0), "aten::gelu");
      EXPECT_EQ(exec.fused_into(4), "Div_0");
    } else {
      EXPECT_TRUE(exec.fused_members(0).empty()) << "a divisor of 2 is not GELU";
    }
    const at::Tensor xv = randn({2, 3, 17}, 71) * 3;
    const at::Tensor xd = xv.to(at::kDouble);
    const at::Tensor expected = xd * 0.5 * (1 + at::erf(xd / double(divisor)));
    expect_close(exec.run({xv})[0], expected, "gelu");
    expect_close(run(m.model, {xv}, false), expected, "gelu unfused");
  }
}

// LayerNorm written out (opset 13 exports of F.layer_norm): one
// at::layer_norm at the first ReduceMean, with its scale and bias; Pow with
// another exponent than 2 is not LayerNorm and runs as written.
TEST(CpuFusion, LayerNormWrittenOutRunsAsOneKernelOnlyWhenItIsLayerNorm) {
  for (int variant = 0; variant < 3; ++variant) {  // 0: Pow 2, 1: Mul(d, d), 2: Pow 3
    IrModel m;
    const at::Tensor xv = randn({2, 5, 8}, 121) * 2 + 1, gv = randn({8}, 122), bv = randn({8}, 123);
    const int x = m.input("x", {2, 5, 8});
    const std::map<std::string, AttrValue> last{{"axes", std::vector<int64_t>{-1}}};
    const int mean = m.node("ReduceMean", {x}, 1, last)[0];
    const int d = m.node("Sub", {x, mean})[0];
    const int sq = variant == 1 ? m.node("Mul", {d, d})[0]
                                : m.node("Pow", {d, m.weight("e", at::full({}, variant == 2 ? 3.f : 2.f))})[0];
    const int var = m.node("ReduceMean", {sq}, 1, last)[0];
    const int s = m.node("Sqrt", {m.node("Add", {var, m.weight("eps", at::full({}, 1e-5f))})[0]})[0];
    const int n = m.node("Div", {d, s})[0];
    const int y = m.node("Add", {m.node("Mul", {n, m.weight("gamma", gv)})[0], m.weight("beta", bv)})[0];
    m.output(y);
    const FusionPlan plan = cpu_plan(m.model);
    const std::vector<FusedGroup> convs = groups_of(plan, "conv_group");
    // The plan checks the constants too: an exponent of 3 is another function.
    const std::vector<FusedGroup> norms = groups_of(plan, "layer_norm");
    ASSERT_EQ(norms.size(), variant < 2 ? 1u : 0u) << variant;
    if (variant < 2) {
      EXPECT_EQ(norms[0].head, 0);
      EXPECT_EQ(norms[0].members, (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8})) << variant;
      EXPECT_EQ(norms[0].output, y);
    }
    Executor exec(m.model, ExecOptions{});
    const at::Tensor xd = xv.to(at::kDouble);
    const at::Tensor dd = xd - xd.mean(-1, true);
    const at::Tensor vd = (variant == 2 ? dd * dd * dd : dd * dd).mean(-1, true);
    const at::Tensor expected = dd / at::sqrt(vd + 1e-5) * gv.to(at::kDouble) + bv.to(at::kDouble);
    if (variant < 2) {
      EXPECT_EQ(exec.fused_kernel(0), "aten::layer_norm") << variant;
      EXPECT_EQ(exec.fused_members(0).size(), 8u) << variant;
      EXPECT_EQ(exec.fused_into(8), "ReduceMean_0") << variant;
    } else {
      EXPECT_TRUE(exec.fused_members(0).empty()) << "an exponent of 3 is not LayerNorm";
    }
    if (variant < 2) expect_close(exec.run({xv})[0], expected, "layer norm");
    else {
      // Pow(d, 3) may be negative: its mean + eps under Sqrt gives NaN where
      // ATen does too; compare where the reference is a number.
      const at::Tensor got = exec.run({xv})[0].to(at::kDouble);
      const at::Tensor ok = at::isfinite(expected);
      expect_close(got.masked_select(ok), expected.masked_select(ok), "as written");
    }
    expect_close(run(m.model, {xv}, false).masked_select(at::isfinite(expected)),
                 expected.masked_select(at::isfinite(expected)), "unfused");
  }
}

// ---- MatMul groups (analyzer/fusion/patterns/matmul_group.cc, profiler/ops/fp32_matmul.hpp)

// IrModel leaves node outputs shapeless: what shape inference would say.
void set_shape(IrModel& m, int t, std::vector<int64_t> dims) {
  Shape& s = m.model.graph.tensors[size_t(t)].shape;
  s.dims.clear();
  for (int64_t d : dims) s.dims.push_back(Dim{d, {}});
}

ExecOptions with_gemm(GemmBackend backend, bool fuse = true) {
  ExecOptions o;
  o.gemm = backend;
  o.fuse_cpu = fuse;
  return o;
}

// y = GELU(bias + x @ W) with GELU written out, x 3-D: one group of seven
// nodes; on oneDNN, on BLAS, chosen, and node by node, all equal to the
// arithmetic in double.
TEST(CpuFusion, MatMulBiasGeluIsOneGroupOnEitherBackendAndMatchesTheDoubleReference) {
  IrModel m;
  const at::Tensor xv = randn({2, 5, 16}, 81), wv = randn({16, 24}, 82, 0.3), bv = randn({24}, 83);
  const int x = m.input("x", {2, 5, 16});
  const int mm = m.node("MatMul", {x, m.weight("w", wv)})[0];
  set_shape(m, mm, {2, 5, 24});
  const int b = m.node("Add", {m.weight("b", bv), mm})[0];  // the bias first, as some exporters write it
  set_shape(m, b, {2, 5, 24});
  const int d = m.node("Div", {b, m.weight("sqrt2", at::full({}, float(std::sqrt(2.0))))})[0];
  const int e = m.node("Erf", {d})[0];
  const int a = m.node("Add", {e, m.weight("one", at::full({}, 1.f))})[0];
  const int y = m.node("Mul", {m.node("Mul", {b, a})[0], m.weight("half", at::full({}, 0.5f))})[0];
  m.output(y);

  const FusionPlan plan = cpu_plan(m.model);
    const std::vector<FusedGroup> convs = groups_of(plan, "conv_group");
  ASSERT_EQ(plan.count("matmul_group"), 1);
  EXPECT_EQ(plan.count("gelu"), 0) << "the GELU joined the MatMul's group";
  const FusedGroup group = groups_of(plan, "matmul_group")[0];
  EXPECT_EQ(group.head, 0);
  EXPECT_EQ(matmul_spec(group).bias_add, 1);
  EXPECT_EQ(group.members, (std::vector<int>{1, 2, 3, 4, 5, 6}));
  ASSERT_EQ(matmul_spec(group).post_ops.size(), 1u);
  EXPECT_EQ(matmul_spec(group).post_ops[0].kind, FusedPostOp::Kind::Gelu);
  EXPECT_EQ(group.output, y);

  at::Tensor ref = at::matmul(xv.to(at::kDouble), wv.to(at::kDouble)) + bv.to(at::kDouble);
  ref = 0.5 * ref * (1.0 + at::erf(ref / std::sqrt(2.0)));
  for (GemmBackend backend : {GemmBackend::OneDnn, GemmBackend::Blas, GemmBackend::Auto}) {
    Executor exec(m.model, with_gemm(backend));
    const std::string name = name_of(backend);
    EXPECT_EQ(exec.fused_members(0),
              (std::vector<std::string>{"Add_1", "Div_2", "Erf_3", "Add_4", "Mul_5", "Mul_6"})) << name;
    EXPECT_EQ(exec.fused_into(6), "MatMul_0") << name;
    const std::string kernel = exec.fused_kernel(0);
    if (backend == GemmBackend::Blas) {
      EXPECT_EQ(kernel.rfind("blas", 0), 0u) << kernel;
    }
    if (backend == GemmBackend::OneDnn && fp32_matmul_kernels_available()) {
      EXPECT_EQ(kernel.rfind("onednn", 0), 0u) << kernel;
    }
    expect_close(exec.run({xv})[0], ref, name.c_str());
    // --fusion off: the MatMul alone on the kernel, every other node as written.
    Executor off(m.model, with_gemm(backend, false));
    EXPECT_TRUE(off.fused_members(0).empty()) << name;
    expect_close(off.run({xv})[0], ref, (name + " unfused").c_str());
  }
  expect_close(run(m.model, {xv}, false), ref, "as written");
}

// A trailing SiLU leaves oneDNN's kernel and runs on modelstat's own pass
// (profiler/ops/silu.hpp); one before a residual Add stays a oneDNN post-op. Both orders, both backends, 1 and 2 threads,
// 1 row and 37 rows (a vector tail), against double; then a Conv + SiLU group.
TEST(CpuFusion, MatMulAndConvSiluOnEitherPathMatchTheDoubleReference) {
  const int threads_before = at::get_num_threads();
  for (int threads : {1, 2}) {
    at::set_num_threads(threads);
    for (bool silu_last : {true, false}) {
      for (int64_t rows : {37, 1}) {
        IrModel m;
        const at::Tensor xv = randn({rows, 16}, 91) * 2, wv = randn({16, 21}, 92, 0.5),
                         rv = randn({rows, 21}, 93);
        const int x = m.input("x", {rows, 16});
        const int r = m.input("r", {rows, 21});
        const int mm = m.node("MatMul", {x, m.weight("w", wv)})[0];
        set_shape(m, mm, {rows, 21});
        const auto silu = [&m, rows](int t) {
          const int sig = m.node("Sigmoid", {t})[0];
          set_shape(m, sig, {rows, 21});
          const int out = m.node("Mul", {t, sig})[0];
          set_shape(m, out, {rows, 21});
          return out;
        };
        const auto add_r = [&m, r, rows](int t) {
          const int out = m.node("Add", {t, r})[0];
          set_shape(m, out, {rows, 21});
          return out;
        };
        const int y = silu_last ? silu(add_r(mm)) : add_r(silu(mm));
        m.output(y);
        const FusionPlan plan = cpu_plan(m.model);
        ASSERT_EQ(plan.count("matmul_group"), 1);
        const std::vector<FusedPostOp> ops = matmul_spec(groups_of(plan, "matmul_group")[0]).post_ops;
        ASSERT_EQ(ops.size(), 2u);
        EXPECT_EQ(ops[silu_last ? 1 : 0].kind, FusedPostOp::Kind::Swish);

        const at::Tensor p = at::matmul(xv.to(at::kDouble), wv.to(at::kDouble));
        const auto silu_d = [](const at::Tensor& v) { return v / (1.0 + at::exp(-v)); };
        const at::Tensor ref = silu_last ? silu_d(p + rv.to(at::kDouble)) : silu_d(p) + rv.to(at::kDouble);
        const std::string what =
            std::string(silu_last ? "silu last" : "silu then residual") + ", rows " + std::to_string(rows);
        for (GemmBackend backend : {GemmBackend::OneDnn, GemmBackend::Blas}) {
          Executor exec(m.model, with_gemm(backend));
          expect_close(exec.run({xv, rv})[0], ref, (what + ", " + name_of(backend)).c_str());
        }
        expect_close(run(m.model, {xv, rv}, false), ref, (what + ", as written").c_str());
      }
    }
    IrModel m;
    const at::Tensor xv = randn({1, 6, 9, 11}, 95) * 2, wv = randn({13, 6, 3, 3}, 96, 0.3),
                     bv = randn({13}, 97);
    const int x = m.input("x", {1, 6, 9, 11});
    const int conv = m.node("Conv", {x, m.weight("w", wv), m.weight("b", bv)}, 1,
                            conv_attrs({1, 1}, {1, 1, 1, 1}, {1, 1}, 1))[0];
    m.output(m.node("Mul", {conv, m.node("Sigmoid", {conv})[0]})[0]);
    const at::Tensor c = conv_double(xv, wv, bv, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1);
    expect_close(run(m.model, {xv}, true), c / (1.0 + at::exp(-c)),
                 ("conv, threads " + std::to_string(threads)).c_str());
  }
  at::set_num_threads(threads_before);
}

// GlobalAveragePool on the executor's own loop: of a Conv group's channels-last
// output and of an NCHW graph input, at 1 and 2 threads, planes longer than one
// summing block (713 positions) and a channel count that is no multiple of 16.
TEST(CpuFusion, GlobalAveragePoolOfChannelsLastAndNchwMatchesTheDoubleMean) {
  const int threads_before = at::get_num_threads();
  const at::Tensor xv = randn({2, 5, 23, 31}, 101) * 2, wv = randn({37, 5, 3, 3}, 102, 0.3), bv = randn({37}, 103);
  IrModel m;
  const int x = m.input("x", {2, 5, 23, 31});
  const int conv = m.node("Conv", {x, m.weight("w", wv), m.weight("b", bv)}, 1,
                          conv_attrs({1, 1}, {1, 1, 1, 1}, {1, 1}, 1))[0];
  m.output(m.node("GlobalAveragePool", {conv})[0]);
  const at::Tensor ref = conv_double(xv, wv, bv, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1).mean({2, 3}, true);
  IrModel direct;
  const int d = direct.input("d", {2, 37, 23, 31});
  direct.output(direct.node("GlobalAveragePool", {d})[0]);
  const at::Tensor dv = randn({2, 37, 23, 31}, 104) + 3;  // a mean far from 0
  for (int threads : {1, 2}) {
    at::set_num_threads(threads);
    const std::string t = ", threads " + std::to_string(threads);
    expect_close(run(m.model, {xv}, true), ref, ("after a Conv group (channels-last)" + t).c_str());
    expect_close(run(direct.model, {dv}, true), dv.to(at::kDouble).mean({2, 3}, true), ("NCHW input" + t).c_str());
  }
  at::set_num_threads(threads_before);
}

// ReduceMean over both spatial axes (torchvision's `x.mean([2, 3])`) of a Conv
// group's channels-last output runs on the same loop, keepdims 0 and 1; axes
// given negative, as exporters also write them; over one spatial axis only it
// stays ATen's.
TEST(CpuFusion, SpatialReduceMeanOfAChannelsLastConvMatchesTheDoubleMean) {
  const int threads_before = at::get_num_threads();
  const at::Tensor xv = randn({2, 5, 9, 11}, 131) * 2, wv = randn({40, 5, 3, 3}, 132, 0.3), bv = randn({40}, 133);
  const at::Tensor conv_ref = conv_double(xv, wv, bv, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1);
  struct Case {
    std::vector<int64_t> axes;
    int64_t keep;
    at::Tensor ref;
  };
  const std::vector<Case> cases = {{{2, 3}, 0, conv_ref.mean({2, 3}, false)},
                                   {{-2, -1}, 1, conv_ref.mean({2, 3}, true)},
                                   {{3}, 0, conv_ref.mean({3}, false)}};
  for (const Case& c : cases) {
    IrModel m;
    const int x = m.input("x", {2, 5, 9, 11});
    const int conv = m.node("Conv", {x, m.weight("w", wv), m.weight("b", bv)}, 1,
                            conv_attrs({1, 1}, {1, 1, 1, 1}, {1, 1}, 1))[0];
    const std::map<std::string, AttrValue> attrs{{"axes", c.axes}, {"keepdims", c.keep}};
    m.output(m.node("ReduceMean", {conv}, 1, attrs)[0]);
    for (int threads : {1, 2}) {
      at::set_num_threads(threads);
      const std::string what = "axes " + c10::str(c.axes) + ", keepdims " + std::to_string(c.keep) + ", threads " +
                               std::to_string(threads);
      expect_close(run(m.model, {xv}, true), c.ref, what.c_str());
    }
  }
  at::set_num_threads(threads_before);
}

// Gemm with transB, alpha and beta, a C of N values, then a residual Add of
// an earlier tensor and a Relu; and a batch-1 row (the classifier head's GEMV).
TEST(CpuFusion, GemmTransBAlphaBetaResidualReluMatchesTheDoubleReference) {
  for (int64_t rows : {7, 1}) {
    IrModel m;
    const at::Tensor av = randn({rows, 12}, 91), bv = randn({10, 12}, 92, 0.4), cv = randn({10}, 93),
                     rv = randn({rows, 10}, 94);
    const int a = m.input("a", {rows, 12});
    const int r = m.input("r", {rows, 10});
    const int g = m.node("Gemm", {a, m.weight("B", bv), m.weight("C", cv)}, 1,
                         {{"transB", int64_t(1)}, {"alpha", 0.5}, {"beta", 2.0}})[0];
    set_shape(m, g, {rows, 10});
    const int s = m.node("Add", {r, g})[0];
    set_shape(m, s, {rows, 10});
    const int y = m.node("Relu", {s})[0];
    m.output(y);
    const FusionPlan plan = cpu_plan(m.model);
    const std::vector<FusedGroup> convs = groups_of(plan, "conv_group");
    const std::vector<FusedGroup> matmuls = groups_of(plan, "matmul_group");
    ASSERT_EQ(matmuls.size(), 1u);
    EXPECT_TRUE(matmul_spec(matmuls[0]).transposed);
    EXPECT_EQ(matmul_spec(matmuls[0]).bias_add, -1) << "C is the bias; the Add is the residual";
    ASSERT_EQ(matmul_spec(matmuls[0]).post_ops.size(), 2u);
    EXPECT_EQ(matmul_spec(matmuls[0]).post_ops[0].kind, FusedPostOp::Kind::AddResidual);
    EXPECT_EQ(matmul_spec(matmuls[0]).post_ops[0].residual, r);
    const at::Tensor ref = at::relu(rv.to(at::kDouble) + 0.5 * at::matmul(av.to(at::kDouble), bv.to(at::kDouble).t()) +
                                    2.0 * cv.to(at::kDouble));
    for (GemmBackend backend : {GemmBackend::OneDnn, GemmBackend::Blas}) {
      Executor exec(m.model, with_gemm(backend));
      EXPECT_EQ(exec.fused_members(0), (std::vector<std::string>{"Add_1", "Relu_2"}));
      expect_close(exec.run({av, rv})[0], ref, name_of(backend));
      Executor off(m.model, with_gemm(backend, false));
      expect_close(off.run({av, rv})[0], ref, name_of(backend));
    }
  }
}

// What a MatMul group must leave alone: an output with a second reader, a
// bias that is not N values, computed weights, Gemm with transA.
TEST(CpuFusion, MatMulGroupsDoNotTakeWhatWouldChangeTheGraphsValues) {
  IrModel m;
  const at::Tensor xv = randn({4, 6}, 101), wv = randn({6, 8}, 102), full_bias = randn({4, 8}, 103);
  const int x = m.input("x", {4, 6});
  const int w = m.weight("w", wv);
  const int p = m.node("MatMul", {x, w})[0];  // 0: read twice below
  set_shape(m, p, {4, 8});
  const int q = m.node("Add", {p, m.weight("bias48", full_bias)})[0];  // 1
  set_shape(m, q, {4, 8});
  const int relu = m.node("Relu", {p})[0];  // 2
  const int computed = m.node("MatMul", {x, m.node("Relu", {w})[0]})[0];  // 3 Relu, 4 MatMul
  const int t = m.node("Gemm", {m.node("Transpose", {x})[0], w}, 1, {{"transA", int64_t(1)}})[0];  // 5, 6
  m.output(q);
  m.output(relu);
  m.output(computed);
  m.output(t);
  const FusionPlan plan = cpu_plan(m.model);
    const std::vector<FusedGroup> convs = groups_of(plan, "conv_group");
  const std::vector<FusedGroup> matmuls = groups_of(plan, "matmul_group");
  ASSERT_EQ(matmuls.size(), 1u) << "only the first MatMul has a constant weight and no transA";
  EXPECT_EQ(matmuls[0].head, 0);
  EXPECT_TRUE(matmuls[0].members.empty());
  Executor exec(m.model, ExecOptions{});
  const auto out = exec.run({xv});
  const at::Tensor xd = xv.to(at::kDouble), wd = wv.to(at::kDouble);
  expect_close(out[0], at::matmul(xd, wd) + full_bias.to(at::kDouble), "bias [M, N]");
  expect_close(out[1], at::relu(at::matmul(xd, wd)), "second reader");
  expect_close(out[2], at::matmul(xd, at::relu(wd)), "computed weight");
  expect_close(out[3], at::matmul(xd, wd), "transA");
}

// The choice between oneDNN and BLAS is measured once per shape and kept:
// a second kernel of the same shape reads it (in memory, or from the
// per-machine file), which holds the shape's line.
TEST(CpuFusion, GemmChoiceIsMeasuredOncePerShapeAndCached) {
  if (!fp32_matmul_kernels_available()) GTEST_SKIP() << "no oneDNN in this build: BLAS always";
  const at::Tensor w = randn({29, 31}, 111);
  Fp32MatmulKernel first(w, {}, {}, GemmBackend::Auto);
  const GemmChoiceSummary before = gemm_choice_summary();
  first.prepare(37);
  const GemmChoiceSummary after_first = gemm_choice_summary();
  EXPECT_EQ(after_first.measured + after_first.cached, before.measured + before.cached + 1);
  Fp32MatmulKernel second(w, {}, {}, GemmBackend::Auto);
  second.prepare(37);
  const GemmChoiceSummary after_second = gemm_choice_summary();
  EXPECT_EQ(after_second.measured, after_first.measured) << "the same shape is not measured twice";
  EXPECT_EQ(first.implementation().substr(0, 4), second.implementation().substr(0, 4));
  if (!after_second.cache_file.empty()) {
    std::ifstream in(after_second.cache_file);
    std::string line;
    bool found = false;
    while (std::getline(in, line)) found = found || line.find("\t37\t29\t31\tKxN\t-\t") != std::string::npos;
    EXPECT_TRUE(found) << after_second.cache_file;
  } else {
    EXPECT_FALSE(after_second.cache_error.empty());
  }
  const at::Tensor x = randn({37, 29}, 112);
  expect_close(second.run(x, {}), at::matmul(x.to(at::kDouble), w.to(at::kDouble)), "chosen kernel");
}

}  // namespace
}  // namespace modelstat::profiler

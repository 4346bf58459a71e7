// Float16 models on the CPU's Conv groups (analyzer/fusion/patterns/conv_group.cc):
// a float16 Conv, the BatchNormalization after it, its activations and a
// residual Add run as one oneDNN convolution computing in fp32 (weights
// widened once, the input widened on entry, the output rounded back to
// float16 on exit), as in an fp32 model, instead of node by node with every
// node upcast on its own. The result is checked against the graph's
// arithmetic written out here in double with ATen from the same float16
// values (weights and input widened exactly), not against the executor.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <cmath>

#include "analyzer/fusion/fusion_plan.hpp"
#include "profiler/executor.hpp"
#include "tests/profiler/ir_model.hpp"

namespace modelstat::profiler {
namespace {

// N(0, scale) values rounded to float16: the model's stored values.
at::Tensor half_randn(const std::vector<int64_t>& dims, uint64_t seed, double scale = 1.0) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return (at::randn(dims, gen, at::TensorOptions().dtype(at::kFloat)) * scale).to(at::kHalf);
}

std::map<std::string, AttrValue> conv_attrs(std::vector<int64_t> pads, std::vector<int64_t> dilations) {
  return {{"strides", std::vector<int64_t>{1, 1}}, {"pads", pads}, {"dilations", dilations},
          {"group", int64_t(1)}};
}

at::Tensor d(const at::Tensor& t) { return t.to(at::kDouble); }
at::Tensor per_channel(const at::Tensor& v) { return d(v).reshape({1, -1, 1, 1}); }

// Conv in double with symmetric ONNX pads (begin = end per axis).
at::Tensor conv_double(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, int64_t pad, int64_t dilation) {
  return at::convolution(d(x), d(w), b.defined() ? d(b) : at::Tensor(), {1, 1}, {pad, pad}, {dilation, dilation},
                         false, {0, 0}, 1);
}

// An image-segmentation block in float16, as IS-Net / U2-Net exports write it
// (the exporter keeps the Resize in float32 between two Casts):
//
//   x -> Conv3x3 -> BN -> Relu = a                     (group: Conv + BN, Relu)
//   a -> Conv3x3 dilation 2 -> Relu -> Add(a) = r      (group: Conv + Relu, Add)
//   r -> MaxPool 2x2 -> Conv1x1 = s                    (group of one)
//   s -> Cast(fp32) -> Resize linear x2 -> Cast(fp16) = u
//   Concat(u, r) -> Conv1x1 -> Sigmoid = y             (group: Conv + Sigmoid)
struct Block {
  IrModel m;
  at::Tensor w1, b1, scale, beta, mean, var, w2, b2, w3, w4, b4;
  int conv1 = -1, conv2 = -1, conv3 = -1, conv4 = -1, a = -1, r = -1;

  Block() {
    w1 = half_randn({8, 4, 3, 3}, 1, 0.3), b1 = half_randn({8}, 2);
    scale = (half_randn({8}, 3).abs() + 0.5).to(at::kHalf), beta = half_randn({8}, 4), mean = half_randn({8}, 5),
    var = (half_randn({8}, 6).abs() + 0.2).to(at::kHalf);
    w2 = half_randn({8, 8, 3, 3}, 7, 0.2), b2 = half_randn({8}, 8);
    w3 = half_randn({6, 8, 1, 1}, 9, 0.4);
    w4 = half_randn({3, 14, 1, 1}, 10, 0.3), b4 = half_randn({3}, 11);
    auto half = [&](int t, std::vector<int64_t> dims) {
      m.model.graph.tensors[size_t(t)].dtype = DType::Float16;
      m.model.graph.tensors[size_t(t)].shape = test::make_shape(dims);
      return t;
    };
    const int x = m.input("x", {1, 4, 12, 12}, DType::Float16);
    conv1 = 0;
    const int c1 = half(m.node("Conv", {x, m.weight("w1", w1), m.weight("b1", b1)}, 1, conv_attrs({1, 1, 1, 1}, {1, 1}))[0],
                        {1, 8, 12, 12});
    const int bn = half(m.node("BatchNormalization", {c1, m.weight("s", scale), m.weight("beta", beta),
                                                      m.weight("mean", mean), m.weight("var", var)},
                               1, {{"epsilon", 1e-3}})[0],
                        {1, 8, 12, 12});
    a = half(m.node("Relu", {bn})[0], {1, 8, 12, 12});
    conv2 = int(m.model.graph.nodes.size());
    const int c2 = half(m.node("Conv", {a, m.weight("w2", w2), m.weight("b2", b2)}, 1, conv_attrs({2, 2, 2, 2}, {2, 2}))[0],
                        {1, 8, 12, 12});
    const int relu2 = half(m.node("Relu", {c2})[0], {1, 8, 12, 12});
    r = half(m.node("Add", {relu2, a})[0], {1, 8, 12, 12});
    const int p = half(m.node("MaxPool", {r}, 1,
                              {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}})[0],
                       {1, 8, 6, 6});
    conv3 = int(m.model.graph.nodes.size());
    const int s = half(m.node("Conv", {p, m.weight("w3", w3)}, 1, conv_attrs({0, 0, 0, 0}, {1, 1}))[0], {1, 6, 6, 6});
    const int s32 = m.node("Cast", {s}, 1, {{"to", int64_t(1)}})[0];
    const int up = m.node("Resize", {s32, -1, m.weight("scales", at::tensor({1.f, 1.f, 2.f, 2.f}))}, 1,
                          {{"mode", std::string("linear")}})[0];
    const int u = half(m.node("Cast", {up}, 1, {{"to", int64_t(10)}})[0], {1, 6, 12, 12});
    const int cat = half(m.node("Concat", {u, r}, 1, {{"axis", int64_t(1)}})[0], {1, 14, 12, 12});
    conv4 = int(m.model.graph.nodes.size());
    const int c4 = half(m.node("Conv", {cat, m.weight("w4", w4), m.weight("b4", b4)}, 1, conv_attrs({0, 0, 0, 0}, {1, 1}))[0],
                        {1, 3, 12, 12});
    m.output(half(m.node("Sigmoid", {c4})[0], {1, 3, 12, 12}));
  }

  // The block's arithmetic in double from the float16 values, with no
  // rounding in between (what an fp32 runtime computes, to within fp32's).
  at::Tensor reference(const at::Tensor& x) const {
    const at::Tensor av = at::relu((conv_double(x, w1, b1, 1, 1) - per_channel(mean)) /
                                       at::sqrt(per_channel(var) + 1e-3) * per_channel(scale) +
                                   per_channel(beta));
    const at::Tensor rv = at::relu(conv_double(av, w2, b2, 2, 2)) + av;
    const at::Tensor sv = conv_double(at::max_pool2d(rv, {2, 2}, {2, 2}), w3, {}, 0, 1);
    // ONNX Resize linear, half_pixel (its default) = align_corners false.
    const at::Tensor uv = at::upsample_bilinear2d(sv, {12, 12}, false);
    return at::sigmoid(conv_double(at::cat({uv, rv}, 1), w4, b4, 0, 1));
  }
};

// How far a float16 run may be from the fp32 arithmetic: the roundings of
// the group outputs, Cast and Resize to float16 (a few units of its epsilon
// 2^-10 relative to the values' scale, compounded over four layers).
constexpr double kHalfTolerance = 8 * 0.0009765625;

TEST(Float16Groups, ConvBatchNormReluResidualAndSigmoidRunAsGroupsInTheModelsDtype) {
  const Block b;
  const FusionPlan plan =
      plan_fusion(b.m.model.graph, b.m.model, inference_fusion_options(true, true, true, false, false));
  std::vector<int> heads;
  for (const FusedGroup& g : plan.groups)
    if (g.pattern == "conv_group") heads.push_back(g.head);
  EXPECT_EQ(heads, (std::vector<int>{b.conv1, b.conv2, b.conv3, b.conv4}));
  // BN + Relu, Relu + Add, nothing, Sigmoid.
  EXPECT_EQ(plan.absorbed_count, 5);

  ExecOptions own;
  own.float_dtype = at::ScalarType::Undefined;  // the model's own dtypes (profile's default for it)
  const Executor ex(b.m.model, own);
  EXPECT_EQ(ex.fused_members(b.conv1), (std::vector<std::string>{"BatchNormalization_1", "Relu_2"}));
  EXPECT_EQ(ex.fused_members(b.conv2), (std::vector<std::string>{"Relu_4", "Add_5"}));
  EXPECT_EQ(ex.fused_members(b.conv4), (std::vector<std::string>{"Sigmoid_13"}));
  for (int head : heads) EXPECT_FALSE(ex.fused_kernel(head).empty()) << head;

  const at::Tensor x = half_randn({1, 4, 12, 12}, 20);
  const at::Tensor expected = b.reference(x);
  for (int run = 0; run < 2; ++run) {
    const at::Tensor y = ex.run({x})[0];
    EXPECT_EQ(y.scalar_type(), at::kHalf);
    ASSERT_EQ(y.sizes(), expected.sizes());
    const double err = (d(y) - expected).abs().max().item<double>();
    EXPECT_LE(err, kHalfTolerance) << "run " << run << ": max abs error " << err << " (outputs in (0, 1))";
    EXPECT_GT(expected.std().item<double>(), 0.05) << "a reference that tests something";
  }
  // The groups computed in fp32 from float16 tensors: named as upcast, like a
  // Conv upcast on its own, each Conv once.
  const Upcasts up = ex.upcasts();
  ASSERT_EQ(up.nodes_by_dtype.count("fp16"), 1u);
  EXPECT_EQ(up.nodes_by_dtype.at("fp16").at("Conv"), 4);
  for (int head : heads) EXPECT_TRUE(up.top_level[size_t(head)]) << head;

  // Node by node (--fusion off): the same arithmetic, each node rounded to
  // float16, within the same tolerance.
  ExecOptions unfused = own;
  unfused.fuse_cpu = false;
  const at::Tensor y_unfused = Executor(b.m.model, unfused).run({x})[0];
  EXPECT_LE((d(y_unfused) - expected).abs().max().item<double>(), kHalfTolerance);
}

// --dtype fp32 on a float16 graph: every tensor computes in fp32, and the
// Conv groups form as they do on the float16 graph (the plan reads the
// graph's declared dtypes, the run widens the weights): fp32's accuracy, no
// upcast.
TEST(Float16Groups, Fp32RunOfAFloat16GraphRunsTheSameGroupsInFp32) {
  const Block b;
  const Executor ex(b.m.model, ExecOptions{});  // float_dtype fp32
  for (int head : {b.conv1, b.conv2, b.conv3, b.conv4}) EXPECT_FALSE(ex.fused_kernel(head).empty()) << head;
  const at::Tensor x = half_randn({1, 4, 12, 12}, 21);
  const at::Tensor y = ex.run({x.to(at::kFloat)})[0];
  EXPECT_EQ(y.scalar_type(), at::kFloat);
  const double err = (d(y) - b.reference(x)).abs().max().item<double>();
  EXPECT_LE(err, 1e-5) << "max abs error " << err;
  EXPECT_TRUE(ex.upcasts().empty());
}

}  // namespace
}  // namespace modelstat::profiler

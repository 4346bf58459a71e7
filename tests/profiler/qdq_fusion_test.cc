// QDQ fusion (analyzer/fusion/patterns/qdq.cc): which nodes the plan fuses and
// absorbs, and what the fused int8 kernels compute, against the float
// arithmetic of the dequantized operands written out here in double
// (x - zero_point) * scale for data and weights, ATen's double convolution /
// product, plus the bias): equal to within float rounding.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "profiler/executor.hpp"
#include "profiler/ops/int8_kernels.hpp"
#include "analyzer/fusion/fusion_plan.hpp"
#include "tests/profiler/ir_model.hpp"

namespace modelstat::profiler {
namespace {

at::Tensor random_8bit(const std::vector<int64_t>& dims, at::ScalarType type, uint64_t seed) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const int64_t lo = type == at::kByte ? 0 : -128, hi = type == at::kByte ? 256 : 128;
  return at::randint(lo, hi, dims, gen, at::TensorOptions().dtype(at::kLong)).to(type);
}

// (q - zero_point) * scale in double, scale / zero point along `axis` when they have several elements.
at::Tensor dequantized(const at::Tensor& q, const at::Tensor& scale, const at::Tensor& zp, int64_t axis) {
  auto along = [&](const at::Tensor& v) {
    if (v.numel() == 1) return v.to(at::kDouble).reshape({});
    std::vector<int64_t> shape(size_t(q.dim()), 1);
    shape[size_t(axis)] = v.numel();
    return v.to(at::kDouble).reshape(shape);
  };
  return (q.to(at::kDouble) - along(zp)) * along(scale);
}

// A QDQ model: x_q -> DequantizeLinear -> OP <- DequantizeLinear <- w_q; `op`
// Conv (with a DequantizeLinear'd int32 bias), MatMul or Gemm (transB, C).
struct QdqModel {
  IrModel m;
  int x = -1, dq_x = -1, dq_w = -1, dq_b = -1, op = -1, y = -1;
  at::Tensor x_scale, x_zp, w_q, w_scale, w_zp, bias_q, bias_scale;
};

// The fusion plan with only the QDQ pattern on.
FusionPlan qdq_plan(const Graph& g, const Model& model) {
  FusionOptions options;
  options.qdq = true;
  return plan_fusion(g, model, options);
}

int set_dtype(IrModel& m, int t, DType d) {
  m.model.graph.tensors[size_t(t)].dtype = d;
  return t;
}

// quantize_input: the graph takes x in float and quantizes it (QuantizeLinear
// with the same scale and zero point), as a QDQ model does; x_q is then an
// activation.
QdqModel conv_model(bool per_channel, at::ScalarType w_type, bool quantize_input = false) {
  QdqModel q;
  const int64_t cout = 6;
  q.x_scale = at::full({}, 0.05, at::kFloat);
  q.x_zp = at::full({}, 131, at::kByte);
  if (quantize_input) {
    const int xf = q.m.input("x", {1, 8, 9, 9});
    q.x = set_dtype(q.m, q.m.node("QuantizeLinear", {xf, q.m.weight("q_scale", q.x_scale), q.m.weight("q_zp", q.x_zp)})[0],
                    DType::UInt8);
  } else {
    q.x = q.m.input("x_q", {1, 8, 9, 9}, DType::UInt8);
  }
  q.w_q = random_8bit({cout, 8, 3, 3}, w_type, 7);
  q.w_scale = per_channel ? at::linspace(0.01, 0.02, cout, at::kFloat) : at::full({}, 0.015, at::kFloat);
  q.w_zp = per_channel ? random_8bit({cout}, w_type, 8) : at::full({}, w_type == at::kByte ? 120 : 0, w_type);
  q.bias_q = at::arange(-300, 300, 100, at::kInt);
  q.bias_scale = (q.x_scale * (per_channel ? q.w_scale : q.w_scale.expand({cout}))).contiguous();
  const int sx = q.m.weight("x_scale", q.x_scale), zx = q.m.weight("x_zp", q.x_zp);
  const int w = q.m.weight("w_q", q.w_q), sw = q.m.weight("w_scale", q.w_scale), zw = q.m.weight("w_zp", q.w_zp);
  const int b = q.m.weight("b_q", q.bias_q), sb = q.m.weight("b_scale", q.bias_scale),
            zb = q.m.weight("b_zp", at::zeros({cout}, at::kInt));
  q.dq_x = int(q.m.model.graph.nodes.size());
  const int xf = q.m.node("DequantizeLinear", {q.x, sx, zx})[0];
  q.dq_w = int(q.m.model.graph.nodes.size());
  const int wf = q.m.node("DequantizeLinear", {w, sw, zw}, 1, {{"axis", int64_t(0)}})[0];
  q.dq_b = int(q.m.model.graph.nodes.size());
  const int bf = q.m.node("DequantizeLinear", {b, sb, zb}, 1, {{"axis", int64_t(0)}})[0];
  q.op = int(q.m.model.graph.nodes.size());
  q.y = q.m.node("Conv", {xf, wf, bf}, 1,
                 {{"pads", std::vector<int64_t>{1, 0, 2, 1}}, {"strides", std::vector<int64_t>{2, 1}}})[0];
  q.m.output(q.y);
  return q;
}

at::Tensor run_one(const Model& model, const at::Tensor& input, bool fuse, std::vector<std::string>* notices = nullptr) {
  ExecOptions options;
  options.fuse_qdq = fuse;
  Executor exec(model, options);
  if (notices) *notices = exec.fusion_notices();
  return exec.run({input})[0];
}

at::Tensor reference_conv(const QdqModel& q, const at::Tensor& x_q) {
  const at::Tensor x = at::constant_pad_nd(dequantized(x_q, q.x_scale, q.x_zp, 1), {0, 1, 1, 2}, 0.0);
  const at::Tensor w = dequantized(q.w_q, q.w_scale, q.w_zp, 0);
  const at::Tensor bias = q.bias_q.to(at::kDouble) * q.bias_scale.to(at::kDouble);
  return at::convolution(x, w, bias, {2, 1}, {0, 0}, {1, 1}, false, {0, 0}, 1);
}

void expect_close(const at::Tensor& actual, const at::Tensor& expected) {
  ASSERT_EQ(actual.sizes(), expected.sizes());
  const double scale = expected.abs().max().item<double>();
  const double err = (actual.to(at::kDouble) - expected).abs().max().item<double>();
  EXPECT_LE(err, 1e-5 * scale) << "max abs error " << err << " of max |expected| " << scale;
}

TEST(QdqFusion, PlanFusesConvAndAbsorbsItsDataAndWeightDequantizers) {
  const QdqModel q = conv_model(true, at::kChar);
  const FusionPlan plan = qdq_plan(q.m.model.graph, q.m.model);
  ASSERT_EQ(plan.count("qdq"), 1);
  ASSERT_NE(plan.headed_by(q.op), nullptr);
  const std::vector<int>& in = plan.headed_by(q.op)->inputs;
  ASSERT_EQ(in.size(), 7u);
  EXPECT_EQ(in[0], q.x);  // reads the quantized input itself
  EXPECT_TRUE(plan.absorbed[size_t(q.dq_x)]);
  EXPECT_TRUE(plan.absorbed[size_t(q.dq_w)]);
  EXPECT_FALSE(plan.absorbed[size_t(q.dq_b)]);  // the bias stays a float input
  EXPECT_EQ(plan.absorbed_count, 2);
}

// The QDQ notices among an executor's (another says which constant-only
// nodes, such as a weight's DequantizeLinear, ran once).
std::vector<std::string> qdq_notices(const std::vector<std::string>& notices) {
  std::vector<std::string> out;
  for (const std::string& n : notices)
    if (n.find("QDQ") != std::string::npos) out.push_back(n);
  return out;
}

TEST(QdqFusion, AbsorbedDequantizersNameTheNodeTheyAreFusedInto) {
  if (!int8_kernels_available()) GTEST_SKIP() << "no oneDNN in this build: nothing is fused";
  const QdqModel q = conv_model(true, at::kChar);
  const std::string conv = q.m.model.graph.nodes[size_t(q.op)].name;
  const Executor fused(q.m.model, ExecOptions{});
  EXPECT_EQ(fused.fused_into(q.dq_x), conv);
  EXPECT_EQ(fused.fused_into(q.dq_w), conv);
  EXPECT_EQ(fused.fused_into(q.dq_b), "") << "the bias DequantizeLinear runs";
  EXPECT_EQ(fused.fused_into(q.op), "");
  ExecOptions as_written;
  as_written.fuse_qdq = false;
  const Executor unfused(q.m.model, as_written);
  EXPECT_EQ(unfused.fused_into(q.dq_x), "");
  EXPECT_TRUE(qdq_notices(unfused.fusion_notices()).empty()) << ::testing::PrintToString(unfused.fusion_notices());
}

TEST(QdqFusion, FusedConvEqualsTheFloatConvOfTheDequantizedOperands) {
  if (!int8_kernels_available()) GTEST_SKIP() << "no oneDNN in this build: nothing is fused";
  for (const bool per_channel : {true, false})
    for (const at::ScalarType w_type : {at::kChar, at::kByte}) {
      SCOPED_TRACE(std::string(per_channel ? "per channel " : "per tensor ") + (w_type == at::kChar ? "s8" : "u8"));
      const QdqModel q = conv_model(per_channel, w_type);
      const at::Tensor x_q = random_8bit({1, 8, 9, 9}, at::kByte, 11);
      std::vector<std::string> notices;
      const at::Tensor fused = run_one(q.m.model, x_q, true, &notices);
      notices = qdq_notices(notices);
      ASSERT_EQ(notices.size(), 1u);
      EXPECT_NE(notices[0].find("QDQ: 1 Conv ran as int8 kernels"), std::string::npos) << notices[0];
      expect_close(fused, reference_conv(q, x_q));
      std::vector<std::string> none;
      expect_close(run_one(q.m.model, x_q, false, &none), reference_conv(q, x_q));
      EXPECT_TRUE(qdq_notices(none).empty()) << ::testing::PrintToString(none);
    }
}

TEST(QdqFusion, ADequantizerAlsoReadByAnotherNodeStillRuns) {
  // x -> QuantizeLinear -> x_q -> DequantizeLinear -> Conv, and the
  // dequantized x is also a graph output: the Conv fuses and reads x_q, which
  // the DequantizeLinear (still running) must neither release nor take over.
  QdqModel q = conv_model(true, at::kChar, true);
  const int xf = q.m.model.graph.nodes[size_t(q.dq_x)].outputs[0];
  q.m.output(xf);
  const FusionPlan plan = qdq_plan(q.m.model.graph, q.m.model);
  EXPECT_NE(plan.headed_by(q.op), nullptr);
  EXPECT_FALSE(plan.absorbed[size_t(q.dq_x)]);
  EXPECT_TRUE(plan.absorbed[size_t(q.dq_w)]);
  // Values a third of a step off the grid: x quantizes to x_q exactly.
  const at::Tensor x_q = random_8bit({1, 8, 9, 9}, at::kByte, 12);
  const at::Tensor x = (x_q.to(at::kFloat) - 131.0f) * 0.05f + 0.0166f;
  Executor exec(q.m.model, ExecOptions{});
  const auto out = exec.run({x});
  ASSERT_EQ(out.size(), 2u);
  expect_close(out[0], reference_conv(q, x_q));
  expect_close(out[1], dequantized(x_q, q.x_scale, q.x_zp, 1));
}

TEST(QdqFusion, FormsTheKernelsDoNotTakeAreNotFused) {
  {  // a per-channel activation scale
    QdqModel q = conv_model(true, at::kChar);
    Graph& g = q.m.model.graph;
    const int per_channel = q.m.weight("x_scale_c", at::full({8}, 0.05, at::kFloat));
    g.nodes[size_t(q.dq_x)].inputs[1] = per_channel;
    EXPECT_TRUE(qdq_plan(g, q.m.model).groups.empty());
  }
  {  // a weight that is not a constant
    QdqModel q = conv_model(true, at::kChar);
    Graph& g = q.m.model.graph;
    const int w_in = set_dtype(q.m, q.m.input("w_in", {6, 8, 3, 3}, DType::Int8), DType::Int8);
    g.nodes[size_t(q.dq_w)].inputs[0] = w_in;
    EXPECT_TRUE(qdq_plan(g, q.m.model).groups.empty());
  }
  {  // per-channel weight scales along the wrong axis
    QdqModel q = conv_model(true, at::kChar);
    q.m.model.graph.nodes[size_t(q.dq_w)].attributes["axis"] = int64_t(1);
    EXPECT_TRUE(qdq_plan(q.m.model.graph, q.m.model).groups.empty());
  }
  {  // a float16 result
    QdqModel q = conv_model(true, at::kChar);
    set_dtype(q.m, q.y, DType::Float16);
    EXPECT_TRUE(qdq_plan(q.m.model.graph, q.m.model).groups.empty());
  }
}

// a (4 x 16, u8) -> DequantizeLinear -> MatMul / Gemm <- DequantizeLinear <- b_q.
TEST(QdqFusion, FusedMatMulAndGemmEqualTheFloatProductOfTheDequantizedOperands) {
  if (!int8_kernels_available()) GTEST_SKIP() << "no oneDNN in this build: nothing is fused";
  const at::Tensor a_q = random_8bit({4, 16}, at::kByte, 21);
  const at::Tensor a_scale = at::full({}, 0.1, at::kFloat), a_zp = at::full({}, 100, at::kByte);
  const at::Tensor b_q = random_8bit({16, 6}, at::kByte, 22);  // u8 weights, asymmetric zero points
  const at::Tensor b_scale = at::linspace(0.02, 0.03, 6, at::kFloat), b_zp = random_8bit({6}, at::kByte, 23);
  const at::Tensor c = at::linspace(-1, 1, 6, at::kFloat);
  const at::Tensor expected = at::matmul(dequantized(a_q, a_scale, a_zp, 1), dequantized(b_q, b_scale, b_zp, 1));
  for (const bool gemm : {false, true}) {
    SCOPED_TRACE(gemm ? "Gemm" : "MatMul");
    IrModel m;
    const int a = m.input("a_q", {4, 16}, DType::UInt8);
    const int sa = m.weight("a_scale", a_scale), za = m.weight("a_zp", a_zp);
    // Gemm with transB stores the weight N x K, its scale along N (axis 0).
    const int b = m.weight("b_q", gemm ? b_q.t().contiguous() : b_q);
    const int sb = m.weight("b_scale", b_scale), zb = m.weight("b_zp", b_zp);
    const int af = m.node("DequantizeLinear", {a, sa, za})[0];
    const int bf = m.node("DequantizeLinear", {b, sb, zb}, 1, {{"axis", int64_t(gemm ? 0 : 1)}})[0];
    const int y = gemm ? m.node("Gemm", {af, bf, m.weight("c", c)}, 1,
                                {{"transB", int64_t(1)}, {"alpha", 0.5}, {"beta", 2.0}})[0]
                       : m.node("MatMul", {af, bf})[0];
    m.output(y);
    std::vector<std::string> notices;
    const at::Tensor fused = run_one(m.model, a_q, true, &notices);
    // The QDQ notice, and on a CPU without VNNI the int8 kernels' exactness note.
    ASSERT_EQ(notices.size(), int8_kernels_exact_for_any_weights() ? 1u : 2u);
    EXPECT_NE(notices.back().find(gemm ? "1 Gemm" : "1 MatMul"), std::string::npos) << notices.back();
    if (!int8_kernels_exact_for_any_weights()) {
      EXPECT_NE(notices[0].find("int8: oneDNN"), std::string::npos) << notices[0];
    }
    expect_close(fused, gemm ? 0.5 * expected + 2.0 * c.to(at::kDouble) : expected);
  }
}

// QuantizeLinear's one-loop path (per-tensor float32 to uint8 / int8):
// ONNX's saturate(round_half_even(x / scale) + zero_point), element by
// element, on values that include exact halves, values far beyond the range
// and a channels-last input (whose layout the output keeps).
TEST(QdqFusion, QuantizeLinearRoundsHalfToEvenSaturatesAndKeepsTheLayout) {
  for (const at::ScalarType type : {at::kByte, at::kChar}) {
    SCOPED_TRACE(type == at::kByte ? "uint8" : "int8");
    const int64_t zp = type == at::kByte ? 128 : -3;
    IrModel m;
    const int x = m.input("x", {2, 3, 4, 5});
    const int y = m.node("QuantizeLinear", {x, m.weight("s", at::full({}, 0.5, at::kFloat)),
                                            m.weight("z", at::full({}, zp, at::kLong).to(type))})[0];
    m.output(y);
    at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(5);
    // Halves of the 0.5 grid (k / 4: x / 0.5 = k / 2), and values up to +-400.
    at::Tensor values = at::randint(-1600, 1600, {2, 3, 4, 5}, gen, at::TensorOptions().dtype(at::kLong)).to(at::kFloat) / 4.0f;
    values = values.contiguous(at::MemoryFormat::ChannelsLast);
    Executor exec(m.model, ExecOptions{});
    const at::Tensor q = exec.run({values})[0];
    ASSERT_EQ(q.scalar_type(), type);
    EXPECT_TRUE(q.is_contiguous(at::MemoryFormat::ChannelsLast));
    const double qmin = type == at::kByte ? 0 : -128, qmax = type == at::kByte ? 255 : 127;
    const at::Tensor v = values.contiguous().to(at::kDouble);
    const at::Tensor qc = q.contiguous().to(at::kDouble);
    for (int64_t i = 0; i < v.numel(); ++i) {
      const double x_i = v.view({-1})[i].item<double>();
      const double expected = std::clamp(std::nearbyint(x_i / 0.5) + double(zp), qmin, qmax);
      ASSERT_EQ(qc.view({-1})[i].item<double>(), expected) << "x = " << x_i;
    }
  }
}

}  // namespace
}  // namespace modelstat::profiler

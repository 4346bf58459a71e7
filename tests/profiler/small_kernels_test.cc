// The direct loops for small fp32 Convs and recurrent steps
// (profiler/ops/direct_kernels.hpp), each class of input against an
// independent reference: ATen's own convolution, LSTM and GRU in double
// precision (different code: im2col/GEMM, ATen's cells), and for GRU's
// linear_before_reset = 0, which ATen has no cell for, ONNX's formula written
// out here in ATen ops. Every case is small enough for the direct path, and
// the Conv cases call it directly too, so the test fails if it stops applying.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "profiler/exec_support.hpp"
#include "profiler/ops/direct_kernels.hpp"
#include "profiler/ops/fp32_matmul.hpp"

namespace modelstat::profiler {
namespace {

using test::Attrs;

at::Tensor randn(std::vector<int64_t> dims, uint64_t seed) {
  at::manual_seed(seed);
  return at::randn(dims, at::TensorOptions().dtype(at::kFloat));
}

void expect_close(const at::Tensor& got, const at::Tensor& want, const std::string& what) {
  ASSERT_TRUE(got.defined()) << what;
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  EXPECT_TRUE(at::allclose(got.to(at::kDouble), want.to(at::kDouble), 1e-4, 1e-5))
      << what << ": max |diff| " << (got.to(at::kDouble) - want.to(at::kDouble)).abs().max().item<double>();
}

struct ConvCase {
  std::string name;
  std::vector<int64_t> x, w;  // N C spatial..., O C/group kernel...
  int64_t group;
  std::vector<int64_t> strides, dilations, pads;  // pads: begins then ends
  bool bias;
};

// ATen's convolution in double, the asymmetric pads applied first.
at::Tensor reference_conv(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, const ConvCase& c) {
  const size_t n = c.strides.size();
  std::vector<int64_t> pad_nd;  // constant_pad_nd: last dim first, (begin, end) pairs
  for (size_t i = n; i-- > 0;) pad_nd.insert(pad_nd.end(), {c.pads[i], c.pads[i + n]});
  const at::Tensor xp = at::constant_pad_nd(x.to(at::kDouble), pad_nd, 0.0);
  return at::convolution(xp, w.to(at::kDouble), b.defined() ? b.to(at::kDouble) : at::Tensor(), c.strides,
                         std::vector<int64_t>(n, 0), c.dilations, false, std::vector<int64_t>(n, 0), c.group);
}

TEST(SmallKernels, DirectConvMatchesAtenInDouble) {
  const std::vector<ConvCase> cases = {
      // Silero's depthwise and pointwise 1-D Convs, at their sizes.
      {"1-D depthwise k5 p2", {1, 16, 4}, {16, 1, 5}, 16, {1}, {1}, {2, 2}, true},
      {"1-D pointwise", {1, 16, 8}, {8, 16, 1}, 1, {1}, {1}, {0, 0}, true},
      {"1-D strided, no bias", {2, 6, 11}, {4, 6, 3}, 1, {2}, {1}, {1, 0}, false},
      {"1-D dilated, asymmetric pads", {1, 4, 9}, {4, 2, 3}, 2, {1}, {3}, {0, 4}, true},
      {"2-D grouped, strided, dilated", {1, 6, 7, 6}, {6, 2, 3, 2}, 3, {2, 1}, {1, 2}, {1, 0, 2, 1}, true},
      {"2-D pad wider than the kernel", {1, 2, 3, 3}, {3, 2, 2, 2}, 1, {1, 1}, {1, 1}, {3, 1, 0, 3}, true},
      {"3-D", {1, 2, 3, 4, 4}, {2, 2, 2, 2, 2}, 1, {1, 2, 1}, {1, 1, 2}, {0, 1, 1, 1, 0, 1}, true},
      // Few output positions, above kDirectConvMaxMacs: one dot product per output value.
      {"1-D, 3 positions, 75k MACs (Silero's encoder)", {1, 65, 3}, {128, 65, 3}, 1, {1}, {1}, {1, 1}, true},
      {"1-D strided, 2 positions", {1, 128, 3}, {64, 128, 3}, 1, {2}, {1}, {1, 1}, true},
      {"1-D, stride as long as the kernel (an STFT basis)", {1, 1, 320}, {130, 1, 128}, 1, {64}, {1}, {0, 0}, false},
      {"2-D, batch 2 on a 1x1 output, asymmetric pads", {2, 24, 2, 3}, {40, 24, 3, 3}, 1, {2, 2}, {1, 1}, {1, 0, 0, 1},
       true},
      {"3-D, one position, dilated", {1, 8, 3, 3, 5}, {16, 8, 2, 2, 3}, 1, {1, 1, 1}, {2, 2, 2}, {0, 0, 0, 0, 0, 0},
       true},
  };
  uint64_t seed = 1;
  for (const ConvCase& c : cases) {
    const at::Tensor x = randn(c.x, seed++), w = randn(c.w, seed++);
    const at::Tensor b = c.bias ? randn({c.w[0]}, seed++) : at::Tensor();
    const at::Tensor want = reference_conv(x, w, b, c);
    const size_t n = c.strides.size();
    Window win;
    win.kernel.assign(c.w.begin() + 2, c.w.end());
    win.strides = c.strides;
    win.dilations = c.dilations;
    win.pads_begin.assign(c.pads.begin(), c.pads.begin() + int64_t(n));
    win.pads_end.assign(c.pads.begin() + int64_t(n), c.pads.end());
    const std::optional<at::Tensor> direct = direct_conv(x, w, b, win, c.group);
    ASSERT_TRUE(direct.has_value()) << c.name << ": small enough for the direct loop";
    expect_close(*direct, want, c.name + " (direct_conv)");
    // The Conv node end to end (window from the attributes).
    Attrs attrs{{"group", c.group}, {"strides", c.strides}, {"dilations", c.dilations}, {"pads", c.pads}};
    auto out = test::run_node("", "Conv", 13, {x, w, b}, attrs, 1);
    expect_close(out.at(0), want, c.name + " (Conv node)");
  }
}

TEST(SmallKernels, DirectConvDeclinesLargeOrNonFloatWork) {
  Window win{{3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}};
  // 1 x 64 x 16 x 16 output x 64 x 9: far above the limit: ATen's kernels run it.
  EXPECT_FALSE(direct_conv(randn({1, 64, 16, 16}, 1), randn({64, 64, 3, 3}, 2), {}, win, 1).has_value());
  EXPECT_FALSE(direct_conv(randn({1, 2, 4, 4}, 1).to(at::kDouble), randn({2, 2, 3, 3}, 2).to(at::kDouble), {}, win, 1)
                   .has_value());
  // Channels that do not divide into the groups: ATen reports the malformed shape.
  EXPECT_FALSE(direct_conv(randn({1, 3, 4, 4}, 1), randn({2, 2, 3, 3}, 2), {}, win, 2).has_value());
}

TEST(SmallKernels, NoDirectLoopWhileAutogradRecords) {
  Window win{{3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}};
  const at::Tensor x = randn({1, 2, 4, 4}, 1), w = randn({2, 2, 3, 3}, 2);
  ASSERT_TRUE(direct_conv(x, w, {}, win, 1).has_value()) << "small enough for the loop";
  const at::Tensor trained = w.clone().requires_grad_(true);  // a training step's weight
  {
    at::AutoGradMode on(true);
    EXPECT_FALSE(direct_conv(x, trained, {}, win, 1).has_value()) << "the loop has no backward";
    EXPECT_FALSE(direct_reduce(x.clone().requires_grad_(true), {2, 3}, true, DirectReduce::Mean).has_value());
  }
  at::NoGradGuard off;  // inference: the same weight object, nothing recorded
  EXPECT_TRUE(direct_conv(x, trained, {}, win, 1).has_value());
}

// ONNX's gate blocks (LSTM i, o, f, c; GRU z, r, h) reordered into ATen's
// (LSTM i, f, g, o; GRU r, z, n), along dim 0 of one direction's W, R or bias.
at::Tensor reorder_gates(const at::Tensor& t, const std::vector<int64_t>& order) {
  auto blocks = t.chunk(int64_t(order.size()), 0);
  std::vector<at::Tensor> out;
  for (int64_t k : order) out.push_back(blocks[size_t(k)]);
  return at::cat(out, 0);
}

struct RecurrentCase {
  std::string name, direction;
  int64_t seq, batch, input, hidden;
  bool bias, states;
};

const std::vector<RecurrentCase> kRecurrentCases = {
    {"one step (Silero's)", "forward", 1, 1, 16, 8, true, true},
    {"forward, 3 steps, batch 2, no bias", "forward", 3, 2, 5, 4, false, true},
    {"reverse, no initial state", "reverse", 4, 1, 3, 6, true, false},
    {"bidirectional", "bidirectional", 2, 3, 4, 5, true, true},
};

// ATen's LSTM/GRU (double) on the ONNX weights: outputs Y [seq, dirs, batch, H], Y_h (and Y_c).
std::vector<at::Tensor> aten_recurrent(bool lstm, const RecurrentCase& c, const at::Tensor& x, const at::Tensor& w,
                                       const at::Tensor& r, const at::Tensor& b, const at::Tensor& h0,
                                       const at::Tensor& c0) {
  const int64_t dirs = w.size(0);
  const std::vector<int64_t> order = lstm ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{1, 0, 2};
  std::vector<at::Tensor> params;
  for (int64_t d = 0; d < dirs; ++d) {
    params.push_back(reorder_gates(w[d], order).to(at::kDouble));
    params.push_back(reorder_gates(r[d], order).to(at::kDouble));
    auto parts = b[d].chunk(2, 0);
    params.push_back(reorder_gates(parts[0], order).to(at::kDouble));
    params.push_back(reorder_gates(parts[1], order).to(at::kDouble));
  }
  // ATen runs "reverse" only as the second half of a bidirectional layer: a
  // reverse layer is a forward one over the time-reversed sequence.
  const bool reverse = c.direction == "reverse";
  const at::Tensor xs = (reverse ? x.flip(0) : x).to(at::kDouble);
  const bool bidir = dirs == 2;
  if (lstm) {
    auto [y, h, cell] = at::lstm(xs, {h0.to(at::kDouble), c0.to(at::kDouble)}, params, true, 1, 0.0, false, bidir, false);
    if (reverse) y = y.flip(0);
    return {y.view({c.seq, c.batch, dirs, c.hidden}).transpose(1, 2), h, cell};
  }
  auto [y, h] = at::gru(xs, h0.to(at::kDouble), params, true, 1, 0.0, false, bidir, false);
  if (reverse) y = y.flip(0);
  return {y.view({c.seq, c.batch, dirs, c.hidden}).transpose(1, 2), h};
}

void check_recurrent(bool lstm) {
  uint64_t seed = 100;
  const int64_t gates = lstm ? 4 : 3;
  for (const RecurrentCase& c : kRecurrentCases) {
    const int64_t dirs = c.direction == "bidirectional" ? 2 : 1;
    ASSERT_LE(c.seq * c.batch * gates * c.hidden * (c.input + c.hidden) * dirs, kDirectRecurrentMaxMacs);
    const at::Tensor x = randn({c.seq, c.batch, c.input}, seed++);
    const at::Tensor w = randn({dirs, gates * c.hidden, c.input}, seed++) * 0.5;
    const at::Tensor r = randn({dirs, gates * c.hidden, c.hidden}, seed++) * 0.5;
    const at::Tensor b = c.bias ? randn({dirs, 2 * gates * c.hidden}, seed++) : at::Tensor();
    const at::Tensor h0 = c.states ? randn({dirs, c.batch, c.hidden}, seed++) : at::Tensor();
    const at::Tensor c0 = c.states && lstm ? randn({dirs, c.batch, c.hidden}, seed++) : at::Tensor();
    const at::Tensor zeros = at::zeros({dirs, c.batch, c.hidden});
    const auto want = aten_recurrent(lstm, c, x, w, r, b.defined() ? b : at::zeros({dirs, 2 * gates * c.hidden}),
                                     h0.defined() ? h0 : zeros, c0.defined() ? c0 : zeros);
    Attrs attrs{{"hidden_size", c.hidden}, {"direction", c.direction}};
    if (!lstm) attrs["linear_before_reset"] = int64_t(1);  // ATen's GRU cell
    std::vector<at::Tensor> inputs{x, w, r, b, at::Tensor(), h0};
    if (lstm) inputs.push_back(c0);
    auto out = test::run_node("", lstm ? "LSTM" : "GRU", 14, inputs, attrs, lstm ? 3 : 2);
    ASSERT_EQ(out.size(), want.size()) << c.name;
    for (size_t k = 0; k < want.size(); ++k) expect_close(out[k], want[k], c.name + " output " + std::to_string(k));

    // layout = 1 (batch first): the same values, batch leading.
    attrs["layout"] = int64_t(1);
    std::vector<at::Tensor> bf{x.transpose(0, 1).contiguous(), w, r, b, at::Tensor(),
                               h0.defined() ? h0.transpose(0, 1).contiguous() : h0};
    if (lstm) bf.push_back(c0.defined() ? c0.transpose(0, 1).contiguous() : c0);
    auto out_bf = test::run_node("", lstm ? "LSTM" : "GRU", 14, bf, attrs, lstm ? 3 : 2);
    expect_close(out_bf.at(0), want[0].permute({2, 0, 1, 3}), c.name + " batch-first Y");
    expect_close(out_bf.at(1), want[1].transpose(0, 1), c.name + " batch-first Y_h");
  }
}

TEST(SmallKernels, LstmMatchesAtenLstm) { check_recurrent(true); }
TEST(SmallKernels, GruLinearBeforeResetMatchesAtenGru) { check_recurrent(false); }

// GRU with linear_before_reset = 0 (ONNX's default; no ATen cell computes it):
// operators.md's equations written out in double, one step at a time.
TEST(SmallKernels, GruResetBeforeLinearMatchesOnnxFormula) {
  const int64_t seq = 3, batch = 2, input = 4, hidden = 5;
  const at::Tensor x = randn({seq, batch, input}, 7), w = randn({1, 3 * hidden, input}, 8) * 0.5;
  const at::Tensor r = randn({1, 3 * hidden, hidden}, 9) * 0.5, b = randn({1, 6 * hidden}, 10);
  const at::Tensor h0 = randn({1, batch, hidden}, 11);
  auto wz = w[0].to(at::kDouble).chunk(3, 0), rz = r[0].to(at::kDouble).chunk(3, 0);
  auto bz = b[0].to(at::kDouble).chunk(6, 0);  // Wbz Wbr Wbh Rbz Rbr Rbh
  at::Tensor h = h0[0].to(at::kDouble);
  std::vector<at::Tensor> ys;
  for (int64_t t = 0; t < seq; ++t) {
    const at::Tensor xt = x[t].to(at::kDouble);
    const at::Tensor z = at::sigmoid(at::matmul(xt, wz[0].t()) + at::matmul(h, rz[0].t()) + bz[0] + bz[3]);
    const at::Tensor rr = at::sigmoid(at::matmul(xt, wz[1].t()) + at::matmul(h, rz[1].t()) + bz[1] + bz[4]);
    const at::Tensor n = at::tanh(at::matmul(xt, wz[2].t()) + at::matmul(rr * h, rz[2].t()) + bz[5] + bz[2]);
    h = (1 - z) * n + z * h;
    ys.push_back(h);
  }
  auto out = test::run_node("", "GRU", 14, {x, w, r, b, at::Tensor(), h0}, {{"hidden_size", hidden}}, 2);
  expect_close(out.at(0), at::stack(ys, 0).unsqueeze(1), "Y");
  expect_close(out.at(1), h.unsqueeze(0), "Y_h");
}

// Small Reduce{Sum,Mean,Max,Min} (the direct loop's size) against ATen's
// reductions in double: every axis set of a 3-D input, with and without keepdims.
TEST(SmallKernels, SmallReductionsMatchAtenInDouble) {
  const at::Tensor x = randn({3, 4, 5}, 21);
  const at::Tensor xd = x.to(at::kDouble);
  const std::vector<std::vector<int64_t>> axis_sets = {{0}, {1}, {2}, {0, 1}, {0, 2}, {1, 2}, {0, 1, 2}, {-1}};
  for (const auto& axes : axis_sets) {
    std::vector<int64_t> dims;
    for (int64_t a : axes) dims.push_back(a < 0 ? a + 3 : a);
    for (int64_t keep : {0, 1}) {
      const std::string what = "axes " + std::to_string(axes.size()) + "/" + std::to_string(axes[0]) + " keep " +
                               std::to_string(keep);
      const Attrs attrs{{"axes", axes}, {"keepdims", keep}};
      expect_close(test::run_node("", "ReduceMean", 13, {x}, attrs, 1).at(0), at::mean(xd, dims, keep != 0),
                   "ReduceMean " + what);
      expect_close(test::run_node("", "ReduceMax", 13, {x}, attrs, 1).at(0), at::amax(xd, dims, keep != 0),
                   "ReduceMax " + what);
      expect_close(test::run_node("", "ReduceMin", 13, {x}, attrs, 1).at(0), at::amin(xd, dims, keep != 0),
                   "ReduceMin " + what);
      // ReduceSum takes its axes as an input from opset 13.
      const at::Tensor axes_t = at::tensor(axes, at::TensorOptions().dtype(at::kLong));
      expect_close(test::run_node("", "ReduceSum", 13, {x, axes_t}, {{"keepdims", keep}}, 1).at(0),
                   at::sum(xd, dims, keep != 0), "ReduceSum " + what);
    }
  }
  ASSERT_TRUE(direct_reduce(x, {1}, true, DirectReduce::Mean).has_value()) << "small enough for the direct loop";
  // NaN propagates through Max, as in ATen and ONNX Runtime.
  at::Tensor with_nan = x.clone();
  with_nan[1][2][3] = std::nan("");
  const at::Tensor m = *direct_reduce(with_nan, {2}, false, DirectReduce::Max);
  EXPECT_TRUE(std::isnan(m[1][2].item<float>()));
  EXPECT_FALSE(std::isnan(m[1][1].item<float>()));
}

struct GemmCase {
  std::string name;
  int64_t m, k, n;
  bool trans_b;
  std::vector<int64_t> c;  // empty: no C
  double alpha, beta;
};

// Gemm with a row or a few: the direct loop against the product in double
// (ATen's mm on double tensors: BLAS-free code, another summation order).
TEST(SmallKernels, DirectGemmMatchesDoubleProduct) {
  const std::vector<GemmCase> cases = {
      {"one row, transB, bias [N] (a recurrent step's gates)", 1, 128, 512, true, {512}, 1.0, 1.0},
      {"one row, B as stored, bias [1, N]", 1, 40, 24, false, {1, 24}, 1.0, 1.0},
      {"one row, K not a multiple of 16, no C", 1, 37, 5, true, {}, 1.0, 1.0},
      {"three rows, C per element, alpha and beta", 3, 20, 9, false, {3, 9}, 0.5, -2.0},
      {"four rows, one C value", 4, 64, 16, true, {1}, 1.0, 0.25},
      {"one output column, C [M, 1]", 2, 33, 1, true, {2, 1}, 1.0, 1.0},
  };
  uint64_t seed = 300;
  for (const GemmCase& g : cases) {
    ASSERT_LE(g.m * g.k * g.n, kDirectGemmMaxMacs) << g.name;
    const at::Tensor a = randn({g.m, g.k}, seed++);
    const at::Tensor stored = g.trans_b ? randn({g.n, g.k}, seed++) : randn({g.k, g.n}, seed++);
    const at::Tensor b = g.trans_b ? stored.t() : stored;
    const at::Tensor c = g.c.empty() ? at::Tensor() : randn(g.c, seed++);
    at::Tensor want = at::mm(a.to(at::kDouble), b.to(at::kDouble)) * g.alpha;
    if (c.defined()) want = want + c.to(at::kDouble) * g.beta;
    const std::optional<at::Tensor> direct = direct_gemm(a, b, c, g.alpha, g.beta);
    ASSERT_TRUE(direct.has_value()) << g.name << ": small enough for the direct loop";
    expect_close(*direct, want, g.name + " (direct_gemm)");
    // The Gemm node end to end.
    Attrs attrs{{"transB", int64_t(g.trans_b)}, {"alpha", g.alpha}, {"beta", g.beta}};
    auto out = test::run_node("", "Gemm", 13, {a, stored, c}, attrs, 1);
    expect_close(out.at(0), want, g.name + " (Gemm node)");
  }
}

TEST(SmallKernels, DirectGemmDeclinesManyRowsLargeOrStridedWork) {
  const at::Tensor w = randn({32, 16}, 2);
  EXPECT_FALSE(direct_gemm(randn({kDirectGemmMaxRows + 1, 32}, 1), w, {}, 1.0, 1.0).has_value()) << "a GEMM";
  EXPECT_FALSE(direct_gemm(randn({1, 1024}, 1), randn({1024, 512}, 2), {}, 1.0, 1.0).has_value()) << "over the MACs";
  EXPECT_FALSE(direct_gemm(randn({1, 32}, 1), randn({32, 32}, 2).slice(1, 0, 32, 2), {}, 1.0, 1.0).has_value())
      << "B with strided rows";
  EXPECT_FALSE(direct_gemm(randn({1, 32}, 1).to(at::kDouble), w.to(at::kDouble), {}, 1.0, 1.0).has_value());
  EXPECT_FALSE(direct_gemm(randn({1, 32}, 1), w, randn({2, 16}, 3), 1.0, 1.0).has_value()) << "C of other rows";
}

// A fused MatMul group (Gemm + Relu + residual Add) of one row: the direct
// loop, the post-ops after it, and the kernel says so.
TEST(SmallKernels, MatmulGroupOfOneRowRunsTheDirectLoop) {
  const at::Tensor stored = randn({24, 96}, 11), bias = randn({24}, 12);  // N x K: a transB weight
  const at::Tensor x = randn({1, 96}, 13), residual = randn({1, 24}, 14);
  std::vector<FusedPostOp> ops(2);
  ops[0].kind = FusedPostOp::Kind::Relu;
  ops[1].kind = FusedPostOp::Kind::AddResidual;
  Fp32MatmulKernel kernel(stored.t(), bias, ops, GemmBackend::Auto);
  kernel.prepare(1);
  const at::Tensor y = kernel.run(x, residual);
  const at::Tensor want =
      at::relu(at::mm(x.to(at::kDouble), stored.t().to(at::kDouble)) + bias.to(at::kDouble)) + residual.to(at::kDouble);
  expect_close(y, want, "Gemm + Relu + Add, one row");
  EXPECT_EQ(kernel.implementation(), "direct loop");
  // The backend chosen by the user is kept: no direct loop under --gemm blas.
  Fp32MatmulKernel blas(stored.t(), bias, ops, GemmBackend::Blas);
  expect_close(blas.run(x, residual), want, "the same on BLAS");
  EXPECT_NE(blas.implementation(), "direct loop");
}

// Softmax along a short last axis (a detector's per-anchor scores): the
// direct loop against ATen's softmax in double, directly and through the
// Softmax / LogSoftmax nodes (opset 9's 2-D coercion and opset 13's axis).
TEST(SmallKernels, ShortSoftmaxRowsMatchAtenInDouble) {
  for (int64_t cols : {int64_t(1), int64_t(2), int64_t(5), kDirectSoftmaxMaxAxis}) {
    // 301 rows: the vectorised exp runs over the whole buffer, its tail shorter than a vector.
    const at::Tensor x = randn({2, 301, cols}, 40 + uint64_t(cols)) * 6.0;
    const at::Tensor soft = at::softmax(x.to(at::kDouble), -1), logsoft = at::log_softmax(x.to(at::kDouble), -1);
    const std::string what = std::to_string(cols) + " per row";
    const std::optional<at::Tensor> direct = direct_softmax_last_axis(x, false);
    ASSERT_TRUE(direct.has_value()) << what << ": short enough for the direct loop";
    expect_close(*direct, soft, what + " (softmax)");
    const std::optional<at::Tensor> direct_log = direct_softmax_last_axis(x, true);
    ASSERT_TRUE(direct_log.has_value()) << what;
    expect_close(*direct_log, logsoft, what + " (log-softmax)");
    expect_close(test::run_node("", "Softmax", 9, {x}, {{"axis", int64_t(2)}}, 1).at(0), soft, what + " (Softmax-9)");
    expect_close(test::run_node("", "Softmax", 13, {x}, {}, 1).at(0), soft, what + " (Softmax-13)");
    expect_close(test::run_node("", "LogSoftmax", 13, {x}, {}, 1).at(0), logsoft, what + " (LogSoftmax-13)");
  }
  // A longer axis, or a middle one through the node, is ATen's.
  EXPECT_FALSE(direct_softmax_last_axis(randn({4, kDirectSoftmaxMaxAxis + 1}, 1), false).has_value());
  const at::Tensor x = randn({3, 4, 2}, 2);
  expect_close(test::run_node("", "Softmax", 13, {x}, {{"axis", int64_t(1)}}, 1).at(0),
               at::softmax(x.to(at::kDouble), 1), "Softmax over a middle axis");
}

// LayerNormalization of a small head, against its formula in double:
// y = (x - mean) / sqrt(var + eps) * scale + bias, var the biased variance.
TEST(SmallKernels, SmallLayerNormMatchesFormula) {
  const at::Tensor x = randn({2, 3, 32}, 50) * 3.0 + 1.0;
  for (int64_t axis : {int64_t(-1), int64_t(1)}) {
    const std::vector<int64_t> norm_dims = axis == -1 ? std::vector<int64_t>{2} : std::vector<int64_t>{1, 2};
    const std::vector<int64_t> param_shape = axis == -1 ? std::vector<int64_t>{32} : std::vector<int64_t>{3, 32};
    const at::Tensor scale = randn(param_shape, 51), bias = randn(param_shape, 52);
    const double eps = 1e-3;
    const at::Tensor xd = x.to(at::kDouble);
    const at::Tensor mean = xd.mean(norm_dims, true);
    const at::Tensor var = (xd - mean).pow(2).mean(norm_dims, true);
    const at::Tensor want = (xd - mean) / at::sqrt(var + eps) * scale.to(at::kDouble) + bias.to(at::kDouble);
    const int64_t size = axis == -1 ? 32 : 96;
    const std::string what = "axis " + std::to_string(axis);
    const auto direct = direct_layer_norm(x, size, scale, bias, eps);
    ASSERT_TRUE(direct.has_value()) << what << ": small enough for the direct loop";
    expect_close((*direct)[0], want, what + " (direct_layer_norm)");
    auto out = test::run_node("", "LayerNormalization", 17, {x, scale, bias}, {{"axis", axis}, {"epsilon", eps}}, 3);
    ASSERT_EQ(out.size(), 3u);
    expect_close(out[0], want, what + " Y");
    expect_close(out[1], mean, what + " Mean");
    expect_close(out[2], 1.0 / at::sqrt(var + eps), what + " InvStdDev");
  }
  EXPECT_FALSE(direct_layer_norm(randn({2, kDirectReduceMaxElements}, 3), kDirectReduceMaxElements, {}, {}, 1e-5)
                   .has_value())
      << "over the size limit: ATen's";
}

// PRelu with a slope per channel or one for all, on plain and channels-last
// activations (a Conv group's output): one pass in x's layout, against the
// formula in double on ATen's broadcasting.
TEST(SmallKernels, PreluPerChannelMatchesFormulaInEitherLayout) {
  struct Case {
    std::string name;
    std::vector<int64_t> x, slope;
    bool channels_last;
  };
  const std::vector<Case> cases = {
      {"[C,1,1] slope, NCHW", {2, 8, 5, 6}, {8, 1, 1}, false},
      {"[C,1,1] slope, channels-last", {2, 8, 5, 6}, {8, 1, 1}, true},
      {"[1,C,1,1] slope, channels-last, a large map", {1, 64, 56, 56}, {1, 64, 1, 1}, true},
      {"one slope, channels-last", {1, 3, 4, 4}, {1}, true},
      {"[C] slope on [N, C]", {4, 8}, {8}, false},
      {"[C,1] slope on a 1-D map", {2, 6, 7}, {6, 1}, false},
  };
  uint64_t seed = 70;
  for (const Case& c : cases) {
    at::Tensor x = randn(c.x, seed++);
    if (c.channels_last) x = x.contiguous(at::MemoryFormat::ChannelsLast);
    const at::Tensor slope = randn(c.slope, seed++);
    const at::Tensor xd = x.to(at::kDouble);
    const at::Tensor want = at::where(xd < 0, xd * slope.to(at::kDouble), xd);
    const std::optional<at::Tensor> direct = direct_prelu(x, slope);
    ASSERT_TRUE(direct.has_value()) << c.name << ": the direct pass takes it";
    expect_close(*direct, want, c.name);
    EXPECT_EQ(direct->is_contiguous(at::MemoryFormat::ChannelsLast) && !direct->is_contiguous(), c.channels_last)
        << c.name << ": x's layout kept";
    expect_close(test::run_node("", "PRelu", 9, {x, slope}, {}, 1).at(0), want, c.name + " (PRelu node)");
  }
  // A slope along the last dim of a 3-D X (numpy's broadcast): ATen's.
  const at::Tensor x = randn({2, 3, 4}, 1), slope = randn({4}, 2);
  EXPECT_FALSE(direct_prelu(x, slope).has_value());
  expect_close(test::run_node("", "PRelu", 9, {x, slope}, {}, 1).at(0),
               at::where(x.to(at::kDouble) < 0, x.to(at::kDouble) * slope.to(at::kDouble), x.to(at::kDouble)),
               "slope along the last dim");
}

// Inference BatchNormalization in one pass, on plain and channels-last
// activations of rank 2 to 4, against the formula in double; the node runs
// it, and a training step's forward (autograd recording) does not.
TEST(SmallKernels, BatchNormInferenceMatchesFormulaInEitherLayout) {
  struct Case {
    std::string name;
    std::vector<int64_t> x;
    bool channels_last;
  };
  const std::vector<Case> cases = {
      {"NCHW", {2, 8, 5, 6}, false},
      {"channels-last", {2, 8, 5, 6}, true},
      {"channels-last, a large map", {1, 96, 56, 56}, true},
      {"[N, C]", {4, 24}, false},
      {"[N, C, L]", {2, 6, 7}, false},
  };
  uint64_t seed = 90;
  const double eps = 1e-3;
  for (const Case& c : cases) {
    at::Tensor x = randn(c.x, seed++);
    if (c.channels_last) x = x.contiguous(at::MemoryFormat::ChannelsLast);
    const int64_t ch = c.x[1];
    const at::Tensor scale = randn({ch}, seed++), bias = randn({ch}, seed++), mean = randn({ch}, seed++);
    const at::Tensor var = randn({ch}, seed++).abs() + 0.1;
    std::vector<int64_t> per_channel(c.x.size(), 1);
    per_channel[1] = ch;
    auto shaped = [&](const at::Tensor& t) { return t.to(at::kDouble).reshape(per_channel); };
    const at::Tensor want =
        (x.to(at::kDouble) - shaped(mean)) / at::sqrt(shaped(var) + eps) * shaped(scale) + shaped(bias);
    const std::optional<at::Tensor> direct = direct_batch_norm(x, scale, bias, mean, var, eps);
    ASSERT_TRUE(direct.has_value()) << c.name << ": the direct pass takes it";
    expect_close(*direct, want, c.name);
    EXPECT_EQ(direct->is_contiguous(at::MemoryFormat::ChannelsLast) && !direct->is_contiguous(), c.channels_last)
        << c.name << ": x's layout kept";
    expect_close(test::run_node("", "BatchNormalization", 15, {x, scale, bias, mean, var}, {{"epsilon", eps}}, 1).at(0),
                 want, c.name + " (BatchNormalization node)");
  }
  // Statistics of another length than the channels: ATen's (which reports it).
  const at::Tensor x = randn({2, 4, 3, 3}, 1), five = at::ones({5});
  EXPECT_FALSE(direct_batch_norm(x, five, five, five, five, 1e-5).has_value());
  at::AutoGradMode on(true);
  const at::Tensor trained = x.clone().requires_grad_(true), four = at::ones({4});
  EXPECT_FALSE(direct_batch_norm(trained, four, four, four, four, 1e-5).has_value()) << "autograd records: ATen's";
}

}  // namespace
}  // namespace modelstat::profiler

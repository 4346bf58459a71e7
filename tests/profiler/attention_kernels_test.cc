// The executor's own attention kernels against references computed here in
// double precision: the vectorised softmax over rows (profiler/ops/softmax.hpp)
// at every tail length, threaded, and with NaN and -inf entries; and the
// MatMul of two activations on oneDNN (profiler/ops/activation_matmul.hpp)
// with broadcast batch dims, transposed and permuted operands.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "profiler/ops/activation_matmul.hpp"
#include "profiler/ops/softmax.hpp"

namespace modelstat::profiler {
namespace {

std::vector<double> softmax_double(const float* x, int64_t n) {
  double max = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < n; ++i) max = std::max(max, double(x[i]));
  std::vector<double> y(static_cast<size_t>(n));
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += (y[size_t(i)] = std::exp(double(x[i]) - max));
  for (double& v : y) v /= sum;
  return y;
}

TEST(AttentionKernels, SoftmaxRowsMatchDoubleAtEveryTailAndThreadCount) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-30.f, 30.f);
  const int threads_before = at::get_num_threads();
  // Short rows (every tail of a 16- and an 8-wide vector) and attention's 197; 400 x 197 is split
  // over the threads.
  std::vector<std::pair<int64_t, int64_t>> shapes;
  for (int64_t cols = 1; cols <= 40; ++cols) shapes.push_back({3, cols});
  shapes.push_back({5, 197});
  shapes.push_back({400, 197});
  shapes.push_back({2, 1000});
  for (int threads : {1, 2, 3}) {
    at::set_num_threads(threads);
    for (const auto& [rows, cols] : shapes) {
      std::vector<float> x(size_t(rows * cols)), y(x.size());
      for (float& v : x) v = dist(gen);
      softmax_rows(x.data(), y.data(), rows, cols);
      for (int64_t r = 0; r < rows; ++r) {
        const float* row = x.data() + r * cols;
        const std::vector<double> ref = softmax_double(row, cols);
        const float max = *std::max_element(row, row + cols);
        for (int64_t c = 0; c < cols; ++c)
          // 1e-6 relative, plus the float rounding of exp's argument x - max (half an ulp, 6e-8
          // relative, of a difference up to 60 here) carried into exp's value.
          ASSERT_NEAR(y[size_t(r * cols + c)], ref[size_t(c)],
                      ref[size_t(c)] * (1e-6 + 6e-8 * std::fabs(double(row[c]) - max)) + 1e-37)
              << rows << " x " << cols << ", threads " << threads << ", row " << r << ", col " << c;
      }
    }
  }
  at::set_num_threads(threads_before);
}

TEST(AttentionKernels, SoftmaxRowsInPlaceAndWithMaskedOrBrokenRows) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t cols : {3, 8, 17, 40}) {
    // Row 0: a mask's -inf entries among finite ones (weights ~0, the rest a softmax of the finite
    // ones); row 1: one NaN (the row is NaN, as ATen's); row 2: all -inf (NaN, as ATen's).
    std::vector<float> x(size_t(3 * cols));
    for (int64_t c = 0; c < cols; ++c) {
      x[size_t(c)] = c % 2 ? -inf : float(c) * 0.5f;
      x[size_t(cols + c)] = c == cols - 1 ? nan : 1.f;
      x[size_t(2 * cols + c)] = -inf;
    }
    std::vector<float> finite;
    for (int64_t c = 0; c < cols; c += 2) finite.push_back(x[size_t(c)]);
    const std::vector<double> ref = softmax_double(finite.data(), int64_t(finite.size()));
    softmax_rows(x.data(), x.data(), 3, cols);  // in place
    for (int64_t c = 0; c < cols; ++c) {
      if (c % 2) EXPECT_LE(x[size_t(c)], 1e-37f) << cols << " cols, masked col " << c;
      else EXPECT_NEAR(x[size_t(c)], ref[size_t(c / 2)], 1e-6 * ref[size_t(c / 2)]) << cols << " cols, col " << c;
      EXPECT_TRUE(std::isnan(x[size_t(cols + c)])) << cols << " cols, NaN row, col " << c;
      EXPECT_TRUE(std::isnan(x[size_t(2 * cols + c)])) << cols << " cols, all -inf row, col " << c;
    }
  }
}

// a @ b by loops in double, batch dims broadcast (both given at the output's rank).
at::Tensor matmul_double(const at::Tensor& a, const at::Tensor& b) {
  const at::Tensor ad = a.to(at::kDouble), bd = b.to(at::kDouble);
  const int64_t rank = std::max(a.dim(), b.dim());
  const at::Tensor a4 = ad.reshape([&] {
    std::vector<int64_t> s(size_t(rank - a.dim()), 1);
    for (int64_t d = 0; d < a.dim(); ++d) s.push_back(a.size(d));
    return s;
  }());
  const at::Tensor b4 = bd.reshape([&] {
    std::vector<int64_t> s(size_t(rank - b.dim()), 1);
    for (int64_t d = 0; d < b.dim(); ++d) s.push_back(b.size(d));
    return s;
  }());
  std::vector<int64_t> out_shape;
  for (int64_t d = 0; d + 2 < rank; ++d) out_shape.push_back(std::max(a4.size(d), b4.size(d)));
  const int64_t m = a4.size(-2), k = a4.size(-1), n = b4.size(-1);
  out_shape.push_back(m);
  out_shape.push_back(n);
  at::Tensor out = at::zeros(out_shape, at::TensorOptions().dtype(at::kDouble));
  const at::Tensor ae = a4.expand([&] { auto s = out_shape; s[size_t(rank - 1)] = k; return s; }()).contiguous();
  const at::Tensor be = b4.expand([&] { auto s = out_shape; s[size_t(rank - 2)] = k; return s; }()).contiguous();
  const int64_t batch = out.numel() / (m * n);
  const double* pa = ae.data_ptr<double>();
  const double* pb = be.data_ptr<double>();
  double* po = out.data_ptr<double>();
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t kk = 0; kk < k; ++kk) s += pa[(bi * m + i) * k + kk] * pb[(bi * k + kk) * n + j];
        po[(bi * m + i) * n + j] = s;
      }
  return out;
}

void expect_product(const at::Tensor& a, const at::Tensor& b, const std::string& what) {
  const at::Tensor y = onednn_activation_matmul(a, b);
  if (!activation_matmul_on_onednn_built()) {
    ASSERT_FALSE(y.defined()) << what;
    return;
  }
  ASSERT_TRUE(y.defined()) << what << ": the oneDNN path did not apply";
  const at::Tensor ref = matmul_double(a, b);
  ASSERT_EQ(y.sizes(), ref.sizes()) << what;
  const double err = (y.to(at::kDouble) - ref).abs().max().item<double>();
  EXPECT_LE(err, 1e-4) << what;  // K <= 64 products of values in [-1, 1]: float rounding ~1e-6
}

TEST(AttentionKernels, ActivationMatmulOnOnednnMatchesLoops) {
  at::manual_seed(3);
  auto r = [](std::vector<int64_t> s) { return at::rand(s) * 2 - 1; };
  expect_product(r({2, 3, 5, 7}), r({2, 3, 7, 4}), "4-D, equal batch");
  expect_product(r({1, 12, 19, 64}), r({1, 12, 64, 19}), "attention's Q K^T");
  expect_product(r({1, 3, 5, 7}), r({2, 1, 7, 4}), "batch dims broadcast both ways");
  expect_product(r({4, 5, 7}), r({7, 6}), "3-D by 2-D (a constant-free Linear)");
  expect_product(r({5, 7}), r({2, 3, 7, 6}), "2-D by 4-D");
  expect_product(r({2, 3, 5, 7}), r({2, 3, 4, 7}).transpose(-1, -2), "b a transposed view");
  expect_product(r({2, 5, 3, 7}).permute({0, 2, 1, 3}), r({2, 3, 7, 4}), "a a permuted view");
  expect_product(r({2, 3, 1, 7}), r({2, 3, 7, 1}), "M = N = 1");
  at::Tensor a = r({2, 6, 5, 8});
  expect_product(a.slice(3, 0, 8, 2), r({2, 6, 4, 3}), "a strided in its last dim: copied first");
}

TEST(AttentionKernels, ActivationMatmulLeavesOtherCasesToAten) {
  EXPECT_FALSE(onednn_activation_matmul(at::rand({5, 7}), at::rand({7, 4})).defined());  // a plain GEMM
  EXPECT_FALSE(onednn_activation_matmul(at::rand({2, 5, 7}).to(at::kDouble), at::rand({2, 7, 4}).to(at::kDouble))
                   .defined());
  EXPECT_FALSE(onednn_activation_matmul(at::rand({7}), at::rand({2, 7, 4})).defined());  // a vector operand
  const at::Tensor w = at::rand({2, 7, 4}).requires_grad_(true);
  EXPECT_FALSE(onednn_activation_matmul(at::rand({2, 5, 7}), w).defined());  // autograd records it
  // activation_matmul still answers every case, through ATen.
  const at::Tensor v = at::rand({7}), m = at::rand({2, 7, 4});
  EXPECT_TRUE(at::allclose(activation_matmul(v, m), at::matmul(v, m)));
}

}  // namespace
}  // namespace modelstat::profiler

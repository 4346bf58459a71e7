// The oneDNN int8 convolution and matmul (profiler/ops/int8_kernels.hpp)
// against the integer arithmetic written out here in double precision:
// (x - x_zero_point) and (w - w_zero_point) as doubles, padded with 0 after
// the subtraction (ONNX pads with the zero point), convolved by ATen's double
// kernel. Every product of 8-bit values and every sum below 2^53 is exact in
// double, so the int32 results must be equal, element for element. Covers
// the forms quantized models bring: u8 weights with an asymmetric zero point
// (ONNX Runtime's dynamic quantisation), s8 symmetric weights, per-channel
// zero points, s8 activations, groups and depthwise, strides, dilations,
// asymmetric pads, 1-D to 3-D; each with full-range and 7-bit weights (a CPU
// without VNNI runs the former as two products).
#include <gtest/gtest.h>

#include "profiler/ops/int8_kernels.hpp"

namespace modelstat::profiler {
namespace {

at::Tensor random_8bit(const std::vector<int64_t>& dims, at::ScalarType type, at::Generator& gen) {
  const int64_t lo = type == at::kByte ? 0 : -128, hi = type == at::kByte ? 256 : 128;
  return at::randint(lo, hi, dims, gen, at::TensorOptions().dtype(at::kLong)).to(type);
}

// Weights as the kernels store them shifted (w - 128 for u8, w for s8):
// full range, or within [-64, 64] (`seven_bit`: ONNX Runtime's reduce_range),
// which every CPU's int8 kernels accumulate exactly in one product (without
// VNNI the full range runs as two 7-bit halves: int8_kernels.hpp,
// "Exactness"). Both must be exact.
at::Tensor random_weight(const std::vector<int64_t>& dims, at::ScalarType type, at::Generator& gen, bool seven_bit) {
  if (!seven_bit) return random_8bit(dims, type, gen);
  const int64_t lo = type == at::kByte ? 64 : -64;
  return at::randint(lo, lo + 129, dims, gen, at::TensorOptions().dtype(at::kLong)).to(type);
}

at::Tensor minus_zero_point(const at::Tensor& q, const at::Tensor& zp, int64_t channel_axis) {
  at::Tensor v = q.to(at::kDouble);
  if (!zp.defined()) return v;
  at::Tensor z = zp.to(at::kDouble);
  if (z.numel() > 1) {
    std::vector<int64_t> shape(size_t(q.dim()), 1);
    shape[size_t(channel_axis)] = z.numel();
    z = z.reshape(shape);
  }
  return v - z;
}

struct ConvCase {
  const char* name;
  std::vector<int64_t> x_dims;  // N, C, spatial...
  int64_t cout, group;
  std::vector<int64_t> kernel, strides, dilations, pads_begin, pads_end;
  at::ScalarType x_type, w_type;
  int w_zero_points;  // 0: none, 1: one, 2: per output channel
};

void PrintTo(const ConvCase& c, std::ostream* os) { *os << c.name; }

at::Tensor reference_conv(const at::Tensor& x, const at::Tensor& zx, const at::Tensor& w, const at::Tensor& zw,
                          const ConvCase& c) {
  at::Tensor xd = minus_zero_point(x, zx, 1);
  std::vector<int64_t> pad;  // constant_pad_nd: last dim first, (begin, end)
  for (size_t d = c.kernel.size(); d-- > 0;) {
    pad.push_back(c.pads_begin[d]);
    pad.push_back(c.pads_end[d]);
  }
  xd = at::constant_pad_nd(xd, pad, 0.0);
  const at::Tensor wd = minus_zero_point(w, zw, 0);
  const std::vector<int64_t> zeros(c.kernel.size(), 0);
  return at::convolution(xd, wd, {}, c.strides, zeros, c.dilations, false, zeros, c.group);
}

class Int8Conv : public ::testing::TestWithParam<ConvCase> {};

TEST_P(Int8Conv, EqualsExactIntegerArithmetic) {
  const ConvCase& c = GetParam();
  for (const bool seven_bit : {false, true}) {
    const std::string what = std::string(c.name) + (seven_bit ? " (7-bit weights)" : " (full-range weights)");
    at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(7);
    const at::Tensor x = random_8bit(c.x_dims, c.x_type, gen);
    std::vector<int64_t> w_dims{c.cout, c.x_dims[1] / c.group};
    w_dims.insert(w_dims.end(), c.kernel.begin(), c.kernel.end());
    const at::Tensor w = random_weight(w_dims, c.w_type, gen, seven_bit);
    const at::Tensor zx = random_8bit({}, c.x_type, gen);
    at::Tensor zw;
    if (c.w_zero_points == 1) zw = random_8bit({}, c.w_type, gen);
    if (c.w_zero_points == 2) zw = random_8bit({c.cout}, c.w_type, gen);
    const Window win{c.kernel, c.strides, c.dilations, c.pads_begin, c.pads_end};

    const auto acc = int8_conv(x, zx, w, zw, win, c.group, true);
    if (!int8_kernels_available()) {
      EXPECT_FALSE(acc.has_value()) << "a build without oneDNN takes the double path";
      continue;
    }
    if (c.x_type == at::kChar && !int8_kernels_exact_for_any_weights()) {
      EXPECT_FALSE(acc.has_value()) << what << ": s8 activations without VNNI, the exact double path";
      continue;
    }
    ASSERT_TRUE(acc.has_value()) << what;
    const at::Tensor expected = reference_conv(x, zx, w, zw, c);
    ASSERT_EQ(acc->sizes(), expected.sizes()) << what;
    EXPECT_EQ(acc->scalar_type(), at::kInt);
    const int64_t differing = acc->to(at::kDouble).ne(expected).sum().item<int64_t>();
    EXPECT_EQ(differing, 0) << what << ": max |diff| "
                            << (acc->to(at::kDouble) - expected).abs().max().item<double>();
    // A second call reuses the cached plan and must give the same.
    const auto again = int8_conv(x, zx, w, zw, win, c.group, true);
    ASSERT_TRUE(again.has_value());
    EXPECT_TRUE(at::equal(*again, *acc)) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Forms, Int8Conv,
    ::testing::Values(
        ConvCase{"u8w_asym_zp", {1, 3, 11, 13}, 8, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, at::kByte, at::kByte, 1},
        ConvCase{"u8w_no_zp", {2, 4, 9, 9}, 6, 1, {3, 3}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, at::kByte, at::kByte, 0},
        ConvCase{"s8w_symmetric", {1, 16, 10, 10}, 32, 1, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, at::kByte,
                 at::kChar, 0},
        ConvCase{"s8w_per_channel_zp", {1, 8, 7, 9}, 4, 1, {3, 1}, {1, 2}, {1, 1}, {1, 0}, {2, 1}, at::kByte,
                 at::kChar, 2},
        ConvCase{"s8x", {1, 5, 8, 8}, 7, 1, {3, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2}, at::kChar, at::kChar, 1},
        ConvCase{"grouped_u8w", {1, 8, 9, 9}, 12, 4, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, at::kByte, at::kByte, 2},
        ConvCase{"depthwise", {1, 16, 12, 12}, 16, 16, {3, 3}, {2, 2}, {1, 1}, {0, 1}, {1, 0}, at::kByte, at::kByte,
                 1},
        ConvCase{"dilated_asym_pads", {1, 6, 15, 15}, 10, 1, {3, 3}, {1, 1}, {3, 2}, {0, 3}, {4, 1}, at::kByte,
                 at::kByte, 1},
        ConvCase{"deep_k", {1, 256, 6, 6}, 64, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, at::kByte, at::kByte, 1},
        // Cin x kernel = 73,728: window sums could pass 2^24, so the correction
        // takes the int8 convolution with a weight of ones instead of float.
        ConvCase{"huge_window_ones_conv", {1, 8192, 3, 3}, 4, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, at::kByte,
                 at::kByte, 1},
        ConvCase{"conv1d", {2, 6, 17}, 5, 1, {5}, {2}, {1}, {2}, {1}, at::kByte, at::kByte, 1},
        ConvCase{"conv3d", {1, 4, 5, 6, 7}, 3, 1, {3, 3, 3}, {1, 1, 2}, {1, 1, 1}, {1, 0, 1}, {1, 1, 0}, at::kByte,
                 at::kChar, 0}),
    [](const ::testing::TestParamInfo<ConvCase>& info) { return std::string(info.param.name); });

struct MatMulCase {
  const char* name;
  std::vector<int64_t> a_dims;  // ..., M, K (or K)
  int64_t n;
  at::ScalarType a_type, b_type;
  int b_zero_points;  // 0: none, 1: one, 2: per column
};

void PrintTo(const MatMulCase& c, std::ostream* os) { *os << c.name; }

class Int8MatMul : public ::testing::TestWithParam<MatMulCase> {};

TEST_P(Int8MatMul, EqualsExactIntegerArithmetic) {
  const MatMulCase& c = GetParam();
  for (const bool seven_bit : {false, true}) {
    const std::string what = std::string(c.name) + (seven_bit ? " (7-bit weights)" : " (full-range weights)");
    at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(11);
    const int64_t k = c.a_dims.back();
    const at::Tensor a = random_8bit(c.a_dims, c.a_type, gen);
    const at::Tensor b = random_weight({k, c.n}, c.b_type, gen, seven_bit);
    const at::Tensor za = random_8bit({}, c.a_type, gen);
    at::Tensor zb;
    if (c.b_zero_points == 1) zb = random_8bit({}, c.b_type, gen);
    if (c.b_zero_points == 2) zb = random_8bit({c.n}, c.b_type, gen);
    const auto acc = int8_matmul(a, za, b, zb, true);
    if (!int8_kernels_available()) {
      EXPECT_FALSE(acc.has_value());
      continue;
    }
    ASSERT_TRUE(acc.has_value()) << what;
    const at::Tensor expected = at::matmul(minus_zero_point(a, za, 0), minus_zero_point(b, zb, 1));
    ASSERT_EQ(acc->sizes(), expected.sizes()) << what;
    EXPECT_EQ(acc->to(at::kDouble).ne(expected).sum().item<int64_t>(), 0) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(Forms, Int8MatMul,
                         ::testing::Values(MatMulCase{"u8b_asym_zp", {5, 7}, 3, at::kByte, at::kByte, 1},
                                           MatMulCase{"batched_a", {2, 3, 5, 64}, 9, at::kByte, at::kChar, 0},
                                           MatMulCase{"per_column_zp", {4, 33}, 17, at::kByte, at::kByte, 2},
                                           MatMulCase{"s8a", {6, 300}, 40, at::kChar, at::kChar, 1},
                                           MatMulCase{"vector_a", {12}, 5, at::kByte, at::kByte, 1}),
                         [](const ::testing::TestParamInfo<MatMulCase>& info) { return std::string(info.param.name); });

// What falls back to the double path rather than computing something else.
TEST(Int8Kernels, FormsOneDnnDoesNotTakeFallBack) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(3);
  const at::Tensor a = random_8bit({4, 5}, at::kByte, gen);
  const at::Tensor per_row_zp = random_8bit({4}, at::kByte, gen);
  const at::Tensor b = random_8bit({5, 3}, at::kByte, gen);
  EXPECT_FALSE(int8_matmul(a, per_row_zp, b, {}, true).has_value()) << "per-row activation zero point";
  const at::Tensor b3 = random_8bit({2, 5, 3}, at::kByte, gen);
  EXPECT_FALSE(int8_matmul(a, {}, b3, {}, true).has_value()) << "batched right-hand operand";
  EXPECT_FALSE(int8_matmul(a.to(at::kInt), {}, b, {}, true).has_value()) << "int32 data";
}

}  // namespace
}  // namespace modelstat::profiler

// The vectorised SiLU (profiler/ops/silu.hpp) against x / (1 + exp(-x))
// computed in double precision, on whichever loop this CPU runs (AVX-512,
// AVX2 or scalar), at every tail length and on the threaded path.
#include "profiler/ops/silu.hpp"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace modelstat::profiler {
namespace {

double silu_double(double x) {
  return x / (1.0 + std::exp(-x));
}

// Inputs across the float range an activation takes, and its edges.
std::vector<float> silu_inputs() {
  std::vector<float> v;
  for (int i = -20000; i <= 20000; ++i) v.push_back(float(i) * 0.005f);  // [-100, 100]
  for (int i = -3000; i <= 3000; ++i) v.push_back(float(i) * 1e-4f);     // dense around 0
  for (float x : {0.f, -0.f, 1e-30f, -1e-30f, 1e-8f, -1e-8f, 15.9f, -15.9f, 86.9f, -86.9f, 87.f, -87.f})
    v.push_back(x);
  return v;
}

void expect_silu(const std::vector<float>& in, const std::vector<float>& out, const std::string& what) {
  ASSERT_EQ(in.size(), out.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const double ref = silu_double(in[i]);
    const double err = std::fabs(double(out[i]) - ref);
    if (in[i] >= -87.f) {
      // 4e-7 relative (two float roundings and the polynomial's 1e-7), or 1e-37 absolute where
      // the value itself is that small.
      EXPECT_LE(err, std::max(4e-7 * std::fabs(ref), 1e-37))
          << what << ": x = " << in[i] << " gives " << out[i];
    } else {
      // Clamped: x / (1 + e^87), where the exact value is smaller still.
      EXPECT_LE(std::fabs(out[i]), std::fabs(in[i]) * 2e-38) << what << ": x = " << in[i];
    }
  }
}

TEST(SiluKernel, MatchesTheDoubleFormulaOnThisCpusLoop) {
  const std::vector<float> in = silu_inputs();  // 46k values: split in shares from 2 threads on
  const int threads_before = at::get_num_threads();
  for (int threads : {1, 2, 3}) {
    at::set_num_threads(threads);
    std::vector<float> out = in;
    silu_inplace(out.data(), int64_t(out.size()));
    expect_silu(in, out, std::string("loop ") + silu_isa() + ", threads " + std::to_string(threads));
  }
  at::set_num_threads(threads_before);
  const std::string isa = silu_isa();
  EXPECT_TRUE(isa == "avx512" || isa == "avx2" || isa == "scalar") << isa;
}

TEST(SiluKernel, EveryTailLengthAndOffsetIsComputedAndNothingBeyondIsWritten) {
  const std::vector<float> base = silu_inputs();
  for (int64_t n = 0; n <= 67; ++n) {
    for (int64_t offset : {0, 1, 3}) {
      std::vector<float> buf(base.begin() + 1000, base.begin() + 1000 + n + offset + 8);
      const std::vector<float> before = buf;
      silu_inplace(buf.data() + offset, n);
      for (int64_t i = 0; i < offset; ++i) EXPECT_EQ(buf[i], before[i]) << "n " << n << " offset " << offset;
      for (int64_t i = offset + n; i < int64_t(buf.size()); ++i)
        EXPECT_EQ(buf[i], before[i]) << "n " << n << " offset " << offset << ": wrote past the end";
      expect_silu(std::vector<float>(before.begin() + offset, before.begin() + offset + n),
                  std::vector<float>(buf.begin() + offset, buf.begin() + offset + n),
                  "n " + std::to_string(n));
    }
  }
}

TEST(SiluKernel, NanStaysNanAndLargeInputsKeepTheirLimits) {
  std::vector<float> v(37, std::numeric_limits<float>::quiet_NaN());  // vector body and tail
  v[5] = 1e30f;
  v[36] = 1e30f;
  silu_inplace(v.data(), int64_t(v.size()));
  for (size_t i = 0; i < v.size(); ++i) {
    if (i == 5 || i == 36)
      EXPECT_EQ(v[i], 1e30f) << i;  // silu(x) = x for large x
    else
      EXPECT_TRUE(std::isnan(v[i])) << i << ": " << v[i];
  }
}

TEST(SiluKernel, TensorFormRunsInPlaceOnDenseFloatAndFallsBackOtherwise) {
  const at::Tensor x = at::linspace(-12.0, 12.0, 2 * 5 * 7 * 3, at::kFloat).reshape({2, 5, 7, 3});
  const at::Tensor expected = x.to(at::kDouble) / (1.0 + at::exp(-x.to(at::kDouble)));

  at::Tensor cl = x.contiguous(at::MemoryFormat::ChannelsLast);
  const void* data = cl.data_ptr();
  at::Tensor y = silu_in_place(cl);
  EXPECT_EQ(y.data_ptr(), data) << "a channels-last float tensor is rewritten in place";
  EXPECT_LE((y.to(at::kDouble) - expected).abs().max().item<double>(), 1e-5);

  const at::Tensor strided = x.transpose(1, 3);  // neither contiguous nor channels-last
  const at::Tensor z = silu_in_place(strided);
  EXPECT_NE(z.data_ptr(), strided.data_ptr()) << "a strided view is not written in place";
  EXPECT_LE((z.to(at::kDouble) - expected.transpose(1, 3)).abs().max().item<double>(), 1e-5);

  const at::Tensor d = silu_in_place(x.to(at::kDouble));
  EXPECT_LE((d - expected).abs().max().item<double>(), 1e-12) << "double: ATen's formula";
}

}  // namespace
}  // namespace modelstat::profiler

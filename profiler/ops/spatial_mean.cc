#include "profiler/ops/spatial_mean.hpp"

#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <vector>

namespace modelstat::profiler {

namespace {

// About this many elements per task before the work is split further.
constexpr int64_t kElementsPerTask = 16384;
// Float partial sums run over blocks of this many positions, then in double.
constexpr int64_t kGapBlockRows = 256;

}  // namespace

bool spatial_mean_applies(const at::Tensor& x) {
  return !(at::GradMode::is_enabled() && x.requires_grad()) && x.device().is_cpu() &&
         x.scalar_type() == at::kFloat && x.dim() >= 3 && x.numel() > 0 &&
         (x.is_contiguous() || (x.dim() == 4 && x.is_contiguous(at::MemoryFormat::ChannelsLast)));
}

at::Tensor spatial_mean(const at::Tensor& x) {
  const int64_t n = x.size(0), c = x.size(1), plane = x.numel() / (n * c);
  std::vector<int64_t> out_dims(size_t(x.dim()), 1);
  out_dims[0] = n;
  out_dims[1] = c;
  at::Tensor y = at::empty(out_dims, x.options().memory_format(at::MemoryFormat::Contiguous));
  const float* in = x.data_ptr<float>();
  float* out = y.data_ptr<float>();
  const double inv = 1.0 / double(plane);
  if (x.is_contiguous()) {  // NCHW: each (n, c) plane is contiguous
    at::parallel_for(0, n * c, std::max<int64_t>(1, kElementsPerTask / plane), [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const float* v = in + p * plane;
        double total = 0;
        for (int64_t b = 0; b < plane; b += kGapBlockRows) {
          float part = 0;
          for (int64_t i = b; i < std::min(plane, b + kGapBlockRows); ++i) part += v[i];
          total += part;
        }
        out[p] = float(total * inv);
      }
    });
    return y;
  }
  // NHWC: sum over rows of c channels each; threads take channel ranges (multiples of 16).
  const int64_t grain_channels = std::max<int64_t>(16, (kElementsPerTask / plane + 15) / 16 * 16);
  for (int64_t batch = 0; batch < n; ++batch) {
    const float* base = in + batch * plane * c;
    at::parallel_for(0, c, grain_channels, [&](int64_t c0, int64_t c1) {
      std::vector<double> total(size_t(c1 - c0), 0.0);
      std::vector<float> part(size_t(c1 - c0));
      for (int64_t b = 0; b < plane; b += kGapBlockRows) {
        std::fill(part.begin(), part.end(), 0.f);
        for (int64_t r = b; r < std::min(plane, b + kGapBlockRows); ++r) {
          const float* row = base + r * c + c0;
          for (int64_t k = 0; k < c1 - c0; ++k) part[size_t(k)] += row[k];
        }
        for (int64_t k = 0; k < c1 - c0; ++k) total[size_t(k)] += part[size_t(k)];
      }
      for (int64_t k = 0; k < c1 - c0; ++k) out[batch * c + c0 + k] = float(total[size_t(k)] * inv);
    });
  }
  return y;
}

}  // namespace modelstat::profiler

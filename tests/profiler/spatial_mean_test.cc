// profiler/ops/spatial_mean.hpp's spatial mean against a mean computed here in
// double precision from the logical N x C x H x W index (so the layout cannot
// hide a wrong offset): channels-last and contiguous, batch 1 to 3, planes
// smaller and larger than a task's share, channel counts that are and are not
// multiples of 16, at 1, 2 and 3 threads.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "profiler/ops/spatial_mean.hpp"

namespace modelstat::profiler {
namespace {

struct Shape {
  int64_t n, c, h, w;
};

const std::vector<Shape> kShapes = {{1, 16, 7, 7}, {1, 37, 5, 3}, {2, 96, 14, 14}, {1, 1280, 7, 7},
                                    {3, 5, 1, 1},  {1, 144, 56, 56}, {2, 32, 112, 112}, {1, 3, 17, 19}};

at::Tensor make(const Shape& s, bool channels_last, int seed) {
  at::manual_seed(seed);
  at::Tensor x = at::randn({s.n, s.c, s.h, s.w});
  return channels_last ? x.contiguous(at::MemoryFormat::ChannelsLast) : x;
}

// x[n][c][h][w] read through the tensor's own strides.
double at4(const at::Tensor& x, int64_t n, int64_t c, int64_t h, int64_t w) {
  const auto st = x.strides();
  return double(x.data_ptr<float>()[n * st[0] + c * st[1] + h * st[2] + w * st[3]]);
}

TEST(SpatialMean, MatchesDoubleInBothLayoutsAndThreadCounts) {
  const int threads_before = at::get_num_threads();
  for (int threads : {1, 2, 3})
    for (bool cl : {true, false})
      for (const Shape& s : kShapes) {
        at::set_num_threads(threads);
        const at::Tensor x = make(s, cl, 11);
        ASSERT_TRUE(spatial_mean_applies(x));
        const at::Tensor y = spatial_mean(x);
        ASSERT_EQ(y.sizes(), (std::vector<int64_t>{s.n, s.c, 1, 1}));
        const float* yp = y.contiguous().data_ptr<float>();
        for (int64_t n = 0; n < s.n; ++n)
          for (int64_t c = 0; c < s.c; ++c) {
            double sum = 0;
            for (int64_t h = 0; h < s.h; ++h)
              for (int64_t w = 0; w < s.w; ++w) sum += at4(x, n, c, h, w);
            const double ref = sum / double(s.h * s.w);
            ASSERT_NEAR(yp[n * s.c + c], ref, 1e-5) << s.c << " ch, cl " << cl << ", threads " << threads;
          }
      }
  at::set_num_threads(threads_before);
}

}  // namespace
}  // namespace modelstat::profiler

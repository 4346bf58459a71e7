// The spatial mean of a dense fp32 activation, laid out channels-last (NHWC,
// as the executor's Conv groups leave activations) or contiguous (NCHW), as a
// plain loop: GlobalAveragePool, and ReduceMean over every spatial axis
// (torchvision's `x.mean([2, 3])` before a classifier). Inside a model ATen's
// mean costs far more than the same call repeated in a loop: on mnasnet1_0's
// 1280 x 7 x 7 the executor's ATen mean took ~100 us, a second call on the
// same tensor right after it 11-18 us, and a loop of ATen means on one tensor
// outside a model 6 us (bench/RESULTS.md, "Spatial means in the executor").
#pragma once

#include <ATen/ATen.h>

namespace modelstat::profiler {

// Whether x takes spatial_mean: a CPU float tensor of rank >= 3,
// contiguous or (rank 4) channels-last, not recorded by autograd (the loop
// has no backward).
bool spatial_mean_applies(const at::Tensor& x);

// N x C x 1 (x 1 ...): the mean over every axis after the first two. One
// pass split over the intra-op threads by channel range (channels-last) or by
// plane (NCHW); sums in float over blocks of 256 positions, then in double
// (the error of a plain float sum grows with the map's size).
at::Tensor spatial_mean(const at::Tensor& x);

}  // namespace modelstat::profiler

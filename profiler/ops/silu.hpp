// SiLU (x * sigmoid(x), "Swish"), in place, vectorised: the trailing SiLU of a
// Conv or MatMul group runs here after the oneDNN kernel instead of as oneDNN
// 2.6's eltwise_swish post-op, which costs 0.4-0.75 ns per element on
// AVX-512 against 0.25 ns for this pass (bench/RESULTS.md, "SiLU after the
// kernel"). Relative error under 4e-7 against x / (1 + exp(-x)) in double
// precision; NaN stays NaN and +inf +inf (-inf, whose limit is 0, is not
// specified: activations never reach it).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace modelstat::profiler {

// data[i] = data[i] / (1 + exp(-data[i])) for i < n, split over ATen's intra-op
// threads in contiguous shares (one OpenMP region; at::parallel_for's split cost
// efficientnet_b0 6% at 2 threads where this one gains 12%).
void silu_inplace(float* data, int64_t n);

// The same on a tensor: in place when it is a contiguous CPU float tensor
// (returned as is), else ATen's x * sigmoid(x) (a new tensor).
at::Tensor silu_in_place(at::Tensor x);

// Which loop runs: "avx512", "avx2" or "scalar" (the CPU's, at run time).
const char* silu_isa();

}  // namespace modelstat::profiler

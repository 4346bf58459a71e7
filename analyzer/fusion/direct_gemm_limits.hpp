// The largest fp32 Gemm / MatMul-against-a-weight the CPU executor runs as a
// direct row loop (profiler/ops/direct_kernels.hpp, with the default `--gemm
// auto`), shared with `fit`, which prices such a node at the loop's call
// cost instead of a BLAS call's (analyzer/fit/latency.cc). Kept free of ATen:
// the analyzer does not link LibTorch.
#pragma once

#include <cstdint>

namespace modelstat {

// At most kDirectGemmMaxRows rows of A and kDirectGemmMaxMacs
// multiply-accumulates (M x K x N). Measured on the project VM, one thread:
// a 1 x 32 x 32 Gemm cost 3.6 µs through the matmul kernel and a 1 x 128 x
// 512 one 6-8 µs through at::addmm (dispatch, the BLAS call's setup, the
// bias broadcast), where the loop costs what its weights cost to read (~0.05
// ns a MAC from L2 in the AVX2 clone). With more rows a GEMM reuses each
// weight across rows and BLAS / oneDNN win.
constexpr int64_t kDirectGemmMaxRows = 4;
constexpr int64_t kDirectGemmMaxMacs = 262144;

}  // namespace modelstat

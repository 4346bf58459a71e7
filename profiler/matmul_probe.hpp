// The product samples of `modelstat device` (modelstat::ConvSample of the kind
// "matmul"): fp32 MatMuls against a constant weight, as the CPU executor runs
// them, over a grid of synthetic (M, N, K), which `fit` prices a model's
// Gemm / MatMul groups from (docs/FIT.md, "Product samples").
#pragma once

#include <string>
#include <vector>

#include "modelstat/ceilings.hpp"
#include "profiler/ceilings_plan.hpp"
#include "profiler/device.hpp"

namespace modelstat::profiler {

// Times the executor's MatMul group of each grid point: A of M x K rows (M
// 8-2048), a weight of K x N (K and N 64-4096), products up to 2.2 GFLOP;
// `quick`: a coarser grid. Several copies with weights of their own run in
// turn so that a weight comes from memory, as in a model whose weights pass
// the caches (transformers). The executor's kernel is whichever of oneDNN's
// matmul and the BLAS it chose for the shape (profiler/ops/fp32_matmul.hpp).
// CPU only; a point that fails is left out with a note.
std::vector<ConvSample> measure_matmul_samples(Device& device, const CeilingsPlan& plan, bool quick,
                                               std::vector<std::string>& notes);

}  // namespace modelstat::profiler

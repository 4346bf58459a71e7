// fp32 Gemm / MatMul with a constant 2-D weight on the CPU, through whichever
// of oneDNN's matmul and the BLAS that ATen calls is faster for the shape.
//
// Why both: on the project VM (Zen 4, one thread) oneDNN 2.6's brgemm matmul
// with prepacked weights runs the transformer shapes (197 x 768 x 3072 etc.)
// at 105-116 GFLOP/s where OpenBLAS 0.3.21 reaches 93-102, and a batch-1
// classifier head (1 x 2048 x 1000) 3x faster; another machine, another
// library build or another thread count can order them differently. So the
// kernel measures both on each new shape (rows M x K x N), a few interleaved
// runs, when it is first built (at load where the graph binds the shape), and
// keeps the faster. The choice is cached per machine (gemm_choice_cache_path)
// keyed by the CPU, the BLAS core, oneDNN's ISA and the thread count, so later
// runs load it instead of measuring again.
//
// oneDNN's path packs the weights once into the layout its kernel wants (the
// plain copy is then released, as for a Conv group) and applies the bias and
// the group's post-ops (analyzer/fusion/patterns/matmul_group.cc: activations, GELU, a residual Add) on
// the output tile. The BLAS path is at::addmm / at::mm, then the post-ops on
// ATen. Without oneDNN in the build, BLAS always.
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <string>
#include <vector>

#include "modelstat/run_config.hpp"
#include "profiler/ops/post_ops.hpp"

namespace modelstat::profiler {

class Fp32MatmulKernel {
 public:
  // weight: K x N, any strides (a Gemm's transB weight as a transposed view);
  // bias: N values or undefined. At most one AddResidual among post_ops.
  Fp32MatmulKernel(at::Tensor weight, at::Tensor bias, std::vector<FusedPostOp> post_ops, GemmBackend backend);

  // x: [..., K] fp32 (rank >= 2) -> [..., N]; residual: the AddResidual
  // operand, of the output's shape (undefined without one). Other inputs
  // (rank 1, another dtype) run on ATen.
  at::Tensor run(const at::Tensor& x, const at::Tensor& residual) const;

  // Builds (and, for Auto, chooses) the kernel for M rows now.
  void prepare(int64_t rows);

  // "onednn brg:avx512_core", "blas", "blas (oneDNN offers ref:any)" for the
  // last shape built.
  std::string implementation() const;

  int64_t k() const;
  int64_t n() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// What the process decided so far: shapes measured now, shapes taken from
// the cache file, and the count of each backend among the kernels built.
struct GemmChoiceSummary {
  int64_t measured = 0, cached = 0;
  int64_t onednn = 0, blas = 0;
  std::string cache_file;   // empty when no file could be used
  std::string cache_error;  // why not, if so
};
GemmChoiceSummary gemm_choice_summary();

// The choice cache: $MODELSTAT_CACHE_DIR/gemm-choices-v3.tsv, else
// $XDG_CACHE_HOME/modelstat/..., else ~/.cache/modelstat/...;
// MODELSTAT_CACHE_DIR=none keeps choices in memory only. Empty when none.
std::string gemm_choice_cache_path();

// Whether this build has oneDNN's matmul (MODELSTAT_HAVE_DNNL).
bool fp32_matmul_kernels_available();

}  // namespace modelstat::profiler

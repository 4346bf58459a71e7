// The elementwise ops a oneDNN kernel applies to its output tile while it is
// still in registers (analyzer/fusion's groups), with their constants resolved:
// as oneDNN post-ops, and on ATen (the fallback and the reference).
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "analyzer/fusion/fusion_plan.hpp"

#if defined(MODELSTAT_HAVE_DNNL)
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace modelstat::profiler {

// The post-ops on ATen, one pass each, in order; `residual` is the
// AddResidual operand (undefined without one).
at::Tensor apply_post_ops_aten(at::Tensor y, const std::vector<FusedPostOp>& ops, const at::Tensor& residual);

// at::gelu(x, approximate), a channels-last x passed as the contiguous NHWC
// tensor it is in memory: LibTorch 1.13 runs the erf GELU of a contiguous
// float tensor on oneDNN and of any other on its own kernel, 4.6x slower for
// a Conv group's 1x64x112x112 output on the thirteenth session's VM (3.07 ms
// against 0.66 ms for the same tensor NCHW). Elementwise: the values do not
// depend on the layout.
at::Tensor gelu_dense(const at::Tensor& x, const std::string& approximate = "none");

// What a oneDNN kernel applies itself, and whether a trailing SiLU runs after it
// on modelstat's own pass (silu.hpp: oneDNN 2.6's eltwise_swish post-op is
// slower than the kernel's output written once more).
struct OnednnPostOpSplit {
  std::vector<FusedPostOp> in_kernel;
  bool silu_after = false;
};
OnednnPostOpSplit split_trailing_silu(const std::vector<FusedPostOp>& ops);

#if defined(MODELSTAT_HAVE_DNNL)
// The same as oneDNN post-ops. AddResidual is oneDNN's sum post-op: the
// destination must hold the residual when the primitive starts. `residual_index`
// receives the sum's index among the post-ops (-1 without one).
dnnl::post_ops onednn_post_ops(const std::vector<FusedPostOp>& ops, int* residual_index = nullptr);
#endif

}  // namespace modelstat::profiler

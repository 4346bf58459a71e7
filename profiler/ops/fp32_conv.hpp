// oneDNN's fp32 convolution for the executor's Conv groups (analyzer/fusion/patterns/conv_group.cc):
// weights reordered once into the layout the primitive's kernel wants
// (prepacked), activations in channels-last (NHWC) so that consecutive
// convolutions, and the ATen ops between them (pooling, elementwise ops),
// keep one layout without reorders; the group's folded BatchNormalization in
// the weights and bias, its activations and residual Add as post-ops.
//
// The output is an ATen tensor with channels-last strides: the same values,
// for every op that reads it, as a contiguous one; a reshape or an op that
// needs NCHW order reorders at that boundary (ATen's contiguous()).
//
// Built per input shape, at load where the graph binds the shape (prepare),
// else on first use, and cached. Where oneDNN offers only its reference
// implementation for a shape, or this build has no oneDNN, the same
// arithmetic runs on ATen: at::convolution and the post-ops one by one.
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <string>
#include <vector>

#include "analyzer/fusion/fusion_plan.hpp"
#include "profiler/ops/exec_helpers.hpp"
#include "profiler/ops/post_ops.hpp"

namespace modelstat::profiler {

// The activation layout of a convolution's kernel. ChannelsLast: the kernel
// reads and writes NHWC (the executor's activations). Blocked: oneDNN's own
// blocked layout (nChw8c on AVX2, nChw16c on AVX-512), the input reordered
// into it and the output back, inside the kernel's call: on oneDNN 2.6 without
// AVX-512 (no brgemm kernels) a KxK convolution ran 1.08-1.38x faster so than
// on NHWC (bench/RESULTS.md, "A Zen 3 VM without AVX-512 or VNNI"), while 1x1
// ones ran the same. Auto: `MODELSTAT_CONV_LAYOUT` (channels_last, blocked,
// auto) where set, else Blocked for an ungrouped KxK convolution of channels
// in whole 8-lane blocks on a CPU whose oneDNN ISA is below AVX-512 for which
// oneDNN offers a direct (not GEMM) kernel on the blocked layout, else
// ChannelsLast.
enum class ConvLayout { Auto, ChannelsLast, Blocked };

class Fp32ConvKernel {
 public:
  // weight: O x I/group x KH x KW, fp32 (BatchNormalization already folded);
  // bias: O values or undefined. At most one AddResidual among post_ops.
  Fp32ConvKernel(at::Tensor weight, at::Tensor bias, int64_t group, std::vector<FusedPostOp> post_ops,
                 ConvLayout layout = ConvLayout::Auto);

  // The group's output for input x (N x C x H x W, any strides) and the
  // residual (the AddResidual operand, any float dtype; undefined without
  // one). `buffer`: where the output may be written (channels_last_in), for a
  // caller that consumes it before its next call; null: a fresh tensor.
  at::Tensor run(const at::Tensor& x, const Window& window, const at::Tensor& residual,
                 at::Tensor* buffer = nullptr) const;

  // Builds the primitive for this input shape now (at load, when the graph
  // binds the shape): the weights are packed once, and the ONNX-layout copy
  // is released (the packed copy is the only one kept). Later shapes are
  // built on first use.
  void prepare(const std::vector<int64_t>& input_dims, const Window& window);

  // KH, KW.
  std::vector<int64_t> kernel_spatial() const;

  // "jit:avx512_core" etc. for the last shape built ("jit:avx2, blocked" on
  // the blocked layout); "aten" when it fell back.
  std::string implementation() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// A channels-last fp32 tensor of 4-D `dims` on `buffer`'s storage, which is
// allocated afresh (flat) only when undefined or too small: a caller reusing
// one buffer across calls writes to pages already mapped (glibc maps every
// block above 32 MiB anew, run_context.hpp, and faulting its pages in costs
// more than the arithmetic of a cast).
at::Tensor channels_last_in(at::Tensor& buffer, at::IntArrayRef dims);

// `x` channels-last, as the oneDNN convolution reads its input: an image as
// fed (NCHW, 3 channels, fp32) by a loop of its own, anything else by ATen's
// copy (a no-op for a tensor channels-last already).
at::Tensor channels_last_input(const at::Tensor& x);

// Whether this build has oneDNN's fp32 convolution (MODELSTAT_HAVE_DNNL).
bool fp32_conv_kernels_available();

// BatchNormalization folded into a convolution's weight and bias:
//   w' = w * s, b' = (b - mean) * s + beta, s = scale / sqrt(var + eps)
// per output channel (b = 0 when the Conv has none).
void fold_batch_norm(at::Tensor& weight, at::Tensor& bias, const at::Tensor& scale, const at::Tensor& beta,
                     const at::Tensor& mean, const at::Tensor& var, double epsilon);

}  // namespace modelstat::profiler

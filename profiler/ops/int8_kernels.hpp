// Integer convolution and matrix product on real int8 kernels: oneDNN's int8
// convolution and matmul primitives (the oneDNN that Debian's LibTorch links,
// libdnnl 2.x), for ConvInteger, QLinearConv, MatMulInteger and QLinearMatMul
// on the CPU. They return the exact int32 accumulator
//     acc = sum (x - x_zero_point) * (w - w_zero_point)
// which the callers requantise as ONNX says (requantize in exec_helpers).
//
// oneDNN takes u8 or s8 activations with a per-tensor zero point, and s8
// weights without one. ONNX weights may be u8 and carry zero points (ONNX
// Runtime's dynamic quantisation writes u8 weights with an asymmetric zero
// point), so the weights are stored shifted, w8 = w - offset (offset 128 for
// u8, 0 for s8: exact in s8), and the rest is a correction:
//     sum (x - zx)(w - zw) = sum (x - zx) w8 + (offset - zw) * sum (x - zx)
// where the last sum runs over the same window (or row) as the product: for a
// convolution, an int8 convolution with a weight of ones (one output channel
// per group, exact in int32), for a matmul a row sum.
// Padding contributes (zx - zx) = 0 in both, as ONNX pads with the zero point.
//
// Shifted weights, the primitive and its reordered weights are built once per
// constant weight and input shape and reused on later runs (a weight that is
// an activation gets a fresh plan per call), for convolutions and matmuls.
//
// The callers fall back to their exact double-precision path (nullopt) when
// this build has no oneDNN (MODELSTAT_HAVE_DNNL unset), the tensors are not
// on the CPU, or the form is one oneDNN does not take (a per-row activation
// zero point, a batched right-hand matmul operand, rank > 5).
//
// Exactness: with AVX-512 VNNI (or AVX-VNNI, AMX) int8 products accumulate
// in int32 without intermediate saturation. Without VNNI, oneDNN's AVX2 /
// AVX-512 int8 kernels add two adjacent u8 x s8 products in int16 with
// saturation (vpmaddubsw; an s8 activation is shifted to u8 first), which
// 255 * (|w1| + |w2|) <= 32767 keeps exact: shifted weights within [-64, 64]
// (7-bit weights, ONNX Runtime's reduce_range). On such a CPU, weights
// outside that range run as two 7-bit halves, w = low + high with low =
// clamp(w, -64, 64): two exact products, added in int32 (twice the int8
// work; on a Zen 3 VM without VNNI, full-range s8 weights on one product
// gave accumulators off by up to 37571 in 98 of a test's outputs). A
// convolution of s8 activations was wrong there even with 7-bit weights:
// without VNNI it takes the exact double-precision path (nullopt).
// int8_kernel_note() says which applies.
#pragma once

#include <ATen/ATen.h>

#include <optional>
#include <string>

#include "profiler/ops/exec_helpers.hpp"

namespace modelstat::profiler {

// Whether this build has the oneDNN int8 path.
bool int8_kernels_available();
// One line for run contexts: "oneDNN 2.6.3 int8 (avx512_core_vnni)" or why none.
std::string int8_kernel_note();
// Whether oneDNN's int8 kernels accumulate any s8 weights exactly on this CPU
// (VNNI or AMX); without, weights outside [-64, 64] run as two halves.
bool int8_kernels_exact_for_any_weights();

// acc (int32, N x Cout x spatial, channels-last strides) of ConvInteger /
// QLinearConv; x_zero_point, w_zero_point: undefined, one element, or
// (weights) one per output channel. `weight_constant`: the weight is a graph
// constant (its plan is cached). With `output_scale` (one element or one per
// output channel) and weights that need no zero-point correction (s8 with
// zero point 0, the QDQ norm), the kernel dequantizes as it writes: float32
// acc * output_scale + bias (undefined: none), one pass fewer over a result
// that may be large; otherwise the int32 accumulator as above (the caller
// checks the dtype).
std::optional<at::Tensor> int8_conv(const at::Tensor& x, const at::Tensor& x_zero_point, const at::Tensor& w,
                                    const at::Tensor& w_zero_point, const Window& window, int64_t group,
                                    bool weight_constant, const at::Tensor& output_scale = {},
                                    const at::Tensor& bias = {});

// acc (int32, a's batch dims x M x N) of MatMulInteger / QLinearMatMul with a
// 2-D b, K x N (or N x K when `b_transposed`: Gemm's transB); zero points:
// undefined, one element, or (b) one per column. `b_constant`: the plan
// (primitive and reordered weights) is cached per weight and row count.
std::optional<at::Tensor> int8_matmul(const at::Tensor& a, const at::Tensor& a_zero_point, const at::Tensor& b,
                                      const at::Tensor& b_zero_point, bool b_constant, bool b_transposed = false);

}  // namespace modelstat::profiler

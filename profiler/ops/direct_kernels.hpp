// Direct loops for small fp32 work on the CPU, where ATen's fixed cost per
// call is most of the time (issue 32 item 6). Measured on the project VM, one
// thread, LibTorch 1.13: a Conv of a few hundred MACs cost 5-6 µs through
// at::convolution (im2col + GEMM) and 30-50 µs when it is grouped (ATen sends
// every grouped fp32 Conv to oneDNN, which builds a new primitive on each
// call); a one-step LSTM cost 28-46 µs as ~15 ATen calls (GEMMs, the gate
// activations one by one, views). These loops cost what their arithmetic
// costs, with no dispatch, no temporaries beyond the outputs, and no
// primitive to build; above the size limits ATen's BLAS and oneDNN kernels
// are faster and the callers use them.
#pragma once

#include <ATen/ATen.h>

#include <array>
#include <initializer_list>
#include <optional>

#include "analyzer/fusion/direct_gemm_limits.hpp"
#include "profiler/ops/exec_helpers.hpp"

namespace modelstat::profiler {

// Largest Conv (multiply-accumulates, output elements x input channels per
// group x kernel size) the direct loop takes. The loop runs ~1 MAC per cycle
// on short rows (SSE2, the build's baseline ISA): 16384 MACs ~ 5 µs, ATen's
// floor for a Conv call at one thread.
constexpr int64_t kDirectConvMaxMacs = 16384;
// Most passes of the innermost loop (one per output channel, input channel
// of its group, kernel tap and output row) the direct loop takes: each pays
// ~15 ns of bookkeeping around its row (measured: a 1290-pass depthwise Conv
// 19 µs, a 512-pass pointwise one 10 µs, where ATen took 50 and 6). So
// ungrouped Convs up to ~4 µs of it (ATen's floor is ~5 µs), grouped ones up
// to ~30 µs (ATen builds a oneDNN primitive on each call: 30-50 µs).
constexpr int64_t kDirectConvMaxRows = 256;
constexpr int64_t kDirectConvMaxRowsGrouped = 2048;

// An ungrouped Conv with at most this many output positions (batch x output
// spatial size) and at most kDirectGemmMaxMacs MACs runs as one dot product
// per output value (the taps of all input channels against a weight row),
// whatever its size below that: Silero's encoder Convs on 1-3 frames (12-75k
// MACs) cost 7-12 µs through ATen's im2col + GEMM.
constexpr int64_t kDirectConvMaxPositions = 4;

// The Conv y = conv(x, w) + bias (ONNX Conv: N x C x spatial..., 1 to 3
// spatial dims, groups, strides, dilations, asymmetric pads) as a direct
// loop, when x and w are fp32 CPU tensors of a valid shape, the Conv has at
// most kDirectConvMaxMacs MACs and kDirectConvMaxRows(Grouped) passes, or has
// few output positions (kDirectConvMaxPositions);
// nullopt otherwise (the caller runs ATen, which also
// reports a malformed shape).
std::optional<at::Tensor> direct_conv(const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias,
                                      const Window& window, int64_t group);

// Whether the direct loops may stand in for ATen's op on these inputs: not
// while autograd records it (a training step's forward, where an input or a
// weight requires grad): the loops have no backward, and the step's gradients
// and parameter count would miss what ran through them.
bool direct_kernels_allowed(std::initializer_list<const at::Tensor*> inputs);

// Largest Gemm the direct row loop takes: kDirectGemmMaxRows and
// kDirectGemmMaxMacs (analyzer/fusion/direct_gemm_limits.hpp, shared with fit).

// y = alpha * a b + beta * c for fp32 CPU a [M, K] and b [K, N] (b either
// contiguous, or the transpose of a contiguous [N, K]: Gemm's transB), c
// undefined or broadcast to [M, N] from [N], [1, N], one value or [M, N]; a
// direct loop within the limits above, nullopt otherwise (the caller runs
// ATen, which also reports a malformed shape).
std::optional<at::Tensor> direct_gemm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c, double alpha,
                                      double beta);

// Largest recurrent layer (multiply-accumulates over all steps and
// directions: seq x batch x gates*H x (input + H)) the direct loops take:
// 262144 MACs ~ 20-30 µs in the SSE2 dot products, against ATen's ~2 µs per
// call x ~15 calls per step plus its GEMMs.
constexpr int64_t kDirectRecurrentMaxMacs = 262144;

// One direction's weights as ONNX gives them (gate rows in ONNX's order).
struct RecurrentWeights {
  const float* w = nullptr;   // [gates*H, input]
  const float* r = nullptr;   // [gates*H, H]
  const float* wb = nullptr;  // [gates*H] or nullptr
  const float* rb = nullptr;  // [gates*H] or nullptr
};

// One step of ONNX's LSTM with its default activations (f = Sigmoid,
// g = h = Tanh), no peepholes, clip or input_forget, for `batch` rows:
//   gates = x W^T + Wb + h R^T + Rb (i, o, f, c), c' = f*c + i*g(c~), h' = o*h(c')
// x: [batch, input] with row stride x_stride; h, c: [batch, H], row strides
// h_stride / c_stride; h_out, c_out: [batch, H], contiguous rows. h_out may
// not alias h (every gate reads all of h); c_out may be c itself when
// c_stride = H (each element is read before it is written). gates: scratch
// of 4H floats.
void lstm_step_direct(const RecurrentWeights& p, int64_t batch, int64_t input, int64_t hidden, const float* x,
                      int64_t x_stride, const float* h, int64_t h_stride, const float* c, int64_t c_stride,
                      float* h_out, float* c_out, float* gates);

// One step of ONNX's GRU with its default activations (f = Sigmoid, g = Tanh):
//   z = f(x Wz^T + h Rz^T + Wbz + Rbz), r likewise,
//   h~ = g(x Wh^T + (r*h) Rh^T + Rbh + Wbh)       (linear_before_reset = 0)
//   h~ = g(x Wh^T + r*(h Rh^T + Rbh) + Wbh)       (linear_before_reset = 1)
//   h' = (1-z)*h~ + z*h
// Layouts as for lstm_step_direct; gates: scratch of 4H floats.
void gru_step_direct(const RecurrentWeights& p, bool linear_before_reset, int64_t batch, int64_t input,
                     int64_t hidden, const float* x, int64_t x_stride, const float* h, int64_t h_stride,
                     float* h_out, float* gates);

// Largest input (elements) the direct reduction takes: ~1 ns per element,
// against ATen's 4-10 µs floor for a mean (a sum, then a division, each a
// TensorIterator set up for the shape).
constexpr int64_t kDirectReduceMaxElements = 4096;

enum class DirectReduce { Sum, Mean, Max, Min };

// The reduction of fp32 CPU x over `dims` (sorted, distinct, in [0, rank),
// not empty), keeping them as size 1 when `keep`: a direct loop (sums in
// double, then rounded to fp32) when x has at most kDirectReduceMaxElements
// elements, and at least one; nullopt otherwise (the caller runs ATen).
std::optional<at::Tensor> direct_reduce(const at::Tensor& x, const std::vector<int64_t>& dims, bool keep,
                                        DirectReduce kind);

// LayerNormalization of fp32 CPU x over its last `size` elements per row
// (rows x size elements, at most kDirectReduceMaxElements): y = (x - mean) *
// rstd * scale + bias, with mean and rstd = 1 / sqrt(var + eps) of each row
// (sums in double). scale and bias: `size` fp32 values or undefined. Returns
// {y, mean, rstd} (mean and rstd with `rows` elements, shaped by the caller),
// or nullopt (the caller runs ATen's layer_norm, whose fixed cost is 3-4 µs:
// the written-out LayerNorm of a small head, issue 32 item 6).
std::optional<std::array<at::Tensor, 3>> direct_layer_norm(const at::Tensor& x, int64_t size, const at::Tensor& scale,
                                                           const at::Tensor& bias, double eps);

// Longest softmax axis the direct row loop takes. ATen 1.13's last-axis
// softmax runs each row through vector code with a tail, ~65 ns a row
// whatever its length below a vector: ultraface's scores (4420 rows of 2)
// took 297 µs where ONNX Runtime took 65.
constexpr int64_t kDirectSoftmaxMaxAxis = 16;

// Softmax (or LogSoftmax, when `log`) of fp32 CPU x along its last axis, of
// at most kDirectSoftmaxMaxAxis elements: a loop over rows (max, exp, sum in
// double); nullopt otherwise (the caller runs ATen).
std::optional<at::Tensor> direct_softmax_last_axis(const at::Tensor& x, bool log);

// PRelu of fp32 CPU x (rank >= 2; plain or, at rank 4, channels-last) with
// one slope per channel (dim 1; slope shaped [C, 1...] or [1, C, 1...]) or one
// for all: y = x < 0 ? slope * x : x in one pass, in x's layout, split over
// the intra-op threads; nullopt for other slopes (the caller runs ATen).
// ATen's where(x < 0, x * slope, x) made three passes, and on a channels-last
// x broadcast the slope across the layout: mobilefacenet's PRelus took 8.3 ms
// of its 13.5.
std::optional<at::Tensor> direct_prelu(const at::Tensor& x, const at::Tensor& slope);

// Inference BatchNormalization of fp32 CPU x (rank >= 2; plain or, at rank 4,
// channels-last) with fp32 scale, B, mean and var of C values each:
// y = x * a + b per channel, a = scale / sqrt(var + eps), b = B - mean * a
// (a and b in double, then rounded), then max(y, 0) with `relu` (a Relu fused
// into it: fusion pattern batch_norm_relu), in one pass, in x's layout, split over
// the intra-op threads; nullopt otherwise (the caller runs ATen). ATen's
// batch_norm computed a and b with a few tensor ops on every call (~20-30 µs
// each, DenseNet's 62 BatchNormalizations: 5.7 ms at 1 thread, 4.6 at 2).
std::optional<at::Tensor> direct_batch_norm(const at::Tensor& x, const at::Tensor& scale, const at::Tensor& bias,
                                            const at::Tensor& mean, const at::Tensor& var, double eps,
                                            bool relu = false);

}  // namespace modelstat::profiler

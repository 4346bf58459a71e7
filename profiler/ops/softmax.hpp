// Softmax over the last axis of fp32 rows, vectorised (vec_exp.hpp's exp),
// for the attention scores of transformer models: ATen 1.13's CPU softmax
// took 503 µs on ViT-B/16's 12 x 197 x 197 scores at 1 thread where ONNX
// Runtime takes 176 µs (bench/RESULTS.md, "Attention's MatMuls and Softmax").
// Per row: the max, exp(x - max) and its sum, then a scale by 1 / sum; three
// passes over a row that stays in L1. exp's argument is clamped at -87, so an
// entry more than 87 below its row's max gets exp(-87) (1.6e-38) relative
// weight instead of a smaller one; a NaN or an infinity in a row makes the
// row NaN, as ATen's does.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace modelstat::profiler {

// y[r, :] = softmax(x[r, :]) for r < rows, rows of `cols` contiguous floats
// (y may be x). Split over ATen's intra-op threads by whole rows.
void softmax_rows(const float* x, float* y, int64_t rows, int64_t cols);

// x[i] = exp(x[i]) for i < n, vectorised (vec_exp.hpp: the argument clamped
// to [-87, 87]); the direct loop of short softmax rows runs its exps here,
// across rows, where one row is shorter than a vector.
void exp_inplace(float* x, int64_t n);

// Softmax of `x` along its last axis: on softmax_rows when x is a contiguous
// CPU float tensor and autograd does not record it, else ATen's.
at::Tensor softmax_last_axis(const at::Tensor& x);

}  // namespace modelstat::profiler

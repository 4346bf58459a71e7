// MatMul of two activations (attention's Q K^T and P V, any batched product
// whose operands are both computed) on oneDNN's batched matmul.
//
// ATen 1.13 runs a batched float matmul as one OpenBLAS sgemm per batch
// entry. OpenBLAS threads each call with its own pool, beside the OpenMP team
// every other kernel uses: at 2 threads ViT-B/16's 12-head 197 x 64 x 197
// products took 1.41 ms against 0.77 ms at 1 thread, slower on two cores
// than on one (bench/RESULTS.md, "Attention's MatMuls and Softmax").
// oneDNN's matmul takes the whole batch in one call on the OpenMP team.
#pragma once

#include <ATen/ATen.h>

namespace modelstat::profiler {

// a [..., M, K] @ b [..., K, N], the batch dims broadcast as numpy's (and
// ONNX MatMul's) rules say, on oneDNN; an undefined tensor when this path
// does not apply: not two CPU float tensors, an operand of rank < 2, both of
// rank 2 (a plain GEMM stays on ATen), autograd recording, or oneDNN offers
// only its reference kernel for the shape. The caller then runs at::matmul.
at::Tensor onednn_activation_matmul(const at::Tensor& a, const at::Tensor& b);

// Whether this build has oneDNN (MODELSTAT_HAVE_DNNL), so that the path above can apply.
bool activation_matmul_on_onednn_built();

// a @ b on onednn_activation_matmul where it applies, else at::matmul.
at::Tensor activation_matmul(const at::Tensor& a, const at::Tensor& b);

}  // namespace modelstat::profiler

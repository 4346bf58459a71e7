// Contractions: Gemm, MatMul, Einsum, Det, and the integer / quantized
// MatMulInteger and QLinearMatMul.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "profiler/ops/activation_matmul.hpp"
#include "profiler/ops/direct_kernels.hpp"
#include "profiler/ops/exec_helpers.hpp"
#include "profiler/ops/int8_kernels.hpp"

namespace modelstat::profiler {

namespace {

// alpha * a @ b + beta * C (C broadcast), a and b transposed already.
at::Tensor gemm_product(const ExecContext& ctx, const at::Tensor& a, const at::Tensor& b) {
  const Node& node = ctx.node();
  const double alpha = node.attr_float("alpha", 1.0);
  const double beta = node.attr_float("beta", 1.0);
  const at::Tensor c = ctx.has_input(2) && beta != 0.0 ? ctx.input(2) : at::Tensor();
  // A row or a few (a recurrent step's gates, a small head): no BLAS call.
  if (auto y = direct_gemm(a, b, c, alpha, beta)) return *y;
  if (c.defined()) {
    // addmm broadcasts C itself and fuses the scaling into the BLAS call.
    return at::addmm(ctx.input(2).to(a.scalar_type()), a, b, beta, alpha);
  }
  at::Tensor y = at::mm(a, b);
  if (alpha != 1.0) y = y * alpha;
  return y;
}

// Y = alpha * A' * B' + beta * C, with C unidirectionally broadcast to (M, N)
// (before opset 7 only with broadcast=1; C is (M, N) otherwise).
void gemm(ExecContext& ctx) {
  const Node& node = ctx.node();
  at::Tensor a = ctx.input(0), b = ctx.input(1);
  if (a.dim() != 2 || b.dim() != 2) fail_input(ctx, "Gemm needs 2-D A and B");
  if (node.attr_int("transA", 0)) a = a.t();
  if (node.attr_int("transB", 0)) b = b.t();
  if (ctx.opset() < 7 && ctx.has_input(2) && node.attr_int("broadcast", 0) == 0 &&
      ctx.input(2).sizes() != at::IntArrayRef{a.size(0), b.size(1)})
    fail_input(ctx, "C " + c10::str(ctx.input(2).sizes()) + " must be (M, N) = (" + std::to_string(a.size(0)) + ", " +
                        std::to_string(b.size(1)) + ") without broadcast=1 before opset 7 (this model imports opset " +
                        std::to_string(ctx.opset()) + ")");
  ctx.outputs = {gemm_product(ctx, a, b)};
}

void matmul(ExecContext& ctx) { ctx.outputs = {activation_matmul(ctx.input(0), ctx.input(1))}; }

// com.microsoft FusedGemm: Gemm, then `activation` with activation_alpha,
// _beta, _gamma as the activation's alpha, beta, gamma.
// Gemm's current form (opset 13: C broadcasts), whatever the com.microsoft opset.
void fused_gemm(ExecContext& ctx) {
  const Node& node = ctx.node();
  at::Tensor a = need_input(ctx, 0), b = need_input(ctx, 1);
  if (a.dim() != 2 || b.dim() != 2) fail_input(ctx, "FusedGemm needs 2-D A and B");
  if (node.attr_int("transA", 0)) a = a.t();
  if (node.attr_int("transB", 0)) b = b.t();
  ctx.outputs = {gemm_product(ctx, a, b)};
  const std::string activation = node.attr_string("activation", "");
  if (activation.empty()) return;
  std::map<std::string, AttrValue> attrs;
  for (const char* name : {"alpha", "beta", "gamma"})
    if (has_attr(ctx, std::string("activation_") + name))
      attrs[name] = node.attr_float(std::string("activation_") + name, 0.0);
  ctx.outputs[0] = run_activation(ctx, activation, std::move(attrs), ctx.outputs[0]);
}

// FusedMatMul's operand as multiplied: transBatch moves dim 0 before the
// last two ([d0, d1.., M, K] -> [d1.., M, d0, K]; ONNX Runtime requires rank
// >= 3 and equal ranks then), trans swaps the last two.
at::Tensor fused_operand(const ExecContext& ctx, at::Tensor t, const char* trans_batch, const char* trans) {
  if (ctx.node().attr_int(trans_batch, 0)) {
    if (t.dim() < 3) fail_input(ctx, std::string(trans_batch) + " needs operands of rank >= 3");
    std::vector<int64_t> perm;
    for (int64_t d = 1; d < t.dim() - 1; ++d) perm.push_back(d);
    perm.push_back(0);
    perm.push_back(t.dim() - 1);
    t = t.permute(perm);
  }
  if (ctx.node().attr_int(trans, 0) && t.dim() >= 2) t = t.transpose(-1, -2);
  return t;
}

// com.microsoft FusedMatMul: alpha * op(A) @ op(B).
void fused_matmul(ExecContext& ctx) {
  at::Tensor y = activation_matmul(fused_operand(ctx, need_input(ctx, 0), "transBatchA", "transA"),
                            fused_operand(ctx, need_input(ctx, 1), "transBatchB", "transB"));
  const double alpha = ctx.node().attr_float("alpha", 1.0);
  ctx.outputs = {alpha != 1.0 ? y * alpha : y};
}

// `bits`-bit values packed low bits first in the bytes of `packed` (uint8,
// [rows, bytes]): [rows, bytes * 8 / bits] as int32.
at::Tensor unpack_bits(const at::Tensor& packed, int64_t bits) {
  const at::Tensor shifts = at::arange(0, 8, bits, packed.options().dtype(at::kInt));
  const at::Tensor values =
      at::bitwise_right_shift(packed.to(at::kInt).unsqueeze(-1), shifts).bitwise_and((1 << bits) - 1);
  return values.reshape({packed.size(0), -1});
}

// com.microsoft MatMulNBits: Y = A @ W^T (+ bias), W [N, K] dequantised per
// block of block_size along K: W = (q - zero_point) * scale. B [N, n_blocks,
// blob] holds q `bits` bits each, low bits first; scales [N, n_blocks];
// zero_points uint8 packed as B ([N, ceil(n_blocks * bits / 8)]) or of A's
// type ([N, n_blocks]), default 2^(bits-1); g_idx (deprecated) maps each k
// to its block. Dequantised in fp32 on every run (accuracy_level ignored).
void matmul_nbits(ExecContext& ctx) {
  const Node& node = ctx.node();
  const int64_t k = node.attr_int("K", 0), n = node.attr_int("N", 0);
  const int64_t bits = node.attr_int("bits", 4), block = node.attr_int("block_size", 0);
  if (k < 1 || n < 1 || block < 1 || (bits != 2 && bits != 4 && bits != 8))
    fail_input(ctx, "MatMulNBits needs K, N, block_size >= 1 and bits 2, 4 or 8");
  const at::Tensor& a = need_input(ctx, 0);
  const at::Tensor& b = need_input(ctx, 1);
  const int64_t blocks = (k + block - 1) / block;
  if (a.dim() < 1 || a.size(-1) != k) fail_input(ctx, "A's last dim must be K = " + std::to_string(k));
  if (b.scalar_type() != at::kByte || b.numel() != n * blocks * (block * bits / 8))
    fail_input(ctx, "B must be uint8 [N, ceil(K / block_size), block_size * bits / 8]");
  const at::Tensor q = unpack_bits(b.reshape({n, -1}), bits).slice(1, 0, k).to(at::kFloat);
  const at::Tensor block_of = ctx.has_input(4)
                                  ? ctx.input(4).to(at::kLong).reshape({k})
                                  : at::arange(k, a.options().dtype(at::kLong)).div(block, "floor");
  const at::Tensor& scales = need_input(ctx, 2);
  if (scales.numel() != n * blocks) fail_input(ctx, "scales must be [N, ceil(K / block_size)]");
  const at::Tensor scale = scales.reshape({n, blocks}).to(at::kFloat).index_select(1, block_of);
  at::Tensor zero_point = at::full({}, double(1 << (bits - 1)), q.options());
  if (ctx.has_input(3)) {
    const at::Tensor& zp = ctx.input(3);
    const at::Tensor per_block = zp.scalar_type() == at::kByte
                                     ? unpack_bits(zp.reshape({n, -1}), bits).slice(1, 0, blocks)
                                     : zp.reshape({n, -1});
    if (per_block.size(1) != blocks) fail_input(ctx, "zero_points do not hold one value per block");
    zero_point = per_block.to(at::kFloat).index_select(1, block_of);
  }
  const at::Tensor w = ((q - zero_point) * scale).to(a.scalar_type());
  at::Tensor y = at::matmul(a, w.t());
  if (ctx.has_input(5)) y = y + ctx.input(5);
  ctx.outputs = {y};
}

void einsum(ExecContext& ctx) {
  std::string equation = ctx.node().attr_string("equation", "");
  equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
  std::vector<at::Tensor> operands;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) operands.push_back(ctx.input(i));
  ctx.outputs = {at::einsum(equation, operands)};
}

void det(ExecContext& ctx) { ctx.outputs = {at::linalg_det(ctx.input(0))}; }

// (a - a_zero_point) x (b - b_zero_point) as exact int32: oneDNN's int8
// matmul for a 2-D b (int8_kernels.hpp), else in double, with the per-row
// zero point of A (axis -2) and per-column zero point of B (axis -1) that
// MatMulInteger and QLinearMatMul allow.
at::Tensor integer_product(const ExecContext& ctx, size_t a, size_t a_zero, size_t b, size_t b_zero) {
  const at::Tensor& qa = ctx.input(a);
  const at::Tensor& qb = ctx.input(b);
  if (auto acc = int8_matmul(qa, ctx.input(a_zero), qb, ctx.input(b_zero), input_is_constant(ctx, b))) return *acc;
  const at::Tensor x = subtract_zero_point(qa, ctx.input(a_zero), std::max<int64_t>(qa.dim() - 2, 0));
  const at::Tensor y = subtract_zero_point(qb, ctx.input(b_zero), qb.dim() - 1);
  return at::round(at::matmul(x, y)).to(at::kInt);
}

void matmul_integer(ExecContext& ctx) { ctx.outputs = {integer_product(ctx, 0, 2, 1, 3)}; }

// Inputs: a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp.
void qlinear_matmul(ExecContext& ctx) {
  const at::Tensor acc = integer_product(ctx, 0, 2, 3, 5);
  const at::Tensor a_scale = along_axis(ctx.input(1).to(at::kDouble), std::max<int64_t>(acc.dim() - 2, 0), acc.dim());
  const at::Tensor b_scale = along_axis(ctx.input(4).to(at::kDouble), acc.dim() - 1, acc.dim());
  ctx.outputs = {requantize(acc, a_scale * b_scale / ctx.input(6).to(at::kDouble), ctx.input(7))};
}

// MatMul / Gemm of DequantizeLinear(a_q) and DequantizeLinear(b_q) (a QDQ
// model; qdq_conv in conv.cc): inputs a_q, a_scale, a_zp, b_q (a 2-D
// constant), b_scale (per output column or one), b_zp, and for Gemm C. The
// exact integer product, then one scale per column; the float product of the
// dequantized operands where int8_matmul does not take the form.
void qdq_matmul(ExecContext& ctx) {
  const at::Tensor& aq = ctx.input(0);
  const at::Tensor& bq = ctx.input(3);
  if (auto acc = int8_matmul(aq, ctx.input(2), bq, ctx.input(5), true)) {
    ctx.outputs = {dequantize_accumulator(*acc, ctx.input(1), ctx.input(4), {}, acc->dim() - 1)};
    return;
  }
  ctx.outputs = {at::matmul(dequantize_along(aq, ctx.input(1), ctx.input(2), std::max<int64_t>(aq.dim() - 2, 0)),
                            dequantize_along(bq, ctx.input(4), ctx.input(5), bq.dim() - 1))};
}

// Gemm: transB's weight is stored (N, K), its scale along N either way.
void qdq_gemm(ExecContext& ctx) {
  const Node& node = ctx.node();
  const at::Tensor& aq = ctx.input(0);
  const bool trans_b = node.attr_int("transB", 0) != 0;
  const at::Tensor& bq = ctx.input(3);
  const double alpha = node.attr_float("alpha", 1.0), beta = node.attr_float("beta", 1.0);
  at::Tensor y;
  if (auto acc = int8_matmul(aq, ctx.input(2), bq, ctx.input(5), true, trans_b)) {
    y = dequantize_accumulator(*acc, ctx.input(1), ctx.input(4), {}, 1);
  } else {
    const at::Tensor b = dequantize_along(bq, ctx.input(4), ctx.input(5), trans_b ? 0 : 1);
    y = at::mm(dequantize_along(aq, ctx.input(1), ctx.input(2), 0), trans_b ? b.t() : b);
  }
  if (alpha != 1.0) y.mul_(alpha);
  if (ctx.has_input(6) && beta != 0.0) y.add_(ctx.input(6).to(y.scalar_type()), beta);
  ctx.outputs = {y};
}

}  // namespace

void add_qdq_gemm_matmul_executors(std::vector<ExecRule>& rules) {
  add_executor(rules, "MatMul", qdq_matmul, 1, kQdqDomain);
  add_executor(rules, "Gemm", qdq_gemm, 1, kQdqDomain);
}

void add_gemm_matmul_executors(std::vector<ExecRule>& rules) {
  add_executor(rules, "Gemm", gemm);
  add_executor(rules, "MatMul", matmul);
  add_executor(rules, "Einsum", einsum, 12);
  add_executor(rules, "Det", det, 11);
  add_executor(rules, "MatMulInteger", matmul_integer, 10);
  add_executor(rules, "QLinearMatMul", qlinear_matmul, 10);
  add_executor(rules, "FusedMatMul", fused_matmul, 1, "com.microsoft");
  add_executor(rules, "FusedGemm", fused_gemm, 1, "com.microsoft");
  add_executor(rules, "MatMulNBits", matmul_nbits, 1, "com.microsoft");
}

}  // namespace modelstat::profiler

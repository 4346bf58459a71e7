// Contractions: Gemm, MatMul, Einsum, Det, and the integer / quantized
// MatMulInteger and QLinearMatMul.
#include <algorithm>

#include "profiler/ops/exec_helpers.hpp"
#include "profiler/ops/int8_kernels.hpp"

namespace modelstat::profiler {

namespace {

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
  const double alpha = node.attr_float("alpha", 1.0);
  const double beta = node.attr_float("beta", 1.0);
  if (ctx.has_input(2) && beta != 0.0) {
    // addmm broadcasts C itself and fuses the scaling into the BLAS call.
    ctx.outputs = {at::addmm(ctx.input(2).to(a.scalar_type()), a, b, beta, alpha)};
    return;
  }
  at::Tensor y = at::mm(a, b);
  if (alpha != 1.0) y = y * alpha;
  ctx.outputs = {y};
}

void matmul(ExecContext& ctx) { ctx.outputs = {at::matmul(ctx.input(0), ctx.input(1))}; }

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
}

}  // namespace modelstat::profiler

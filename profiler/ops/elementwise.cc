// Elementwise executors: arithmetic, comparison and logic (numpy broadcast),
// variadic Sum/Mean/Max/Min, unary math, activations, the softmax family,
// Cast/CastLike, quantisation and the generated windows.
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include "profiler/ops/direct_kernels.hpp"
#include "profiler/ops/exec_helpers.hpp"
#include "profiler/ops/post_ops.hpp"
#include "profiler/ops/softmax.hpp"

#include <ATen/CPUGeneratorImpl.h>

namespace modelstat::profiler {
namespace {

// Before opset 7, binary ops (Add, Sub, Mul, Div, Pow, the comparisons and
// logic ops) do not broadcast unless broadcast=1, and then only B onto A: B's
// dims align with A's from `axis`, or with A's trailing dims when `axis` is
// absent. The result always has A's shape. From 7 on: numpy broadcasting.
// Returns B shaped to broadcast numpy-style onto A; a pair the old rule does
// not allow (which numpy broadcasting would silently accept) is refused.
at::Tensor legacy_rhs(const ExecContext& ctx, const at::Tensor& a, const at::Tensor& b) {
  if (ctx.opset() >= 7) return b;
  const std::string where = "before opset 7 (this model imports opset " + std::to_string(ctx.opset()) + ")";
  if (ctx.node().attr_int("broadcast", 0) == 0) {
    if (a.sizes() != b.sizes())
      fail_input(ctx, "without broadcast=1, " + where + ", A " + c10::str(a.sizes()) + " and B " +
                          c10::str(b.sizes()) + " must have the same shape");
    return b;
  }
  if (b.dim() > a.dim())
    fail_input(ctx, "broadcast=1 " + where + " broadcasts B onto A: B " + c10::str(b.sizes()) +
                        " has more dims than A " + c10::str(a.sizes()));
  const int64_t axis = has_attr(ctx, "axis") ? normalize_axis(ctx, ctx.node().attr_int("axis", 0), a.dim())
                                             : a.dim() - b.dim();
  if (axis + b.dim() > a.dim())
    fail_input(ctx, "broadcast axis " + std::to_string(axis) + " leaves no room for B " + c10::str(b.sizes()) +
                        " in A " + c10::str(a.sizes()));
  std::vector<int64_t> shape(size_t(axis), 1);
  for (int64_t d = 0; d < b.dim(); ++d) {
    if (b.size(d) != 1 && b.size(d) != a.size(axis + d))
      fail_input(ctx, "broadcast=1 " + where + ": B " + c10::str(b.sizes()) + " does not match A " +
                          c10::str(a.sizes()) + " from axis " + std::to_string(axis));
    shape.push_back(b.size(d));
  }
  while (int64_t(shape.size()) < a.dim()) shape.push_back(1);
  return b.reshape(shape);
}

template <typename F>
void binary(ExecContext& ctx, F f) {
  const at::Tensor& a = need_input(ctx, 0);
  const at::Tensor b = legacy_rhs(ctx, a, need_input(ctx, 1));
  ctx.outputs = {f(a, b)};
}

#define MS_BINARY(NAME, EXPR)                                                              \
  void NAME(ExecContext& ctx) {                                                            \
    binary(ctx, [](const at::Tensor& a, const at::Tensor& b) -> at::Tensor { return EXPR; }); \
  }

// Add / Sub / Mul write into input 0 when the executor lets them (see
// ExecContext::input_reusable) and the result has its shape and dtype. Add and
// Mul (commutative, exactly so in IEEE arithmetic) write into input 1 under the
// same conditions when input 0 cannot take the result: a squeeze-excite block's
// Mul(scale N x C x 1 x 1, x) then rescales x where it lies instead of writing
// a new activation (efficientnet_b0 at batch 8: 5.1 -> 2.5 ms of Mul, 1 thread).
// analyzer/lifetimes.cc's buffer sharing follows the same rule.
template <typename Out, typename InPlace>
void arithmetic(ExecContext& ctx, Out out_of_place, InPlace in_place, bool commutative = false) {
  const at::Tensor& a = need_input(ctx, 0);
  const at::Tensor b = legacy_rhs(ctx, a, need_input(ctx, 1));
  const auto takes_result = [&](size_t i, const at::Tensor& t) {
    return ctx.input_reusable(i) && at::infer_size(a.sizes(), b.sizes()) == t.sizes() &&
           at::result_type(a, b) == t.scalar_type();
  };
  if (takes_result(0, a)) {
    at::Tensor target = a;
    in_place(target, b);
    ctx.outputs = {target};
    return;
  }
  if (commutative && b.is_same(need_input(ctx, 1)) && takes_result(1, b)) {
    at::Tensor target = b;
    in_place(target, a);
    ctx.outputs = {target};
    return;
  }
  ctx.outputs = {out_of_place(a, b)};
}

void exec_add(ExecContext& ctx) {
  arithmetic(ctx, [](const at::Tensor& a, const at::Tensor& b) { return at::add(a, b); },
             [](at::Tensor& a, const at::Tensor& b) { a.add_(b); }, true);
}
void exec_sub(ExecContext& ctx) {
  arithmetic(ctx, [](const at::Tensor& a, const at::Tensor& b) { return at::sub(a, b); },
             [](at::Tensor& a, const at::Tensor& b) { a.sub_(b); });
}
void exec_mul(ExecContext& ctx) {
  arithmetic(ctx, [](const at::Tensor& a, const at::Tensor& b) { return at::mul(a, b); },
             [](at::Tensor& a, const at::Tensor& b) { a.mul_(b); }, true);
}
MS_BINARY(exec_equal, at::eq(a, b))
MS_BINARY(exec_less, at::lt(a, b))
MS_BINARY(exec_greater, at::gt(a, b))
MS_BINARY(exec_less_equal, at::le(a, b))
MS_BINARY(exec_greater_equal, at::ge(a, b))
MS_BINARY(exec_and, at::logical_and(a, b))
MS_BINARY(exec_or, at::logical_or(a, b))
MS_BINARY(exec_xor, at::logical_xor(a, b))
MS_BINARY(exec_bitwise_and, at::bitwise_and(a, b))
MS_BINARY(exec_bitwise_or, at::bitwise_or(a, b))
MS_BINARY(exec_bitwise_xor, at::bitwise_xor(a, b))
#undef MS_BINARY

// Integer division truncates toward zero (C semantics), floats divide.
void exec_div(ExecContext& ctx) {
  binary(ctx, [](const at::Tensor& a, const at::Tensor& b) {
    if (at::isIntegralType(a.scalar_type(), /*includeBool=*/true))
      return at::div(a, b, "trunc").to(a.scalar_type());
    return at::div(a, b);
  });
}

// Pow: the result has the base's type, whatever the exponent's.
void exec_pow(ExecContext& ctx) {
  binary(ctx, [](const at::Tensor& a, const at::Tensor& b) {
    // A one-element exponent (LayerNorm's x^2, GPT-2's GELU's x^3 written
    // out) as a scalar: ATen then squares or cubes directly, 20-40x faster on
    // the CPU than its elementwise pow of two tensors (GPT-2's 1024 x 3072
    // cube: 0.63 against 13.4 ms, tenth session). Same shape: b has no more
    // dims than a. x * x rounds once, as a correctly rounded pow(x, 2) does.
    // Not +-0.5: ATen's scalar roots (sqrt, rsqrt) differ from pow at -0 and -inf.
    if (at::isFloatingType(a.scalar_type()) && b.numel() == 1 && b.dim() <= a.dim() && b.device().is_cpu()) {
      const double e = b.item<double>();
      if (e == 2.0) return at::square(a);
      if (e != 0.5 && e != -0.5 && std::isfinite(e)) return at::pow(a, e);
    }
    return at::pow(a, b).to(a.scalar_type());
  });
}

// Mod: fmod=0 takes the divisor's sign (Python %), fmod=1 the dividend's (C fmod).
void exec_mod(ExecContext& ctx) {
  const bool fmod = ctx.node().attr_int("fmod", 0) != 0;
  const at::Tensor& a = need_input(ctx, 0);
  const at::Tensor& b = need_input(ctx, 1);
  ctx.outputs = {fmod ? at::fmod(a, b) : at::remainder(a, b)};
}

void exec_bitshift(ExecContext& ctx) {
  const std::string dir = ctx.node().attr_string("direction", "");
  const at::Tensor& a = need_input(ctx, 0);
  const at::Tensor& b = need_input(ctx, 1);
  if (dir == "LEFT") ctx.outputs = {at::bitwise_left_shift(a, b)};
  else if (dir == "RIGHT") ctx.outputs = {at::bitwise_right_shift(a, b)};
  else fail_input(ctx, "BitShift direction must be LEFT or RIGHT, got '" + dir + "'");
}

// Variadic ops fold their present inputs. Before opset 8 (Sum, Max, Min,
// Mean) every input has the same shape: no broadcasting.
template <typename F>
at::Tensor fold(const ExecContext& ctx, F f) {
  at::Tensor acc;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    if (acc.defined() && ctx.opset() < 8 && ctx.input(i).sizes() != acc.sizes())
      fail_input(ctx, "inputs of different shapes (" + c10::str(acc.sizes()) + ", " + c10::str(ctx.input(i).sizes()) +
                          ") do not broadcast before opset 8 (this model imports opset " +
                          std::to_string(ctx.opset()) + ")");
    acc = acc.defined() ? f(acc, ctx.input(i)) : ctx.input(i);
  }
  if (!acc.defined()) fail_input(ctx, "needs at least one input");
  return acc;
}

void exec_sum(ExecContext& ctx) {
  ctx.outputs = {fold(ctx, [](const at::Tensor& a, const at::Tensor& b) { return at::add(a, b); })};
}
void exec_max(ExecContext& ctx) {
  ctx.outputs = {fold(ctx, [](const at::Tensor& a, const at::Tensor& b) { return at::maximum(a, b); })};
}
void exec_min(ExecContext& ctx) {
  ctx.outputs = {fold(ctx, [](const at::Tensor& a, const at::Tensor& b) { return at::minimum(a, b); })};
}
void exec_mean(ExecContext& ctx) {
  int64_t n = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) n += ctx.has_input(i);
  const at::Tensor s = fold(ctx, [](const at::Tensor& a, const at::Tensor& b) { return at::add(a, b); });
  ctx.outputs = {at::div(s, double(n)).to(s.scalar_type())};
}

void exec_where(ExecContext& ctx) {
  ctx.outputs = {at::where(need_input(ctx, 0).to(at::kBool), need_input(ctx, 1), need_input(ctx, 2))};
}

// Unary ops and simple activations.
#define MS_UNARY(NAME, EXPR)                  \
  void NAME(ExecContext& ctx) {               \
    const at::Tensor& x = need_input(ctx, 0);       \
    ctx.outputs = {EXPR};                     \
  }

MS_UNARY(exec_abs, at::abs(x))
MS_UNARY(exec_neg, at::neg(x))
MS_UNARY(exec_exp, at::exp(x))
MS_UNARY(exec_log, at::log(x))
MS_UNARY(exec_sqrt, at::sqrt(x))
MS_UNARY(exec_reciprocal, at::reciprocal(x))
MS_UNARY(exec_floor, at::floor(x))
MS_UNARY(exec_ceil, at::ceil(x))
MS_UNARY(exec_round, at::round(x))  // half to even, as ONNX
MS_UNARY(exec_sign, at::sign(x))
MS_UNARY(exec_erf, at::erf(x))
MS_UNARY(exec_tanh, at::tanh(x))
MS_UNARY(exec_sin, at::sin(x))
MS_UNARY(exec_cos, at::cos(x))
MS_UNARY(exec_tan, at::tan(x))
MS_UNARY(exec_asin, at::asin(x))
MS_UNARY(exec_acos, at::acos(x))
MS_UNARY(exec_atan, at::atan(x))
MS_UNARY(exec_sinh, at::sinh(x))
MS_UNARY(exec_cosh, at::cosh(x))
MS_UNARY(exec_asinh, at::asinh(x))
MS_UNARY(exec_acosh, at::acosh(x))
MS_UNARY(exec_atanh, at::atanh(x))
MS_UNARY(exec_not, at::logical_not(x))
MS_UNARY(exec_bitwise_not, at::bitwise_not(x))
MS_UNARY(exec_isnan, at::isnan(x))
void exec_relu(ExecContext& ctx) {
  at::Tensor x = need_input(ctx, 0);
  ctx.outputs = {ctx.input_reusable(0) ? at::relu_(x) : at::relu(x)};
}
MS_UNARY(exec_sigmoid, at::sigmoid(x))
MS_UNARY(exec_softplus, at::softplus(x))
MS_UNARY(exec_softsign, at::div(x, at::abs(x).add(1)))
MS_UNARY(exec_mish, at::mish(x))
// x * clamp(x / 6 + 0.5, 0, 1), in one pass (ATen's hardswish).
MS_UNARY(exec_hardswish, at::hardswish(x))
#undef MS_UNARY

void exec_isinf(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const bool pos = ctx.node().attr_int("detect_positive", 1) != 0;
  const bool neg = ctx.node().attr_int("detect_negative", 1) != 0;
  if (pos && neg) ctx.outputs = {at::isinf(x)};
  else if (pos) ctx.outputs = {at::isposinf(x)};
  else if (neg) ctx.outputs = {at::isneginf(x)};
  else ctx.outputs = {at::zeros(x.sizes(), x.options().dtype(at::kBool))};
}

void exec_leaky_relu(ExecContext& ctx) {
  ctx.outputs = {at::leaky_relu(need_input(ctx, 0), ctx.node().attr_float("alpha", 0.01))};
}

// PRelu: slope broadcasts (unidirectionally) to X. Before opset 7 the spec
// knows only a one-element slope (shared) or, implicitly, one of X's shape;
// a 1-D slope against an X of rank 3 or more (Caffe2's reading: along
// dim 1; numpy's: along the last dim) is ambiguous there and refused.
void exec_prelu(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const at::Tensor& slope = need_input(ctx, 1);
  if (ctx.opset() < 7 && slope.numel() != 1 && slope.dim() == 1 && x.dim() > 2)
    fail_input(ctx, "a slope of shape " + c10::str(slope.sizes()) + " for X " + c10::str(x.sizes()) +
                        " is ambiguous before opset 7 (this model imports opset " + std::to_string(ctx.opset()) +
                        "): per channel or along the last dim");
  if (auto y = direct_prelu(x, slope)) {  // a slope per channel or one: one pass in x's layout
    ctx.outputs = {*y};
    return;
  }
  ctx.outputs = {at::where(x < 0, x * slope, x).to(x.scalar_type())};
}

void exec_elu(ExecContext& ctx) { ctx.outputs = {at::elu(need_input(ctx, 0), ctx.node().attr_float("alpha", 1.0))}; }

void exec_selu(ExecContext& ctx) {
  const double alpha = ctx.node().attr_float("alpha", 1.67326319217681884765625);
  const double gamma = ctx.node().attr_float("gamma", 1.05070102214813232421875);
  ctx.outputs = {at::elu(need_input(ctx, 0), alpha, gamma)};
}

void exec_celu(ExecContext& ctx) { ctx.outputs = {at::celu(need_input(ctx, 0), ctx.node().attr_float("alpha", 1.0))}; }

void exec_hard_sigmoid(ExecContext& ctx) {
  const double alpha = ctx.node().attr_float("alpha", 0.2);
  const double beta = ctx.node().attr_float("beta", 0.5);
  ctx.outputs = {at::clamp(need_input(ctx, 0) * alpha + beta, 0.0, 1.0)};
}

void exec_thresholded_relu(ExecContext& ctx) {
  ctx.outputs = {at::threshold(need_input(ctx, 0), ctx.node().attr_float("alpha", 1.0), 0.0)};
}

void exec_gelu(ExecContext& ctx) {
  const std::string approximate = ctx.node().attr_string("approximate", "none");
  if (approximate != "none" && approximate != "tanh") fail_input(ctx, "unsupported approximate '" + approximate + "'");
  ctx.outputs = {gelu_dense(need_input(ctx, 0), approximate)};
}

// com.microsoft QuickGelu (ONNX Runtime contrib op): x * sigmoid(alpha * x).
void exec_quick_gelu(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  ctx.outputs = {x * at::sigmoid(x * ctx.node().attr_float("alpha", 1.702))};
}

// ONNX Runtime's GELU forms and bias fusions (com.microsoft): Gelu is the erf
// form; FastGelu the tanh form 0.5*x*(1+tanh(0.797885*x + 0.035677*x^3)),
// which is ATen's approximate="tanh" (0.797885 = sqrt(2/pi), 0.035677 =
// sqrt(2/pi)*0.044715), of x + bias when bias is given; BiasGelu the erf form
// of A + B; BiasAdd X + bias + skip.
void exec_contrib_gelu(ExecContext& ctx) {
  ctx.outputs = {gelu_dense(need_input(ctx, 0))};
}

void exec_fast_gelu(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  ctx.outputs = {gelu_dense(ctx.has_input(1) ? x + ctx.input(1) : x, "tanh")};
}

void exec_bias_gelu(ExecContext& ctx) {
  ctx.outputs = {gelu_dense(need_input(ctx, 0) + need_input(ctx, 1))};
}

void exec_bias_add(ExecContext& ctx) {
  ctx.outputs = {need_input(ctx, 0) + need_input(ctx, 1) + need_input(ctx, 2)};
}

// com.microsoft BiasSoftmax: softmax(data + bias) over the dims from `axis`
// (default 1) on, flattened as one. A bias of lower rank broadcasts over the
// dims just before the softmax dims when is_inner_broadcast is 1 (bias
// [batch, ..., softmax dims] for data [batch, heads, ..., softmax dims]), and
// over the leading dims (numpy's rule) otherwise.
void exec_bias_softmax(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  at::Tensor bias = need_input(ctx, 1);
  const int64_t rank = x.dim();
  const int64_t axis = normalize_axis(ctx, ctx.node().attr_int("axis", 1), std::max<int64_t>(rank, 1));
  if (bias.dim() < rank && ctx.node().attr_int("is_inner_broadcast", 0)) {
    const int64_t softmax_dims = rank - axis;
    if (bias.dim() < softmax_dims) fail_input(ctx, "bias has fewer dims than the softmax dims");
    std::vector<int64_t> dims(bias.sizes().begin(), bias.sizes().end() - softmax_dims);
    dims.resize(size_t(rank - softmax_dims), 1);
    dims.insert(dims.end(), bias.sizes().end() - softmax_dims, bias.sizes().end());
    bias = bias.reshape(dims);
  }
  const at::Tensor sum = x + bias;
  ctx.outputs = {at::softmax(sum.flatten(axis), axis).reshape(sum.sizes())};
}

void exec_shrink(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const double bias = ctx.node().attr_float("bias", 0.0);
  const double lambd = ctx.node().attr_float("lambd", 0.5);
  const at::Tensor zero = at::zeros({}, x.options());
  at::Tensor y = at::where(x < -lambd, x + bias, at::where(x > lambd, x - bias, zero));
  ctx.outputs = {y.to(x.scalar_type())};
}

// Clip: min/max attributes before opset 11, optional inputs from 11 on.
void exec_clip(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  if (ctx.opset() < 11) {
    c10::optional<at::Scalar> lo, hi;
    if (has_attr(ctx, "min")) lo = ctx.node().attr_float("min", 0.0);
    if (has_attr(ctx, "max")) hi = ctx.node().attr_float("max", 0.0);
    ctx.outputs = {(lo || hi) ? at::clamp(x, lo, hi) : x};
    return;
  }
  if (x.is_cpu() && (!ctx.has_input(1) || ctx.input(1).is_cpu()) && (!ctx.has_input(2) || ctx.input(2).is_cpu())) {
    // Scalar bounds (ReLU6's 0 and 6): the cheap kernel, in place when allowed.
    // On CUDA the bounds stay tensors: reading them would sync the stream.
    c10::optional<at::Scalar> lo, hi;
    if (ctx.has_input(1)) lo = ctx.input(1).reshape({}).item();
    if (ctx.has_input(2)) hi = ctx.input(2).reshape({}).item();
    at::Tensor target = x;
    if (!lo && !hi) ctx.outputs = {x};
    // Both bounds in a training step: hardtanh, as PyTorch's ReLU6 and
    // Hardtanh train (the same forward; its backward is one pass, where
    // clamp's builds two masks and a where: MobileNet-V2's 35 ReLU6 took
    // 22 ms of a step as clamp, 4 as hardtanh, in PyTorch 1.13 on one core).
    // The gradient differs only at an input equal to a bound (0 there).
    else if (lo && hi && x.requires_grad() && lo->toDouble() <= hi->toDouble())
      ctx.outputs = {at::hardtanh(x, *lo, *hi)};
    else ctx.outputs = {ctx.input_reusable(0) ? at::clamp_(target, lo, hi) : at::clamp(x, lo, hi)};
    return;
  }
  c10::optional<at::Tensor> lo, hi;
  if (ctx.has_input(1)) lo = ctx.input(1).reshape({}).to(x.scalar_type());
  if (ctx.has_input(2)) hi = ctx.input(2).reshape({}).to(x.scalar_type());
  ctx.outputs = {(lo || hi) ? at::clamp(x, lo, hi) : x};
}

// Softmax family. Before opset 13 the input is coerced to 2-D at `axis`
// (default 1) and the op works on each row; from 13 on it works along `axis`
// (default -1).
enum class SoftmaxKind { Softmax, LogSoftmax, Hardmax };

template <SoftmaxKind K>
void exec_softmax(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const bool legacy = ctx.opset() < 13;
  const int64_t rank = x.dim();
  int64_t axis = normalize_axis(ctx, ctx.node().attr_int("axis", legacy ? 1 : -1), std::max<int64_t>(rank, 1));
  at::Tensor in = x;
  if (legacy) {
    int64_t rows = 1, cols = 1;
    for (int64_t d = 0; d < rank; ++d) (d < axis ? rows : cols) *= x.size(d);
    in = x.reshape({rows, cols});
    axis = 1;
  }
  std::optional<at::Tensor> direct;  // short rows: a direct loop (direct_kernels.hpp)
  if (K != SoftmaxKind::Hardmax && axis == in.dim() - 1)
    direct = direct_softmax_last_axis(in, K == SoftmaxKind::LogSoftmax);
  at::Tensor y;
  if (direct) y = std::move(*direct);
  else if (K == SoftmaxKind::Softmax) y = axis == in.dim() - 1 ? softmax_last_axis(in) : at::softmax(in, axis);
  else if (K == SoftmaxKind::LogSoftmax) y = at::log_softmax(in, axis);
  else y = at::zeros_like(in).scatter_(axis, at::argmax(in, axis, /*keepdim=*/true), 1);
  ctx.outputs = {legacy ? y.reshape(x.sizes()) : y};
}

// Cast-1 names its target type; later opsets number it. Float targets follow
// the run's float dtype (compute_type): fp16/bf16 runs make every float target
// theirs, fp32 runs widen fp16/bf16 targets to fp32, a run in the model's own
// dtypes casts as written; integer types untouched.
int64_t onnx_type_from_name(const ExecContext& ctx, const std::string& name) {
  static const std::pair<const char*, DType> kNames[] = {
      {"FLOAT", DType::Float},     {"UINT8", DType::UInt8},   {"INT8", DType::Int8},
      {"UINT16", DType::UInt16},   {"INT16", DType::Int16},   {"INT32", DType::Int32},
      {"INT64", DType::Int64},     {"BOOL", DType::Bool},     {"FLOAT16", DType::Float16},
      {"DOUBLE", DType::Double},   {"UINT32", DType::UInt32}, {"UINT64", DType::UInt64},
      {"BFLOAT16", DType::BFloat16}};
  for (const auto& [n, t] : kNames)
    if (name == n) return int64_t(t);
  fail_input(ctx, "unsupported Cast target '" + name + "'");
}

void exec_cast(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const AttrValue* to = ctx.node().attr("to");
  if (!to) fail_input(ctx, "Cast needs the 'to' attribute");
  int64_t onnx_type = 0;
  if (auto* i = std::get_if<int64_t>(to)) onnx_type = *i;
  else if (auto* s = std::get_if<std::string>(to)) onnx_type = onnx_type_from_name(ctx, *s);
  else fail_input(ctx, "Cast 'to' has the wrong attribute type");
  const at::ScalarType target = compute_type(ctx, scalar_type_of(ctx, onnx_type));
  if (target == at::kFloat && x.scalar_type() == at::kInt && ctx.input_reusable(0) && x.device().is_cpu() &&
      x.is_non_overlapping_and_dense()) {
    // int32 -> float32 in the input's own storage (an int8 convolution's
    // accumulator this Cast is the last to read): a second tensor of that
    // size would cost fresh pages for a large activation.
    int32_t* data = x.data_ptr<int32_t>();
    at::parallel_for(0, x.numel(), 1 << 16, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const float v = float(data[i]);
        std::memcpy(&data[i], &v, sizeof v);
      }
    });
    ctx.outputs = {x.view(at::kFloat)};
    return;
  }
  ctx.outputs = {x.to(target)};
}

void exec_cast_like(ExecContext& ctx) {
  ctx.outputs = {need_input(ctx, 0).to(compute_type(ctx, need_input(ctx, 1).scalar_type()))};
}

// Per-axis quantisation parameters (1-D, along `axis`) reshaped to broadcast
// against x; scalars left as they are.
at::Tensor per_axis(const ExecContext& ctx, const at::Tensor& p, const at::Tensor& x) {
  if (p.dim() == 0 || p.numel() == 1) return p.reshape({});
  const int64_t axis = normalize_axis(ctx, ctx.node().attr_int("axis", 1), x.dim());
  std::vector<int64_t> shape(size_t(x.dim()), 1);
  shape[size_t(axis)] = p.numel();
  return p.reshape(shape);
}

std::pair<double, double> quant_range(at::ScalarType t) {
  switch (t) {
    case at::kByte: return {0, 255};
    case at::kChar: return {-128, 127};
    case at::kInt: return {double(std::numeric_limits<int32_t>::min()), double(std::numeric_limits<int32_t>::max())};
    default: return {-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  }
}

// The values a requantiser rounds, moved by a relative 2^-21 at most when
// the run asks (ExecContext::nudge_requantisers; a fixed pattern per node):
// a few float32 ulps, the order of what another summation order or a fused
// scale in the op before it changes.
at::Tensor nudged_if_asked(const ExecContext& ctx, const at::Tensor& x) {
  if (!ctx.nudge_requantisers() || !at::isFloatingType(x.scalar_type())) return x;
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(std::hash<std::string>{}(ctx.node().name));
  const at::Tensor u = at::rand(x.sizes(), gen, at::TensorOptions().dtype(at::kFloat)).to(x.device());
  return x * (1.0 + (u * 2.0 - 1.0) * std::ldexp(1.0, -21)).to(x.scalar_type());
}

// y = saturate(round_half_even(x / scale) + zero_point), type of zero_point (uint8 by default).
// saturate(round_half_even(in / scale) + zero_point) into 8 bits: x / scale
// beyond [qmin - zp - 1, qmax - zp + 1] saturates anyway, and within it
// adding and removing 1.5 * 2^23 rounds half to even as nearbyint does (a
// library call without SSE4.1), in a loop the compiler vectorises.
template <typename T>
inline __attribute__((always_inline)) void quantize_span(const float* __restrict src, T* __restrict dst, int64_t n,
                                                         float scale, float zero_point) {
  // __restrict: an 8-bit store may alias a float load otherwise, which keeps
  // the compiler from vectorising the loop.
  constexpr float qmin = float(std::numeric_limits<T>::min()), qmax = float(std::numeric_limits<T>::max());
  const float lo = qmin - zero_point - 1.0f, hi = qmax - zero_point + 1.0f;
  constexpr float kRound = 12582912.0f;
  for (int64_t i = 0; i < n; ++i) {
    float v = src[i] / scale;
    v = v > hi ? hi : (v >= lo ? v : lo);  // NaN to lo
    v = (v + kRound) - kRound + zero_point;
    dst[i] = T(std::min(std::max(v, qmin), qmax));
  }
}

// One copy per ISA, picked at load by the CPU it runs on (GCC function
// multiversioning): the baseline x86-64 build has only SSE2's 4-wide division.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define MODELSTAT_ISA_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define MODELSTAT_ISA_CLONES
#endif
MODELSTAT_ISA_CLONES void quantize_span_u8(const float* src, uint8_t* dst, int64_t n, float scale, float zp) {
  quantize_span(src, dst, n, scale, zp);
}
MODELSTAT_ISA_CLONES void quantize_span_s8(const float* src, int8_t* dst, int64_t n, float scale, float zp) {
  quantize_span(src, dst, n, scale, zp);
}

template <typename T>
void quantize_loop(const float* in, T* out, int64_t n, float scale, float zero_point) {
  at::parallel_for(0, n, 1 << 16, [&](int64_t begin, int64_t end) {
    if constexpr (std::is_same_v<T, uint8_t>) quantize_span_u8(in + begin, out + begin, end - begin, scale, zero_point);
    else quantize_span_s8(in + begin, out + begin, end - begin, scale, zero_point);
  });
}

// Per-tensor float32 to 8 bits on the CPU, keeping x's layout (one loop over
// the dense storage): the ATen expression in exec_quantize_linear makes five
// passes, which in a QDQ model cost a third of the int8 convolution after it.
std::optional<at::Tensor> quantize_per_tensor_8bit(const at::Tensor& x, const at::Tensor& scale,
                                                   const at::Tensor& zero_point, at::ScalarType out) {
  if (!x.device().is_cpu() || x.scalar_type() != at::kFloat || scale.numel() != 1 ||
      scale.scalar_type() != at::kFloat || (out != at::kByte && out != at::kChar) ||
      (zero_point.defined() && zero_point.numel() != 1) || !x.is_non_overlapping_and_dense())
    return std::nullopt;
  const float s = scale.item<float>();
  if (!(s > 0.0f)) return std::nullopt;
  const float zp = zero_point.defined() ? float(zero_point.to(at::kInt).item<int32_t>()) : 0.0f;
  at::Tensor y = at::empty_strided(x.sizes(), x.strides(), x.options().dtype(out));
  if (out == at::kByte) quantize_loop(x.data_ptr<float>(), y.data_ptr<uint8_t>(), x.numel(), s, zp);
  else quantize_loop(x.data_ptr<float>(), y.data_ptr<int8_t>(), x.numel(), s, zp);
  return y;
}

void exec_quantize_linear(ExecContext& ctx) {
  const at::Tensor x = nudged_if_asked(ctx, need_input(ctx, 0));
  const at::ScalarType out = ctx.has_input(2) ? ctx.input(2).scalar_type() : at::kByte;
  if (auto y = quantize_per_tensor_8bit(x, need_input(ctx, 1), ctx.input(2), out)) {
    ctx.outputs = {*y};
    return;
  }
  const at::Tensor scale = per_axis(ctx, need_input(ctx, 1), x);
  at::Tensor q = at::round(at::div(x.to(scale.scalar_type()), scale));
  if (ctx.has_input(2)) q = q + per_axis(ctx, ctx.input(2), x).to(q.scalar_type());
  const auto [lo, hi] = quant_range(out);
  ctx.outputs = {at::clamp(q, lo, hi).to(out)};
}

// y = (x - zero_point) * scale, subtraction in integers as the reference does.
void exec_dequantize_linear(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const at::Tensor scale = per_axis(ctx, need_input(ctx, 1), x);
  at::Tensor v = x.to(at::kInt);
  if (ctx.has_input(2)) v = v - per_axis(ctx, ctx.input(2), x).to(at::kInt);
  ctx.outputs = {v.to(scale.scalar_type()) * scale};
}

// Scale and zero point from the data range (always including 0), uint8 output:
// scale = (max - min) / 255, zero point = saturate(round(-min / scale)),
// y = saturate(round(x / scale) + zero point), in float32, rounding half to
// even (std::nearbyint in the default rounding mode). One pass for the range
// (aminmax) and one fused pass for the quantisation: this op sits before
// every ConvInteger of a dynamically quantized model, on activations of up to
// hundreds of MB, where the unfused ATen expression was slower than the
// convolution itself. All zeros (scale 0): y is all zero point (0).
// The output keeps the input's memory layout (a channels-last activation
// stays channels-last, which the int8 convolution after it reads without a
// copy): the loop runs over the dense storage in memory order.
void exec_dynamic_quantize_linear(ExecContext& ctx) {
  at::Tensor x = nudged_if_asked(ctx, need_input(ctx, 0)).to(at::kFloat);
  if (!x.is_non_overlapping_and_dense()) x = x.contiguous();
  float lo = 0.0f, hi = 0.0f;
  if (x.numel() > 0) {
    // Over the dense storage as one flat run: ATen 1.13's aminmax over a
    // channels-last tensor took 82 ms where the same values flat take 2 ms.
    const at::Tensor flat = x.is_contiguous() ? x.reshape({-1})
                                              : at::from_blob(x.data_ptr(), {x.numel()}, x.options());
    const auto range = at::aminmax(flat);
    lo = std::min(std::get<0>(range).item<float>(), 0.0f);
    hi = std::max(std::get<1>(range).item<float>(), 0.0f);
  }
  const float scale = (hi - lo) / 255.0f;
  const float zero_point = scale > 0.0f ? std::clamp(std::nearbyint((0.0f - lo) / scale), 0.0f, 255.0f) : 0.0f;
  at::Tensor y;
  if (x.device().is_cpu()) {
    y = at::empty_strided(x.sizes(), x.strides(), x.options().dtype(at::kByte));
    if (scale > 0.0f) {
      quantize_loop(x.data_ptr<float>(), y.data_ptr<uint8_t>(), x.numel(), scale, zero_point);
    } else {
      y.fill_(0);
    }
  } else {
    y = scale > 0.0f ? at::clamp(at::round(x / scale) + zero_point, 0, 255).to(at::kByte)
                     : at::zeros(x.sizes(), x.options().dtype(at::kByte));
  }
  const auto scalar = at::TensorOptions().device(x.device());
  ctx.outputs = {y, at::full({}, scale, scalar.dtype(at::kFloat)), at::full({}, zero_point, scalar.dtype(at::kFloat)).to(at::kByte)};
}

// Generated windows (opset 17): a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N),
// N = size when periodic, size - 1 otherwise.
template <int Kind>
void exec_window(ExecContext& ctx) {
  const int64_t size = int64_t(ctx.input_scalar(0));
  if (size < 0) fail_input(ctx, "window size must be non-negative");
  const bool periodic = ctx.node().attr_int("periodic", 1) != 0;
  const at::ScalarType out = compute_type(ctx, scalar_type_of(ctx, ctx.node().attr_int("output_datatype", 1)));
  double a0 = 0.5, a1 = 0.5, a2 = 0.0;
  if (Kind == 1) a0 = 25.0 / 46.0, a1 = 1.0 - a0;
  if (Kind == 2) a0 = 0.42, a1 = 0.5, a2 = 0.08;
  const double n_div = double(periodic ? size : size - 1);
  const at::Tensor n = at::arange(size, at::TensorOptions().dtype(at::kDouble).device(ctx.device()));
  const double pi = 3.14159265358979323846;
  at::Tensor w = a0 - a1 * at::cos(n * (2 * pi / n_div));
  if (a2 != 0.0) w = w + a2 * at::cos(n * (4 * pi / n_div));
  ctx.outputs = {w.to(out)};
}

}  // namespace

void add_elementwise_executors(std::vector<ExecRule>& rules) {
  add_executor(rules, "Add", exec_add);
  add_executor(rules, "Sub", exec_sub);
  add_executor(rules, "Mul", exec_mul);
  add_executor(rules, "Div", exec_div);
  add_executor(rules, "Pow", exec_pow);
  add_executor(rules, "Mod", exec_mod, 10);
  add_executor(rules, "BitShift", exec_bitshift, 11);
  add_executor(rules, "Equal", exec_equal);
  add_executor(rules, "Less", exec_less);
  add_executor(rules, "Greater", exec_greater);
  add_executor(rules, "LessOrEqual", exec_less_equal, 12);
  add_executor(rules, "GreaterOrEqual", exec_greater_equal, 12);
  add_executor(rules, "And", exec_and);
  add_executor(rules, "Or", exec_or);
  add_executor(rules, "Xor", exec_xor);
  add_executor(rules, "BitwiseAnd", exec_bitwise_and, 18);
  add_executor(rules, "BitwiseOr", exec_bitwise_or, 18);
  add_executor(rules, "BitwiseXor", exec_bitwise_xor, 18);
  add_executor(rules, "BitwiseNot", exec_bitwise_not, 18);
  add_executor(rules, "Where", exec_where, 9);
  add_executor(rules, "Sum", exec_sum);
  add_executor(rules, "Max", exec_max);
  add_executor(rules, "Min", exec_min);
  add_executor(rules, "Mean", exec_mean);
  add_executor(rules, "Abs", exec_abs);
  add_executor(rules, "Neg", exec_neg);
  add_executor(rules, "Exp", exec_exp);
  add_executor(rules, "Log", exec_log);
  add_executor(rules, "Sqrt", exec_sqrt);
  add_executor(rules, "Reciprocal", exec_reciprocal);
  add_executor(rules, "Floor", exec_floor);
  add_executor(rules, "Ceil", exec_ceil);
  add_executor(rules, "Round", exec_round, 11);
  add_executor(rules, "Sign", exec_sign, 9);
  add_executor(rules, "Erf", exec_erf, 9);
  add_executor(rules, "Tanh", exec_tanh);
  add_executor(rules, "Sin", exec_sin, 7);
  add_executor(rules, "Cos", exec_cos, 7);
  add_executor(rules, "Tan", exec_tan, 7);
  add_executor(rules, "Asin", exec_asin, 7);
  add_executor(rules, "Acos", exec_acos, 7);
  add_executor(rules, "Atan", exec_atan, 7);
  add_executor(rules, "Sinh", exec_sinh, 9);
  add_executor(rules, "Cosh", exec_cosh, 9);
  add_executor(rules, "Asinh", exec_asinh, 9);
  add_executor(rules, "Acosh", exec_acosh, 9);
  add_executor(rules, "Atanh", exec_atanh, 9);
  add_executor(rules, "Not", exec_not);
  add_executor(rules, "IsNaN", exec_isnan, 9);
  add_executor(rules, "IsInf", exec_isinf, 10);
  add_executor(rules, "Relu", exec_relu);
  add_executor(rules, "LeakyRelu", exec_leaky_relu);
  add_executor(rules, "PRelu", exec_prelu);
  add_executor(rules, "Elu", exec_elu);
  add_executor(rules, "Selu", exec_selu);
  add_executor(rules, "Celu", exec_celu, 12);
  add_executor(rules, "Sigmoid", exec_sigmoid);
  add_executor(rules, "HardSigmoid", exec_hard_sigmoid);
  add_executor(rules, "HardSwish", exec_hardswish, 14);
  add_executor(rules, "Softplus", exec_softplus);
  add_executor(rules, "Softsign", exec_softsign);
  add_executor(rules, "ThresholdedRelu", exec_thresholded_relu, 10);
  add_executor(rules, "Mish", exec_mish, 18);
  add_executor(rules, "Gelu", exec_gelu, 20);
  add_executor(rules, "QuickGelu", exec_quick_gelu, 1, "com.microsoft");
  add_executor(rules, "Gelu", exec_contrib_gelu, 1, "com.microsoft");
  add_executor(rules, "FastGelu", exec_fast_gelu, 1, "com.microsoft");
  add_executor(rules, "BiasGelu", exec_bias_gelu, 1, "com.microsoft");
  add_executor(rules, "BiasAdd", exec_bias_add, 1, "com.microsoft");
  add_executor(rules, "BiasSoftmax", exec_bias_softmax, 1, "com.microsoft");
  add_executor(rules, "Shrink", exec_shrink, 9);
  add_executor(rules, "Clip", exec_clip);
  add_executor(rules, "Softmax", exec_softmax<SoftmaxKind::Softmax>);
  add_executor(rules, "LogSoftmax", exec_softmax<SoftmaxKind::LogSoftmax>);
  add_executor(rules, "Hardmax", exec_softmax<SoftmaxKind::Hardmax>);
  add_executor(rules, "Cast", exec_cast);
  add_executor(rules, "CastLike", exec_cast_like, 15);
  add_executor(rules, "QuantizeLinear", exec_quantize_linear, 10);
  add_executor(rules, "DequantizeLinear", exec_dequantize_linear, 10);
  add_executor(rules, "DynamicQuantizeLinear", exec_dynamic_quantize_linear, 11);
  add_executor(rules, "HannWindow", exec_window<0>, 17);
  add_executor(rules, "HammingWindow", exec_window<1>, 17);
  add_executor(rules, "BlackmanWindow", exec_window<2>, 17);
}

}  // namespace modelstat::profiler

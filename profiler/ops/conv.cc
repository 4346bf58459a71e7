// Conv family: Conv, ConvTranspose, ConvInteger, QLinearConv (1-, 2- and
// 3-D; groups, dilations, strides, explicit or auto pads). ATen takes one
// symmetric pad per dim, so asymmetric ONNX pads are applied with
// constant_pad_nd first (see pads_for_aten).
#include <map>
#include <string>

#include "profiler/ops/direct_kernels.hpp"
#include "profiler/ops/exec_helpers.hpp"
#include "profiler/ops/int8_kernels.hpp"

namespace modelstat::profiler {

namespace {

// The convolution every forward variant shares: x and w already in a
// compute dtype; bias may be undefined.
at::Tensor convolve(const ExecContext& ctx, const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias,
                    double pad_value) {
  if (x.dim() < 3 || w.dim() != x.dim()) fail_input(ctx, "Conv needs input and weight of the same rank >= 3");
  const Window win = resolve_window(ctx, attr_ints_or(ctx.node(), "kernel_shape", spatial_dims(w)), spatial_dims(x));
  const int64_t group = ctx.node().attr_int("group", 1);
  // A small fp32 Conv: a direct loop instead of ATen's im2col or per-call oneDNN primitive (direct_kernels.hpp).
  if (pad_value == 0.0)
    if (std::optional<at::Tensor> y = direct_conv(x, w, bias, win, group)) return *y;
  std::vector<int64_t> native;
  const at::Tensor padded = pads_for_aten(x, win, pad_value, false, native);
  const std::vector<int64_t> no_output_padding(native.size(), 0);
  return at::convolution(as_autocast_input(padded), as_autocast_input(w), as_autocast_input(bias), win.strides,
                         native, win.dilations, false, no_output_padding, group);
}

void conv(ExecContext& ctx) {
  ctx.outputs = {convolve(ctx, ctx.input(0), ctx.input(1), ctx.input(2), 0.0)};
}

// com.microsoft FusedConv (ONNX Runtime's Conv + Add + activation fusion):
// activation(Conv(X, W, B) + Z), Z the optional input 3. activation_params
// are the activation's attributes in order: LeakyRelu and Elu [alpha],
// HardSigmoid [alpha, beta], Clip [min, max].
void fused_conv(ExecContext& ctx) {
  at::Tensor y = convolve(ctx, ctx.input(0), ctx.input(1), ctx.input(2), 0.0);
  if (ctx.has_input(3)) y = y + ctx.input(3);
  const std::string activation = ctx.node().attr_string("activation", "");
  if (!activation.empty()) {
    static const std::map<std::string, std::vector<const char*>> kParamNames = {
        {"LeakyRelu", {"alpha"}},
        {"Elu", {"alpha"}},
        {"HardSigmoid", {"alpha", "beta"}},
        {"Clip", {"min", "max"}}};
    const std::vector<double> params = attr_floats(ctx.node(), "activation_params");
    std::map<std::string, AttrValue> attrs;
    if (auto names = kParamNames.find(activation); names != kParamNames.end())
      for (size_t i = 0; i < params.size() && i < names->second.size(); ++i)
        attrs[names->second[i]] = params[i];
    y = run_activation(ctx, activation, std::move(attrs), y);
  }
  ctx.outputs = {y};
}

// ONNX ConvTranspose output size per dim (operators.md):
//   out = stride*(in-1) + output_padding + (kernel-1)*dilation + 1 - pad_begin - pad_end
// With output_shape (or auto_pad SAME_*: out = in*stride) the pads are
// derived from the requested size instead.
void conv_transpose(ExecContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  const at::Tensor& w = ctx.input(1);
  if (x.dim() < 3 || w.dim() != x.dim()) fail_input(ctx, "ConvTranspose needs input and weight of the same rank >= 3");
  const Node& node = ctx.node();
  const auto in = spatial_dims(x);
  const size_t n = in.size();
  const auto kernel = attr_ints_or(node, "kernel_shape", spatial_dims(w));
  const auto strides = attr_ints_or(node, "strides", std::vector<int64_t>(n, 1));
  const auto dilations = attr_ints_or(node, "dilations", std::vector<int64_t>(n, 1));
  const auto output_padding = attr_ints_or(node, "output_padding", std::vector<int64_t>(n, 0));
  auto output_shape = node.attr_ints("output_shape");
  if (output_shape.size() == n + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  if (kernel.size() != n || strides.size() != n || dilations.size() != n || output_padding.size() != n ||
      (!output_shape.empty() && output_shape.size() != n))
    fail_input(ctx, "kernel_shape, strides, dilations, output_padding or output_shape has the wrong length");
  check_window_values(ctx, kernel, strides, dilations);
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  std::vector<int64_t> full(n), begin(n, 0), end(n, 0), out(n);
  const auto pads = node.attr_ints("pads");
  for (size_t i = 0; i < n; ++i) {
    full[i] = strides[i] * (in[i] - 1) + output_padding[i] + (kernel[i] - 1) * dilations[i] + 1;
    if (!output_shape.empty() || same) {
      out[i] = !output_shape.empty() ? output_shape[i] : in[i] * strides[i];
      const int64_t total = full[i] - out[i];
      const bool upper = auto_pad != "SAME_LOWER";  // output_shape without auto_pad: as SAME_UPPER
      begin[i] = upper ? total / 2 : total - total / 2;
      end[i] = total - begin[i];
    } else {
      if (!pads.empty()) {
        if (pads.size() != 2 * n) fail_input(ctx, "pads must have 2 entries per spatial dim");
        begin[i] = pads[i];
        end[i] = pads[i + n];
      }
      out[i] = full[i] - begin[i] - end[i];
    }
  }
  const int64_t group = node.attr_int("group", 1);
  bool native = begin == end;
  for (size_t i = 0; native && i < n; ++i)
    native = begin[i] >= 0 && (output_padding[i] < strides[i] || output_padding[i] < dilations[i]);
  if (native) {
    ctx.outputs = {at::convolution(as_autocast_input(x), as_autocast_input(w), as_autocast_input(ctx.input(2)), strides,
                                   begin, dilations, true, output_padding, group)};
    return;
  }
  // General case: the unpadded transposed convolution (size full - output_padding),
  // then crop pad_begin at the start and crop/extend the end to the requested
  // size (constant_pad_nd crops with negative pads), then the bias, so the
  // extended positions hold the bias as ONNX says.
  const std::vector<int64_t> zeros(n, 0);
  at::Tensor y =
      at::convolution(as_autocast_input(x), as_autocast_input(w), {}, strides, zeros, dilations, true, zeros, group);
  std::vector<int64_t> crop_begin(n), crop_end(n);
  for (size_t i = 0; i < n; ++i) {
    crop_begin[i] = -begin[i];
    crop_end[i] = out[i] + begin[i] - y.size(int64_t(i) + 2);
  }
  y = pad_spatial(y, crop_begin, crop_end, 0.0);
  if (ctx.has_input(2)) y = y + along_axis(ctx.input(2), 1, y.dim());
  ctx.outputs = {y};
}

// conv(x - x_zero_point, w - w_zero_point) as exact int32: oneDNN's int8
// convolution where it applies (int8_kernels.hpp), else in double (padding
// is with the zero point, i.e. 0 after subtraction).
at::Tensor integer_convolution(const ExecContext& ctx, size_t x_at, size_t x_zp_at, size_t w_at, size_t w_zp_at) {
  const at::Tensor& xq = ctx.input(x_at);
  const at::Tensor& wq = ctx.input(w_at);
  if (xq.dim() >= 3 && wq.dim() == xq.dim()) {
    const Window win = resolve_window(ctx, attr_ints_or(ctx.node(), "kernel_shape", spatial_dims(wq)), spatial_dims(xq));
    if (auto acc = int8_conv(xq, ctx.input(x_zp_at), wq, ctx.input(w_zp_at), win, ctx.node().attr_int("group", 1),
                             input_is_constant(ctx, w_at)))
      return *acc;
  }
  const at::Tensor x = subtract_zero_point(xq, ctx.input(x_zp_at), 1);
  const at::Tensor w = subtract_zero_point(wq, ctx.input(w_zp_at), 0);
  return at::round(convolve(ctx, x, w, {}, 0.0)).to(at::kInt);
}

// ConvInteger: int32 = conv(x - x_zero_point, w - w_zero_point).
void conv_integer(ExecContext& ctx) { ctx.outputs = {integer_convolution(ctx, 0, 2, 1, 3)}; }

// QLinearConv: inputs x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B(int32).
void qlinear_conv(ExecContext& ctx) {
  at::Tensor acc = integer_convolution(ctx, 0, 2, 3, 5);
  if (ctx.has_input(8)) acc = acc + along_axis(ctx.input(8).to(at::kInt), 1, acc.dim());
  const at::Tensor scale =
      ctx.input(1).to(at::kDouble) * along_axis(ctx.input(4).to(at::kDouble), 1, acc.dim()) / ctx.input(6).to(at::kDouble);
  ctx.outputs = {requantize(acc, scale, ctx.input(7))};
}

// Conv of DequantizeLinear(x_q) and DequantizeLinear(w_q) (a QDQ model):
// inputs x_q, x_scale, x_zp, w_q (a constant), w_scale (per output channel
// or one), w_zp, B (float). The integer convolution exactly, then one scale
// per output channel and the bias: what the float Conv of the dequantized
// operands computes, without its float rounding. Without an int8 kernel for
// the form, the operands dequantized and the float Conv, as written.
void qdq_conv(ExecContext& ctx) {
  const at::Tensor& xq = ctx.input(0);
  const at::Tensor& wq = ctx.input(3);
  if (xq.dim() >= 3 && wq.dim() == xq.dim()) {
    const Window win = resolve_window(ctx, attr_ints_or(ctx.node(), "kernel_shape", spatial_dims(wq)), spatial_dims(xq));
    const at::Tensor scale = ctx.input(1).to(at::kFloat).reshape({-1}) * ctx.input(4).to(at::kFloat).reshape({-1});
    if (auto acc = int8_conv(xq, ctx.input(2), wq, ctx.input(5), win, ctx.node().attr_int("group", 1), true, scale,
                             ctx.input(6))) {
      // Dequantized by the kernel, or the int32 accumulator to dequantize here.
      ctx.outputs = {acc->scalar_type() == at::kFloat
                         ? *acc
                         : dequantize_accumulator(*acc, ctx.input(1), ctx.input(4), ctx.input(6), 1)};
      return;
    }
  }
  ctx.outputs = {convolve(ctx, dequantize_along(xq, ctx.input(1), ctx.input(2), 1),
                          dequantize_along(wq, ctx.input(4), ctx.input(5), 0), ctx.input(6), 0.0)};
}

}  // namespace

void add_conv_executors(std::vector<ExecRule>& rules) {
  add_executor(rules, "Conv", conv);
  add_executor(rules, "ConvTranspose", conv_transpose);
  add_executor(rules, "ConvInteger", conv_integer, 10);
  add_executor(rules, "QLinearConv", qlinear_conv, 10);
  add_executor(rules, "FusedConv", fused_conv, 1, "com.microsoft");
}

void add_qdq_conv_executors(std::vector<ExecRule>& rules) { add_executor(rules, "Conv", qdq_conv, 1, kQdqDomain); }

}  // namespace modelstat::profiler

// Pooling and resampling: MaxPool (with Indices), AveragePool, LpPool, the
// global pools, MaxUnpool, GridSample, Resize and Upsample.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "profiler/ops/spatial_mean.hpp"
#include "profiler/ops/exec_helpers.hpp"

namespace modelstat::profiler {

namespace {

// The window of a pooling node: kernel_shape is required.
Window pool_window(const ExecContext& ctx, const at::Tensor& x) {
  if (x.dim() < 3 || x.dim() > 5) fail_input(ctx, "pooling supports 1-, 2- and 3-D inputs (rank 3 to 5)");
  const auto kernel = ctx.node().attr_ints("kernel_shape");
  if (int64_t(kernel.size()) != x.dim() - 2) fail_input(ctx, "kernel_shape must have one entry per spatial dim");
  return resolve_window(ctx, kernel, spatial_dims(x));
}

at::Tensor avg_pool(const at::Tensor& x, const Window& w, const std::vector<int64_t>& pads, bool ceil_mode,
                    bool count_include_pad) {
  switch (w.spatial_rank()) {
    case 1: return at::avg_pool1d(x, w.kernel, w.strides, pads, ceil_mode, count_include_pad);
    case 2: return at::avg_pool2d(x, w.kernel, w.strides, pads, ceil_mode, count_include_pad);
    default: return at::avg_pool3d(x, w.kernel, w.strides, pads, ceil_mode, count_include_pad);
  }
}

// Max pooling with ATen's per-plane argmax indices (1-D runs as 2-D with a
// unit height, so its indices are the positions along the one dim).
std::tuple<at::Tensor, at::Tensor> max_pool_with_indices(const at::Tensor& x, const Window& w,
                                                         const std::vector<int64_t>& pads, bool ceil_mode) {
  switch (w.spatial_rank()) {
    case 1: {
      auto [y, i] = at::max_pool2d_with_indices(x.unsqueeze(2), {1, w.kernel[0]}, {1, w.strides[0]}, {0, pads[0]},
                                                {1, w.dilations[0]}, ceil_mode);
      return {y.squeeze(2), i.squeeze(2)};
    }
    case 2: return at::max_pool2d_with_indices(x, w.kernel, w.strides, pads, w.dilations, ceil_mode);
    default: return at::max_pool3d_with_indices(x, w.kernel, w.strides, pads, w.dilations, ceil_mode);
  }
}

at::Tensor max_pool(const at::Tensor& x, const Window& w, const std::vector<int64_t>& pads, bool ceil_mode) {
  switch (w.spatial_rank()) {
    case 1: return at::max_pool1d(x, w.kernel, w.strides, pads, w.dilations, ceil_mode);
    case 2: return at::max_pool2d(x, w.kernel, w.strides, pads, w.dilations, ceil_mode);
    default: return at::max_pool3d(x, w.kernel, w.strides, pads, w.dilations, ceil_mode);
  }
}

// ATen's index is flat within one (possibly explicitly padded) plane; ONNX's
// is flat over the whole input tensor, N and C included, in row-major order
// (storage_order 0) or with the spatial dims column-major (storage_order 1).
at::Tensor onnx_indices(const at::Tensor& aten_index, const std::vector<int64_t>& plane_sizes,
                        const std::vector<int64_t>& offset, const std::vector<int64_t>& input_spatial,
                        bool column_major) {
  const size_t n = plane_sizes.size();
  std::vector<at::Tensor> coord(n);
  at::Tensor rest = aten_index;
  for (size_t i = n; i-- > 0;) {
    coord[i] = at::remainder(rest, plane_sizes[i]) - offset[i];
    rest = at::div(rest, plane_sizes[i], "floor");
  }
  at::Tensor flat = at::zeros_like(aten_index);
  for (size_t k = 0; k < n; ++k) {
    const size_t i = column_major ? n - 1 - k : k;
    flat = flat * input_spatial[i] + coord[i];
  }
  const int64_t planes = aten_index.size(0) * aten_index.size(1);
  std::vector<int64_t> plane_shape{aten_index.size(0), aten_index.size(1)};
  plane_shape.resize(size_t(aten_index.dim()), 1);
  const at::Tensor plane = at::arange(planes, aten_index.options()).reshape(plane_shape) * product(input_spatial);
  return flat + plane;
}

void max_pool_op(ExecContext& ctx) {
  const at::Tensor& input = ctx.input(0);
  const Window w = pool_window(ctx, input);
  const bool ceil_mode = ctx.node().attr_int("ceil_mode", 0) != 0;
  // ATen's CPU max pooling is floating-point only: 8/16-bit integers pool
  // exactly in float.
  const bool integral = !at::isFloatingType(input.scalar_type());
  const at::Tensor x = integral ? input.to(at::kFloat) : input;
  std::vector<int64_t> pads;
  const at::Tensor padded = pads_for_aten(x, w, -std::numeric_limits<double>::infinity(), true, pads);
  if (!ctx.wants_output(1)) {
    // ATen's CPU max pooling of an NCHW float tensor walks one plane at a
    // time, unvectorised: 5.2 ms for a 3x3 / 2 pool of 1x64x112x112 where the
    // channels-last kernel (vectorised over the channels) takes 0.38 on the
    // thirteenth session's VM. An NCHW input (an image as fed, what a
    // Reshape or an elementwise op on graph inputs leaves) is pooled
    // channels-last: one copy, and the output stays channels-last as a Conv
    // group's does.
    const bool nchw_planes = padded.dim() == 4 && padded.size(1) > 1 && padded.device().is_cpu() &&
                             padded.scalar_type() == at::kFloat &&
                             !padded.is_contiguous(at::MemoryFormat::ChannelsLast);
    at::Tensor y = max_pool(nchw_planes ? padded.contiguous(at::MemoryFormat::ChannelsLast) : padded, w, pads,
                            ceil_mode);
    // A training step (autograd recording) turns the output back to NCHW:
    // its convolutions run unfused on ATen, which follows its input's layout,
    // and channels-last training convs ran slower than NCHW ones (ResNet-18's
    // step: backward 119-129 ms against PyTorch's NCHW 101-103 on the
    // sixteenth session's VM), and a step's Conv groups are not fused.
    if (nchw_planes && y.requires_grad()) y = y.contiguous();
    ctx.outputs = {integral ? y.to(input.scalar_type()) : y};
    return;
  }
  auto [y, index] = max_pool_with_indices(padded, w, pads, ceil_mode);
  const bool explicit_pads = padded.sizes() != x.sizes();
  const auto offset = explicit_pads ? w.pads_begin : std::vector<int64_t>(pads.size(), 0);
  const bool column_major = ctx.node().attr_int("storage_order", 0) != 0;
  ctx.outputs = {integral ? y.to(input.scalar_type()) : y,
                 onnx_indices(index, spatial_dims(padded), offset, spatial_dims(x), column_major)};
}

void average_pool(ExecContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  const Window w = pool_window(ctx, x);
  for (int64_t d : w.dilations)
    if (d != 1) fail_input(ctx, "AveragePool with dilations is not supported");
  const bool ceil_mode = ctx.node().attr_int("ceil_mode", 0) != 0;
  const bool include_pad = ctx.node().attr_int("count_include_pad", 0) != 0;
  std::vector<int64_t> pads;
  const at::Tensor padded = pads_for_aten(x, w, 0.0, true, pads);
  if (padded.sizes() == x.sizes() || include_pad) {
    ctx.outputs = {avg_pool(padded, w, pads, ceil_mode, include_pad || padded.sizes() != x.sizes())};
    return;
  }
  // Explicit (asymmetric) pads that must not count: window sum over window
  // count, both as means over the zero-padded planes (the kernel sizes cancel).
  std::vector<int64_t> ones_shape(size_t(x.dim()), 1);
  const auto spatial = spatial_dims(x);
  std::copy(spatial.begin(), spatial.end(), ones_shape.begin() + 2);
  const at::Tensor count = avg_pool(pad_spatial(at::ones(ones_shape, x.options()), w.pads_begin, w.pads_end, 0.0), w,
                                    pads, ceil_mode, true);
  ctx.outputs = {avg_pool(padded, w, pads, ceil_mode, true) / count};
}

// LpPool's and GlobalLpPool's p: a float in opset 1, an int from 2 (default 2 in both).
double lp_pool_p(const ExecContext& ctx) {
  return ctx.opset() < 2 ? ctx.node().attr_float("p", 2.0) : double(ctx.node().attr_int("p", 2));
}

// (sum over the window of |x|^p)^(1/p), zero padding.
void lp_pool(ExecContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  const Window w = pool_window(ctx, x);
  const double p = lp_pool_p(ctx);
  const at::Tensor powered = pad_spatial(at::abs(x).pow(p), w.pads_begin, w.pads_end, 0.0);
  const at::Tensor sum = avg_pool(powered, w, std::vector<int64_t>(w.kernel.size(), 0), false, true) *
                         double(product(w.kernel));
  ctx.outputs = {sum.pow(1.0 / p)};
}

std::vector<int64_t> spatial_axes(const at::Tensor& x) {
  std::vector<int64_t> axes;
  for (int64_t d = 2; d < x.dim(); ++d) axes.push_back(d);
  return axes;
}

void global_average_pool(ExecContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  ctx.outputs = {spatial_mean_applies(x) ? spatial_mean(x) : x.mean(spatial_axes(x), true)};
}
void global_max_pool(ExecContext& ctx) { ctx.outputs = {at::amax(ctx.input(0), spatial_axes(ctx.input(0)), true)}; }
void global_lp_pool(ExecContext& ctx) {
  const double p = lp_pool_p(ctx);
  ctx.outputs = {at::norm(ctx.input(0), p, spatial_axes(ctx.input(0)), true)};
}

// Scatters X into zeros at MaxPool's indices, which are flat over the
// default output, (in - 1) * stride + kernel - pad_begin - pad_end per dim;
// a larger output_shape adds zeros at the end of each dim (as ONNX's
// reference output for test_maxunpool_export_with_output_shape shows).
void max_unpool(ExecContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  const Window w = pool_window(ctx, x);
  std::vector<int64_t> shape{x.size(0), x.size(1)};
  for (int64_t i = 0; i < w.spatial_rank(); ++i)
    shape.push_back((x.size(i + 2) - 1) * w.strides[size_t(i)] + w.kernel[size_t(i)] - w.pads_begin[size_t(i)] -
                    w.pads_end[size_t(i)]);
  at::Tensor y = at::zeros(shape, x.options());
  y.view(-1).index_put_({ctx.input(1).reshape(-1).to(at::kLong)}, x.reshape(-1));
  if (ctx.has_input(2)) {
    const auto requested = ctx.input_ints(2);
    if (requested.size() != shape.size()) fail_input(ctx, "output_shape must have one entry per dim");
    std::vector<int64_t> begin(size_t(w.spatial_rank()), 0), end;
    for (size_t i = 2; i < shape.size(); ++i) end.push_back(requested[i] - shape[i]);
    y = pad_spatial(y, begin, end, 0.0);
  }
  ctx.outputs = {y};
}

// Opset 16 names (bilinear, nearest, bicubic) and opset 20's (linear, cubic).
void grid_sample(ExecContext& ctx) {
  const std::string mode = ctx.node().attr_string("mode", "bilinear");
  const std::string padding = ctx.node().attr_string("padding_mode", "zeros");
  int64_t interpolation = 0, padding_mode = 0;
  if (mode == "bilinear" || mode == "linear") interpolation = 0;
  else if (mode == "nearest") interpolation = 1;
  else if (mode == "bicubic" || mode == "cubic") interpolation = 2;
  else fail_input(ctx, "unsupported GridSample mode '" + mode + "'");
  if (padding == "zeros") padding_mode = 0;
  else if (padding == "border") padding_mode = 1;
  else if (padding == "reflection") padding_mode = 2;
  else fail_input(ctx, "unsupported GridSample padding_mode '" + padding + "'");
  ctx.outputs = {at::grid_sampler(ctx.input(0), ctx.input(1).to(ctx.input(0).scalar_type()), interpolation,
                                  padding_mode, ctx.node().attr_int("align_corners", 0) != 0)};
}

// ---- Resize / Upsample --------------------------------------------------------

struct ResizeSpec {
  std::string mode;          // nearest | linear | cubic
  std::string coordinates;   // coordinate_transformation_mode
  std::string nearest_mode;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0.0;
  std::vector<double> scales;  // per dim
  std::vector<int64_t> sizes;  // output size per dim
  std::vector<double> roi;     // tf_crop_and_resize: starts then ends, per dim
};

std::vector<double> input_doubles(const ExecContext& ctx, size_t i) {
  if (!ctx.has_input(i) || ctx.input(i).numel() == 0) return {};
  const at::Tensor t = ctx.input(i).to(at::kCPU).to(at::kDouble).contiguous();
  return std::vector<double>(t.data_ptr<double>(), t.data_ptr<double>() + t.numel());
}

// Reads the attributes and the scales/sizes/roi inputs of every version:
// Upsample 1 (height_scale and width_scale attributes of a 4-D input),
// Upsample 7 (scales attribute), Upsample 9 and Resize 10 (scales input), all
// with asymmetric coordinates and the "legacy" nearest pick (below); Resize
// 11+ (roi, scales, sizes and the coordinate_transformation_mode family of
// attributes; 18's axes).
ResizeSpec resize_spec(const ExecContext& ctx) {
  const Node& node = ctx.node();
  const at::Tensor& x = ctx.input(0);
  const int64_t rank = x.dim();
  ResizeSpec s;
  s.mode = node.attr_string("mode", "nearest");
  if (s.mode == "bilinear" || s.mode == "trilinear") s.mode = "linear";
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  const bool modern = node.op_type == "Resize" && ctx.opset() >= 11;
  if (!modern) {
    s.coordinates = "asymmetric";
    s.nearest_mode = "legacy";
    if (node.op_type == "Upsample" && ctx.opset() < 7) {
      if (rank != 4) fail_input(ctx, "Upsample-1 resizes a 4-D [N,C,H,W] input, not rank " + std::to_string(rank));
      if (!has_attr(ctx, "height_scale") || !has_attr(ctx, "width_scale"))
        fail_input(ctx, "Upsample-1 needs the height_scale and width_scale attributes");
      scales = {1.0, 1.0, node.attr_float("height_scale", 1.0), node.attr_float("width_scale", 1.0)};
    } else {
      scales = node.op_type == "Upsample" && ctx.opset() < 9 ? attr_floats(node, "scales") : input_doubles(ctx, 1);
    }
  } else {
    s.coordinates = node.attr_string("coordinate_transformation_mode", "half_pixel");
    s.nearest_mode = node.attr_string("nearest_mode", "round_prefer_floor");
    s.cubic_a = node.attr_float("cubic_coeff_a", -0.75);
    s.exclude_outside = node.attr_int("exclude_outside", 0) != 0;
    s.extrapolation = node.attr_float("extrapolation_value", 0.0);
    s.roi = input_doubles(ctx, 1);
    scales = input_doubles(ctx, 2);
    if (ctx.has_input(3) && ctx.input(3).numel() > 0) sizes = ctx.input_ints(3);
    if (node.attr_int("antialias", 0) != 0) fail_input(ctx, "unsupported Resize mode: antialias");
    if (node.attr_string("keep_aspect_ratio_policy", "stretch") != "stretch")
      fail_input(ctx, "unsupported Resize mode: keep_aspect_ratio_policy");
  }
  // Opset 18's axes: scales/sizes/roi name only some dims.
  auto axes = node.attr_ints("axes");
  if (!axes.empty()) {
    for (auto& a : axes) a = normalize_axis(ctx, a, rank);
    auto spread = [&](auto values, auto fill) {
      std::vector<decltype(fill)> all(size_t(rank), fill);
      for (size_t i = 0; i < axes.size() && i < values.size(); ++i) all[size_t(axes[i])] = values[i];
      return all;
    };
    if (!scales.empty()) scales = spread(scales, 1.0);
    if (!sizes.empty()) {
      std::vector<int64_t> full(x.sizes().begin(), x.sizes().end());
      for (size_t i = 0; i < axes.size() && i < sizes.size(); ++i) full[size_t(axes[i])] = sizes[i];
      sizes = full;
    }
    if (!s.roi.empty()) {
      std::vector<double> starts(s.roi.begin(), s.roi.begin() + int64_t(axes.size()));
      std::vector<double> ends(s.roi.begin() + int64_t(axes.size()), s.roi.end());
      auto full_starts = spread(starts, 0.0), full_ends = spread(ends, 1.0);
      s.roi = full_starts;
      s.roi.insert(s.roi.end(), full_ends.begin(), full_ends.end());
    }
  }
  if (s.mode != "nearest" && s.mode != "linear" && s.mode != "cubic")
    fail_input(ctx, "unsupported Resize mode '" + s.mode + "'");
  s.scales.resize(size_t(rank));
  s.sizes.resize(size_t(rank));
  if (!sizes.empty()) {
    if (int64_t(sizes.size()) != rank) fail_input(ctx, "Resize sizes must have one entry per dim");
    for (int64_t d = 0; d < rank; ++d) {
      s.sizes[size_t(d)] = sizes[size_t(d)];
      s.scales[size_t(d)] = x.size(d) ? double(sizes[size_t(d)]) / double(x.size(d)) : 1.0;
    }
  } else {
    if (int64_t(scales.size()) != rank) fail_input(ctx, "Resize needs scales or sizes with one entry per dim");
    for (int64_t d = 0; d < rank; ++d) {
      s.scales[size_t(d)] = scales[size_t(d)];
      s.sizes[size_t(d)] = int64_t(std::floor(double(x.size(d)) * scales[size_t(d)]));
    }
  }
  if (s.coordinates == "tf_crop_and_resize" && int64_t(s.roi.size()) != 2 * rank)
    fail_input(ctx, "Resize tf_crop_and_resize needs an roi with 2 entries per dim");
  return s;
}

// Source coordinate of each output position along dim d, as ONNX's reference
// (onnx/backend/test/case/node/resize.py) computes it; note that the
// "output length" in align_corners is scale * input length, not the rounded size.
std::vector<double> source_coordinates(const ExecContext& ctx, const ResizeSpec& s, int64_t d, int64_t in) {
  const int64_t out = s.sizes[size_t(d)];
  const double scale = s.scales[size_t(d)];
  const double out_f = scale * double(in);
  std::vector<double> xs(static_cast<size_t>(out));
  for (int64_t i = 0; i < out; ++i) {
    const double x = double(i);
    double v = 0;
    if (s.coordinates == "half_pixel") v = (x + 0.5) / scale - 0.5;
    else if (s.coordinates == "pytorch_half_pixel") v = out_f == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    else if (s.coordinates == "align_corners") v = out_f == 1 ? 0.0 : x * double(in - 1) / (out_f - 1);
    else if (s.coordinates == "asymmetric") v = x / scale;
    else if (s.coordinates == "tf_half_pixel_for_nn") v = (x + 0.5) / scale;
    else if (s.coordinates == "tf_crop_and_resize") {
      const double start = s.roi[size_t(d)], end = s.roi[size_t(d) + s.roi.size() / 2];
      v = out_f == 1 ? (end - start) * double(in - 1) / 2 : start * double(in - 1) + x * (end - start) * double(in - 1) / (out_f - 1);
    } else {
      fail_input(ctx, "unsupported Resize mode: coordinate_transformation_mode '" + s.coordinates + "'");
    }
    xs[size_t(i)] = v;
  }
  return xs;
}

// Interpolation taps along one dim: tap k of output i reads index[k][i] with weight[k][i].
struct Taps {
  std::vector<std::vector<int64_t>> index;
  std::vector<std::vector<double>> weight;
  std::vector<bool> outside;  // tf_crop_and_resize: the extrapolation value instead
};

// Nearest picks: nearest_mode's, and "legacy" for Upsample and Resize-10,
// whose specs name no rule: floor when the dim is enlarged (ONNX's Upsample
// examples) and ceil when it shrinks, as ONNX 1.5's own Resize-10 test data
// has it (test_resize_downsample_nearest: [1, 2, 3, 4] at scale 0.6 gives
// [1, 3]) and ONNX Runtime does.
Taps resize_taps(const ExecContext& ctx, const ResizeSpec& s, const std::vector<double>& xs, int64_t in,
                 double scale) {
  const size_t out = xs.size();
  const int64_t count = s.mode == "nearest" ? 1 : s.mode == "linear" ? 2 : 4;
  Taps taps;
  taps.index.assign(size_t(count), std::vector<int64_t>(out));
  taps.weight.assign(size_t(count), std::vector<double>(out));
  taps.outside.assign(out, false);
  const double a = s.cubic_a;
  // Keys' cubic convolution kernel with parameter A.
  auto cubic = [a](double t) {
    t = std::abs(t);
    if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
    if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
    return 0.0;
  };
  for (size_t i = 0; i < out; ++i) {
    const double x = xs[i];
    if (s.coordinates == "tf_crop_and_resize" && (x < 0 || x > double(in - 1))) taps.outside[i] = true;
    const double base = std::floor(x);
    const double ratio = x - base;
    std::vector<int64_t> idx(static_cast<size_t>(count));
    std::vector<double> w(static_cast<size_t>(count));
    if (s.mode == "nearest") {
      double pick = base;
      if (s.nearest_mode == "round_prefer_floor") pick = ratio <= 0.5 ? base : base + 1;
      else if (s.nearest_mode == "round_prefer_ceil") pick = ratio < 0.5 ? base : base + 1;
      else if (s.nearest_mode == "ceil" || (s.nearest_mode == "legacy" && scale < 1)) pick = std::ceil(x);
      else if (s.nearest_mode != "floor" && s.nearest_mode != "legacy") fail_input(ctx, "unsupported Resize mode: nearest_mode '" + s.nearest_mode + "'");
      idx[0] = int64_t(pick);
      w[0] = 1;
    } else if (s.mode == "linear") {
      idx = {int64_t(base), int64_t(base) + 1};
      w = {1 - ratio, ratio};
    } else {
      for (int64_t k = 0; k < 4; ++k) {
        idx[size_t(k)] = int64_t(base) - 1 + k;
        w[size_t(k)] = cubic(ratio + 1 - double(k));
      }
    }
    if (s.exclude_outside && count > 1) {
      double total = 0;
      for (int64_t k = 0; k < count; ++k) {
        if (idx[size_t(k)] < 0 || idx[size_t(k)] >= in) w[size_t(k)] = 0;
        total += w[size_t(k)];
      }
      if (total != 0)
        for (auto& v : w) v /= total;
    }
    for (int64_t k = 0; k < count; ++k) {
      // Out-of-range taps read the edge (ONNX pads with edge values).
      taps.index[size_t(k)][i] = std::clamp<int64_t>(idx[size_t(k)], 0, in - 1);
      taps.weight[size_t(k)][i] = w[size_t(k)];
    }
  }
  return taps;
}

// Exact ONNX semantics for every mode: Resize is separable, so each resized
// dim is one weighted sum of index_selects (innermost dim first, as the
// reference nests it, which matters only for tf_crop_and_resize's
// extrapolation).
at::Tensor resize_separable(const ExecContext& ctx, const at::Tensor& input, const ResizeSpec& s) {
  at::Tensor y = input;
  const bool interpolating = s.mode != "nearest";
  if (interpolating && !at::isFloatingType(y.scalar_type())) y = y.to(at::kFloat);
  for (int64_t d = input.dim(); d-- > 0;) {
    const int64_t in = input.size(d);
    const auto xs = source_coordinates(ctx, s, d, in);
    bool identity = int64_t(xs.size()) == in && s.coordinates != "tf_crop_and_resize";
    for (size_t i = 0; identity && i < xs.size(); ++i) identity = xs[i] == double(i);
    if (identity) continue;
    if (in == 0) fail_input(ctx, "cannot resize an empty dim");
    const Taps taps = resize_taps(ctx, s, xs, in, s.scales[size_t(d)]);
    std::vector<int64_t> weight_shape(size_t(y.dim()), 1);
    weight_shape[size_t(d)] = int64_t(xs.size());
    at::Tensor sum;
    for (size_t k = 0; k < taps.index.size(); ++k) {
      const at::Tensor index = at::tensor(taps.index[k], at::kLong).to(y.device());
      at::Tensor term = y.index_select(d, index);
      if (interpolating)
        term = term * at::tensor(taps.weight[k], at::kDouble).to(y.device(), y.scalar_type()).reshape(weight_shape);
      sum = sum.defined() ? sum + term : term;
    }
    if (s.coordinates == "tf_crop_and_resize") {
      std::vector<uint8_t> outside(taps.outside.begin(), taps.outside.end());
      const at::Tensor mask = at::tensor(outside, at::kByte).to(y.device(), at::kBool).reshape(weight_shape);
      sum = at::where(mask, at::scalar_tensor(s.extrapolation, sum.options()), sum);
    }
    y = sum;
  }
  if (y.scalar_type() != input.scalar_type()) y = at::round(y).to(input.scalar_type());
  return y;
}

// The ATen kernels a PyTorch model would run, for the modes they implement
// exactly as ONNX does: nearest with asymmetric+floor, linear and cubic
// (A = -0.75, no exclude_outside) with half-pixel or align-corners
// coordinates, resizing only the spatial dims of a floating-point tensor.
// Undefined when they do not apply (then the separable path runs).
at::Tensor resize_aten(const at::Tensor& x, const ResizeSpec& s) {
  const int64_t rank = x.dim();
  if (rank < 3 || rank > 5 || !at::isFloatingType(x.scalar_type())) return {};
  for (int64_t d = 0; d < 2; ++d)
    if (s.sizes[size_t(d)] != x.size(d) || s.scales[size_t(d)] != 1.0) return {};
  std::vector<int64_t> out(s.sizes.begin() + 2, s.sizes.end());
  std::vector<c10::optional<double>> scales;
  bool integral_output = true;  // align_corners divides by scale*in - 1, ATen by size - 1
  bool sizes_above_one = true;
  for (int64_t d = 2; d < rank; ++d) {
    scales.emplace_back(s.scales[size_t(d)]);
    integral_output = integral_output && s.scales[size_t(d)] * double(x.size(d)) == double(s.sizes[size_t(d)]);
    sizes_above_one = sizes_above_one && s.sizes[size_t(d)] > 1;
  }
  if (s.mode == "nearest") {
    bool enlarging = true;  // the legacy pick is floor on every dim
    for (double scale : s.scales) enlarging = enlarging && scale >= 1;
    if (s.coordinates != "asymmetric" || !(s.nearest_mode == "floor" || (s.nearest_mode == "legacy" && enlarging)))
      return {};
    switch (rank) {
      case 3: return at::upsample_nearest1d(x, out, scales[0]);
      case 4: return at::upsample_nearest2d(x, out, scales[0], scales[1]);
      default: return at::upsample_nearest3d(x, out, scales[0], scales[1], scales[2]);
    }
  }
  bool align_corners = false;
  if (s.coordinates == "align_corners" && integral_output) align_corners = true;
  else if (s.coordinates == "pytorch_half_pixel" && !sizes_above_one) return {};
  else if (s.coordinates != "half_pixel" && s.coordinates != "pytorch_half_pixel") return {};
  if (s.exclude_outside) return {};
  if (s.mode == "linear") {
    switch (rank) {
      case 3: return at::upsample_linear1d(x, out, align_corners, scales[0]);
      case 4: return at::upsample_bilinear2d(x, out, align_corners, scales[0], scales[1]);
      default: return at::upsample_trilinear3d(x, out, align_corners, scales[0], scales[1], scales[2]);
    }
  }
  if (rank != 4 || s.cubic_a != -0.75) return {};
  return at::upsample_bicubic2d(x, out, align_corners, scales[0], scales[1]);
}

void resize(ExecContext& ctx) {
  const ResizeSpec spec = resize_spec(ctx);
  at::Tensor y = resize_aten(ctx.input(0), spec);
  if (!y.defined()) y = resize_separable(ctx, ctx.input(0), spec);
  ctx.outputs = {y};
}

}  // namespace

void add_pooling_executors(std::vector<ExecRule>& rules) {
  add_executor(rules, "MaxPool", max_pool_op);
  add_executor(rules, "AveragePool", average_pool);
  add_executor(rules, "LpPool", lp_pool);
  add_executor(rules, "GlobalAveragePool", global_average_pool);
  add_executor(rules, "GlobalMaxPool", global_max_pool);
  add_executor(rules, "GlobalLpPool", global_lp_pool);
  add_executor(rules, "MaxUnpool", max_unpool, 9);
  add_executor(rules, "GridSample", grid_sample, 16);
  add_executor(rules, "Resize", resize, 10);
  add_executor(rules, "Upsample", resize);
}

}  // namespace modelstat::profiler

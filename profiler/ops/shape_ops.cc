// Shape and data-movement executors. Ops the cost model counts as data
// movement (Slice, Split, Transpose, Expand...) produce materialised
// (contiguous) tensors, so their copy is timed at the node, as a runtime would
// do it; the metadata-only views (Reshape, Flatten, Squeeze, Unsqueeze,
// Identity, inference Dropout) stay views.
#include <ATen/core/grad_mode.h>

#include <cstring>
#include <limits>
#include <optional>
#include <numeric>
#include <string>

#include <ATen/Parallel.h>

#include "analyzer/op_traits.hpp"
#include "profiler/ops/concat_rows.hpp"
#include "profiler/ops/exec_helpers.hpp"

namespace modelstat::profiler {
namespace {

// Negative indices count from the end of a dim of size n.
at::Tensor wrap_indices(const at::Tensor& idx, int64_t n) {
  const at::Tensor i = idx.to(at::kLong);
  return at::where(i < 0, i + n, i);
}

void exec_identity(ExecContext& ctx) { ctx.outputs = {need_input(ctx, 0)}; }

void exec_concat(ExecContext& ctx) {
  std::vector<at::Tensor> parts;
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i)) parts.push_back(ctx.input(i));
  if (parts.empty()) fail_input(ctx, "Concat needs at least one input");
  if (!has_attr(ctx, "axis") && ctx.opset() >= 4) fail_input(ctx, "Concat needs the 'axis' attribute");
  const int64_t axis = normalize_axis(ctx, ctx.node().attr_int("axis", 1), parts[0].dim());
  if (std::optional<at::Tensor> out = concat_rows(parts, axis)) {
    ctx.outputs = {*out};
    return;
  }
  ctx.outputs = {at::cat(parts, axis)};
}

// Split: sizes from the 'split' attribute (before 13), input 1 (13+, and
// opset 1's optional input), else equal parts, one per output (opset 18:
// num_outputs, the last part smaller when uneven).
void exec_split(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const int64_t axis = normalize_axis(ctx, ctx.node().attr_int("axis", 0), x.dim());
  const int64_t dim = x.size(axis);
  std::vector<int64_t> sizes;
  if (ctx.has_input(1)) sizes = ctx.input_ints(1);
  else if (ctx.opset() < 13 && has_attr(ctx, "split")) sizes = ctx.node().attr_ints("split");
  if (sizes.empty()) {
    const int64_t n = has_attr(ctx, "num_outputs") ? ctx.node().attr_int("num_outputs", 1) : int64_t(ctx.num_outputs());
    if (n <= 0) fail_input(ctx, "Split needs at least one output");
    if (dim % n != 0 && ctx.opset() < 18)
      fail_input(ctx, "dim " + std::to_string(dim) + " does not split into " + std::to_string(n) + " equal parts");
    const int64_t chunk = (dim + n - 1) / n;
    for (int64_t i = 0, left = dim; i < n; ++i, left -= chunk) sizes.push_back(std::max<int64_t>(0, std::min(chunk, left)));
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) fail_input(ctx, "negative split size");
    total += s;
  }
  if (total != dim) fail_input(ctx, "split sizes add up to " + std::to_string(total) + ", not " + std::to_string(dim));
  if (sizes.size() != ctx.num_outputs()) fail_input(ctx, "split has " + std::to_string(sizes.size()) + " parts for " +
                                                       std::to_string(ctx.num_outputs()) + " outputs");
  ctx.outputs.clear();
  for (const at::Tensor& part : at::split_with_sizes(x, sizes, axis)) ctx.outputs.push_back(part.contiguous());
}

// Slice: starts/ends/axes attributes before opset 10; starts, ends, axes,
// steps inputs from 10. Indices clamp; negative steps walk backwards.
void exec_slice(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    starts = ctx.node().attr_ints("starts");
    ends = ctx.node().attr_ints("ends");
    axes = ctx.node().attr_ints("axes");
  } else {
    starts = ctx.input_ints(1);
    ends = ctx.input_ints(2);
    if (ctx.has_input(3)) axes = ctx.input_ints(3);
    if (ctx.has_input(4)) steps = ctx.input_ints(4);
  }
  if (starts.size() != ends.size()) fail_input(ctx, "starts and ends differ in length");
  if (axes.empty()) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) fail_input(ctx, "axes/steps length mismatch");
  std::vector<bool> seen(size_t(x.dim()), false);
  at::Tensor y = x;
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t axis = normalize_axis(ctx, axes[i], x.dim());
    if (seen[size_t(axis)]) fail_input(ctx, "repeated axis");
    seen[size_t(axis)] = true;
    const int64_t dim = x.size(axis), step = steps[i];
    if (step == 0) fail_input(ctx, "slice step 0");
    int64_t start = starts[i], end = ends[i];
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      y = y.slice(axis, start, std::max(start, end), step);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      const int64_t count = start > end ? (start - end - 1) / -step + 1 : 0;
      if (count == 0) y = y.narrow(axis, 0, 0);
      else y = y.slice(axis, start - (count - 1) * -step, start + 1, -step).flip({axis});
    }
  }
  // Dense in the input's layout: a view when the slice is one already (a
  // batch, or channels of an NCHW tensor at batch 1), else one copy, and a
  // channels-last activation stays channels-last for the Conv or Concat that
  // reads it (a CSP block's channel split: NCHW here was one copy, and the
  // Conv's copy back another).
  ctx.outputs = {y.contiguous(x.suggest_memory_format())};
}

void exec_transpose(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  std::vector<int64_t> perm = ctx.node().attr_ints("perm");
  if (perm.empty()) {
    for (int64_t d = x.dim() - 1; d >= 0; --d) perm.push_back(d);
  }
  if (int64_t(perm.size()) != x.dim()) fail_input(ctx, "perm length differs from the input rank");
  ctx.outputs = {x.permute(perm).contiguous()};
}

// Indices this small, on the CPU, are wrapped on the host: a Gather of a
// dim or of one state row then costs one ATen call instead of six.
constexpr int64_t kHostIndices = 64;

void exec_gather(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const at::Tensor& idx = need_input(ctx, 1);
  const int64_t axis = normalize_axis(ctx, ctx.node().attr_int("axis", 0), x.dim());
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().begin() + axis);
  for (int64_t d : idx.sizes()) shape.push_back(d);
  for (int64_t d = axis + 1; d < x.dim(); ++d) shape.push_back(x.size(d));
  if (idx.device().is_cpu() && idx.numel() <= kHostIndices && !at::isFloatingType(idx.scalar_type())) {
    std::vector<int64_t> host = ctx.input_ints(1);
    const int64_t n = x.size(axis);
    for (int64_t& i : host) {
      if (i < -n || i >= n)
        fail_input(ctx, "index " + std::to_string(i) + " is out of range for a dim of size " + std::to_string(n));
      if (i < 0) i += n;
    }
    // One index on the outer dim: a view of that slice (the rows are contiguous in x).
    if (idx.dim() == 0 && axis == 0) {
      ctx.outputs = {x.select(0, host[0])};
      return;
    }
    const at::Tensor flat = at::tensor(host, at::TensorOptions().dtype(at::kLong));
    ctx.outputs = {x.index_select(axis, flat.to(x.device())).reshape(shape)};
    return;
  }
  const at::Tensor flat = wrap_indices(idx, x.size(axis)).flatten();
  ctx.outputs = {x.index_select(axis, flat).reshape(shape)};
}

void exec_gather_elements(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const int64_t axis = normalize_axis(ctx, ctx.node().attr_int("axis", 0), x.dim());
  ctx.outputs = {at::gather(x, axis, wrap_indices(need_input(ctx, 1), x.size(axis)))};
}

// Row-major linear index into dims [first, first+k) of `shape` from the last
// dim of `idx` (size k), negative indices wrapped.
at::Tensor linear_index(const at::Tensor& idx, at::IntArrayRef shape, int64_t first, int64_t k) {
  at::Tensor lin = at::zeros(idx.sizes().slice(0, size_t(idx.dim() - 1)), idx.options().dtype(at::kLong));
  for (int64_t j = 0; j < k; ++j) {
    const int64_t n = shape[size_t(first + j)];
    lin = lin * n + wrap_indices(idx.select(-1, j), n);
  }
  return lin;
}

void exec_gather_nd(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const at::Tensor& idx = need_input(ctx, 1);
  const int64_t b = ctx.node().attr_int("batch_dims", 0);
  const int64_t r = x.dim(), q = idx.dim();
  if (q < 1 || b < 0 || b >= std::min(r, q)) fail_input(ctx, "invalid batch_dims or indices rank");
  const int64_t k = idx.size(-1);
  if (k < 1 || b + k > r) fail_input(ctx, "indices' last dim out of range");
  const at::IntArrayRef xs = x.sizes(), is = idx.sizes();
  const int64_t batch = product(xs, 0, size_t(b));
  const int64_t q_mid = product(is, size_t(b), size_t(q - 1));
  std::vector<int64_t> flat_shape{batch, product(xs, size_t(b), size_t(b + k))};
  for (int64_t d = b + k; d < r; ++d) flat_shape.push_back(xs[size_t(d)]);
  const at::Tensor data = x.reshape(flat_shape);
  const at::Tensor lin = linear_index(idx.reshape({batch, q_mid, k}), xs, b, k);
  const at::Tensor rows = at::arange(batch, lin.options()).unsqueeze(1);
  c10::List<c10::optional<at::Tensor>> where;
  where.push_back(rows);
  where.push_back(lin);
  std::vector<int64_t> out_shape(is.begin(), is.end() - 1);
  for (int64_t d = b + k; d < r; ++d) out_shape.push_back(xs[size_t(d)]);
  ctx.outputs = {at::index(data, where).reshape(out_shape)};
}

const char* scatter_reduce_name(const ExecContext& ctx) {
  const std::string r = ctx.node().attr_string("reduction", "none");
  if (r == "none") return nullptr;
  if (r == "add") return "sum";
  if (r == "mul") return "prod";
  if (r == "max") return "amax";
  if (r == "min") return "amin";
  fail_input(ctx, "unsupported reduction '" + r + "'");
}

void exec_scatter_elements(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const int64_t axis = normalize_axis(ctx, ctx.node().attr_int("axis", 0), x.dim());
  const at::Tensor idx = wrap_indices(need_input(ctx, 1), x.size(axis));
  const at::Tensor& upd = need_input(ctx, 2);
  const char* reduce = scatter_reduce_name(ctx);
  if (!reduce) ctx.outputs = {at::scatter(x, axis, idx, upd)};
  else if (std::string(reduce) == "sum") ctx.outputs = {at::scatter_add(x, axis, idx, upd)};
  else ctx.outputs = {at::scatter_reduce(x, axis, idx, upd, reduce, true)};
}

void exec_scatter_nd(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const at::Tensor& idx = need_input(ctx, 1);
  const at::Tensor& upd = need_input(ctx, 2);
  const int64_t k = idx.size(-1), r = x.dim();
  if (k > r) fail_input(ctx, "indices' last dim exceeds the data rank");
  const at::IntArrayRef xs = x.sizes();
  std::vector<int64_t> flat_shape{product(xs, 0, size_t(k))};
  for (int64_t d = k; d < r; ++d) flat_shape.push_back(xs[size_t(d)]);
  const at::Tensor lin = linear_index(idx, xs, 0, k).flatten();
  std::vector<int64_t> upd_shape{lin.numel()};
  for (int64_t d = k; d < r; ++d) upd_shape.push_back(xs[size_t(d)]);
  const at::Tensor data = x.reshape(flat_shape);
  const at::Tensor u = upd.reshape(upd_shape);
  const char* reduce = scatter_reduce_name(ctx);
  at::Tensor y;
  if (!reduce) y = at::index_put(data, {c10::optional<at::Tensor>(lin)}, u, false);
  else if (std::string(reduce) == "sum") y = at::index_put(data, {c10::optional<at::Tensor>(lin)}, u, true);
  else y = at::index_reduce(data, 0, lin, u, reduce, true);
  ctx.outputs = {y.reshape(xs)};
}

// Pad: 'pads' (opset 2+; 'paddings' in 1) and 'value' attributes before
// opset 11; pads, constant_value and (18) axes inputs from 11.
// Reflect or edge padding of the last one or two dims of a float tensor of
// rank 2 to 4 (audio frames, images), as ATen's own padding kernel: one call
// instead of an index tensor and a gather per dim. Undefined where that does
// not apply (other ranks or dtypes, a padded outer dim, reflecting a dim of
// one element). `pads`: ONNX's [begin..., end...], none negative.
at::Tensor native_edge_pad(const at::Tensor& x, const std::vector<int64_t>& pads, bool reflect) {
  const int64_t r = x.dim();
  if ((x.scalar_type() != at::kFloat && x.scalar_type() != at::kDouble) || r < 2 || r > 4) return {};
  int64_t first = r;  // the first padded dim
  for (int64_t d = r - 1; d >= 0; --d)
    if (pads[size_t(d)] > 0 || pads[size_t(d + r)] > 0) {
      first = d;
      if (reflect && x.size(d) < 2) return {};
    }
  if (first == r) return x.contiguous();
  auto last = [&](int64_t k) { return std::vector<int64_t>{pads[size_t(r - k)], pads[size_t(2 * r - k)]}; };
  if (first == r - 1 && r <= 3) return reflect ? at::reflection_pad1d(x, last(1)) : at::replication_pad1d(x, last(1));
  if (first >= r - 2 && r >= 3) {
    std::vector<int64_t> p = last(1);  // W's begin, end, then H's
    const std::vector<int64_t> h = last(2);
    p.insert(p.end(), h.begin(), h.end());
    return reflect ? at::reflection_pad2d(x, p) : at::replication_pad2d(x, p);
  }
  return {};
}

void exec_pad(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const int64_t r = x.dim();
  const std::string mode = ctx.node().attr_string("mode", "constant");
  std::vector<int64_t> pads;
  at::Scalar value = 0.0;
  if (ctx.opset() < 11) {
    pads = has_attr(ctx, "pads") ? ctx.node().attr_ints("pads") : ctx.node().attr_ints("paddings");
    value = ctx.node().attr_float("value", 0.0);
  } else {
    pads = ctx.input_ints(1);
    if (ctx.has_input(2) && ctx.input(2).numel() > 0) value = input_scalar_value(ctx, 2);
    if (ctx.has_input(3)) {
      const auto axes = ctx.input_ints(3);
      if (pads.size() != 2 * axes.size()) fail_input(ctx, "pads length differs from 2 x axes");
      std::vector<int64_t> full(size_t(2 * r), 0);
      for (size_t i = 0; i < axes.size(); ++i) {
        const int64_t a = normalize_axis(ctx, axes[i], r);
        full[size_t(a)] = pads[i];
        full[size_t(a + r)] = pads[i + axes.size()];
      }
      pads = full;
    }
  }
  if (int64_t(pads.size()) != 2 * r) fail_input(ctx, "pads must hold 2 x rank values");
  if (mode == "constant") {
    std::vector<int64_t> torch_pads;  // last dim first: (begin, end) pairs
    for (int64_t d = r - 1; d >= 0; --d) {
      torch_pads.push_back(pads[size_t(d)]);
      torch_pads.push_back(pads[size_t(d + r)]);
    }
    ctx.outputs = {at::constant_pad_nd(x, torch_pads, value)};
    return;
  }
  if (mode != "reflect" && mode != "edge" && mode != "wrap") fail_input(ctx, "unsupported pad mode '" + mode + "'");
  at::Tensor y = x;
  // Negative pads crop first; what is left pads by at least 0 on each side.
  for (int64_t d = 0; d < r; ++d) {
    const int64_t begin = pads[size_t(d)], end = pads[size_t(d + r)];
    if (begin < 0) y = y.narrow(d, -begin, y.size(d) + begin), pads[size_t(d)] = 0;
    if (end < 0) y = y.narrow(d, 0, y.size(d) + end), pads[size_t(d + r)] = 0;
    const int64_t n = y.size(d);
    if ((pads[size_t(d)] > 0 || pads[size_t(d + r)] > 0) && n == 0)
      fail_input(ctx, "cannot " + mode + "-pad an empty dim");
    if (mode == "reflect" && (pads[size_t(d)] >= n || pads[size_t(d + r)] >= n) && n > 1)
      fail_input(ctx, "reflect pads must be smaller than the dim");
  }
  if (mode != "wrap")
    if (at::Tensor padded = native_edge_pad(y, pads, mode == "reflect"); padded.defined()) {
      ctx.outputs = {padded};
      return;
    }
  for (int64_t d = 0; d < r; ++d) {
    const int64_t begin = pads[size_t(d)], end = pads[size_t(d + r)];
    if (begin == 0 && end == 0) continue;
    const int64_t n = y.size(d);
    std::vector<int64_t> index;
    for (int64_t i = -begin; i < n + end; ++i) {
      int64_t j = i;
      if (mode == "edge") j = std::clamp<int64_t>(i, 0, n - 1);
      else if (mode == "wrap") j = ((i % n) + n) % n;
      else if (n == 1) j = 0;
      else {
        const int64_t m = 2 * (n - 1);
        j = ((i % m) + m) % m;
        if (j >= n) j = m - j;
      }
      index.push_back(j);
    }
    y = y.index_select(d, at::tensor(index, at::TensorOptions().dtype(at::kLong)).to(y.device()));
  }
  ctx.outputs = {y.contiguous()};
}

// Tile: repeats input (opset 6+); opset 1: tiles and axis inputs.
void exec_tile(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  std::vector<int64_t> repeats;
  if (ctx.opset() < 6) {
    repeats.assign(size_t(x.dim()), 1);
    repeats[size_t(normalize_axis(ctx, int64_t(ctx.input_scalar(2)), x.dim()))] = int64_t(ctx.input_scalar(1));
  } else {
    repeats = ctx.input_ints(1);
  }
  if (int64_t(repeats.size()) != x.dim()) fail_input(ctx, "repeats length differs from the input rank");
  ctx.outputs = {x.repeat(repeats)};
}

// Numpy (multidirectional) broadcast of two shapes.
std::vector<int64_t> broadcast_shapes(const ExecContext& ctx, at::IntArrayRef a, at::IntArrayRef b) {
  const size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      fail_input(ctx, "shapes " + c10::str(a) + " and " + c10::str(b) + " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// Expand: the shape broadcasts with X's both ways.
void exec_expand(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const auto shape = broadcast_shapes(ctx, x.sizes(), ctx.input_ints(1));
  ctx.outputs = {x.expand(shape).contiguous()};
}

// Reshape: 0 copies the input's dim (unless allowzero=1), -1 is inferred.
void exec_reshape(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  std::vector<int64_t> shape = ctx.opset() < 5 ? ctx.node().attr_ints("shape") : ctx.input_ints(1);
  const bool allowzero = ctx.node().attr_int("allowzero", 0) != 0;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowzero) {
      if (int64_t(i) >= x.dim()) fail_input(ctx, "shape 0 copies a dim the input does not have");
      shape[i] = x.size(int64_t(i));
    }
    if (shape[i] == -1) {
      if (infer >= 0) fail_input(ctx, "more than one -1 in the shape");
      infer = int64_t(i);
    } else if (shape[i] < 0) {
      fail_input(ctx, "negative dim " + std::to_string(shape[i]) + " in the shape");
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || x.numel() % known != 0) fail_input(ctx, "cannot infer the -1 dim");
    shape[size_t(infer)] = x.numel() / known;
  }
  ctx.outputs = {x.reshape(shape)};
}

void exec_flatten(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  int64_t axis = ctx.node().attr_int("axis", 1);
  if (axis < 0) axis += x.dim();
  if (axis < 0 || axis > x.dim()) fail_input(ctx, "axis out of range");
  const int64_t rows = product(x.sizes(), 0, size_t(axis));
  const int64_t cols = product(x.sizes(), size_t(axis));
  ctx.outputs = {x.reshape({rows, cols})};
}

void exec_squeeze(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const auto axes = ints_attr_or_input(ctx, "axes", 1, 13);
  std::vector<int64_t> shape;
  if (!axes || axes->empty()) {
    for (int64_t d : x.sizes())
      if (d != 1) shape.push_back(d);
  } else {
    const auto dims = normalize_axes(ctx, *axes, x.dim());
    for (int64_t d = 0; d < x.dim(); ++d) {
      const bool squeezed = std::binary_search(dims.begin(), dims.end(), d);
      if (squeezed && x.size(d) != 1) fail_input(ctx, "cannot squeeze dim " + std::to_string(d) + " of size " + std::to_string(x.size(d)));
      if (!squeezed) shape.push_back(x.size(d));
    }
  }
  ctx.outputs = {x.reshape(shape)};
}

void exec_unsqueeze(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const auto axes = ints_attr_or_input(ctx, "axes", 1, 13);
  if (!axes || axes->empty()) fail_input(ctx, "Unsqueeze needs axes");
  const int64_t out_rank = x.dim() + int64_t(axes->size());
  const auto dims = normalize_axes(ctx, *axes, out_rank);
  std::vector<int64_t> shape;
  int64_t next = 0;
  for (int64_t d = 0; d < out_rank; ++d)
    shape.push_back(std::binary_search(dims.begin(), dims.end(), d) ? 1 : x.size(next++));
  ctx.outputs = {x.reshape(shape)};
}

// Dropout: identity in inference. Training (opset 12+: the training_mode
// input; before 7: is_test=0, the spec's default; opsets 7-11 have no
// training switch and run as inference, as ONNX's reference does) applies a
// random mask (not reproducible against a reference). The mask output has
// X's type before opset 10, bool after.
void exec_dropout(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  double ratio = ctx.node().attr_float("ratio", 0.5);
  bool training = op_training_mode(ctx.node(), ctx.opset());
  if (ctx.opset() >= 12) {
    ratio = ctx.has_input(1) ? ctx.input_scalar(1) : 0.5;
    training = ctx.has_input(2) && ctx.input_scalar(2) != 0.0;
  }
  const at::ScalarType mask_type = ctx.opset() < 10 ? x.scalar_type() : at::kBool;
  if (!training || ratio == 0.0) {
    ctx.outputs = {x};
    if (ctx.wants_output(1)) ctx.outputs.push_back(at::ones(x.sizes(), x.options().dtype(mask_type)));
    return;
  }
  if (ratio < 0.0 || ratio > 1.0) fail_input(ctx, "ratio must be in [0, 1]");
  const at::Tensor keep = at::rand(x.sizes(), x.options().dtype(at::kFloat)) >= ratio;
  const double scale = ratio < 1.0 ? 1.0 / (1.0 - ratio) : 0.0;
  ctx.outputs = {(x * keep * scale).to(x.scalar_type())};
  if (ctx.wants_output(1)) ctx.outputs.push_back(keep.to(mask_type));
}

// Shape (start/end from opset 15, clamped) and Size: int64 on the input's device.
void exec_shape(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const int64_t r = x.dim();
  auto clampi = [r](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + r : v, 0, r); };
  const int64_t start = clampi(ctx.node().attr_int("start", 0));
  const int64_t end = has_attr(ctx, "end") ? clampi(ctx.node().attr_int("end", r)) : r;
  std::vector<int64_t> dims;
  for (int64_t d = start; d < end; ++d) dims.push_back(x.size(d));
  ctx.outputs = {at::tensor(dims, at::TensorOptions().dtype(at::kLong)).to(x.device())};
}

void exec_size(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  ctx.outputs = {at::scalar_tensor(x.numel(), at::TensorOptions().dtype(at::kLong).device(x.device()))};
}

// The creation ops below (ConstantOfShape, Constant, Range, EyeLike) make
// their tensors on ctx.device() and give float results compute_type(): the
// run's float dtype decides (fp16/bf16 and fp32 runs: see compute_type; a run
// in the model's own dtypes keeps them); integer types untouched.

// A tensor attribute of the node ('value') as a CPU tensor of its own dtype.
at::Tensor attr_tensor(const ExecContext& ctx, const char* key) {
  const auto* t = std::get_if<AttrTensor>(ctx.node().attr(key));
  if (!t) fail_input(ctx, std::string("'") + key + "' must be a tensor");
  return tensor_from_attr(ctx, *t);
}

// Options for a tensor of `type` created by the node: the run's device, a
// float type per compute_type.
at::TensorOptions created(const ExecContext& ctx, at::ScalarType type) {
  return at::TensorOptions().device(ctx.device()).dtype(compute_type(ctx, type));
}

void exec_constant_of_shape(ExecContext& ctx) {
  const std::vector<int64_t> shape = ctx.input_ints(0);
  at::Tensor value = at::zeros({}, at::kFloat);
  if (has_attr(ctx, "value")) {
    value = attr_tensor(ctx, "value");
    if (value.numel() != 1) fail_input(ctx, "'value' must hold one element");
  }
  ctx.outputs = {at::full(shape, value.reshape({}).item(), created(ctx, value.scalar_type()))};
}

// Constant: from the node's attributes alone.
void exec_constant(ExecContext& ctx) {
  const Node& node = ctx.node();
  if (has_attr(ctx, "value")) {
    const at::Tensor value = attr_tensor(ctx, "value");
    ctx.outputs = {value.to(created(ctx, value.scalar_type()))};
  } else if (has_attr(ctx, "value_float")) {
    ctx.outputs = {at::scalar_tensor(node.attr_float("value_float", 0.0), created(ctx, at::kFloat))};
  } else if (has_attr(ctx, "value_floats")) {
    const std::vector<double> values = attr_floats(node, "value_floats");
    ctx.outputs = {at::tensor(values, at::kDouble).to(at::kFloat).to(created(ctx, at::kFloat))};
  } else if (has_attr(ctx, "value_int")) {
    ctx.outputs = {at::scalar_tensor(node.attr_int("value_int", 0), created(ctx, at::kLong))};
  } else if (has_attr(ctx, "value_ints")) {
    ctx.outputs = {at::tensor(node.attr_ints("value_ints"), at::kLong).to(created(ctx, at::kLong))};
  } else {
    fail_input(ctx, "unsupported Constant form (string or sparse value)");
  }
}

// Range: ceil((limit - start) / delta) elements, start's type.
void exec_range(ExecContext& ctx) {
  const at::Tensor& start_t = need_input(ctx, 0);
  const at::ScalarType type = compute_type(ctx, start_t.scalar_type());
  const auto opts = at::TensorOptions().device(ctx.device());
  if (at::isIntegralType(type, false)) {
    const int64_t s = input_scalar_value(ctx, 0).toLong(), l = input_scalar_value(ctx, 1).toLong(),
                  d = input_scalar_value(ctx, 2).toLong();
    if (d == 0) fail_input(ctx, "delta 0");
    int64_t n = 0;
    if (d > 0 && l > s) n = (l - s + d - 1) / d;
    if (d < 0 && s > l) n = (s - l - d - 1) / -d;
    ctx.outputs = {(at::arange(n, opts.dtype(at::kLong)) * d + s).to(type)};
    return;
  }
  const double s = ctx.input_scalar(0), l = ctx.input_scalar(1), d = ctx.input_scalar(2);
  if (d == 0) fail_input(ctx, "delta 0");
  const auto n = int64_t(std::max(0.0, std::ceil((l - s) / d)));
  ctx.outputs = {(at::arange(n, opts.dtype(at::kDouble)) * d + s).to(type)};
}

void exec_eye_like(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  if (x.dim() != 2) fail_input(ctx, "EyeLike needs a 2-D input");
  const at::ScalarType type = compute_type(
      ctx, has_attr(ctx, "dtype") ? scalar_type_of(ctx, ctx.node().attr_int("dtype", 1)) : x.scalar_type());
  const int64_t k = ctx.node().attr_int("k", 0);
  const auto lopts = at::TensorOptions().dtype(at::kLong).device(ctx.device());
  const at::Tensor i = at::arange(x.size(0), lopts).unsqueeze(1);
  const at::Tensor j = at::arange(x.size(1), lopts).unsqueeze(0);
  ctx.outputs = {at::eq(j - i, k).to(type)};
}

void exec_depth_to_space(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  if (x.dim() != 4) fail_input(ctx, "DepthToSpace needs a 4-D input");
  const int64_t b = ctx.node().attr_int("blocksize", 0);
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  if (b <= 0 || c % (b * b) != 0) fail_input(ctx, "channels not divisible by blocksize^2");
  const std::string mode = ctx.node().attr_string("mode", "DCR");
  at::Tensor y;
  if (mode == "DCR") y = x.reshape({n, b, b, c / (b * b), h, w}).permute({0, 3, 4, 1, 5, 2});
  else if (mode == "CRD") y = x.reshape({n, c / (b * b), b, b, h, w}).permute({0, 1, 4, 2, 5, 3});
  else fail_input(ctx, "unsupported mode '" + mode + "'");
  ctx.outputs = {y.reshape({n, c / (b * b), h * b, w * b})};
}

void exec_space_to_depth(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  if (x.dim() != 4) fail_input(ctx, "SpaceToDepth needs a 4-D input");
  const int64_t b = ctx.node().attr_int("blocksize", 0);
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  if (b <= 0 || h % b != 0 || w % b != 0) fail_input(ctx, "spatial dims not divisible by blocksize");
  ctx.outputs = {x.reshape({n, c, h / b, b, w / b, b}).permute({0, 3, 5, 1, 2, 4}).reshape({n, c * b * b, h / b, w / b})};
}

void exec_nonzero(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  ctx.outputs = {at::nonzero(x.dim() == 0 ? x.reshape({1}) : x).t().contiguous()};
  if (x.dim() == 0) ctx.outputs[0] = ctx.outputs[0].narrow(0, 0, 0);
}

// OneHot: indices (any numeric type, negative from the end), depth, values [off, on].
void exec_one_hot(ExecContext& ctx) {
  const at::Tensor& idx = need_input(ctx, 0);
  const auto depth = int64_t(ctx.input_scalar(1));
  const at::Tensor values = need_input(ctx, 2).flatten();
  if (values.numel() != 2) fail_input(ctx, "values must hold [off, on]");
  const int64_t r = idx.dim() + 1;
  const int64_t axis = normalize_axis(ctx, ctx.node().attr_int("axis", -1), r);
  const at::Tensor i = wrap_indices(idx, depth).unsqueeze(axis);
  std::vector<int64_t> shape(size_t(r), 1);
  shape[size_t(axis)] = depth;
  const at::Tensor classes = at::arange(depth, i.options()).reshape(shape);
  ctx.outputs = {at::where(at::eq(i, classes), values[1], values[0])};
}

void exec_trilu(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const int64_t k = ctx.has_input(1) ? input_scalar_value(ctx, 1).toLong() : 0;
  ctx.outputs = {ctx.node().attr_int("upper", 1) ? at::triu(x, k) : at::tril(x, k)};
}

void exec_compress(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const at::Tensor cond = need_input(ctx, 1).to(at::kBool).flatten();
  at::Tensor in = x;
  int64_t axis = 0;
  if (has_attr(ctx, "axis")) axis = normalize_axis(ctx, ctx.node().attr_int("axis", 0), x.dim());
  else in = x.flatten();
  const int64_t n = std::min(cond.numel(), in.size(axis));
  const at::Tensor idx = at::nonzero(cond.narrow(0, 0, n)).flatten();
  ctx.outputs = {in.index_select(axis, idx)};
}

// ReverseSequence: reverses the first sequence_lens[b] steps of each batch entry.
void exec_reverse_sequence(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const int64_t r = x.dim();
  const int64_t batch_axis = normalize_axis(ctx, ctx.node().attr_int("batch_axis", 1), r);
  const int64_t time_axis = normalize_axis(ctx, ctx.node().attr_int("time_axis", 0), r);
  if (batch_axis == time_axis) fail_input(ctx, "batch_axis equals time_axis");
  std::vector<int64_t> tshape(size_t(r), 1), bshape(size_t(r), 1);
  tshape[size_t(time_axis)] = x.size(time_axis);
  bshape[size_t(batch_axis)] = x.size(batch_axis);
  const auto lopts = x.options().dtype(at::kLong);
  const at::Tensor t = at::arange(x.size(time_axis), lopts).reshape(tshape);
  const at::Tensor len = need_input(ctx, 1).to(at::kLong).reshape(bshape);
  const at::Tensor src = at::where(t < len, len - 1 - t, t).expand(x.sizes());
  ctx.outputs = {at::gather(x, time_axis, src)};
}

// CenterCropPad (opset 18): crop or zero-pad each axis to the target size, centred.
void exec_center_crop_pad(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const auto target = ctx.input_ints(1);
  std::vector<int64_t> axes = ctx.node().attr_ints("axes");
  if (axes.empty()) {
    axes.resize(size_t(x.dim()));
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (axes.size() != target.size()) fail_input(ctx, "shape length differs from the number of axes");
  at::Tensor y = x;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = normalize_axis(ctx, axes[i], x.dim());
    const int64_t n = y.size(a), t = target[i];
    if (t < n) {
      y = y.narrow(a, (n - t) / 2, t);
    } else if (t > n) {
      std::vector<int64_t> pads(size_t(2 * (x.dim() - a)), 0);
      const size_t at_dim = size_t(2 * (x.dim() - 1 - a));
      pads[at_dim] = (t - n) / 2;
      pads[at_dim + 1] = t - n - (t - n) / 2;
      y = at::constant_pad_nd(y, pads, 0);
    }
  }
  ctx.outputs = {y.contiguous()};
}

}  // namespace

void add_shape_ops_executors(std::vector<ExecRule>& rules) {
  add_executor(rules, "Concat", exec_concat);
  add_executor(rules, "Split", exec_split);
  add_executor(rules, "Slice", exec_slice);
  add_executor(rules, "Transpose", exec_transpose);
  add_executor(rules, "Gather", exec_gather);
  add_executor(rules, "GatherElements", exec_gather_elements, 11);
  add_executor(rules, "GatherND", exec_gather_nd, 11);
  add_executor(rules, "Scatter", exec_scatter_elements, 9);
  add_executor(rules, "ScatterElements", exec_scatter_elements, 11);
  add_executor(rules, "ScatterND", exec_scatter_nd, 11);
  add_executor(rules, "Pad", exec_pad);
  add_executor(rules, "CenterCropPad", exec_center_crop_pad, 18);
  add_executor(rules, "Tile", exec_tile);
  add_executor(rules, "Expand", exec_expand, 8);
  add_executor(rules, "Reshape", exec_reshape);
  add_executor(rules, "Flatten", exec_flatten);
  add_executor(rules, "Squeeze", exec_squeeze);
  add_executor(rules, "Unsqueeze", exec_unsqueeze);
  add_executor(rules, "Identity", exec_identity);
  add_executor(rules, "Dropout", exec_dropout);
  add_executor(rules, "Shape", exec_shape);
  add_executor(rules, "Size", exec_size);
  add_executor(rules, "ConstantOfShape", exec_constant_of_shape, 9);
  add_executor(rules, "Constant", exec_constant);
  add_executor(rules, "Range", exec_range, 11);
  add_executor(rules, "EyeLike", exec_eye_like, 9);
  add_executor(rules, "DepthToSpace", exec_depth_to_space);
  add_executor(rules, "SpaceToDepth", exec_space_to_depth);
  add_executor(rules, "NonZero", exec_nonzero, 9);
  add_executor(rules, "OneHot", exec_one_hot, 9);
  add_executor(rules, "Trilu", exec_trilu, 14);
  add_executor(rules, "Compress", exec_compress, 9);
  add_executor(rules, "ReverseSequence", exec_reverse_sequence, 10);
}

}  // namespace modelstat::profiler

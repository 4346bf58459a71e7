// oneDNN int8 convolution and matmul for the quantized ONNX ops; see
// int8_kernels.hpp for the arithmetic and when the callers fall back.
#include "profiler/ops/int8_kernels.hpp"

#include <tuple>
#include <utility>

#include <mutex>
#include <cmath>
#include <unordered_map>
#include <vector>

#if defined(MODELSTAT_HAVE_DNNL)
#include <oneapi/dnnl/dnnl.hpp>

#include "profiler/ops/onednn_cpu.hpp"
#endif

namespace modelstat::profiler {

#if defined(MODELSTAT_HAVE_DNNL)

namespace {

using namespace onednn_names;

bool is_8bit(const at::Tensor& t) { return t.scalar_type() == at::kByte || t.scalar_type() == at::kChar; }

// The activation's oneDNN type; the weights' shift to s8 (see the header).
DT data_type_of(const at::Tensor& t) { return t.scalar_type() == at::kByte ? DT::u8 : DT::s8; }
int64_t weight_offset(const at::Tensor& w) { return w.scalar_type() == at::kByte ? 128 : 0; }

// Channels-last tags by rank (N, C, spatial...): activations are handed to
// oneDNN in this layout, which its int8 kernels are written for.
Tag channels_last_tag(int64_t rank) { return rank == 3 ? Tag::nwc : rank == 4 ? Tag::nhwc : Tag::ndhwc; }
Tag weights_tag(int64_t rank, bool grouped) {
  if (grouped) return rank == 3 ? Tag::goiw : rank == 4 ? Tag::goihw : Tag::goidhw;
  return rank == 3 ? Tag::oiw : rank == 4 ? Tag::oihw : Tag::oidhw;
}

// (N, C, spatial...) -> (N, spatial..., C), contiguous: the channels-last buffer.
std::vector<int64_t> to_channels_last_order(int64_t rank) {
  std::vector<int64_t> order{0};
  for (int64_t d = 2; d < rank; ++d) order.push_back(d);
  order.push_back(1);
  return order;
}

// The zero point as one int32 for oneDNN's runtime zero-point argument.
std::optional<int32_t> single_zero_point(const at::Tensor& zp) {
  if (!zp.defined()) return 0;
  if (zp.numel() != 1) return std::nullopt;
  return int32_t(zp.to(at::kCPU).to(at::kInt).item<int32_t>());
}

// (offset - w_zero_point) per output channel (or column): the correction's
// factor; empty when every entry is 0 (s8 weights with zero point 0).
at::Tensor correction_factor(const at::Tensor& w, const at::Tensor& w_zero_point, int64_t channels) {
  const int64_t offset = weight_offset(w);
  at::Tensor zp = w_zero_point.defined() ? w_zero_point.to(at::kCPU).to(at::kInt).reshape({-1})
                                         : at::zeros({1}, at::TensorOptions().dtype(at::kInt));
  if (zp.numel() != 1 && zp.numel() != channels) return {};
  at::Tensor c = (offset - zp).expand({channels}).contiguous();
  return c.ne(0).any().item<bool>() ? c : at::Tensor();
}

// w - offset in s8 (exact: u8 - 128 and s8 - 0 both fit).
at::Tensor shifted_weight(const at::Tensor& w) {
  const int64_t offset = weight_offset(w);
  if (offset == 0) return w.contiguous();
  return (w.to(at::kShort) - offset).to(at::kChar).contiguous();
}

// The kernels accumulate these shifted s8 weights exactly on this CPU
// (int8_kernels.hpp, "Exactness").
bool exact_for(const at::Tensor& shifted) {
  if (int8_kernels_exact_for_any_weights() || shifted.numel() == 0) return true;
  return shifted.to(at::kShort).abs().max().item<int16_t>() <= 64;
}

// Shifted s8 weights as two 7-bit halves, w = low + high with both within
// [-64, 64] (low = clamp(w, -64, 64)): two exact products whose int32 sum is
// the product with w.
std::pair<at::Tensor, at::Tensor> seven_bit_halves(const at::Tensor& shifted) {
  const at::Tensor wide = shifted.to(at::kShort);
  const at::Tensor low = wide.clamp(-64, 64);
  return {low.to(at::kChar).contiguous(), (wide - low).to(at::kChar).contiguous()};
}

memory zero_point_memory(int32_t& value) {
  return memory(memory::desc({1}, DT::s32, Tag::x), onednn_cpu_engine(), &value);
}

dnnl::primitive_attr runtime_src_zero_point() {
  dnnl::primitive_attr attr;
  attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  return attr;
}

// ---- convolution -------------------------------------------------------------

struct ConvPlan {
  at::Tensor weight;  // the weight the plan was built for (keeps its key alive)
  dnnl::convolution_forward main;
  memory main_weights;  // shifted weights, in the primitive's layout
  // Without VNNI, weights outside 7 bits: `main` holds their low half and
  // this the high half, the same primitive on other weights; the two int32
  // results add up to the exact one (seven_bit_halves).
  std::optional<dnnl::convolution_forward> high;
  memory high_weights;
  // The window sum for the correction: a convolution with a weight of ones,
  // one output channel per group (built only when the correction is needed).
  std::optional<dnnl::convolution_forward> ones;
  memory ones_weights;
  Dims dst_channels_last;  // N, spatial..., Cout
  int64_t group = 1;
  // The dequantizing variant (int8_conv's `scaled`): f32 destination, one
  // runtime output scale per channel, an f32 bias.
  bool scaled = false;
};

struct ConvShape {
  Dims src, weights, dst, strides, dilations, pad_l, pad_r;
};

// `scales` (one per output channel): f32 destination = acc * scale + f32
// bias, else (null) the exact s32 accumulator. oneDNN 2.6 builds no int8
// convolution with runtime output scales beside a runtime source zero point,
// so the scales are fixed in the primitive.
dnnl::convolution_forward make_conv(const ConvShape& s, DT src_type, Tag src_tag, memory& weights_out,
                                    const at::Tensor& user_weights, Tag user_weights_tag,
                                    const std::vector<float>* scales = nullptr) {
  const bool scaled = scales != nullptr;
  auto& engine = onednn_cpu_engine();
  const memory::desc src_md(s.src, src_type, src_tag);
  const memory::desc wei_md(s.weights, DT::s8, Tag::any);
  const memory::desc dst_md(s.dst, scaled ? DT::f32 : DT::s32, src_tag);
  dnnl::primitive_attr attr = runtime_src_zero_point();
  std::optional<dnnl::convolution_forward::desc> desc;
  if (scaled) {
    attr.set_output_scales(1 << 1, *scales);  // one per output channel
    desc.emplace(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_md, wei_md,
                 memory::desc({s.dst[1]}, DT::f32, Tag::x), dst_md, s.strides, s.dilations, s.pad_l, s.pad_r);
  } else {
    desc.emplace(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_md, wei_md, dst_md,
                 s.strides, s.dilations, s.pad_l, s.pad_r);
  }
  const dnnl::convolution_forward::primitive_desc pd(*desc, attr, engine);
  memory user(memory::desc(s.weights, DT::s8, user_weights_tag), engine, user_weights.data_ptr());
  weights_out = memory(pd.weights_desc(), engine);
  dnnl::reorder(user, weights_out).execute(onednn_cpu_stream(), user, weights_out);
  onednn_cpu_stream().wait();
  return dnnl::convolution_forward(pd);
}

std::shared_ptr<ConvPlan> build_conv_plan(const at::Tensor& x, const at::Tensor& w, const Window& win,
                                          int64_t group, bool with_ones, const std::vector<float>* scales) {
  const bool scaled = scales != nullptr;
  const int64_t rank = x.dim();
  const int64_t n = x.size(0), cin = x.size(1), cout = w.size(0);
  ConvShape s;
  s.src = Dims(x.sizes().begin(), x.sizes().end());
  s.dst = {n, cout};
  for (int64_t d = 0; d < rank - 2; ++d) {
    const int64_t in = x.size(d + 2), k = win.kernel[size_t(d)], st = win.strides[size_t(d)];
    const int64_t dil = win.dilations[size_t(d)];
    const int64_t span = (k - 1) * dil + 1;
    const int64_t out = (in + win.pads_begin[size_t(d)] + win.pads_end[size_t(d)] - span) / st + 1;
    if (out <= 0) return nullptr;
    s.dst.push_back(out);
    s.strides.push_back(st);
    s.dilations.push_back(dil - 1);  // oneDNN counts the gaps
    s.pad_l.push_back(win.pads_begin[size_t(d)]);
    s.pad_r.push_back(win.pads_end[size_t(d)]);
  }
  const bool grouped = group > 1;
  s.weights.clear();
  if (grouped) s.weights = {group, cout / group, cin / group};
  else s.weights = {cout, cin};
  for (int64_t d = 2; d < rank; ++d) s.weights.push_back(w.size(d));

  auto plan = std::make_shared<ConvPlan>();
  plan->weight = w;
  plan->group = group;
  const at::Tensor shifted = shifted_weight(w);
  if (!exact_for(shifted)) {
    // Two 7-bit halves, each exact; their sum is int32 (not dequantized in the kernel).
    const auto [low, high] = seven_bit_halves(shifted);
    plan->scaled = false;
    plan->main = make_conv(s, data_type_of(x), channels_last_tag(rank), plan->main_weights, low,
                           weights_tag(rank, grouped));
    plan->high = make_conv(s, data_type_of(x), channels_last_tag(rank), plan->high_weights, high,
                           weights_tag(rank, grouped));
  } else {
    plan->scaled = scaled;
    plan->main = make_conv(s, data_type_of(x), channels_last_tag(rank), plan->main_weights, shifted,
                           weights_tag(rank, grouped), scales);
  }
  plan->dst_channels_last = {n};
  for (int64_t d = 2; d < rank; ++d) plan->dst_channels_last.push_back(s.dst[size_t(d)]);
  plan->dst_channels_last.push_back(cout);
  if (with_ones) {
    ConvShape o = s;
    o.dst[1] = group;
    o.weights = {group, 1, cin / group};
    for (int64_t d = 2; d < rank; ++d) o.weights.push_back(w.size(d));
    std::vector<int64_t> ones_dims(o.weights.begin(), o.weights.end());
    const at::Tensor ones = at::ones(ones_dims, at::TensorOptions().dtype(at::kChar));
    plan->ones = make_conv(o, data_type_of(x), channels_last_tag(rank), plan->ones_weights, ones,
                           weights_tag(rank, true));
  }
  return plan;
}

std::mutex plans_mutex;
std::unordered_map<std::string, std::shared_ptr<ConvPlan>> conv_plans;

std::string conv_key(const at::Tensor& x, const at::Tensor& w, const Window& win, int64_t group, bool with_ones,
                     const std::vector<float>* scales) {
  std::string key = std::to_string(reinterpret_cast<uintptr_t>(w.unsafeGetTensorImpl()));
  auto add = [&key](const auto& values) {
    key += '|';
    for (auto v : values) key += std::to_string(v) + ',';
  };
  add(x.sizes());
  add(std::vector<int64_t>{int64_t(x.scalar_type()), group, int64_t(with_ones)});
  if (scales) {  // fixed in the primitive: a plan per set of scales
    key += "|s";
    key.append(reinterpret_cast<const char*>(scales->data()), scales->size() * sizeof(float));
  }
  add(win.strides);
  add(win.dilations);
  add(win.pads_begin);
  add(win.pads_end);
  return key;
}

}  // namespace

bool int8_kernels_available() { return true; }

bool int8_kernels_exact_for_any_weights() {
  static const bool vnni = [] {
    switch (dnnl::get_effective_cpu_isa()) {
      case dnnl::cpu_isa::avx512_core_vnni:
      case dnnl::cpu_isa::avx512_core_bf16:
      case dnnl::cpu_isa::avx512_core_amx:
      case dnnl::cpu_isa::avx2_vnni: return true;
      default: return false;
    }
  }();
  return vnni;
}

std::string int8_kernel_note() {
  const dnnl_version_t* v = dnnl_version();
  std::string isa;
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx512_core_vnni: isa = "avx512_core_vnni: exact int32 accumulation"; break;
    case dnnl::cpu_isa::avx512_core_bf16: isa = "avx512_core_bf16 (VNNI): exact int32 accumulation"; break;
    case dnnl::cpu_isa::avx512_core_amx: isa = "avx512_core_amx: exact int32 accumulation"; break;
    case dnnl::cpu_isa::avx2_vnni: isa = "avx2_vnni: exact int32 accumulation"; break;
    default:
      isa = "no VNNI: int16 pair sums would saturate on large u8 x s8 products, so weights outside 7 bits run "
            "as two 7-bit halves (two products, exact), and convolutions of s8 activations in double precision";
      break;
  }
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) +
         " int8 (" + isa + ")";
}

std::optional<at::Tensor> int8_conv(const at::Tensor& x, const at::Tensor& x_zero_point, const at::Tensor& w,
                                    const at::Tensor& w_zero_point, const Window& window, int64_t group,
                                    bool weight_constant, const at::Tensor& output_scale, const at::Tensor& bias) {
  if (!x.device().is_cpu() || !w.device().is_cpu() || !is_8bit(x) || !is_8bit(w)) return std::nullopt;
  const int64_t rank = x.dim();
  if (rank < 3 || rank > 5 || w.dim() != rank || group < 1 || x.size(1) % group || w.size(0) % group ||
      w.size(1) * group != x.size(1) || window.spatial_rank() != rank - 2)
    return std::nullopt;
  // s8 activations without VNNI: wrong accumulators even with 7-bit weights
  // (oneDNN 2.6.3 on a Zen 3 VM, a dilated 3x3 with a source zero point: 448
  // of 1792 outputs, off by up to 54998); the exact double path instead.
  if (x.scalar_type() == at::kChar && !int8_kernels_exact_for_any_weights()) return std::nullopt;
  auto zx = single_zero_point(x_zero_point);
  if (!zx) return std::nullopt;
  const int64_t cout = w.size(0);
  if (w_zero_point.defined() && w_zero_point.numel() != 1 && w_zero_point.numel() != cout) return std::nullopt;
  const at::Tensor c = correction_factor(w, w_zero_point, cout);
  // The window sums of (x - zx) come from a second int8 convolution with a
  // weight of ones, one output channel per group (cached with the plan).
  // Measured against the alternative (a channel sum, then a float box filter
  // through ATen's one-channel convolution) on 16- to 128-channel 3x3 layers
  // from 16x16 to 256x256: as fast or faster everywhere, and on small layers
  // (16 channels at 16x16: 31 us against 56 us) the float path's ten ATen
  // calls cost more than both int8 kernels.
  const bool with_ones = c.defined();
  // Dequantized in the kernel when asked and no correction is added after it.
  bool scaled = output_scale.defined() && !c.defined();
  std::vector<float> scale_values;
  if (scaled) {
    const at::Tensor s = output_scale.to(at::kCPU).to(at::kFloat).reshape({-1}).expand({cout}).contiguous();
    scale_values.assign(s.data_ptr<float>(), s.data_ptr<float>() + cout);
    // oneDNN 2.x scales after the bias (dst = scale * (acc + bias)): the bias
    // goes in divided by the scale, which must be finite and non-zero.
    for (float v : scale_values) scaled = scaled && std::isnormal(v);
  }
  const std::vector<float>* scales = scaled ? &scale_values : nullptr;

  std::shared_ptr<ConvPlan> plan;
  if (weight_constant) {
    const std::string key = conv_key(x, w, window, group, with_ones, scales);
    std::lock_guard<std::mutex> lock(plans_mutex);
    const auto it = conv_plans.find(key);
    if (it != conv_plans.end()) {
      plan = it->second;
    } else {
      plan = build_conv_plan(x, w, window, group, with_ones, scales);
      if (conv_plans.size() >= 4096) conv_plans.clear();  // a bound on what the cache holds alive
      conv_plans.emplace(key, plan);
    }
  } else {
    plan = build_conv_plan(x, w, window, group, with_ones, scales);
  }
  if (!plan) return std::nullopt;
  scaled = plan->scaled;  // a plan of two 7-bit halves is not

  auto& engine = onednn_cpu_engine();
  auto& stream = onednn_cpu_stream();
  const Tag tag = channels_last_tag(rank);
  at::Tensor src = x.permute(to_channels_last_order(rank)).contiguous();
  const Dims src_dims(x.sizes().begin(), x.sizes().end());
  memory src_mem(memory::desc(src_dims, data_type_of(x), tag), engine, src.data_ptr());
  const std::vector<int64_t> dst_cl(plan->dst_channels_last.begin(), plan->dst_channels_last.end());
  // The result in its N, C, spatial... shape with channels-last strides, a
  // tensor of its own: returned as a view of a channels-last buffer it would
  // keep that buffer alive beside it (an autograd view holds its base), and
  // the op that reads it last could not reuse its storage.
  std::vector<int64_t> nchw{dst_cl[0], dst_cl.back()};
  std::vector<int64_t> strides(static_cast<size_t>(rank), 1);
  for (size_t d = 1; d + 1 < dst_cl.size(); ++d) nchw.push_back(dst_cl[d]);
  int64_t stride = 1;
  strides[1] = stride;
  stride *= nchw[1];
  for (int64_t d = rank - 1; d >= 2; --d) {
    strides[size_t(d)] = stride;
    stride *= nchw[size_t(d)];
  }
  strides[0] = stride;
  const at::Tensor result =
      at::empty_strided(nchw, strides, at::TensorOptions().dtype(scaled ? at::kFloat : at::kInt));
  at::Tensor dst = result.permute(to_channels_last_order(rank));  // the same buffer, in memory order
  Dims dst_dims{dst_cl[0], dst_cl.back()};
  for (size_t d = 1; d + 1 < dst_cl.size(); ++d) dst_dims.push_back(dst_cl[d]);
  memory dst_mem(memory::desc(dst_dims, scaled ? DT::f32 : DT::s32, tag), engine, dst.data_ptr());
  int32_t zp_value = *zx;
  memory zp_mem = zero_point_memory(zp_value);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src_mem},
                                       {DNNL_ARG_WEIGHTS, plan->main_weights},
                                       {DNNL_ARG_DST, dst_mem},
                                       {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zp_mem}};
  at::Tensor shift;
  if (scaled) {
    // dst = scale * (acc + bias / scale) = scale * acc + bias (oneDNN 2.x scales after the bias).
    shift = bias.defined() ? (bias.to(at::kFloat).reshape({-1}).expand({cout}) /
                              at::from_blob(scale_values.data(), {cout}, at::TensorOptions().dtype(at::kFloat)))
                                 .contiguous()
                           : at::zeros({cout}, at::TensorOptions().dtype(at::kFloat));
    args.emplace(DNNL_ARG_BIAS, memory(memory::desc({cout}, DT::f32, Tag::x), engine, shift.data_ptr()));
  }
  plan->main.execute(stream, args);
  if (scaled) {
    stream.wait();
    return result;
  }
  if (plan->high) {  // the high half's product, added
    at::Tensor part = at::empty_strided(nchw, strides, at::TensorOptions().dtype(at::kInt));
    memory part_mem(memory::desc(dst_dims, DT::s32, tag), engine, part.permute(to_channels_last_order(rank)).data_ptr());
    plan->high->execute(stream, {{DNNL_ARG_SRC, src_mem},
                                 {DNNL_ARG_WEIGHTS, plan->high_weights},
                                 {DNNL_ARG_DST, part_mem},
                                 {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zp_mem}});
    stream.wait();
    result.add_(part);
  }
  if (with_ones) {
    std::vector<int64_t> sum_cl = dst_cl;
    sum_cl.back() = plan->group;
    at::Tensor sums = at::empty(sum_cl, at::TensorOptions().dtype(at::kInt));
    Dims sum_dims = dst_dims;
    sum_dims[1] = plan->group;
    memory sum_mem(memory::desc(sum_dims, DT::s32, tag), engine, sums.data_ptr());
    plan->ones->execute(stream, {{DNNL_ARG_SRC, src_mem},
                                 {DNNL_ARG_WEIGHTS, plan->ones_weights},
                                 {DNNL_ARG_DST, sum_mem},
                                 {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zp_mem}});
    stream.wait();
    // dst[..., g, j] += sums[..., g] * c[g, j]
    std::vector<int64_t> grouped = dst_cl;
    grouped.back() = plan->group;
    grouped.push_back(cout / plan->group);
    std::vector<int64_t> sum_grouped = sum_cl;
    sum_grouped.push_back(1);
    dst.view(grouped).add_(sums.view(sum_grouped) * c.view({plan->group, cout / plan->group}));
  } else {
    stream.wait();
  }
  return result;
}

// ---- matmul -------------------------------------------------------------------

namespace {

struct MatmulPlan {
  at::Tensor weight;  // the weight the plan was built for (keeps its key alive)
  dnnl::matmul main;
  memory weights;  // shifted weights, in the primitive's layout
  memory high_weights;  // without VNNI, weights outside 7 bits: `weights` the low half, this the high
  bool split = false;
};

// b: (K, N), or (N, K) when `transposed` (Gemm's transB).
std::shared_ptr<MatmulPlan> build_matmul_plan(int64_t m, int64_t k, int64_t n, DT src_type, const at::Tensor& b,
                                              bool transposed) {
  const at::Tensor full = shifted_weight(b);
  const bool split = !exact_for(full);
  at::Tensor shifted = full, high;
  if (split) std::tie(shifted, high) = seven_bit_halves(full);
  auto& engine = onednn_cpu_engine();
  const dnnl::matmul::desc desc(memory::desc({m, k}, src_type, Tag::ab), memory::desc({k, n}, DT::s8, Tag::any),
                                memory::desc({m, n}, DT::s32, Tag::ab));
  const dnnl::matmul::primitive_desc pd(desc, runtime_src_zero_point(), engine);
  auto plan = std::make_shared<MatmulPlan>();
  plan->weight = b;
  memory user(memory::desc({k, n}, DT::s8, transposed ? Tag::ba : Tag::ab), engine, shifted.data_ptr());
  plan->weights = memory(pd.weights_desc(), engine);
  dnnl::reorder(user, plan->weights).execute(onednn_cpu_stream(), user, plan->weights);
  if (split) {
    plan->split = true;
    memory user_high(memory::desc({k, n}, DT::s8, transposed ? Tag::ba : Tag::ab), engine, high.data_ptr());
    plan->high_weights = memory(pd.weights_desc(), engine);
    dnnl::reorder(user_high, plan->high_weights).execute(onednn_cpu_stream(), user_high, plan->high_weights);
  }
  onednn_cpu_stream().wait();
  plan->main = dnnl::matmul(pd);
  return plan;
}

std::unordered_map<std::string, std::shared_ptr<MatmulPlan>> matmul_plans;  // under plans_mutex

}  // namespace

std::optional<at::Tensor> int8_matmul(const at::Tensor& a, const at::Tensor& a_zero_point, const at::Tensor& b,
                                      const at::Tensor& b_zero_point, bool b_constant, bool b_transposed) {
  if (!a.device().is_cpu() || !b.device().is_cpu() || !is_8bit(a) || !is_8bit(b)) return std::nullopt;
  if (a.dim() < 1 || b.dim() != 2) return std::nullopt;
  const int64_t k = b.size(b_transposed ? 1 : 0), n = b.size(b_transposed ? 0 : 1);
  if (a.size(-1) != k) return std::nullopt;
  const auto za = single_zero_point(a_zero_point);
  if (!za) return std::nullopt;
  if (b_zero_point.defined() && b_zero_point.numel() != 1 && b_zero_point.numel() != n) return std::nullopt;
  const at::Tensor c = correction_factor(b, b_zero_point, n);
  const at::Tensor a2 = a.reshape({-1, k}).contiguous();
  const int64_t m = a2.size(0);
  if (m == 0 || n == 0 || k == 0) return std::nullopt;

  // A constant weight's plan (primitive and reordered weights) is built once
  // per row count; reordering a 512 x 1000 weight took longer than the product.
  std::shared_ptr<MatmulPlan> plan;
  if (b_constant) {
    const std::string key = std::to_string(reinterpret_cast<uintptr_t>(b.unsafeGetTensorImpl())) + "|" +
                            std::to_string(m) + "|" + std::to_string(int(a.scalar_type())) + "|" +
                            std::to_string(int(b_transposed));
    std::lock_guard<std::mutex> lock(plans_mutex);
    const auto it = matmul_plans.find(key);
    if (it != matmul_plans.end()) {
      plan = it->second;
    } else {
      plan = build_matmul_plan(m, k, n, data_type_of(a), b, b_transposed);
      if (matmul_plans.size() >= 4096) matmul_plans.clear();  // a bound on what the cache holds alive
      matmul_plans.emplace(key, plan);
    }
  } else {
    plan = build_matmul_plan(m, k, n, data_type_of(a), b, b_transposed);
  }
  if (!plan) return std::nullopt;
  auto& engine = onednn_cpu_engine();
  auto& stream = onednn_cpu_stream();
  at::Tensor dst = at::empty({m, n}, at::TensorOptions().dtype(at::kInt));
  memory src_mem(memory::desc({m, k}, data_type_of(a), Tag::ab), engine, a2.data_ptr());
  memory dst_mem(memory::desc({m, n}, DT::s32, Tag::ab), engine, dst.data_ptr());
  int32_t zp_value = *za;
  memory zp_mem = zero_point_memory(zp_value);
  plan->main.execute(stream, {{DNNL_ARG_SRC, src_mem},
                              {DNNL_ARG_WEIGHTS, plan->weights},
                              {DNNL_ARG_DST, dst_mem},
                              {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zp_mem}});
  if (plan->split) {  // the high half's product, added
    at::Tensor part = at::empty({m, n}, at::TensorOptions().dtype(at::kInt));
    memory part_mem(memory::desc({m, n}, DT::s32, Tag::ab), engine, part.data_ptr());
    plan->main.execute(stream, {{DNNL_ARG_SRC, src_mem},
                                {DNNL_ARG_WEIGHTS, plan->high_weights},
                                {DNNL_ARG_DST, part_mem},
                                {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zp_mem}});
    stream.wait();
    dst.add_(part);
  }
  stream.wait();
  if (c.defined()) {
    // Row sums of (a - za), exact in int32 for 8-bit data below 2^23 columns.
    const at::Tensor rows = a2.sum({1}, false, at::kInt) - int32_t(k) * zp_value;
    dst.add_(rows.unsqueeze(1) * c.unsqueeze(0));
  }
  std::vector<int64_t> out(a.sizes().begin(), a.sizes().end());
  out.back() = n;  // a vector times a matrix: (N)
  return dst.view(out);
}

#else  // no oneDNN in this build: the callers take their double path

bool int8_kernels_available() { return false; }
bool int8_kernels_exact_for_any_weights() { return false; }
std::string int8_kernel_note() { return "no oneDNN in this build: integer ops run in double precision"; }
std::optional<at::Tensor> int8_conv(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                    const Window&, int64_t, bool, const at::Tensor&, const at::Tensor&) {
  return std::nullopt;
}
std::optional<at::Tensor> int8_matmul(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                      bool, bool) {
  return std::nullopt;
}

#endif

}  // namespace modelstat::profiler

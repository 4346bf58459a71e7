// oneDNN fp32 convolution with post-ops (fp32_conv.hpp).
#include "profiler/ops/fp32_conv.hpp"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <tuple>

#if defined(MODELSTAT_HAVE_DNNL)
#include <oneapi/dnnl/dnnl.hpp>

#include "profiler/ops/onednn_cpu.hpp"
#include "profiler/ops/silu.hpp"
#endif

namespace modelstat::profiler {

at::Tensor channels_last_in(at::Tensor& buffer, at::IntArrayRef dims) {
  const int64_t c = dims[1], h = dims[2], w = dims[3];
  const int64_t n = dims[0] * c * h * w;
  if (!buffer.defined() || buffer.numel() < n) buffer = at::empty({n}, at::kFloat);
  return buffer.as_strided(dims, {c * h * w, 1, w * c, c});
}

void fold_batch_norm(at::Tensor& weight, at::Tensor& bias, const at::Tensor& scale, const at::Tensor& beta,
                     const at::Tensor& mean, const at::Tensor& var, double epsilon) {
  const at::Tensor s = scale.to(at::kFloat) / at::sqrt(var.to(at::kFloat) + epsilon);
  if (!bias.defined()) bias = at::zeros_like(s);
  std::vector<int64_t> per_channel(size_t(weight.dim()), 1);
  per_channel[0] = -1;
  weight = (weight * s.reshape(per_channel)).contiguous();
  bias = ((bias.to(at::kFloat) - mean.to(at::kFloat)) * s + beta.to(at::kFloat)).contiguous();
}

// `x` channels-last for the kernel. An image as fed (NCHW, 3 channels) is
// interleaved by a loop over rows, each row's three planes read in step: ATen's
// copy took 111 us for a 1x3x224x224 image where this takes 49 (tenth
// session's VM, 1 thread; bench/RESULTS.md).
at::Tensor channels_last_input(const at::Tensor& x) {
  if (x.dim() != 4 || x.size(1) != 3 || x.scalar_type() != at::kFloat || !x.is_contiguous() ||
      x.is_contiguous(at::MemoryFormat::ChannelsLast) || x.numel() == 0)
    return x.contiguous(at::MemoryFormat::ChannelsLast);
  const int64_t n = x.size(0), h = x.size(2), w = x.size(3), plane = h * w;
  at::Tensor y = at::empty(x.sizes(), x.options().memory_format(at::MemoryFormat::ChannelsLast));
  const float* src = x.data_ptr<float>();
  float* dst = y.data_ptr<float>();
  at::parallel_for(0, n * h, std::max<int64_t>(1, 32768 / (3 * w)), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t image = r / h, row = r % h;
      const float* c0 = src + image * 3 * plane + row * w;
      const float* c1 = c0 + plane;
      const float* c2 = c1 + plane;
      float* out = dst + (image * plane + row * w) * 3;
      for (int64_t i = 0; i < w; ++i) {
        out[3 * i] = c0[i];
        out[3 * i + 1] = c1[i];
        out[3 * i + 2] = c2[i];
      }
    }
  });
  return y;
}

#if defined(MODELSTAT_HAVE_DNNL)

namespace {

using namespace onednn_names;

struct Plan {
  bool native = false;  // false: oneDNN offered only a reference kernel: ATen runs it
  bool silu_after = false;  // the trailing SiLU runs on silu_inplace after the primitive
  dnnl::convolution_forward primitive;
  memory::desc weights_md;  // the primitive's weights layout
  at::Tensor weights;       // reordered into it: an ATen allocation, so memory meters count it
  memory::desc src_md, dst_md;  // NHWC: the executor's tensors
  Dims dst_dims;
  std::string impl;
  // The blocked layout (ConvLayout::Blocked): the primitive's own source and
  // destination layouts, and the reorders from NHWC into them and back.
  bool blocked = false;
  memory::desc inner_src_md, inner_dst_md;
  dnnl::reorder src_in, dst_in, dst_out;
};

// Whether a convolution of this shape runs on oneDNN's blocked layout
// (ConvLayout, fp32_conv.hpp).
bool wants_blocked(ConvLayout layout, int64_t group, int64_t c, int64_t o, int64_t kh, int64_t kw) {
  static const ConvLayout from_env = [] {
    const char* v = std::getenv("MODELSTAT_CONV_LAYOUT");
    const std::string s = v ? v : "";
    return s == "blocked" ? ConvLayout::Blocked : s == "channels_last" ? ConvLayout::ChannelsLast : ConvLayout::Auto;
  }();
  if (layout == ConvLayout::Auto) layout = from_env;
  if (layout == ConvLayout::ChannelsLast) return false;
  if (layout == ConvLayout::Blocked) return true;
  static const bool below_avx512 = [] {
    switch (dnnl::get_effective_cpu_isa()) {
      case dnnl::cpu_isa::sse41:
      case dnnl::cpu_isa::avx:
      case dnnl::cpu_isa::avx2:
      case dnnl::cpu_isa::avx2_vnni: return true;
      default: return false;
    }
  }();
  // Grouped ones stay NHWC: ResNeXt-50's and RegNetY-800MF's grouped 3x3
  // convolutions (8-48 channels per group) ran the same blocked (0.88-1.08x).
  return below_avx512 && group == 1 && kh * kw > 1 && c % 8 == 0 && o % 8 == 0;
}

// The key of a plan: the input's dims and the window.
std::vector<int64_t> plan_key(at::IntArrayRef dims, const Window& w) {
  std::vector<int64_t> key(dims.begin(), dims.end());
  for (const auto* v : {&w.strides, &w.dilations, &w.pads_begin, &w.pads_end}) key.insert(key.end(), v->begin(), v->end());
  return key;
}

void reorder(const memory::desc& from_md, void* from, const memory::desc& to_md, void* to) {
  memory a(from_md, onednn_cpu_engine(), from), b(to_md, onednn_cpu_engine(), to);
  dnnl::reorder(a, b).execute(onednn_cpu_stream(), a, b);
  onednn_cpu_stream().wait();
}

}  // namespace

struct Fp32ConvKernel::Impl {
  // The weights in ONNX's layout (O x I/group x KH x KW, BatchNormalization
  // folded) until a native plan has packed them; then undefined: the packed
  // copy is the only one kept (one more would double a CNN's weight memory),
  // and a new shape or the ATen fallback reorders from it.
  at::Tensor weight;
  at::Tensor bias;
  std::vector<int64_t> weight_dims;  // O, I/group, KH, KW
  int64_t group = 1;
  std::vector<FusedPostOp> post_ops;
  ConvLayout layout = ConvLayout::Auto;
  OnednnPostOpSplit split;    // what the primitive applies; a trailing SiLU runs after it
  int residual_post_op = -1;  // index in the primitive's post-ops
  mutable std::mutex mutex;
  mutable std::map<std::vector<int64_t>, std::shared_ptr<Plan>> plans;
  mutable std::string last_impl = "none";
  mutable std::shared_ptr<Plan> packed_from;  // the plan whose packed weights stand for `weight`

  Dims onnx_weight_dims() const {
    const int64_t o = weight_dims[0], i = weight_dims[1], kh = weight_dims[2], kw = weight_dims[3];
    return group > 1 ? Dims{group, o / group, i, kh, kw} : Dims{o, i, kh, kw};
  }
  memory::desc onnx_weight_md() const {
    return memory::desc(onnx_weight_dims(), DT::f32, group > 1 ? Tag::goihw : Tag::oihw);
  }

  // The weights in ONNX's layout; rebuilt from the packed copy when it was released. Caller holds the mutex.
  at::Tensor onnx_weight() const {
    if (weight.defined()) return weight;
    at::Tensor w = at::empty(weight_dims, at::TensorOptions().dtype(at::kFloat));
    reorder(packed_from->weights_md, packed_from->weights.data_ptr(), onnx_weight_md(), w.data_ptr());
    return w;
  }

  // k adjacent groups as one of k x the channels per group, its weight
  // block-diagonal: group g's block at input channels (g % k) x C/G of
  // merged group g / k, zeros elsewhere. The same sums (each zero weight
  // adds an exact 0 for a finite input) for k x the multiply-adds: oneDNN
  // 2.6 runs a convolution of fewer input channels per group than its vector
  // (ResNeXt-50 32x4d's first stage: 4 of 8 on AVX2) on im2col + GEMM, which
  // took 11 ms for what its direct kernel does at 8 per group in about 1
  // (Zen 3 VM). Before any plan is built; caller holds the mutex.
  void merge_groups(int64_t k) {
    const int64_t o = weight_dims[0], cpg = weight_dims[1], opg = o / group;
    at::Tensor merged = at::zeros({o, cpg * k, weight_dims[2], weight_dims[3]}, at::TensorOptions().dtype(at::kFloat));
    for (int64_t g = 0; g < group; ++g)
      merged.slice(0, g * opg, (g + 1) * opg)
          .slice(1, (g % k) * cpg, (g % k + 1) * cpg)
          .copy_(weight.slice(0, g * opg, (g + 1) * opg));
    weight = merged;
    weight_dims[1] = cpg * k;
    group /= k;
  }

  std::shared_ptr<Plan> plan(at::IntArrayRef dims, const Window& w) {
    const bool silu_after = split.silu_after;
    const std::vector<int64_t> key = plan_key(dims, w);
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = plans.find(key); it != plans.end()) return it->second;
    auto p = std::make_shared<Plan>();
    const int64_t n = dims[0], c = dims[1], h = dims[2], wd = dims[3];
    const int64_t o = weight_dims[0], kh = weight_dims[2], kw = weight_dims[3];
    const int64_t oh = (h + w.pads_begin[0] + w.pads_end[0] - ((kh - 1) * w.dilations[0] + 1)) / w.strides[0] + 1;
    const int64_t ow = (wd + w.pads_begin[1] + w.pads_end[1] - ((kw - 1) * w.dilations[1] + 1)) / w.strides[1] + 1;
    p->dst_dims = {n, o, oh, ow};
    p->src_md = memory::desc({n, c, h, wd}, DT::f32, Tag::nhwc);
    p->dst_md = memory::desc(p->dst_dims, DT::f32, Tag::nhwc);
    const memory::desc w_any(onnx_weight_dims(), DT::f32, Tag::any);
    const memory::desc b_md({o}, DT::f32, Tag::x);
    p->silu_after = silu_after;
    const dnnl::post_ops ops = onednn_post_ops(silu_after ? split.in_kernel : post_ops);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    try {
      const Dims strides(w.strides.begin(), w.strides.end());
      const Dims dilations{w.dilations[0] - 1, w.dilations[1] - 1};
      const Dims pad_l(w.pads_begin.begin(), w.pads_begin.end()), pad_r(w.pads_end.begin(), w.pads_end.end());
      const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                                 dnnl::algorithm::convolution_direct, p->src_md, w_any, b_md,
                                                 p->dst_md, strides, dilations, pad_l, pad_r);
      dnnl::convolution_forward::primitive_desc pd(desc, attr, onednn_cpu_engine());
      p->impl = pd.impl_info_str();
      p->native = p->impl.find("ref") == std::string::npos;
      // A grouped convolution of few channels per group on im2col + GEMM:
      // adjacent groups merged, once, where that gets a direct kernel.
      if (p->impl.find("gemm") != std::string::npos && group > 1 && plans.empty() && weight.defined()) {
        for (int64_t k : {2, 4, 8}) {
          if (group % k != 0 || weight_dims[1] * k > 16) continue;
          const Dims merged_dims{group / k, o / (group / k), weight_dims[1] * k, kh, kw};
          const dnnl::convolution_forward::desc merged_desc(
              dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, p->src_md,
              memory::desc(merged_dims, DT::f32, Tag::any), b_md, p->dst_md, strides, dilations, pad_l, pad_r);
          dnnl::convolution_forward::primitive_desc merged_pd;
          try {
            merged_pd = dnnl::convolution_forward::primitive_desc(merged_desc, attr, onednn_cpu_engine());
          } catch (const dnnl::error&) {
            continue;  // none for this merge
          }
          const std::string merged_impl = merged_pd.impl_info_str();
          if (merged_impl.find("gemm") != std::string::npos || merged_impl.find("ref") != std::string::npos) continue;
          merge_groups(k);
          pd = merged_pd;
          p->impl = merged_impl + ", groups merged by " + std::to_string(k);
          break;
        }
      }
      if (p->native && wants_blocked(layout, group, c, o, kh, kw)) {
        // The same convolution with the activations' layout left to oneDNN;
        // kept where that is a native kernel on another layout than NHWC.
        // (The weight's dims read again: groups merged above changed them.)
        const memory::desc any_src({n, c, h, wd}, DT::f32, Tag::any), any_dst(p->dst_dims, DT::f32, Tag::any);
        const memory::desc any_weight(onnx_weight_dims(), DT::f32, Tag::any);
        const dnnl::convolution_forward::desc blocked_desc(dnnl::prop_kind::forward_inference,
                                                           dnnl::algorithm::convolution_direct, any_src, any_weight,
                                                           b_md, any_dst, strides, dilations, pad_l, pad_r);
        dnnl::convolution_forward::primitive_desc blocked_pd;
        try {
          blocked_pd = dnnl::convolution_forward::primitive_desc(blocked_desc, attr, onednn_cpu_engine());
        } catch (const dnnl::error&) {
          // none for this shape: NHWC it stays
        }
        // Only a direct kernel gains from it: a dilated 3x3 (Ultra-Light-Fast's
        // RFB branches, M-LSD's) is offered im2col + GEMM on either layout,
        // and blocked it only adds the reorders (0.36 ms where the forecast
        // of the direct kernel was 0.10).
        const std::string blocked_impl = blocked_pd ? blocked_pd.impl_info_str() : "ref";
        if (blocked_impl.find("ref") == std::string::npos && blocked_impl.find("gemm") == std::string::npos &&
            blocked_pd.src_desc() != p->src_md) {
          pd = blocked_pd;
          p->blocked = true;
          p->impl = blocked_impl + ", blocked";
          p->inner_src_md = pd.src_desc();
          p->inner_dst_md = pd.dst_desc();
          const dnnl::engine& e = onednn_cpu_engine();
          p->src_in = dnnl::reorder(dnnl::reorder::primitive_desc(e, p->src_md, e, p->inner_src_md));
          p->dst_in = dnnl::reorder(dnnl::reorder::primitive_desc(e, p->dst_md, e, p->inner_dst_md));
          p->dst_out = dnnl::reorder(dnnl::reorder::primitive_desc(e, p->inner_dst_md, e, p->dst_md));
        }
      }
      if (p->native) {
        p->primitive = dnnl::convolution_forward(pd);
        p->weights_md = pd.weights_desc();
        if (packed_from && packed_from->weights_md == p->weights_md) {
          p->weights = packed_from->weights;  // the same layout: shared
        } else {
          p->weights = at::empty({int64_t((p->weights_md.get_size() + 3) / 4)}, at::TensorOptions().dtype(at::kFloat));
          if (weight.defined())
            reorder(onnx_weight_md(), weight.data_ptr(), p->weights_md, p->weights.data_ptr());
          else
            reorder(packed_from->weights_md, packed_from->weights.data_ptr(), p->weights_md, p->weights.data_ptr());
        }
        if (!packed_from) {
          packed_from = p;
          weight = at::Tensor();  // the packed copy now stands for it
        }
      }
    } catch (const dnnl::error& e) {
      p->native = false;
      p->impl = std::string("aten (oneDNN: ") + e.what() + ")";
    }
    if (!p->native && p->impl.rfind("aten", 0) != 0) p->impl = "aten (oneDNN offers " + p->impl + ")";
    last_impl = p->impl;
    plans.emplace(std::move(key), p);
    return p;
  }

  // The group on ATen: the fallback where oneDNN has only a reference kernel.
  at::Tensor run_aten(const at::Tensor& x, const Window& window, const at::Tensor& residual) const {
    at::Tensor w;
    {
      std::lock_guard<std::mutex> lock(mutex);
      w = onnx_weight();
    }
    at::Tensor input = x;
    std::vector<int64_t> pads = window.pads_begin;
    if (!window.symmetric()) {
      input = pad_spatial(x, window.pads_begin, window.pads_end, 0.0);
      pads.assign(pads.size(), 0);
    }
    at::Tensor y = at::convolution(input, w, bias, window.strides, pads, window.dilations, false,
                                   std::vector<int64_t>(pads.size(), 0), group);
    return apply_post_ops_aten(std::move(y), post_ops, residual);
  }
};

Fp32ConvKernel::Fp32ConvKernel(at::Tensor weight, at::Tensor bias, int64_t group, std::vector<FusedPostOp> post_ops,
                               ConvLayout layout)
    : impl_(std::make_shared<Impl>()) {
  impl_->weight = weight.to(at::kFloat).contiguous();
  impl_->layout = layout;
  impl_->weight_dims.assign(impl_->weight.sizes().begin(), impl_->weight.sizes().end());
  // The primitive is built with a bias: zeros for a Conv without one.
  impl_->bias = bias.defined() ? bias.to(at::kFloat).contiguous() : at::zeros({impl_->weight_dims[0]}, at::kFloat);
  impl_->group = group;
  impl_->post_ops = std::move(post_ops);
  impl_->split = split_trailing_silu(impl_->post_ops);
  onednn_post_ops(impl_->split.in_kernel, &impl_->residual_post_op);
}

void Fp32ConvKernel::prepare(const std::vector<int64_t>& input_dims, const Window& window) {
  if (input_dims.size() == 4) impl_->plan(input_dims, window);
}

std::vector<int64_t> Fp32ConvKernel::kernel_spatial() const { return {impl_->weight_dims[2], impl_->weight_dims[3]}; }

at::Tensor Fp32ConvKernel::run(const at::Tensor& x, const Window& window, const at::Tensor& residual,
                               at::Tensor* buffer) const {
  Impl& k = *impl_;
  const std::shared_ptr<Plan> p = x.dim() == 4 && x.scalar_type() == at::kFloat && x.device().is_cpu()
                                      ? k.plan(x.sizes(), window)
                                      : nullptr;
  if (!p || !p->native) return k.run_aten(x, window, residual);
  const at::Tensor src = channels_last_input(x);
  at::Tensor dst = buffer ? channels_last_in(*buffer, p->dst_dims)
                          : at::empty(p->dst_dims, x.options().memory_format(at::MemoryFormat::ChannelsLast));
  if (k.residual_post_op >= 0) dst.copy_(residual.expand(p->dst_dims));  // the sum post-op adds to it
  const dnnl::engine& engine = onednn_cpu_engine();
  dnnl::stream& stream = onednn_cpu_stream();
  memory src_m(p->src_md, engine, src.data_ptr());
  memory dst_m(p->dst_md, engine, dst.data_ptr());
  memory w_m(p->weights_md, engine, p->weights.data_ptr());
  // On the blocked layout: the input reordered in, the residual too (the sum
  // post-op reads the destination), the output reordered back, all on this
  // call's stream and inside its time.
  at::Tensor inner_src, inner_dst;
  memory kernel_src = src_m, kernel_dst = dst_m;
  if (p->blocked) {
    inner_src = at::empty({int64_t((p->inner_src_md.get_size() + 3) / 4)}, at::TensorOptions().dtype(at::kFloat));
    inner_dst = at::empty({int64_t((p->inner_dst_md.get_size() + 3) / 4)}, at::TensorOptions().dtype(at::kFloat));
    kernel_src = memory(p->inner_src_md, engine, inner_src.data_ptr());
    kernel_dst = memory(p->inner_dst_md, engine, inner_dst.data_ptr());
    p->src_in.execute(stream, src_m, kernel_src);
    if (k.residual_post_op >= 0) p->dst_in.execute(stream, dst_m, kernel_dst);
  }
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, kernel_src}, {DNNL_ARG_WEIGHTS, w_m}, {DNNL_ARG_DST, kernel_dst}};
  if (k.bias.defined()) args.emplace(DNNL_ARG_BIAS, memory(memory::desc({k.weight_dims[0]}, DT::f32, Tag::x), engine, k.bias.data_ptr()));
  p->primitive.execute(stream, args);
  if (p->blocked) p->dst_out.execute(stream, kernel_dst, dst_m);
  stream.wait();
  if (p->silu_after) silu_inplace(dst.data_ptr<float>(), dst.numel());
  return dst;
}

std::string Fp32ConvKernel::implementation() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->last_impl;
}

bool fp32_conv_kernels_available() { return true; }

#else  // no oneDNN: ATen only

struct Fp32ConvKernel::Impl {
  at::Tensor weight, bias;
  int64_t group = 1;
  std::vector<FusedPostOp> post_ops;
};

Fp32ConvKernel::Fp32ConvKernel(at::Tensor weight, at::Tensor bias, int64_t group, std::vector<FusedPostOp> post_ops,
                               ConvLayout)
    : impl_(std::make_shared<Impl>()) {
  impl_->weight = weight.to(at::kFloat).contiguous();
  impl_->bias = bias;
  impl_->group = group;
  impl_->post_ops = std::move(post_ops);
}

at::Tensor Fp32ConvKernel::run(const at::Tensor& x, const Window& window, const at::Tensor& residual,
                               at::Tensor*) const {
  at::Tensor input = x;
  std::vector<int64_t> pads = window.pads_begin;
  if (!window.symmetric()) {
    input = pad_spatial(x, window.pads_begin, window.pads_end, 0.0);
    pads.assign(pads.size(), 0);
  }
  at::Tensor y = at::convolution(input, impl_->weight, impl_->bias, window.strides, pads, window.dilations, false,
                                 std::vector<int64_t>(pads.size(), 0), impl_->group);
  return apply_post_ops_aten(std::move(y), impl_->post_ops, residual);
}

void Fp32ConvKernel::prepare(const std::vector<int64_t>&, const Window&) {}
std::vector<int64_t> Fp32ConvKernel::kernel_spatial() const {
  return {impl_->weight.size(2), impl_->weight.size(3)};
}
std::string Fp32ConvKernel::implementation() const { return "aten"; }
bool fp32_conv_kernels_available() { return false; }

#endif

}  // namespace modelstat::profiler

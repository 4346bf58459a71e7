// oneDNN fp32 convolution with post-ops (fp32_conv.hpp).
#include "profiler/ops/fp32_conv.hpp"

#include <map>
#include <mutex>
#include <tuple>

#if defined(MODELSTAT_HAVE_DNNL)
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace modelstat::profiler {

namespace {

using K = FusedPostOp::Kind;

// The post-ops on ATen, one pass each: the fallback and the reference.
at::Tensor apply_post_ops(at::Tensor y, const std::vector<ResolvedPostOp>& ops, const at::Tensor& residual) {
  for (const ResolvedPostOp& op : ops) {
    switch (op.kind) {
      case K::Relu: y = at::relu(y); break;
      case K::LeakyRelu: y = at::leaky_relu(y, op.alpha); break;
      case K::Clip: y = at::clamp(y, double(op.alpha), double(op.beta)); break;
      case K::HardSigmoid: y = at::clamp(y * op.alpha + op.beta, 0.0, 1.0); break;
      case K::HardSwish: y = at::hardswish(y); break;
      case K::Sigmoid: y = at::sigmoid(y); break;
      case K::Tanh: y = at::tanh(y); break;
      case K::Swish: y = y * at::sigmoid(y); break;
      case K::AddResidual: y = y + residual; break;
    }
  }
  return y;
}

}  // namespace

void fold_batch_norm(at::Tensor& weight, at::Tensor& bias, const at::Tensor& scale, const at::Tensor& beta,
                     const at::Tensor& mean, const at::Tensor& var, double epsilon) {
  const at::Tensor s = scale.to(at::kFloat) / at::sqrt(var.to(at::kFloat) + epsilon);
  if (!bias.defined()) bias = at::zeros_like(s);
  std::vector<int64_t> per_channel(size_t(weight.dim()), 1);
  per_channel[0] = -1;
  weight = (weight * s.reshape(per_channel)).contiguous();
  bias = ((bias.to(at::kFloat) - mean.to(at::kFloat)) * s + beta.to(at::kFloat)).contiguous();
}

#if defined(MODELSTAT_HAVE_DNNL)

namespace {

using dnnl::memory;
using Dims = memory::dims;
using Tag = memory::format_tag;
using DT = memory::data_type;

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}
dnnl::stream& stream() {
  thread_local dnnl::stream s(engine());
  return s;
}

struct Plan {
  bool native = false;  // false: oneDNN offered only a reference kernel: ATen runs it
  dnnl::convolution_forward primitive;
  memory weights;       // reordered into the primitive's layout
  memory::desc src_md, dst_md;
  Dims dst_dims;
  std::string impl;
};

}  // namespace

struct Fp32ConvKernel::Impl {
  at::Tensor weight, bias;
  int64_t group = 1;
  std::vector<ResolvedPostOp> post_ops;
  int residual_post_op = -1;  // index in the primitive's post-ops
  mutable std::mutex mutex;
  mutable std::map<std::vector<int64_t>, std::shared_ptr<Plan>> plans;
  mutable std::string last_impl = "none";

  std::shared_ptr<Plan> plan(const at::Tensor& x, const Window& w) const {
    std::vector<int64_t> key(x.sizes().begin(), x.sizes().end());
    for (const auto* v : {&w.strides, &w.dilations, &w.pads_begin, &w.pads_end}) key.insert(key.end(), v->begin(), v->end());
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = plans.find(key); it != plans.end()) return it->second;
    auto p = std::make_shared<Plan>();
    const int64_t n = x.size(0), c = x.size(1), h = x.size(2), wd = x.size(3);
    const int64_t o = weight.size(0), kh = weight.size(2), kw = weight.size(3);
    const int64_t oh = (h + w.pads_begin[0] + w.pads_end[0] - ((kh - 1) * w.dilations[0] + 1)) / w.strides[0] + 1;
    const int64_t ow = (wd + w.pads_begin[1] + w.pads_end[1] - ((kw - 1) * w.dilations[1] + 1)) / w.strides[1] + 1;
    p->dst_dims = {n, o, oh, ow};
    p->src_md = memory::desc({n, c, h, wd}, DT::f32, Tag::nhwc);
    p->dst_md = memory::desc(p->dst_dims, DT::f32, Tag::nhwc);
    const bool grouped = group > 1;
    const Dims w_dims = grouped ? Dims{group, o / group, c / group, kh, kw} : Dims{o, c, kh, kw};
    const memory::desc w_any(w_dims, DT::f32, Tag::any);
    const memory::desc b_md({o}, DT::f32, Tag::x);
    dnnl::post_ops ops;
    for (const ResolvedPostOp& op : post_ops) {
      switch (op.kind) {
        case K::Relu: ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f); break;
        case K::LeakyRelu: ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, op.alpha, 0.f); break;
        case K::Clip: ops.append_eltwise(1.f, dnnl::algorithm::eltwise_clip_v2, op.alpha, op.beta); break;
        case K::HardSigmoid:
          ops.append_eltwise(1.f, dnnl::algorithm::eltwise_linear, op.alpha, op.beta);
          ops.append_eltwise(1.f, dnnl::algorithm::eltwise_clip_v2, 0.f, 1.f);
          break;
        case K::HardSwish: ops.append_eltwise(1.f, dnnl::algorithm::eltwise_hardswish, 0.f, 0.f); break;
        case K::Sigmoid: ops.append_eltwise(1.f, dnnl::algorithm::eltwise_logistic, 0.f, 0.f); break;
        case K::Tanh: ops.append_eltwise(1.f, dnnl::algorithm::eltwise_tanh, 0.f, 0.f); break;
        case K::Swish: ops.append_eltwise(1.f, dnnl::algorithm::eltwise_swish, 1.f, 0.f); break;
        case K::AddResidual: ops.append_binary(dnnl::algorithm::binary_add, p->dst_md); break;
      }
    }
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    try {
      const Dims strides(w.strides.begin(), w.strides.end());
      const Dims dilations{w.dilations[0] - 1, w.dilations[1] - 1};
      const Dims pad_l(w.pads_begin.begin(), w.pads_begin.end()), pad_r(w.pads_end.begin(), w.pads_end.end());
      const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                                 dnnl::algorithm::convolution_direct, p->src_md, w_any, b_md,
                                                 p->dst_md, strides, dilations, pad_l, pad_r);
      const dnnl::convolution_forward::primitive_desc pd(desc, attr, engine());
      p->impl = pd.impl_info_str();
      p->native = p->impl.find("ref") == std::string::npos;
      if (p->native) {
        p->primitive = dnnl::convolution_forward(pd);
        memory user(memory::desc(w_dims, DT::f32, grouped ? Tag::goihw : Tag::oihw), engine(), weight.data_ptr());
        p->weights = memory(pd.weights_desc(), engine());
        dnnl::reorder(user, p->weights).execute(stream(), user, p->weights);
        stream().wait();
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
};

Fp32ConvKernel::Fp32ConvKernel(at::Tensor weight, at::Tensor bias, int64_t group, std::vector<ResolvedPostOp> post_ops)
    : impl_(std::make_shared<Impl>()) {
  impl_->weight = weight.to(at::kFloat).contiguous();
  impl_->bias = bias.defined() ? bias.to(at::kFloat).contiguous() : bias;
  impl_->group = group;
  impl_->post_ops = std::move(post_ops);
  int index = 0;
  for (const ResolvedPostOp& op : impl_->post_ops) {
    if (op.kind == K::AddResidual) impl_->residual_post_op = index;
    index += op.kind == K::HardSigmoid ? 2 : 1;
  }
}

at::Tensor Fp32ConvKernel::run(const at::Tensor& x, const Window& window, const at::Tensor& residual) const {
  const Impl& k = *impl_;
  const std::shared_ptr<Plan> p = x.dim() == 4 && x.scalar_type() == at::kFloat && x.device().is_cpu()
                                      ? k.plan(x, window)
                                      : nullptr;
  if (!p || !p->native) {
    at::Tensor input = x;
    std::vector<int64_t> pads = window.pads_begin;
    if (!window.symmetric()) {
      input = pad_spatial(x, window.pads_begin, window.pads_end, 0.0);
      pads.assign(pads.size(), 0);
    }
    at::Tensor y = at::convolution(input, k.weight, k.bias, window.strides, pads, window.dilations, false,
                                   std::vector<int64_t>(pads.size(), 0), k.group);
    return apply_post_ops(std::move(y), k.post_ops, residual);
  }
  const at::Tensor src = x.contiguous(at::MemoryFormat::ChannelsLast);
  at::Tensor dst = at::empty(p->dst_dims, x.options().memory_format(at::MemoryFormat::ChannelsLast));
  memory src_m(p->src_md, engine(), src.data_ptr());
  memory dst_m(p->dst_md, engine(), dst.data_ptr());
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src_m}, {DNNL_ARG_WEIGHTS, p->weights}, {DNNL_ARG_DST, dst_m}};
  if (k.bias.defined()) args.emplace(DNNL_ARG_BIAS, memory(memory::desc({k.weight.size(0)}, DT::f32, Tag::x), engine(), k.bias.data_ptr()));
  at::Tensor r;
  if (k.residual_post_op >= 0) {
    r = residual.to(at::kFloat).expand(p->dst_dims).contiguous(at::MemoryFormat::ChannelsLast);
    args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(k.residual_post_op) | DNNL_ARG_SRC_1,
                 memory(p->dst_md, engine(), r.data_ptr()));
  }
  p->primitive.execute(stream(), args);
  stream().wait();
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
  std::vector<ResolvedPostOp> post_ops;
};

Fp32ConvKernel::Fp32ConvKernel(at::Tensor weight, at::Tensor bias, int64_t group, std::vector<ResolvedPostOp> post_ops)
    : impl_(std::make_shared<Impl>()) {
  impl_->weight = weight.to(at::kFloat).contiguous();
  impl_->bias = bias;
  impl_->group = group;
  impl_->post_ops = std::move(post_ops);
}

at::Tensor Fp32ConvKernel::run(const at::Tensor& x, const Window& window, const at::Tensor& residual) const {
  at::Tensor input = x;
  std::vector<int64_t> pads = window.pads_begin;
  if (!window.symmetric()) {
    input = pad_spatial(x, window.pads_begin, window.pads_end, 0.0);
    pads.assign(pads.size(), 0);
  }
  at::Tensor y = at::convolution(input, impl_->weight, impl_->bias, window.strides, pads, window.dilations, false,
                                 std::vector<int64_t>(pads.size(), 0), impl_->group);
  return apply_post_ops(std::move(y), impl_->post_ops, residual);
}

std::string Fp32ConvKernel::implementation() const { return "aten"; }
bool fp32_conv_kernels_available() { return false; }

#endif

}  // namespace modelstat::profiler

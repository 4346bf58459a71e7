// Post-ops on ATen and as oneDNN post-ops (post_ops.hpp).
#include "profiler/ops/post_ops.hpp"

#include "profiler/ops/silu.hpp"

namespace modelstat::profiler {

using K = FusedPostOp::Kind;

at::Tensor gelu_dense(const at::Tensor& x, const std::string& approximate) {
  if (x.dim() == 4 && !x.is_contiguous() && x.is_contiguous(at::MemoryFormat::ChannelsLast))
    return at::gelu(x.permute({0, 2, 3, 1}), approximate).permute({0, 3, 1, 2});
  return at::gelu(x, approximate);
}

at::Tensor apply_post_ops_aten(at::Tensor y, const std::vector<FusedPostOp>& ops, const at::Tensor& residual) {
  for (const FusedPostOp& op : ops) {
    switch (op.kind) {
      case K::Relu: y = at::relu(y); break;
      case K::LeakyRelu: y = at::leaky_relu(y, op.alpha); break;
      case K::Clip: y = at::clamp(y, double(op.alpha), double(op.beta)); break;
      case K::HardSigmoid: y = at::clamp(y * op.alpha + op.beta, 0.0, 1.0); break;
      case K::HardSwish: y = at::hardswish(y); break;
      case K::Sigmoid: y = at::sigmoid(y); break;
      case K::Tanh: y = at::tanh(y); break;
      case K::Swish: y = silu_in_place(std::move(y)); break;  // y is this group's own output: in place
      case K::Gelu: y = gelu_dense(y); break;
      case K::GeluTanh: y = gelu_dense(y, "tanh"); break;
      case K::AddResidual: y = y + residual; break;
    }
  }
  return y;
}

OnednnPostOpSplit split_trailing_silu(const std::vector<FusedPostOp>& ops) {
  OnednnPostOpSplit split{ops, false};
  if (!ops.empty() && ops.back().kind == K::Swish) {
    split.in_kernel.pop_back();
    split.silu_after = true;
  }
  return split;
}

#if defined(MODELSTAT_HAVE_DNNL)
dnnl::post_ops onednn_post_ops(const std::vector<FusedPostOp>& post_ops, int* residual_index) {
  dnnl::post_ops ops;
  if (residual_index) *residual_index = -1;
  for (const FusedPostOp& op : post_ops) {
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
      case K::Gelu: ops.append_eltwise(1.f, dnnl::algorithm::eltwise_gelu_erf, 0.f, 0.f); break;
      case K::GeluTanh: ops.append_eltwise(1.f, dnnl::algorithm::eltwise_gelu_tanh, 0.f, 0.f); break;
      // The residual as oneDNN's sum post-op: dst holds it when the kernel
      // starts and the kernel accumulates into it. (A binary_add post-op
      // reading it from its own buffer sends oneDNN 2.6 to its jit_1x1
      // kernel, not brgconv: 5x slower on channels-last 1x1 convolutions.)
      case K::AddResidual:
        if (residual_index) *residual_index = ops.len();
        ops.append_sum(1.f);
        break;
    }
  }
  return ops;
}
#endif

}  // namespace modelstat::profiler

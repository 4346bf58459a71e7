// The steps of the Conv and MatMul groups (their kernels built from the
// weight store at plan time), of a Constant node the store holds, and of a
// group's member, which runs nothing.
#include <c10/util/Exception.h>

#include <atomic>
#include <memory>

#include "modelstat/error.hpp"
#include "profiler/ops/exec_helpers.hpp"
#include "profiler/ops/fp32_conv.hpp"
#include "profiler/ops/fp32_matmul.hpp"
#include "profiler/steps/step.hpp"

namespace modelstat::profiler {

namespace {

// A 1-D window as the 2-D window of height 1 the kernel runs.
Window as_2d(const Window& w) {
  Window out;
  out.kernel = {1, w.kernel[0]};
  out.strides = {1, w.strides[0]};
  out.dilations = {1, w.dilations[0]};
  out.pads_begin = {0, w.pads_begin[0]};
  out.pads_end = {0, w.pads_end[0]};
  return out;
}

// The members' op types, for describe(): "Conv group: jit:avx512_core + BatchNormalization, Relu".
std::string with_members(const Graph& g, const FusedGroup& group, std::string text) {
  for (size_t k = 0; k < group.members.size(); ++k)
    text += (k == 0 ? " + " : ", ") + g.nodes[size_t(group.members[k])].op_type;
  return text;
}

class ConvGroupStep final : public Step {
 public:
  ConvGroupStep(const Graph& g, const FusedGroup& group, int64_t opset, std::shared_ptr<Fp32ConvKernel> kernel)
      : Step(group.head),
        node_(g.nodes[size_t(group.head)]),
        opset_(opset),
        x_(group.inputs[0]),
        residual_(group.inputs[1]),
        output_(group.output),
        members_(with_members(g, group, "")),
        kernel_(std::move(kernel)) {}

  void run(StepRun& r) const override {
    at::Tensor x = r.env[size_t(x_)];
    at::Tensor residual = residual_ >= 0 ? r.env[size_t(residual_)] : at::Tensor();
    // A float16 group (conv_group.cc) computes in fp32: its input widened
    // here, its output rounded back below, in the group's own time
    // (Executor::upcasts names it as upcast). The widened input and the fp32
    // output live in this thread's two scratch buffers, shared by every such
    // group, grown to the largest and kept between runs (channels_last_in:
    // pages already mapped); the kernel widens a residual as it copies it in.
    const at::ScalarType io = x.scalar_type();
    const bool reduced = is_reduced_float(io);
    thread_local at::Tensor widened, fp32_output;
    if (reduced) {
      reduced_ = io == at::kHalf ? ReducedPath::UpcastHalf : ReducedPath::UpcastBFloat16;
      x = x.dim() == 4 ? channels_last_in(widened, x.sizes()).copy_(x) : x.to(at::kFloat);
    }
    if (x.dim() != (one_d_ ? 3 : 4)) {
      const ExecContext ctx(r.graph, node_, opset_, {x}, r.executor.options().device, at::kFloat);
      fail_input(ctx, std::string("Conv with a ") + (one_d_ ? "3" : "4") + "-D weight needs a " + (one_d_ ? "3" : "4") +
                          "-D input");
    }
    try {
      const std::shared_ptr<const Window> win = window(r, x);
      // A 1-D convolution as a 2-D one of height 1.
      at::Tensor* buffer = reduced ? &fp32_output : nullptr;
      at::Tensor y =
          one_d_ ? kernel_->run(x.unsqueeze(2), *win, residual.defined() ? residual.unsqueeze(2) : residual, buffer)
                       .squeeze(2)
                 : kernel_->run(x, *win, residual, buffer);
      r.env[size_t(output_)] = reduced ? y.to(io) : std::move(y);
    } catch (const c10::OutOfMemoryError&) {
      throw;
    } catch (const c10::Error& e) {
      throw aten_error(e, node_, r.executor.options().device);
    }
  }
  std::string describe() const override { return "Conv group: " + kernel() + members_; }
  std::string kernel() const override { return kernel_->implementation(); }
  ReducedPath reduced_path() const override { return reduced_.load(); }
  void set_one_d() { one_d_ = true; }

 private:
  // The window the kernel runs (2-D; a 1-D one as height 1) for x's spatial
  // dims: resolved from the attributes on the first run of each input shape
  // and kept (its pads depend on the input only through auto_pad).
  std::shared_ptr<const Window> window(StepRun& r, const at::Tensor& x) const {
    std::shared_ptr<const KeptWindow> kept = std::atomic_load(&window_);
    const at::IntArrayRef spatial = x.sizes().slice(2);
    if (kept && at::IntArrayRef(kept->spatial) == spatial) return {kept, &kept->window};
    const ExecContext ctx(r.graph, node_, opset_, {x}, r.executor.options().device, at::kFloat);
    auto fresh = std::make_shared<KeptWindow>();
    fresh->spatial.assign(spatial.begin(), spatial.end());
    if (one_d_)
      fresh->window = as_2d(resolve_window(ctx, attr_ints_or(node_, "kernel_shape", {kernel_->kernel_spatial()[1]}),
                                           spatial_dims(x)));
    else
      fresh->window = resolve_window(ctx, attr_ints_or(node_, "kernel_shape", kernel_->kernel_spatial()), spatial_dims(x));
    std::shared_ptr<const KeptWindow> done = std::move(fresh);
    std::atomic_store(&window_, done);
    return {done, &done->window};
  }

  struct KeptWindow {
    std::vector<int64_t> spatial;
    Window window;
  };
  // Atomic: runs may overlap (--concurrency).
  mutable std::shared_ptr<const KeptWindow> window_;
  const Node& node_;
  int64_t opset_;
  int x_, residual_, output_;
  std::string members_;
  std::shared_ptr<Fp32ConvKernel> kernel_;
  bool one_d_ = false;  // a 1-D convolution, run with a height of 1
  mutable std::atomic<ReducedPath> reduced_{ReducedPath::Unknown};  // widened from fp16/bf16 on its last run
};

class MatMulGroupStep final : public Step {
 public:
  MatMulGroupStep(const Graph& g, const FusedGroup& group, std::shared_ptr<Fp32MatmulKernel> kernel)
      : Step(group.head),
        node_(g.nodes[size_t(group.head)]),
        a_(group.inputs[0]),
        residual_(group.inputs[1]),
        output_(group.output),
        members_(with_members(g, group, "")),
        kernel_(std::move(kernel)) {}

  void run(StepRun& r) const override {
    const at::Tensor& a = r.env[size_t(a_)];
    const at::Tensor residual = residual_ >= 0 ? r.env[size_t(residual_)] : at::Tensor();
    try {
      r.env[size_t(output_)] = kernel_->run(a, residual);
    } catch (const c10::OutOfMemoryError&) {
      throw;
    } catch (const c10::Error& e) {
      throw aten_error(e, node_, r.executor.options().device);
    }
  }
  std::string describe() const override { return node_.op_type + " group: " + kernel() + members_; }
  std::string kernel() const override { return kernel_->implementation(); }

 private:
  const Node& node_;
  int a_, residual_, output_;
  std::string members_;
  std::shared_ptr<Fp32MatmulKernel> kernel_;
};

class ConstantStep final : public Step {
 public:
  ConstantStep(int node, int output) : Step(node), output_(output) {}
  void run(StepRun& r) const override { r.env[size_t(output_)] = r.executor.weights().get(&r.graph, output_); }
  std::string describe() const override { return "constant (loaded with the weights)"; }

 private:
  int output_;
};

class AbsorbedStep final : public Step {
 public:
  AbsorbedStep(int node, std::string head) : Step(node), head_(std::move(head)) {}
  void run(StepRun&) const override {}
  std::string describe() const override { return "absorbed into " + head_; }

 private:
  std::string head_;
};

}  // namespace

std::unique_ptr<Step> make_conv_group_step(const Graph& g, const Model& model, const FusedGroup& group,
                                           const WeightStore& weights) {
  const auto& spec = std::get<ConvKernelSpec>(group.spec);
  const Node& conv = g.nodes[size_t(group.head)];
  std::shared_ptr<Fp32ConvKernel> kernel;
  try {
    auto constant = [&](int t) -> const at::Tensor& { return weights.get(&g, t); };
    at::Tensor weight = constant(spec.weight).to(at::kFloat);
    at::Tensor bias = spec.bias >= 0 ? constant(spec.bias).to(at::kFloat) : at::Tensor();
    if (!weight.defined() || (weight.dim() != 4 && weight.dim() != 3)) return nullptr;
    if (spec.batch_norm >= 0) {
      const Node& bn = g.nodes[size_t(spec.batch_norm)];
      auto stat = [&](size_t k) -> const at::Tensor& { return constant(constant_source(g, bn.inputs[k])); };
      fold_batch_norm(weight, bias, stat(1), stat(2), stat(3), stat(4), bn.attr_float("epsilon", 1e-5));
    }
    if (weight.dim() == 3) weight = weight.unsqueeze(2).contiguous();  // 1-D: O x I/group x 1 x K
    kernel = std::make_shared<Fp32ConvKernel>(std::move(weight), std::move(bias), conv.attr_int("group", 1),
                                              spec.post_ops);
  } catch (const std::exception&) {
    return nullptr;  // a constant the weight store does not hold: the nodes run as written
  }
  // Pack the weights now when the graph binds the input's shape (the run then builds nothing).
  const bool one_d = g.tensors[size_t(spec.weight)].shape.dims.size() == 3;
  const Tensor& x = g.tensors[size_t(conv.inputs[0])];
  if (x.shape.fully_known() && x.shape.dims.size() == (one_d ? 3 : 4)) {
    try {
      const at::Tensor probe = at::empty(known_dims(x.shape, "input of " + conv.name), at::kFloat);
      ExecContext ctx(g, conv, model.opset_version(""), {probe}, at::kCPU, at::kFloat);
      if (one_d) {
        const Window win = resolve_window(ctx, attr_ints_or(conv, "kernel_shape", {kernel->kernel_spatial()[1]}),
                                          spatial_dims(probe));
        kernel->prepare(probe.unsqueeze(2).sizes().vec(), as_2d(win));
      } else {
        kernel->prepare(probe.sizes().vec(),
                        resolve_window(ctx, attr_ints_or(conv, "kernel_shape", kernel->kernel_spatial()),
                                       spatial_dims(probe)));
      }
    } catch (const std::exception&) {
      // A window the node's own run will refuse with its error: built (and refused) then.
    }
  }
  auto step = std::make_unique<ConvGroupStep>(g, group, model.opset_version(""), std::move(kernel));
  if (one_d) step->set_one_d();
  return step;
}

std::unique_ptr<Step> make_matmul_group_step(const Graph& g, const FusedGroup& group, const ExecOptions& options,
                                             const WeightStore& weights) {
  const auto& spec = std::get<MatMulKernelSpec>(group.spec);
  std::shared_ptr<Fp32MatmulKernel> kernel;
  try {
    at::Tensor weight = weights.get(&g, spec.weight).to(at::kFloat);
    if (!weight.defined() || weight.dim() != 2) return nullptr;
    if (spec.transposed) weight = weight.t();
    if (spec.alpha != 1.0) weight = weight * spec.alpha;
    at::Tensor bias;
    if (spec.bias >= 0) {
      bias = weights.get(&g, spec.bias).to(at::kFloat).reshape({-1});
      if (spec.beta != 1.0) bias = bias * spec.beta;
    }
    kernel = std::make_shared<Fp32MatmulKernel>(std::move(weight), std::move(bias), spec.post_ops, options.gemm);
  } catch (const std::exception&) {
    return nullptr;  // a constant the weight store does not hold: the nodes run as written
  }
  // Choose the kernel now when the graph binds A's shape (the run then builds nothing).
  const Tensor& a = g.tensors[size_t(group.inputs[0])];
  if (a.shape.fully_known() && a.shape.dims.size() >= 2) {
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < a.shape.dims.size(); ++d) rows *= a.shape.dims[d].value;
    if (a.shape.dims.back().value == kernel->k()) kernel->prepare(rows);
  }
  return std::make_unique<MatMulGroupStep>(g, group, std::move(kernel));
}

std::string matmul_step_implementation(const Step& step) {
  const auto* m = dynamic_cast<const MatMulGroupStep*>(&step);
  return m ? m->kernel() : std::string();
}

std::unique_ptr<Step> make_constant_step(int node, int output) { return std::make_unique<ConstantStep>(node, output); }

std::unique_ptr<Step> make_absorbed_step(int node, std::string head) {
  return std::make_unique<AbsorbedStep>(node, std::move(head));
}

}  // namespace modelstat::profiler

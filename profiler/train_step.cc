// TrainStep: forward with autograd on, loss, backward, optimizer update.
//
// Naming the node whose gradient fails. ATen refuses some differentiations
// in the forward (a float weight in a slot it cannot differentiate, e.g.
// NegativeLogLikelihoodLoss's class weights): the executor then throws with
// the node already named. Others fail only inside backward ("the derivative
// for X is not implemented"), where the ONNX node is unknown. For those, the
// first step records, after each node, autograd's sequence number (every
// autograd function created in the forward takes the next number on this
// thread), so each function maps to the node that created it; and before
// backward, a pre-hook on every function of the graph records which one the
// engine entered last (BackwardFailureLocator). The hooks live only for that
// step's graph.
#include "profiler/train_step.hpp"

#include <ATen/SequenceNumber.h>
#include "profiler/torch_compat.hpp"
#include <c10/core/GradMode.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <set>
#include <unordered_set>

#include "modelstat/error.hpp"
#include "profiler/torch_errors.hpp"

namespace modelstat::profiler {

const char* const kTrainLossDescription =
    "sum over the float graph outputs that depend on a trainable weight of mean(output^2)";

namespace {

constexpr uint64_t kNoSequence = std::numeric_limits<uint64_t>::max();  // AccumulateGrad and other leaves

// Records the sequence number of the autograd function the engine enters.
struct EnteredPreHook final : torch::autograd::FunctionPreHook {
  EnteredPreHook(std::shared_ptr<std::atomic<uint64_t>> last, uint64_t sequence)
      : last_entered(std::move(last)), sequence_nr(sequence) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& grads) override {
    last_entered->store(sequence_nr);
    return grads;
  }
  std::shared_ptr<std::atomic<uint64_t>> last_entered;
  uint64_t sequence_nr;
};

// The BatchNormalization running statistics of graph g (inputs 3 and 4).
std::set<int> batch_norm_buffers(const Graph& g) {
  std::set<int> out;
  for (const Node& node : g.nodes) {
    if (node.op_type != "BatchNormalization" || !node.domain.empty()) continue;
    for (size_t k = 3; k < node.inputs.size() && k < 5; ++k)
      if (node.inputs[k] >= 0) out.insert(node.inputs[k]);
  }
  return out;
}

// LibTorch's CPU autocast to bfloat16 over one forward, as Python's
// torch.autocast("cpu", dtype=torch.bfloat16) enters and leaves it: leaving
// the outermost region clears the cache of 16-bit weight casts; the copies
// autograd saved for backward live on in its graph.
class CpuAutocastBf16 {
 public:
  explicit CpuAutocastBf16(bool on) : on_(on) {
    if (!on_) return;
    was_enabled_ = torch_compat::cpu_autocast_enabled();
    was_dtype_ = torch_compat::cpu_autocast_dtype();
    torch_compat::set_cpu_autocast_enabled(true);
    torch_compat::set_cpu_autocast_dtype(at::kBFloat16);
    at::autocast::increment_nesting();
  }
  ~CpuAutocastBf16() {
    if (!on_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    torch_compat::set_cpu_autocast_enabled(was_enabled_);
    torch_compat::set_cpu_autocast_dtype(was_dtype_);
  }
  CpuAutocastBf16(const CpuAutocastBf16&) = delete;
  CpuAutocastBf16& operator=(const CpuAutocastBf16&) = delete;

 private:
  bool on_;
  bool was_enabled_ = false;
  at::ScalarType was_dtype_ = at::kBFloat16;
};

}  // namespace

void BackwardFailureLocator::begin(size_t segments) {
  ends_.assign(segments + 1, at::sequence_number::peek());
}

void BackwardFailureLocator::end_segment(size_t i) {
  if (i + 1 < ends_.size()) ends_[i + 1] = at::sequence_number::peek();
}

void BackwardFailureLocator::backward(const at::Tensor& loss,
                                      const std::function<void(int, const std::string&)>& on_failure) const {
  auto last_entered = std::make_shared<std::atomic<uint64_t>>(kNoSequence);
  std::unordered_set<torch::autograd::Node*> seen;
  std::vector<torch::autograd::Node*> stack;
  if (loss.grad_fn()) stack.push_back(loss.grad_fn().get());
  while (!stack.empty()) {
    torch::autograd::Node* fn = stack.back();
    stack.pop_back();
    if (!fn || !seen.insert(fn).second) continue;
    if (fn->sequence_nr() != kNoSequence)
      fn->add_pre_hook(std::make_unique<EnteredPreHook>(last_entered, fn->sequence_nr()));
    for (const torch::autograd::Edge& edge : fn->next_edges()) stack.push_back(edge.function.get());
  }
  try {
    loss.backward();
  } catch (const std::exception& e) {
    const uint64_t s = last_entered->load();
    // Segment i owns the sequence numbers in [ends_[i], ends_[i + 1]).
    const size_t after = size_t(std::upper_bound(ends_.begin(), ends_.end(), s) - ends_.begin());
    const bool inside = s != kNoSequence && after > 0 && after < ends_.size();
    on_failure(inside ? int(after) - 1 : -1, first_line(e));
    throw;
  }
}

TrainStep::TrainStep(Executor& executor, OptimizerConfig config, TrainPrecision precision)
    : executor_(executor), config_(config), precision_(precision) {
  // Conv groups run oneDNN inference kernels (no autograd) on packed weights
  // the weight store no longer holds: a step needs the graph as written.
  if ((executor_.options().fuse_cpu || executor_.options().gemm != GemmBackend::Blas) &&
      executor_.options().device.is_cpu())
    throw Error(ErrorKind::Runtime,
                "a training step needs an executor built with fuse_cpu off and gemm Blas (ExecOptions)");
  if (executor_.options().float_dtype != at::kFloat)
    throw Error(ErrorKind::Usage,
                "--train-step needs fp32 weights (they are the master weights); for mixed precision use "
                "--precision bf16, not --dtype");
  if (precision_ == TrainPrecision::Fp16)
    throw Error(ErrorKind::Usage,
                "--precision fp16 is not measured: LibTorch 1.13's CPU autocast is bf16 only, and fp16 training "
                "needs loss scaling (use --precision bf16, or 'modelstat fit --precision fp16' for the forecast)");
  if (precision_ == TrainPrecision::Bf16 && !executor_.options().device.is_cpu())
    throw Error(ErrorKind::Usage, "--precision bf16 is measured on the CPU only (CPU autocast); on CUDA it is not "
                                  "implemented");
  const Graph& g = executor_.model().graph;
  const std::set<int> buffers = batch_norm_buffers(g);
  if (!buffers.empty())
    notices_.push_back(
        "BatchNormalization trains in its inference form, as the ONNX graph defines it: stored running "
        "statistics, not batch statistics (which a framework's train mode computes), and they are not "
        "updated");
  // What a framework would train (modelstat::trainable_initializers): not the
  // BatchNormalization statistics, nor the constants an export carries (Clip's
  // bounds, a GELU's 0.5 and sqrt(2)).
  const std::vector<bool> trainable = trainable_initializers(g);
  for (int t : g.initializers) {
    if (!trainable[size_t(t)]) continue;
    const at::Tensor& w = executor_.weights().get(&g, t);
    if (!w.defined() || !at::isFloatingType(w.scalar_type()) || w.numel() == 0) continue;
    // The weight store's own tensor: the executor reads it on every run, so
    // marking it (and updating it in place) is what trains the model.
    w.requires_grad_(true);
    params_.push_back(w);
    names_.push_back(g.tensors[size_t(t)].name);
  }
  if (params_.empty())
    throw Error(ErrorKind::Input, "the model has no float weights (initializers) to train");
  previous_in_place_ = executor_.options().in_place;
  executor_.set_in_place(false);
}

TrainStep::~TrainStep() {
  for (at::Tensor& p : params_) {
    p.mutable_grad() = at::Tensor();
    p.requires_grad_(false);
  }
  executor_.set_in_place(previous_in_place_);
}

int64_t TrainStep::trainable_params() const {
  int64_t n = 0;
  for (const at::Tensor& p : params_) n += p.numel();
  return n;
}

at::Tensor TrainStep::forward_loss(const std::vector<at::Tensor>& inputs, BackwardFailureLocator* locator) {
  c10::AutoGradMode grad_mode(true);
  Executor::NodeHook hook;
  if (locator) {
    locator->begin(executor_.model().graph.nodes.size());
    hook = [locator](int node, bool after) {
      if (after) locator->end_segment(size_t(node));
    };
  }
  // The loss too is formed under autocast, as AMP's recipe does.
  const CpuAutocastBf16 autocast(precision_ == TrainPrecision::Bf16);
  std::vector<at::Tensor> outputs;
  try {
    outputs = executor_.run(inputs, hook);
  } catch (const Error& e) {
    if (e.node().empty()) throw;
    throw Error(e.kind(), "cannot train through this node: " + e.message(), e.file(), e.node(), e.op());
  }
  at::Tensor loss;
  for (const at::Tensor& y : outputs) {
    if (!y.defined() || !at::isFloatingType(y.scalar_type()) || !y.requires_grad()) continue;
    at::Tensor term = y.square().mean();
    loss = loss.defined() ? loss + term : term;
  }
  if (!loss.defined())
    throw Error(
        ErrorKind::Input,
        "no float graph output depends on a trainable weight through differentiable ops: nothing to train");
  return loss;
}

void TrainStep::checked_backward(const at::Tensor& loss, const BackwardFailureLocator& locator) {
  locator.backward(loss, [this](int node, const std::string& message) {
    if (node < 0) throw Error(ErrorKind::Runtime, "training step: backward failed (in the loss): " + message);
    const Node& n = executor_.model().graph.nodes[size_t(node)];
    throw Error(ErrorKind::Runtime, "cannot train through this node: backward failed: " + message, {}, n.name,
                n.op_type);
  });
}

void TrainStep::update() {
  at::NoGradGuard no_grad;
  const double lr = config_.learning_rate;
  const double t = double(steps_ + 1);
  state_a_.resize(params_.size());
  state_b_.resize(params_.size());
  for (size_t i = 0; i < params_.size(); ++i) {
    at::Tensor& p = params_[i];
    const at::Tensor g = p.grad();
    if (!g.defined()) continue;
    switch (config_.kind) {
      case Optimizer::Sgd:
        p.add_(g, -lr);
        break;
      case Optimizer::Momentum: {
        at::Tensor& b = state_a_[i];
        if (!b.defined())
          b = g.clone();
        else
          b.mul_(config_.momentum).add_(g);
        p.add_(b, -lr);
        break;
      }
      case Optimizer::Adam: {
        at::Tensor& m = state_a_[i];
        at::Tensor& v = state_b_[i];
        if (!m.defined()) {
          m = at::zeros_like(p);
          v = at::zeros_like(p);
        }
        m.mul_(config_.beta1).add_(g, 1.0 - config_.beta1);
        v.mul_(config_.beta2).addcmul_(g, g, 1.0 - config_.beta2);
        const double correction1 = 1.0 - std::pow(config_.beta1, t);
        const double correction2 = 1.0 - std::pow(config_.beta2, t);
        const at::Tensor denom = (v.sqrt() / std::sqrt(correction2)).add_(config_.epsilon);
        p.addcdiv_(m, denom, -lr / correction1);
        break;
      }
    }
    p.mutable_grad() = at::Tensor();  // set to none, as zero_grad(set_to_none=True)
  }
}

at::Tensor TrainStep::step(const std::vector<at::Tensor>& inputs, const StepTimers& timers) {
  const bool first = steps_ == 0;
  BackwardFailureLocator locator;
  if (timers.whole) timers.whole->start();
  if (timers.forward) timers.forward->start();
  at::Tensor loss = forward_loss(inputs, first ? &locator : nullptr);
  if (timers.forward) timers.forward->stop();
  if (timers.backward) timers.backward->start();
  if (first)
    checked_backward(loss, locator);
  else
    loss.backward();
  if (timers.backward) timers.backward->stop();
  if (first) {
    // Initializers with no gradient are not on a differentiable path to the
    // loss: leave them out of the optimizer (and of autograd from now on).
    std::vector<at::Tensor> kept;
    std::vector<std::string> kept_names, dropped;
    for (size_t i = 0; i < params_.size(); ++i) {
      if (params_[i].grad().defined()) {
        kept.push_back(params_[i]);
        kept_names.push_back(names_[i]);
      } else {
        params_[i].requires_grad_(false);
        dropped.push_back(names_[i]);
      }
    }
    if (kept.empty())
      throw Error(ErrorKind::Input, "no trainable weight received a gradient: nothing to train");
    if (!dropped.empty()) {
      std::string list;
      for (size_t i = 0; i < dropped.size() && i < 5; ++i) list += (i ? ", " : "") + dropped[i];
      if (dropped.size() > 5) list += ", ...";
      notices_.push_back(
          std::to_string(dropped.size()) +
          " float initializer(s) got no gradient (not on a differentiable path to the loss) and are "
          "not trained: " +
          list);
    }
    params_ = std::move(kept);
    names_ = std::move(kept_names);
  }
  if (timers.optimizer) timers.optimizer->start();
  update();
  if (timers.optimizer) timers.optimizer->stop();
  if (timers.whole) timers.whole->stop();
  ++steps_;
  return loss.detach();
}

}  // namespace modelstat::profiler

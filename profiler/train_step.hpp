// One training step through LibTorch autograd on the executor's ATen ops:
// forward with gradients recorded, a scalar loss, backward, an optimizer
// update written in ATen, gradients set to none. What a step is lives here;
// how it is timed (warm-up, the stopping rule, the device's timers) is the
// protocol's (protocol.cc).
//
// Trainable parameters: modelstat::trainable_initializers (graph.hpp), the
// floating-point initializers of the top-level graph except what a framework
// keeps as buffers or constants: BatchNormalization's running mean and
// variance, Clip's bounds, Pow's exponent, one-element operands of Add, Sub,
// Mul and Div (an exported GELU's 0.5 and sqrt(2)). After the first
// step, an initializer that received no gradient (a Resize scale, a float
// constant feeding only non-differentiable ops) is dropped from the optimizer
// and reported in notices(). Constant-node values are not parameters.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "modelstat/optimizer.hpp"
#include "modelstat/training_setup.hpp"
#include "profiler/executor.hpp"
#include "profiler/timer.hpp"

namespace modelstat::profiler {

// The update rules, as PyTorch's torch.optim writes them (single-tensor form),
// g the gradient of parameter p, t the step number from 1:
//   sgd       p -= lr * g
//   momentum  b = momentum * b + g  (b = g at the first step);  p -= lr * b
//   adam      m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g^2
//             p -= lr * (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + epsilon)
struct OptimizerConfig {
  Optimizer kind = Optimizer::Adam;
  double learning_rate = 1e-3;
  double momentum = 0.9;
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
};

// How the scalar loss is formed from the graph outputs, for the report.
extern const char* const kTrainLossDescription;

// Device timers for the parts of one step; any may be null (not timed).
// whole spans forward + backward + optimizer.
struct StepTimers {
  IntervalTimer* whole = nullptr;
  IntervalTimer* forward = nullptr;
  IntervalTimer* backward = nullptr;
  IntervalTimer* optimizer = nullptr;
};

// Which forward segment (the executor's nodes) created the autograd function
// that fails inside backward. Autograd numbers every function it creates, in
// order, per thread (at::sequence_number): recording the number at each
// segment boundary maps a function to its segment. backward() puts a
// pre-hook on every function of the loss's graph that records the one the
// engine entered last; the hooks go with the graph.
class BackwardFailureLocator {
 public:
  // Before the first segment; forgets earlier boundaries.
  void begin(size_t segments);
  // After segment i (0-based, in order).
  void end_segment(size_t i);
  // loss.backward(); when it throws, calls on_failure(segment, one-line
  // message) with segment -1 when the failing function belongs to no segment
  // (the loss itself), and rethrows the original error if on_failure returns.
  void backward(const at::Tensor& loss, const std::function<void(int, const std::string&)>& on_failure) const;

 private:
  std::vector<uint64_t> ends_;  // ends_[0]: before segment 0; ends_[i + 1]: after segment i
};

class TrainStep {
 public:
  // Marks the trainable parameters requires_grad and turns the executor's
  // in-place reuse off, both until destruction. The executor must outlive
  // this and run fp32 (its weights are the fp32 master weights). precision
  // bf16: the forward and the loss run under LibTorch's CPU autocast to
  // bfloat16 (torch.autocast("cpu", torch.bfloat16)): the ops on its
  // lower-precision list (matmul, addmm, conv, ...) cast their inputs to
  // bf16, a weight's cast cached for the forward; gradients, the optimizer
  // state and the update stay fp32, as PyTorch AMP's. Error(Input) when the
  // model has no float weight; Error(Usage) for a non-fp32 executor, or a
  // mixed precision other than bf16 on the CPU (LibTorch 1.13's CPU autocast
  // is bf16 only; fp16 needs CUDA and loss scaling, not modelled here).
  TrainStep(Executor& executor, OptimizerConfig config, TrainPrecision precision = TrainPrecision::Fp32);
  ~TrainStep();
  TrainStep(const TrainStep&) = delete;
  TrainStep& operator=(const TrainStep&) = delete;

  // One step on `inputs`; returns the loss of this step's forward (before the
  // update), detached, on the device. The first step is checked: an op whose
  // gradient cannot be computed fails with Error(Runtime) naming its node
  // (forward-time refusals are named by the executor; a failure inside
  // backward is traced back to the node whose autograd function failed).
  at::Tensor step(const std::vector<at::Tensor>& inputs, const StepTimers& timers = {});

  // Elements of the parameters the optimizer updates.
  int64_t trainable_params() const;
  const std::vector<at::Tensor>& parameters() const { return params_; }
  const std::vector<std::string>& parameter_names() const { return names_; }
  const std::vector<std::string>& notices() const { return notices_; }
  int64_t steps_done() const { return steps_; }

 private:
  at::Tensor forward_loss(const std::vector<at::Tensor>& inputs, BackwardFailureLocator* locator);
  void checked_backward(const at::Tensor& loss, const BackwardFailureLocator& locator);
  void update();

  Executor& executor_;
  OptimizerConfig config_;
  TrainPrecision precision_ = TrainPrecision::Fp32;
  bool previous_in_place_ = true;
  std::vector<at::Tensor> params_;
  std::vector<std::string> names_;
  std::vector<at::Tensor> state_a_, state_b_;  // momentum buffer; Adam's m and v
  std::vector<std::string> notices_;
  int64_t steps_ = 0;
};

}  // namespace modelstat::profiler

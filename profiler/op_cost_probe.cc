// Per-op-class costs (modelstat::OpCost) for `modelstat fit`: what one node of
// a class costs as modelstat's executor runs it, beyond what a roofline says.
//
// A roofline prices an elementwise node at its bytes over the copy bandwidth,
// but on a CPU an Erf computes for far longer than it moves data, a MaxPool
// walks its windows in scalar code, and every small node pays a fixed cost of
// dispatch, allocation and (in training) autograd's bookkeeping that depends
// on the op. So each class is measured here, as nn-Meter builds kernel-level
// predictors on the device: a one-node graph at a tiny size (its fixed cost)
// and at a large one (its cost per byte), inference and training. The line
// through the two points, in the analyzer's bytes (read + written) of the
// node, is what fit reads back. The training forward is the node as a
// training step runs it (unfused, NCHW) with autograd recording (input and
// weights require grad); training is that forward plus backward() of the
// output's sum; backward = training - training forward - the cost of one
// backward() call on a tiny leaf (the engine's start, the sum), which is per
// step, not per node.
#include "profiler/op_cost_probe.hpp"

#include <ATen/ATen.h>

#include <functional>
#include <map>

#include "modelstat/analysis.hpp"
#include "modelstat/error.hpp"
#include "profiler/ceilings_timing.hpp"
#include "profiler/executor.hpp"
#include "profiler/probe_graph.hpp"
#include "profiler/run_setup.hpp"
#include "profiler/torch_errors.hpp"
#include "profiler/run_context.hpp"
#include "profiler/train_step.hpp"

namespace modelstat::profiler {

namespace {

using Dims = std::vector<int64_t>;

// Sizes: tiny (fixed cost), large (per byte; several MB, past the caches a
// core owns, as the activations of a CNN at batch 1).
constexpr int64_t kSmallC = 8, kSmallH = 4;
constexpr int64_t kLargeC = 64, kLargeH = 112;
constexpr int64_t kContractionC = 64, kContractionH = 56;  // Conv 64->64 3x3 at 56x56; Gemm 64x224 by 224x224
// Gemm/thin: one row by a K x K weight, K = C x H: 32 and 5792 (a 128 MiB
// weight, four times the project VM's last-level cache, so it streams from
// memory as a classifier's weights do).
constexpr int64_t kThinC = 32, kThinH = 181;
// The large point's inference and training alternate over two rounds.
// (Two since the sixteenth session, which added the training conv samples
// to the calibration: three took 95 s of op classes out of a 310 s
// calibration on a slow spell of that VM, over the 300 s bound.)
constexpr int kLargeRounds = 2;

// One class: builds its node on an NCHW input of C channels and H x W, at
// (kSmallC, kSmallH) and at (large_c, large_h).
struct ProbeClass {
  std::string key;
  std::function<void(ProbeGraph&, int64_t c, int64_t h)> build;
  int64_t large_c = kLargeC, large_h = kLargeH;
  // The inference point takes its 4-D inputs channels-last, as the CPU
  // executor's Conv groups leave the activations that pooling reads (a MaxPool
  // of 1x64x112x112 ran 13x slower NCHW than the resnet18 layer it priced).
  // Training runs unfused, NCHW, and keeps the layout as built.
  bool channels_last = false;
};

// Each class is named after its op (before any '/'), an op with a record whose
// dense family (OpTraits::dense_family, analyzer/op_traits.hpp) says which
// classes fit prices it with: "Conv..." classes for Conv, "Gemm..." for Gemm
// and MatMul, the op's own class otherwise (tests/profiler/exec_registry_test.cc).
std::vector<ProbeClass> classes() {
  std::vector<ProbeClass> out;
  auto same = [](int64_t c, int64_t h) { return Dims{1, c, h, h}; };
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Erf", "Exp"})
    out.push_back({op, [op, same](ProbeGraph& p, int64_t c, int64_t h) { p.node(op, {p.input(same(c, h))}, same(c, h)); }});
  // GELU (erf form) as the executor runs a GELU written out (one at::gelu)
  // and as a Gemm/MatMul or Conv group's post-op prices it: ONNX Gelu, opset 20.
  out.push_back({"Gelu", [same](ProbeGraph& p, int64_t c, int64_t h) {
                   p.model.opsets = {{"", 20}};
                   p.node("Gelu", {p.input(same(c, h))}, same(c, h));
                 }});
  out.push_back({"Clip", [same](ProbeGraph& p, int64_t c, int64_t h) {
                   const int x = p.input(same(c, h));
                   p.node("Clip", {x, p.scalar(0.0f), p.scalar(6.0f)}, same(c, h));  // ReLU6
                 }});
  // Binary ops on two activations of the same shape (a residual Add, a gate's Mul).
  for (const char* op : {"Add", "Sub", "Mul", "Div"})
    out.push_back({op, [op, same](ProbeGraph& p, int64_t c, int64_t h) {
                     const int a = p.input(same(c, h));
                     const int b = p.input(same(c, h));
                     p.node(op, {a, b}, same(c, h));
                   }});
  out.push_back({"MaxPool", [same](ProbeGraph& p, int64_t c, int64_t h) {
                   p.node("MaxPool", {p.input(same(c, h))}, same(c, (h + 1) / 2),
                          {{"kernel_shape", Dims{3, 3}}, {"strides", Dims{2, 2}}, {"pads", Dims{1, 1, 1, 1}}});
                 }, kLargeC, kLargeH, /*channels_last=*/true});
  out.push_back({"AveragePool", [same](ProbeGraph& p, int64_t c, int64_t h) {
                   p.node("AveragePool", {p.input(same(c, h))}, same(c, (h + 1) / 2),
                          {{"kernel_shape", Dims{3, 3}}, {"strides", Dims{2, 2}}, {"pads", Dims{1, 1, 1, 1}}});
                 }, kLargeC, kLargeH, /*channels_last=*/true});
  out.push_back({"GlobalAveragePool", [same](ProbeGraph& p, int64_t c, int64_t h) {
                   p.node("GlobalAveragePool", {p.input(same(c, h))}, same(c, 1));
                 }, kLargeC, kLargeH, /*channels_last=*/true});
  out.push_back({"BatchNormalization", [same](ProbeGraph& p, int64_t c, int64_t h) {
                   const int x = p.input(same(c, h));
                   p.node("BatchNormalization", {x, p.weight({c}), p.weight({c}), p.weight({c}), p.weight({c})}, same(c, h));
                 }});
  out.push_back({"LayerNormalization", [same](ProbeGraph& p, int64_t c, int64_t h) {
                   const int x = p.input(same(c, h));
                   p.node("LayerNormalization", {x, p.weight({h}), p.weight({h})}, same(c, h), {{"axis", int64_t(-1)}});
                 }});
  out.push_back({"Softmax", [same](ProbeGraph& p, int64_t c, int64_t h) {
                   p.node("Softmax", {p.input(same(c, h))}, same(c, h), {{"axis", int64_t(-1)}});
                 }});
  out.push_back({"Transpose", [same](ProbeGraph& p, int64_t c, int64_t h) {
                   p.node("Transpose", {p.input(same(c, h))}, same(c, h), {{"perm", Dims{0, 1, 3, 2}}});
                 }});
  out.push_back({"Concat", [](ProbeGraph& p, int64_t c, int64_t h) {
                   const int a = p.input({1, c, h, h});
                   const int b = p.input({1, c, h, h});
                   p.node("Concat", {a, b}, {1, 2 * c, h, h}, {{"axis", int64_t(1)}});
                 }});
  // The same Concat of channels-last inputs, as a CNN's branches (Conv groups'
  // outputs) are joined: each output row interleaves the inputs' channels
  // (2.6; in a model on the thirteenth session's VM a Concat of two Conv
  // outputs took 2.7x the time of one of two NCHW inputs, though this probe
  // measured the two classes alike there).
  out.push_back({"Concat/channels-last", [](ProbeGraph& p, int64_t c, int64_t h) {
                   const int a = p.input({1, c, h, h});
                   const int b = p.input({1, c, h, h});
                   p.node("Concat", {a, b}, {1, 2 * c, h, h}, {{"axis", int64_t(1)}});
                 }, kLargeC, kLargeH, /*channels_last=*/true});
  // Depthwise: channels-last too, as a depthwise Conv group reads the
  // activations the groups before it leave (measured NCHW it priced
  // MobileNet-V2's depthwise groups 2.1x over).
  out.push_back({"Conv/depthwise", [same](ProbeGraph& p, int64_t c, int64_t h) {
                   const int x = p.input(same(c, h));
                   p.node("Conv", {x, p.weight({c, 1, 3, 3})}, same(c, h),
                          {{"kernel_shape", Dims{3, 3}}, {"pads", Dims{1, 1, 1, 1}}, {"group", c}});
                 }, kLargeC, kLargeH, /*channels_last=*/true});
  // Dense contractions: only their fixed cost and backward / forward ratio are used.
  out.push_back({"Conv",
                 [same](ProbeGraph& p, int64_t c, int64_t h) {
                   const int x = p.input(same(c, h));
                   p.node("Conv", {x, p.weight({c, c, 3, 3})}, same(c, h), {{"kernel_shape", Dims{3, 3}}, {"pads", Dims{1, 1, 1, 1}}});
                 },
                 kContractionC, kContractionH});
  // A 1x1 unstrided conv: a plain GEMM over the positions (ATen 1.13 on one
  // CPU thread at a small batch runs it without oneDNN), whose backward
  // differs from a 3x3's.
  out.push_back({"Conv/1x1",
                 [same](ProbeGraph& p, int64_t c, int64_t h) {
                   const int x = p.input(same(c, h));
                   p.node("Conv", {x, p.weight({c, c, 1, 1})}, same(c, h), {{"kernel_shape", Dims{1, 1}}});
                 },
                 kContractionC, kContractionH});
  out.push_back({"Gemm",
                 [](ProbeGraph& p, int64_t c, int64_t h) {
                   const int x = p.input({c, h * 4});
                   p.node("Gemm", {x, p.weight({h * 4, h * 4}), p.weight({h * 4})}, {c, h * 4}, {{"transB", int64_t(1)}});
                 },
                 kContractionC, kContractionH});
  // A product with one row (a classifier at batch 1): BLAS streams the weight
  // far below the copy bandwidth (a GEMV-shaped GEMM), so its cost per byte,
  // in the weight's bytes, is a class of its own.
  out.push_back({"Gemm/thin",
                 [](ProbeGraph& p, int64_t c, int64_t h) {
                   const int64_t k = c * h;
                   const int x = p.input({1, k});
                   p.node("Gemm", {x, p.weight({k, k}), p.weight({k})}, {1, k}, {{"transB", int64_t(1)}});
                 },
                 kThinC, kThinH});
  return out;
}

struct Point {
  int64_t bytes = 0;
  double forward = 0, train_forward = 0, train = 0;
};

// Fresh mappings (allocations above the threshold) are priced apart by fit
// (DeviceCeilings::fresh_allocation_*): a point's measured times leave out
// what its output (forward) and its gradients (training) cost that way.
Point measure_point(Device& device, const CeilingsPlan& plan, const ProbeClass& cls, int64_t c, int64_t h,
                    int rounds, const FreshAllocationCost& fresh, std::vector<std::string>& notes) {
  ProbeGraph p;
  cls.build(p, c, h);
  const AnalysisResult analysis = analyze_model(p.model);
  Point pt;
  if (!analysis.nodes.empty()) pt.bytes = analysis.nodes[0].cost.bytes();
  int64_t fresh_output = 0, fresh_gradients = 0;
  if (fresh.threshold_bytes > 0) {
    const std::vector<bool> trainable = trainable_initializers(p.model.graph);
    for (size_t t = 0; t < p.model.graph.tensors.size(); ++t) {
      const Tensor& tensor = p.model.graph.tensors[t];
      const int64_t bytes = tensor.size_bytes().value_or(0);
      if (bytes <= fresh.threshold_bytes) continue;
      if (tensor.role == TensorRole::Activation) fresh_output += bytes;
      if (tensor.role == TensorRole::Input || trainable[t]) fresh_gradients += bytes;
    }
  }
  // Inference on the kernels a profile runs (a Conv class as a oneDNN Conv
  // group); the training step node by node on ATen, as `profile
  // --train-step` runs it (autograd needs the ops as written).
  ProfileOptions fp32;
  fp32.dtype = ComputeDtype::Fp32;
  ExecOptions eo = exec_options(fp32, device.torch_device(), ExecPurpose::Inference);
  eo.in_place = false;  // the probe's input is the caller's: never written
  Executor exec(p.model, eo);
  ExecOptions unfused = exec_options(fp32, device.torch_device(), ExecPurpose::TrainStep);
  unfused.in_place = false;
  Executor train_exec(p.model, unfused);
  std::vector<at::Tensor> inputs = exec.make_inputs(0x5eed);
  std::vector<at::Tensor> inference_inputs = inputs;
  if (cls.channels_last && device.torch_device().is_cpu())
    for (at::Tensor& x : inference_inputs)
      if (x.dim() == 4) x = x.contiguous(at::MemoryFormat::ChannelsLast);
  const std::string label = "op " + cls.key + " " + std::to_string(c) + "x" + std::to_string(h);
  // Training: the inputs and the weights a step trains require grad, as in a hidden layer.
  const Graph& g = p.model.graph;
  std::vector<at::Tensor> leaves = inputs;
  const std::vector<bool> trainable = trainable_initializers(g);
  for (int t : g.initializers) {
    const at::Tensor& w = train_exec.weights().get(&g, t);
    if (w.defined() && trainable[size_t(t)]) leaves.push_back(w);
  }
  auto set_training = [&](bool on) {
    for (at::Tensor& l : leaves) l.requires_grad_(on);
  };
  // Inference and training alternate over `rounds` (the median of each kept),
  // so a drift of the machine between the two does not become their ratio.
  std::vector<double> forward, train_forward, train;
  for (int round = 0; round < rounds; ++round) {
    set_training(false);
    const Timed f = median_seconds(device, plan, label, [&] { (void)exec.run(inference_inputs); });
    note_if_unconverged(f, label, notes);
    forward.push_back(std::max(0.0, f.seconds - double(fresh_output) * fresh.seconds_per_byte));
    set_training(true);
    // The training forward alone: the unfused node on NCHW with autograd
    // recording, its graph dropped with the outputs.
    const Timed tf = median_seconds(device, plan, label + " train forward", [&] { (void)train_exec.run(inputs); });
    note_if_unconverged(tf, label + " train forward", notes);
    train_forward.push_back(std::max(0.0, tf.seconds - double(fresh_output) * fresh.seconds_per_byte));
    const Timed t = median_seconds(device, plan, label + " train", [&] {
      train_exec.run(inputs)[0].sum().backward();
      for (at::Tensor& l : leaves) l.mutable_grad() = at::Tensor();
    });
    note_if_unconverged(t, label + " train", notes);
    train.push_back(std::max(0.0, t.seconds - double(fresh_output + fresh_gradients) * fresh.seconds_per_byte));
  }
  set_training(false);
  std::sort(forward.begin(), forward.end());
  std::sort(train_forward.begin(), train_forward.end());
  std::sort(train.begin(), train.end());
  pt.forward = stats::median(forward);
  pt.train_forward = stats::median(train_forward);
  pt.train = stats::median(train);
  return pt;
}

std::string dims_text(const std::vector<int64_t>& d) {
  std::string s;
  for (int64_t v : d) s += (s.empty() ? "" : "x") + std::to_string(v);
  return s;
}

}  // namespace

double backward_call_seconds(Device& device, const CeilingsPlan& plan, std::vector<std::string>& notes) {
  at::Tensor x = at::rand({1, kSmallC, kSmallH, kSmallH}, at::TensorOptions().dtype(at::kFloat).device(device.torch_device()));
  x.set_requires_grad(true);
  const Timed t = median_seconds(device, plan, "backward call", [&] {
    x.sum().backward();
    x.mutable_grad() = at::Tensor();
  });
  note_if_unconverged(t, "backward call", notes);
  return t.seconds;
}

std::vector<std::string> op_cost_classes() {
  std::vector<std::string> keys;
  for (const auto& c : classes()) keys.push_back(c.key);
  return keys;
}

// The classes' points (~300 measurements of one node, each a few us to a few
// ms) are timed on a shortened plan: a 0.05 s warm-up and 0.15 s of samples at
// least, the median's CI within the plan's target. The full plan's 0.2 s and
// 0.25 s took 190 of the calibration's 304 s on the project VM; the points'
// medians come from hundreds of runs either way, and the drift between
// measurements that the rounds guard against is minutes long, not tenths of a
// second.
std::vector<OpCost> measure_op_costs(Device& device, const CeilingsPlan& full_plan, const FreshAllocationCost& fresh,
                                     std::vector<std::string>& notes) {
  std::vector<OpCost> out;
  const CeilingsPlan plan = shortened_plan(full_plan, 0.05, 0.15);
  const double call = backward_call_seconds(device, plan, notes);
  const size_t points = classes().size() * size_t(1 + kLargeRounds);
  StageSchedule schedule(full_plan.allot.op_classes > 0 ? full_plan.allot.op_classes : 1e30, points);
  for (const ProbeClass& cls : classes()) {
    const int64_t large_c = cls.large_c, large_h = cls.large_h;
    try {
      const Point small = measure_point(device, schedule.next(plan), cls, kSmallC, kSmallH, 1, fresh, notes);
      const CeilingsPlan large_plan = schedule.next(plan);
      for (int r = 1; r < kLargeRounds; ++r) (void)schedule.next(plan);
      const Point large = measure_point(device, large_plan, cls, large_c, large_h, kLargeRounds, fresh, notes);
      OpCost o;
      o.op = cls.key;
      o.probe = "1x" + std::to_string(kSmallC) + "x" + std::to_string(kSmallH) + "x" + std::to_string(kSmallH) +
                " and " + dims_text({1, large_c, large_h, large_h}) + " float input";
      if (cls.key == "Gemm")
        o.probe = dims_text({kSmallC, kSmallH * 4}) + " and " + dims_text({large_c, large_h * 4}) +
                  " float input, square weight";
      if (cls.key == "Gemm/thin")
        o.probe = dims_text({1, kSmallC * kSmallH}) + " and " + dims_text({1, large_c * large_h}) +
                  " float input, square weight";
      o.small_bytes = small.bytes;
      o.large_bytes = large.bytes;
      // The line through both points; a negative slope (noise at a size where
      // the cost barely grows) is taken as flat.
      const double span = double(large.bytes - small.bytes);
      auto line = [&](double y_small, double y_large, double& fixed, double& slope) {
        slope = span > 0 ? std::max(0.0, (y_large - y_small) / span) : 0.0;
        fixed = std::max(0.0, y_small - slope * double(small.bytes));
      };
      line(small.forward, large.forward, o.fixed_seconds, o.seconds_per_byte);
      line(small.train_forward, large.train_forward, o.train_forward_fixed_seconds, o.train_forward_seconds_per_byte);
      // The backward is what the training run adds to the training forward:
      // an inference forward faster than the step's own (fused, prepacked,
      // channels-last) would otherwise be counted into the backward.
      const double small_backward = std::max(0.0, small.train - small.train_forward - call);
      const double large_backward = std::max(0.0, large.train - large.train_forward - call);
      line(small_backward, large_backward, o.backward_fixed_seconds, o.backward_seconds_per_byte);
      if (large.forward > 0) {
        o.backward_ratio = large_backward / large.forward;
        o.train_forward_ratio = large.train_forward / large.forward;
      }
      out.push_back(std::move(o));
    } catch (const std::exception& e) {
      notes.push_back("op cost " + cls.key + ": not measured (" + first_line(e) + ")");
    }
  }
  if (std::string behind = schedule.note("op classes"); !behind.empty()) notes.push_back(behind);
  return out;
}

namespace {

constexpr int kOptimizerWeights = 16;
// Large: 1 Mi elements (4 MiB fp32) per weight, 64 MiB of weights in all,
// as a network's layers are; one weight with its gradient and state (12-16
// MiB) still fits a large last-level cache while the update's passes run over
// it (the streamed point below is for weights that do not); each tensor stays
// under the fresh-mapping threshold (priced apart).
constexpr int64_t kOptimizerSmall = 16, kOptimizerLarge = int64_t(1) << 20;
// Streamed: 2 weights of 16 Mi elements (64 MiB fp32 each; with gradient and
// state 256-384 MiB a weight, past any last-level cache), so that each of the
// update's passes over a weight reads it from memory, as a classifier's
// 100-400 MiB weight is. Where the host maps allocations above a threshold
// afresh, the weights stay at that threshold (fresh mappings are priced apart).
constexpr int kStreamedWeights = 2;
constexpr int64_t kOptimizerStreamed = int64_t(16) << 20;

// y = x * w_0 * w_1 * ... * w_(weights-1), x [1, n], each w_i [n]: every weight trained.
Model mul_chain_model(int64_t n, int weights = kOptimizerWeights) {
  ProbeGraph p;
  int y = p.input({1, n});
  for (int i = 0; i < weights; ++i) y = p.node("Mul", {y, p.weight({n})}, {1, n});
  return p.model;
}

// Median seconds of the update part of a training step of `model`.
double median_update_seconds(Device& device, const CeilingsPlan& plan, const Model& model, Optimizer kind,
                             const std::string& label, std::vector<std::string>& notes) {
  // A training step runs the graph as written.
  const ExecOptions eo = exec_options(ProfileOptions{}, device.torch_device(), ExecPurpose::TrainStep);
  Executor exec(model, eo);
  OptimizerConfig config;
  config.kind = kind;
  TrainStep step(exec, config);
  const std::vector<at::Tensor> inputs = exec.make_inputs(0x5eed);
  auto timer = device.interval_timer();
  StepTimers timers;
  timers.optimizer = timer.get();
  auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; !warmup_done(plan.warmup, i, seconds_since(start)); ++i) {
    step.step(inputs);
    device.synchronize();
  }
  MedianCiCriterion criterion(plan.stopping);
  std::vector<double> samples;
  start = std::chrono::steady_clock::now();
  while (true) {
    step.step(inputs, timers);
    samples.push_back(timer->seconds());
    if (criterion.should_stop(samples, seconds_since(start))) break;
  }
  if (criterion.reason().rfind("converged", 0) != 0) notes.push_back(label + ": " + criterion.reason());
  std::sort(samples.begin(), samples.end());
  return stats::median(samples);
}

}  // namespace

std::vector<OptimizerUpdateCost> measure_optimizer_costs(Device& device, const CeilingsPlan& plan,
                                                         const FreshAllocationCost& fresh,
                                                         std::vector<std::string>& notes) {
  std::vector<OptimizerUpdateCost> out;
  const Model small = mul_chain_model(kOptimizerSmall);
  const Model large = mul_chain_model(kOptimizerLarge);
  const int64_t streamed_elements =
      fresh.threshold_bytes > 0 ? std::min(kOptimizerStreamed, fresh.threshold_bytes / int64_t(sizeof(float)))
                                : kOptimizerStreamed;
  const Model streamed = mul_chain_model(streamed_elements, kStreamedWeights);
  StageSchedule schedule(plan.allot.optimizers > 0 ? plan.allot.optimizers : 1e30, 9);
  for (Optimizer kind : {Optimizer::Sgd, Optimizer::Momentum, Optimizer::Adam}) {
    const std::string name = name_of(kind);
    try {
      const double t_small =
          median_update_seconds(device, schedule.next(plan), small, kind, "update " + name + " small", notes);
      const double t_large =
          median_update_seconds(device, schedule.next(plan), large, kind, "update " + name + " large", notes);
      OptimizerUpdateCost c;
      c.optimizer = name;
      c.probe = std::to_string(kOptimizerWeights) + " fp32 weights of " + std::to_string(kOptimizerSmall) + " and " +
                std::to_string(kOptimizerLarge) + " elements";
      const double elements = double(kOptimizerWeights) * double(kOptimizerLarge - kOptimizerSmall);
      c.seconds_per_element = std::max(0.0, (t_large - t_small) / elements);
      c.per_tensor_seconds =
          std::max(0.0, (t_small - c.seconds_per_element * double(kOptimizerWeights * kOptimizerSmall)) /
                            double(kOptimizerWeights));
      c.tensor_elements = kOptimizerLarge;
      out.push_back(std::move(c));
    } catch (const std::exception& e) {
      notes.push_back("optimizer cost " + name + ": not measured (" + first_line(e) + ")");
    }
  }
  // The streamed points after every other, so that the small and large
  // points run in the order they did before the streamed point existed.
  // On a CUDA device the weights stream from device memory at every size: none.
  const bool stream = streamed_elements > kOptimizerLarge && !device.torch_device().is_cuda();
  for (OptimizerUpdateCost& c : out) {
    if (!stream) break;
    try {
      const Optimizer kind = parse_as<Optimizer>(c.optimizer, "optimizer");
      const double t_streamed = median_update_seconds(device, schedule.next(plan), streamed, kind,
                                                      "update " + c.optimizer + " streamed", notes);
      c.streamed_tensor_elements = streamed_elements;
      c.streamed_seconds_per_element = std::max(0.0, (t_streamed - kStreamedWeights * c.per_tensor_seconds) /
                                                         (double(kStreamedWeights) * double(streamed_elements)));
      c.probe += ", and " + std::to_string(kStreamedWeights) + " of " + std::to_string(streamed_elements);
    } catch (const std::exception& e) {
      notes.push_back("optimizer cost " + c.optimizer + " streamed: not measured (" + first_line(e) + ")");
    }
  }
  if (std::string behind = schedule.note("optimizer updates"); !behind.empty()) notes.push_back(behind);
  return out;
}

FreshAllocationCost measure_fresh_allocation(Device& device, const CeilingsPlan& plan,
                                             std::vector<std::string>& notes) {
  FreshAllocationCost out;
  if (device.torch_device().is_cuda()) return out;  // the caching allocator keeps its blocks
  const int64_t threshold = host_mmap_threshold_bytes();
  if (threshold <= 0) {
    notes.push_back(
        "fresh allocation cost: none (the host allocator keeps freed blocks mapped: modelstat's default on glibc), or "
        "unknown (not glibc's allocator)");
    return out;
  }
  const int64_t elements = 2 * threshold / int64_t(sizeof(float));
  const auto options = at::TensorOptions().dtype(at::kFloat);
  at::Tensor reused = at::empty({elements}, options);
  const Timed reuse = median_seconds(device, plan, "fill reused", [&] { reused.fill_(1.0); });
  note_if_unconverged(reuse, "fill reused", notes);
  const Timed fresh = median_seconds(device, plan, "fill fresh", [&] { at::empty({elements}, options).fill_(1.0); });
  note_if_unconverged(fresh, "fill fresh", notes);
  out.threshold_bytes = threshold;
  out.seconds_per_byte = std::max(0.0, fresh.seconds - reuse.seconds) / double(elements * int64_t(sizeof(float)));
  return out;
}

}  // namespace modelstat::profiler

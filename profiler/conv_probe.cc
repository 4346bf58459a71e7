// Convolution samples (conv_probe.hpp). Why a grid and not the matmul curve:
// the executor's oneDNN convolution runs at rates the square-matmul curve at
// the conv's equivalent GEMM size does not predict (on the project VM a 3x3
// conv 512 -> 1024 at stride 2 ran at half the curve's rate, a 3-channel stem
// at a third, a 64-channel 3x3 at 1.1x), and the rate depends on M, N and K
// separately, not only on their harmonic mean.
#include "profiler/conv_probe.hpp"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <random>

#include "modelstat/error.hpp"
#include "profiler/ceilings_timing.hpp"
#include "profiler/executor.hpp"
#include "profiler/op_cost_probe.hpp"
#include "profiler/ops/fp32_conv.hpp"
#include "profiler/ops/int8_kernels.hpp"
#include "profiler/probe_graph.hpp"
#include "profiler/run_context.hpp"
#include "profiler/run_setup.hpp"
#include "profiler/torch_errors.hpp"

namespace modelstat::profiler {

namespace {

using Dims = std::vector<int64_t>;

struct GridPoint {
  std::string kind;
  int64_t c_in = 0, c_out = 0, h_out = 0, taps_side = 1, stride = 1;
  bool depthwise = false;  // group = c_in = c_out: one input channel per output channel
  int64_t weight_c_in() const { return depthwise ? 1 : c_in; }
  double flops() const {
    return 2.0 * double(weight_c_in()) * double(c_out) * double(taps_side * taps_side) * double(h_out * h_out);
  }
};

// Products above this are left out (10-20 ms each on one core; the nearest
// smaller samples price them), except for the wide kxk convs below.
constexpr double kMaxSampleFlops = 1e9;
// A kxk conv whose weight passes the L2 cache many times over runs slower the
// more output positions stream past it: on the project VM a 3x3 conv 512 ->
// 1024 at stride 2 (an 18 MiB weight) ran at 50-60 GFLOP/s with a 28x28 to
// 56x56 output, 64-84 at 14x14, while one reading 256 channels ran at 101-108
// and the 1 GFLOP samples said 105. The samples reading 512 channels reach 2
// GFLOP, and those writing 1024 channels from 256 or more reach 8 GFLOP, so
// that a 28x28 output with such a weight is sampled.
double max_sample_flops(int64_t c_in, int64_t c_out, bool pointwise) {
  if (!pointwise && c_in >= 256 && c_out >= 1024) return 8e9;
  if (!pointwise && c_in >= 512) return 2e9;
  return kMaxSampleFlops;
}
// Copies of a sample run back to back until they hold this many FLOPs at most
// (the points above 1 GFLOP: 1-4 copies).
constexpr double kMaxRunFlops = 8e9;
// Copies run in turn until their weights and outputs together pass
// kProbeColdBytes, so that each weight comes from memory as in a model
// larger than the caches: at most 8, and more, up to 512, while a run of them stays under kCheapRunFlops. Cheap
// points need many: a squeeze-excite block's 1x1 conv 576 -> 144 on one
// position (a 332 KB weight) took 7 us a copy among 8 copies (2.6 MB, held
// by the caches), 21 us among 64 and 31-34 us among 512, and 26 us in
// MobileNet-V3-Small, where its samples of 8 copies had priced it at 0.3-0.5
// of its time (fifteenth session).
constexpr int kMaxCopies = 8;
constexpr int kMaxCheapCopies = 512;
constexpr double kCheapRunFlops = 2e8;

// Depthwise (MobileNet, EfficientNet): 3x3 and 5x5, stride 1 and 2, over
// `channels` and output `sizes`; a channel count's largest sizes left out
// where no network has them (an output above 2M values).
void add_depthwise_points(std::vector<GridPoint>& points, const Dims& channels, const Dims& sizes) {
  for (const char* kind : {"dw", "dw/s2"})
    for (int64_t side : {3, 5})
      for (int64_t c : channels)
        for (int64_t h : sizes) {
          if (c * h * h > (int64_t(1) << 21)) continue;
          points.push_back(GridPoint{kind, c, c, h, side, std::string(kind) == "dw/s2" ? 2 : 1, true});
        }
}

std::vector<GridPoint> grid(bool quick) {
  const Dims outputs = quick ? Dims{16, 256} : Dims{16, 64, 256, 1024};
  const Dims sizes = quick ? Dims{7, 28, 112} : Dims{7, 14, 28, 56, 112};
  std::vector<GridPoint> points;
  for (const char* kind : {"1x1", "kxk", "kxk/s2"}) {
    const bool pointwise = std::string(kind) == "1x1";
    // A stem reads 3 channels (an image); pointwise convs reach 1024.
    Dims inputs = quick ? Dims{16, 256} : Dims{16, 64, 256};
    if (pointwise && !quick) inputs.push_back(1024);
    if (!pointwise) inputs.insert(inputs.begin(), 3);
    if (!pointwise) inputs.push_back(512);
    // A pointwise conv over one position: a squeeze-excite block's two convs
    // (MobileNet-V3, EfficientNet, RegNetY), a product of one row whose time
    // is the kernel's call and its weight's read, which the rate of the
    // nearest 7x7 sample (49 rows) put 24-39x under per model (thirteenth
    // session: mobilenet_v3_small's 18 ran 5.6-21 us each, priced 0.01-1.8).
    Dims kind_sizes = sizes;
    if (pointwise) kind_sizes.insert(kind_sizes.begin(), 1);
    for (int64_t c_in : inputs)
      for (int64_t c_out : outputs)
        for (int64_t h : kind_sizes) {
          // A kxk conv reaches 1024 outputs only from 256 inputs or more (a
          // late stage); one reading 512 writes 64 or more.
          if (!pointwise && c_out > 256 && c_in < 256) continue;
          if (c_in == 512 && c_out < 64) continue;
          GridPoint p{kind, c_in, c_out, h, pointwise ? 1 : 3, std::string(kind) == "kxk/s2" ? 2 : 1};
          if (p.flops() <= max_sample_flops(c_in, c_out, pointwise)) points.push_back(p);
        }
  }
  add_depthwise_points(points, quick ? Dims{32, 512} : Dims{32, 128, 512}, sizes);
  return points;
}

// One Conv of the point reading `x`, with a weight of its own (and a bias of
// its own when `bias`); returns its output.
int conv_node(ProbeGraph& g, const GridPoint& p, int x, bool bias) {
  const int64_t pad = p.taps_side / 2;
  std::vector<int> inputs = {x, g.weight({p.c_out, p.weight_c_in(), p.taps_side, p.taps_side})};
  if (bias) inputs.push_back(g.weight({p.c_out}));
  return g.node("Conv", inputs, {1, p.c_out, p.h_out, p.h_out},
                {{"kernel_shape", Dims{p.taps_side, p.taps_side}},
                 {"pads", Dims{pad, pad, pad, pad}},
                 {"strides", Dims{p.stride, p.stride}},
                 {"group", p.depthwise ? p.c_in : int64_t(1)}});
}

// What follows each conv of a probe model, inside its group.
enum class After { Nothing, Residual, Silu };

// `copies` Convs of the point, each with a weight of its own, all reading the
// one input (1 x C_in x H_in x H_in); every output is a graph output. After
// each conv, `Residual`: an Add of a tensor of its own (the executor makes it
// the group's sum post-op, as in a ResNet block); `Silu`: Sigmoid and Mul, x *
// sigmoid(x) (the group's trailing SiLU, as in EfficientNet).
Model conv_model(const GridPoint& p, int copies, After after = After::Nothing) {
  ProbeGraph g;
  const int64_t h_in = p.h_out * p.stride;
  const Dims out = {1, p.c_out, p.h_out, p.h_out};
  const int x = g.input({1, p.c_in, h_in, h_in});
  std::vector<int> outputs;
  for (int i = 0; i < copies; ++i) {
    int y = conv_node(g, p, x, false);
    if (after == After::Residual) y = g.node("Add", {y, g.input(out)}, out);
    if (after == After::Silu) y = g.node("Mul", {y, g.node("Sigmoid", {y}, out)}, out);
    outputs.push_back(y);
  }
  g.model.graph.outputs = std::move(outputs);
  return g.model;
}

int cold_copies(const GridPoint& p) {
  const int64_t per_copy = 4 * (p.c_out * p.weight_c_in() * p.taps_side * p.taps_side + p.c_out * p.h_out * p.h_out);
  const int64_t by_bytes = kProbeColdBytes / std::max<int64_t>(1, per_copy);
  const int64_t by_flops = int64_t(kMaxRunFlops / std::max(1.0, p.flops()));
  const int64_t cheap = int64_t(kCheapRunFlops / std::max(1.0, p.flops()));
  const int64_t most = std::clamp<int64_t>(cheap, kMaxCopies, kMaxCheapCopies);
  return int(std::clamp<int64_t>(std::min(by_bytes, by_flops), 1, most));
}

// The rate the other samples of its kind give sample i's shape: fit's rule
// (DeviceCeilings::conv_flops_at) with the sample left out.
double neighbours_rate(const std::vector<ConvSample>& samples, size_t i) {
  DeviceCeilings others;
  for (size_t j = 0; j < samples.size(); ++j)
    if (j != i && samples[j].kind == samples[i].kind) others.conv_samples.push_back(samples[j]);
  return others.conv_flops_at(samples[i].kind, double(samples[i].m), double(samples[i].n), double(samples[i].k));
}

// A sample this much slower than its neighbours say is timed again.
constexpr double kRecheckBelow = 0.8;

}  // namespace

std::vector<size_t> shuffled_order(size_t n, unsigned seed) {
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937(seed));
  return order;
}

double time_probe_model(Device& device, const CeilingsPlan& plan, const Model& model, const std::string& label,
                        std::vector<std::string>& notes) {
  ProfileOptions fp32;
  fp32.dtype = ComputeDtype::Fp32;
  ExecOptions eo = exec_options(fp32, device.torch_device(), ExecPurpose::Inference);
  eo.in_place = false;  // the probe's inputs are read on every run
  Executor exec(model, eo);
  std::vector<at::Tensor> inputs = exec.make_inputs(0x5eed);
  for (at::Tensor& x : inputs)
    if (x.dim() == 4) x = x.contiguous(at::MemoryFormat::ChannelsLast);
  const Timed t = median_seconds(device, plan, label, [&] { (void)exec.run(inputs); });
  note_if_unconverged(t, label, notes);
  return t.seconds;
}

// (Its warm-up and sampling minimums were 0.05 and 0.1 s before the training
// samples joined the calibration, whose bound is 300 s.)
CeilingsPlan sample_plan(const CeilingsPlan& plan) {
  CeilingsPlan light = shortened_plan(plan, 0.04, 0.08);
  light.warmup = WarmupConfig{2, 0.04, 1.0};  // under --quick too
  light.stopping.min_iterations = 5;
  light.stopping.max_seconds = std::min(plan.stopping.max_seconds, 1.0);
  light.stopping.target_rel_ci = std::max(plan.stopping.target_rel_ci, 0.03);
  return light;
}

std::vector<ConvSample> measure_conv_samples(Device& device, const CeilingsPlan& plan, bool quick,
                                             std::vector<std::string>& notes) {
  if (!device.torch_device().is_cpu()) return {};
  const CeilingsPlan light = sample_plan(plan);
  const std::vector<GridPoint> points = grid(quick);
  // The points run in an order shuffled once (a fixed seed), not grid order:
  // on the project VM a slow spell of the machine lasting tens of seconds
  // took 20-40% off a run of neighbouring points (every stride-1 3x3 point
  // reading 256 channels, in one calibration of four), which then priced
  // every ResNet 30-40% over. Shuffled, such a spell hits points scattered
  // over the grid, each among neighbours measured at other times, and the
  // full probe times again the ones more than 20% below what their
  // neighbours say (at most a quarter of the grid) and keeps the second
  // time: a point caught in a spell is timed anew, one that is slow in
  // truth stays slow, and no maximum of two noisy timings (biased upward)
  // is taken.
  const std::vector<size_t> order = shuffled_order(points.size(), 0x5eed);
  struct Measured {
    size_t point;
    int copies;
  };
  std::vector<Measured> measured;
  std::vector<ConvSample> out;
  // The schedule's points: every grid point, the cheap ones' cached timings,
  // and the re-timed ones (a fifth of the grid on the noisy VMs).
  size_t expected = points.size() + (quick ? 0 : points.size() / 5);
  for (const GridPoint& p : points) expected += cold_copies(p) > kMaxCopies ? 1 : 0;
  StageSchedule schedule(plan.allot.conv_samples > 0 ? plan.allot.conv_samples : 1e30, expected);
  auto label_of = [](const GridPoint& p) {
    return "conv " + p.kind + " " + std::to_string(p.c_in) + "->" + std::to_string(p.c_out) + " at " +
           std::to_string(p.h_out);
  };
  for (size_t index : order) {
    const GridPoint& p = points[index];
    const std::string label = label_of(p);
    try {
      const int copies = cold_copies(p);
      const double seconds = time_probe_model(device, schedule.next(light), conv_model(p, copies), label, notes);
      if (seconds <= 0) continue;
      ConvSample s;
      s.kind = p.kind;
      s.m = p.h_out * p.h_out;
      s.n = p.c_out;
      s.k = p.weight_c_in() * p.taps_side * p.taps_side;
      s.flops_per_second = p.flops() * copies / seconds;
      // A cheap point's weights held by the caches: as many copies as before
      // the cheap rule (kMaxCopies), for models whose run the caches hold.
      if (copies > kMaxCopies) {
        const double hot =
            time_probe_model(device, schedule.next(light), conv_model(p, kMaxCopies), label + " (cached)", notes);
        if (hot > 0) s.hot_flops_per_second = p.flops() * kMaxCopies / hot;
      }
      out.push_back(std::move(s));
      measured.push_back({index, copies});
    } catch (const std::exception& e) {
      notes.push_back(label + ": not measured (" + first_line(e) + ")");
    }
  }
  if (!quick) {
    std::vector<std::pair<double, size_t>> slow;  // (rate / neighbours' rate, sample)
    for (size_t i = 0; i < out.size(); ++i) {
      const double expected = neighbours_rate(out, i);
      if (expected > 0 && out[i].flops_per_second < kRecheckBelow * expected)
        slow.push_back({out[i].flops_per_second / expected, i});
    }
    std::sort(slow.begin(), slow.end());
    if (slow.size() > out.size() / 4) slow.resize(out.size() / 4);
    int faster = 0;
    for (const auto& [ratio, i] : slow) {
      const GridPoint& p = points[measured[i].point];
      const std::string label = label_of(p) + " (again)";
      try {
        const double seconds =
            time_probe_model(device, schedule.next(light), conv_model(p, measured[i].copies), label, notes);
        if (seconds <= 0) continue;
        const double rate = p.flops() * measured[i].copies / seconds;
        if (rate > out[i].flops_per_second) ++faster;
        out[i].flops_per_second = rate;
      } catch (const std::exception& e) {
        notes.push_back(label + ": not measured (" + first_line(e) + ")");
      }
    }
    if (!slow.empty())
      notes.push_back("conv samples: " + std::to_string(slow.size()) + " of " + std::to_string(out.size()) +
                      " timed again (more than 20% below their neighbours' rate), " + std::to_string(faster) +
                      " faster the second time (the second time kept)");
  }
  if (std::string behind = schedule.note("conv samples"); !behind.empty()) notes.push_back(behind);
  // Saved in grid order.
  std::vector<size_t> by_point(out.size());
  for (size_t i = 0; i < by_point.size(); ++i) by_point[i] = i;
  std::sort(by_point.begin(), by_point.end(),
            [&](size_t a, size_t b) { return measured[a].point < measured[b].point; });
  std::vector<ConvSample> sorted;
  sorted.reserve(out.size());
  for (size_t i : by_point) sorted.push_back(std::move(out[i]));
  return sorted;
}

namespace {

// The training samples' grid: the kinds a training step runs (as written:
// unfused, NCHW), channels in steps of 4 and outputs in steps of 2 (the
// sides of a CNN at 224: 7 to 112), a product of one forward up to 0.3
// GFLOP (its backward is twice that; larger ones are priced at the rates of
// the largest neighbours); a pointwise conv over one position too
// (a squeeze-excite block's). 3x3 for the dense kinds (the 7x7 stem and 5x5
// kernels are priced from them by rate), 3x3 and 5x5 for depthwise. ~280
// points, 15-25 s on one core; `quick`: ~45. Sides in steps of 4 (7, 28,
// 112), tried first, priced ResNet-18's 56x56 and 14x14 convs from
// neighbours two steps away and its step 11% short, where a grid with 56 in
// it came within 1% (sixteenth session).
std::vector<GridPoint> train_grid(bool quick) {
  const Dims channels = quick ? Dims{32, 512} : Dims{16, 64, 256, 1024};
  const Dims sizes = quick ? Dims{7, 56} : Dims{7, 14, 28, 56, 112};
  constexpr double kMaxTrainFlops = 3e8;
  std::vector<GridPoint> points;
  for (const char* kind : {"1x1", "kxk", "kxk/s2"}) {
    const bool pointwise = std::string(kind) == "1x1";
    Dims inputs = channels;
    if (!pointwise) inputs.insert(inputs.begin(), 3);  // a stem
    Dims kind_sizes = sizes;
    if (pointwise) kind_sizes.insert(kind_sizes.begin(), 1);
    for (int64_t c_in : inputs)
      for (int64_t c_out : channels)
        for (int64_t h : kind_sizes) {
          GridPoint p{kind, c_in, c_out, h, pointwise ? 1 : 3, std::string(kind) == "kxk/s2" ? 2 : 1};
          if (p.flops() <= kMaxTrainFlops) points.push_back(p);
        }
  }
  add_depthwise_points(points, quick ? Dims{32, 512} : Dims{32, 128, 512}, sizes);
  return points;
}

// Copies of a training sample, each with an input and a weight of its own,
// run in turn: as many as it takes for their inputs, weights and outputs to
// pass 64 MiB (a step's saved activations and weights come back from memory
// in its backward), at most 8, and at most 0.5 GFLOP of forwards an iteration.
// On the sixteenth session's VM MobileNet-V2's convs took 8.6 ms of forward
// timed one at a time, 12.2 in such copies, and 15-17 in its training step
// (PyTorch, the same kernels); ResNet-18's the same three ways.
int train_copies(const GridPoint& p) {
  const int64_t h_in = p.h_out * p.stride;
  const int64_t per_copy = 4 * (p.c_in * h_in * h_in + p.c_out * p.weight_c_in() * p.taps_side * p.taps_side +
                                p.c_out + p.c_out * p.h_out * p.h_out);
  const int64_t by_bytes = kProbeColdBytes / std::max<int64_t>(1, per_copy);
  const int64_t by_flops = int64_t(5e8 / std::max(1.0, p.flops()));
  return int(std::clamp<int64_t>(std::min(by_bytes, by_flops), 1, 8));
}

// `copies` independent Convs of the point, each reading an input of its own,
// each with a bias (an exported CNN's convs carry their folded BatchNorm's:
// the bias gradient is a pass over the output gradient).
Model train_conv_model(const GridPoint& p, int copies) {
  ProbeGraph g;
  const int64_t h_in = p.h_out * p.stride;
  std::vector<int> outputs;
  for (int i = 0; i < copies; ++i) outputs.push_back(conv_node(g, p, g.input({1, p.c_in, h_in, h_in}), true));
  g.model.graph.outputs = std::move(outputs);
  return g.model;
}

// One point's training forward and backward, timed apart in each iteration
// (the copies' forwards, then each output's backward from a contiguous
// gradient of ones, then the gradients dropped): one warm-up iteration,
// then at least 3 and at least 0.03 s (past 1 s, at least 1); the median of each part
// over the copies. The nodes run as `profile --train-step` runs them (the
// executor's training path), inputs and weights requiring grad as in a
// hidden layer. Fresh mappings of the outputs (forward) and of the gradients
// (backward) are taken off (fit prices them apart), and so is each
// backward() call's own cost (`call`: per step in a model, not per node).
TrainConvSample time_train_conv(Device& device, const GridPoint& p, double call, const FreshAllocationCost& fresh) {
  const int copies = train_copies(p);
  const Model model = train_conv_model(p, copies);
  ProfileOptions fp32;
  fp32.dtype = ComputeDtype::Fp32;
  ExecOptions eo = exec_options(fp32, device.torch_device(), ExecPurpose::TrainStep);
  eo.in_place = false;
  Executor exec(model, eo);
  std::vector<at::Tensor> inputs = exec.make_inputs(0x5eed);
  const Graph& g = model.graph;
  std::vector<at::Tensor> leaves = inputs;
  const std::vector<bool> trainable = trainable_initializers(g);
  for (int t : g.initializers) {
    const at::Tensor& w = exec.weights().get(&g, t);
    if (w.defined() && trainable[size_t(t)]) leaves.push_back(w);
  }
  int64_t fresh_output = 0, fresh_gradients = 0;
  for (at::Tensor& l : leaves) {
    l.requires_grad_(true);
    const int64_t bytes = int64_t(l.numel() * l.element_size());
    if (fresh.threshold_bytes > 0 && bytes > fresh.threshold_bytes) fresh_gradients += bytes;
  }
  const int64_t output_bytes = 4 * p.c_out * p.h_out * p.h_out;
  if (fresh.threshold_bytes > 0 && output_bytes > fresh.threshold_bytes) fresh_output = output_bytes * copies;
  const at::Tensor gradient = at::ones({1, p.c_out, p.h_out, p.h_out}, at::TensorOptions().dtype(at::kFloat));
  using Clock = std::chrono::steady_clock;
  std::vector<double> forward, backward;
  const auto start = Clock::now();
  for (int i = 0;; ++i) {
    const auto t0 = Clock::now();
    std::vector<at::Tensor> ys = exec.run(inputs);
    const auto t1 = Clock::now();
    for (at::Tensor& y : ys) y.backward(gradient);
    const auto t2 = Clock::now();
    ys.clear();
    for (at::Tensor& l : leaves) l.mutable_grad() = at::Tensor();
    if (i >= 1) {
      forward.push_back(std::chrono::duration<double>(t1 - t0).count());
      backward.push_back(std::chrono::duration<double>(t2 - t1).count());
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    // Past 1 s, one measured iteration is enough (a slow machine); none is not.
    if ((forward.size() >= 3 && elapsed >= 0.03) || (!forward.empty() && elapsed >= 1.0)) break;
  }
  for (at::Tensor& l : leaves) l.requires_grad_(false);
  std::sort(forward.begin(), forward.end());
  std::sort(backward.begin(), backward.end());
  const double f = std::max(1e-9, (stats::median(forward) - double(fresh_output) * fresh.seconds_per_byte) / copies);
  const double b = std::max(
      1e-9, (stats::median(backward) - copies * call - double(fresh_gradients) * fresh.seconds_per_byte) / copies);
  TrainConvSample s;
  s.kind = p.kind;
  s.m = p.h_out * p.h_out;
  s.n = p.c_out;
  s.k = p.weight_c_in() * p.taps_side * p.taps_side;
  s.forward_flops_per_second = p.flops() / f;
  s.backward_flops_per_second = p.flops() / b;
  return s;
}

}  // namespace

std::vector<TrainConvSample> measure_train_conv_samples(Device& device, const CeilingsPlan& plan, bool quick,
                                                        const FreshAllocationCost& fresh,
                                                        std::vector<std::string>& notes) {
  if (!device.torch_device().is_cpu()) return {};
  const auto started = std::chrono::steady_clock::now();
  const double call = backward_call_seconds(device, shortened_plan(plan, 0.05, 0.15), notes);
  const std::vector<GridPoint> points = train_grid(quick);
  // Shuffled once, as the inference samples (a slow spell of the machine
  // lands on points scattered over the grid); saved in grid order.
  const std::vector<size_t> order = shuffled_order(points.size(), 0x7ea1);
  std::vector<std::pair<size_t, TrainConvSample>> measured;
  for (size_t index : order) {
    const GridPoint& p = points[index];
    try {
      measured.push_back({index, time_train_conv(device, p, call, fresh)});
    } catch (const std::exception& e) {
      notes.push_back("training conv " + p.kind + " " + std::to_string(p.c_in) + "->" + std::to_string(p.c_out) +
                      " at " + std::to_string(p.h_out) + ": not measured (" + first_line(e) + ")");
    }
  }
  std::sort(measured.begin(), measured.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<TrainConvSample> out;
  out.reserve(measured.size());
  for (auto& [index, sample] : measured) out.push_back(std::move(sample));
  char text[120];
  std::snprintf(text, sizeof text, "training conv samples: %zu of %zu points in %.1f s", out.size(), points.size(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  notes.push_back(text);
  return out;
}

namespace {

// The int8 grid, at stride 1 (fit prices a strided int8 conv at its output
// positions on these: on the project VM ResNet-18's strided int8 3x3s ran at
// 0.9x its unstrided ones' rate): 1x1 over 16 to 1024 input and output
// channels; 3x3 over 16-256 channels and a 3-channel stem (one writing 256
// reads 64 or more); output sides 7, 28 and 112; depthwise 3x3 over 32, 256
// and 1024 channels, outputs up to 2M values; products up to 1 GFLOP (0.02 s
// a call at the int8 kernels' 50 Gop/s on the project VM). 75 points.
// `quick`: two channel counts, two sides.
std::vector<GridPoint> int8_grid(bool quick) {
  const Dims sizes = quick ? Dims{7, 56} : Dims{7, 28, 112};
  std::vector<GridPoint> points;
  for (const char* kind : {"int8 1x1", "int8 kxk"}) {
    const bool pointwise = std::string(kind) == "int8 1x1";
    const Dims outputs = quick ? Dims{16, 256} : pointwise ? Dims{16, 64, 256, 1024} : Dims{16, 64, 256};
    Dims inputs = outputs;
    if (!pointwise) inputs.insert(inputs.begin(), 3);
    for (int64_t c_in : inputs)
      for (int64_t c_out : outputs)
        for (int64_t h : sizes) {
          if (!pointwise && !quick && c_out == 256 && c_in < 64) continue;
          GridPoint p{kind, c_in, c_out, h, pointwise ? 1 : 3, 1};
          if (p.flops() <= kMaxSampleFlops) points.push_back(p);
        }
  }
  for (int64_t c : quick ? Dims{64} : Dims{32, 256, 1024})
    for (int64_t h : sizes)
      if (c * h * h <= (int64_t(1) << 21)) points.push_back(GridPoint{"int8 dw", c, c, h, 3, 1, true});
  return points;
}

// Copies of an int8 point run in turn, each with a weight of its own: two
// (an int8 weight is a quarter of the fp32 one's bytes, and each copy's
// plan, built at its first call, is most of a point's time on the schedule).
constexpr int kInt8Copies = 2;

}  // namespace

std::vector<ConvSample> measure_int8_conv_samples(Device& device, const CeilingsPlan& plan, bool quick,
                                                  std::vector<std::string>& notes) {
  if (!device.torch_device().is_cpu()) return {};
  const CeilingsPlan light = sample_plan(plan);
  const std::vector<GridPoint> points = int8_grid(quick);
  std::vector<ConvSample> out;
  StageSchedule schedule(plan.allot.int8_conv_samples > 0 ? plan.allot.int8_conv_samples : 1e30, points.size());
  const auto bytes = at::TensorOptions().dtype(at::kByte);
  const auto chars = at::TensorOptions().dtype(at::kChar);
  for (const GridPoint& p : points) {
    const std::string label = "conv " + p.kind + " " + std::to_string(p.c_in) + "->" + std::to_string(p.c_out) +
                              " at " + std::to_string(p.h_out);
    try {
      const int64_t h_in = p.h_out * p.stride, pad = p.taps_side / 2;
      // A QDQ group's operands: u8 activations (channels-last, a zero point
      // of their own), s8 weights of the full range with zero points 0 and a
      // scale per output channel, a float bias; the kernel writes the float
      // output (int8_kernels.hpp). Random values, never zeros.
      const at::Tensor x =
          at::randint(0, 256, {1, p.c_in, h_in, h_in}, bytes).contiguous(at::MemoryFormat::ChannelsLast);
      const at::Tensor x_zero_point = at::full({1}, 3, bytes);
      const at::Tensor w_zero_point = at::zeros({p.c_out}, chars);
      const at::Tensor bias = at::rand({p.c_out});
      Window window{{p.taps_side, p.taps_side}, {p.stride, p.stride}, {1, 1}, {pad, pad}, {pad, pad}};
      const int64_t group = p.depthwise ? p.c_in : 1;
      std::vector<at::Tensor> weights;
      for (int i = 0; i < kInt8Copies; ++i)
        weights.push_back(at::randint(-128, 128, {p.c_out, p.weight_c_in(), p.taps_side, p.taps_side}, chars));
      const at::Tensor x_scale = at::full({1}, 1e-2f), w_scale = at::full({p.c_out}, 1e-1f);
      const at::Tensor scale = x_scale * w_scale;
      // As qdq_conv runs it: the kernel's float output, or (two 7-bit halves
      // on a CPU without VNNI) the int32 accumulator dequantized after it.
      auto run = [&](const at::Tensor& w) -> bool {
        std::optional<at::Tensor> acc = int8_conv(x, x_zero_point, w, w_zero_point, window, group, true, scale, bias);
        if (acc && acc->scalar_type() != at::kFloat) (void)dequantize_accumulator(*acc, x_scale, w_scale, bias, 1);
        return acc.has_value();
      };
      if (!run(weights.front())) {
        notes.push_back("int8 conv samples: not measured (" + int8_kernel_note() + ")");
        return {};
      }
      const Timed t = median_seconds(device, schedule.next(light), label, [&] {
        for (const at::Tensor& w : weights) (void)run(w);
      });
      note_if_unconverged(t, label, notes);
      if (t.seconds <= 0) continue;
      ConvSample s;
      s.kind = p.kind;
      s.m = p.h_out * p.h_out;
      s.n = p.c_out;
      s.k = p.weight_c_in() * p.taps_side * p.taps_side;
      s.flops_per_second = p.flops() * double(weights.size()) / t.seconds;
      out.push_back(std::move(s));
    } catch (const std::exception& e) {
      notes.push_back(label + ": not measured (" + first_line(e) + ")");
    }
  }
  schedule.note_end("int8 conv samples", out.size(), points.size(), notes);
  return out;
}

void merge_sample_passes(std::vector<ConvSample>& first, const std::vector<ConvSample>& again) {
  for (ConvSample& s : first)
    for (const ConvSample& a : again)
      if (a.kind == s.kind && a.m == s.m && a.n == s.n && a.k == s.k && a.flops_per_second > 0 &&
          s.flops_per_second > 0)
        s.flops_per_second = std::sqrt(s.flops_per_second * a.flops_per_second);
}

namespace {

// What `after` adds to a 1x1 conv of 64 -> 256 channels at 56 x 56 (a 3 MiB
// output), per byte of that output: the group timed with and without it, in
// cold copies as the samples.
double post_op_cost(Device& device, const CeilingsPlan& plan, After after, const std::string& what,
                    std::vector<std::string>& notes) {
  if (!device.torch_device().is_cpu()) return 0;
  const CeilingsPlan light = sample_plan(plan);
  const GridPoint p{"1x1", 64, 256, 56, 1, 1};
  try {
    const int copies = cold_copies(p);
    const double plain = time_probe_model(device, light, conv_model(p, copies), "conv " + what + ": without", notes);
    const double with = time_probe_model(device, light, conv_model(p, copies, after), "conv " + what + ": with", notes);
    const double output_bytes = 4.0 * double(p.c_out * p.h_out * p.h_out) * copies;
    return std::max(0.0, with - plain) / output_bytes;
  } catch (const std::exception& e) {
    notes.push_back("conv " + what + " cost: not measured (" + first_line(e) + ")");
    return 0;
  }
}

}  // namespace

double measure_conv_residual_cost(Device& device, const CeilingsPlan& plan, std::vector<std::string>& notes) {
  return post_op_cost(device, plan, After::Residual, "residual", notes);
}

double measure_conv_silu_cost(Device& device, const CeilingsPlan& plan, std::vector<std::string>& notes) {
  return post_op_cost(device, plan, After::Silu, "SiLU", notes);
}

double measure_conv_layout_cost(Device& device, const CeilingsPlan& plan, std::vector<std::string>& notes) {
  // Without oneDNN the ATen convolution reads NCHW itself: nothing to turn.
  if (!device.torch_device().is_cpu() || !fp32_conv_kernels_available()) return 0;
  // The executor's own conversion of a 1x3x224x224 image, timed alone on
  // images taken in turn from 64 MiB of them, so that each comes from memory
  // as a fed image does after a run (a difference of two conv timings, the
  // first way tried, was within the convs' noise: 0 to 0.24 ns a byte).
  const CeilingsPlan light = sample_plan(plan);
  const int64_t image_bytes = 4 * 3 * 224 * 224;
  const int64_t count = std::max<int64_t>(1, kProbeColdBytes / image_bytes);
  std::vector<at::Tensor> images;
  for (int64_t i = 0; i < count; ++i) images.push_back(at::rand({1, 3, 224, 224}));
  size_t next = 0;
  const std::string label = "conv layout: an image turned channels-last";
  const Timed t = median_seconds(device, light, label, [&] {
    (void)channels_last_input(images[next]);
    next = (next + 1) % images.size();
  });
  note_if_unconverged(t, label, notes);
  return t.seconds / double(image_bytes);
}

int64_t conv_channel_block(Device& device) {
  if (!device.torch_device().is_cpu() || !fp32_conv_kernels_available()) return 0;
  return onednn_fp32_lanes();
}

}  // namespace modelstat::profiler

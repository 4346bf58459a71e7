// `modelstat device`: measures the ceilings of modelstat/ceilings.hpp through
// the Device interface, so the CPU and CUDA probes are one loop timed by each
// device's own interval timer (host clock on the CPU, CUDA events on the
// execution stream). What differs per device (sizes, dtypes, memory, math
// mode) is a CeilingsPlan (ceilings_plan.hpp).
//
// Every figure follows METHODOLOGY "Runtime measurement": warm-up by count and
// time, then samples until the median's confidence interval is narrow enough
// (MedianCiCriterion), and the median is what is kept.
#include "profiler/ceilings_probe.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "modelstat/error.hpp"
#include "profiler/ceilings_plan.hpp"
#include "profiler/ceilings_timing.hpp"
#include "profiler/conv_probe.hpp"
#include "profiler/matmul_probe.hpp"
#include "profiler/op_cost_probe.hpp"
#include "profiler/ops/fp32_matmul.hpp"
#include "profiler/ops/int8_kernels.hpp"
#include "profiler/device.hpp"
#include "profiler/run_setup.hpp"
#include "profiler/torch_errors.hpp"
#include "profiler/executor.hpp"
#include "profiler/progress.hpp"
#include "profiler/run_context.hpp"
#include "modelstat/statistics.hpp"
#include "profiler/host_memory.hpp"
#include "profiler/machine/machine_probe.hpp"
#include "profiler/stopping.hpp"

namespace modelstat::profiler {

namespace {

constexpr int64_t kMiB = int64_t(1) << 20;
constexpr uint64_t kSeed = 0x5eed;  // the profiler's default input seed

std::string mib(int64_t bytes) { return std::to_string(bytes / kMiB) + " MiB"; }

// Last-level cache as the C library reports it; 0 when unknown. Inside a VM
// this can be the host's whole L3, which only makes the copy larger.
int64_t last_level_cache_bytes() {
  for (int name : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
    const long v = sysconf(name);
    if (v > 0) return int64_t(v);
  }
  return 0;
}

}  // namespace

CeilingsPlan cpu_ceilings_plan(bool quick) {
  CeilingsPlan plan;
  plan.dtypes = {"fp32"};  // the executor's CPU contractions run fp32 (a float16 Conv or MatMul runs upcast)
  // Each buffer at least 256 MiB and twice the last-level cache, so source and
  // destination together are >= 4x the cache and the copy streams from DRAM.
  const int64_t llc = last_level_cache_bytes();
  plan.copy_bytes = std::min(int64_t(1) << 30, std::max(256 * kMiB, (2 * llc + kMiB - 1) / kMiB * kMiB));
  if (llc > 0) plan.notes.push_back("last-level cache reported: " + mib(llc));
  plan.matmul_sizes = quick ? std::vector<int64_t>{64, 256, 1024}
                            : std::vector<int64_t>{64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048};
  plan.min_sample_seconds = 1e-3;
  use_protocol(plan, quick, {1, 0.02, 0.5}, 0.02, 0.3);
  // The full probe's stages of many points on a schedule: near what each took
  // on the Zen 4 VMs, where the whole took 251 s, so that a slower or noisier
  // machine keeps the 300 s bound (docs/ceilings.md, "Time"). --quick's two
  // largest stages too (60 s bound): on the Zen 3 VM, unscheduled, its op
  // classes took 17.9 s and its conv samples 23.6 s, the whole 63 s.
  plan.allot = quick ? CeilingsPlan::Allotments{0.0, 14.0, 18.0, 0.0, 0.0, 0.0}
                     : CeilingsPlan::Allotments{12.0, 65.0, 90.0, 6.0, 12.0, 8.0};
  const auto available = available_host_memory();
  fit_plan_to_memory(plan, available ? available->bytes : -1);
  return plan;
}

namespace {

CeilingsPlan plan_for(const std::string& kind, bool quick) {
  if (kind == "cuda") {
#ifdef MODELSTAT_TORCH_CUDA
    return cuda_ceilings_plan(quick);
#else
    // make_device("cuda") has already refused a build without CUDA LibTorch.
    throw Error(ErrorKind::Usage, "--device cuda: this build's LibTorch has no CUDA support");
#endif
  }
  return cpu_ceilings_plan(quick);
}

at::ScalarType scalar_type(const std::string& dtype) {
  if (dtype == "fp32" || dtype == "tf32") return at::kFloat;  // tf32: fp32 storage, TF32 tensor-core math
  if (dtype == "fp16") return at::kHalf;
  if (dtype == "bf16") return at::kBFloat16;
  throw Error(ErrorKind::Usage, "unknown dtype '" + dtype + "' (fp32, tf32, fp16 or bf16)");
}

double measure_copy_bandwidth(Device& device, const CeilingsPlan& plan, std::vector<std::string>& notes) {
  const auto options = at::TensorOptions().dtype(at::kByte).device(device.torch_device());
  at::Tensor src = at::empty({plan.copy_bytes}, options);
  at::Tensor dst = at::empty({plan.copy_bytes}, options);
  src.fill_(0x5e);  // touch every page before timing; the values do not matter to a copy
  const Timed t = median_seconds(device, plan, "copy", [&] { dst.copy_(src); });
  note_if_unconverged(t, "copy", notes);
  // Bytes moved per copy: every byte read once and written once.
  return 2.0 * double(plan.copy_bytes) / t.seconds;
}

// The curve's best rate and the size it was reached at.
void set_best_point(MatmulCeiling& m) {
  for (const auto& p : m.curve)
    if (p.flops_per_second > m.flops_per_second) {
      m.flops_per_second = p.flops_per_second;
      m.best_size = p.n;
    }
}

MatmulCeiling measure_matmul(Device& device, const CeilingsPlan& plan, const std::string& dtype,
                             std::vector<std::string>& notes) {
  const std::shared_ptr<void> math_mode = plan.math_mode ? plan.math_mode(dtype) : nullptr;
  const auto options = at::TensorOptions().dtype(scalar_type(dtype)).device(device.torch_device());
  MatmulCeiling m;
  m.dtype = dtype;
  // The CPU's fp32 products are timed twice, on ATen's mm and on the executor's own Gemm / MatMul
  // kernel (Fp32MatmulKernel: oneDNN or the BLAS per shape), and each size keeps the faster: a
  // model's products run on that kernel, which at 2 threads on the project VM (oneDNN) ran n = 192
  // to 2048 at 190-213 GFLOP/s where ATen's mm (OpenBLAS) read 86-187, and the transformers were
  // forecast 40-60% over; at n = 64 the kernel's own call (an output allocated per run) cost more
  // than the product, and the curve's low end prices every depthwise and grouped Conv.
  const bool on_executor_kernel =
      device.torch_device().is_cpu() && dtype == "fp32" && fp32_matmul_kernels_available();
  std::vector<int64_t> kernel_sizes, mm_sizes;
  StageSchedule schedule(plan.allot.matmul > 0 ? plan.allot.matmul : 1e30,
                         plan.matmul_sizes.size() * (on_executor_kernel ? 2 : 1));
  for (int64_t n : plan.matmul_sizes) {
    const std::string label = "mm " + dtype + " " + std::to_string(n);
    try {
      // Random operands from a fixed seed, never zeros (METHODOLOGY rule 9).
      const at::Tensor a = at::randn({n, n}, options);
      const at::Tensor b = at::randn({n, n}, options);
      at::Tensor c = at::empty({n, n}, options);
      Timed t = median_seconds(device, schedule.next(plan), label, [&] { at::mm_out(c, a, b); });
      note_if_unconverged(t, label, notes);
      if (on_executor_kernel) {
        // b as a constant weight on the kernel a model's Gemm / MatMul of this size runs on (oneDNN
        // or the BLAS, whichever it measured faster); the faster of the two timings kept.
        Fp32MatmulKernel kernel(b, at::Tensor(), {}, GemmBackend::Auto);
        kernel.prepare(n);
        const Timed k = median_seconds(device, schedule.next(plan), label + " (executor's kernel)",
                                       [&] { c = kernel.run(a, at::Tensor()); });
        note_if_unconverged(k, label + " (executor's kernel)", notes);
        if (k.seconds < t.seconds) {
          t = k;
          kernel_sizes.push_back(n);
        } else {
          mm_sizes.push_back(n);
        }
      }
      // A square product n x n x n: n^3 multiply-adds, 2 n^3 FLOPs.
      m.curve.push_back({n, 2.0 * double(n) * double(n) * double(n) / t.seconds});
    } catch (const std::exception& e) {
      if (!is_out_of_memory(e)) throw;
      notes.push_back(label + ": out of memory; larger sizes not measured");
      break;
    }
  }
  set_best_point(m);
  if (std::string behind = schedule.note("mm " + dtype + " curve"); !behind.empty()) notes.push_back(behind);
  if (on_executor_kernel) {
    auto list = [](const std::vector<int64_t>& v) {
      std::string out;
      for (int64_t n : v) out += (out.empty() ? "" : ", ") + std::to_string(n);
      return out.empty() ? std::string("none") : out;
    };
    notes.push_back("fp32 matmul curve, the faster of two kernels per size: the executor's at n = " +
                    list(kernel_sizes) + "; ATen's mm at n = " + list(mm_sizes));
  }
  return m;
}

// The int8 curve (CPU): square products on the executor's own int8 kernel
// (int8_matmul: oneDNN's u8 x s8 -> s32 matmul, the weight's plan cached as
// for a model's constant weight), at the fp32 curve's sizes. `fit` prices
// the contraction of a QDQ int8 group on it (docs/FIT.md, "int8"): an int8
// kernel runs 3-4x the fp32 rate on VNNI, which the fp32 curve cannot say.
// Rates in int ops per second, 2 n^3 per product, as FLOPs are counted.
//
// Three passes over the sizes, each size's fastest kept. On the project VM
// the int8 kernel ran at one of two levels for seconds at a time (n = 64: 24-29
// or 41-44 Gop/s; n = 192: 214-225 or 314-324), in the same process and on
// the same operands, while the fp32 curve held; one pass caught either level,
// and the QDQ models' forecasts moved by 40% with it (qdq_resnet18 +14% from
// a calibration at the fast level, +58% from one at the slow). The models'
// int8 layers ran at the fast level.
MatmulCeiling measure_int8_matmul(Device& device, const CeilingsPlan& plan, std::vector<std::string>& notes) {
  constexpr int kPasses = 3;
  const CeilingsPlan pass_plan = shortened_plan(plan, 0.05, 0.1);
  struct Size {
    int64_t n;
    at::Tensor a, b;
    double best = 0;
  };
  std::vector<Size> sizes;
  for (int64_t n : plan.matmul_sizes) {
    // Random operands from a fixed seed (u8 activations, s8 weights), never zeros.
    // The weights are 7-bit (within [-64, 64]): a CPU without VNNI runs only
    // those on the int8 kernels (int8_kernels.hpp, "Exactness"), and the
    // kernels' time does not depend on the values.
    Size s{n, at::randint(0, 256, {n, n}, at::TensorOptions().dtype(at::kByte)),
           at::randint(-64, 65, {n, n}, at::TensorOptions().dtype(at::kChar))};
    if (!int8_matmul(s.a, {}, s.b, {}, true)) {
      notes.push_back("int8 curve: not measured (" + int8_kernel_note() + ")");
      return MatmulCeiling{};
    }
    sizes.push_back(std::move(s));
  }
  StageSchedule schedule(plan.allot.matmul > 0 ? plan.allot.matmul : 1e30, sizes.size() * kPasses);
  for (int pass = 0; pass < kPasses; ++pass)
    for (Size& s : sizes) {
      const std::string label = "mm int8 " + std::to_string(s.n);
      const Timed t = median_seconds(device, schedule.next(pass_plan), label,
                                     [&] { (void)int8_matmul(s.a, {}, s.b, {}, true); });
      if (pass == kPasses - 1) note_if_unconverged(t, label, notes);
      s.best = std::max(s.best, 2.0 * double(s.n) * double(s.n) * double(s.n) / t.seconds);
    }
  if (std::string behind = schedule.note("mm int8 curve"); !behind.empty()) notes.push_back(behind);
  MatmulCeiling m;
  m.dtype = "int8";
  for (const Size& s : sizes) m.curve.push_back({s.n, s.best});
  set_best_point(m);
  return m;
}

// The fixed cost of one small op: an allocating elementwise add of two
// 1-element tensors, as the executor runs a node (dispatch + output
// allocation on the CPU; launch + allocation on CUDA, where back-to-back
// launches measure the launch rate the host sustains).
double measure_op_overhead(Device& device, const CeilingsPlan& plan, std::vector<std::string>& notes) {
  const auto options = at::TensorOptions().dtype(at::kFloat).device(device.torch_device());
  const at::Tensor x = at::rand({1}, options);
  const at::Tensor y = at::rand({1}, options);
  const Timed t = median_seconds(device, plan, "op overhead", [&] { (void)at::add(x, y); });
  note_if_unconverged(t, "op overhead", notes);
  return t.seconds;
}

// A graph of `nodes` Add nodes, y_i = y_{i-1} + y_{i-1} on a 1-element float:
// each node reads its input twice, so the executor cannot reuse it in place
// and allocates the output, as most nodes of a real model do.
Model add_chain_model(int nodes) {
  Model m;
  m.opsets.push_back({"", 13});
  Graph& g = m.graph;
  g.name = "node overhead probe";
  for (int i = 0; i <= nodes; ++i) {
    Tensor t;
    t.name = "y" + std::to_string(i);
    t.dtype = DType::Float;
    t.shape.rank_known = true;
    t.shape.dims.push_back(Dim{1, {}});
    t.role = i == 0 ? TensorRole::Input : TensorRole::Activation;
    t.producer = i == 0 ? -1 : i - 1;
    if (i < nodes) t.consumers = {i, i};
    g.tensors.push_back(std::move(t));
  }
  for (int i = 0; i < nodes; ++i) {
    Node n;
    n.name = "add_" + std::to_string(i);
    n.op_type = "Add";
    n.inputs = {i, i};
    n.outputs = {i + 1};
    g.nodes.push_back(std::move(n));
  }
  g.inputs = {0};
  g.outputs = {nodes};
  return m;
}

constexpr int kChainNodes = 64;

// modelstat's executor per node: a whole run of the Add chain over its length.
double measure_node_overhead(Device& device, const CeilingsPlan& plan, std::vector<std::string>& notes) {
  const Model model = add_chain_model(kChainNodes);
  ProfileOptions fp32;
  fp32.dtype = ComputeDtype::Fp32;
  const ExecOptions eo = exec_options(fp32, device.torch_device(), ExecPurpose::Inference);
  Executor exec(model, eo);
  const std::vector<at::Tensor> inputs = {at::rand({1}, at::TensorOptions().dtype(at::kFloat).device(eo.device))};
  const Timed t = median_seconds(device, plan, "node overhead", [&] { (void)exec.run(inputs); });
  note_if_unconverged(t, "node overhead", notes);
  return t.seconds / kChainNodes;
}

// The same chain in a training step: the executor's forward with autograd
// recording (the input requires grad), then backward() through it.
double measure_train_node_overhead(Device& device, const CeilingsPlan& plan, std::vector<std::string>& notes) {
  const Model model = add_chain_model(kChainNodes);
  ExecOptions eo = exec_options(ProfileOptions{}, device.torch_device(), ExecPurpose::TrainStep);
  eo.in_place = false;  // as in training
  Executor exec(model, eo);
  at::Tensor leaf = at::rand({1}, at::TensorOptions().dtype(at::kFloat).device(eo.device));
  leaf.set_requires_grad(true);
  const std::vector<at::Tensor> inputs = {leaf};
  const Timed t = median_seconds(device, plan, "train node overhead", [&] {
    exec.run(inputs)[0].sum().backward();
    leaf.mutable_grad() = at::Tensor();
  });
  note_if_unconverged(t, "train node overhead", notes);
  return t.seconds / kChainNodes;
}

// The machine's roofs (ceilings.hpp, schema 2.0). CPU: FMA micro-kernels and
// the read sweep at 1 thread, at the probe's thread count and at every
// hardware thread (report picks the count nearest its profile's). CUDA: the
// theoretical roofs of the device, and the copy above as its one memory level.
void add_machine_roofs(Device& device, const CeilingsProbeOptions& options, DeviceCeilings& c) {
  if (options.device == "cuda") {
    const int index = device.torch_device().has_index() ? device.torch_device().index() : 0;
    c.compute_roofs = machine::cuda_theoretical_roofs(index, c.notes);
    MemoryLevel dram;
    dram.level = "DRAM";
    dram.bytes_per_second = c.memory_bandwidth;  // the copy: read + written
    c.memory_levels.push_back(dram);
    return;
  }
  machine::MachineProbeOptions mo;
  mo.quick = options.quick;
  const int all = int(std::max(1u, std::thread::hardware_concurrency()));
  for (int t : {1, resolve_threads(options.threads), all})
    if (std::find(mo.thread_counts.begin(), mo.thread_counts.end(), t) == mo.thread_counts.end())
      mo.thread_counts.push_back(t);
  std::sort(mo.thread_counts.begin(), mo.thread_counts.end());
  machine::MachineRoofs roofs = machine::measure_cpu_machine_roofs(mo);
  c.compute_roofs = std::move(roofs.compute_roofs);
  c.memory_levels = std::move(roofs.levels);
  c.bandwidth_sweep = std::move(roofs.sweep);
  c.notes.insert(c.notes.end(), roofs.notes.begin(), roofs.notes.end());
}

DeviceCeilings measure(const CeilingsProbeOptions& options) {
  configure_host_allocator();
  set_intra_op_threads(resolve_threads(options.threads));
  std::unique_ptr<Device> device = make_device(options.device);
  CeilingsPlan plan = plan_for(options.device, options.quick);
  if (!options.dtypes.empty()) {
    for (const auto& d : options.dtypes)
      if (std::find(plan.dtypes.begin(), plan.dtypes.end(), d) == plan.dtypes.end()) {
        std::string known;
        for (const auto& k : plan.dtypes) known += (known.empty() ? "" : ", ") + k;
        throw Error(ErrorKind::Usage, "dtype '" + d + "' is not measured on " + options.device + " (here: " + known + ")");
      }
    plan.dtypes = options.dtypes;
  }
  at::manual_seed(kSeed);

  DeviceCeilings c;
  c.source = "measured";
  c.notes = plan.notes;
  // How long each stage took, in one note at the end (the calibration's time
  // is bounded: docs/ceilings.md).
  std::string stages;
  auto stage_start = std::chrono::steady_clock::now();
  auto stage = [&](const char* name) {
    const auto now = std::chrono::steady_clock::now();
    char text[64];
    std::snprintf(text, sizeof text, "%s%s %.1f s", stages.empty() ? "" : ", ", name,
                  std::chrono::duration<double>(now - stage_start).count());
    stages += text;
    stage_start = now;
  };
  if (options.quick) c.notes.insert(c.notes.begin(), "quick probe: fewer sizes and runs than 'modelstat device'");
  c.copy_bytes = plan.copy_bytes;
  c.memory_bandwidth = measure_copy_bandwidth(*device, plan, c.notes);
  for (const auto& dtype : plan.dtypes) {
    MatmulCeiling m = measure_matmul(*device, plan, dtype, c.notes);
    // A dtype with no point (out of memory at its smallest size) has no ceiling: left out, the note says why.
    if (!m.curve.empty()) c.matmul.push_back(std::move(m));
  }
  if (device->torch_device().is_cpu() && int8_kernels_available()) {
    MatmulCeiling m = measure_int8_matmul(*device, plan, c.notes);
    if (!m.curve.empty()) c.matmul.push_back(std::move(m));
    c.int8_weight_products = int8_kernels_exact_for_any_weights() ? 1 : 2;
  }
  stage("copy and matmul");
  add_machine_roofs(*device, options, c);
  stage("machine roofs");
  c.op_overhead_seconds = measure_op_overhead(*device, plan, c.notes);
  c.node_overhead_seconds = measure_node_overhead(*device, plan, c.notes);
  c.train_node_overhead_seconds = measure_train_node_overhead(*device, plan, c.notes);
  stage("overheads");
  if (options.op_costs) {
    const FreshAllocationCost fresh = measure_fresh_allocation(*device, plan, c.notes);
    c.fresh_allocation_threshold_bytes = fresh.threshold_bytes;
    c.fresh_allocation_seconds_per_byte = fresh.seconds_per_byte;
    c.op_costs = measure_op_costs(*device, plan, fresh, c.notes);
    stage("op classes");
    c.conv_samples = measure_conv_samples(*device, plan, options.quick, c.notes);
    stage("conv samples");
    const std::vector<ConvSample> products = measure_matmul_samples(*device, plan, options.quick, c.notes);
    c.conv_samples.insert(c.conv_samples.end(), products.begin(), products.end());
    stage("matmul samples");
    std::vector<ConvSample> int8;
    if (int8_kernels_available()) {
      int8 = measure_int8_conv_samples(*device, plan, options.quick, c.notes);
      stage("int8 conv samples");
    }
    c.train_conv_samples = measure_train_conv_samples(*device, plan, options.quick, fresh, c.notes);
    stage("training conv samples");
    // The int8 samples again, the training samples' half minute after the
    // first pass, each point's geometric mean of the two kept. On the
    // project VM the int8 kernels run at one of two levels about 1.4x apart
    // for seconds to minutes at a time (3x3 64 -> 64 at 56 x 56: 54 or 76
    // Gop/s), and one pass lasts a few seconds: a single pass caught one
    // level for most of its points, and the models then ran at either, from
    // one round to the next (QDQ MobileNet-V2 32.6-48.2 ms in three rounds).
    // Keeping the faster pass priced QDQ ResNet-18 21% under rounds that ran
    // at the slow level; the mean of the two is off by at most half that
    // ratio either way, and agrees with both where they agree.
    if (!int8.empty() && !options.quick) {
      merge_sample_passes(int8, measure_int8_conv_samples(*device, plan, options.quick, c.notes));
      stage("int8 conv samples again");
    }
    c.conv_samples.insert(c.conv_samples.end(), int8.begin(), int8.end());
    c.conv_residual_seconds_per_byte = measure_conv_residual_cost(*device, plan, c.notes);
    c.conv_silu_seconds_per_byte = measure_conv_silu_cost(*device, plan, c.notes);
    c.conv_layout_seconds_per_byte = measure_conv_layout_cost(*device, plan, c.notes);
    c.conv_channel_block = conv_channel_block(*device);
    c.optimizer_costs = measure_optimizer_costs(*device, plan, fresh, c.notes);
    stage("conv post-ops and optimizers");
  }
  // The copy again, minutes after the first (a second or two): the faster is
  // kept. On the project VM one calibration's first copy ran at 12.0 GB/s in
  // a slow spell of the machine, where every other measured 21.7-22.7, and
  // priced GPT-2's decode step (its KV cache streamed at the copy bandwidth)
  // 20-28% over.
  if (!options.quick) {
    const double again = measure_copy_bandwidth(*device, plan, c.notes);
    if (again > 1.2 * c.memory_bandwidth || c.memory_bandwidth > 1.2 * again) {
      char text[160];
      std::snprintf(text, sizeof text, "copy bandwidth: %.1f GB/s first, %.1f GB/s at the end of the probe; the faster kept",
                    c.memory_bandwidth / 1e9, again / 1e9);
      c.notes.push_back(text);
    }
    c.memory_bandwidth = std::max(c.memory_bandwidth, again);
  }
  stage("copy again");
  // The per-op and per-node fixed costs again, the smaller kept (a fixed cost
  // only grows with interference): on the sixteenth session's VM two
  // calibrations 17 minutes apart measured the node overhead at 0.79 and 1.49
  // us, which moved the small models' forecasts by 8-15 points.
  if (!options.quick) {
    auto keep_smaller = [&](double& kept, double again, const char* what) {
      if (again <= 0) return;
      if (kept > 1.2 * again || again > 1.2 * kept) {
        char text[160];
        std::snprintf(text, sizeof text, "%s: %.2f us first, %.2f us at the end of the probe; the smaller kept", what,
                      kept * 1e6, again * 1e6);
        c.notes.push_back(text);
      }
      kept = kept > 0 ? std::min(kept, again) : again;
    };
    keep_smaller(c.op_overhead_seconds, measure_op_overhead(*device, plan, c.notes), "op overhead");
    keep_smaller(c.node_overhead_seconds, measure_node_overhead(*device, plan, c.notes), "node overhead");
    keep_smaller(c.train_node_overhead_seconds, measure_train_node_overhead(*device, plan, c.notes),
                 "training node overhead");
    stage("overheads again");
  }
  c.notes.push_back("probe stages: " + stages);

  RunContext context;
  describe_run(*device, context);
  c.device_kind = context.device_kind;
  c.device_name = context.device_name;
  c.threads = context.device_kind == "cpu" ? context.threads : 0;
  c.date = context.date;
  c.host = context.host;
  c.torch_version = context.torch_version;
  c.notes.push_back("timer: " + context.timer);
  if (!context.blas.empty()) c.notes.push_back("blas: " + context.blas);
  if (!context.onednn_isa.empty()) c.notes.push_back("oneDNN isa: " + context.onednn_isa);
  if (!context.runtime_version.empty()) c.notes.push_back("runtime: " + context.runtime_version);
  if (!context.driver_version.empty()) c.notes.push_back("driver: " + context.driver_version);
  if (!context.clocks.empty()) c.notes.push_back("clocks: " + context.clocks);
  return c;
}

}  // namespace

void use_protocol(CeilingsPlan& plan, bool quick, const WarmupConfig& quick_warmup, double quick_min_seconds,
                  double quick_max_seconds) {
  plan.warmup = quick ? quick_warmup : WarmupConfig{3, 0.2, 3.0};
  plan.stopping.min_iterations = quick ? 5 : 10;
  plan.stopping.min_seconds = quick ? quick_min_seconds : 0.25;
  plan.stopping.max_seconds = quick ? quick_max_seconds : 3.0;
  plan.stopping.target_rel_ci = quick ? 0.05 : 0.02;
}

void fit_plan_to_memory(CeilingsPlan& plan, int64_t usable_bytes) {
  if (usable_bytes < 0) return;
  const int64_t budget = usable_bytes / 2;
  const int64_t wanted = plan.copy_bytes;
  while (2 * plan.copy_bytes > budget && plan.copy_bytes > 16 * kMiB) plan.copy_bytes /= 2;
  if (plan.copy_bytes != wanted)
    plan.notes.push_back("copy buffer reduced from " + mib(wanted) + " to " + mib(plan.copy_bytes) + " (" +
                         mib(usable_bytes) + " of memory available)");
  // Three n x n matrices (a, b, c), sized as fp32, the widest dtype measured.
  std::vector<int64_t> kept;
  for (int64_t n : plan.matmul_sizes)
    if (3 * n * n * 4 <= budget) kept.push_back(n);
  if (kept.empty() && !plan.matmul_sizes.empty()) kept.push_back(plan.matmul_sizes.front());
  if (kept.size() != plan.matmul_sizes.size())
    plan.notes.push_back("matmul sizes above n=" + std::to_string(kept.back()) + " left out (" + mib(usable_bytes) +
                         " of memory available)");
  plan.matmul_sizes = std::move(kept);
}

DeviceCeilings measure_ceilings(const CeilingsProbeOptions& options) {
  try {
    return measure(options);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    const Error error = error_from(e, "", "");
    throw Error(ErrorKind::Runtime, error.message());
  }
}

}  // namespace modelstat::profiler

// Device ceilings: the measured peaks a roofline is drawn against and a latency
// forecast is made from. `modelstat device` measures them (profiler/ceilings_probe.cc)
// and saves them as JSON (docs/ceilings.md); `report` and `fit` read them back.
// Datasheet values exist only as a labelled fallback (source != "measured").
// Plain data, no LibTorch: the analyzer-side tools (fit) read it too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace modelstat {

extern const char* const kCeilingsSchemaVersion;

// Matrix-multiply throughput of one dtype: square n x n x n products, 2*n^3 FLOPs each.
struct MatmulCeiling {
  std::string dtype;                 // "fp32", "tf32", "fp16", "bf16"
  double flops_per_second = 0;       // best over the sizes measured
  int64_t best_size = 0;             // n of that best point
  struct Point {
    int64_t n = 0;
    double flops_per_second = 0;     // median over its runs
  };
  std::vector<Point> curve;          // every size measured, ascending n
};

// One timed fp32 convolution of `modelstat device`'s grid (conv_probe.cc): a
// Conv group as the CPU executor runs it (oneDNN, weights prepacked,
// channels-last activations), with its weights cold, on synthetic shapes.
// Named by the GEMM it computes, per group: M = batch x output positions,
// N = output channels, K = input channels x kernel taps. `fit` prices a Conv
// group of the same kind at the rate of the samples nearest its (M, N, K)
// (DeviceCeilings::conv_flops_at; docs/FIT.md, "Convolution samples").
struct ConvSample {
  // "1x1" (any stride), "kxk" (taps > 1, stride 1), "kxk/s2" (taps > 1, strided);
  // depthwise (group = C_in = C_out, K = taps): "dw" (stride 1), "dw/s2" (strided; schema 2.3)
  // "int8 1x1", "int8 kxk", "int8 dw" (schema 2.11, stride 1): the executor's int8
  // convolution of a QDQ group, s8 weights of the full range (int ops per second)
  // "matmul" (schema 2.12): the executor's fp32 MatMul group against a constant
  // weight (profiler/matmul_probe.hpp), A of M rows by K, the weight K x N
  std::string kind;
  int64_t m = 0, n = 0, k = 0;
  double flops_per_second = 0;       // 2 M N K over the median time of one group, call costs included
  // The same group with its weight held by the caches, where the cold
  // measurement needed more than 8 copies to pass them (a cheap point: small
  // weight and output); 0: not measured apart, flops_per_second holds for
  // both (schema 2.8). A model whose run fits the last-level cache keeps its
  // weights there from one run to the next (fit's weights_cold_share).
  double hot_flops_per_second = 0;
};

// One timed fp32 convolution as a training step runs it (conv_probe.cc,
// schema 2.9): ATen's convolution on NCHW activations, unfused, input and
// weight requiring grad, the forward with autograd recording and the backward
// of both gradients (input and weight) from a contiguous output gradient,
// timed apart on synthetic shapes. Kinds and M, N, K as ConvSample's, from
// the node as written ("1x1": 1x1 unstrided, which ATen 1.13 runs without
// oneDNN on one thread at a small batch; a strided 1x1 is "kxk/s2"). `fit
// --train` prices a Conv's forward and backward at the rates of the samples
// nearest its (M, N, K) (DeviceCeilings::train_conv_rates_at).
struct TrainConvSample {
  std::string kind;
  int64_t m = 0, n = 0, k = 0;
  double forward_flops_per_second = 0;   // 2 M N K over the training forward's median time
  double backward_flops_per_second = 0;  // 2 M N K over the backward's median time (both gradients)
};

// Measured cost of one node of an op class as modelstat's executor runs it, a
// line in the bytes the node moves (read + written, the analyzer's rule),
// fitted through a tiny and a large instance of the node (op_cost_probe.cc):
//   forward          = fixed_seconds + bytes * seconds_per_byte
//   training forward = train_forward_fixed_seconds + bytes * train_forward_seconds_per_byte
//   backward         = backward_fixed_seconds + bytes * backward_seconds_per_byte
// The forward is the inference run (fused, channels-last where a model's
// activations are); the training forward is the node as a training step runs
// it (unfused, NCHW, autograd recording; schema 2.4); the backward is a
// training run (that forward, then backward()) minus the training forward.
// A file saved before 2.4 has no training forward (train_forward_ratio 0):
// its backward is the training run minus the inference forward, and the
// forward prices the training forward too. Keys are ONNX op types, or
// "Conv/depthwise" (group == C_in == C_out), "Conv" and "Gemm", whose
// backward_ratio (backward / forward of the large instance) and
// train_forward_ratio (training forward / forward) price the training step of
// dense contractions.
struct OpCost {
  std::string op;
  std::string probe;                  // the instances measured, e.g. "1x64x112x112 float"
  int64_t small_bytes = 0, large_bytes = 0;
  double fixed_seconds = 0, seconds_per_byte = 0;
  double backward_fixed_seconds = 0, backward_seconds_per_byte = 0;
  double backward_ratio = 0;
  double train_forward_fixed_seconds = 0, train_forward_seconds_per_byte = 0;
  double train_forward_ratio = 0;     // 0: not measured (a file saved before 2.4)
  bool has_train_forward() const { return train_forward_ratio > 0; }
  double forward_seconds(double bytes) const { return fixed_seconds + bytes * seconds_per_byte; }
  double backward_seconds(double bytes) const { return backward_fixed_seconds + bytes * backward_seconds_per_byte; }
};

// Measured cost of one optimizer update through modelstat's training step
// (op_cost_probe.cc): 16 weight tensors at two sizes, the update timed alone;
//   seconds = tensors x per_tensor_seconds + elements x seconds_per_element
// Schema 2.4 adds a point past the caches: the update's successive passes
// over one tensor find it in the last-level cache while the tensor and its
// state fit there (the 1 Mi-element weights above) and stream from memory
// when they do not (a classifier's weight), at a higher cost per element
// (Adam 1.4x on the ninth session's VM; bench/RESULTS.md).
// streamed_seconds_per_element was measured on weights of
// streamed_tensor_elements each; a tensor between the two sizes is priced
// between the two rates, linear in the logarithm of its elements.
struct OptimizerUpdateCost {
  std::string optimizer;             // "sgd", "momentum", "adam"
  std::string probe;
  double per_tensor_seconds = 0, seconds_per_element = 0;
  int64_t tensor_elements = 0;                // elements of each weight of the large point (0: not saved)
  double streamed_seconds_per_element = 0;    // 0: not measured (a file before 2.4)
  int64_t streamed_tensor_elements = 0;
  // Cost per element of the update of one weight of `elements`.
  double seconds_per_element_at(double elements) const;
};

// A machine roof (schema 2.0): the peak rate of one dtype on the device's
// arithmetic units, not what a library reaches. CPU: measured by an FMA
// micro-kernel per ISA (likwid-bench's peakflops_*, the Empirical Roofline
// Toolkit): independent register-only multiply-adds, no memory operand, on
// `threads` pinned threads together (profiler/machine/). CUDA: theoretical,
// SMs x clock x FMA per cycle per SM of the architecture (cuda_machine_roofs).
// For integer dtypes the rate counts operations (2 per multiply-add) as FLOPs.
struct ComputeRoof {
  std::string dtype;               // "fp32", "bf16", "int8"; CUDA also "tf32", "fp16"
  std::string kernel;              // what gave it: "avx512f vfmadd231ps zmm", "avx2 vfmadd231ps ymm", ...
  int threads = 0;                 // CPU threads running it together; 0 on CUDA (the whole device)
  double flops_per_second = 0;
  bool measured = true;            // false: computed from the device's properties, not run
};

// A level of the memory hierarchy (schema 2.0; 2.1 adds the read + write
// rate): the bandwidth of the plateau a working-set sweep shows for it
// (find_memory_levels). Nodes count the bytes they read plus the bytes they
// write, and a stream that reads and writes the same lines (an in-place Relu)
// moves more of those bytes per second through a cache than a read-only one,
// so the level's roof is the faster of the two streams.
struct MemoryLevel {
  std::string level;                 // "L1", "L2", "L3", ..., "DRAM"
  int threads = 0;                   // threads reading together (each its own share of the working set); 0 on CUDA
  // Largest working set (all threads together) this level holds: the cache's
  // size from sysfs times the instances those threads use when the plateau
  // matched a cache, else the edge measured on the curve; 0 for DRAM (no limit).
  int64_t capacity_bytes = 0;
  int64_t measured_edge_bytes = 0;   // where the curve falls to the next plateau (0: last level)
  int64_t plateau_from_bytes = 0, plateau_to_bytes = 0;  // working sets of the plateau's points
  double bytes_per_second = 0;       // the roof: max(read, read + write) below
  double read_bytes_per_second = 0;        // read-only stream, median over the plateau's points
  double read_write_bytes_per_second = 0;  // in-place update, bytes read + written (0: not measured, 2.0 files)
};

// One point of the sweep: `threads` threads each reading its share of
// working_set_bytes (all threads together) over and over.
struct BandwidthPoint {
  int threads = 0;
  int64_t working_set_bytes = 0;
  double bytes_per_second = 0;       // bytes read per second, all threads together (best sample)
  // Bytes read + written per second by an in-place update of the same
  // working set (load, max with 0, store back), best sample; 0: not measured.
  double read_write_bytes_per_second = 0;
};

// A data cache as the OS describes it (Linux sysfs), for naming plateaus.
struct CacheSize {
  int level = 0;                     // 1, 2, 3...
  int64_t bytes = 0;                 // one instance
  int cpus_sharing = 1;              // logical CPUs that share one instance
};

struct DeviceCeilings {
  std::string device_kind;           // "cpu" or "cuda"
  std::string device_name;           // as RunContext::device_name
  int threads = 0;                   // CPU intra-op threads the figures hold for (0 on CUDA)
  std::string source;                // "measured", or "datasheet: <name>" for the fallback
  std::string date, host, torch_version;
  // Bytes read + bytes written per second by a large device-to-device copy.
  double memory_bandwidth = 0;
  int64_t copy_bytes = 0;            // size of the buffer copied (one direction)
  std::vector<MatmulCeiling> matmul;
  // Fixed cost of one small op (dispatch on the CPU, launch on CUDA): the median
  // time of an elementwise op on a tiny tensor. A forecast adds it per node.
  double op_overhead_seconds = 0;
  // modelstat's own fixed costs per node, on top of the kernels (0: not
  // measured), from a chain of small allocating Add nodes run by the executor:
  // inference, the median run time over the chain length (dispatch, allocation,
  // the executor's bookkeeping); training, the same forward with autograd
  // recording plus backward() through it. A forecast adds one per node.
  double node_overhead_seconds = 0;
  double train_node_overhead_seconds = 0;
  // Per op class (empty: not measured; schema 1.2).
  std::vector<OpCost> op_costs;
  // fp32 convolutions on the CPU executor's kernel (empty: not measured; schema 2.2).
  std::vector<ConvSample> conv_samples;
  // fp32 convolutions as a training step runs them (empty: not measured; schema 2.9).
  std::vector<TrainConvSample> train_conv_samples;
  // What a Conv group's residual Add (a oneDNN sum post-op) costs per byte of
  // the residual it reads, beyond the conv (0: not measured; schema 2.2).
  double conv_residual_seconds_per_byte = 0;
  // What a Conv group's trailing SiLU (x * sigmoid(x), the executor's own pass
  // after the kernel) costs per byte of the group's output (0: not measured;
  // schema 2.3).
  double conv_silu_seconds_per_byte = 0;
  // What a Conv group adds when it reads a graph input (an image, NCHW as fed)
  // and turns it channels-last before the kernel, per byte of that input (0:
  // not measured; schema 2.5).
  double conv_layout_seconds_per_byte = 0;
  // The channel block of the executor's fp32 convolution kernels: oneDNN's
  // vector of fp32 lanes on the machine (16 with AVX-512, 8 with AVX/AVX2, 4
  // with SSE4.1; 0: not known, or no oneDNN convs). Those kernels compute
  // output channels (a depthwise conv's channels) in whole blocks, so a conv
  // writing 17-32 channels takes the time of one writing 32 (measured on the
  // project VM: 1x1 128 -> 17, 20, 24 and 32 at 28 x 28, 58 us each; 40 and
  // 48, 87 us), and fit prices it at the block's multiple (schema 2.7).
  int64_t conv_channel_block = 0;
  // How many int8 products the executor's int8 kernels run for a weight of
  // full 8-bit range (0: not known, or no int8 kernels; schema 2.10): 1 on a
  // CPU with VNNI (or AMX), 2 without, where oneDNN's int8 kernels add two
  // u8 x s8 products in int16 with saturation and the executor runs such a
  // weight as two exact 7-bit halves (profiler/ops/int8_kernels.hpp). The
  // int8 curve is measured on 7-bit weights (one product either way); fit
  // prices an int8 contraction at this many times its curve time, as
  // quantizers write full-range weights (ONNX Runtime's reduce_range is
  // opt-in).
  int64_t int8_weight_products = 0;
  std::vector<OptimizerUpdateCost> optimizer_costs;  // per optimizer (empty: not measured; schema 1.2)
  // Host memory handed out fresh by the OS (schema 1.3; 0: none or not
  // measured). On the CPU, glibc serves an allocation above its mmap threshold
  // (modelstat fixes it at 32 MiB, profiler/run_context.cc) with a new mapping
  // and unmaps it when freed, so every such tensor page-faults (the kernel
  // zeroes each page) on its first write, every time it is allocated: a cost
  // per byte on top of whatever writes it, measured as allocating and filling
  // a buffer above the threshold minus filling a reused one. CUDA's caching
  // allocator keeps its blocks: 0 there.
  int64_t fresh_allocation_threshold_bytes = 0;
  double fresh_allocation_seconds_per_byte = 0;
  // The machine's roofs (schema 2.0; empty in older files and datasheets):
  // peaks per dtype, ISA and thread count; bandwidth per memory level and
  // thread count, and the sweep they were found in.
  std::vector<ComputeRoof> compute_roofs;
  std::vector<MemoryLevel> memory_levels;
  std::vector<BandwidthPoint> bandwidth_sweep;
  std::vector<std::string> notes;

  // The best machine roof of a dtype for `threads` threads: among the roofs
  // of that dtype, those of the thread count nearest to `threads` (ties: the
  // smaller count), the fastest ISA; nullptr when none (older files). CUDA
  // roofs (threads 0) match any count.
  const ComputeRoof* machine_roof(const std::string& dtype, int threads) const;
  // The memory levels of the thread count nearest to `threads`, smallest first.
  std::vector<MemoryLevel> memory_levels_for(int threads) const;

  // The measured cost of an op class; nullptr when it was not measured.
  const OpCost* op_cost(const std::string& key) const;
  const OptimizerUpdateCost* optimizer_cost(const std::string& optimizer) const;

  // Peak FLOP/s for a dtype; 0 when that dtype was not measured.
  double peak_flops(const std::string& dtype) const;
  // Matmul FLOP/s expected for a product of about n x n x n, interpolated on the
  // measured curve (log-log, clamped to its ends); 0 when the dtype has no curve.
  double matmul_flops_at(const std::string& dtype, double n) const;
  // FLOP/s of a convolution of `kind` computing an M x N x K product, from
  // the conv samples of that kind: the geometric mean of the rates of the
  // (up to) four samples nearest in log2 (M, N, K), weighted by the inverse
  // square of their distance (a sample at the same point: its rate). 0 when
  // the kind has no sample.
  // `cold_share` blends each sample's cold and hot rates (its time: (1 - s)
  // x hot + s x cold; 1, the default: weights from memory).
  double conv_flops_at(const std::string& kind, double m, double n, double k, double cold_share = 1.0) const;
  // Seconds of one such product: 2 M N K at conv_flops_at's rate, but, for
  // a product smaller than every sample of its kind in M, N or K, no less
  // than a call's fixed part (conv_call_seconds) plus the rest of the time of
  // the product raised to the samples' smallest in proportion to the work
  // (M N K over the raised one's). Below the samples a call's fixed part
  // dominates: a squeeze-excite's 1x1 over 8 channels at one position (36
  // FLOPs) took 8 us, where the rate of the nearest sample (1 x 16 x 16)
  // gave 0.5 us; a 3x1 conv at one output position 11 us, 1 us at the rate
  // (the raised product's whole time, 48 us, was 4x over). 0 when the kind
  // has no sample.
  double conv_seconds_at(const std::string& kind, double m, double n, double k, double cold_share = 1.0) const;
  // The least time any sample of `kind` took (the cheapest call measured:
  // an upper bound on a call's fixed part). 0 when the kind has no sample.
  double conv_call_seconds(const std::string& kind) const;
  // The training forward and backward FLOP/s of a convolution of `kind`
  // computing an M x N x K product, from the training conv samples of that
  // kind by conv_flops_at's rule; false (both 0) when the kind has none.
  bool train_conv_rates_at(const std::string& kind, double m, double n, double k, double& forward,
                           double& backward) const;
  bool measured() const { return source == "measured"; }
};

// JSON (docs/ceilings.md). from_json throws Error(Input) naming what is wrong.
std::string ceilings_to_json(const DeviceCeilings& c);
DeviceCeilings ceilings_from_json(const std::string& text, const std::string& origin = {});

// The levels of a working-set sweep at one thread count (points ascending in
// working set). Plateaus: runs of consecutive points whose bandwidth stays
// within 15% of the run's median (a run of one point is a transition, but for
// the last run, the level the sweep ends in); two
// neighbouring plateaus within 15% are one. Each plateau's edge is where the
// curve crosses the geometric middle of it and the next plateau. Names come
// from `caches` (sysfs) when given: a plateau ending within 4x of a cache's
// capacity for these threads takes that cache's name (L<level>), the last
// plateau is DRAM when it starts beyond the largest cache; without caches, L1,
// L2, ... in order and DRAM last. Disagreements (a cache with no plateau, an
// edge more than 2x from the cache's size, two plateaus for one cache) go to
// `notes`.
std::vector<MemoryLevel> find_memory_levels(const std::vector<BandwidthPoint>& sweep,
                                            const std::vector<CacheSize>& caches, int threads,
                                            std::vector<std::string>& notes);

// Theoretical machine roofs of a CUDA device: per dtype, SMs x clock x
// FLOPs per cycle per SM of its compute capability (FP32 on the CUDA cores;
// TF32, FP16, BF16, INT8 dense on the tensor cores, no sparsity), from
// NVIDIA's architecture whitepapers (the table in roofs.cc). Empty for an
// architecture the table does not know; measured = false on every roof.
struct CudaArchRates {
  double fp32 = 0, tf32 = 0, fp16 = 0, bf16 = 0, int8 = 0;  // FLOPs (or int ops) per cycle per SM
};
CudaArchRates cuda_arch_rates(int major, int minor);
std::vector<ComputeRoof> cuda_machine_roofs(int major, int minor, int sm_count, double clock_hz);

// Where `modelstat device` saves and other commands look: $MODELSTAT_CEILINGS_DIR,
// else $XDG_CACHE_HOME/modelstat, else $HOME/.cache/modelstat; one file per
// device kind: ceilings-cpu.json, ceilings-cuda.json.
std::string default_ceilings_path(const std::string& device_kind);
void save_ceilings(const DeviceCeilings& c, const std::string& path);  // creates folders
// Reads a saved file; nullopt when it does not exist. Throws Error(Input) when it is malformed.
std::optional<DeviceCeilings> load_ceilings(const std::string& path);

// Labelled datasheet fallback for common accelerators ("h100-sxm", "h100-pcie", "h200",
// "a100-sxm", "l4", "t4"): vendor dense peaks, source "datasheet: <name>". Throws
// Error(Usage) listing the known names for anything else.
DeviceCeilings datasheet_ceilings(const std::string& name);
std::vector<std::string> datasheet_names();

}  // namespace modelstat

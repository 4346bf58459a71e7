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

// Measured cost of one node of an op class as modelstat's executor runs it, a
// line in the bytes the node moves (read + written, the analyzer's rule),
// fitted through a tiny and a large instance of the node (op_cost_probe.cc):
//   forward  = fixed_seconds + bytes * seconds_per_byte
//   backward = backward_fixed_seconds + bytes * backward_seconds_per_byte
// where backward is a training run of the node (forward with autograd
// recording, backward()) minus the inference run. Keys are ONNX op types, or
// "Conv/depthwise" (group == C_in == C_out), "Conv" and "Gemm", whose
// backward_ratio (backward / forward of the large instance) prices the
// backward of dense contractions.
struct OpCost {
  std::string op;
  std::string probe;                  // the instances measured, e.g. "1x64x112x112 float"
  int64_t small_bytes = 0, large_bytes = 0;
  double fixed_seconds = 0, seconds_per_byte = 0;
  double backward_fixed_seconds = 0, backward_seconds_per_byte = 0;
  double backward_ratio = 0;
  double forward_seconds(double bytes) const { return fixed_seconds + bytes * seconds_per_byte; }
  double backward_seconds(double bytes) const { return backward_fixed_seconds + bytes * backward_seconds_per_byte; }
};

// Measured cost of one optimizer update through modelstat's training step
// (op_cost_probe.cc): 16 weight tensors at two sizes, the update timed alone;
//   seconds = tensors x per_tensor_seconds + elements x seconds_per_element
struct OptimizerUpdateCost {
  std::string optimizer;             // "sgd", "momentum", "adam"
  std::string probe;
  double per_tensor_seconds = 0, seconds_per_element = 0;
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
  std::vector<std::string> notes;

  // The measured cost of an op class; nullptr when it was not measured.
  const OpCost* op_cost(const std::string& key) const;
  const OptimizerUpdateCost* optimizer_cost(const std::string& optimizer) const;

  // Peak FLOP/s for a dtype; 0 when that dtype was not measured.
  double peak_flops(const std::string& dtype) const;
  // Matmul FLOP/s expected for a product of about n x n x n, interpolated on the
  // measured curve (log-log, clamped to its ends); 0 when the dtype has no curve.
  double matmul_flops_at(const std::string& dtype, double n) const;
  bool measured() const { return source == "measured"; }
};

// JSON (docs/ceilings.md). from_json throws Error(Input) naming what is wrong.
std::string ceilings_to_json(const DeviceCeilings& c);
DeviceCeilings ceilings_from_json(const std::string& text, const std::string& origin = {});

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

// `modelstat fit`: will this model fit, and how fast will it run, before
// running it. A forecast of memory (inference or one training step) and
// latency from the static analysis and the device's ceilings, a verdict
// against budgets, and the largest batch predicted to fit them.
// Every rule is written down in docs/FIT.md; analyzer/fit/ computes,
// the writers (tools/writers/fit_*_writer.cc) only format. Plain data, no LibTorch.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "modelstat/analysis.hpp"
#include "modelstat/ceilings.hpp"
#include "modelstat/optimizer.hpp"
#include "modelstat/training_setup.hpp"

namespace modelstat {

extern const char* const kFitJsonSchemaVersion;

// `modelstat fit` exits with this code when a budget given is predicted to be
// exceeded (0 when every budget given is met; 1 and 2 keep their meaning).
constexpr int kFitBudgetExceededExitCode = 3;

struct FitOptions {
  bool train = false;
  Optimizer optimizer = Optimizer::Adam;
  std::optional<int64_t> memory_budget_bytes;
  std::optional<double> latency_budget_seconds;
  // Whose matmul curve prices the contractions ("fp32", "tf32", "fp16", "bf16").
  std::string compute_dtype = "fp32";
  // Training only (docs/FIT.md, "Precision, checkpointing, sharding").
  TrainPrecision precision = TrainPrecision::Fp32;
  Checkpointing checkpointing = Checkpointing::None;
  // -1: no ZeRO (mixed precision is torch.autocast's layout); 0-3: the
  // ZeRO stage, mixed precision as a 16-bit model with fp32 master weights.
  int zero_stage = -1;
  int64_t shards = 1;  // data-parallel processes the ZeRO stage divides states over
  // Largest batch the search tries (the answer is ">= this" when it still fits).
  int64_t max_batch_limit = int64_t(1) << 20;
};

// Predicted peak memory, bytes. Inference: weights + activation peak +
// workspace. Training: weights + optimizer state + the weight gradients live
// at the peak (allocated during backward, set to none after the update) +
// activation peak (live forward activations and those saved for backward,
// then the saved ones left and the activation gradients during backward) +
// workspace (or the optimizer's temporaries when the peak is in the update).
struct MemoryForecast {
  int64_t weights_bytes = 0;           // all constant data (model size)
  int64_t trainable_params = 0;        // float weight elements (training)
  int64_t gradient_bytes = 0;          // one gradient per trainable weight (training)
  int64_t gradient_bytes_at_peak = 0;  // the part of them live at the peak
  int64_t optimizer_state_bytes = 0;   // sgd 0, momentum 1x, adam 2x the trainable bytes
  int64_t saved_activation_bytes = 0;  // held for backward at the end of forward (training)
  int64_t activation_peak_bytes = 0;   // activation-side bytes live at the peak (workspace apart)
  std::string activation_sharing;      // which activations share a buffer (include/modelstat/lifetimes.hpp), for the output
  int64_t workspace_bytes = 0;         // transient scratch of the node at the peak
  int64_t total_bytes = 0;             // the predicted peak: the sum of the above that apply
  std::string peak_node;               // node during which the peak occurs
  std::string peak_phase;              // "forward", "backward" or "optimizer"
  int64_t largest_workspace_bytes = 0; // the largest scratch of any node (may not be at the peak)
  std::string largest_workspace_node;
  bool lower_bound = false;            // some activation sizes were unknown (counted as 0)
  // Training setup (docs/FIT.md, "Precision, checkpointing, sharding").
  std::string precision = "fp32";      // "fp32", "bf16", "fp16"
  std::string precision_layout;        // which bytes are 16-bit
  std::string checkpointing = "none";  // "none", "selective", "full"
  int recomputed_regions = 0;          // attention cores (selective) or blocks (full) recomputed in backward
  int zero_stage = -1;                 // -1: no ZeRO
  int64_t shards = 1;
  // 16-bit copies of the trainable weights that autocast casts (its cache),
  // all of them, and the part live at the peak (inside activation_peak_bytes).
  int64_t low_precision_weight_bytes = 0;
  int64_t low_precision_weight_bytes_at_peak = 0;
  // fp32 master weights the optimizer holds (a 16-bit model's; under
  // autocast the weights are the master weights), per device. Included in
  // total_bytes; optimizer_state_bytes is the moments alone.
  int64_t master_weight_bytes = 0;
  // ZeRO-3: the largest weight's 16-bit parameters and gradients gathered
  // while its layer runs (DeepSpeed's largest_layer_memory), per device.
  int64_t gathered_parameter_bytes = 0;
  std::vector<std::string> divided_by_shards;  // components divided by `shards`
  // "formula-based (not measured)" for what no measurement here checked
  // (ZeRO, fp16, checkpointing); empty otherwise.
  std::string basis;
  // DeepSpeed's own estimate of the model states per GPU (no offload) for
  // ZeRO-2 / ZeRO-3 with mixed precision and Adam, beside the breakdown.
  std::optional<int64_t> deepspeed_model_states_bytes;
  std::string deepspeed_estimator;
};

// The largest term of a node's forward time (docs/FIT.md, "Latency").
enum class ForecastBound {
  Compute,   // FLOPs at the rate its class is priced at
  Memory,    // bytes at the copy bandwidth
  Kernel,    // a measured op class's cost per byte (or Gemm/thin's stream of B)
  Scratch,   // the CPU scratch pass before the kernel
  Overhead,  // the fixed cost of the call
  Fresh,     // buffers mapped afresh
};
const char* bound_name(ForecastBound bound);  // "compute", "memory", "kernel", "scratch", "overhead", "fresh"

// Why a node costs what it costs (docs/FIT.md, "Latency").
struct NodeForecast {
  int index = 0;
  std::string name, op_type;
  bool contraction = false;          // priced on the matmul curve
  double equivalent_gemm_n = 0;      // n_eff = 3/(1/M+1/N+1/K) of one product (docs/FIT.md); 0 for others
  double compute_flops_per_second = 0;  // the rate its FLOPs are priced at
  double compute_seconds = 0;        // FLOPs / that rate
  double memory_seconds = 0;         // bytes / bandwidth
  double scratch_seconds = 0;        // CPU scratch pass (oneDNN reorders, im2col): its bytes / bandwidth
  double overhead_seconds = 0;       // fixed cost of the call (0 for preloaded constants)
  std::string op_cost;               // the measured op class priced with (DeviceCeilings::op_costs), "fused",
                                     // "run-invariant"; "" if none
  double kernel_seconds = 0;         // bytes x that class's measured cost per byte (0 if none)
  // Inference on the CPU: the head of the fused group (analyzer/fusion/fusion_plan.hpp)
  // the node runs in, itself for the head; -1 when it runs alone.
  int fused_head = -1;
  // Buffers it allocates above the device's fresh-allocation threshold (its
  // outputs, its scratch), which the host maps afresh each time, priced at the
  // measured cost per byte of that (DeviceCeilings::fresh_allocation_*).
  int64_t fresh_bytes = 0;
  double fresh_seconds = 0;
  double forward_seconds = 0;        // max(compute, memory, kernel) + scratch + overhead + fresh
  double backward_seconds = 0;       // training only (its fresh gradients included)
  int64_t backward_fresh_bytes = 0;  // training: gradients it allocates above that threshold
  int64_t workspace_bytes = 0;       // forward scratch
  ForecastBound bound = ForecastBound::Compute;  // the largest term
};

struct LatencyForecast {
  double forward_seconds = 0;    // inference latency when not training
  double backward_seconds = 0;   // training only
  double optimizer_seconds = 0;  // training only (its fresh temporaries included)
  int64_t optimizer_fresh_bytes = 0;  // training: temporaries the update allocates above the fresh threshold
  double total_seconds = 0;      // forward (+ backward + optimizer when training)
};

// The largest batch predicted to meet each budget given: re-analysis of the
// model per batch, doubling then binary search (docs/FIT.md says why search
// rather than an affine solve).
struct BatchSearch {
  bool searched = false;
  std::string note;                 // why not searched, or what limited it
  int analyses = 0;                 // batches analysed
  int64_t limit = 0;                // FitOptions::max_batch_limit it ran with
  // 0: not even batch 1; otherwise the largest batch. When it equals
  // `limit` the true answer is that or more.
  std::optional<int64_t> largest_fitting_memory;
  std::optional<int64_t> largest_meeting_latency;
};

// A decoder's forecast at a context length (fit --context): the prefill and
// decode steps priced as forecast_fit prices any graph, on the bindings
// decoder_bindings() gives (docs/FIT.md, "Decoders").
struct DecoderForecast {
  int64_t context = 0, prompt = 0, batch = 1;
  std::string bindings;             // DecoderBindings::describe()
  double prefill_seconds = 0;       // the prompt, all sequences of the batch
  double decode_seconds = 0;        // one decode step: one token per sequence
  double tokens_per_second = 0;     // decode: batch / decode_seconds
  int64_t weights_bytes = 0;
  int64_t kv_cache_bytes = 0;       // present cache at the context, whole batch
  int64_t kv_bytes_per_token = 0;   // one more token of context, whole batch
  int64_t prefill_memory_bytes = 0; // predicted peaks of each step (weights, activations, cache, workspace)
  int64_t decode_memory_bytes = 0;
  std::optional<double> token_budget_seconds;  // --latency-budget D/token
  std::optional<bool> meets_token_budget;
};

struct FitReport {
  std::string model_path;
  int64_t batch = 1;
  bool train = false;
  Optimizer optimizer = Optimizer::Adam;
  std::optional<int64_t> memory_budget_bytes;
  std::optional<double> latency_budget_seconds;
  DeviceCeilings ceilings;           // what the latency was priced with
  std::string compute_dtype;
  double compute_peak_flops_per_second = 0;
  MemoryForecast memory;
  LatencyForecast latency;
  std::vector<NodeForecast> nodes;   // execution order
  std::optional<bool> fits_memory;   // set when a memory budget was given
  std::optional<bool> meets_latency; // set when a latency budget was given
  BatchSearch batch_search;
  std::vector<std::string> notices;

  // True unless a budget given is predicted to be exceeded.
  std::optional<DecoderForecast> decoder;  // fit --context

  bool within_budgets() const {
    return fits_memory.value_or(true) && meets_latency.value_or(true) &&
           (!decoder || decoder->meets_token_budget.value_or(true));
  }
};

// The forecast for one analysed model (its `model` IR must be set, as
// analyze_file leaves it). Throws Error(Usage) when the ceilings have no
// bandwidth or no matmul figure for the compute dtype.
FitReport forecast_fit(const AnalysisResult& analysis, const DeviceCeilings& ceilings, const FitOptions& options);

// forecast_fit at `batch`, then (when a budget is given) the batch search.
// analyze_at_batch(b) must analyse the model with its leading dim bound to b.
using AnalyzeAtBatch = std::function<AnalysisResult(int64_t batch)>;
FitReport fit_model(const AnalyzeAtBatch& analyze_at_batch, int64_t batch, const DeviceCeilings& ceilings,
                    const FitOptions& options);

// The CPU workspace rule (docs/FIT.md, "Workspace"): scratch bytes ATen's CPU
// kernels allocate beyond the output while a node of `graph` runs with
// `threads` intra-op threads: convolution (oneDNN reorders or THNN im2col
// columns) and MaxPool (int64 indices). 0 for other nodes.
int64_t cpu_workspace_bytes(const Graph& graph, const Node& node, int threads);


}  // namespace modelstat

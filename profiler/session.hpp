// The measurement protocol as passes over one session (METHODOLOGY.md):
// the session is what every pass runs against, built once per `profile`:
// the model read and bound once, the device, the executor with its weights
// placed, the input sets, and what the first inference learnt. Each pass
// fills its part of the ProfileResult; `profile` (protocol.cc) composes them
// in the order the protocol sets, and `report` and the device probes reuse
// them.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "modelstat/analysis.hpp"
#include "modelstat/profile.hpp"
#include "profiler/device.hpp"
#include "profiler/executor.hpp"
#include "profiler/memory_meter.hpp"

namespace modelstat::profiler {

struct ProfileSession {
  ProfileOptions options;
  LoadOptions load;
  int threads = 0;
  std::unique_ptr<Device> device;
  std::unique_ptr<ModelFile> file;  // read once; the batch sweep rebinds it
  // Bound once; shared with result.analysis.model (what `report` forecasts from).
  std::shared_ptr<const Model> model;
  std::unique_ptr<MemoryMeter> meter;  // with --memory or --train-step
  int64_t weights_bytes = 0;           // measured by the meter (0 without one)
  std::unique_ptr<Executor> executor;
  // Several random sets (fixed seeds, never zeros), rotated between runs: on
  // the host, and where the run reads them.
  std::vector<std::vector<at::Tensor>> host_inputs, inputs;
  std::vector<at::Tensor> first_outputs;  // of the first (cold) inference
  Upcasts upcasts;                        // what the first inference learnt
};

// Cold path: model load (read, parse, bind, infer shapes), the analysis, the
// host-memory check, weights to the device, the input sets and the first
// inference (result.cold, result.analysis, notices).
ProfileSession open_session(const std::string& path, const LoadOptions& load, const ProfileOptions& o,
                            ProfileResult& result);

// What a run with `input_sets` sets holds in host memory past what the host
// has free (host_memory.hpp): the refusal text, empty when it fits;
// `weights_alone` says whether the constants by themselves exceed it (then
// no batch makes such a run fit).
std::string host_memory_refusal(const AnalysisResult& analysis, const ProfileOptions& o, const Device& device,
                                int input_sets, bool train_step, bool* weights_alone = nullptr);

// The leading dim of the first graph input that has one known: the batch (0 when none).
int64_t leading_batch(const Model& model);

// Host tensors copied to `device` (non-blocking: the copy is ordered on the device's stream).
std::vector<at::Tensor> to_device(const std::vector<at::Tensor>& host, const at::Device& device);

// Warm-up by count and time (not recorded).
void warm_up_pass(ProfileSession& s);
// Peak allocator bytes of one inference (result.memory).
void memory_pass(ProfileSession& s, ProfileResult& result);
// The clean whole-model latency, no per-layer instrumentation (result.whole):
// the pass alone, without --layers.
void whole_model_pass(ProfileSession& s, ProfileResult& result);
// With --layers: the clean pass and the instrumented one (markers between
// nodes, one wait per iteration: result.layers, result.layer_sum) as two
// series of runs alternated, each under its own stopping rule, until both
// stop (sample_interleaved_until_stable). Two passes one after the other
// had read the layer sum 2-29% off the whole-model median at 2 threads on a
// VM whose speed shifts between minutes (bench/RESULTS.md).
void whole_and_layer_passes(ProfileSession& s, ProfileResult& result);
// The per-layer measurement itself, over any way of running exec's graph
// (the per-layer pass; generate's phases, interleaved with the clean step):
// sample() is one marked run, a marker before node 0 and after every node
// and one wait, whose node intervals are kept per node and whose sum is the
// sample; add_layers() then appends one LayerTiming per top-level node.
class LayerSampler {
 public:
  LayerSampler(Device& device, const Executor& exec);
  // `run(hook)` runs the graph once with the hook. Returns the sum of the node intervals (seconds).
  double sample(const std::function<void(const Executor::NodeHook&)>& run);
  // One row per top-level node: its samples' statistics (`stop_reason`: the pass's), upcast and fusion.
  void add_layers(const Upcasts& upcasts, const std::string& stop_reason, std::vector<LayerTiming>& out) const;

 private:
  const Executor& exec_;
  size_t nodes_ = 0;
  std::unique_ptr<MarkerTimer> markers_;
  std::vector<std::vector<double>> per_node_;  // seconds, a sample per marked run
};
// Pass 3, for a model with If / Loop / Scan: the nodes inside subgraphs
// (result.subgraph_layers, result.subgraph_layer_sum).
void subgraph_pass(ProfileSession& s, ProfileResult& result);
// H2D / D2H copies, timed apart from compute (result.h2d, result.d2h).
void copy_pass(ProfileSession& s, ProfileResult& result);
// Batch sweep and max-batch search: the session's model rebound per batch,
// never read again (result.batch_sweep, result.max_batch).
void batch_pass(ProfileSession& s, ProfileResult& result);
// A batch sweep or max-batch search needs a batch dim that can vary:
// refused (Error(Usage)) before anything is measured, not after (batch_pass.cc).
void check_batch_can_vary(const ModelFile& file, const Model& model, const LoadOptions& load);
// N independent requests in flight (result.concurrency).
void concurrency_pass(ProfileSession& s, ProfileResult& result);
// Forward + backward + optimizer update (result.train_step); last, as it updates the weights.
void train_step_pass(ProfileSession& s, ProfileResult& result);
// The run's conditions (result.context).
void describe_pass(ProfileSession& s, ProfileResult& result);

}  // namespace modelstat::profiler

// The joined report: the static cost and the measured time of every node side
// by side, placed on the device's roofline. join_profile() computes every
// figure (analyzer/measurements/join.cc); the writers (tools/writers/joined_*.cc)
// only format a JoinedReport. Plain data, no LibTorch.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "modelstat/ceilings.hpp"
#include "modelstat/fit.hpp"
#include "modelstat/grouping.hpp"
#include "modelstat/profile.hpp"

namespace modelstat {

extern const char* const kJoinedJsonSchemaVersion;

// Which ceiling bounds a node on the roofline at its arithmetic intensity.
enum class Bound {
  Compute,  // intensity >= ridge point: peak FLOP/s is the limit
  Memory,   // intensity < ridge point: bandwidth x intensity is the limit
  None,     // no FLOPs and no bytes, unknown cost, or no time measured
};
const char* bound_name(Bound b);

// One layer's measured time joined with its node's static cost: the one rule
// behind the profile reports' per-layer figures and join_profile's nodes.
// An empty optional is "not known", never 0: the counts of an op without a
// cost rule or of a layer with no analysis node; the time, share and rates of
// a layer without samples (or, for rates, without a positive median).
struct LayerCost {
  // analysis.nodes[layer.index]; for a subgraph node (depth > 0), the row of
  // analysis.subgraph_nodes of the same name (its path) and index; nullptr when none.
  const NodeReport* node = nullptr;
  std::optional<int64_t> macs, flops, bytes;  // from the analysis (bytes = read + written)
  std::optional<double> median_seconds;       // the layer's median
  std::optional<double> share_of_time;        // median / sum of the layers' medians, 0..1
  std::optional<double> achieved_flops_per_second;  // flops / median
  std::optional<double> achieved_bytes_per_second;  // bytes / median
};
// Sum of the layers' medians (layers with samples and a finite median; the
// top-level ones, which hold their subgraph nodes' time): the denominator of
// every share of time.
double layer_median_sum(const ProfileResult& profile);
// median_sum: layer_median_sum(profile), computed once by the caller.
LayerCost join_layer(const ProfileResult& profile, const LayerTiming& layer, double median_sum);

// --group-by on a profile: apply_grouping(profile.analysis, rule) (the cost
// sums), then profile.group_by and profile.groups: the top-level layers summed
// per group, each layer's figures join_layer's, shares of layer_median_sum.
// The joined report's groups are its profile's (JoinedReport::profile.groups).
void apply_grouping(ProfileResult& profile, const GroupRule& rule);

// A node of the joined report: its LayerCost and its place on the roofline.
// Empty optionals as in LayerCost: unknown is never 0. A subgraph node's time
// and cost are per model run (the sum over its calls; a Loop body's cost times
// its trips), so its rates are those of its calls together.
struct JoinedNode {
  int index = 0;  // a subgraph node: its top-level node's
  std::string name, op_type;
  int depth = 0;                            // LayerTiming::depth: 0 top-level, 1.. inside subgraphs
  double calls_per_run = 1;                 // LayerTiming::calls_per_run
  CostStatus status = CostStatus::Exact;    // UnknownOp too when the analysis has no such node
  std::string shapes;                       // NodeCost::shapes: "observed" when counted on a run's shapes
  std::optional<int64_t> macs, flops, bytes;
  std::optional<double> median_seconds;             // per-layer pass median
  std::optional<double> share_of_time;              // of the per-layer sum of medians, 0..1
  std::optional<double> share_of_flops;             // of the total FLOPs, 0..1 (total > 0)
  std::optional<double> achieved_flops_per_second;  // flops / median
  std::optional<double> achieved_bytes_per_second;  // bytes / median
  std::optional<double> arithmetic_intensity;       // flops / bytes (bytes > 0)
  Bound bound = Bound::None;
  // The memory level the node is placed against: the smallest whose capacity
  // holds its working set (its bytes read + written) for the profile's
  // threads (JoinedReport::memory_roofs); empty without levels (a 1.x
  // ceilings file: the one bandwidth of the copy).
  std::string memory_level;
  double memory_bandwidth = 0;  // bytes/s of that level (or the copy's)
  // Roofline limit at this intensity: min(peak FLOP/s, bandwidth x intensity);
  // empty for Bound::None.
  std::optional<double> attainable_flops_per_second;
  // Against the bounding ceiling: achieved FLOP/s / peak (compute-bound) or
  // achieved bytes/s / its level's bandwidth (memory-bound); empty for
  // Bound::None. Above 1 means a roof is wrong (writers say so).
  std::optional<double> efficiency;
  // LayerTiming::upcast_to_fp32: it ran in fp32, not in its fp16/bf16 dtype.
  bool upcast_to_fp32 = false;
  // LayerTiming::fused_into: the node whose kernel did this node's work.
  std::string fused_into;
  // LayerTiming::fused_members: a CPU Conv group's head; its macs, flops and
  // bytes are then the group's (its own plus its members'), so the group is
  // what sits on the roofline.
  std::vector<std::string> fused_members;
  std::string kernel;  // LayerTiming::kernel
  // fit's forecast of this node (a fused group's head: the group's kernel,
  // its members 0), priced as `modelstat fit` prices it with these ceilings
  // (docs/FIT.md); empty when no forecast was made. Beside median_seconds it
  // shows where the forecast is wrong.
  std::optional<double> forecast_seconds;
};

// report --scaling: a node's median at 1 thread and at the run's N threads
// (two profiles of the same model in one process, 1 thread first), and why a
// node that does not scale does not (join_scaling's rules, docs/report-json.md).
struct NodeScaling {
  int index = 0;
  std::string name, op_type;
  double one_thread_seconds = 0;  // median, 1 thread
  double seconds = 0;             // median, N threads (the report's own run)
  double speedup = 0;             // one_thread_seconds / seconds
  double efficiency = 0;          // speedup / N
  // Time given away against a perfect split: seconds - one_thread_seconds / N
  // (the rows are listed by it, largest first).
  double lost_seconds = 0;
  std::string why;  // "" when it scales (efficiency >= kScalesEfficiency)
};

struct ScalingView {
  int threads = 0;                    // N
  double one_thread_median = 0;       // whole model, clean pass
  double median = 0;                  // whole model at N threads
  double speedup = 0, efficiency = 0; // of the whole model
  double layer_sum_one_thread = 0, layer_sum = 0;
  std::vector<NodeScaling> nodes;     // by lost_seconds, largest first
};

// A node at or above this parallel efficiency scales; below it, `why` says
// which of the reasons below applies, in this order:
//  - its 1-thread median is under kTooSmallSeconds: "too small to split"
//    (a fork-join of the thread team costs a few µs, about what it saves);
//  - it is memory-bound at N threads and runs at >= kAtRoofEfficiency of its
//    level's bandwidth: "at the memory roof (LEVEL)": more threads add no bandwidth;
//  - its speedup is under kSerialSpeedup: "serial: ran on one thread" (an op
//    whose kernel does not split, or too little work per thread to split);
//  - otherwise "partly parallel".
constexpr double kScalesEfficiency = 0.7;
constexpr double kTooSmallSeconds = 20e-6;
constexpr double kAtRoofEfficiency = 0.6;
constexpr double kSerialSpeedup = 1.15;

struct JoinedOpType {
  std::string op_type;
  int64_t count = 0, flops = 0, bytes = 0;
  int64_t nodes_not_exact = 0;              // nodes whose cost is not exact (sums hold the known counts only)
  double seconds = 0;                       // sum of its nodes' medians
  double share_of_time = 0, share_of_flops = 0;
  double achieved_flops_per_second = 0;     // flops / seconds
};

struct JoinedReport {
  ProfileResult profile;                    // everything measured, with its analysis
  DeviceCeilings ceilings;
  std::string compute_dtype;                // the compute roof's dtype ("fp32", ...)
  // The compute roof: the machine's peak for compute_dtype at the profile's
  // threads (ComputeRoof) when the ceilings have one, else (1.x files, or a
  // CPU with no micro-kernel) the matmul peak, with a notice.
  double peak_flops_per_second = 0;
  std::string peak_source;                  // "avx512f vfmadd231ps zmm, 1 thread" / "matmul (achievable)"
  bool peak_is_machine_roof = false;
  // What a library reaches: the best point of the matmul curve of compute_dtype
  // (0 when not measured); drawn as the "achievable" roof.
  double achievable_flops_per_second = 0;
  double memory_bandwidth = 0;              // bytes/s of the last level (DRAM), or the copy's
  double ridge_intensity = 0;               // FLOPs/byte where the compute roof meets memory_bandwidth
  // The memory levels of the profile's thread count, smallest first (empty:
  // a 1.x ceilings file; memory_bandwidth is then the only memory roof).
  std::vector<MemoryLevel> memory_roofs;
  std::vector<JoinedNode> nodes;            // execution order, one per analysed node
  // One per ProfileResult::subgraph_layers row, in its order (grouped by
  // index); inside their parents' times, so in neither by_op_type nor hotspots.
  std::vector<JoinedNode> subgraph_nodes;
  std::vector<JoinedOpType> by_op_type;     // by time, descending
  std::vector<int> hotspots;                // indices into nodes, by time, descending
  double layer_sum_seconds = 0;             // sum of per-node medians
  double whole_achieved_flops_per_second = 0;  // total FLOPs / whole-model median
  double whole_efficiency = 0;              // that over the peak (the machine roof)
  double whole_achievable_efficiency = 0;   // that over the achievable (matmul) roof; 0 without one
  // fit's forecast of the whole model (the sum of its nodes' forecasts) and
  // its error against the whole-model median (forecast / median - 1); empty
  // when no forecast was made (forecast_note says why).
  std::optional<double> forecast_seconds;
  std::optional<double> forecast_error;
  std::string forecast_note;
  std::optional<ScalingView> scaling;  // report --scaling
  std::vector<std::string> notices;
};

// Joins a profile (which must hold its per-layer pass) with ceilings of the
// same device kind. Throws Error(Usage) when the kinds differ or there are no
// per-layer timings.
JoinedReport join_profile(ProfileResult profile, const DeviceCeilings& ceilings);

// Sets each top-level node's forecast_seconds from fit's forecast of the same
// analysis (matched by index and name: a row of another model, or a group of
// --group-by, gets none) and the whole model's forecast and its error against
// the whole-model median. A node fit priced at 0 as a fused group's member
// keeps 0: the group's time is on its head, as the measured time is.
void join_forecast(JoinedReport& report, const FitReport& forecast);

// Sets report.scaling from the same model's profile at 1 thread (the report's
// own run is the N-thread side): nodes matched by index and name, each
// top-level node timed in both runs and not fused into another.
void join_scaling(JoinedReport& report, const ProfileResult& one_thread);


}  // namespace modelstat

// The joined report: the static cost and the measured time of every node side
// by side, placed on the device's roofline. join_profile() computes every
// figure (analyzer/measurements/join.cc); the writers (tools/writers/joined_*.cc)
// only format a JoinedReport. Plain data, no LibTorch.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "modelstat/ceilings.hpp"
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

struct JoinedNode {
  int index = 0;
  std::string name, op_type;
  CostStatus status = CostStatus::Exact;
  int64_t macs = 0, flops = 0, bytes = 0;   // from the analysis (bytes = read + written)
  double median_seconds = 0;                // per-layer pass median
  double share_of_time = 0;                 // of the per-layer sum of medians, 0..1
  double share_of_flops = 0;                // of the total FLOPs, 0..1
  double achieved_flops_per_second = 0;     // flops / median
  double achieved_bytes_per_second = 0;     // bytes / median
  double arithmetic_intensity = 0;          // flops / bytes (0 when no bytes)
  Bound bound = Bound::None;
  // Roofline limit at this intensity: min(peak FLOP/s, bandwidth x intensity).
  double attainable_flops_per_second = 0;
  // Against the bounding ceiling: achieved FLOP/s / peak (compute-bound) or
  // achieved bytes/s / bandwidth (memory-bound); 0 for Bound::None.
  double efficiency = 0;
};

struct JoinedOpType {
  std::string op_type;
  int64_t count = 0, flops = 0, bytes = 0;
  int64_t nodes_not_exact = 0;              // nodes whose cost is not exact (counted as 0 FLOPs here)
  double seconds = 0;                       // sum of its nodes' medians
  double share_of_time = 0, share_of_flops = 0;
  double achieved_flops_per_second = 0;     // flops / seconds
};

struct JoinedReport {
  ProfileResult profile;                    // everything measured, with its analysis
  DeviceCeilings ceilings;
  std::string compute_dtype;                // whose matmul peak is the compute roof ("fp32", ...)
  double peak_flops_per_second = 0;
  double memory_bandwidth = 0;              // bytes/s
  double ridge_intensity = 0;               // FLOPs/byte where the roofs meet
  std::vector<JoinedNode> nodes;            // execution order, one per analysed node
  std::vector<JoinedOpType> by_op_type;     // by time, descending
  std::vector<int> hotspots;                // indices into nodes, by time, descending
  double layer_sum_seconds = 0;             // sum of per-node medians
  double whole_achieved_flops_per_second = 0;  // total FLOPs / whole-model median
  double whole_efficiency = 0;              // that over the peak
  std::vector<std::string> notices;
};

// Joins a profile (which must hold its per-layer pass) with ceilings of the
// same device kind. Throws Error(Usage) when the kinds differ or there are no
// per-layer timings.
JoinedReport join_profile(ProfileResult profile, const DeviceCeilings& ceilings);


}  // namespace modelstat

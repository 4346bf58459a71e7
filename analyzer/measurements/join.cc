// join_profile: static cost x measured time, per node, on the device's roofline.
// Conventions (docs/report-json.md):
//   achieved FLOP/s = node FLOPs / node median;  achieved B/s = node bytes / node median
//   intensity I = FLOPs / bytes;  ridge = peak FLOP/s / bandwidth
//   attainable = min(peak, bandwidth x I);  bound = compute when I >= ridge, else memory
//   efficiency = achieved FLOP/s / peak (compute-bound) or achieved B/s / bandwidth (memory-bound)
// Shares of time are of the sum of per-node medians (so they add up to 1); the
// whole-model figure uses the clean whole-model median.
#include <algorithm>
#include <map>

#include "modelstat/error.hpp"
#include "modelstat/joined.hpp"

namespace modelstat {

const char* const kJoinedJsonSchemaVersion = "2.0";

const char* bound_name(Bound b) {
  switch (b) {
    case Bound::Compute: return "compute";
    case Bound::Memory: return "memory";
    case Bound::None: break;
  }
  return "none";
}

JoinedReport join_profile(ProfileResult profile, const DeviceCeilings& ceilings) {
  JoinedReport r;
  r.ceilings = ceilings;
  const std::string kind = profile.context.device_kind;
  if (!kind.empty() && kind != ceilings.device_kind)
    throw_usage("the ceilings are for a " + ceilings.device_kind + " device but the profile ran on " + kind);
  if (profile.layers.empty())
    throw_usage("the profile has no per-layer timings (it was run with --no-layers): nothing to join");

  r.compute_dtype = profile.context.dtype.empty() ? "fp32" : profile.context.dtype;
  r.peak_flops_per_second = ceilings.peak_flops(r.compute_dtype);
  if (r.peak_flops_per_second <= 0) {
    r.notices.push_back("the ceilings have no " + r.compute_dtype + " matmul figure; the fp32 one is the roof");
    r.peak_flops_per_second = ceilings.peak_flops("fp32");
  }
  r.memory_bandwidth = ceilings.memory_bandwidth;
  r.ridge_intensity = r.memory_bandwidth > 0 ? r.peak_flops_per_second / r.memory_bandwidth : 0;
  if (!ceilings.measured())
    r.notices.push_back("ceilings from " + ceilings.source + " (not measured on this device): efficiencies are "
                        "against vendor peaks");
  if (!ceilings.device_name.empty() && !profile.context.device_name.empty() &&
      ceilings.device_name != profile.context.device_name)
    r.notices.push_back("the ceilings were measured on '" + ceilings.device_name + "', the profile ran on '" +
                        profile.context.device_name + "'");
  if (kind == "cpu" && ceilings.threads > 0 && ceilings.threads != profile.context.threads)
    r.notices.push_back("the ceilings were measured with " + std::to_string(ceilings.threads) +
                        " threads, the profile ran with " + std::to_string(profile.context.threads));

  const auto& an = profile.analysis;
  for (const auto& l : profile.layers) r.layer_sum_seconds += l.time.median;
  const double total_flops = double(an.totals.flops);

  std::map<std::string, size_t> type_index;
  for (const auto& l : profile.layers) {
    JoinedNode n;
    n.index = l.index;
    n.name = l.name;
    n.op_type = l.op_type;
    n.median_seconds = l.time.median;
    if (l.index >= 0 && size_t(l.index) < an.nodes.size()) {
      const NodeReport& nr = an.nodes[size_t(l.index)];
      n.status = nr.cost.status;
      n.macs = nr.cost.macs;
      n.flops = nr.cost.flops;
      n.bytes = nr.cost.bytes();
    } else {
      n.status = CostStatus::UnknownOp;
    }
    n.share_of_time = r.layer_sum_seconds > 0 ? n.median_seconds / r.layer_sum_seconds : 0;
    n.share_of_flops = total_flops > 0 ? double(n.flops) / total_flops : 0;
    if (n.median_seconds > 0) {
      n.achieved_flops_per_second = double(n.flops) / n.median_seconds;
      n.achieved_bytes_per_second = double(n.bytes) / n.median_seconds;
    }
    n.arithmetic_intensity = n.bytes > 0 ? double(n.flops) / double(n.bytes) : 0;
    const bool costed = n.status == CostStatus::Exact && (n.flops > 0 || n.bytes > 0);
    if (costed && n.median_seconds > 0 && r.peak_flops_per_second > 0 && r.memory_bandwidth > 0) {
      n.attainable_flops_per_second =
          std::min(r.peak_flops_per_second, r.memory_bandwidth * n.arithmetic_intensity);
      if (n.bytes > 0 && n.arithmetic_intensity < r.ridge_intensity) {
        n.bound = Bound::Memory;
        n.efficiency = n.achieved_bytes_per_second / r.memory_bandwidth;
      } else {
        n.bound = Bound::Compute;
        n.efficiency = n.achieved_flops_per_second / r.peak_flops_per_second;
      }
    }
    auto [it, fresh] = type_index.try_emplace(n.op_type, r.by_op_type.size());
    if (fresh) r.by_op_type.push_back(JoinedOpType{n.op_type});
    JoinedOpType& t = r.by_op_type[it->second];
    t.count += 1;
    if (n.status != CostStatus::Exact) t.nodes_not_exact += 1;
    t.flops += n.flops;
    t.bytes += n.bytes;
    t.seconds += n.median_seconds;
    r.nodes.push_back(std::move(n));
  }
  for (auto& t : r.by_op_type) {
    t.share_of_time = r.layer_sum_seconds > 0 ? t.seconds / r.layer_sum_seconds : 0;
    t.share_of_flops = total_flops > 0 ? double(t.flops) / total_flops : 0;
    t.achieved_flops_per_second = t.seconds > 0 ? double(t.flops) / t.seconds : 0;
  }
  std::stable_sort(r.by_op_type.begin(), r.by_op_type.end(),
                   [](const JoinedOpType& a, const JoinedOpType& b) { return a.seconds > b.seconds; });
  for (size_t i = 0; i < r.nodes.size(); ++i) r.hotspots.push_back(int(i));
  std::stable_sort(r.hotspots.begin(), r.hotspots.end(), [&](int a, int b) {
    return r.nodes[size_t(a)].median_seconds > r.nodes[size_t(b)].median_seconds;
  });
  if (profile.whole.median > 0) {
    r.whole_achieved_flops_per_second = total_flops / profile.whole.median;
    if (r.peak_flops_per_second > 0)
      r.whole_efficiency = r.whole_achieved_flops_per_second / r.peak_flops_per_second;
  }
  if (an.totals.nodes_exact < an.totals.nodes)
    r.notices.push_back(std::to_string(an.totals.nodes - an.totals.nodes_exact) +
                        " node(s) have no exact cost: their FLOPs count as 0 and they have no bound");
  r.profile = std::move(profile);
  return r;
}

}  // namespace modelstat

// join_profile: static cost x measured time, per node, on the device's roofline.
// Conventions (docs/report-json.md):
//   achieved FLOP/s = node FLOPs / node median;  achieved B/s = node bytes / node median
//   peak = the machine's roof for the dtype and threads (FMA micro-kernel; CUDA:
//     theoretical), else the best matmul; bandwidth = that of the smallest memory
//     level whose capacity holds the node's bytes (read + written), else the copy's
//   intensity I = FLOPs / bytes;  ridge = peak FLOP/s / bandwidth
//   attainable = min(peak, bandwidth x I);  bound = compute when I >= ridge, else memory
//   efficiency = achieved FLOP/s / peak (compute-bound) or achieved B/s / bandwidth (memory-bound)
// Shares of time are of the sum of per-node medians (so they add up to 1); the
// whole-model figure uses the clean whole-model median.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "modelstat/error.hpp"
#include "modelstat/joined.hpp"

namespace modelstat {

// 2.3: group_by, groups; 2.4: machine and memory-level roofs; 2.5: nodes[].fused_members and kernel;
// 2.6: nodes[].shapes ("observed": counted on the shapes the run observed), fit's forecast, --scaling
const char* const kJoinedJsonSchemaVersion = "2.6";

const char* bound_name(Bound b) {
  switch (b) {
    case Bound::Compute: return "compute";
    case Bound::Memory: return "memory";
    case Bound::None: break;
  }
  return "none";
}

namespace {

bool positive(double v) { return std::isfinite(v) && v > 0; }

// count / seconds, empty unless both are known and the time is positive.
std::optional<double> per_second(const std::optional<int64_t>& count, const std::optional<double>& seconds) {
  if (!count || !seconds || *count < 0 || !positive(*seconds)) return std::nullopt;
  return double(*count) / *seconds;
}

// The analysis row of a layer: a top-level node's by index; a subgraph
// node's by name (its path) among the rows under the same top-level node.
const NodeReport* analysis_row(const AnalysisResult& analysis, const LayerTiming& layer) {
  if (layer.depth == 0)
    return layer.index >= 0 && size_t(layer.index) < analysis.nodes.size()
               ? &analysis.nodes[size_t(layer.index)]
               : nullptr;
  for (const NodeReport& row : analysis.subgraph_nodes)
    if (row.index == layer.index && row.name == layer.name) return &row;
  return nullptr;
}

}  // namespace

namespace {

// The names of the layers a fused group's head lists as its members: their
// costs are in the head's (join_layer), so sums over layers skip them.
std::set<std::string> group_members(const ProfileResult& profile) {
  std::set<std::string> members;
  for (const LayerTiming& layer : profile.layers) members.insert(layer.fused_members.begin(), layer.fused_members.end());
  return members;
}

}  // namespace

double layer_median_sum(const ProfileResult& profile) {
  double sum = 0;
  for (const LayerTiming& layer : profile.layers)
    if (layer.time.count > 0 && std::isfinite(layer.time.median)) sum += layer.time.median;
  return sum;
}

LayerCost join_layer(const ProfileResult& profile, const LayerTiming& layer, double median_sum) {
  LayerCost c;
  c.node = analysis_row(profile.analysis, layer);
  if (c.node && c.node->cost.status != CostStatus::UnknownOp) {
    c.macs = c.node->cost.macs;
    c.flops = c.node->cost.flops;
    c.bytes = c.node->cost.bytes();
  }
  // A fused group's head: its one time is the work of all its members, so
  // their costs join it (the members' own rows keep theirs, without a rate).
  // Bytes are the members' sum, as the analysis counts them node by node: the
  // intermediate tensors the kernel keeps in registers are counted too, an
  // upper bound on the group's traffic.
  if (c.node && !layer.fused_members.empty()) {
    for (const std::string& member : layer.fused_members) {
      const auto row = std::find_if(profile.analysis.nodes.begin(), profile.analysis.nodes.end(),
                                    [&](const NodeReport& n) { return n.name == member; });
      if (row == profile.analysis.nodes.end() || row->cost.status == CostStatus::UnknownOp) continue;
      if (c.macs) *c.macs += row->cost.macs;
      if (c.flops) *c.flops += row->cost.flops;
      if (c.bytes) *c.bytes += row->cost.bytes();
    }
  }
  if (layer.time.count <= 0 || !std::isfinite(layer.time.median)) return c;
  c.median_seconds = layer.time.median;
  if (positive(median_sum)) c.share_of_time = layer.time.median / median_sum;
  if (!layer.fused_into.empty()) return c;  // it did not run: no rate from the markers' time
  c.achieved_flops_per_second = per_second(c.flops, c.median_seconds);
  c.achieved_bytes_per_second = per_second(c.bytes, c.median_seconds);
  return c;
}

void apply_grouping(ProfileResult& profile, const GroupRule& rule) {
  apply_grouping(profile.analysis, rule);
  profile.group_by = rule.spec();
  profile.groups.clear();
  const double median_sum = layer_median_sum(profile);
  std::map<std::string, size_t> position;  // key -> index in profile.groups
  const std::set<std::string> members = group_members(profile);
  for (const LayerTiming& layer : profile.layers) {
    LayerGroup& g = group_of(profile.groups, position, rule.key(layer.name, layer.op_type), layer.index);
    LayerCost c = join_layer(profile, layer, median_sum);
    if (members.count(layer.name)) c.macs = c.flops = c.bytes = int64_t(0);  // in its group's head
    g.layers += 1;
    if (!c.node || c.node->cost.status != CostStatus::Exact) g.layers_not_exact += 1;
    g.macs += c.macs.value_or(0);
    g.flops += c.flops.value_or(0);
    g.bytes += c.bytes.value_or(0);
    g.seconds += c.median_seconds.value_or(0);
  }
  const double total_flops = double(profile.analysis.totals.flops);
  for (LayerGroup& g : profile.groups) {
    if (positive(median_sum)) g.share_of_time = g.seconds / median_sum;
    if (g.layers_not_exact == g.layers) continue;  // nothing known to divide
    if (total_flops > 0) g.share_of_flops = double(g.flops) / total_flops;
    g.achieved_flops_per_second = per_second(g.flops, g.seconds);
    g.achieved_bytes_per_second = per_second(g.bytes, g.seconds);
  }
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
  const int threads = kind == "cpu" ? profile.context.threads : 0;
  if (!ceilings.machine_roof(r.compute_dtype, threads) && ceilings.peak_flops(r.compute_dtype) <= 0 &&
      r.compute_dtype != "fp32") {
    // compute_dtype names the roof's dtype: efficiencies are then "of the
    // fp32 peak", not of a peak nobody measured.
    r.notices.push_back("the ceilings have no " + r.compute_dtype + " roof; the fp32 one is the roof");
    r.compute_dtype = "fp32";
  }
  r.achievable_flops_per_second = ceilings.peak_flops(r.compute_dtype);
  if (const ComputeRoof* roof = ceilings.machine_roof(r.compute_dtype, threads)) {
    r.peak_flops_per_second = roof->flops_per_second;
    r.peak_is_machine_roof = true;
    r.peak_source = roof->kernel;
    if (roof->threads > 0) {
      r.peak_source += ", " + std::to_string(roof->threads) + " thread" + (roof->threads == 1 ? "" : "s");
      if (threads > 0 && roof->threads != threads)
        r.notices.push_back("the machine roof was measured at " + std::to_string(roof->threads) +
                            " threads, the profile ran with " + std::to_string(threads));
    }
    if (!roof->measured)
      r.notices.push_back("the compute roof is theoretical (the device's SMs x clock x rate per SM), not measured: "
                          "unverified on this device");
  } else {
    r.peak_flops_per_second = r.achievable_flops_per_second;
    r.peak_source = "matmul (achievable)";
    if (r.peak_flops_per_second > 0 && ceilings.measured())
      r.notices.push_back("the ceilings have no machine roof (a file of schema 1.x, or no FMA micro-kernel for this "
                          "CPU): efficiencies are against the best matmul, which is below the machine's peak; "
                          "re-run 'modelstat device'");
  }
  r.memory_roofs = ceilings.memory_levels_for(threads);
  r.memory_bandwidth = r.memory_roofs.empty() ? ceilings.memory_bandwidth : r.memory_roofs.back().bytes_per_second;
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
  r.layer_sum_seconds = layer_median_sum(profile);
  const double total_flops = double(an.totals.flops);

  auto join_node = [&](const LayerTiming& l) {
    const LayerCost c = join_layer(profile, l, r.layer_sum_seconds);
    JoinedNode n;
    n.index = l.index;
    n.name = l.name;
    n.op_type = l.op_type;
    n.depth = l.depth;
    n.calls_per_run = l.calls_per_run;
    n.status = c.node ? c.node->cost.status : CostStatus::UnknownOp;
    if (c.node) n.shapes = c.node->cost.shapes;
    n.macs = c.macs;
    n.flops = c.flops;
    n.bytes = c.bytes;
    n.median_seconds = c.median_seconds;
    n.share_of_time = c.share_of_time;
    n.achieved_flops_per_second = c.achieved_flops_per_second;
    n.achieved_bytes_per_second = c.achieved_bytes_per_second;
    n.upcast_to_fp32 = l.upcast_to_fp32;
    n.fused_into = l.fused_into;
    n.fused_members = l.fused_members;
    n.kernel = l.kernel;
    if (n.flops && total_flops > 0) n.share_of_flops = double(*n.flops) / total_flops;
    if (n.flops && n.bytes && *n.bytes > 0) n.arithmetic_intensity = double(*n.flops) / double(*n.bytes);
    const bool costed = n.status == CostStatus::Exact && (n.flops.value_or(0) > 0 || n.bytes.value_or(0) > 0);
    // The level the node's working set fits in: its bandwidth is the memory roof.
    n.memory_bandwidth = r.memory_bandwidth;
    if (n.bytes)
      for (const MemoryLevel& level : r.memory_roofs)
        if (level.capacity_bytes == 0 || *n.bytes <= level.capacity_bytes) {
          n.memory_level = level.level;
          n.memory_bandwidth = level.bytes_per_second;
          break;
        }
    if (costed && n.achieved_flops_per_second && r.peak_flops_per_second > 0 && n.memory_bandwidth > 0) {
      const double intensity = n.arithmetic_intensity.value_or(0);
      n.attainable_flops_per_second = std::min(r.peak_flops_per_second, n.memory_bandwidth * intensity);
      if (*n.bytes > 0 && intensity < r.peak_flops_per_second / n.memory_bandwidth) {
        n.bound = Bound::Memory;
        n.efficiency = *n.achieved_bytes_per_second / n.memory_bandwidth;
      } else {
        n.bound = Bound::Compute;
        n.efficiency = *n.achieved_flops_per_second / r.peak_flops_per_second;
      }
    }
    return n;
  };

  std::map<std::string, size_t> type_index;
  const std::set<std::string> members = group_members(profile);
  for (const auto& l : profile.layers) {
    JoinedNode n = join_node(l);
    auto [it, fresh] = type_index.try_emplace(n.op_type, r.by_op_type.size());
    if (fresh) r.by_op_type.push_back(JoinedOpType{n.op_type});
    JoinedOpType& t = r.by_op_type[it->second];
    t.count += 1;
    if (n.status != CostStatus::Exact) t.nodes_not_exact += 1;
    // A group member's cost is in its head's row (and op type): counted once.
    if (!members.count(l.name)) {
      t.flops += n.flops.value_or(0);
      t.bytes += n.bytes.value_or(0);
    }
    t.seconds += n.median_seconds.value_or(0);
    r.nodes.push_back(std::move(n));
  }
  // Inside their parents' times: in neither the op-type sums nor the hotspots.
  int64_t uncounted = 0;
  for (const auto& l : profile.subgraph_layers) {
    r.subgraph_nodes.push_back(join_node(l));
    if (!analysis_row(an, l)) ++uncounted;
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
    return r.nodes[size_t(a)].median_seconds.value_or(0) > r.nodes[size_t(b)].median_seconds.value_or(0);
  });
  if (profile.whole.median > 0) {
    r.whole_achieved_flops_per_second = total_flops / profile.whole.median;
    if (r.peak_flops_per_second > 0)
      r.whole_efficiency = r.whole_achieved_flops_per_second / r.peak_flops_per_second;
    if (r.achievable_flops_per_second > 0)
      r.whole_achievable_efficiency = r.whole_achieved_flops_per_second / r.achievable_flops_per_second;
  }
  if (an.totals.nodes_exact < an.totals.nodes)
    r.notices.push_back(std::to_string(an.totals.nodes - an.totals.nodes_exact) +
                        " node(s) have no exact cost: their FLOPs count as 0 and they have no bound");
  if (uncounted > 0)
    r.notices.push_back(
        std::to_string(uncounted) +
        " subgraph node(s) ran that the analysis did not count (in an If branch it did not choose: "
        "--branch NODE=then|else chooses): they have no cost");
  r.profile = std::move(profile);
  return r;
}

void join_forecast(JoinedReport& r, const FitReport& forecast) {
  std::map<int, const NodeForecast*> by_index;
  for (const NodeForecast& f : forecast.nodes) by_index[f.index] = &f;
  for (JoinedNode& n : r.nodes) {
    const auto it = by_index.find(n.index);
    if (n.depth == 0 && it != by_index.end() && it->second->name == n.name) n.forecast_seconds = it->second->forward_seconds;
  }
  r.forecast_seconds = forecast.latency.forward_seconds;
  const TimingSummary& whole = r.profile.whole;
  if (whole.count > 0 && whole.median > 0) r.forecast_error = forecast.latency.forward_seconds / whole.median - 1.0;
}

namespace {

std::string why_not_scaling(const JoinedNode& n, double one_thread, double speedup) {
  if (one_thread < kTooSmallSeconds) return "too small to split";
  if (n.bound == Bound::Memory && n.efficiency && *n.efficiency >= kAtRoofEfficiency)
    return "at the memory roof" + (n.memory_level.empty() ? std::string() : " (" + n.memory_level + ")");
  if (speedup < kSerialSpeedup) return "serial: ran on one thread";
  return "partly parallel";
}

}  // namespace

void join_scaling(JoinedReport& r, const ProfileResult& one_thread) {
  ScalingView v;
  v.threads = r.profile.context.threads;
  if (v.threads < 2) throw_usage("the scaling view compares 1 thread with N > 1: this run used 1 thread (--threads N)");
  v.one_thread_median = one_thread.whole.median;
  v.median = r.profile.whole.median;
  if (v.median > 0) v.speedup = v.one_thread_median / v.median;
  v.efficiency = v.speedup / v.threads;
  std::map<int, const LayerTiming*> by_index;
  for (const LayerTiming& l : one_thread.layers) {
    by_index[l.index] = &l;
    v.layer_sum_one_thread += l.time.count > 0 ? l.time.median : 0.0;
  }
  v.layer_sum = r.layer_sum_seconds;
  for (const JoinedNode& n : r.nodes) {
    const auto it = by_index.find(n.index);
    if (n.depth != 0 || !n.fused_into.empty() || !n.median_seconds || *n.median_seconds <= 0 ||
        it == by_index.end() || it->second->name != n.name || it->second->time.count == 0)
      continue;
    NodeScaling s;
    s.index = n.index;
    s.name = n.name;
    s.op_type = n.op_type;
    s.one_thread_seconds = it->second->time.median;
    s.seconds = *n.median_seconds;
    s.speedup = s.one_thread_seconds / s.seconds;
    s.efficiency = s.speedup / v.threads;
    s.lost_seconds = s.seconds - s.one_thread_seconds / v.threads;
    if (s.efficiency < kScalesEfficiency) s.why = why_not_scaling(n, s.one_thread_seconds, s.speedup);
    v.nodes.push_back(std::move(s));
  }
  std::stable_sort(v.nodes.begin(), v.nodes.end(),
                   [](const NodeScaling& a, const NodeScaling& b) { return a.lost_seconds > b.lost_seconds; });
  r.scaling = std::move(v);
}

}  // namespace modelstat

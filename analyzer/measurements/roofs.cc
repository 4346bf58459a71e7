// The machine's roofs that need no device to compute: the memory levels of a
// working-set sweep (plateaus) and a CUDA device's theoretical peaks per
// dtype. Measuring is the profiler's job (profiler/machine/); this file
// only reads numbers it is given.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "modelstat/ceilings.hpp"
#include "modelstat/statistics.hpp"

namespace modelstat {

namespace {

// Plateau tolerance: a point belongs to the current run while its bandwidth
// is within 15% of the run's median (log distance log 1.15).
const double kPlateauTolerance = std::log(1.15);

std::string human_bytes(int64_t bytes) {
  char buf[32];
  if (bytes >= (int64_t(1) << 20))
    std::snprintf(buf, sizeof buf, "%.3g MiB", double(bytes) / double(int64_t(1) << 20));
  else
    std::snprintf(buf, sizeof buf, "%.3g KiB", double(bytes) / 1024.0);
  return buf;
}

struct Run {
  size_t first = 0, last = 0;  // indices into the sweep, inclusive
  double log_median = 0;
};

}  // namespace

std::vector<MemoryLevel> find_memory_levels(const std::vector<BandwidthPoint>& sweep,
                                            const std::vector<CacheSize>& caches, int threads,
                                            std::vector<std::string>& notes) {
  std::vector<MemoryLevel> levels;
  std::vector<double> logs;
  for (const auto& p : sweep) logs.push_back(std::log(std::max(p.bytes_per_second, 1.0)));
  if (logs.empty()) return levels;

  // 1. Runs of points within the tolerance of their run's median.
  std::vector<Run> runs;
  Run current{0, 0, logs[0]};
  for (size_t i = 1; i < logs.size(); ++i) {
    if (std::abs(logs[i] - current.log_median) <= kPlateauTolerance) {
      current.last = i;
      current.log_median = stats::median_of(std::vector<double>(logs.begin() + long(current.first), logs.begin() + long(i) + 1));
    } else {
      runs.push_back(current);
      current = Run{i, i, logs[i]};
    }
  }
  runs.push_back(current);
  // 2. Plateaus: runs of two points or more (a single point is a transition;
  //    but the sweep's last run is the level it ends in, whatever its length),
  //    neighbours within the tolerance merged.
  std::vector<Run> plateaus;
  for (const Run& r : runs) {
    if (r.last == r.first && &r != &runs.back()) continue;
    if (!plateaus.empty() && std::abs(plateaus.back().log_median - r.log_median) <= kPlateauTolerance) {
      Run& p = plateaus.back();
      p.last = r.last;
      p.log_median = stats::median_of(std::vector<double>(logs.begin() + long(p.first), logs.begin() + long(p.last) + 1));
      continue;
    }
    plateaus.push_back(r);
  }
  if (plateaus.empty()) {
    notes.push_back("bandwidth sweep (" + std::to_string(threads) + " threads): no plateau found");
    return levels;
  }

  // Capacity of each cache for `threads` threads pinned to distinct CPUs:
  // one instance per `cpus_sharing` of them.
  std::vector<std::pair<std::string, int64_t>> capacity;  // name, bytes; ascending level
  std::vector<CacheSize> sorted = caches;
  std::sort(sorted.begin(), sorted.end(), [](const CacheSize& a, const CacheSize& b) { return a.level < b.level; });
  for (const CacheSize& c : sorted) {
    if (c.bytes <= 0) continue;
    const int sharing = std::max(1, c.cpus_sharing);
    const int64_t instances = std::max<int64_t>(1, (int64_t(std::max(threads, 1)) + sharing - 1) / sharing);
    capacity.push_back({"L" + std::to_string(c.level), c.bytes * instances});
  }

  // 3. Edges and names.
  std::vector<bool> named(capacity.size(), false);
  for (size_t k = 0; k < plateaus.size(); ++k) {
    const Run& p = plateaus[k];
    MemoryLevel level;
    level.threads = threads;
    level.plateau_from_bytes = sweep[p.first].working_set_bytes;
    level.plateau_to_bytes = sweep[p.last].working_set_bytes;
    level.read_bytes_per_second = std::exp(p.log_median);
    std::vector<double> updates;
    for (size_t i = p.first; i <= p.last; ++i)
      if (sweep[i].read_write_bytes_per_second > 0) updates.push_back(sweep[i].read_write_bytes_per_second);
    if (!updates.empty()) level.read_write_bytes_per_second = stats::median_of(updates);
    level.bytes_per_second = std::max(level.read_bytes_per_second, level.read_write_bytes_per_second);
    const bool last = k + 1 == plateaus.size();
    if (!last) {
      // Where the curve crosses the geometric middle of this plateau and the
      // next, interpolated on log-log axes between the two points around it.
      const double middle = 0.5 * (p.log_median + plateaus[k + 1].log_median);
      double edge = double(sweep[p.last].working_set_bytes);
      for (size_t i = p.last + 1; i <= plateaus[k + 1].first; ++i) {
        if (logs[i] > middle) continue;
        const double x0 = std::log(double(sweep[i - 1].working_set_bytes)), x1 = std::log(double(sweep[i].working_set_bytes));
        const double t = (logs[i - 1] - middle) / std::max(logs[i - 1] - logs[i], 1e-12);
        edge = std::exp(x0 + std::clamp(t, 0.0, 1.0) * (x1 - x0));
        break;
      }
      level.measured_edge_bytes = int64_t(edge);
    }
    if (capacity.empty()) {
      level.level = last && plateaus.size() > 1 ? "DRAM" : "L" + std::to_string(k + 1);
      level.capacity_bytes = level.measured_edge_bytes;
    } else if (last && level.plateau_from_bytes > capacity.back().second) {
      level.level = "DRAM";
    } else {
      // The cache nearest (in log size) to where this plateau ends: its
      // measured edge, or for the last plateau its largest working set.
      const double end = double(last ? level.plateau_to_bytes : level.measured_edge_bytes);
      size_t best = 0;
      for (size_t c = 1; c < capacity.size(); ++c)
        if (std::abs(std::log(end / double(capacity[c].second))) < std::abs(std::log(end / double(capacity[best].second))))
          best = c;
      const double ratio = end / double(capacity[best].second);
      if (ratio > 4 || ratio < 0.25 || named[best]) {
        level.level = "level " + std::to_string(k + 1);
        level.capacity_bytes = level.measured_edge_bytes;
        notes.push_back("bandwidth sweep (" + std::to_string(threads) + " threads): a plateau of " +
                        human_bytes(level.plateau_from_bytes) + " to " + human_bytes(level.plateau_to_bytes) +
                        " matches no cache the OS reports" + (named[best] ? " (" + capacity[best].first + " already has one)" : ""));
      } else {
        named[best] = true;
        level.level = capacity[best].first;
        level.capacity_bytes = capacity[best].second;
        if (!last && (ratio > 2 || ratio < 0.5))
          notes.push_back("bandwidth sweep (" + std::to_string(threads) + " threads): the " + level.level +
                          " plateau ends at " + human_bytes(level.measured_edge_bytes) + ", the OS reports " +
                          human_bytes(capacity[best].second));
      }
    }
    levels.push_back(level);
  }
  for (size_t c = 0; c < capacity.size(); ++c)
    if (!named[c])
      notes.push_back("bandwidth sweep (" + std::to_string(threads) + " threads): no plateau for " + capacity[c].first +
                      " (" + human_bytes(capacity[c].second) + "): its bandwidth is not told apart from its neighbours'");
  return levels;
}

// FLOPs per cycle per SM, dense (no structured sparsity), from NVIDIA's
// architecture whitepapers (Volta, Turing, Ampere GA100 and GA102, Ada, Hopper):
// FP32 = 2 x FP32 CUDA cores per SM; tensor cores = 2 x their FMA per cycle per SM:
//   sm_70 (V100): 8 TCs x 64 FP16 FMA = 1024 FP16 FLOPs; no TF32/BF16
//   sm_75 (T4):   as sm_70 for FP16; INT8 2x that
//   sm_80 (A100): 4 TCs x 256 FP16/BF16 FMA = 2048; TF32 half, INT8 double
//   sm_86, sm_87, sm_89 (A10, A40, L4, RTX 30/40): 4 TCs x 128 FP16/BF16 FMA = 1024
//     (GeForce boards run FP16 with FP32 accumulate at half this rate)
//   sm_90 (H100): twice sm_80 per SM: 4096 FP16/BF16, 2048 TF32, 8192 INT8
// Check (boost clock x SMs): A100 108 x 1.41 GHz x 2048 = 312 TFLOP/s; H100 PCIe
// 114 x 1.62 GHz x 4096 = 756; L4 58 x 2.04 GHz x 1024 = 121; V100 80 x 1.53 x 1024 = 125.
CudaArchRates cuda_arch_rates(int major, int minor) {
  const int sm = major * 10 + minor;
  CudaArchRates r;
  switch (sm) {
    case 60: r.fp32 = 128; break;
    case 61: case 62: r.fp32 = 256; break;
    case 70: case 72: r.fp32 = 128; r.fp16 = 1024; break;
    case 75: r.fp32 = 128; r.fp16 = 1024; r.int8 = 2048; break;
    case 80: r.fp32 = 128; r.tf32 = 1024; r.fp16 = r.bf16 = 2048; r.int8 = 4096; break;
    case 86: case 87: case 89: r.fp32 = 256; r.tf32 = 512; r.fp16 = r.bf16 = 1024; r.int8 = 2048; break;
    case 90: r.fp32 = 256; r.tf32 = 2048; r.fp16 = r.bf16 = 4096; r.int8 = 8192; break;
    default: break;  // unknown (older or newer): nothing claimed
  }
  return r;
}

std::vector<ComputeRoof> cuda_machine_roofs(int major, int minor, int sm_count, double clock_hz) {
  std::vector<ComputeRoof> roofs;
  if (sm_count <= 0 || !(clock_hz > 0)) return roofs;
  const CudaArchRates r = cuda_arch_rates(major, minor);
  const std::pair<const char*, double> rates[] = {
      {"fp32", r.fp32}, {"tf32", r.tf32}, {"fp16", r.fp16}, {"bf16", r.bf16}, {"int8", r.int8}};
  for (const auto& [dtype, per_cycle] : rates) {
    if (per_cycle <= 0) continue;
    ComputeRoof roof;
    roof.dtype = dtype;
    char kernel[160];
    std::snprintf(kernel, sizeof kernel, "theoretical: %d SMs x %.3g GHz x %g %s/cycle/SM (sm_%d%d %s)", sm_count,
                  clock_hz / 1e9, per_cycle, std::string(dtype) == "int8" ? "ops" : "FLOPs", major, minor,
                  std::string(dtype) == "fp32" ? "CUDA cores" : "tensor cores, dense");
    roof.kernel = kernel;
    roof.threads = 0;
    roof.flops_per_second = double(sm_count) * clock_hz * per_cycle;
    roof.measured = false;
    roofs.push_back(roof);
  }
  return roofs;
}

}  // namespace modelstat

// `modelstat device`'s machine roofs (modelstat/ceilings.hpp: ComputeRoof,
// MemoryLevel, BandwidthPoint): FMA micro-kernel peaks per ISA and dtype, and
// a read-bandwidth sweep over working sets whose plateaus are the levels of
// the memory hierarchy, each at every requested thread count. CUDA: the
// theoretical roofs of the current device (SMs x clock x rate per SM).
#pragma once

#include <vector>

#include "modelstat/ceilings.hpp"

namespace modelstat::profiler::machine {

struct MachineProbeOptions {
  std::vector<int> thread_counts;  // e.g. {1, all cores}; each measured apart
  bool quick = false;              // fewer samples and sweep points (report's quick ceilings)
};

struct MachineRoofs {
  std::vector<ComputeRoof> compute_roofs;
  std::vector<BandwidthPoint> sweep;
  std::vector<MemoryLevel> levels;
  std::vector<std::string> notes;
};

MachineRoofs measure_cpu_machine_roofs(const MachineProbeOptions& options);

// The data and unified caches of CPU 0 from /sys/devices/system/cpu/cpu0/cache
// (empty when unreadable).
std::vector<CacheSize> sysfs_data_caches();

// Theoretical roofs of CUDA device `device` (cuda_machine_roofs) from the
// runtime's properties; empty with a note when the device or its
// architecture is unknown.
std::vector<ComputeRoof> cuda_theoretical_roofs(int device, std::vector<std::string>& notes);

}  // namespace modelstat::profiler::machine

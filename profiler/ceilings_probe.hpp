// Measures a device's ceilings (modelstat/ceilings.hpp): memory bandwidth from
// a large device-to-device copy, matmul throughput per dtype over a range of
// sizes, and the fixed per-op cost. Timed with the device's own timers.
#pragma once

#include <string>
#include <vector>

#include "modelstat/ceilings.hpp"

namespace modelstat::profiler {

struct CeilingsProbeOptions {
  std::string device = "cpu";      // "cpu" or "cuda"
  int threads = 0;                 // CPU intra-op threads; 0 = all cores
  bool quick = false;              // fewer sizes and runs (a few seconds), for `report` without saved ceilings
  std::vector<std::string> dtypes; // empty: every dtype the device supports (CPU: fp32; CUDA: fp32, tf32, fp16, bf16)
  bool op_costs = true;            // per-op-class costs (op_cost_probe.hpp), which only `fit` uses
};

DeviceCeilings measure_ceilings(const CeilingsProbeOptions& options);

}  // namespace modelstat::profiler

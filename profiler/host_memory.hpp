// Host memory a profile run will hold, estimated before anything is
// allocated, against what the machine has free. With Linux's overcommit a
// large allocation can succeed and the process be killed later, when its
// pages are touched; refusing up front is the only way to report it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "modelstat/analysis.hpp"

namespace modelstat::profiler {

// Bytes this process can still allocate without swapping: MemAvailable of
// /proc/meminfo, or less when the process's cgroup (v2 memory.max, v1
// memory.limit_in_bytes) leaves less. `source` says which. nullopt when
// neither can be read (not Linux): no refusal then.
struct AvailableMemory {
  int64_t bytes = 0;
  std::string source;
};
std::optional<AvailableMemory> available_host_memory();

// What a run holds in host memory at once, from the analysis of the bound
// model (sizes in the model's dtypes; every product saturates at INT64_MAX,
// never overflows).
struct HostMemoryEstimate {
  int64_t weights = 0;      // every constant, copied into tensors (CPU runs)
  int64_t activations = 0;  // the analyzer's peak of live activations (graph inputs included)
  int64_t inputs = 0;       // the further input sets the profiler keeps (input_sets - 1 on the CPU)
  int64_t outputs = 0;      // the first run's outputs, kept while the next runs
  int64_t training = 0;     // --train-step: gradients, optimizer state, activations saved for backward
  int64_t total() const;
};

struct RunShape {
  bool on_cpu = true;       // else CUDA: weights and activations live on the GPU
  int input_sets = 1;
  int optimizer_states = -1;  // -1: no training step; else states per parameter (sgd 0, momentum 1, adam 2)
};
HostMemoryEstimate estimate_host_memory(const AnalysisResult& analysis, const RunShape& run);

// The figures of the refusal: "21.87 GiB" from 1 GiB, "12.3 MiB" from 1 MiB, else "4.0 KiB".
std::string memory_text(int64_t bytes);

// The refusal, or empty when the estimate fits (or nothing is known of what
// is free): "needs about 180.63 GiB (weights ..., activations ..., inputs
// ...), 21.87 GiB available (MemAvailable in /proc/meminfo)".
std::string exceeds_host_memory(const HostMemoryEstimate& estimate);

}  // namespace modelstat::profiler

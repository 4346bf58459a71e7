// Measured memory: the live and peak bytes of LibTorch's allocator on the
// device the graph runs on, read from the allocator itself rather than
// estimated from shapes.
//
//   CPU   a counting allocator wrapped around c10's default CPU allocator and
//         installed with c10::SetCPUAllocator (memory_meter.cc). It counts the
//         bytes ATen asks for (tensor storages); memory that libraries manage
//         themselves (oneDNN scratchpads, OpenMP stacks) is not seen.
//   CUDA  the caching allocator's own statistics, allocated bytes current and
//         peak (cuda/torch_cuda_memory.cc): bytes of live blocks, as rounded up
//         by the allocator (512 B granularity); the cache it keeps reserved on
//         top of that is not counted.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <string>

namespace modelstat::profiler {

class MemoryMeter {
 public:
  virtual ~MemoryMeter() = default;
  // Bytes of the blocks the allocator has handed out and not yet had back.
  virtual int64_t live_bytes() = 0;
  // Highest live_bytes() since the last reset_peak() (or since the meter was made).
  virtual int64_t peak_bytes() = 0;
  // Peak := live now.
  virtual void reset_peak() = 0;
  // How the bytes are counted, one line for the report.
  virtual std::string method() const = 0;
};

// The meter for `device` (CPU or CUDA). Throws Error(Runtime) when the device
// has none in this build (CUDA without a CUDA LibTorch).
std::unique_ptr<MemoryMeter> make_memory_meter(const at::Device& device);

// The CPU meter. The counting allocator is process-wide: the first meter
// installs it and it stays installed for the rest of the process (blocks it
// handed out must keep its deleter valid), so every CPU meter reads the same
// counters, and reset_peak() on one resets them all. Blocks allocated before
// it was installed keep their own deleter and are never counted.
std::unique_ptr<MemoryMeter> make_cpu_memory_meter();

#ifdef MODELSTAT_TORCH_CUDA
std::unique_ptr<MemoryMeter> make_torch_cuda_memory_meter(int device_index);  // cuda/torch_cuda_memory.cc
#endif

}  // namespace modelstat::profiler

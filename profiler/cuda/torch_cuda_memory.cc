// The CUDA memory meter of profiler/memory_meter.hpp: the caching allocator's
// own statistics for one device. "allocated bytes" are the bytes of the blocks
// handed out to tensors (sizes as the allocator rounds them, 512 B
// granularity); the cache it keeps reserved on top ("reserved bytes") is left
// out, as it is memory the allocator holds, not memory the model uses. The
// statistics are updated on the host when a block is handed out or returned,
// so reading them needs no synchronisation. Built only with a CUDA LibTorch
// (MODELSTAT_TORCH_CUDA).
#include <c10/cuda/CUDACachingAllocator.h>

#include "profiler/memory_meter.hpp"

namespace modelstat::profiler {

namespace {

namespace allocator = c10::cuda::CUDACachingAllocator;

// Index 0 of every StatArray is the aggregate over the small and large pools
// (StatType::AGGREGATE in every LibTorch version, whichever header defines it).
constexpr size_t kAggregate = 0;

class TorchCudaMemoryMeter final : public MemoryMeter {
 public:
  explicit TorchCudaMemoryMeter(int device) : device_(device) {}
  int64_t live_bytes() override {
    return allocator::getDeviceStats(device_).allocated_bytes[kAggregate].current;
  }
  int64_t peak_bytes() override {
    return allocator::getDeviceStats(device_).allocated_bytes[kAggregate].peak;
  }
  void reset_peak() override { allocator::resetPeakStats(device_); }
  std::string method() const override {
    return "CUDA: caching allocator statistics, allocated bytes of device " + std::to_string(device_) +
           " (block sizes rounded by the allocator; its reserved cache not counted)";
  }

 private:
  int device_;
};

}  // namespace

std::unique_ptr<MemoryMeter> make_torch_cuda_memory_meter(int device_index) {
  return std::make_unique<TorchCudaMemoryMeter>(device_index);
}

}  // namespace modelstat::profiler

// Frames in flight on a device (--in-flight N): each in-flight slot has its
// own execution context, entered by whichever stage worker runs that slot's
// frame. CUDA: a LibTorch pool stream per slot, so the frames' kernels
// overlap, and a frame's stages follow each other in its stream's order (the
// dependency between stages; a host stage that reads a GPU output waits for
// it by copying it to the host on that stream). CPU: nothing to enter (a
// worker thread per stage is the parallelism).
#pragma once

#include <memory>
#include <string>

#include "profiler/device.hpp"

namespace modelstat::profiler {

class SlotStreams {
 public:
  virtual ~SlotStreams() = default;
  // Makes slot `slot`'s context current on the calling thread while the scope lives.
  virtual std::unique_ptr<Device::WorkerScope> enter(size_t slot) = 0;
  virtual std::string mechanism() const = 0;
};

// "cpu" or "cuda" (the latter only in a build with a CUDA LibTorch:
// profiler/cuda/pipeline_streams_cuda.cc).
std::unique_ptr<SlotStreams> make_slot_streams(const std::string& kind, size_t slots);

#ifdef MODELSTAT_TORCH_CUDA
std::unique_ptr<SlotStreams> make_cuda_slot_streams(size_t slots);
#endif

}  // namespace modelstat::profiler

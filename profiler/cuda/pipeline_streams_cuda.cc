// The CUDA side of profiler/pipeline_streams.hpp: one LibTorch pool stream
// per in-flight slot (c10::cuda::getStreamFromPool), made current by a
// CUDAStreamGuard while a stage worker runs that slot's frame. Built only with
// a CUDA LibTorch; compiled against Debian's CPU LibTorch as a check.
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <vector>

#include "profiler/pipeline_streams.hpp"

namespace modelstat::profiler {

namespace {

class CudaSlotStreams final : public SlotStreams {
 public:
  explicit CudaSlotStreams(size_t slots) {
    for (size_t s = 0; s < slots; ++s) streams_.push_back(c10::cuda::getStreamFromPool());
  }
  struct Scope final : Device::WorkerScope {
    explicit Scope(c10::cuda::CUDAStream stream) : guard(stream) {}
    c10::cuda::CUDAStreamGuard guard;
  };
  std::unique_ptr<Device::WorkerScope> enter(size_t slot) override {
    return std::make_unique<Scope>(streams_.at(slot));
  }
  std::string mechanism() const override {
    return "a CUDA stream per frame in flight (LibTorch pool streams), a worker thread per stage enqueueing "
           "on the frame's stream; stages of one frame ordered by that stream, per-stage times from CUDA events "
           "on it";
  }

 private:
  std::vector<c10::cuda::CUDAStream> streams_;
};

}  // namespace

std::unique_ptr<SlotStreams> make_cuda_slot_streams(size_t slots) { return std::make_unique<CudaSlotStreams>(slots); }

}  // namespace modelstat::profiler

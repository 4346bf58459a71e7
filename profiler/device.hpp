// Where the graph runs and how it is timed: one interface, a CPU back-end
// (steady clock; ATen's CPU ops are synchronous) and a CUDA back-end (events
// recorded on the stream LibTorch executes on, one wait per iteration), the
// latter in its own file (profiler/cuda/torch_cuda_device.cc) built only with
// a CUDA LibTorch.
#pragma once

#include <ATen/ATen.h>

#include <exception>
#include <memory>
#include <string>

#include "modelstat/profile.hpp"
#include "profiler/timer.hpp"

namespace modelstat::profiler {

class Device {
 public:
  virtual ~Device() = default;
  virtual at::Device torch_device() const = 0;
  // Waits for all work queued on the execution stream.
  virtual void synchronize() = 0;
  virtual std::unique_ptr<IntervalTimer> interval_timer() = 0;
  virtual std::unique_ptr<MarkerTimer> marker_timer() = 0;
  virtual void describe(RunContext& context) = 0;
  // Concurrency: each worker thread holds a scope while it runs requests
  // (CUDA: makes a pool stream current, so requests overlap; CPU: nothing).
  struct WorkerScope {
    virtual ~WorkerScope() = default;
  };
  virtual std::unique_ptr<WorkerScope> worker_scope() { return std::make_unique<WorkerScope>(); }
  virtual std::string concurrency_mechanism() const = 0;
};

// "cpu" or "cuda". Throws Error(Usage) when the kind is unknown or unavailable
// (CPU-only build, no CUDA device).
std::unique_ptr<Device> make_device(const std::string& kind);


#ifdef MODELSTAT_TORCH_CUDA
std::unique_ptr<Device> make_torch_cuda_device();  // profiler/cuda/torch_cuda_device.cc
#endif

}  // namespace modelstat::profiler

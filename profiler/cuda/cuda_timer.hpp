// CUDA event timers (METHODOLOGY "Runtime measurement", rules 1 and 2), after nvbench's
// cuda_timer: a move-only RAII event, and timers that record events on the stream that runs
// the work and read them only once the last one has completed. Never a host clock.
//
// CUDA-only (compiled with MODELSTAT_CUDA), runtime API only. Events belong to the device
// that is current when they are created, and may only be recorded on streams of that device:
// construct the timers (and call CudaMarkerTimer::reset) with the stream's device current,
// as LibTorch's CUDAGuard / the executor's device setup ensures.
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "profiler/timer.hpp"

namespace modelstat::profiler::cuda {

// One CUDA event with timing enabled. Move-only; destroyed with its owner.
class CudaEvent {
 public:
  CudaEvent();  // cudaEventCreate
  ~CudaEvent();
  CudaEvent(CudaEvent&& other) noexcept;
  CudaEvent& operator=(CudaEvent&& other) noexcept;
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;

  void record(cudaStream_t stream);  // cudaEventRecord: completes when the stream reaches it
  void synchronize() const;          // cudaEventSynchronize: host waits for completion
  bool ready() const;                // cudaEventQuery: completed yet? (never waits)
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// Seconds from `start` to `end`, both recorded and `end` completed:
// cudaEventElapsedTime (milliseconds, float, ~0.5 us resolution) * 1e-3.
double elapsed_seconds(const CudaEvent& start, const CudaEvent& end);

class CudaIntervalTimer final : public IntervalTimer {
 public:
  explicit CudaIntervalTimer(cudaStream_t stream);
  void start() override;
  void stop() override;
  double seconds() override;  // synchronises on the stop event
  TimeDomain domain() const override { return TimeDomain::CudaEvents; }

 private:
  cudaStream_t stream_;
  CudaEvent start_, stop_;
  bool started_ = false, stopped_ = false;
};

// Events are pooled: reset(n) creates only those beyond the pool's current size, and
// append() creates one only when every pooled event is taken, so the per-iteration cost is
// n cudaEventRecord calls plus one cudaEventSynchronize.
class CudaMarkerTimer final : public MarkerTimer {
 public:
  explicit CudaMarkerTimer(cudaStream_t stream);
  void reset(size_t markers) override;
  void mark(size_t i) override;
  size_t append() override;
  std::vector<double> intervals() override;  // one cudaEventSynchronize, on the last marker
  std::vector<double> offsets() override;    // likewise
  TimeDomain domain() const override { return TimeDomain::CudaEvents; }

 private:
  // Throws unless every marker was recorded; then waits for the last one (recorded in
  // order on one stream: it completing means all have). False when there are none.
  bool wait_for_all();

  cudaStream_t stream_;
  std::vector<CudaEvent> events_;
  size_t markers_ = 0, recorded_ = 0;
};

}  // namespace modelstat::profiler::cuda

// Timers behind one interface (METHODOLOGY "Runtime measurement", rules 1 and 2).
//
// Two clocks, never mixed: TimeDomain::Host is std::chrono::steady_clock on the calling
// thread, right for ATen's CPU backend, whose ops run synchronously on the calling thread
// (intra-op worker threads join before the op returns). TimeDomain::CudaEvents is CUDA events
// recorded on the stream that runs the work: right for GPU work, which is asynchronous, so a
// host clock would time only the enqueueing. Results carry their domain so reports keep GPU
// time and CPU time apart.
//
// This header has no CUDA dependency: a CUDA stream is passed as void* (a cudaStream_t,
// e.g. c10::cuda::getCurrentCUDAStream().stream(); nullptr is the legacy default stream).
// The CUDA implementations live in cuda/cuda_timer.{hpp,cc}, compiled only with
// MODELSTAT_CUDA; the factories below throw in a build without it. Check cuda_available()
// (device_query.hpp) first.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace modelstat::profiler {

enum class TimeDomain {
  Host,        // steady_clock on the calling thread
  CudaEvents,  // cudaEventElapsedTime between events on one stream (~0.5 us resolution)
};
const char* to_string(TimeDomain domain);

// Times one interval, e.g. one whole-model forward().
class IntervalTimer {
 public:
  virtual ~IntervalTimer() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  // Seconds between start() and stop(). Waits for the stop to complete (the CUDA timer
  // synchronises on its stop event). Throws modelstat::Error(Runtime) when start/stop
  // were not both called.
  virtual double seconds() = 0;
  virtual TimeDomain domain() const = 0;
};

// Per-layer timing without a synchronisation between layers: marker 0 before the first
// node, marker i + 1 after node i, then one wait for the whole sequence in intervals().
// When the number of markers is not known in advance (the nodes inside a Loop body run once
// per trip), reset(0) and append() each marker, then read offsets().
class MarkerTimer {
 public:
  virtual ~MarkerTimer() = default;
  // Prepare `markers` markers (>= 2 for one interval). Resources (CUDA events) are created
  // here, not in mark(), so marking costs only the record. Reusable: call again per iteration.
  virtual void reset(size_t markers) = 0;
  // Record marker i. Markers must be recorded in order 0, 1, ..., markers - 1 (on one
  // stream, for CUDA), so that the last one completing implies all have; anything else throws.
  virtual void mark(size_t i) = 0;
  // Record the next marker, beyond reset()'s count if need be, and return its index. The pool
  // grows only when it is full (CUDA: an event is created only then), and reset() keeps it:
  // from the second iteration of the same work on, appending costs only the record.
  virtual size_t append() = 0;
  // markers - 1 intervals in seconds: intervals()[i] = t(i + 1) - t(i). Waits once (for the
  // last marker). Throws modelstat::Error(Runtime) unless every marker was recorded.
  virtual std::vector<double> intervals() = 0;
  // Seconds from marker 0 to each marker: offsets()[i] = t(i) - t(0), so the interval
  // between any two markers i < j is offsets()[j] - offsets()[i] (nested intervals need
  // more than consecutive ones). Waits once, like intervals(), and throws like it.
  virtual std::vector<double> offsets() = 0;
  virtual TimeDomain domain() const = 0;
};

// Host clock timers (cpu_timer.cc).
std::unique_ptr<IntervalTimer> make_cpu_interval_timer();
std::unique_ptr<MarkerTimer> make_cpu_marker_timer();

// CUDA event timers on `stream` (a cudaStream_t). Throw modelstat::Error(Runtime) when the
// build has no CUDA support (device_query.cc) or a CUDA call fails.
std::unique_ptr<IntervalTimer> make_cuda_interval_timer(void* stream);
std::unique_ptr<MarkerTimer> make_cuda_marker_timer(void* stream);

}  // namespace modelstat::profiler

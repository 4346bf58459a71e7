#include "profiler/cuda/cuda_timer.hpp"

#include <string>
#include <utility>

#include "modelstat/error.hpp"
#include "profiler/cuda/cuda_runtime.hpp"

namespace modelstat::profiler::cuda {

// ---- CudaEvent ----------------------------------------------------------------------------

// cudaEventDefault: timing enabled, spin-wait on synchronize (lowest wake-up latency; the
// host has nothing else to do while it waits for a timed iteration).
CudaEvent::CudaEvent() {
  MODELSTAT_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDefault));
}

CudaEvent::~CudaEvent() {
  // A destructor must not throw; a failure here (e.g. the context already torn down at
  // process exit) leaves nothing to clean up anyway.
  if (event_ != nullptr) (void)cudaEventDestroy(event_);
}

CudaEvent::CudaEvent(CudaEvent&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

CudaEvent& CudaEvent::operator=(CudaEvent&& other) noexcept {
  if (this != &other) {
    if (event_ != nullptr) (void)cudaEventDestroy(event_);
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

void CudaEvent::record(cudaStream_t stream) {
  MODELSTAT_CUDA_CHECK(cudaEventRecord(event_, stream));
}

void CudaEvent::synchronize() const {
  MODELSTAT_CUDA_CHECK(cudaEventSynchronize(event_));
}

bool CudaEvent::ready() const {
  const cudaError_t status = cudaEventQuery(event_);
  if (status == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  MODELSTAT_CUDA_CHECK(status);
  return true;
}

double elapsed_seconds(const CudaEvent& start, const CudaEvent& end) {
  float milliseconds = 0.0f;
  MODELSTAT_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start.get(), end.get()));
  return static_cast<double>(milliseconds) * 1e-3;
}

// ---- CudaIntervalTimer --------------------------------------------------------------------

CudaIntervalTimer::CudaIntervalTimer(cudaStream_t stream) : stream_(stream) {}

void CudaIntervalTimer::start() {
  start_.record(stream_);
  started_ = true;
  stopped_ = false;
}

void CudaIntervalTimer::stop() {
  if (!started_) throw Error(ErrorKind::Runtime, "CUDA interval timer: stop() without start()");
  stop_.record(stream_);
  stopped_ = true;
}

double CudaIntervalTimer::seconds() {
  if (!stopped_) throw Error(ErrorKind::Runtime, "CUDA interval timer: seconds() before start() and stop()");
  stop_.synchronize();
  return elapsed_seconds(start_, stop_);
}

// ---- CudaMarkerTimer ----------------------------------------------------------------------

CudaMarkerTimer::CudaMarkerTimer(cudaStream_t stream) : stream_(stream) {}

void CudaMarkerTimer::reset(size_t markers) {
  events_.reserve(markers);
  while (events_.size() < markers) events_.emplace_back();
  markers_ = markers;
  recorded_ = 0;
}

void CudaMarkerTimer::mark(size_t i) {
  if (i != recorded_ || i >= markers_) {
    throw Error(ErrorKind::Runtime, "CUDA marker timer: marker " + std::to_string(i) +
                                        " recorded out of order (" + std::to_string(recorded_) + " of " +
                                        std::to_string(markers_) + " recorded)");
  }
  events_[i].record(stream_);
  ++recorded_;
}

size_t CudaMarkerTimer::append() {
  if (recorded_ == markers_) {
    if (events_.size() == markers_) events_.emplace_back();  // the pool is full: grow it
    ++markers_;
  }
  events_[recorded_].record(stream_);
  return recorded_++;
}

bool CudaMarkerTimer::wait_for_all() {
  if (recorded_ != markers_) {
    throw Error(ErrorKind::Runtime, "CUDA marker timer: only " + std::to_string(recorded_) + " of " +
                                        std::to_string(markers_) + " markers recorded");
  }
  if (markers_ == 0) return false;
  // All markers were recorded in order on one stream, so the last completing means all have.
  events_[markers_ - 1].synchronize();
  return true;
}

std::vector<double> CudaMarkerTimer::intervals() {
  std::vector<double> out;
  if (!wait_for_all() || markers_ < 2) return out;
  out.reserve(markers_ - 1);
  for (size_t i = 0; i + 1 < markers_; ++i) out.push_back(elapsed_seconds(events_[i], events_[i + 1]));
  return out;
}

std::vector<double> CudaMarkerTimer::offsets() {
  std::vector<double> out;
  if (!wait_for_all()) return out;
  out.reserve(markers_);
  out.push_back(0.0);
  for (size_t i = 1; i < markers_; ++i) out.push_back(elapsed_seconds(events_[0], events_[i]));
  return out;
}

}  // namespace modelstat::profiler::cuda

// The one place that asks whether this build has CUDA (MODELSTAT_HAVE_CUDA, set by the
// MODELSTAT_CUDA CMake option). Everything else reaches CUDA through these functions or
// through the files under cuda/, which are compiled only in a CUDA build.
#include "profiler/device_query.hpp"

#include <cstdio>

#include "modelstat/error.hpp"
#include "profiler/timer.hpp"

#if defined(MODELSTAT_HAVE_CUDA) && MODELSTAT_HAVE_CUDA
#include "profiler/cuda/cuda_runtime.hpp"
#include "profiler/cuda/cuda_timer.hpp"
#endif

namespace modelstat::profiler {

std::string cuda_version_string(int version) {
  if (version <= 0) return "none";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d.%d", version / 1000, (version % 1000) / 10);
  return buf;
}

#if defined(MODELSTAT_HAVE_CUDA) && MODELSTAT_HAVE_CUDA

CudaRuntimeInfo query_cuda_runtime(bool query_free_memory) {
  return cuda::query_runtime(query_free_memory);
}

bool cuda_available() {
  return cuda::available();
}

std::unique_ptr<IntervalTimer> make_cuda_interval_timer(void* stream) {
  return std::make_unique<cuda::CudaIntervalTimer>(static_cast<cudaStream_t>(stream));
}

std::unique_ptr<MarkerTimer> make_cuda_marker_timer(void* stream) {
  return std::make_unique<cuda::CudaMarkerTimer>(static_cast<cudaStream_t>(stream));
}

#else  // built without CUDA

namespace {
constexpr const char* kNotBuilt = "not built with CUDA (configure with -DMODELSTAT_CUDA=ON)";
}

CudaRuntimeInfo query_cuda_runtime(bool /*query_free_memory*/) {
  CudaRuntimeInfo info;
  info.status = kNotBuilt;
  return info;
}

bool cuda_available() {
  return false;
}

std::unique_ptr<IntervalTimer> make_cuda_interval_timer(void* /*stream*/) {
  throw Error(ErrorKind::Runtime, std::string("CUDA interval timer: ") + kNotBuilt);
}

std::unique_ptr<MarkerTimer> make_cuda_marker_timer(void* /*stream*/) {
  throw Error(ErrorKind::Runtime, std::string("CUDA marker timer: ") + kNotBuilt);
}

#endif

}  // namespace modelstat::profiler

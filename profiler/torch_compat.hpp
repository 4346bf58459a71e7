// The few LibTorch C++ interfaces that changed between the LibTorch modelstat
// is built against on Debian (1.13) and the CUDA LibTorch of current PyTorch
// wheels (2.x, the GPU machines): one spelling here, chosen by LibTorch's
// version macros, so the rest of the profiler reads the same for both.
//   - CPU autocast: 2.4 replaced at::autocast::is_cpu_enabled() and friends
//     with is_autocast_enabled(DeviceType) and friends (the old ones deprecated).
//   - c10::Allocator: 2.4 made allocate() non-const and added the pure virtual
//     copy_data(); kAllocateConst says which allocate() an allocator overrides.
#pragma once

#include <ATen/autocast_mode.h>
#include <torch/csrc/api/include/torch/version.h>

#define MODELSTAT_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace modelstat::profiler::torch_compat {

inline bool cpu_autocast_enabled() {
#if MODELSTAT_TORCH_AT_LEAST(2, 4)
  return at::autocast::is_autocast_enabled(at::kCPU);
#else
  return at::autocast::is_cpu_enabled();
#endif
}

inline void set_cpu_autocast_enabled(bool on) {
#if MODELSTAT_TORCH_AT_LEAST(2, 4)
  at::autocast::set_autocast_enabled(at::kCPU, on);
#else
  at::autocast::set_cpu_enabled(on);
#endif
}

inline at::ScalarType cpu_autocast_dtype() {
#if MODELSTAT_TORCH_AT_LEAST(2, 4)
  return at::autocast::get_autocast_dtype(at::kCPU);
#else
  return at::autocast::get_autocast_cpu_dtype();
#endif
}

inline void set_cpu_autocast_dtype(at::ScalarType dtype) {
#if MODELSTAT_TORCH_AT_LEAST(2, 4)
  at::autocast::set_autocast_dtype(at::kCPU, dtype);
#else
  at::autocast::set_autocast_cpu_dtype(dtype);
#endif
}

}  // namespace modelstat::profiler::torch_compat

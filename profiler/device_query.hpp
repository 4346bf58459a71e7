// What CUDA runtime and devices this process can see (METHODOLOGY "Runtime measurement",
// rule 10: every report names its device, driver and runtime versions, clocks).
//
// No CUDA dependency in this header. device_query.cc is compiled in every build and is the
// one place that asks whether the build has CUDA (MODELSTAT_HAVE_CUDA): with it, it forwards
// to cuda/cuda_runtime.cc; without it, it answers "not built with CUDA".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace modelstat::profiler {

struct CudaDeviceInfo {
  int index = 0;
  std::string name;        // e.g. "NVIDIA H100 80GB HBM3"
  std::string pci_bus_id;  // "0000:3b:00.0"
  int compute_capability_major = 0, compute_capability_minor = 0;
  int multiprocessor_count = 0;
  int64_t total_memory_bytes = 0;
  // Needs a CUDA context on the device (query_cuda_runtime(true)); -1 when not asked or unreadable.
  int64_t free_memory_bytes = -1;
  // Peak (boost) clocks as the runtime reports them, not the current clocks (those need
  // NVML); -1 when the runtime cannot report them.
  int sm_clock_khz = -1;
  int memory_clock_khz = -1;
  int memory_bus_width_bits = -1;
  bool ecc_enabled = false;
};

struct CudaRuntimeInfo {
  bool built_with_cuda = false;
  bool available = false;  // built with CUDA, a driver, and at least one device
  // "ok", "not built with CUDA (MODELSTAT_CUDA=OFF)", "no CUDA device", "no CUDA driver ...".
  std::string status;
  int driver_version = 0;   // CUDA version the driver supports, 1000 * major + 10 * minor; 0 = no driver
  int runtime_version = 0;  // version of libcudart this binary runs with; 0 without CUDA
  std::vector<CudaDeviceInfo> devices;
};

// Never throws for "no CUDA": that is a status, not an error. Throws modelstat::Error(Runtime)
// only when a device that was counted cannot then be queried.
// query_free_memory = true creates a CUDA context on every device (slow, ~100 ms and some
// device memory each); leave it false unless the report needs free memory.
CudaRuntimeInfo query_cuda_runtime(bool query_free_memory = false);

// Built with CUDA, a driver is loaded and cudaGetDeviceCount() > 0. Never throws.
bool cuda_available();

// 12040 -> "12.4", 13000 -> "13.0"; "none" for 0.
std::string cuda_version_string(int version);

}  // namespace modelstat::profiler

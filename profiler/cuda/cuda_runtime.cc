#include "profiler/cuda/cuda_runtime.hpp"

#include <memory>
#include <string>

#include "modelstat/error.hpp"

namespace modelstat::profiler::cuda {

std::string describe(cudaError_t status) {
  return std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")";
}

void check(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  (void)cudaGetLastError();  // reset the non-sticky error state
  throw Error(ErrorKind::Runtime, std::string(call) + " failed: " + describe(status));
}

namespace {

// Why there is no usable CUDA, in words a report can show.
std::string no_cuda_status(cudaError_t status) {
  switch (status) {
    case cudaErrorNoDevice:
      return "no CUDA device";
    case cudaErrorInsufficientDriver:
      return std::string("no CUDA driver, or one older than this CUDA runtime (") + cudaGetErrorName(status) +
             ")";
    default:
      return "CUDA unavailable: " + describe(status);
  }
}

// An attribute the runtime may not report on every device/driver: -1 when unreadable.
int attribute_or(cudaDeviceAttr attr, int device) {
  int value = -1;
  if (cudaDeviceGetAttribute(&value, attr, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return value;
}

// Restores the calling thread's current device (changed to read free memory per device).
class CurrentDeviceGuard {
 public:
  CurrentDeviceGuard() { MODELSTAT_CUDA_CHECK(cudaGetDevice(&device_)); }
  ~CurrentDeviceGuard() { (void)cudaSetDevice(device_); }
  CurrentDeviceGuard(const CurrentDeviceGuard&) = delete;
  CurrentDeviceGuard& operator=(const CurrentDeviceGuard&) = delete;

 private:
  int device_ = 0;
};

}  // namespace

CudaRuntimeInfo query_runtime(bool query_free_memory) {
  CudaRuntimeInfo info;
  info.built_with_cuda = true;
  // Both work without a driver: the runtime version is libcudart's own; the driver version
  // is 0 when no driver is loaded.
  if (cudaRuntimeGetVersion(&info.runtime_version) != cudaSuccess) info.runtime_version = 0;
  if (cudaDriverGetVersion(&info.driver_version) != cudaSuccess) info.driver_version = 0;
  (void)cudaGetLastError();

  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    info.status = no_cuda_status(status);
    return info;
  }
  if (count == 0) {
    info.status = "no CUDA device";
    return info;
  }

  std::unique_ptr<CurrentDeviceGuard> restore_device;
  if (query_free_memory) restore_device = std::make_unique<CurrentDeviceGuard>();
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    MODELSTAT_CUDA_CHECK(cudaGetDeviceProperties(&prop, i));
    CudaDeviceInfo d;
    d.index = i;
    d.name = prop.name;
    char bus_id[32] = {};
    if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, i) == cudaSuccess) {
      d.pci_bus_id = bus_id;
    } else {
      (void)cudaGetLastError();
    }
    d.compute_capability_major = prop.major;
    d.compute_capability_minor = prop.minor;
    d.multiprocessor_count = prop.multiProcessorCount;
    d.total_memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
    d.memory_bus_width_bits = prop.memoryBusWidth;
    d.ecc_enabled = prop.ECCEnabled != 0;
    // cudaDeviceProp::clockRate / memoryClockRate are gone in CUDA 13; the attributes remain.
    d.sm_clock_khz = attribute_or(cudaDevAttrClockRate, i);
    d.memory_clock_khz = attribute_or(cudaDevAttrMemoryClockRate, i);
    if (query_free_memory) {
      size_t free_bytes = 0, total_bytes = 0;
      MODELSTAT_CUDA_CHECK(cudaSetDevice(i));
      MODELSTAT_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
      d.free_memory_bytes = static_cast<int64_t>(free_bytes);
    }
    info.devices.push_back(std::move(d));
  }
  info.available = true;
  info.status = "ok";
  return info;
}

bool available() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return count > 0;
}

}  // namespace modelstat::profiler::cuda

// The CUDA back-end of profiler/device.hpp: work runs on LibTorch's current
// CUDA stream; timers record CUDA events on that same stream (never a host
// clock around GPU work) and wait once, on the last event. Built only with a
// CUDA LibTorch (MODELSTAT_TORCH_CUDA); the runtime check (no device, no
// driver) happens in make_torch_cuda_device().
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "modelstat/error.hpp"
#include "profiler/device.hpp"
#include "profiler/device_query.hpp"

namespace modelstat::profiler {

namespace {

void* current_stream() {
  return static_cast<void*>(c10::cuda::getCurrentCUDAStream().stream());
}

class TorchCudaDevice final : public Device {
 public:
  explicit TorchCudaDevice(CudaRuntimeInfo info) : info_(std::move(info)) {}

  at::Device torch_device() const override { return at::Device(at::kCUDA, 0); }
  void synchronize() override { c10::cuda::getCurrentCUDAStream().synchronize(); }
  // The stream is read when the timer is made: a worker thread makes its
  // timers after entering its worker scope, so they record on its stream.
  std::unique_ptr<IntervalTimer> interval_timer() override {
    return make_cuda_interval_timer(current_stream());
  }
  std::unique_ptr<MarkerTimer> marker_timer() override { return make_cuda_marker_timer(current_stream()); }

  void describe(RunContext& c) override {
    c.device_kind = "cuda";
    const CudaRuntimeInfo now = query_cuda_runtime(true);
    if (!now.devices.empty()) {
      const CudaDeviceInfo& d = now.devices[0];
      c.device_name = d.name + " (sm_" + std::to_string(d.compute_capability_major) +
                      std::to_string(d.compute_capability_minor) + ", " +
                      std::to_string(d.multiprocessor_count) + " SMs, " +
                      std::to_string(d.total_memory_bytes >> 20) + " MiB)";
      if (d.sm_clock_khz > 0)
        c.clocks = "SM peak " + std::to_string(d.sm_clock_khz / 1000) + " MHz, memory peak " +
                   std::to_string(d.memory_clock_khz / 1000) +
                   " MHz (runtime-reported peaks, not current clocks)";
    }
    c.driver_version = cuda_version_string(now.driver_version);
    c.runtime_version = "CUDA runtime " + cuda_version_string(now.runtime_version);
    c.timer = "CUDA events recorded on the execution stream, one wait per iteration";
    // The math the float32 kernels use (--dtype fp32 / tf32 / own: run_setup.hpp).
    const at::Context& ctx = at::globalContext();
    c.blas = std::string("cuBLAS, TF32 ") + (ctx.allowTF32CuBLAS() ? "on" : "off") + "; cuDNN, TF32 " +
             (ctx.allowTF32CuDNN() ? "on" : "off");
  }

  struct StreamScope final : WorkerScope {
    c10::cuda::CUDAStreamGuard guard{c10::cuda::getStreamFromPool()};
  };
  std::unique_ptr<WorkerScope> worker_scope() override { return std::make_unique<StreamScope>(); }
  std::string concurrency_mechanism() const override {
    return "CUDA streams (one pool stream per request loop)";
  }

 private:
  CudaRuntimeInfo info_;
};

}  // namespace

std::unique_ptr<Device> make_torch_cuda_device() {
  CudaRuntimeInfo info = query_cuda_runtime(false);
  if (!info.available) throw Error(ErrorKind::Usage, "--device cuda: " + info.status);
  return std::make_unique<TorchCudaDevice>(std::move(info));
}

}  // namespace modelstat::profiler

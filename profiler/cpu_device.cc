// The CPU back-end: ATen's CPU kernels run synchronously on the calling
// thread (intra-op parallelism joins before returning), so a steady host
// clock around the work is the correct timer and synchronize() has nothing
// to wait for.
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>

#include <fstream>
#include <new>
#include <thread>

#include "modelstat/error.hpp"
#include "profiler/device.hpp"
#include "profiler/run_context.hpp"

namespace modelstat::profiler {

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  return "unknown CPU";
}

namespace {


class CpuDevice final : public Device {
 public:
  at::Device torch_device() const override { return at::kCPU; }
  void synchronize() override {}
  std::unique_ptr<IntervalTimer> interval_timer() override { return make_cpu_interval_timer(); }
  std::unique_ptr<MarkerTimer> marker_timer() override { return make_cpu_marker_timer(); }
  void describe(RunContext& c) override {
    c.device_kind = "cpu";
    c.device_name = cpu_model_name() + " (" + std::to_string(std::thread::hardware_concurrency()) + " hardware threads)";
    c.runtime_version = "ATen CPU (" + std::string(at::get_parallel_info().find("OpenMP") != std::string::npos
                                                       ? "OpenMP"
                                                       : "native") +
                        " intra-op threads)";
    c.timer = "std::chrono::steady_clock around synchronous CPU work";
  }
  std::string concurrency_mechanism() const override { return "CPU threads (intra-op threads split between them)"; }
};

}  // namespace

std::unique_ptr<Device> make_device(const std::string& kind) {
  if (kind == "cpu") return std::make_unique<CpuDevice>();
  if (kind == "cuda") {
#ifdef MODELSTAT_TORCH_CUDA
    return make_torch_cuda_device();
#else
    throw Error(ErrorKind::Usage,
                "--device cuda: this build's LibTorch has no CUDA support (Debian's libtorch is CPU-only); "
                "build against a CUDA LibTorch, see tools/gpu_check.sh");
#endif
  }
  throw Error(ErrorKind::Usage, "--device must be cpu or cuda, got '" + kind + "'");
}


}  // namespace modelstat::profiler

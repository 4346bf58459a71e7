// The CUDA side of `modelstat device` (profiler/ceilings_plan.hpp): which
// dtypes this GPU has tensor-core paths for, sizes large enough to saturate
// it, memory sizing from the free device memory, and cuBLAS's TF32 switch.
// Built only with a CUDA LibTorch (MODELSTAT_TORCH_CUDA); compiled, not
// linked, against Debian's CPU-only LibTorch (profiler/CMakeLists.txt).
#include <ATen/Context.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime_api.h>

#include "profiler/ceilings_plan.hpp"
#include "profiler/cuda/cuda_runtime.hpp"

namespace modelstat::profiler {

namespace {

// cuBLAS math mode for one dtype's products. "tf32" lets cuBLAS round fp32
// inputs to TF32 on tensor cores; every other dtype runs with it off, so the
// "fp32" ceiling is true fp32 whatever the process default was. The previous
// setting is restored when the guard goes.
std::shared_ptr<void> cublas_math_mode(const std::string& dtype) {
  at::Context& ctx = at::globalContext();
  const bool previous = ctx.allowTF32CuBLAS();
  ctx.setAllowTF32CuBLAS(dtype == "tf32");
  return std::shared_ptr<void>(nullptr, [previous](void*) { at::globalContext().setAllowTF32CuBLAS(previous); });
}

}  // namespace

CeilingsPlan cuda_ceilings_plan(bool quick) {
  CeilingsPlan plan;
  const cudaDeviceProp* props = at::cuda::getCurrentDeviceProperties();
  // TF32 and BF16 tensor cores arrived with Ampere (sm_80); on older GPUs the
  // TF32 switch changes nothing and bf16 products are emulated, so neither
  // would be a ceiling.
  const bool ampere_or_newer = props->major >= 8;
  plan.dtypes = {"fp32"};
  if (ampere_or_newer) plan.dtypes.push_back("tf32");
  plan.dtypes.push_back("fp16");
  if (ampere_or_newer) plan.dtypes.push_back("bf16");
  if (!ampere_or_newer)
    plan.notes.push_back("tf32 and bf16 not measured: sm_" + std::to_string(props->major) +
                         std::to_string(props->minor) + " has no tensor cores for them");

  // 1 GiB each way is ~20x the largest L2 (H100: 50 MiB), so the copy streams from HBM/GDDR.
  plan.copy_bytes = int64_t(1) << 30;
  plan.matmul_sizes = quick ? std::vector<int64_t>{512, 2048, 8192}
                            : std::vector<int64_t>{256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192};
  plan.min_sample_seconds = 1e-3;
  use_protocol(plan, quick, {2, 0.05, 1.0}, 0.05, 0.5);
  plan.math_mode = cublas_math_mode;

  size_t free_bytes = 0, total_bytes = 0;
  MODELSTAT_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  fit_plan_to_memory(plan, int64_t(free_bytes));
  return plan;
}

}  // namespace modelstat::profiler

// CUDA runtime helpers: error checking and the device query behind device_query.hpp.
// CUDA-only: included only by files compiled with MODELSTAT_CUDA, and only the runtime API
// (cuda_runtime_api.h), so it builds with a plain C++ compiler, no nvcc, and against a
// CPU-only LibTorch.
#pragma once

#include <cuda_runtime_api.h>

#include "profiler/device_query.hpp"

namespace modelstat::profiler::cuda {

// Throws modelstat::Error(Runtime, "<call> failed: cudaErrorXxx (description)") unless
// status is cudaSuccess. Clears the runtime's last-error slot first, so a non-sticky error
// does not resurface from an unrelated later call.
void check(cudaError_t status, const char* call);

// "cudaErrorNoDevice (no CUDA-capable device is detected)".
std::string describe(cudaError_t status);

CudaRuntimeInfo query_runtime(bool query_free_memory);
bool available();

}  // namespace modelstat::profiler::cuda

// Checks a CUDA runtime call, naming it in the error: MODELSTAT_CUDA_CHECK(cudaEventRecord(e, s));
#define MODELSTAT_CUDA_CHECK(call) ::modelstat::profiler::cuda::check((call), #call)

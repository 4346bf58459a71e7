// A run's settings turned into what the executor takes, in one place: the
// float dtype a compute dtype means on a device, the checks of the options
// that only a run can make, and the executor's options for each purpose.
#pragma once

#include <ATen/ATen.h>

#include "modelstat/profile.hpp"
#include "profiler/executor.hpp"

namespace modelstat::profiler {

// The float dtype of a run: Own is Undefined (the model's own dtypes), the
// others their ATen type. A training step runs fp32 (train_step.hpp).
at::ScalarType float_dtype_of(ComputeDtype dtype);

// The float dtype a run computes in on `device`: float_dtype_of(dtype),
// except that fp16 / bf16 ask for CUDA's reduced kernels: on the CPU a model
// runs in its own dtypes (a pipeline's CPU stages beside CUDA ones).
at::ScalarType float_dtype_on(DeviceKind device, ComputeDtype dtype);

// Refuses (Error(Usage)) what cannot run as asked, before anything is
// loaded: fp16 / bf16 compute on the CPU (a model runs in its own dtypes
// there, or wholly in fp32), and training steps in other than fp32 (and bf16
// on the CPU).
void check_run_options(const ProfileOptions& o);

// fp16, bf16 and tf32 compute ask for CUDA's kernels.
bool cuda_only(ComputeDtype dtype);

// For a run on CUDA (`on_cuda`), --dtype fp32 turns TF32 tensor-core math
// off in cuBLAS and cuDNN and --dtype tf32 turns it on (LibTorch's global
// flags, for the process); own leaves LibTorch's defaults (cuDNN convolutions
// in TF32, cuBLAS fp32). Nothing changes for a run on the CPU.
void apply_float32_math(ComputeDtype dtype, bool on_cuda);

// Who the executor runs for.
enum class ExecPurpose {
  Inference,  // profile, report, pipeline stages, the batch sweep: fused as asked
  TrainStep,  // autograd: fp32, node by node, ATen's matmuls, no in-place writes
};

// The executor's options for `purpose` on `device` from the run's options.
ExecOptions exec_options(const ProfileOptions& o, const at::Device& device, ExecPurpose purpose);

}  // namespace modelstat::profiler

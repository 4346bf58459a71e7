// Run settings -> executor options (run_setup.hpp).
#include "profiler/run_setup.hpp"

#include "modelstat/error.hpp"

namespace modelstat::profiler {

at::ScalarType float_dtype_of(ComputeDtype dtype) {
  switch (dtype) {
    case ComputeDtype::Own: return at::ScalarType::Undefined;
    case ComputeDtype::Fp32: return at::kFloat;
    case ComputeDtype::Tf32: return at::kFloat;
    case ComputeDtype::Fp16: return at::kHalf;
    case ComputeDtype::Bf16: return at::kBFloat16;
  }
  return at::ScalarType::Undefined;
}

at::ScalarType float_dtype_on(DeviceKind device, ComputeDtype dtype) {
  if (device == DeviceKind::Cpu && cuda_only(dtype)) return at::ScalarType::Undefined;
  return float_dtype_of(dtype);
}

bool cuda_only(ComputeDtype dtype) {
  return dtype == ComputeDtype::Fp16 || dtype == ComputeDtype::Bf16 || dtype == ComputeDtype::Tf32;
}

void apply_float32_math(ComputeDtype dtype, bool on_cuda) {
  if (!on_cuda || (dtype != ComputeDtype::Fp32 && dtype != ComputeDtype::Tf32)) return;
  const bool tf32 = dtype == ComputeDtype::Tf32;
  at::globalContext().setAllowTF32CuBLAS(tf32);
  at::globalContext().setAllowTF32CuDNN(tf32);
}

void check_run_options(const ProfileOptions& o) {
  if (o.device == DeviceKind::Cpu && cuda_only(o.dtype))
    throw Error(ErrorKind::Usage,
                std::string("--dtype ") + name_of(o.dtype) +
                    " is for CUDA; on the CPU a model runs in its own dtypes (an fp16/bf16 node "
                    "without a CPU kernel in fp32), or wholly in fp32 with --dtype fp32");
  if (!o.train_step) return;
  if (o.train_precision == TrainPrecision::Fp16 || (o.train_precision == TrainPrecision::Bf16 && o.device != DeviceKind::Cpu))
    throw Error(ErrorKind::Usage, std::string("--precision ") + name_of(o.train_precision) +
                                      " is not measured here: a bf16 step runs on the CPU (LibTorch 1.13's CPU "
                                      "autocast is bf16 only); 'modelstat fit --precision' forecasts the others");
  if (o.dtype != ComputeDtype::Own && o.dtype != ComputeDtype::Fp32)
    throw Error(ErrorKind::Usage, "--train-step runs fp32 (no mixed-precision training)");
}

ExecOptions exec_options(const ProfileOptions& o, const at::Device& device, ExecPurpose purpose) {
  ExecOptions eo;
  eo.device = device;
  eo.seed = o.seed;
  if (purpose == ExecPurpose::TrainStep) {
    eo.float_dtype = at::kFloat;
    eo.fuse_qdq = false;
    eo.fuse_cpu = false;
    eo.gemm = GemmBackend::Blas;
    return eo;
  }
  eo.float_dtype = float_dtype_on(device.is_cuda() ? DeviceKind::Cuda : DeviceKind::Cpu, o.dtype);
  eo.fuse_qdq = o.fuse;
  eo.fuse_cpu = o.fuse;
  eo.gemm = o.gemm;
  return eo;
}

}  // namespace modelstat::profiler

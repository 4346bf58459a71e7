// The words a run is configured in, named once: where it runs, in which
// float dtype, on which Gemm kernel, and for a training step which optimizer,
// precision and checkpointing. The command line parses them into these types
// (tools/profile_flags.cc), and everything below it takes them typed; each
// has one table of names (analyzer/run_config.cc) that printing, parsing and
// the command line's choices all read.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace modelstat {

enum class DeviceKind { Cpu, Cuda };

// The float dtype a run computes in: Own keeps the model's own dtypes (a
// float16 node without a kernel on the device runs in fp32, said in a
// notice); Fp32 runs every float tensor in fp32 with fp32 arithmetic (on CUDA
// TF32 tensor-core math off in cuBLAS and cuDNN); Tf32 (CUDA) stores fp32 and
// lets cuBLAS and cuDNN compute in TF32; Fp16 / Bf16 (CUDA) in that dtype.
// Own on CUDA keeps LibTorch's defaults (TF32 convolutions, fp32 matmuls).
enum class ComputeDtype { Own, Fp32, Fp16, Bf16, Tf32 };

// How fp32 Gemm / MatMul with constant weights run on the CPU (`--gemm`).
enum class GemmBackend {
  Auto,    // the faster of the two for each shape, measured or cached
  OneDnn,  // oneDNN matmul where it has a native kernel for the shape
  Blas,    // ATen's mm / addmm (the system BLAS)
};

// The optimizer of a training step: the fit forecast prices its update
// (docs/FIT.md, "Training step"), the profiler runs it (profiler/train_step.hpp).
enum class Optimizer { Sgd, Momentum, Adam };

// fp32: every tensor fp32. bf16 / fp16: mixed precision, 16-bit compute with
// fp32 master weights and optimizer state (docs/FIT.md).
enum class TrainPrecision { Fp32, Bf16, Fp16 };

// Which activations forward keeps for backward (docs/FIT.md): none = every
// saved tensor; selective = all but the attention-score tensors (Korthikanti
// et al. 2022), recomputed in backward; full = only each block's inputs.
enum class Checkpointing { None, Selective, Full };

// The name of a value: "cpu", "own", "onednn", "adam", "bf16", "selective", ...
const char* name_of(DeviceKind v);
const char* name_of(ComputeDtype v);
const char* name_of(GemmBackend v);
const char* name_of(Optimizer v);
const char* name_of(TrainPrecision v);
const char* name_of(Checkpointing v);

// Every (name, value) of an enum, in its table's order: the command line's choices.
template <typename E>
const std::vector<std::pair<std::string, E>>& names_of();

// The value named `text`; throws Error(Usage) "`flag` must be a, b or c, got 'x'".
template <typename E>
E parse_as(const std::string& text, const std::string& flag);

}  // namespace modelstat

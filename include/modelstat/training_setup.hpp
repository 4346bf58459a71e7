// How a training step is set up beyond its optimizer, named once for both
// sides: the fit forecast (docs/FIT.md, "Precision, checkpointing, sharding")
// and the profiler's measured step (profiler/train_step.hpp; fp32 and, on the
// CPU, bf16 autocast).
#pragma once

#include <string>

namespace modelstat {

// fp32: every tensor fp32. bf16 / fp16: mixed precision, 16-bit compute with
// fp32 master weights and optimizer state (which bytes are 16-bit depends on
// the layout: torch.autocast's, or a 16-bit model with an fp32 master copy
// in the optimizer as ZeRO / DeepSpeed hold it; docs/FIT.md).
enum class TrainPrecision { Fp32, Bf16, Fp16 };

// Which activations forward keeps for backward (docs/FIT.md): none = every
// saved tensor; selective = all but the attention-score tensors (Korthikanti
// et al. 2022), recomputed in backward; full = only each block's inputs, the
// block recomputed in backward.
enum class Checkpointing { None, Selective, Full };

const char* train_precision_name(TrainPrecision p);  // "fp32", "bf16", "fp16"
const char* checkpointing_name(Checkpointing c);     // "none", "selective", "full"
// Inverses; throw Error(Usage) naming the accepted values.
TrainPrecision parse_train_precision(const std::string& name);
Checkpointing parse_checkpointing(const std::string& name);

}  // namespace modelstat

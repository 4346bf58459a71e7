// The optimizers of a training step, named once for both sides: the fit
// forecast prices their update (docs/FIT.md, "Training step") and the
// profiler runs it (profiler/train_step.hpp has the update rules).
#pragma once

#include <string>

namespace modelstat {

enum class Optimizer { Sgd, Momentum, Adam };

const char* optimizer_name(Optimizer optimizer);  // "sgd", "momentum", "adam"
// The inverse of optimizer_name. Throws Error(Usage) naming the accepted values.
Optimizer parse_optimizer(const std::string& name);

}  // namespace modelstat

// The optimizers of a training step: include/modelstat/run_config.hpp names
// them (Optimizer, name_of, parse_as) for both sides, the fit forecast and the
// profiler's measured step.
#pragma once

#include "modelstat/run_config.hpp"

// How a training step is set up beyond its optimizer (TrainPrecision,
// Checkpointing): named in include/modelstat/run_config.hpp for both sides,
// the fit forecast (docs/FIT.md, "Precision, checkpointing, sharding") and
// the profiler's measured step (profiler/train_step.hpp).
#pragma once

#include "modelstat/run_config.hpp"

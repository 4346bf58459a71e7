// The count follows what ran (issue 32): after the first inference, one
// observed run per input set (Executor::observe) tells which branch each If
// took, how many trips each Loop / Scan body made and the dims of every
// top-level value. Those become notices and ProfileResult::control_flow, and
// the analysis is recounted on them: an If counts the branch that ran, a Loop
// its trips, and a node whose shapes the static analysis could not infer is
// costed on the shapes it ran with (cost.shapes = "observed").
#pragma once

#include "modelstat/profile.hpp"
#include "profiler/session.hpp"

namespace modelstat::profiler {

// Runs only when the model has control flow or nodes of unknown shape
// (otherwise the static count is already what runs). Replaces
// result.analysis when what ran differs from what it counted.
void count_what_ran(ProfileSession& s, ProfileResult& result);

}  // namespace modelstat::profiler

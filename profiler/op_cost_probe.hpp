// The per-op-class costs of `modelstat device` (modelstat::OpCost): one node of
// each class run by modelstat's executor at a tiny and a large size, for
// inference and for a training step through autograd.
#pragma once

#include <string>
#include <vector>

#include "modelstat/ceilings.hpp"
#include "profiler/ceilings_plan.hpp"
#include "profiler/device.hpp"

namespace modelstat::profiler {

// Every op class measured, in order (OpCost::op keys).
std::vector<std::string> op_cost_classes();

// Measures them all; a class that fails (out of memory, an op the device
// lacks) is left out with a note.
std::vector<OpCost> measure_op_costs(Device& device, const CeilingsPlan& plan, std::vector<std::string>& notes);

// One update of each optimizer (sgd, momentum, adam) as modelstat's training
// step runs it: a chain of 16 Mul nodes, each with its own weight, trained at
// 16 and at 65,536 elements per weight; the update part of the step timed.
std::vector<OptimizerUpdateCost> measure_optimizer_costs(Device& device, const CeilingsPlan& plan,
                                                         std::vector<std::string>& notes);

}  // namespace modelstat::profiler

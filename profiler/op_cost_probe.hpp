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

}  // namespace modelstat::profiler

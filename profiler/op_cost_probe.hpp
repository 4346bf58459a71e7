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


struct FreshAllocationCost;

// One update of each optimizer (sgd, momentum, adam) as modelstat's training
// step runs it: a chain of 16 Mul nodes, each with its own weight, trained at
// 16 and at 1,048,576 elements per weight; on the CPU also a chain of 2
// weights of 16 Mi elements (at most the fresh-mapping threshold), past the
// caches; the update part of the step timed.
std::vector<OptimizerUpdateCost> measure_optimizer_costs(Device& device, const CeilingsPlan& plan,
                                                         const FreshAllocationCost& fresh,
                                                         std::vector<std::string>& notes);

// The cost per byte of host memory the allocator maps afresh for each
// allocation (DeviceCeilings::fresh_allocation_*): a buffer twice the mmap
// threshold allocated and filled, minus the same fill of a reused buffer. On
// CUDA (caching allocator) and where the threshold is unknown, {0, 0}.
struct FreshAllocationCost {
  int64_t threshold_bytes = 0;
  double seconds_per_byte = 0;
};
FreshAllocationCost measure_fresh_allocation(Device& device, const CeilingsPlan& plan, std::vector<std::string>& notes);

// What one backward() costs whatever the graph (the engine's start, the sum
// and its gradient): a tiny leaf summed and differentiated. Taken off every
// training measurement, so a class keeps only its own node's backward.
double backward_call_seconds(Device& device, const CeilingsPlan& plan, std::vector<std::string>& notes);

// Measures every op class; a class that fails (out of memory, an op the
// device lacks) is left out with a note. What fresh mappings of its output
// and gradients cost (`fresh`) is taken off its times: fit prices that apart.
std::vector<OpCost> measure_op_costs(Device& device, const CeilingsPlan& plan, const FreshAllocationCost& fresh,
                                     std::vector<std::string>& notes);

}  // namespace modelstat::profiler

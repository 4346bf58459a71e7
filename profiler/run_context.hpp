// The conditions a measurement holds for (METHODOLOGY rule 10), filled the
// same way by every command that measures: `profile` (protocol.cc) and
// `device` (ceilings_probe.cc).
#pragma once

#include <string>

#include "modelstat/profile.hpp"
#include "profiler/device.hpp"

namespace modelstat::profiler {

// CPU intra-op threads for a request: `requested`, or every hardware thread
// when it is 0. Throws Error(Usage) when negative. Does not apply it.
int resolve_threads(int requested);

// Device description (name, kind, runtime, timer) plus the intra-op threads
// in effect (at::get_num_threads), the UTC date (ISO 8601), the host name and
// the LibTorch version. Leaves dtype and batch to the caller.
void describe_run(Device& device, RunContext& context);

}  // namespace modelstat::profiler

// The machine and the software a cell runs on (METHODOLOGY rule 17): what keys
// every row of the results database besides the cell itself.
#pragma once

#include <string>
#include <vector>

#include "modelstat/suite.hpp"

namespace modelstat::suite {

// This machine, named `name` (empty: the host name): CPU model, online CPUs,
// memory, the NVIDIA GPU and driver from /proc/driver/nvidia when there is
// one. Its id is a hash of the name and the hardware.
Machine probe_machine(const std::string& name);
// The id of `m` from its fields (probe_machine's rule; also for records read back).
std::string machine_id(const Machine& m);

// The environment variables that change timing and are recorded with every
// result (docs/suites.md): threading (OMP_*, GOMP_*, KMP_*, MKL_*,
// OPENBLAS_*), ISA limits (DNNL_*, ONEDNN_*), the allocator (MALLOC_*,
// MODELSTAT_GLIBC_MALLOC), CUDA_VISIBLE_DEVICES, LD_PRELOAD.
bool is_timing_variable(const std::string& name);

// modelstat's version and commit, the timing variables set in this process,
// its CPU affinity; the libraries are added by the cell (from the context the
// measuring process reports), then finish_environment() computes the id.
Environment probe_environment();
void finish_environment(Environment& e);

// The commit modelstat was built from ("3f2c1ab...", "-dirty" when the tree had
// uncommitted changes, "unknown" outside a git checkout), and its version.
const char* build_commit();
const char* build_version();

// Now, UTC, ISO 8601 ("2026-11-27T10:00:00Z").
std::string utc_now();

}  // namespace modelstat::suite

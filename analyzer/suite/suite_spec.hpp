// Reading a suite file (YAML, or JSON, which yaml-cpp reads as YAML's flow
// style) and expanding it into cells. Every refusal is Error(Input) whose file
// is "SUITE.yaml:LINE" and whose message names the key:
//
//   suite.yaml:7: key 'axes.batch': duplicate value 1 (also at line 6): each cell must be defined once
//
// The keys and their meaning: docs/suites.md, "The suite file".
#pragma once

#include <string>
#include <vector>

#include "modelstat/suite.hpp"

namespace modelstat::suite {

// Reads, checks and resolves `path`: model files must exist (they are hashed),
// runner names must be defined, no two cells may be the same work.
SuiteSpec load_suite(const std::string& path);

// Every cell, in the expansion order: models (file order), then runtime,
// device, dtype, fusion, mode, batch, threads (the last varies fastest).
std::vector<Cell> expand_cells(const SuiteSpec& spec);

// The `modelstat profile` flags of the stopping rule (`profile:` keys) and of
// whether the per-layer pass runs (`layers`, default false: --no-layers).
std::vector<std::string> profile_rule_flags(const SuiteSpec& spec);

// The seconds one cell is expected to take at most with this stopping rule
// (start + model load + warm-up + measurement, per-layer pass included when
// asked): what `suite slurm` packs cells by. An estimate, said as one.
double cell_seconds_estimate(const SuiteSpec& spec);

}  // namespace modelstat::suite

// `modelstat suite run|cell|slurm|collect` (tools/suite_command.cc) and
// `modelstat results [compare]` (tools/results_command.cc): suites across
// machines, their results database and what is read from it (docs/suites.md).
#pragma once

#include <CLI/CLI.hpp>
#include <vector>

#include "tools/cli_common.hpp"

namespace modelstat::cli {

// --threshold of `compare` and `results compare`: "5%" -> 0.05, "0.05" -> 0.05
// (compare_command.cc). Error(Usage) for anything else.
double parse_threshold(const std::string& text);

// Where `suite run|collect` and `results` keep their database unless told: the data folder's results.db.
std::string default_results_db();

void add_suite_command(CLI::App& app, std::vector<Command>& commands);
void add_results_command(CLI::App& app, std::vector<Command>& commands);

}  // namespace modelstat::cli

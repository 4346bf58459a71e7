// Running one cell (METHODOLOGY rule 16: one cell, one process). The suite
// never links the profiler: a cell is `modelstat profile ... -f json` in a
// process of its own (or an external runner's command, after `modelstat
// analyze ... -f json` for the static totals), then `modelstat fit ... -f
// json` for the forecast. Their JSON documents are read back with the
// project's readers; nothing is re-derived that they already state.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "modelstat/suite.hpp"

namespace modelstat::suite {

struct CellRunSetup {
  std::string modelstat;  // the binary whose subcommands run the cell (this one, normally)
  Machine machine;
  Environment environment;  // the part every cell shares; libraries are added per cell
  std::string run_id;
  // Where `fit: auto` keeps the ceilings it measures per device and thread
  // count (`modelstat device --quick`), when `modelstat device` saved none for
  // that thread count.
  std::string ceilings_dir;
  std::function<void(const std::string&)> note;  // says what it is doing besides the cell (may be empty)
};

// Runs `cell` and returns its result: status "ok", or "failed" with the exit
// code, the kind of error and the message of the step that failed (the suite
// goes on). nullopt when the suite was asked to stop while the cell ran: such
// a cell is not recorded, and runs again on --resume.
std::optional<CellResult> run_cell(const SuiteSpec& spec, const Cell& cell, const CellRunSetup& setup);

// This process's binary (/proc/self/exe).
std::string self_binary();

// Where modelstat keeps data by default: $XDG_DATA_HOME/modelstat, else
// ~/.local/share/modelstat (the default results database lives there).
std::string default_data_dir();

}  // namespace modelstat::suite

// modelstat._profiler: profile and report (LibTorch), imported by the
// modelstat package only when one of them is called, so that `import
// modelstat` and analysis never load LibTorch (as the binaries split them).
// Debian's python3-torch uses the same libtorch shared libraries, so a process
// that also imports torch holds one copy of LibTorch.
#include "python/module_support.hpp"

namespace {

void add_measuring_commands(CLI::App& app, std::vector<modelstat::cli::Command>& commands) {
  modelstat::cli::add_profiler_commands(app, commands);
  modelstat::cli::add_report_command(app, commands);
}

}  // namespace

PYBIND11_MODULE(_profiler, m) {
  m.doc() = "modelstat's profile and report (LibTorch); use the modelstat package, not this module";
  modelstat::python::register_error_translator();
  m.def(
      "run", [](std::vector<std::string> args) { return modelstat::python::run_command(add_measuring_commands, args); },
      "Runs one subcommand (profile, report) from its command-line arguments; returns (json, table, exit_code)");
}

// modelstat._core: analyze, fit and compare, in process and without LibTorch
// (as the `modelstat` binary). modelstat/__init__.py is the Python API.
#include "python/module_support.hpp"

namespace {

void add_core_commands(CLI::App& app, std::vector<modelstat::cli::Command>& commands) {
  modelstat::cli::add_analyze_command(app, commands, /*exit_fast=*/false);
  modelstat::cli::add_fit_command(app, commands);
  modelstat::cli::add_compare_command(app, commands);
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "modelstat's analyze, fit and compare (no LibTorch); use the modelstat package, not this module";
  modelstat::python::register_error_translator();
  m.attr("version") = MODELSTAT_VERSION;
  m.def("run", [](std::vector<std::string> args) { return modelstat::python::run_command(add_core_commands, args); },
        "Runs one subcommand (analyze, fit, compare) from its command-line arguments; returns (json, table, "
        "exit_code)");
}

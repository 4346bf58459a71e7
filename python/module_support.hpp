// What the two extension modules share: running one subcommand as the command
// line would, with the GIL released, and turning modelstat::Error into the
// Python exception of its kind (modelstat/_errors.py).
//
// A module function gets the subcommand's arguments as the command line takes
// them (modelstat/__init__.py builds them from keyword arguments), so every
// flag is parsed and validated by the one CLI11 definition, and returns the
// command's Rendered record: the -f json document and the -f table text.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "modelstat/error.hpp"
#include "tools/cli_common.hpp"

namespace modelstat::python {

namespace py = pybind11;

using AddCommands = std::function<void(CLI::App&, std::vector<cli::Command>&)>;

inline const char* kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Usage: return "usage";
    case ErrorKind::Input: return "input";
    case ErrorKind::Runtime: return "runtime";
    case ErrorKind::CannotRun: return "cannot_run";
  }
  return "runtime";
}

// modelstat::Error -> modelstat.UsageError / InputError / RuntimeFailure /
// CannotRunError, with the message the command line prints after
// "modelstat: error: ", and the error's kind, exit code, file, node and op.
inline void register_error_translator() {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      const py::object errors = py::module_::import("modelstat._errors");
      const py::object instance = errors.attr("make_error")(kind_name(e.kind()), std::string(e.what()), e.file(),
                                                            e.node(), e.op());
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(instance.ptr())), instance.ptr());
    }
  });
}

// Parses `args` (subcommand first) with the commands `add` defines and renders
// the one that was named. A CLI11 parse error is Error(Usage) with CLI11's
// message, as the command line reports it (exit 2).
inline py::tuple run_command(const AddCommands& add, std::vector<std::string> args) {
  cli::Rendered rendered;
  {
    py::gil_scoped_release release;  // parsing, analysis and measurement hold no Python object
    CLI::App app{"modelstat"};
    app.name("modelstat");
    app.require_subcommand(1, 1);
    std::vector<cli::Command> commands;
    add(app, commands);
    const std::string subcommand = args.empty() ? std::string() : args.front();
    try {
      std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector (and consumes it)
      app.parse(args);
    } catch (const CLI::CallForHelp&) {
      throw Error(ErrorKind::Usage, "help: see help(modelstat." + subcommand + ") in Python, or `modelstat " +
                                        subcommand + " --help`, for the keywords (the command's flags)");
    } catch (const CLI::ParseError& e) {
      throw Error(ErrorKind::Usage, e.what());
    }
    const cli::Command* chosen = nullptr;
    for (const cli::Command& c : commands)
      if (*c.app) chosen = &c;
    if (chosen == nullptr || !chosen->render)
      throw Error(ErrorKind::Usage, "this subcommand has no record to return to Python");
    rendered = chosen->render();
  }
  return py::make_tuple(rendered.json, rendered.table, rendered.exit_code);
}

}  // namespace modelstat::python

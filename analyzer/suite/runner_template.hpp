// An external runner's command template (docs/suites.md, "Runtimes"): each
// element of the argument vector is expanded on its own, so a value holding
// spaces, quotes or ';' stays one argument and never reaches a shell.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "modelstat/suite.hpp"

namespace modelstat::suite {

// The placeholders a template may use, each with what it becomes.
const std::map<std::string, std::string>& runner_placeholders();

// Replaces every {name} in each element by values.at(name) ("{{" and "}}" are
// literal braces). Error(Input) naming the runner and the element when a
// placeholder is unknown or a brace is unmatched; `where` ("suite.yaml:12")
// says where the template was written.
std::vector<std::string> expand_command(const RunnerTemplate& runner, const std::map<std::string, std::string>& values,
                                        const std::string& where);

// Checks a template against runner_placeholders() without values (load time).
void check_command(const RunnerTemplate& runner, const std::string& where);

}  // namespace modelstat::suite

// Bash completion for `modelstat`, generated from the CLI11 apps
// (`modelstat --bash-completion`; installed as share/bash-completion/completions/modelstat).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace modelstat::cli {

// One line per subcommand of `app`, "NAME<TAB>FLAG FLAG ...", the first line
// "<TAB>" + the app's own flags. Hidden flags (no group) are left out.
std::string completion_words(const CLI::App& app);

// The bash script completing subcommands, their flags and file names, from
// `modelstat`'s own words and modelstat-profiler's (whose lines replace the
// stubs of profile, verify, report and device); profiler_words may be empty.
std::string bash_completion_script(const std::string& own_words, const std::string& profiler_words);

}  // namespace modelstat::cli

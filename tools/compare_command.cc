// `modelstat compare`. (Being written: see the issue.)
#include "tools/cli_common.hpp"

namespace modelstat::cli {

void add_compare_command(CLI::App& app, std::vector<Command>& commands) {
  CLI::App* cmd = app.add_subcommand("compare", "(not yet implemented)");
  cmd->allow_extras();
  commands.push_back({cmd, []() -> int { throw Error(ErrorKind::Runtime, "'compare' is not implemented yet"); }});
}

}  // namespace modelstat::cli

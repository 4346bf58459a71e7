// `modelstat report`. (Being written: see the issue.)
#include "tools/cli_common.hpp"

namespace modelstat::cli {

void add_report_command(CLI::App& app, std::vector<Command>& commands) {
  CLI::App* cmd = app.add_subcommand("report", "(not yet implemented)");
  cmd->allow_extras();
  commands.push_back({cmd, []() -> int { throw Error(ErrorKind::Runtime, "'report' is not implemented yet"); }});
}

}  // namespace modelstat::cli

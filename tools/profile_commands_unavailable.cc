// Built instead of profile_commands.cc when LibTorch is not (MODELSTAT_WITH_TORCH=OFF):
// the subcommands exist and say why they cannot run.
#include "tools/cli_common.hpp"

namespace modelstat::cli {

void add_profiler_commands(CLI::App& app, std::vector<Command>& commands) {
  for (const char* name : {"profile", "verify"}) {
    CLI::App* cmd = app.add_subcommand(name, std::string(name) + " (unavailable: built without LibTorch)");
    cmd->allow_extras();
    commands.push_back({cmd, [name]() -> int {
                          throw Error(ErrorKind::Usage, std::string("'") + name +
                                                            "' needs the LibTorch profiler: rebuild with "
                                                            "-DMODELSTAT_WITH_TORCH=ON (Debian: libtorch-dev)");
                        }});
  }
}

}  // namespace modelstat::cli

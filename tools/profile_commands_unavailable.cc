// In the `modelstat` binary, profile and verify are listed for --help only:
// main() hands them, with all their arguments, to the modelstat-profiler
// binary beside it before parsing (see tools/profiler_main.cc). When that
// binary was not built (no LibTorch), they say so.
#include "tools/cli_common.hpp"

namespace modelstat::cli {

void add_profiler_commands(CLI::App& app, std::vector<Command>& commands) {
  const char* const help[][2] = {
      {"profile", "Measure whole-model and per-layer latency with LibTorch (CPU or CUDA); see 'modelstat profile --help'"},
      {"verify", "Run an ONNX test case through the executor and compare outputs; see 'modelstat verify --help'"},
      {"report", "Per-layer FLOPs vs measured latency on the device's roofline; see 'modelstat report --help'"},
      {"device", "Measure and save this device's ceilings; see 'modelstat device --help'"},
      {"pipeline", "Several models and host work in one path, each stage timed; see 'modelstat pipeline --help'"}};
  for (const auto& [name, text] : help) {
    CLI::App* cmd = app.add_subcommand(name, text);
    cmd->allow_extras();
    commands.push_back({cmd, [n = std::string(name)]() -> int {
                          throw Error(ErrorKind::Usage, "'" + n +
                                                            "' needs the LibTorch profiler (modelstat-profiler), "
                                                            "which this build lacks: rebuild with "
                                                            "-DMODELSTAT_WITH_TORCH=ON (Debian: libtorch-dev)");
                        },
                        {}});
  }
}

}  // namespace modelstat::cli

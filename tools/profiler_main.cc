// modelstat-profiler: the subcommands that need LibTorch (profile, verify, report, device, pipeline).
// `modelstat profile ...` and `modelstat verify ...` hand over to this binary
// (tools/modelstat_main.cc), so that `modelstat analyze` never loads LibTorch:
// its start-up alone costs ~0.5 s and ~150 MB, more than analysing VGG-16.
#include <unistd.h>

#include "tools/cli_common.hpp"
#include "tools/completion.hpp"

int main(int argc, char** argv) {
  // OMP_WAIT_POLICY must be in the environment before libgomp loads (it was
  // loaded with LibTorch before main): started directly without it, start
  // again with it (modelstat's own launcher sets it before the exec).
  if (modelstat::cli::default_openmp_wait_policy()) {
    execv("/proc/self/exe", argv);
    // Could not re-exec (no /proc): run on, with libgomp's default; the context says so.
    if (const char* chooser = std::getenv("MODELSTAT_OMP_WAIT_POLICY"); chooser && std::string(chooser) == "default") {
      unsetenv("OMP_WAIT_POLICY");
      unsetenv("MODELSTAT_OMP_WAIT_POLICY");
      if (std::getenv("MODELSTAT_CPU_BUSY_AT_START")) {  // the spin count was ours too
        unsetenv("GOMP_SPINCOUNT");
        unsetenv("MODELSTAT_CPU_BUSY_AT_START");
      }
    }
    if (const char* chooser = std::getenv("MODELSTAT_OPENBLAS_THREAD_TIMEOUT");
        chooser && std::string(chooser) == "default") {
      unsetenv("OPENBLAS_THREAD_TIMEOUT");
      unsetenv("MODELSTAT_OPENBLAS_THREAD_TIMEOUT");
    }
  }
  CLI::App app{"modelstat profile / verify / report / device (LibTorch). Run through 'modelstat <subcommand>'."};
  app.name("modelstat");
  app.require_subcommand(1, 1);
  std::vector<modelstat::cli::Command> commands;
  modelstat::cli::add_profiler_commands(app, commands);
  modelstat::cli::add_report_command(app, commands);
  modelstat::cli::add_device_command(app, commands);
  modelstat::cli::add_pipeline_command(app, commands);
  // For `modelstat --bash-completion` (tools/completion.hpp).
  if (argc == 2 && std::string(argv[1]) == "--completion-words") {
    std::cout << modelstat::cli::completion_words(app);
    return 0;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return modelstat::cli::exit_for_parse_error(app, e);
  }
  return modelstat::cli::run_mapping_errors([&]() -> int {
    for (const auto& c : commands)
      if (*c.app) return c.run();
    return 2;
  });
}

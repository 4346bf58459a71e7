// The modelstat command line. Only this file catches errors and maps them to
// exit codes: 0 ok, 1 runtime failure, 2 bad usage or bad input.
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <new>

#include "analyzer/cost/cost_rule.hpp"
#include "analyzer/suite/machine.hpp"
#include "modelstat/analysis.hpp"
#include "modelstat/error.hpp"
#include "tools/cli_common.hpp"
#include "tools/completion.hpp"
#include "tools/suite_commands.hpp"
#include "tools/writers/writers.hpp"


namespace {


int list_ops() {
  const auto& rules = modelstat::cost::all_rules();
  std::cout << fmt::format("{} cost rules (domain '' is ai.onnx). Convention: {}\n\n", rules.size(),
                           modelstat::kCostConvention);
  for (const auto& r : rules) {
    std::string range = "opset " + std::to_string(r.key.since_version) + "+";
    if (r.key.until_version != std::numeric_limits<int64_t>::max())
      range = "opset " + std::to_string(r.key.since_version) + "-" + std::to_string(r.key.until_version);
    std::cout << fmt::format("{:<28} {:<12} {}\n",
                             (r.key.domain.empty() ? "" : r.key.domain + "::") + r.key.op_type, range, r.doc);
  }
  return 0;
}

// `modelstat model.onnx ...` is `modelstat analyze model.onnx ...`.
std::vector<std::string> with_default_subcommand(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  static const char* const subcommands[] = {"analyze", "ops", "profile", "verify", "report", "device", "fit", "compare", "pipeline", "suite", "results"};
  if (!args.empty() && args[0][0] != '-') {
    bool known = false;
    for (const char* s : subcommands) known = known || args[0] == s;
    if (!known) args.insert(args.begin(), "analyze");
  }
  return args;
}


// modelstat-profiler: beside this binary in a build folder, else where
// `cmake --install` puts it relative to the installed binary
// (MODELSTAT_PROFILER_RELPATH, e.g. ../libexec/modelstat/modelstat-profiler).
// "" when neither exists (built without LibTorch).
std::string profiler_path() {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return {};
  self[n] = '\0';
  const std::string dir = std::string(self, self + n).substr(0, std::string(self).rfind('/') + 1);
  for (const std::string& candidate : {dir + "modelstat-profiler", dir + MODELSTAT_PROFILER_RELPATH})
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  return {};
}

// `modelstat profile|verify|report|device ARGS` runs `modelstat-profiler ... ARGS`,
// so that analysis never loads LibTorch.
void forward_to_profiler(int argc, char** argv) {
  if (argc < 2) return;
  const std::string sub = argv[1];
  if (!modelstat::cli::is_profiler_subcommand(sub)) return;
  const std::string path = profiler_path();
  if (path.empty()) return;  // not built: the stub subcommand explains
  std::vector<char*> args(argv, argv + argc);
  args[0] = const_cast<char*>(path.c_str());
  args.push_back(nullptr);
  modelstat::cli::default_openmp_wait_policy();
  execv(path.c_str(), args.data());
  std::fprintf(stderr, "modelstat: error: cannot run %s: %s\n", path.c_str(), std::strerror(errno));
  std::exit(1);
}

// `modelstat fit` without saved ceilings: quick ones measured by
// `modelstat-profiler device --quick --no-save` into a temporary JSON file
// (fit links no LibTorch), its progress on standard error.
modelstat::DeviceCeilings measure_quick_ceilings(const std::string& device) {
  using modelstat::Error;
  using modelstat::ErrorKind;
  const std::string profiler = profiler_path();
  if (profiler.empty())
    throw Error(ErrorKind::Usage, "no saved " + device +
                                      " ceilings, and this build has no modelstat-profiler (LibTorch) to measure "
                                      "quick ones: pass --ceilings FILE or --datasheet NAME");
  char dir_template[] = "/tmp/modelstat-quick-ceilings-XXXXXX";
  if (mkdtemp(dir_template) == nullptr)
    throw Error(ErrorKind::Runtime, std::string("cannot create a temporary folder for quick ceilings: ") +
                                        std::strerror(errno));
  const std::string dir = dir_template, file = dir + "/ceilings.json";
  auto cleanup = [&] {
    unlink(file.c_str());
    rmdir(dir.c_str());
  };
  std::vector<std::string> words = {profiler, "device", "--device", device, "--quick", "--no-save",
                                    "-f",     "json",   "-o",       file};
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  modelstat::cli::default_openmp_wait_policy();
  const pid_t child = fork();
  if (child == 0) {
    dup2(STDERR_FILENO, STDOUT_FILENO);  // fit's standard output stays its report
    execv(profiler.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    cleanup();
    throw Error(ErrorKind::Runtime, "quick ceilings: '" + profiler + " device --quick' failed" +
                                        (WIFEXITED(status) ? " (exit " + std::to_string(WEXITSTATUS(status)) + ")"
                                                           : std::string()) +
                                        "; pass --ceilings FILE or --datasheet NAME");
  }
  std::optional<modelstat::DeviceCeilings> c = modelstat::load_ceilings(file);
  cleanup();
  if (!c) throw Error(ErrorKind::Runtime, "quick ceilings: " + file + " was not written by 'device --quick'");
  return *c;
}

// modelstat-profiler's subcommands and flags (`modelstat-profiler
// --completion-words`), "" without it.
std::string profiler_completion_words() {
  const std::string path = profiler_path();
  if (path.empty()) return {};
  FILE* pipe = popen(("'" + path + "' --completion-words").c_str(), "r");
  if (pipe == nullptr) return {};
  std::string out;
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  return pclose(pipe) == 0 ? out : std::string();
}

}  // namespace

int main(int argc, char** argv) {
  forward_to_profiler(argc, argv);
  CLI::App app{
      "modelstat: what a neural network costs and where its time goes.\n"
      "  modelstat model.onnx            per-layer params, MACs, FLOPs, bytes and memory (same as 'analyze')\n"
      "  modelstat ops                   the documented cost rule of every supported op\n"
      "  modelstat profile model.onnx    measured whole-model and per-layer latency (LibTorch, CPU or CUDA)\n"
      "  modelstat verify CASE_DIR       run an ONNX test case and compare with its expected outputs\n"
      "  modelstat report model.onnx     FLOPs vs measured latency per layer on the device's roofline (html, trace, ...)\n"
      "  modelstat device                measure and save this device's ceilings (bandwidth, matmul FLOP/s)\n"
      "  modelstat pipeline PIPE.json    several models and host work in one path, each stage timed without stalling it\n"
      "  modelstat fit model.onnx        memory and latency forecast for inference or training, against budgets\n"
      "  modelstat compare a.json b.json per-node and total deltas with significance; exit 1 on a regression\n"
      "  modelstat suite run SUITE.yaml  models x batch x threads x ... one cell per process, into a results database\n"
      "  modelstat results results.db    the results across machines: table, CSV, JSON, Markdown, HTML; compare\n"
      "Exit codes: 0 ok, 1 runtime failure, 2 bad usage or bad input."};
  app.name("modelstat");
  // The CMake project version and the commit built (cmake/build_info.cmake: "-dirty" with local changes).
  app.set_version_flag("--version", std::string("modelstat ") + modelstat::suite::build_version() + " (commit " +
                                        modelstat::suite::build_commit() + ")");
  app.require_subcommand(0, 1);

  std::vector<modelstat::cli::Command> commands;
  modelstat::cli::add_analyze_command(app, commands, /*exit_fast=*/true);
  CLI::App* ops = app.add_subcommand("ops", "List every op with a cost rule and its formula");
  modelstat::cli::add_profiler_commands(app, commands);
  modelstat::cli::add_fit_command(app, commands, measure_quick_ceilings);
  modelstat::cli::add_compare_command(app, commands);
  modelstat::cli::add_suite_command(app, commands);
  modelstat::cli::add_results_command(app, commands);

  // Hidden: the bash completion script, generated from the apps (tools/completion.hpp).
  if (argc == 2 && std::string(argv[1]) == "--bash-completion") {
    std::cout << modelstat::cli::bash_completion_script(modelstat::cli::completion_words(app),
                                                        profiler_completion_words());
    return 0;
  }

  try {
    std::vector<std::string> args = with_default_subcommand(argc, argv);
    std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return modelstat::cli::exit_for_parse_error(app, e);
  }

  return modelstat::cli::run_mapping_errors([&]() -> int {
    if (*ops) return list_ops();
    for (const auto& c : commands)
      if (*c.app) return c.run();
    std::cout << app.help();
    return 2;
  });
}

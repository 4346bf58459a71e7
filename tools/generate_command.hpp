// `profile --generate P:G` and `report --generate P:G` (generate_command.cc):
// the flags of the generation loop, and the run that profile and report hand
// over to when --generate is given (docs/generation.md).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "modelstat/ceilings.hpp"
#include "modelstat/generation.hpp"
#include "tools/cli_common.hpp"
#include "tools/profile_flags.hpp"

namespace modelstat::cli {

struct GenerationArgs {
  std::string generate;  // "P:G" as typed; empty: no generation
  std::string tokens = "greedy";
  std::string slo;       // "ttft=500ms,tpot=30ms" or "mlperf:NAME"
  CLI::App* command = nullptr;  // where the flags were added (which measurement flags were given)

  bool requested() const { return !generate.empty(); }
};

// --generate, --tokens, --slo on `profile` or `report`.
void add_generation_flags(CLI::App& cmd, GenerationArgs& args);

// "ttft=500ms,tpot=30ms" (either or both) or "mlperf:NAME" (the TTFT / TPOT
// limits of MLPerf Inference's Server scenario). Throws Error(Usage).
Slo parse_slo(const std::string& text);

// What `report --generate` adds to `profile --generate`: ceilings named on
// the command line (else the saved or quick ones) and the files of other
// formats written from the same run (format -> path).
struct GenerationReport {
  std::optional<DeviceCeilings> ceilings;
  std::map<std::string, std::string> extra_outputs;
};

// Runs the generation and writes it in the format asked (and, for report,
// the extra files); returns the exit code: kSloNotMetExitCode when an
// objective of --slo is not met, else 0.
int run_generation(const ProfileArgs& profile, const GenerationArgs& generation,
                   const std::optional<GenerationReport>& report);
// The same, rendered as JSON and table for the Python module.
Rendered render_generation(const ProfileArgs& profile, const GenerationArgs& generation,
                           const std::optional<GenerationReport>& report);

}  // namespace modelstat::cli

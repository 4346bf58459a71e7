// The flags of `modelstat profile`, shared by every subcommand that profiles
// (profile, report): one definition, so the two never drift apart.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "modelstat/profile.hpp"
#include "tools/cli_common.hpp"

namespace modelstat::cli {

struct ProfileArgs {
  ModelArgs model;
  OutputArgs output;
  ProfileOptions options;
  std::string batch_sweep;  // "1,2,4" as typed
  bool no_layers = false;
  bool no_fuse = false;
  std::string fusion = "on";  // --fusion on|off; --no-fuse is off

  // Checks cross-flag rules and fills options from the raw flag values. Throws Error(Usage).
  void finish();
};

// Where and how long to measure, shared with `pipeline`: --device, --dtype, --threads, --warmup,
// --warmup-time, --iters, --max-iters, --min-time, --max-time, --target-rel-ci, --seed, --input-sets.
void add_measurement_flags(CLI::App& cmd, ProfileOptions& options);

// Model, output and measurement flags (--device, --dtype, --threads, --warmup, ...).
// formats: what -f accepts (add_output_flags).
void add_profile_flags(CLI::App& cmd, ProfileArgs& args,
                       const std::vector<std::string>& formats = {"table", "json", "csv", "md"});

}  // namespace modelstat::cli

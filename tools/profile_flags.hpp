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
  CLI::App* command = nullptr;  // the subcommand parsed (add_profile_flags): which flags were given
  // What finish() changed on the user's behalf (a --max-time below the default
  // --min-time lowers it), for the result's notices.
  std::vector<std::string> notices;

  // Checks cross-flag rules and fills options from the raw flag values. Throws Error(Usage).
  void finish();
};

// Where and how long to measure, shared with `pipeline`: --device, --dtype, --threads, --warmup,
// --warmup-time, --iters, --max-iters, --min-time, --max-time, --target-rel-ci, --seed, --input-sets.
void add_measurement_flags(CLI::App& cmd, ProfileOptions& options);

// --max-time below --min-time: an error when both were given; when --min-time
// is its default, the minimum is lowered to --max-time and a notice says so
// (the user asked for at most that long). cmd: the parsed subcommand (nullptr:
// --min-time counts as given).
void lower_min_time_to_max_time(const CLI::App* cmd, ProfileOptions& options, std::vector<std::string>& notices);

// Model, output and measurement flags (--device, --dtype, --threads, --warmup, ...).
// formats: what -f accepts (add_output_flags).
void add_profile_flags(CLI::App& cmd, ProfileArgs& args,
                       const std::vector<std::string>& formats = {"table", "json", "csv", "md"});

}  // namespace modelstat::cli

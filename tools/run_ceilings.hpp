// The ceilings a measured run is placed under when the command line names
// none (`report`, `profile --generate`): the ones `modelstat device` saved for
// this device, when they are of this run (run_ceilings.cc).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "modelstat/ceilings.hpp"
#include "modelstat/profile.hpp"

namespace modelstat::cli {

// Why saved ceilings do not fit this run ("" when they do): another kind of
// device, another device of that kind, or (CPU) another thread count.
std::string ceilings_mismatch(const DeviceCeilings& c, const RunContext& run);

// The saved ceilings of this device when they fit the run; nullopt otherwise,
// with why in `why`.
std::optional<DeviceCeilings> saved_ceilings(const ProfileOptions& options, const RunContext& run, std::string& why);

// The saved ceilings when they fit the run, else quick ones measured now (a
// few seconds), the choice said in a notice.
DeviceCeilings saved_or_quick_ceilings(const ProfileOptions& options, const RunContext& run,
                                       std::vector<std::string>& notices);

}  // namespace modelstat::cli

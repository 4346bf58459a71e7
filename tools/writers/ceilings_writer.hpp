// `modelstat device` output: the human table of a DeviceCeilings (the JSON is
// ceilings_to_json, modelstat/ceilings.hpp). Formats only.
#pragma once

#include <ostream>
#include <string>

#include "modelstat/ceilings.hpp"
#include "tools/writers/units.hpp"

namespace modelstat::report {

struct CeilingsTableExtras {
  double probe_seconds = -1;  // how long the probe took; < 0: not shown
  std::string saved_path;     // where the ceilings were saved; empty: not saved
};

void write_ceilings_table(const DeviceCeilings& ceilings, const CeilingsTableExtras& extras, std::ostream& out);

// human_flops_rate (9.53e10 -> "95.3 GFLOP/s") and human_bandwidth: units.hpp.
using modelstat::human_bandwidth;
using modelstat::human_flops_rate;

}  // namespace modelstat::report

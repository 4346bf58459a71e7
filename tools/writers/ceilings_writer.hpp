// `modelstat device` output: the human table of a DeviceCeilings (the JSON is
// ceilings_to_json, modelstat/ceilings.hpp). Formats only.
#pragma once

#include <ostream>
#include <string>

#include "modelstat/ceilings.hpp"

namespace modelstat::report {

struct CeilingsTableExtras {
  double probe_seconds = -1;  // how long the probe took; < 0: not shown
  std::string saved_path;     // where the ceilings were saved; empty: not saved
};

void write_ceilings_table(const DeviceCeilings& ceilings, const CeilingsTableExtras& extras, std::ostream& out);

// 3 significant digits in a unit that keeps the number readable:
// 9.53e10 -> "95.3 GFLOP/s", 1.234e12 -> "1.23 TFLOP/s", 5e8 -> "0.500 GFLOP/s".
std::string human_flops_rate(double flops_per_second);
// Bytes per second in GB/s (10^9), 3 significant digits: 1.234e10 -> "12.3 GB/s".
std::string human_bandwidth(double bytes_per_second);

}  // namespace modelstat::report

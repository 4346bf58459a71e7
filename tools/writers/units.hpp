// Human units: one family of formatters, one per unit, used by every writer
// (as nvbench formats a value by its hint in one place). A writer picks the
// formatter for what it prints, never formats a unit itself.
//
//   seconds  human_seconds  "230 ns", "5.00 µs", "1.23 ms", "47.0 s"      (text, tables)
//            seconds_label  "1 ms", "20 µs"                                  (chart ticks)
//   bytes    human_bytes    "512 B", "1.50 KiB", "44.6 MiB"                 (IEC)
//            bytes_with_exact "44.59 MiB (46,758,048 bytes)"; mib "256 MiB"
//   counts   human_count    "1.81 G", "11.69 M", "4.20 K" (SI; FLOPs, MACs, params)
//            count_with_exact "11.69 M (11,689,512)"; group_digits "1,234,567"
//            mean_count     "5", "2.50" (a mean of counts: calls per run)
//   rates    rate_text      "0.52", "12.3", "813", "12,345"  (the unit is in the header)
//            si_rate        "51.2 TFLOP/s", "2.00 GB/s"  (SI prefix, fixed decimals)
//            si_text/si_label "12.3 GFLOP/s" / "1G"     (SI prefix, %g: charts)
//            human_flops_rate "95.3 GFLOP/s", "1.23 TFLOP/s"; human_bandwidth "12.3 GB/s"
//            three_digits   "0.500", "95.3", "1234" (a column in one unit: no prefix)
//
// The one rule behind every prefix: scale_to_prefix. A value is divided by the
// base while it is at least the base, and once more when the number as it will
// be printed rounds up to the base: 999.96 K printed with two decimals would be
// "1000.00 K", so it is "1.00 M" (the fix that used to be written per formatter).
// Every formatter prints "-" for a value that is not finite (not known).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace modelstat {

// Decimals that print magnitude with three significant digits once rounded:
// 2 under 9.995, 1 under 99.95, else 0 (9.996 is "10.0", not "10.00").
int three_digit_decimals(double magnitude);

struct Scaled {
  double value = 0;  // magnitude / base^step
  size_t step = 0;   // how many prefixes up
};
// magnitude >= 0; steps stop at last_step; decimals(value) is how the caller prints it.
Scaled scale_to_prefix(double magnitude, double base, size_t last_step, int (*decimals)(double));
// Whether v printed with `decimals` decimals reads as base or more (the rollover test).
bool rounds_to_base(double v, int decimals, double base);

// ------------------------------------------------------------------ seconds
std::string human_seconds(double seconds);
std::string seconds_label(double seconds);

// -------------------------------------------------------------------- bytes
std::string human_bytes(int64_t n);
std::string bytes_with_exact(int64_t n);
std::string mib(int64_t bytes);  // whole MiB: buffer sizes of the ceilings probe

// ------------------------------------------------------------------- counts
std::string human_count(int64_t n);
std::string count_with_exact(int64_t n);
std::string group_digits(int64_t n);
// A whole mean as an integer ("5", "1,024"), else rate_text's three digits ("2.50").
std::string mean_count(double v);

// -------------------------------------------------------------------- rates
std::string rate_text(double v);
std::string rate_text(const std::optional<double>& v);
// "-" also when not positive.
std::string si_rate(double per_second, const std::string& unit);
std::string si_label(double value);
std::string si_text(double value, const std::string& unit);
// FLOP/s in GFLOP/s, or TFLOP/s from 1e12 (3 significant digits, "0.500 GFLOP/s" below 1).
std::string human_flops_rate(double flops_per_second);
// Bytes per second in GB/s (10^9), 3 significant digits: 1.234e10 -> "12.3 GB/s".
std::string human_bandwidth(double bytes_per_second);
std::string three_digits(double v);

// The family, under the names the writers' namespaces use.
namespace report_detail {
using modelstat::bytes_with_exact;
using modelstat::count_with_exact;
using modelstat::group_digits;
using modelstat::human_bytes;
using modelstat::human_count;
using modelstat::human_seconds;
using modelstat::mean_count;
using modelstat::rate_text;
}  // namespace report_detail

}  // namespace modelstat

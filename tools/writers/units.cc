// The human-unit formatters of units.hpp and the one prefix rule they share.
#include "tools/writers/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

namespace modelstat {

namespace {

// Magnitude of n as an unsigned value (correct for INT64_MIN too).
uint64_t magnitude(int64_t n) { return n < 0 ? uint64_t(0) - uint64_t(n) : uint64_t(n); }

int two_decimals(double) { return 2; }
int bytes_decimals(double v) { return v < 10.0 ? 2 : 1; }  // 1.50 KiB, 44.6 MiB
// three_digits: like three_digit_decimals, with a third decimal under 1 ("0.500").
int plain_decimals(double v) { return v < 0.9995 ? 3 : three_digit_decimals(v); }

const char* const kSecondUnits[] = {"ns", "\xC2\xB5s", "ms", "s"};  // "µs"

}  // namespace

int three_digit_decimals(double magnitude) { return magnitude >= 99.95 ? 0 : magnitude >= 9.995 ? 1 : 2; }

bool rounds_to_base(double v, int decimals, double base) {
  const double p = std::pow(10.0, decimals);
  return std::round(v * p) / p >= base;
}

Scaled scale_to_prefix(double magnitude, double base, size_t last_step, int (*decimals)(double)) {
  Scaled s{magnitude, 0};
  while (s.value >= base && s.step < last_step) {
    s.value /= base;
    ++s.step;
  }
  if (s.step < last_step && rounds_to_base(s.value, decimals(s.value), base)) {
    s.value /= base;
    ++s.step;
  }
  return s;
}

// ------------------------------------------------------------------ seconds

std::string human_seconds(double seconds) {
  if (!std::isfinite(seconds)) return "-";
  if (seconds == 0) return "0 s";
  const double mag = std::fabs(seconds);
  const char* sign = seconds < 0 ? "-" : "";
  if (mag < 1e-9) return fmt::format("{}{:.3g} ns", sign, mag * 1e9);
  const Scaled s = scale_to_prefix(mag * 1e9, 1000.0, std::size(kSecondUnits) - 1, three_digit_decimals);
  return fmt::format("{}{:.{}f} {}", sign, s.value, three_digit_decimals(s.value), kSecondUnits[s.step]);
}

std::string seconds_label(double seconds) {
  if (!std::isfinite(seconds)) return "-";
  if (seconds == 0) return "0";
  const Scaled s =
      scale_to_prefix(std::fabs(seconds) * 1e9, 1000.0, std::size(kSecondUnits) - 1, three_digit_decimals);
  return fmt::format("{}{:.3g} {}", seconds < 0 ? "-" : "", s.value, kSecondUnits[s.step]);
}

// -------------------------------------------------------------------- bytes

std::string human_bytes(int64_t n) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  const uint64_t mag = magnitude(n);
  if (mag < 1024) return fmt::format("{} B", n);
  const Scaled s = scale_to_prefix(double(mag), 1024.0, std::size(kUnits) - 1, bytes_decimals);
  return fmt::format("{}{:.{}f} {}", n < 0 ? "-" : "", s.value, bytes_decimals(s.value), kUnits[s.step]);
}

std::string bytes_with_exact(int64_t n) {
  if (magnitude(n) < 1024) return fmt::format("{} B", n);
  return fmt::format("{} ({} bytes)", human_bytes(n), group_digits(n));
}

std::string mib(int64_t bytes) { return fmt::format("{:.0f} MiB", double(bytes) / double(1 << 20)); }

// ------------------------------------------------------------------- counts

// Decimal (SI) prefixes: these are counts of operations and elements, not bytes.
// Always two decimals above 1000 so columns of them line up: 1.81 G, 11.69 M, 4.20 K.
std::string human_count(int64_t n) {
  static const char* const kUnits[] = {"", "K", "M", "G", "T", "P", "E"};
  const uint64_t mag = magnitude(n);
  if (mag < 1000) return std::to_string(n);
  const Scaled s = scale_to_prefix(double(mag), 1000.0, std::size(kUnits) - 1, two_decimals);
  return fmt::format("{}{:.2f} {}", n < 0 ? "-" : "", s.value, kUnits[s.step]);
}

std::string count_with_exact(int64_t n) {
  if (magnitude(n) < 1000) return std::to_string(n);
  return fmt::format("{} ({})", human_count(n), group_digits(n));
}

std::string group_digits(int64_t n) {
  const std::string digits = std::to_string(magnitude(n));
  std::string out;
  out.reserve(digits.size() + digits.size() / 3 + 1);
  if (n < 0) out += '-';
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string mean_count(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15) return group_digits(int64_t(v));
  return rate_text(v);
}

// -------------------------------------------------------------------- rates

std::string rate_text(double v) {
  if (!std::isfinite(v)) return "-";
  if (std::fabs(v) >= 999.5) return group_digits(std::llround(v));
  return fmt::format("{:.{}f}", v, three_digit_decimals(std::fabs(v)));
}

std::string rate_text(const std::optional<double>& v) { return v ? rate_text(*v) : std::string("-"); }

std::string si_rate(double per_second, const std::string& unit) {
  if (!std::isfinite(per_second) || per_second <= 0) return "-";
  static const char* const kPrefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  const Scaled s = scale_to_prefix(per_second, 1000.0, std::size(kPrefixes) - 1, three_digit_decimals);
  return fmt::format("{:.{}f} {}{}", s.value, three_digit_decimals(s.value), kPrefixes[s.step], unit);
}

namespace {

// floor(log10(|v|)) that is exact at powers of ten computed with pow().
int decade_of(double v) { return int(std::floor(std::log10(std::fabs(v)) + 1e-9)); }

// {mantissa, prefix} with 3 significant digits: 1.23e10 -> {"12.3", "G"}.
std::pair<std::string, std::string> si_parts(double value) {
  static const char* const kPrefixes[] = {"p", "n", "\xC2\xB5", "m", "", "K", "M", "G", "T", "P", "E"};
  constexpr int kFirstExponent = -12, kLastExponent = 18;
  if (value == 0) return {"0", ""};
  int exponent = std::clamp(int(std::floor(double(decade_of(value)) / 3.0)) * 3, kFirstExponent, kLastExponent);
  // The prefix rule of scale_to_prefix, from a prefix found by the decade (values below 1 too).
  const double mantissa = std::fabs(value) / std::pow(10.0, exponent);
  if (exponent < kLastExponent && rounds_to_base(mantissa, three_digit_decimals(mantissa), 1000.0)) exponent += 3;
  // Between 0.001 and 1 plain decimals read better than milli-units ("0.1", not "100m").
  if (exponent < 0 && std::fabs(value) >= 1e-3) return {fmt::format("{:.3g}", value), ""};
  return {fmt::format("{:.3g}", value / std::pow(10.0, exponent)), kPrefixes[(exponent - kFirstExponent) / 3]};
}

}  // namespace

std::string si_label(double value) {
  if (!std::isfinite(value)) return "-";
  const auto [mantissa, prefix] = si_parts(value);
  return mantissa + prefix;
}

std::string si_text(double value, const std::string& unit) {
  if (!std::isfinite(value)) return "-";
  const auto [mantissa, prefix] = si_parts(value);
  return mantissa + " " + prefix + unit;
}

std::string three_digits(double v) {
  if (!std::isfinite(v)) return "-";
  return fmt::format("{:.{}f}", v, plain_decimals(std::fabs(v)));
}

std::string human_flops_rate(double f) {
  if (!std::isfinite(f)) return "-";
  const Scaled s = scale_to_prefix(std::fabs(f) / 1e9, 1000.0, 1, plain_decimals);
  return three_digits(f < 0 ? -s.value : s.value) + (s.step ? " TFLOP/s" : " GFLOP/s");
}

std::string human_bandwidth(double b) { return three_digits(b / 1e9) + " GB/s"; }

}  // namespace modelstat

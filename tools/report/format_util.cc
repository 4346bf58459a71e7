#include "tools/report/format_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "modelstat/error.hpp"

namespace modelstat {

namespace {

// Magnitude of n as an unsigned value (correct for INT64_MIN too).
uint64_t magnitude(int64_t n) {
  return n < 0 ? uint64_t(0) - uint64_t(n) : uint64_t(n);
}

}  // namespace

// Decimal (SI) prefixes: these are counts of operations and elements, not bytes.
// Always two decimals above 1000 so columns of them line up: 1.81 G, 11.69 M, 4.20 K.
std::string human_count(int64_t n) {
  static const char* const kUnits[] = {"", "K", "M", "G", "T", "P", "E"};
  const uint64_t mag = magnitude(n);
  if (mag < 1000) return std::to_string(n);
  double v = double(mag);
  size_t unit = 0;
  while (v >= 1000.0 && unit + 1 < std::size(kUnits)) {
    v /= 1000.0;
    ++unit;
  }
  // 999,999 is 999.999 K, which two decimals would print as "1000.00 K".
  if (std::round(v * 100.0) / 100.0 >= 1000.0 && unit + 1 < std::size(kUnits)) {
    v /= 1000.0;
    ++unit;
  }
  return fmt::format("{}{:.2f} {}", n < 0 ? "-" : "", v, kUnits[unit]);
}

// Binary (IEC) prefixes for bytes. Two decimals under 10 of a unit, one above:
// 1.50 KiB, 44.6 MiB.
std::string human_bytes(int64_t n) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  const uint64_t mag = magnitude(n);
  if (mag < 1024) return fmt::format("{} B", n);
  double v = double(mag);
  size_t unit = 0;
  while (v >= 1024.0 && unit + 1 < std::size(kUnits)) {
    v /= 1024.0;
    ++unit;
  }
  int decimals = v < 10.0 ? 2 : 1;
  // 1023.96 KiB would print as "1024.0 KiB": show it as the next unit instead.
  if (std::round(v * 10.0) / 10.0 >= 1024.0 && unit + 1 < std::size(kUnits)) {
    v /= 1024.0;
    ++unit;
    decimals = 2;
  }
  return fmt::format("{}{:.{}f} {}", n < 0 ? "-" : "", v, decimals, kUnits[unit]);
}

std::unique_ptr<AnalysisWriter> make_analysis_writer(const std::string& format) {
  if (format == "table") return report_detail::make_table_writer();
  if (format == "json") return report_detail::make_json_writer();
  if (format == "csv") return report_detail::make_csv_writer();
  if (format == "md") return report_detail::make_markdown_writer();
  throw Error(ErrorKind::Usage,
              fmt::format("unknown output format '{}' (expected table, json, csv or md)", format));
}

namespace report_detail {

const char* status_marker(CostStatus s) {
  switch (s) {
    case CostStatus::Exact:
      return "";
    case CostStatus::UnknownShape:
      return "?";
    case CostStatus::UnknownOp:
      return "!";
  }
  return "!";
}

const char* const kStatusLegend = "? unknown shape (cost not fully counted), ! unknown op (not counted)";

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

std::string percent(int64_t part, int64_t whole) {
  if (whole == 0) return "-";
  const double pct = 100.0 * double(part) / double(whole);
  // A share that is neither nothing nor everything never prints as 0.0% or 100.0%.
  if (part > 0 && part < whole && pct < 0.05) return "<0.1%";
  if (part > 0 && part < whole && pct >= 99.95) return ">99.9%";
  return fmt::format("{:.1f}%", pct);
}

size_t display_width(const std::string& text) {
  // Count every byte that is not a UTF-8 continuation byte (10xxxxxx).
  return size_t(std::count_if(text.begin(), text.end(),
                              [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string ellipsize(const std::string& text, size_t max_width) {
  if (display_width(text) <= max_width) return text;
  if (max_width == 0) return {};
  static const std::string kEllipsis = "\xE2\x80\xA6";  // U+2026 "…", one column
  // Byte offset at which each code point starts.
  std::vector<size_t> starts;
  for (size_t i = 0; i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) starts.push_back(i);
  const size_t keep = max_width - 1;
  const size_t head = (keep + 1) / 2, tail = keep / 2;
  const size_t head_end = head < starts.size() ? starts[head] : text.size();
  const size_t tail_begin = tail == 0 ? text.size() : starts[starts.size() - tail];
  return text.substr(0, head_end) + kEllipsis + text.substr(tail_begin);
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::string op_label(const NodeReport& node) {
  if (node.domain.empty() || node.domain == "ai.onnx") return node.op_type;
  return node.domain + ":" + node.op_type;
}

std::vector<const NodeReport*> hotspot_nodes(const AnalysisResult& result, int n) {
  std::vector<const NodeReport*> nodes;
  if (n <= 0) return nodes;
  for (const NodeReport& node : result.nodes)
    if (node.cost.flops > 0) nodes.push_back(&node);
  std::stable_sort(nodes.begin(), nodes.end(),
                   [](const NodeReport* a, const NodeReport* b) { return a->cost.flops > b->cost.flops; });
  if (nodes.size() > size_t(n)) nodes.resize(size_t(n));
  return nodes;
}

std::vector<std::string> unknown_op_types(const AnalysisResult& result) {
  std::vector<std::string> ops;
  for (const NodeReport& node : result.nodes) {
    if (node.cost.status != CostStatus::UnknownOp) continue;
    const std::string label = op_label(node);
    if (std::find(ops.begin(), ops.end(), label) == ops.end()) ops.push_back(label);
  }
  return ops;
}

std::string coverage_percent(const AnalysisTotals& totals) {
  if (totals.nodes <= 0) return "100.0%";
  int64_t tenths = std::llround(1000.0 * double(totals.nodes_exact) / double(totals.nodes));
  // Round to nearest, but never claim 100.0% (or 0.0%) when that is not literally true.
  if (totals.nodes_exact < totals.nodes) tenths = std::min<int64_t>(tenths, 999);
  if (totals.nodes_exact > 0) tenths = std::max<int64_t>(tenths, 1);
  return fmt::format("{}.{}%", tenths / 10, tenths % 10);
}

std::string coverage_summary(const AnalysisResult& result) {
  const AnalysisTotals& t = result.totals;
  std::string out = fmt::format("{}/{} nodes exact ({})", t.nodes_exact, t.nodes, coverage_percent(t));
  std::vector<std::string> parts;
  if (t.nodes_unknown_shape > 0)
    parts.push_back(
        fmt::format("{} unknown shape{}", t.nodes_unknown_shape, t.nodes_unknown_shape == 1 ? "" : "s"));
  if (t.nodes_unknown_op > 0) {
    std::string part = fmt::format("{} unknown op{}", t.nodes_unknown_op, t.nodes_unknown_op == 1 ? "" : "s");
    const std::vector<std::string> ops = unknown_op_types(result);
    if (!ops.empty()) part += " (" + join(ops, ", ") + ")";
    parts.push_back(part);
  }
  if (!parts.empty()) out += "; " + join(parts, ", ");
  return out;
}

std::string count_with_exact(int64_t n) {
  if (magnitude(n) < 1000) return std::to_string(n);
  return fmt::format("{} ({})", human_count(n), group_digits(n));
}

std::string bytes_with_exact(int64_t n) {
  if (magnitude(n) < 1024) return fmt::format("{} B", n);
  return fmt::format("{} ({} bytes)", human_bytes(n), group_digits(n));
}

}  // namespace report_detail
}  // namespace modelstat

// Private helpers shared by the report writers (tools/report/*_writer.cc).
// Everything here formats or selects; nothing computes a cost.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "modelstat/analysis.hpp"
#include "modelstat/report.hpp"

namespace modelstat {
namespace report_detail {

// Factories, one per file (table_writer.cc, json_writer.cc, ...).
std::unique_ptr<AnalysisWriter> make_table_writer();
std::unique_ptr<AnalysisWriter> make_json_writer();
std::unique_ptr<AnalysisWriter> make_csv_writer();
std::unique_ptr<AnalysisWriter> make_markdown_writer();

// One-character marker of a non-exact row in the human tables ("" when exact)
// and the legend line that explains the markers.
const char* status_marker(CostStatus s);
extern const char* const kStatusLegend;

// 1234567 -> "1,234,567" (exact, for totals next to their human form).
std::string group_digits(int64_t n);

// "12.3%" of part in whole, one decimal; "-" when whole is 0; "<0.1%" and
// ">99.9%" for shares that would otherwise round to nothing or to everything.
std::string percent(int64_t part, int64_t whole);

// Display width of UTF-8 text in terminal columns, counting one column per
// code point (wide CJK glyphs are not special-cased).
size_t display_width(const std::string& text);

// Shortens text to at most max_width columns by cutting its middle and
// putting "…" there: ONNX node names carry the most information at both ends
// ("/encoder/layer.11/…/attention/MatMul"). Never splits a UTF-8 sequence.
std::string ellipsize(const std::string& text, size_t max_width);

// Joins strings with sep.
std::string join(const std::vector<std::string>& parts, const std::string& sep);

// Op label for humans: "Conv", or "com.microsoft:FusedConv" outside the
// default domain.
std::string op_label(const NodeReport& node);

// The top-n nodes by FLOPs (descending; ties keep execution order), leaving
// out nodes with no FLOPs. Empty when n <= 0.
std::vector<const NodeReport*> hotspot_nodes(const AnalysisResult& result, int n);

// Distinct op types of the nodes with status UnknownOp, in first-seen order.
std::vector<std::string> unknown_op_types(const AnalysisResult& result);

// Coverage as a percentage with one decimal, never showing 100.0% unless
// every node is exact (rounds down): "98.4%".
std::string coverage_percent(const AnalysisTotals& totals);

// "123/125 nodes exact (98.4%); 1 unknown shape, 1 unknown op (NonMaxSuppression)"
std::string coverage_summary(const AnalysisResult& result);

// "11.69 M (11,689,512)": the human form followed by the exact count, or just
// the exact count when it is under 1000.
std::string count_with_exact(int64_t n);
// "44.59 MiB (46,758,048 bytes)", or "512 B" under 1 KiB.
std::string bytes_with_exact(int64_t n);

}  // namespace report_detail
}  // namespace modelstat

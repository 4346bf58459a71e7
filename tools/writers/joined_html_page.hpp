// The joined report's HTML page (joined_html_writer.cc says what it is): the
// Page class and its display helpers, shared by the three files that write it:
//   joined_html_writer.cc  the page skeleton: head, CSS and script, summary
//                          cards, run details, notices, conventions; the writer
//   joined_html_charts.cc  the inline SVG charts (scatter, roofline, op-type
//                          bars, latency histogram, batch curve) and their legend
//   joined_html_tables.cc  the sortable tables (hotspots, groups, all layers, op types)
// Private to modelstat_writers.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "modelstat/analysis.hpp"
#include "modelstat/profile.hpp"
#include "tools/writers/format_util.hpp"
#include "tools/writers/joined_writers.hpp"
#include "tools/writers/svg_chart.hpp"

namespace modelstat::report::html {


using report_detail::ellipsize;
using report_detail::human_seconds;
using report_detail::percent_of;
using svg::escape;
using svg::num;

constexpr double kPi = 3.14159265358979323846;

inline bool positive(double v) {
  return std::isfinite(v) && v > 0;
}

// A figure join_profile could not compute, as NaN: every formatter here prints
// "-" for it and sort_key sorts it with 0 (unknown is never shown as 0).
template <typename T>
inline double or_nan(const std::optional<T>& v) {
  return v ? double(*v) : std::numeric_limits<double>::quiet_NaN();
}

// A sort key for a table cell (data-v): full precision, never non-finite.
inline std::string sort_key(double v) {
  return std::isfinite(v) ? fmt::format("{:.9g}", v) : "0";
}

inline std::string rate_text(double per_second, const char* unit) {
  return positive(per_second) ? svg::si_text(per_second, unit) : "-";
}

// A rate in a table whose header carries the unit: "61.7 G" under "FLOP/s".
inline std::string table_rate(double per_second) {
  if (!positive(per_second)) return "-";
  std::string text = svg::si_text(per_second, "");
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

inline std::string intensity_text(double flops_per_byte) {
  return positive(flops_per_byte) ? fmt::format("{:.3g}", flops_per_byte) : "-";
}

inline std::string base_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Chart geometry, in SVG user units (the SVG scales to its figure's width).
constexpr double kChartWidth = 600, kChartHeight = 380;
constexpr svg::Frame kPlotWithLegend{66, 12, 452, 322};

class Page {
 public:
  Page(const JoinedReport& r, const ReportOptions& o, std::ostream& out) : r_(r), o_(o), out_(out) {
    // One colour per op type, the same in every chart and table. The palette goes
    // first to the types with FLOPs, by time (by_op_type is sorted by time): only
    // they appear on the scatter and the roofline, where colour is the only label.
    // Then to the other types; what is left over shares the "other" grey.
    for (const bool with_flops : {true, false})
      for (const auto& t : r_.by_op_type)
        if ((t.flops > 0) == with_flops) colour_index_.emplace(t.op_type, colour_index_.size());
  }

  void write();

 private:
  const JoinedReport& r_;
  const ReportOptions& o_;
  std::ostream& out_;
  std::map<std::string, size_t> colour_index_;

  const ProfileResult& p() const { return r_.profile; }

  const char* colour(const std::string& op_type) const;
  bool has_own_colour(const std::string& op_type) const { return colour(op_type) != svg::kOtherColor; }

  // ------------------------------------------------------------ page head

  void head();

  // ------------------------------------------------------------ summary

  void card(const std::string& key, const std::string& value_html, const std::string& sub_html);

  std::string source_badge() const;

  void summary();

  void run_details();

  // ------------------------------------------------------------ charts

  void figure_open(const char* id, const std::string& title, const std::string& caption_html,
                   bool wide = false);
  void svg_open(double width, double height, const std::string& label);
  // A log-log chart in kPlotWithLegend, the chart's size: the SVG opened,
  // the axes drawn; its two scales.
  std::pair<svg::Scale, svg::Scale> log_log_chart(double x_lo, double x_hi, double y_lo, double y_hi,
                                                  const std::string& label, const svg::Labeler& y_label,
                                                  const std::string& x_title, const std::string& y_title);

  // Legend of the op types among the plotted nodes, in palette order, right of
  // the plot; then, when given, a dashed-line entry for a reference line.
  void legend(const std::set<std::string>& plotted_types, double x, double y,
              const std::string& line_label = {});

  std::string point_title(const JoinedNode& n) const;
  std::string members_note_html(const JoinedNode& n) const;
  std::string members_note(const JoinedNode& n) const;

  static std::string left_out_note(size_t count, const char* why);

  // (a) per-layer FLOPs vs median time, log-log.
  void scatter();

  // (b) roofline: memory roof bandwidth x I, compute roof the peak, nodes at (I, achieved FLOP/s).
  void roofline();

  // (c) time by op type: horizontal bars with the share.
  void op_type_bars();

  // (d) whole-model latency distribution with its median / p90 / p99.
  void latency_histogram();

  // (e) latency and throughput against batch size, when a sweep was measured.
  void batch_curve();

  template <typename Value>
  void batch_panel(const std::vector<const BatchPoint*>& ran, double x_offset, const std::string& title,
                   Value value, bool seconds, const char* colour);

  // ------------------------------------------------------------ tables

  // A cell with a sort key and, for shares and efficiencies, a bar behind the text.
  std::string num_cell(const std::string& text, double key, const char* bar_class = nullptr,
                       double fraction = 0) const;

  // The op type with its colour; for a node that ran in fp32 for want of an
  // fp16/bf16 kernel, a "^fp32" mark whose tooltip is the legend.
  std::string op_cell(const std::string& op_type, bool upcast_to_fp32 = false) const;

  static std::string bound_cell(const JoinedNode& n);

  static std::string efficiency_text(const JoinedNode& n);
  // fit's forecast columns: headers and a node's two cells ("" without a forecast).
  std::string forecast_headers() const;
  std::string forecast_cells(const JoinedNode& n) const;

  void hotspot_table();

  // --group-by: the profile's group sums (LayerGroup), sortable.
  void group_table();

  void layer_table();

  void op_type_table();
  void scaling_table();  // --scaling

  void notices();

  void conventions();
};

}  // namespace modelstat::report::html

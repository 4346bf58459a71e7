// Joined report, html format: one self-contained page (inline CSS, inline SVG
// charts, a few lines of inline JS to sort tables) that opens with no network.
// It lays out what join_profile computed; the only arithmetic here is for
// display (pixel positions, histogram bins, the roofs drawn from the ceilings).
//
// Every string that comes from the model or the run (node names, op types,
// paths, notices) is untrusted and goes through svg::escape(). Every SVG number
// goes through svg::num(), and a point that has no place on a log axis (no
// FLOPs, no time) is left out and counted in a note, so the page never holds
// "NaN" or "Infinity".
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "modelstat/analysis.hpp"
#include "modelstat/profile.hpp"
#include "tools/writers/format_util.hpp"
#include "tools/writers/joined_writers.hpp"
#include "tools/writers/svg_chart.hpp"

namespace modelstat::report {

namespace {

using report_detail::ellipsize;
using report_detail::human_seconds;
using report_detail::percent_of;
using svg::escape;
using svg::num;

constexpr double kPi = 3.14159265358979323846;

bool positive(double v) {
  return std::isfinite(v) && v > 0;
}

// A sort key for a table cell (data-v): full precision, never non-finite.
// A figure join_profile could not compute, as NaN: every formatter here prints
// "-" for it and sort_key sorts it with 0 (unknown is never shown as 0).
template <typename T>
double or_nan(const std::optional<T>& v) {
  return v ? double(*v) : std::numeric_limits<double>::quiet_NaN();
}

std::string sort_key(double v) {
  return std::isfinite(v) ? fmt::format("{:.9g}", v) : "0";
}

std::string rate_text(double per_second, const char* unit) {
  return positive(per_second) ? svg::si_text(per_second, unit) : "-";
}

// A rate in a table whose header carries the unit: "61.7 G" under "FLOP/s".
std::string table_rate(double per_second) {
  if (!positive(per_second)) return "-";
  std::string text = svg::si_text(per_second, "");
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

std::string intensity_text(double flops_per_byte) {
  return positive(flops_per_byte) ? fmt::format("{:.3g}", flops_per_byte) : "-";
}

std::string base_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

constexpr const char* kStyle = R"CSS(
:root { --ink:#1f2933; --muted:#616e7c; --line:#e4e7eb; --panel:#ffffff; --bg:#f5f7fa; --accent:#2f6fb0; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--ink);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", Arial, sans-serif; }
main { max-width: 1240px; margin: 0 auto; padding: 24px 28px 40px; }
h1 { font-size: 22px; margin: 0 0 2px; }
h1 .path { font-weight: 400; color: var(--muted); font-size: 15px; margin-left: 8px; }
h2 { font-size: 17px; margin: 28px 0 10px; }
h3 { font-size: 15px; margin: 0 0 2px; }
nav { margin: 8px 0 0; font-size: 13px; }
nav a { color: var(--accent); text-decoration: none; margin-right: 14px; }
.context { color: var(--muted); margin: 4px 0 14px; }
.context b { color: var(--ink); font-weight: 600; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(170px, 1fr)); gap: 12px; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; }
.card .k { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.card .v { font-size: 21px; font-weight: 600; margin: 2px 0; white-space: nowrap; }
.card .s { color: var(--muted); font-size: 12.5px; }
.badge { display: inline-block; padding: 0 7px; border-radius: 9px; font-size: 11.5px; font-weight: 600; }
.badge.measured { background: #e3f4e8; color: #1e7b3a; }
.badge.datasheet { background: #fdf1d8; color: #8a5a00; }
.badge.none { background: #f0f0f0; color: #666; }
details { margin-top: 12px; }
summary { cursor: pointer; color: var(--accent); }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 8px 0 0; font-size: 13px; }
dl.kv dt { color: var(--muted); }
dl.kv dd { margin: 0; }
.charts { display: grid; grid-template-columns: 1fr 1fr; gap: 16px; }
@media (max-width: 1000px) { .charts { grid-template-columns: 1fr; } }
figure { margin: 0; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; }
figure.wide { grid-column: 1 / -1; }
figcaption p, p.note { color: var(--muted); font-size: 12.5px; margin: 2px 0 6px; }
p.note code, figcaption code { background: #eef1f4; padding: 0 4px; border-radius: 3px; }
svg { display: block; width: 100%; height: auto; font-family: inherit; }
svg text { fill: #3e4c59; font-size: 11px; }
svg .axis-title { font-size: 12px; fill: #1f2933; }
svg .grid line { stroke: #e4e7eb; stroke-width: 1; }
svg .grid line.minor { stroke: #f2f4f6; }
svg .frame { fill: none; stroke: #9aa5b1; stroke-width: 1; }
svg .pt { stroke: #fff; stroke-width: .8; fill-opacity: .85; }
svg .pt:hover { stroke: #111; stroke-width: 2; }
svg .roof { fill: none; stroke: #52606d; stroke-width: 2; }
svg .ridge { stroke: #52606d; stroke-width: 1; stroke-dasharray: 4 3; }
svg .peakline { stroke: #c0392b; stroke-width: 1.2; stroke-dasharray: 5 4; fill: none; }
svg .roof-label { font-size: 11.5px; fill: #323f4b; paint-order: stroke; stroke: #fff; stroke-width: 3px; }
svg .bar-label { font-size: 12px; fill: #1f2933; }
svg .bin { fill: #8fb3d9; stroke: #fff; stroke-width: .5; }
svg .marker { stroke-width: 1.5; }
svg .curve { fill: none; stroke-width: 2; }
svg .legend text { font-size: 11.5px; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; background: var(--panel); font-size: 13px;
  border: 1px solid var(--line); }
th, td { padding: 4px 6px; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
th { background: #f0f3f6; font-weight: 600; position: sticky; top: 0; }
table.sortable th { cursor: pointer; }
table.sortable th:hover { background: #e4e9ef; }
th.l, td.l { text-align: left; }
td.name { max-width: 270px; overflow: hidden; text-overflow: ellipsis; font-family: "DejaVu Sans Mono", monospace;
  font-size: 12px; }
tbody tr:hover { background: #f7f9fb; }
td.share, td.eff { background-repeat: no-repeat; background-position: left bottom; background-size: var(--w) 4px; }
td.share { background-image: linear-gradient(#7aa6d6, #7aa6d6); }
td.eff { background-image: linear-gradient(#7fbf8e, #7fbf8e); }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; }
.bound-compute { color: #8a3b12; }
.bound-memory { color: #1f5f99; }
ul.notices li { margin: 3px 0; }
footer { margin-top: 28px; color: var(--muted); font-size: 12px; }
footer p { margin: 4px 0; }
)CSS";

// Click a header to sort by it (numbers by data-v, text otherwise); click again to reverse.
constexpr const char* kScript = R"JS(
document.querySelectorAll('table.sortable th').forEach(function (th) {
  th.addEventListener('click', function () {
    var body = th.closest('table').tBodies[0], col = th.cellIndex;
    var down = th.getAttribute('data-dir') !== 'down';
    th.closest('tr').querySelectorAll('th').forEach(function (h) { h.removeAttribute('data-dir'); });
    th.setAttribute('data-dir', down ? 'down' : 'up');
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[col], y = b.cells[col], r;
      if (x.hasAttribute('data-v') && y.hasAttribute('data-v'))
        r = parseFloat(x.getAttribute('data-v')) - parseFloat(y.getAttribute('data-v'));
      else r = x.textContent.localeCompare(y.textContent);
      return down ? -r : r;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  });
});
)JS";

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

  void write() {
    head();
    summary();
    out_ << "<h2 id=\"charts\">Where the time goes</h2>\n<div class=\"charts\">\n";
    scatter();
    roofline();
    op_type_bars();
    latency_histogram();
    batch_curve();
    out_ << "</div>\n";
    hotspot_table();
    layer_table();
    op_type_table();
    notices();
    conventions();
    out_ << "<script>" << kScript << "</script>\n</main>\n</body>\n</html>\n";
  }

 private:
  const JoinedReport& r_;
  const ReportOptions& o_;
  std::ostream& out_;
  std::map<std::string, size_t> colour_index_;

  const ProfileResult& p() const { return r_.profile; }

  const char* colour(const std::string& op_type) const {
    const auto it = colour_index_.find(op_type);
    if (it == colour_index_.end() || it->second >= svg::palette_size()) return svg::kOtherColor;
    return svg::palette_color(it->second);
  }
  bool has_own_colour(const std::string& op_type) const { return colour(op_type) != svg::kOtherColor; }

  // ------------------------------------------------------------ page head

  void head() {
    const std::string model = base_name(p().analysis.model_path);
    out_ << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         << "<meta name=\"generator\" content=\"modelstat\">\n"
         << "<title>modelstat report: " << escape(model.empty() ? "model" : model) << "</title>\n"
         << "<style>" << kStyle << "</style>\n</head>\n<body>\n<main>\n";
  }

  // ------------------------------------------------------------ summary

  void card(const std::string& key, const std::string& value_html, const std::string& sub_html) {
    out_ << "<div class=\"card\"><div class=\"k\">" << key << "</div><div class=\"v\">" << value_html
         << "</div><div class=\"s\">" << sub_html << "</div></div>\n";
  }

  std::string source_badge() const {
    const std::string& source = r_.ceilings.source;
    if (source.empty()) return "<span class=\"badge none\">no ceilings</span>";
    // A long source keeps its kind ("datasheet: h100-sxm" fits; a long one shows
    // what precedes its colon); the whole text is the badge's tooltip and in Run details.
    constexpr size_t kBadgeChars = 24;
    const std::string shown = source.size() <= kBadgeChars ? source : source.substr(0, source.find(':'));
    return std::string("<span class=\"badge ") + (r_.ceilings.measured() ? "measured" : "datasheet") +
           "\" title=\"" + escape(source) + "\">" + escape(ellipsize(shown, kBadgeChars)) + "</span>";
  }

  void summary() {
    const RunContext& c = p().context;
    const TimingSummary& whole = p().whole;
    const AnalysisResult& a = p().analysis;
    const std::string model = base_name(a.model_path);
    out_ << "<header id=\"summary\">\n<h1>" << escape(model.empty() ? "model" : model)
         << "<span class=\"path\">" << escape(a.model_path) << "</span></h1>\n";

    std::vector<std::string> ctx;
    auto add = [&](const char* key, const std::string& value) {
      if (!value.empty()) ctx.push_back(std::string(key) + " <b>" + escape(value) + "</b>");
    };
    add("device", c.device_name.empty()
                      ? c.device_kind
                      : c.device_name + (c.device_kind.empty() ? "" : " (" + c.device_kind + ")"));
    add("dtype", c.dtype);
    add("threads", c.threads > 0 ? std::to_string(c.threads) : "");
    add("batch", c.batch > 0 ? std::to_string(c.batch) : "");
    add("LibTorch", c.torch_version);
    add("date", c.date);
    add("host", c.host);
    out_ << "<p class=\"context\">" << report_detail::join(ctx, " &middot; ") << "</p>\n";
    out_ << "<nav><a href=\"#charts\">Charts</a><a href=\"#hotspots\">Hotspots</a><a href=\"#layers\">All "
            "layers</a>"
         << "<a href=\"#op-types\">By op type</a><a href=\"#notices\">Notices</a>"
         << "<a href=\"#conventions\">Conventions</a></nav>\n";

    out_ << "<div class=\"cards\">\n";
    card("Whole-model median", escape(human_seconds(whole.median)),
         "p90 " + escape(human_seconds(whole.p90)) + " &middot; p99 " + escape(human_seconds(whole.p99)) +
             "<br>" + std::to_string(whole.count) + " runs, CV " + escape(percent_of(whole.cv, 1.0)));
    std::string vs_whole = "whole-model median not measured";
    if (positive(whole.median))
      vs_whole = escape(report_detail::signed_percent(r_.layer_sum_seconds / whole.median - 1)) +
                 " vs the whole-model median<br>(instrumented pass)";
    card("Sum of layer medians", escape(human_seconds(r_.layer_sum_seconds)), vs_whole);
    card("Achieved", escape(rate_text(r_.whole_achieved_flops_per_second, "FLOP/s")),
         positive(r_.peak_flops_per_second)
             ? escape(percent_of(r_.whole_efficiency, 1.0)) + " of the " + escape(r_.compute_dtype) +
                   " peak<br>total FLOPs / whole-model median"
             : std::string("no compute ceiling to compare with"));
    card("Work", escape(human_count(a.totals.flops)) + "FLOP",
         escape(human_count(a.totals.macs)) + " MACs &middot; " + escape(human_count(a.totals.params)) +
             " params<br>" + escape(report_detail::coverage_summary(a)));
    card("Compute roof", escape(rate_text(r_.peak_flops_per_second, "FLOP/s")),
         escape(r_.compute_dtype) + " matmul peak<br>" + source_badge());
    card("Memory roof", escape(rate_text(r_.memory_bandwidth, "B/s")),
         "ridge at " + escape(intensity_text(r_.ridge_intensity)) + " FLOP/byte<br>" + source_badge());
    out_ << "</div>\n";
    run_details();
    out_ << "</header>\n";
  }

  void run_details() {
    const RunContext& c = p().context;
    const TimingSummary& whole = p().whole;
    std::vector<std::pair<std::string, std::string>> kv;  // already-escaped HTML values
    auto add = [&](const std::string& k, const std::string& v) {
      if (!v.empty()) kv.emplace_back(k, escape(v));
    };
    add("timer", c.timer);
    add("driver / runtime", c.driver_version.empty() && c.runtime_version.empty()
                                ? ""
                                : c.driver_version + " / " + c.runtime_version);
    add("clocks", c.clocks);
    add("whole-model min / mean / max",
        human_seconds(whole.min) + " / " + human_seconds(whole.mean) + " / " + human_seconds(whole.max));
    add("median 95% CI", human_seconds(whole.median_ci_low) + " .. " + human_seconds(whole.median_ci_high));
    add("stopped because", whole.stop_reason);
    const ColdStart& cold = p().cold;
    if (cold.first_inference > 0)
      add("cold start", "load " + human_seconds(cold.model_load) + ", weights " +
                            human_seconds(cold.weight_upload) + ", first inference " +
                            human_seconds(cold.first_inference));
    if (p().h2d.count > 0)
      add("copies (not in latency)", "host to device " + human_seconds(p().h2d.median) + ", device to host " +
                                         human_seconds(p().d2h.median));
    if (p().end_to_end) add("latency includes", "host/device copies (end to end)");
    if (p().memory)
      add("memory (" + p().memory->method + ")", "weights " + human_bytes(p().memory->weights_bytes) +
                                                     ", inference peak " +
                                                     human_bytes(p().memory->inference_peak_bytes));
    if (p().concurrency)
      add("concurrency", std::to_string(p().concurrency->requests_in_flight) + " in flight (" +
                             p().concurrency->mechanism +
                             "): " + rate_text(p().concurrency->throughput, "requests/s") +
                             ", median latency " + human_seconds(p().concurrency->latency.median));
    if (p().max_batch > 0) add("largest batch that ran", std::to_string(p().max_batch));
    const DeviceCeilings& ce = r_.ceilings;
    add("ceilings", ce.source + (ce.device_name.empty() ? "" : ", " + ce.device_name) +
                        (ce.date.empty() ? "" : ", " + ce.date) +
                        (ce.threads > 0 ? ", " + std::to_string(ce.threads) + " threads" : ""));
    out_ << "<details><summary>Run details</summary>\n<dl class=\"kv\">";
    for (const auto& [k, v] : kv) out_ << "<dt>" << escape(k) << "</dt><dd>" << v << "</dd>";
    out_ << "</dl>\n</details>\n";
  }

  // ------------------------------------------------------------ charts

  void figure_open(const char* id, const std::string& title, const std::string& caption_html,
                   bool wide = false) {
    out_ << "<figure id=\"" << id << "\"" << (wide ? " class=\"wide\"" : "") << ">\n<figcaption><h3>" << title
         << "</h3><p>" << caption_html << "</p></figcaption>\n";
  }
  void svg_open(double width, double height, const std::string& label) {
    // Inline SVG in HTML needs no xmlns (and the page then names no URL at all).
    out_ << "<svg viewBox=\"0 0 " << num(width) << " " << num(height) << "\" role=\"img\" aria-label=\""
         << escape(label) << "\">\n";
  }

  // Legend of the op types among the plotted nodes, in palette order, right of
  // the plot; then, when given, a dashed-line entry for a reference line.
  void legend(const std::set<std::string>& plotted_types, double x, double y,
              const std::string& line_label = {}) {
    std::vector<std::pair<size_t, std::string>> own;
    size_t others = 0;
    for (const auto& t : plotted_types) {
      if (has_own_colour(t))
        own.emplace_back(colour_index_.at(t), t);
      else
        ++others;
    }
    std::sort(own.begin(), own.end());
    out_ << "<g class=\"legend\">";
    double row = y;
    for (const auto& [index, type] : own) {
      out_ << "<g><title>" << escape(type) << "</title><rect x=\"" << num(x) << "\" y=\"" << num(row - 8)
           << "\" width=\"10\" height=\"10\" rx=\"2\" fill=\"" << colour(type) << "\"/><text x=\""
           << num(x + 15) << "\" y=\"" << num(row + 1) << "\">" << escape(ellipsize(type, 15))
           << "</text></g>";
      row += 17;
    }
    if (others > 0)
      out_ << "<rect x=\"" << num(x) << "\" y=\"" << num(row - 8)
           << "\" width=\"10\" height=\"10\" rx=\"2\" fill=\"" << svg::kOtherColor << "\"/><text x=\""
           << num(x + 15) << "\" y=\"" << num(row + 1) << "\">" << others << " other type"
           << (others == 1 ? "" : "s") << "</text>";
    if (others > 0) row += 17;
    if (!line_label.empty())
      out_ << "<line class=\"peakline\" x1=\"" << num(x) << "\" y1=\"" << num(row - 3) << "\" x2=\""
           << num(x + 12) << "\" y2=\"" << num(row - 3) << "\"/><text x=\"" << num(x + 15) << "\" y=\""
           << num(row + 1) << "\">" << escape(line_label) << "</text>";
    out_ << "</g>\n";
  }

  std::string point_title(const JoinedNode& n) const {
    return escape(n.name) + "&#10;" + escape(n.op_type) + " &#183; " + escape(human_count(n.flops.value_or(0))) +
           "FLOP &#183; " + escape(human_seconds(or_nan(n.median_seconds))) + " (" +
           escape(percent_of(or_nan(n.share_of_time), 1.0)) + " of time) &#183; " +
           escape(rate_text(or_nan(n.achieved_flops_per_second), "FLOP/s"));
  }

  static std::string left_out_note(size_t count, const char* why) {
    if (count == 0) return {};
    return "<p class=\"note left-out\">" + std::to_string(count) + " node" + (count == 1 ? "" : "s") + " " +
           why + " not shown (no place on a log axis).</p>\n";
  }

  // (a) per-layer FLOPs vs median time, log-log.
  void scatter() {
    std::vector<const JoinedNode*> shown;
    for (const auto& n : r_.nodes)
      if (n.flops.value_or(0) > 0 && positive(or_nan(n.median_seconds))) shown.push_back(&n);
    const size_t left_out = r_.nodes.size() - shown.size();
    figure_open("chart-scatter", "FLOPs vs latency per layer",
                "Each point is one node: its analysed FLOPs against its median time in the per-layer pass. "
                "The dashed line is the time each FLOP count would take at the compute roof.");
    if (shown.empty()) {
      out_ << "<p class=\"note\">No node has both FLOPs and a measured time: nothing to plot.</p>\n"
           << left_out_note(left_out, "with no FLOPs or no time") << "</figure>\n";
      return;
    }
    double fmin = INFINITY, fmax = 0, tmin = INFINITY, tmax = 0;
    for (const JoinedNode* n : shown) {
      fmin = std::min(fmin, double(*n->flops));
      fmax = std::max(fmax, double(*n->flops));
      tmin = std::min(tmin, *n->median_seconds);
      tmax = std::max(tmax, *n->median_seconds);
    }
    const svg::Frame f = kPlotWithLegend;
    const svg::Scale x = svg::Scale::log10(fmin, fmax, f.left, f.right);
    const svg::Scale y = svg::Scale::log10(tmin, tmax, f.bottom, f.top);
    svg_open(kChartWidth, kChartHeight, "FLOPs versus median latency per layer, log-log");
    svg::draw_axes(out_, f, x, y, svg::si_label, svg::seconds_label, "FLOPs per node",
                   "median time per node");
    // time = FLOPs / peak, where it crosses the plot: t in [y.lo, y.hi] and FLOPs in [x.lo, x.hi].
    const double peak = r_.peak_flops_per_second;
    std::string peak_label;
    if (positive(peak)) {
      const double f0 = std::max(x.lo(), y.lo() * peak), f1 = std::min(x.hi(), y.hi() * peak);
      if (f0 < f1) {
        peak_label = "at " + rate_text(peak, "FLOP/s");
        out_ << "<line class=\"peakline\" x1=\"" << num(x(f0)) << "\" y1=\"" << num(y(f0 / peak))
             << "\" x2=\"" << num(x(f1)) << "\" y2=\"" << num(y(f1 / peak))
             << "\"><title>time at the compute roof (" << escape(rate_text(peak, "FLOP/s"))
             << ")</title></line>\n";
      }
    }
    std::set<std::string> types;
    out_ << "<g class=\"points\">\n";
    for (const JoinedNode* n : shown) {
      types.insert(n->op_type);
      out_ << "<circle class=\"pt\" cx=\"" << num(x(double(*n->flops))) << "\" cy=\""
           << num(y(*n->median_seconds)) << "\" r=\"4.5\" fill=\"" << colour(n->op_type) << "\"><title>"
           << point_title(*n) << "</title></circle>\n";
    }
    out_ << "</g>\n";
    legend(types, f.right + 14, f.top + 10, peak_label);
    out_ << "</svg>\n" << left_out_note(left_out, "with no FLOPs or no time") << "</figure>\n";
  }

  // (b) roofline: memory roof bandwidth x I, compute roof the peak, nodes at (I, achieved FLOP/s).
  void roofline() {
    const double peak = r_.peak_flops_per_second, bandwidth = r_.memory_bandwidth, ridge = r_.ridge_intensity;
    const bool roofs = positive(peak) && positive(bandwidth) && positive(ridge);
    figure_open(
        "chart-roofline", "Roofline",
        "Each node at its arithmetic intensity (FLOPs / bytes moved) and achieved FLOP/s; marker area "
        "is its share of time. Roofs: " +
            (roofs ? escape(rate_text(bandwidth, "B/s")) + " &times; intensity and " +
                         escape(rate_text(peak, "FLOP/s")) + " (" + escape(r_.compute_dtype) + "), " +
                         source_badge()
                   : std::string("none (no ceilings)")) +
            ".");
    std::vector<const JoinedNode*> shown;
    for (const auto& n : r_.nodes)
      if (n.flops.value_or(0) > 0 && n.bytes.value_or(0) > 0 && positive(or_nan(n.median_seconds)) &&
          positive(or_nan(n.achieved_flops_per_second)) && positive(or_nan(n.arithmetic_intensity)))
        shown.push_back(&n);
    const size_t left_out = r_.nodes.size() - shown.size();
    if (shown.empty() && !roofs) {
      out_ << "<p class=\"note\">No node has FLOPs, bytes and a measured time, and there are no ceilings: "
              "nothing to plot.</p>\n"
           << left_out_note(left_out, "with no FLOPs, no bytes or no time") << "</figure>\n";
      return;
    }
    double imin = INFINITY, imax = 0, pmin = INFINITY, pmax = 0;
    for (const JoinedNode* n : shown) {
      imin = std::min(imin, *n->arithmetic_intensity);
      imax = std::max(imax, *n->arithmetic_intensity);
      pmin = std::min(pmin, *n->achieved_flops_per_second);
      pmax = std::max(pmax, *n->achieved_flops_per_second);
    }
    if (roofs) {
      // Room on both sides of the ridge, and above the compute roof for its label.
      imin = std::min(imin, ridge / 10);
      imax = std::max(imax, ridge * 10);
      pmax = std::max(pmax, peak * 2);
      pmin = std::min(pmin, peak / 1000);
    }
    const svg::Frame f = kPlotWithLegend;
    const svg::Scale x = svg::Scale::log10(imin, imax, f.left, f.right);
    const svg::Scale y = svg::Scale::log10(pmin, pmax, f.bottom, f.top);
    svg_open(kChartWidth, kChartHeight, "Roofline: achieved FLOP/s against arithmetic intensity per layer");
    svg::draw_axes(out_, f, x, y, svg::si_label, svg::si_label, "arithmetic intensity (FLOP/byte)",
                   "achieved FLOP/s");
    if (roofs) {
      // The memory roof enters the plot at the left edge, or at the bottom edge
      // when bandwidth x I is below the axis there.
      const double i0 = std::max(x.lo(), y.lo() / bandwidth);
      out_ << "<polyline class=\"roof\" points=\"" << num(x(i0)) << "," << num(y(bandwidth * i0)) << " "
           << num(x(ridge)) << "," << num(y(peak)) << " " << num(x(x.hi())) << "," << num(y(peak))
           << "\"/>\n";
      out_ << "<line class=\"ridge\" x1=\"" << num(x(ridge)) << "\" y1=\"" << num(y(peak)) << "\" x2=\""
           << num(x(ridge)) << "\" y2=\"" << num(f.bottom) << "\"/>\n";
      out_ << "<text class=\"roof-label\" x=\"" << num(x(ridge) + 4) << "\" y=\"" << num(f.bottom - 6)
           << "\">ridge " << escape(intensity_text(ridge)) << " FLOP/B</text>\n";
      out_ << "<text class=\"roof-label\" x=\"" << num(f.right - 4) << "\" y=\"" << num(y(peak) - 6)
           << "\" text-anchor=\"end\">" << escape(rate_text(peak, "FLOP/s")) << " "
           << escape(r_.compute_dtype) << "</text>\n";
      // The bandwidth label runs along the memory roof, two thirds of the way up it
      // (memory-bound layers crowd its low-intensity end); a white halo keeps it readable.
      const double ax = x(i0), ay = y(bandwidth * i0), bx = x(ridge), by = y(peak);
      const double angle = std::atan2(by - ay, bx - ax) * 180.0 / kPi;
      const double lx = ax + (bx - ax) * 0.62, ly = ay + (by - ay) * 0.62;
      if (bx - ax > 60)
        out_ << "<text class=\"roof-label\" transform=\"translate(" << num(lx) << "," << num(ly)
             << ") rotate(" << num(angle) << ")\" y=\"-6\">" << escape(rate_text(bandwidth, "B/s"))
             << "</text>\n";
    }
    // Biggest markers first, so the small ones stay visible on top.
    std::vector<const JoinedNode*> order = shown;
    std::stable_sort(order.begin(), order.end(), [](const JoinedNode* a, const JoinedNode* b) {
      return a->share_of_time.value_or(0) > b->share_of_time.value_or(0);
    });
    std::set<std::string> types;
    out_ << "<g class=\"points\">\n";
    for (const JoinedNode* n : order) {
      types.insert(n->op_type);
      // Area proportional to the share of time: r = 3 px at 0, 21 px at 100%.
      const double radius = 3.0 + 18.0 * std::sqrt(std::clamp(n->share_of_time.value_or(0), 0.0, 1.0));
      out_ << "<circle class=\"rpt pt-roof\" cx=\"" << num(x(*n->arithmetic_intensity)) << "\" cy=\""
           << num(y(*n->achieved_flops_per_second)) << "\" r=\"" << num(radius) << "\" fill=\""
           << colour(n->op_type) << "\" fill-opacity=\"0.7\" stroke=\"#fff\"><title>" << point_title(*n)
           << "&#10;intensity " << escape(intensity_text(*n->arithmetic_intensity)) << " FLOP/B, "
           << bound_name(n->bound) << "-bound, efficiency " << escape(percent_of(or_nan(n->efficiency), 1.0))
           << "</title></circle>\n";
    }
    out_ << "</g>\n";
    legend(types, f.right + 14, f.top + 10);
    out_ << "</svg>\n" << left_out_note(left_out, "with no FLOPs, no bytes or no time") << "</figure>\n";
  }

  // (c) time by op type: horizontal bars with the share.
  void op_type_bars() {
    figure_open("chart-optype", "Time by op type",
                "Sum of the per-layer medians of each op type, as a share of the sum over all layers.");
    if (r_.by_op_type.empty() || !positive(r_.layer_sum_seconds)) {
      out_ << "<p class=\"note\">No per-layer time was measured.</p>\n</figure>\n";
      return;
    }
    constexpr double kTop = 8, kLabelRight = 128, kBarLeft = 136, kBarMax = 300;
    // Rows fill about the height of the chart beside it, 22 to 36 units each.
    const double kRow = std::clamp(300.0 / double(r_.by_op_type.size()), 22.0, 36.0);
    const double bar_height = std::min(kRow - 6, 20.0);
    const double height = kTop * 2 + kRow * double(r_.by_op_type.size());
    double max_share = 0;
    for (const auto& t : r_.by_op_type) max_share = std::max(max_share, t.share_of_time);
    svg_open(kChartWidth, height, "Share of time by op type");
    double row = kTop;
    for (const auto& t : r_.by_op_type) {
      const double w = positive(max_share) ? kBarMax * std::clamp(t.share_of_time, 0.0, 1.0) / max_share : 0;
      out_ << "<g><title>" << escape(t.op_type) << ": " << t.count << " node" << (t.count == 1 ? "" : "s")
           << ", " << escape(human_seconds(t.seconds)) << ", " << escape(human_count(t.flops))
           << "FLOP</title>"
           << "<text class=\"bar-label\" x=\"" << num(kLabelRight) << "\" y=\"" << num(row + kRow / 2 + 4)
           << "\" text-anchor=\"end\">" << escape(ellipsize(t.op_type, 18)) << "</text>"
           << "<rect x=\"" << num(kBarLeft) << "\" y=\"" << num(row + (kRow - bar_height) / 2)
           << "\" width=\"" << num(std::max(w, 1.0)) << "\" height=\"" << num(bar_height)
           << "\" rx=\"2\" fill=\"" << colour(t.op_type) << "\"/>"
           << "<text x=\"" << num(kBarLeft + w + 6) << "\" y=\"" << num(row + kRow / 2 + 4) << "\">"
           << escape(percent_of(t.share_of_time, 1.0)) << " &#183; " << escape(human_seconds(t.seconds))
           << " &#183; " << t.count << "&#215;</text></g>\n";
      row += kRow;
    }
    out_ << "</svg>\n</figure>\n";
  }

  // (d) whole-model latency distribution with its median / p90 / p99.
  void latency_histogram() {
    const TimingSummary& whole = p().whole;
    figure_open("chart-latency", "Whole-model latency distribution",
                "Raw samples of the clean whole-model pass (no per-layer instrumentation), with the median, "
                "p90 and p99 of the run.");
    std::vector<double> samples;
    for (double s : whole.samples)
      if (std::isfinite(s) && s >= 0) samples.push_back(s);
    if (samples.empty()) {
      out_ << "<p class=\"note\">No raw whole-model samples in this profile.</p>\n</figure>\n";
      return;
    }
    const auto [min_it, max_it] = std::minmax_element(samples.begin(), samples.end());
    double lo = *min_it, hi = *max_it;
    if (hi <= lo) {  // one sample, or all equal: a narrow window around them
      lo = lo * 0.95;
      hi = hi * 1.05 + 1e-12;
    }
    // Rice rule for the number of bins: 2 n^(1/3), a readable count from 10 to 10^5 samples.
    const size_t bins = std::clamp<size_t>(size_t(std::ceil(2.0 * std::cbrt(double(samples.size())))), 1, 60);
    // Samples over more than a decade (a busy shared machine, a cold outlier)
    // would crowd into one linear bin: then the bins are equal in log(time).
    const bool log_bins = lo > 0 && hi / lo > 10;
    std::vector<size_t> counts;
    if (log_bins) {
      std::vector<double> logs;
      for (double v : samples) logs.push_back(std::log10(v));
      counts = svg::bin_counts(logs, std::log10(lo), std::log10(hi), bins);
    } else {
      counts = svg::bin_counts(samples, lo, hi, bins);
    }
    auto edge = [&](size_t i) {
      const double t = double(i) / double(bins);
      return log_bins ? lo * std::pow(hi / lo, t) : lo + (hi - lo) * t;
    };
    const size_t max_count = *std::max_element(counts.begin(), counts.end());
    const svg::Frame f{66, 40, 560, 322};
    const svg::Scale x = log_bins ? svg::Scale::log10(lo, hi, f.left, f.right)
                                  : svg::Scale::linear(lo, hi, f.left, f.right, 6);
    const svg::Scale y = svg::Scale::linear(0, double(max_count), f.bottom, f.top, 5);
    svg_open(kChartWidth, kChartHeight, "Histogram of whole-model latency samples");
    svg::draw_axes(
        out_, f, x, y, log_bins ? svg::Labeler(svg::seconds_label) : svg::seconds_labels_for(x),
        [](double v) { return fmt::format("{:g}", v); },
        log_bins ? "whole-model latency (log scale)" : "whole-model latency", "runs");
    out_ << "<g class=\"bins\">";
    for (size_t i = 0; i < bins; ++i) {
      if (counts[i] == 0) continue;
      const double b0 = edge(i), b1 = edge(i + 1);
      out_ << "<rect class=\"bin\" x=\"" << num(x(b0)) << "\" y=\"" << num(y(double(counts[i])))
           << "\" width=\"" << num(std::max(x(b1) - x(b0), 1.0)) << "\" height=\""
           << num(f.bottom - y(double(counts[i]))) << "\"><title>" << escape(human_seconds(b0)) << " .. "
           << escape(human_seconds(b1)) << ": " << counts[i] << " run" << (counts[i] == 1 ? "" : "s")
           << "</title></rect>";
    }
    out_ << "</g>\n";
    // Markers with their labels on three rows above the plot, so close values
    // never overprint; the lines start at the plot, below every label.
    struct Marker {
      const char* name;
      double value;
      const char* colour;
    };
    const Marker markers[] = {
        {"median", whole.median, "#1f2933"}, {"p90", whole.p90, "#d97706"}, {"p99", whole.p99, "#c0392b"}};
    double label_y = 11;
    for (const Marker& m : markers) {
      if (!positive(m.value) || !x.contains(m.value)) {
        label_y += 12;
        continue;
      }
      const double mx = x(m.value);
      const bool right_half = mx > (f.left + f.right) / 2;
      out_ << "<line class=\"marker\" x1=\"" << num(mx) << "\" y1=\"" << num(f.top) << "\" x2=\"" << num(mx)
           << "\" y2=\"" << num(f.bottom) << "\" stroke=\"" << m.colour << "\""
           << (m.name[0] == 'm' ? "" : " stroke-dasharray=\"4 3\"") << "/>"
           << "<text x=\"" << num(mx + (right_half ? -4 : 4)) << "\" y=\"" << num(label_y)
           << "\" text-anchor=\"" << (right_half ? "end" : "start") << "\" style=\"fill:" << m.colour << "\">"
           << m.name << " " << escape(human_seconds(m.value)) << "</text>\n";
      label_y += 12;
    }
    out_ << "</svg>\n";
    if (samples.size() == 1) out_ << "<p class=\"note\">Only one sample: no distribution to show.</p>\n";
    if (log_bins)
      out_ << "<p class=\"note\">The samples span more than a decade (" << escape(human_seconds(lo)) << " to "
           << escape(human_seconds(hi))
           << "): bins and axis are logarithmic. A spread this wide is often a busy "
           << "machine; see the CV and the stop reason under Run details.</p>\n";
    out_ << "</figure>\n";
  }

  // (e) latency and throughput against batch size, when a sweep was measured.
  void batch_curve() {
    std::vector<const BatchPoint*> ran, failed;
    for (const auto& b : p().batch_sweep) {
      if (b.fits && b.batch > 0 && positive(b.median) && positive(b.throughput))
        ran.push_back(&b);
      else
        failed.push_back(&b);
    }
    std::stable_sort(ran.begin(), ran.end(),
                     [](const BatchPoint* a, const BatchPoint* b) { return a->batch < b->batch; });
    figure_open(
        "chart-batch", "Batch size: latency and throughput",
        "Median latency of one batch and samples per second (batch &#215; iterations / elapsed) for each "
        "batch size measured.",
        true);
    if (p().batch_sweep.empty()) {
      out_ << "<p class=\"note\" id=\"batch-none\">No batch sweep was measured. Profile with "
              "<code>--batch-sweep 1,2,4,8</code> to see how latency and throughput change with the batch "
              "size."
              "</p>\n</figure>\n";
      return;
    }
    if (ran.empty()) {
      out_ << "<p class=\"note\" id=\"batch-none\">No batch size of the sweep ran.</p>\n";
    } else {
      constexpr double kPanel = 590;
      svg_open(kPanel * 2, 330, "Latency and throughput against batch size");
      batch_panel(
          ran, 0, "latency per batch", [](const BatchPoint& b) { return b.median; }, true,
          svg::palette_color(0));
      batch_panel(
          ran, kPanel, "throughput (samples/s)", [](const BatchPoint& b) { return b.throughput; }, false,
          svg::palette_color(1));
      out_ << "</svg>\n";
    }
    if (!failed.empty()) {
      std::vector<std::string> parts;
      for (const BatchPoint* b : failed)
        parts.push_back("batch " + std::to_string(b->batch) +
                        (b->failure.empty() ? "" : " (" + b->failure + ")"));
      out_ << "<p class=\"note\">Did not run: " << escape(report_detail::join(parts, ", ")) << ".</p>\n";
    }
    out_ << "</figure>\n";
  }

  template <typename Value>
  void batch_panel(const std::vector<const BatchPoint*>& ran, double x_offset, const std::string& title,
                   Value value, bool seconds, const char* colour) {
    const svg::Frame f{x_offset + 76, 12, x_offset + 570, 280};
    double vmax = 0;
    for (const BatchPoint* b : ran) vmax = std::max(vmax, value(*b));
    const double bmin = double(ran.front()->batch), bmax = double(ran.back()->batch);
    // A little room either side of the first and last batch, on the log2 axis.
    svg::Scale x = svg::Scale::log2(bmin / 1.25, bmax * 1.25, f.left, f.right);
    std::vector<double> ticks;
    for (const BatchPoint* b : ran) ticks.push_back(double(b->batch));
    x.set_major_ticks(ticks);
    const svg::Scale y = svg::Scale::linear(0, vmax, f.bottom, f.top, 5);
    svg::draw_axes(
        out_, f, x, y, [](double v) { return fmt::format("{:.0f}", v); },
        seconds ? svg::seconds_labels_for(y) : svg::Labeler(svg::si_label), "batch size", title);
    out_ << "<polyline class=\"curve\" stroke=\"" << colour << "\" points=\"";
    for (const BatchPoint* b : ran) out_ << num(x(double(b->batch))) << "," << num(y(value(*b))) << " ";
    out_ << "\"/>\n";
    for (const BatchPoint* b : ran)
      out_ << "<circle class=\"pt-batch\" cx=\"" << num(x(double(b->batch))) << "\" cy=\""
           << num(y(value(*b))) << "\" r=\"4\" fill=\"" << colour << "\"><title>batch " << b->batch << ": "
           << escape(human_seconds(b->median)) << " per batch, "
           << escape(rate_text(b->throughput, "samples/s")) << "</title></circle>\n";
  }

  // ------------------------------------------------------------ tables

  // A cell with a sort key and, for shares and efficiencies, a bar behind the text.
  std::string num_cell(const std::string& text, double key, const char* bar_class = nullptr,
                       double fraction = 0) const {
    std::string cell = "<td data-v=\"" + sort_key(key) + "\"";
    if (bar_class != nullptr)
      cell += std::string(" class=\"") + bar_class + "\" style=\"--w:" +
              num(100.0 * std::clamp(std::isfinite(fraction) ? fraction : 0.0, 0.0, 1.0)) + "%\"";
    return cell + ">" + escape(text) + "</td>";
  }

  std::string op_cell(const std::string& op_type) const {
    return "<td class=\"l\"><span class=\"swatch\" style=\"background:" + std::string(colour(op_type)) +
           "\"></span>" + escape(op_type) + "</td>";
  }

  static std::string bound_cell(const JoinedNode& n) {
    if (n.bound == Bound::None) return "<td class=\"l\">-</td>";
    return std::string("<td class=\"l bound-") + bound_name(n.bound) + "\">" + bound_name(n.bound) + "</td>";
  }

  static std::string efficiency_text(const JoinedNode& n) {
    return n.bound == Bound::None ? "-" : percent_of(or_nan(n.efficiency), 1.0);
  }

  void hotspot_table() {
    out_ << "<section id=\"hotspots\">\n<h2>Hotspots</h2>\n";
    const size_t top = o_.top > 0 ? std::min(size_t(o_.top), r_.hotspots.size()) : 0;
    if (top == 0) {
      out_ << "<p class=\"note\">" << (o_.top <= 0 ? "Hotspots not listed (top 0)." : "No layers were timed.")
           << "</p>\n</section>\n";
      return;
    }
    out_ << "<p class=\"note\">The " << top << " slowest node" << (top == 1 ? "" : "s")
         << " by median time in the per-layer pass.</p>\n";
    out_ << "<div class=\"scroll\"><table class=\"sortable\"><thead><tr><th>#</th><th "
            "class=\"l\">node</th><th class=\"l\">op</th>"
            "<th>time</th><th>% time</th><th>FLOPs</th><th>% FLOPs</th><th>FLOP/s</th><th>FLOP/B</th>"
            "<th class=\"l\">bound</th><th>efficiency</th></tr></thead>\n<tbody>\n";
    for (size_t rank = 0; rank < top; ++rank) {
      const JoinedNode& n = r_.nodes[size_t(r_.hotspots[rank])];
      out_ << "<tr>" << num_cell(std::to_string(rank + 1), double(rank + 1))
           << "<td class=\"l name\" title=\"" << escape(n.name) << "\">" << escape(n.name) << "</td>"
           << op_cell(n.op_type) << num_cell(human_seconds(or_nan(n.median_seconds)), or_nan(n.median_seconds))
           << num_cell(percent_of(or_nan(n.share_of_time), 1.0), or_nan(n.share_of_time))
           << num_cell(n.flops ? human_count(*n.flops) : "-", or_nan(n.flops))
           << num_cell(percent_of(or_nan(n.share_of_flops), 1.0), or_nan(n.share_of_flops))
           << num_cell(table_rate(or_nan(n.achieved_flops_per_second)), or_nan(n.achieved_flops_per_second))
           << num_cell(intensity_text(or_nan(n.arithmetic_intensity)), or_nan(n.arithmetic_intensity))
           << bound_cell(n) << num_cell(efficiency_text(n), or_nan(n.efficiency), "eff", or_nan(n.efficiency))
           << "</tr>\n";
    }
    out_ << "</tbody></table></div>\n</section>\n";
  }

  void layer_table() {
    out_ << "<section id=\"layers\">\n<h2>All layers</h2>\n";
    if (!o_.show_all_nodes) {
      out_ << "<p class=\"note\">Per-layer rows left out (hotspots only).</p>\n</section>\n";
      return;
    }
    out_
        << "<p class=\"note\">" << r_.nodes.size()
        << " nodes in execution order; click a column to sort. Bytes = read + written; efficiency is against "
           "the bounding roof.</p>\n";
    out_ << "<div class=\"scroll\"><table class=\"sortable\"><thead><tr><th>#</th><th "
            "class=\"l\">node</th><th class=\"l\">op</th>"
            "<th>MACs</th><th>FLOPs</th><th>bytes</th><th>time</th><th>% time</th><th>FLOP/s</th><th>B/s</th>"
            "<th>FLOP/B</th><th class=\"l\">bound</th><th>efficiency</th></tr></thead>\n<tbody>\n";
    for (const JoinedNode& n : r_.nodes) {
      const bool exact = n.status == CostStatus::Exact;
      out_ << "<tr>" << num_cell(std::to_string(n.index), double(n.index)) << "<td class=\"l name\" title=\""
           << escape(n.name) << "\">" << escape(n.name) << "</td>" << op_cell(n.op_type)
           << num_cell(exact ? human_count(n.macs.value_or(0)) : cost_status_name(n.status), or_nan(n.macs))
           << num_cell(exact ? human_count(n.flops.value_or(0)) : "?", or_nan(n.flops))
           << num_cell(exact ? human_bytes(n.bytes.value_or(0)) : "?", or_nan(n.bytes))
           << num_cell(human_seconds(or_nan(n.median_seconds)), or_nan(n.median_seconds))
           << num_cell(percent_of(or_nan(n.share_of_time), 1.0), or_nan(n.share_of_time))
           << num_cell(table_rate(or_nan(n.achieved_flops_per_second)), or_nan(n.achieved_flops_per_second))
           << num_cell(table_rate(or_nan(n.achieved_bytes_per_second)), or_nan(n.achieved_bytes_per_second))
           << num_cell(intensity_text(or_nan(n.arithmetic_intensity)), or_nan(n.arithmetic_intensity))
           << bound_cell(n) << num_cell(efficiency_text(n), or_nan(n.efficiency), "eff", or_nan(n.efficiency))
           << "</tr>\n";
    }
    out_ << "</tbody></table></div>\n</section>\n";
  }

  void op_type_table() {
    out_ << "<section id=\"op-types\">\n<h2>By op type</h2>\n";
    out_ << "<div class=\"scroll\"><table class=\"sortable\"><thead><tr><th "
            "class=\"l\">op</th><th>nodes</th><th>time</th><th>% time</th>"
            "<th>FLOPs</th><th>% FLOPs</th><th>bytes</th><th>FLOP/s</th></tr></thead>\n<tbody>\n";
    for (const JoinedOpType& t : r_.by_op_type)
      out_ << "<tr>" << op_cell(t.op_type) << num_cell(std::to_string(t.count), double(t.count))
           << num_cell(human_seconds(t.seconds), t.seconds)
           << num_cell(percent_of(t.share_of_time, 1.0), t.share_of_time, "share", t.share_of_time)
           << num_cell(human_count(t.flops), double(t.flops))
           << num_cell(percent_of(t.share_of_flops, 1.0), t.share_of_flops)
           << num_cell(human_bytes(t.bytes), double(t.bytes))
           << num_cell(table_rate(t.achieved_flops_per_second), t.achieved_flops_per_second) << "</tr>\n";
    out_ << "</tbody></table></div>\n</section>\n";
  }

  void notices() {
    // The join's, the profile's and the analysis's notices, each once.
    std::vector<std::string> all;
    std::set<std::string> seen;
    for (const auto* list : {&r_.notices, &p().notices, &p().analysis.notices})
      for (const auto& n : *list)
        if (seen.insert(n).second) all.push_back(n);
    out_ << "<section id=\"notices\">\n<h2>Notices</h2>\n";
    if (all.empty()) {
      out_ << "<p class=\"note\">None.</p>\n</section>\n";
      return;
    }
    out_ << "<ul class=\"notices\">\n";
    for (const auto& n : all) out_ << "<li>" << escape(n) << "</li>\n";
    out_ << "</ul>\n</section>\n";
  }

  void conventions() {
    out_ << "<footer id=\"conventions\">\n<p><b>Costs.</b> " << escape(kCostConvention) << ".</p>\n"
         << "<p><b>Statistics.</b> " << escape(kPercentileMethod) << ".</p>\n"
         << "<p><b>Roofline.</b> achieved FLOP/s = node FLOPs / node median; intensity = FLOPs / bytes; "
            "ridge = peak / bandwidth; a node is compute-bound at or above the ridge, else memory-bound; "
            "efficiency is achieved FLOP/s over the peak (compute-bound) or achieved bytes/s over the "
            "bandwidth (memory-bound). Shares of time are of the sum of per-layer medians.</p>\n"
         << "<p>Written by modelstat; this page loads nothing from the network.</p>\n</footer>\n";
  }
};

class JoinedHtmlWriter : public JoinedWriter {
 public:
  void write(const JoinedReport& report, const ReportOptions& options, std::ostream& out) const override {
    Page(report, options, out).write();
  }
};

}  // namespace

std::unique_ptr<JoinedWriter> make_joined_html_writer() {
  return std::make_unique<JoinedHtmlWriter>();
}

}  // namespace modelstat::report

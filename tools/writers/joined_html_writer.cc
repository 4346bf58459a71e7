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
//
// Three files, one Page class (joined_html_page.hpp): this one holds the page
// skeleton (head, CSS, script, summary cards, run details, notices,
// conventions) and the writer; joined_html_charts.cc the SVG charts;
// joined_html_tables.cc the sortable tables.
#include "tools/writers/joined_html_page.hpp"

namespace modelstat::report {
namespace html {

namespace {

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
svg .level-roof { fill: none; stroke: #7b8794; stroke-width: 1.3; }
svg .achievable { fill: none; stroke: #2f6f9f; stroke-width: 1.5; stroke-dasharray: 7 4; }
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
.upcast { color: #8a3b12; font-size: 11px; }
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

}  // namespace

void Page::write() {
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
  if (!p().group_by.empty()) group_table();
  layer_table();
  op_type_table();
  scaling_table();
  notices();
  conventions();
  out_ << "<script>" << kScript << "</script>\n</main>\n</body>\n</html>\n";
}

const char* Page::colour(const std::string& op_type) const {
  const auto it = colour_index_.find(op_type);
  if (it == colour_index_.end() || it->second >= svg::palette_size()) return svg::kOtherColor;
  return svg::palette_color(it->second);
}

void Page::head() {
  const std::string model = base_name(p().analysis.model_path);
  out_ << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
       << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
       << "<meta name=\"generator\" content=\"modelstat\">\n"
       << "<title>modelstat report: " << escape(model.empty() ? "model" : model) << "</title>\n"
       << "<style>" << kStyle << "</style>\n</head>\n<body>\n<main>\n";
}

void Page::card(const std::string& key, const std::string& value_html, const std::string& sub_html) {
  out_ << "<div class=\"card\"><div class=\"k\">" << key << "</div><div class=\"v\">" << value_html
       << "</div><div class=\"s\">" << sub_html << "</div></div>\n";
}

std::string Page::source_badge() const {
  const std::string& source = r_.ceilings.source;
  if (source.empty()) return "<span class=\"badge none\">no ceilings</span>";
  // A long source keeps its kind ("datasheet: h100-sxm" fits; a long one shows
  // what precedes its colon); the whole text is the badge's tooltip and in Run details.
  constexpr size_t kBadgeChars = 24;
  const std::string shown = source.size() <= kBadgeChars ? source : source.substr(0, source.find(':'));
  return std::string("<span class=\"badge ") + (r_.ceilings.measured() ? "measured" : "datasheet") +
         "\" title=\"" + escape(source) + "\">" + escape(ellipsize(shown, kBadgeChars)) + "</span>";
}

void Page::summary() {
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
  out_ << "<nav><a href=\"#charts\">Charts</a><a href=\"#hotspots\">Hotspots</a>"
       << (p().group_by.empty() ? "" : "<a href=\"#groups\">By group</a>")
       << "<a href=\"#layers\">All layers</a><a href=\"#op-types\">By op type</a>"
       << (r_.scaling ? "<a href=\"#scaling\">Thread scaling</a>" : "") << "<a "
          "href=\"#notices\">Notices</a>"
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
  if (r_.forecast_seconds)
    card("Forecast (fit)", escape(human_seconds(*r_.forecast_seconds)),
         (r_.forecast_error ? escape(report_detail::signed_percent(*r_.forecast_error)) + " vs the whole-model median"
                            : std::string("whole-model median not measured")) +
             "<br>per layer: the forecast and fc/meas columns");
  card("Achieved", escape(rate_text(r_.whole_achieved_flops_per_second, "FLOP/s")),
       positive(r_.peak_flops_per_second)
           ? escape(percent_of(r_.whole_efficiency, 1.0)) + " of the " + escape(r_.compute_dtype) +
                 (r_.peak_is_machine_roof ? " machine peak" : " matmul peak") +
                 (r_.peak_is_machine_roof && r_.whole_achievable_efficiency > 0
                      ? " (" + escape(percent_of(r_.whole_achievable_efficiency, 1.0)) + " of achievable)"
                      : std::string()) +
                 "<br>total FLOPs / whole-model median"
           : std::string("no compute ceiling to compare with"));
  card("Work", escape(human_count(a.totals.flops)) + "FLOP",
       escape(human_count(a.totals.macs)) + " MACs &middot; " + escape(human_count(a.totals.params)) +
           " params<br>" + escape(report_detail::coverage_summary(a)));
  card("Compute roof", escape(rate_text(r_.peak_flops_per_second, "FLOP/s")),
       escape(r_.compute_dtype) +
           (r_.peak_is_machine_roof ? " machine peak (" + escape(r_.peak_source) + ")" +
                                          (r_.achievable_flops_per_second > 0
                                               ? "<br>achievable matmul " +
                                                     escape(rate_text(r_.achievable_flops_per_second, "FLOP/s"))
                                               : std::string())
                                    : std::string(" matmul peak")) +
           "<br>" + source_badge());
  std::string levels;
  for (const MemoryLevel& l : r_.memory_roofs)
    levels += (levels.empty() ? "" : " &middot; ") + escape(l.level) + " " + escape(rate_text(l.bytes_per_second, "B/s"));
  card(r_.memory_roofs.empty() ? "Memory roof" : "Memory roofs (" + escape(r_.memory_roofs.back().level) + ")",
       escape(rate_text(r_.memory_bandwidth, "B/s")),
       (levels.empty() ? std::string() : levels + "<br>") + "ridge at " + escape(intensity_text(r_.ridge_intensity)) +
           " FLOP/byte<br>" + source_badge());
  out_ << "</div>\n";
  run_details();
  out_ << "</header>\n";
}

void Page::run_details() {
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
  add("blas", c.blas);
  add("oneDNN isa", c.onednn_isa);
  add("OpenMP", c.openmp);
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

void Page::notices() {
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

void Page::conventions() {
  out_ << "<footer id=\"conventions\">\n<p><b>Costs.</b> " << escape(kCostConvention) << ".</p>\n"
       << "<p><b>Statistics.</b> " << escape(kPercentileMethod) << ".</p>\n"
       << "<p><b>Roofline.</b> achieved FLOP/s = node FLOPs / node median; intensity = FLOPs / bytes; "
          "ridge = peak / bandwidth; a node is compute-bound at or above the ridge, else memory-bound; "
          "efficiency is achieved FLOP/s over the peak (compute-bound) or achieved bytes/s over the "
          "bandwidth (memory-bound). Shares of time are of the sum of per-layer medians.</p>\n"
       << "<p>Written by modelstat; this page loads nothing from the network.</p>\n</footer>\n";
}

}  // namespace html

namespace {

class JoinedHtmlWriter : public JoinedWriter {
 public:
  void write(const JoinedReport& report, const ReportOptions& options, std::ostream& out) const override {
    html::Page(report, options, out).write();
  }
};

}  // namespace

std::unique_ptr<JoinedWriter> make_joined_html_writer() {
  return std::make_unique<JoinedHtmlWriter>();
}

}  // namespace modelstat::report

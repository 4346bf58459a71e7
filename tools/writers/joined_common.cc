// What the joined-report writers share: rates with SI prefixes, the ceilings'
// provenance, and the human report as data (joined_document), drawn by the
// one table and Markdown renderers (DocumentTableWriter, DocumentMarkdownWriter). Everything here selects and formats; the
// figures are join_profile's.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "tools/writers/joined_writers.hpp"

namespace modelstat::report {

using report_detail::Align;
using report_detail::Column;
using report_detail::count_with_exact;
using report_detail::groups_title;
using report_detail::human_seconds;
using report_detail::kJoinedNodeNameWidth;
using report_detail::LineStyle;
using report_detail::percent_of;
using report_detail::Document;
using report_detail::DocumentSection;
using report_detail::rate_text;

namespace {

std::string or_dash(const std::string& s) { return s.empty() ? std::string("-") : s; }

// "?" after a count that is a lower bound (a shape was unknown).
// "*" after one counted on the shapes the run observed (kObservedLegend).
std::string inexact_mark(const JoinedNode& n) {
  return n.status == CostStatus::UnknownShape ? "?" : n.shapes.empty() ? "" : report_detail::kObservedMarker;
}

std::string count_text(const JoinedNode& n, const std::optional<int64_t>& v) {
  return v ? human_count(*v) + inexact_mark(n) : std::string("unknown");
}

std::string bytes_text(const JoinedNode& n) {
  return n.bytes ? human_bytes(*n.bytes) + inexact_mark(n) : std::string("unknown");
}

// "-" for a figure that is not known.
std::string seconds_or_dash(const std::optional<double>& v) { return v ? human_seconds(*v) : "-"; }
std::string share_or_dash(const std::optional<double>& v) { return v ? percent_of(*v, 1.0) : "-"; }

// "memory (L2)": the bound, and for a memory-bound node the level it was placed against.
std::string bound_text(const JoinedNode& n) {
  std::string text = bound_name(n.bound);
  if (n.bound == Bound::Memory && !n.memory_level.empty()) text += " (" + n.memory_level + ")";
  return text;
}

}  // namespace

// A node above its roof is not "130% efficient": a roof is wrong (METHODOLOGY 11).
std::string forecast_ratio_text(const JoinedNode& n) {
  if (!n.forecast_seconds || !n.median_seconds || *n.median_seconds <= 0) return "-";
  return fmt::format("{:.2f}x", *n.forecast_seconds / *n.median_seconds);
}

std::string efficiency_text(const JoinedNode& n) {
  if (!n.efficiency) return "-";
  if (*n.efficiency > 1.0) return "above roof";
  return percent_of(*n.efficiency, 1.0);
}

namespace {

// The cells every node row has, after its rank (hotspots) or on its own (all nodes).
std::vector<std::string> node_cells(const JoinedReport& r, const JoinedNode& n) {
  std::vector<std::string> cells{std::to_string(n.index),
          n.name,
          report_detail::timed_op_text(n.op_type, n.upcast_to_fp32, !n.fused_into.empty(), n.fused_members.size()),
          count_text(n, n.macs),
          count_text(n, n.flops),
          bytes_text(n),
          seconds_or_dash(n.median_seconds),
          share_or_dash(n.share_of_time),
          share_or_dash(n.share_of_flops),
          rate_text(report_detail::giga(n.achieved_flops_per_second)),
          rate_text(report_detail::giga(n.achieved_bytes_per_second)),
          n.arithmetic_intensity ? rate_text(*n.arithmetic_intensity) : "-",
          has_bound(n) ? bound_text(n) : "-",
          efficiency_text(n)};
  if (r.forecast_seconds) {
    cells.push_back(seconds_or_dash(n.forecast_seconds));
    cells.push_back(forecast_ratio_text(n));
  }
  return cells;
}

// A report with fit's forecast adds its two columns: the forecast and
// forecast / measured.
std::vector<Column> node_columns(const JoinedReport& r) {
  std::vector<Column> columns{{"#"},     {"node", Align::Left, kJoinedNodeNameWidth}, {"op", Align::Left}, {"MACs"},    {"FLOPs"},
                              {"bytes"}, {"median"},                        {"%time"},           {"%FLOPs"},  {"GFLOP/s"},
                              {"GB/s"},  {"FLOP/B"},                        {"bound", Align::Left}, {"eff"}};
  if (r.forecast_seconds) {
    columns.push_back({"forecast"});
    columns.push_back({"fc/meas"});
  }
  return columns;
}

DocumentSection context_section(const JoinedReport& r) {
  const RunContext& c = r.profile.context;
  DocumentSection s;
  s.title = "Context";
  std::string device = or_dash(c.device_name);
  if (!c.device_kind.empty()) device += " (" + c.device_kind + ")";
  s.fields = {{"model", or_dash(r.profile.analysis.model_path)},
              {"device", device},
              {"LibTorch", or_dash(c.torch_version)},
              {"threads", std::to_string(c.threads)},
              {"dtype", or_dash(c.dtype)},
              {"batch", std::to_string(c.batch)},
              {"date", or_dash(c.date)},
              {"host", or_dash(c.host)},
              {"inputs", report_detail::inputs_text(c)}};
  // Which kernels ran: the BLAS core and oneDNN's ISA (CPU; absent in older profiles).
  if (!c.blas.empty()) s.fields.push_back({"blas", c.blas});
  if (!c.onednn_isa.empty()) s.fields.push_back({"oneDNN isa", c.onednn_isa});
  if (!c.openmp.empty()) s.fields.push_back({"OpenMP", c.openmp});
  return s;
}

DocumentSection ceilings_section(const JoinedReport& r) {
  const DeviceCeilings& c = r.ceilings;
  DocumentSection s;
  s.title = "Roofline ceilings";
  std::string of = or_dash(c.device_name);
  if (c.device_kind == "cpu" && c.threads > 0) of += fmt::format(", {} thread{}", c.threads, c.threads == 1 ? "" : "s");
  s.fields = {{"source", ceilings_source_text(c)},
              {"ceilings of", of},
              {"peak", si_rate(r.peak_flops_per_second, "FLOP/s") + " (" + r.compute_dtype + " " +
                           (r.peak_is_machine_roof ? "machine peak: " + r.peak_source : std::string("matmul")) + ")"}};
  if (r.peak_is_machine_roof && r.achievable_flops_per_second > 0)
    s.fields.push_back({"achievable", si_rate(r.achievable_flops_per_second, "FLOP/s") + " (" + r.compute_dtype +
                                          " matmul, the best of its curve)"});
  if (r.memory_roofs.empty()) {
    s.fields.push_back({"memory bandwidth", si_rate(r.memory_bandwidth, "B/s") + " (bytes read + written, large copy)"});
  } else {
    // One line per level: its roof and the working sets it holds.
    std::string levels;
    for (const MemoryLevel& level : r.memory_roofs)
      levels += (levels.empty() ? "" : ", ") + level.level + " " + si_rate(level.bytes_per_second, "B/s") +
                (level.capacity_bytes > 0 ? " (<= " + human_bytes(level.capacity_bytes) + ")" : "");
    s.fields.push_back({"memory roofs", levels + "; a node is placed against the level its bytes fit in"});
  }
  s.fields.push_back({"ridge intensity", r.ridge_intensity > 0
                                             ? rate_text(r.ridge_intensity) + " FLOP/B against " +
                                                   (r.memory_roofs.empty() ? std::string("the copy")
                                                                           : r.memory_roofs.back().level) +
                                                   " (compute-bound at or above it)"
                                             : std::string("-")});
  return s;
}

DocumentSection whole_section(const JoinedReport& r) {
  const ProfileResult& p = r.profile;
  DocumentSection s;
  s.title = "Whole model";
  const bool whole = p.whole.count > 0 && p.whole.median > 0;
  s.fields = {{"whole model (median)", whole ? human_seconds(p.whole.median) + " (clean pass)" : "-"},
              {"layer sum", human_seconds(r.layer_sum_seconds) + " (sum of per-node medians, instrumented pass)"},
              {"FLOPs", count_with_exact(p.analysis.totals.flops)},
              {"achieved", whole ? si_rate(r.whole_achieved_flops_per_second, "FLOP/s") + " (FLOPs / whole-model median)"
                                 : "-"},
              {"efficiency", whole && r.peak_flops_per_second > 0
                                 ? percent_of(r.whole_efficiency, 1.0) + " of the " + r.compute_dtype +
                                       (r.peak_is_machine_roof ? " machine peak" : " matmul peak") +
                                       (r.peak_is_machine_roof && r.whole_achievable_efficiency > 0
                                            ? ", " + percent_of(r.whole_achievable_efficiency, 1.0) +
                                                  " of the achievable matmul"
                                            : std::string())
                                 : "-"}};
  if (r.forecast_seconds)
    s.fields.push_back({"forecast (fit)", human_seconds(*r.forecast_seconds) +
                                              (r.forecast_error ? fmt::format(" ({:+.1f}% vs the whole-model median)",
                                                                              *r.forecast_error * 100.0)
                                                                : std::string()) +
                                              "; per node: the forecast and fc/meas columns"});
  else if (!r.forecast_note.empty())
    s.fields.push_back({"forecast (fit)", r.forecast_note});
  if (p.analysis.totals.nodes_exact < p.analysis.totals.nodes)
    s.lines.push_back("FLOPs coverage: " + report_detail::coverage_summary(p.analysis));
  return s;
}

DocumentSection hotspot_section(const JoinedReport& r, size_t n) {
  DocumentSection s;
  s.title = fmt::format("Hotspots (top {} by median time)", n);
  s.columns = node_columns(r);
  s.columns.insert(s.columns.begin(), Column{"rank"});
  for (size_t i = 0; i < n; ++i) {
    const JoinedNode& node = r.nodes[size_t(r.hotspots[i])];
    std::vector<std::string> cells = node_cells(r, node);
    cells.insert(cells.begin(), std::to_string(i + 1));
    s.rows.push_back(std::move(cells));
    s.highlight.push_back(node.status != CostStatus::Exact);
    if (node.upcast_to_fp32 && s.lines.empty()) s.lines.push_back(report_detail::kUpcastLegend);
  }
  return s;
}

DocumentSection nodes_section(const JoinedReport& r) {
  const bool subgraphs = !r.subgraph_nodes.empty();
  DocumentSection s;
  s.title = subgraphs ? fmt::format(
                            "Per-node roofline ({} nodes, graph order, and {} subgraph nodes that ran, "
                            "indented under theirs)",
                            r.nodes.size(), r.subgraph_nodes.size())
                      : fmt::format("Per-node roofline ({} nodes, graph order)", r.nodes.size());
  s.columns = node_columns(r);
  if (subgraphs) s.columns.insert(s.columns.begin() + 3, Column{"calls"});
  std::vector<const JoinedNode*> top;
  for (const JoinedNode& n : r.nodes) top.push_back(&n);
  bool upcast = false, fused = false, observed = false;
  for (const auto& [n, in_subgraph] : report_detail::under_their_parents(top, r.subgraph_nodes)) {
    std::vector<std::string> cells = node_cells(r, *n);
    if (in_subgraph) cells[0].clear();
    if (subgraphs)
      cells.insert(cells.begin() + 3, in_subgraph ? report_detail::mean_count(n->calls_per_run) : "");
    s.rows.push_back(std::move(cells));
    s.highlight.push_back(n->status != CostStatus::Exact);
    s.depth.push_back(n->depth);
    upcast = upcast || n->upcast_to_fp32;
    fused = fused || !n->fused_into.empty() || !n->fused_members.empty();
    observed = observed || !n->shapes.empty();
  }
  if (observed) s.lines.push_back(std::string("FLOPs, bytes: ") + report_detail::kObservedLegend);
  if (upcast) s.lines.push_back(report_detail::kUpcastLegend);
  if (fused) s.lines.push_back(report_detail::kFusedLegend);
  if (subgraphs)
    s.lines.push_back(
        "subgraph nodes (inside If / Loop / Scan): time and cost per model run, the sum over its "
        "calls (calls: per run); inside their parent's time and cost");
  return s;
}

// --group-by: the group rows (the profile's LayerGroup sums), in place of the per-node ones.
DocumentSection groups_section(const JoinedReport& r) {
  const ProfileResult& p = r.profile;
  DocumentSection s;
  s.title = groups_title(p.group_by, p.groups.size(), r.nodes.size(), "roofline");
  s.columns = {{"group", Align::Left, kJoinedNodeNameWidth},
               {"#"},
               {"nodes"},
               {"FLOPs"},
               {"bytes"},
               {"time"},
               {"%time"},
               {"%FLOPs"},
               {"GFLOP/s"},
               {"GB/s"}};
  bool any_partial = false;
  for (const LayerGroup& g : p.groups) {
    const bool none_known = g.layers_not_exact == g.layers;
    const std::string mark = g.layers_not_exact > 0 ? "?" : "";
    any_partial = any_partial || (g.layers_not_exact > 0 && !none_known);
    s.rows.push_back({g.key, std::to_string(g.first_index), std::to_string(g.layers),
                      none_known ? "unknown" : human_count(g.flops) + mark,
                      none_known ? "unknown" : human_bytes(g.bytes) + mark, human_seconds(g.seconds),
                      share_or_dash(g.share_of_time), share_or_dash(g.share_of_flops),
                      rate_text(report_detail::giga(g.achieved_flops_per_second)),
                      rate_text(report_detail::giga(g.achieved_bytes_per_second))});
    s.highlight.push_back(g.layers_not_exact > 0);
  }
  s.lines.push_back(
      "time: the sum of the group's node medians; GFLOP/s, GB/s: its FLOPs, bytes / its time (no roofline "
      "place: a group mixes compute- and memory-bound nodes)");
  s.lines.push_back(report_detail::kGroupLegend);
  if (any_partial)
    s.lines.push_back(
        "?: some nodes of this group have no exact cost; the FLOPs and bytes are a lower bound");
  return s;
}

// --scaling: the whole model and the `top` nodes that give away the most
// time against a perfect split.
DocumentSection scaling_section(const ScalingView& v, size_t top) {
  DocumentSection s;
  s.title = fmt::format("Thread scaling (1 -> {} threads, by time lost)", v.threads);
  s.fields = {{"whole model", human_seconds(v.one_thread_median) + " -> " + human_seconds(v.median) +
                                  fmt::format(": {:.2f}x, {} parallel efficiency", v.speedup,
                                              percent_of(v.efficiency, 1.0))},
              {"layer sum", human_seconds(v.layer_sum_one_thread) + " -> " + human_seconds(v.layer_sum)}};
  s.columns = {{"#"},       {"node", Align::Left, kJoinedNodeNameWidth}, {"op", Align::Left}, {"1 thread"},
               {fmt::format("{} threads", v.threads)}, {"speedup"}, {"eff"}, {"lost"}, {"why", Align::Left}};
  for (size_t i = 0; i < v.nodes.size() && i < top; ++i) {
    const NodeScaling& n = v.nodes[i];
    s.rows.push_back({std::to_string(n.index), n.name, n.op_type, human_seconds(n.one_thread_seconds),
                      human_seconds(n.seconds), fmt::format("{:.2f}x", n.speedup), percent_of(n.efficiency, 1.0),
                      human_seconds(n.lost_seconds), n.why.empty() ? "scales" : n.why});
    s.highlight.push_back(!n.why.empty());
  }
  s.lines.push_back(fmt::format(
      "lost: the N-thread median minus a perfect split of the 1-thread one; eff = speedup / {}; a node below {} "
      "efficiency is too small to split (< {} at 1 thread), at the memory roof (memory-bound at >= {} of its "
      "level's bandwidth), serial (speedup < {:.2f}x) or partly parallel",
      v.threads, percent_of(kScalesEfficiency, 1.0), human_seconds(kTooSmallSeconds),
      percent_of(kAtRoofEfficiency, 1.0), kSerialSpeedup));
  return s;
}

DocumentSection op_type_section(const JoinedReport& r) {
  DocumentSection s;
  s.title = "By op type (by time)";
  s.columns = {{"op", Align::Left}, {"nodes"}, {"FLOPs"}, {"bytes"}, {"time"}, {"%time"}, {"%FLOPs"}, {"GFLOP/s"}};
  const int64_t total_flops = r.profile.analysis.totals.flops;
  bool any_partial = false;
  for (const JoinedOpType& t : r.by_op_type) {
    const bool none_known = t.nodes_not_exact == t.count;
    // Nothing counted: "unknown". Some nodes not exact: the count is a lower bound, "?".
    const bool unknown = none_known && t.flops == 0 && t.bytes == 0;
    const std::string mark = t.nodes_not_exact > 0 ? "?" : "";
    any_partial = any_partial || (t.nodes_not_exact > 0 && !unknown);
    s.rows.push_back({t.op_type, std::to_string(t.count), unknown ? "unknown" : human_count(t.flops) + mark,
                      unknown ? "unknown" : human_bytes(t.bytes) + mark,
                      human_seconds(t.seconds),
                      r.layer_sum_seconds > 0 ? percent_of(t.share_of_time, 1.0) : "-",
                      total_flops > 0 && !none_known ? percent_of(t.share_of_flops, 1.0) : "-",
                      !none_known && t.seconds > 0 ? rate_text(t.achieved_flops_per_second / 1e9) : "-"});
    s.highlight.push_back(t.nodes_not_exact > 0);
  }
  if (any_partial)
    s.lines.push_back("?: some nodes of this type have no exact cost; the FLOPs and bytes are a lower bound");
  return s;
}

}  // namespace

std::string ceilings_source_text(const DeviceCeilings& c) {
  if (!c.measured()) return or_dash(c.source) + " (vendor figures, not measured on this device)";
  std::string out = "measured";
  if (!c.date.empty()) out += " " + c.date;
  if (!c.host.empty()) out += " on " + c.host;
  return out;
}

Document joined_document(const JoinedReport& r, const ReportOptions& options) {
  Document doc;
  doc.title = "modelstat report: " + or_dash(r.profile.analysis.model_path);
  doc.sections.push_back(context_section(r));
  doc.sections.push_back(ceilings_section(r));

  DocumentSection conventions;
  conventions.lines = {
      std::string("convention: ") + (kCostConvention ? kCostConvention : ""),
      "time: per-node medians of the instrumented pass; %time: share of their sum (the layer sum); "
      "%FLOPs: share of the model's FLOPs",
      "roofline: GFLOP/s = FLOPs / median, GB/s = bytes / median, FLOP/B = FLOPs / bytes; bound = compute "
      "when FLOP/B >= the ridge intensity, else memory; eff = GFLOP/s / peak (compute) or GB/s / bandwidth "
      "(memory)" +
          std::string(r.memory_roofs.empty() ? ""
                                             : ", the bandwidth of the smallest memory level holding the node's "
                                               "bytes (the level in brackets)")};
  conventions.line_style = LineStyle::Dim;
  doc.sections.push_back(std::move(conventions));

  doc.sections.push_back(whole_section(r));
  const size_t top = std::min(r.hotspots.size(), size_t(std::max(options.top, 0)));
  if (top > 0) doc.sections.push_back(hotspot_section(r, top));
  if (!r.profile.group_by.empty())
    doc.sections.push_back(groups_section(r));
  else if (options.show_all_nodes && !r.nodes.empty())
    doc.sections.push_back(nodes_section(r));
  if (!r.by_op_type.empty()) doc.sections.push_back(op_type_section(r));
  if (r.scaling) doc.sections.push_back(scaling_section(*r.scaling, std::max(top, size_t(10))));

  DocumentSection notices;
  notices.title = "Notices";
  notices.line_style = LineStyle::Warn;
  const auto above = std::count_if(r.nodes.begin(), r.nodes.end(),
                                   [](const JoinedNode& n) { return n.efficiency.value_or(0) > 1.0; });
  if (above > 0)
    notices.lines.push_back(fmt::format(
        "note: {} node(s) run above their roof (\"above roof\"): a roof is wrong, not the node over 100% "
        "efficient: {}",
        above,
        r.memory_roofs.empty()
            ? "these ceilings have no cache levels (schema 1.x), so a node whose data stayed in a cache beats the "
              "DRAM copy bandwidth; re-run 'modelstat device'"
            : "the ceilings are low (quick, measured under load, or from another device), or a working set fits a "
              "smaller level than its bytes say"));
  for (const std::string& notice : r.notices) notices.lines.push_back("note: " + notice);
  for (const std::string& notice : r.profile.notices) notices.lines.push_back("note: " + notice);
  if (!notices.lines.empty()) doc.sections.push_back(std::move(notices));
  return doc;
}

}  // namespace modelstat::report

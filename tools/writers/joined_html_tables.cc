// Page (joined_html_page.hpp): the sortable tables of the joined HTML report.
#include "tools/writers/joined_html_page.hpp"

namespace modelstat::report::html {

std::string Page::num_cell(const std::string& text, double key, const char* bar_class,
                     double fraction) const {
  std::string cell = "<td data-v=\"" + sort_key(key) + "\"";
  if (bar_class != nullptr)
    cell += std::string(" class=\"") + bar_class + "\" style=\"--w:" +
            num(100.0 * std::clamp(std::isfinite(fraction) ? fraction : 0.0, 0.0, 1.0)) + "%\"";
  return cell + ">" + escape(text) + "</td>";
}

// A fused group's head: its members under its name (its row's time and cost are the group's).
std::string Page::members_note_html(const JoinedNode& n) const {
  if (n.fused_members.empty()) return {};
  std::string list;
  for (const std::string& m : n.fused_members) list += (list.empty() ? "" : ", ") + m;
  return "<br><small title=\"one kernel" + (n.kernel.empty() ? std::string() : " (" + escape(n.kernel) + ")") +
         "\">+ " + escape(list) + "</small>";
}

std::string Page::op_cell(const std::string& op_type, bool upcast_to_fp32) const {
  std::string cell =
      "<td class=\"l\"><span class=\"swatch\" style=\"background:" + std::string(colour(op_type)) +
      "\"></span>" + escape(op_type);
  if (upcast_to_fp32)
    cell += " <span class=\"upcast\" title=\"" + escape(report_detail::kUpcastLegend) + "\">^fp32</span>";
  return cell + "</td>";
}

std::string Page::bound_cell(const JoinedNode& n) {
  if (n.bound == Bound::None) return "<td class=\"l\">-</td>";
  return std::string("<td class=\"l bound-") + bound_name(n.bound) + "\">" + bound_name(n.bound) + "</td>";
}

std::string Page::efficiency_text(const JoinedNode& n) {
  return n.bound == Bound::None ? "-" : report::efficiency_text(n);
}

// fit's forecast and forecast / measured, in a report that has a forecast.
std::string Page::forecast_headers() const {
  return r_.forecast_seconds ? "<th>forecast</th><th>fc/meas</th>" : "";
}

std::string Page::forecast_cells(const JoinedNode& n) const {
  if (!r_.forecast_seconds) return {};
  const double ratio = n.forecast_seconds && n.median_seconds && *n.median_seconds > 0
                           ? *n.forecast_seconds / *n.median_seconds
                           : std::nan("");
  return num_cell(n.forecast_seconds ? human_seconds(*n.forecast_seconds) : "-", or_nan(n.forecast_seconds)) +
         num_cell(forecast_ratio_text(n), ratio);
}

void Page::hotspot_table() {
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
          "<th class=\"l\">bound</th><th>efficiency</th>"
       << forecast_headers() << "</tr></thead>\n<tbody>\n";
  for (size_t rank = 0; rank < top; ++rank) {
    const JoinedNode& n = r_.nodes[size_t(r_.hotspots[rank])];
    out_ << "<tr>" << num_cell(std::to_string(rank + 1), double(rank + 1)) << "<td class=\"l name\" title=\""
         << escape(n.name) << "\">" << escape(n.name) << members_note_html(n) << "</td>"
         << op_cell(n.op_type, n.upcast_to_fp32)
         << num_cell(human_seconds(or_nan(n.median_seconds)), or_nan(n.median_seconds))
         << num_cell(percent_of(or_nan(n.share_of_time), 1.0), or_nan(n.share_of_time))
         << num_cell(n.flops ? human_count(*n.flops) : "-", or_nan(n.flops))
         << num_cell(percent_of(or_nan(n.share_of_flops), 1.0), or_nan(n.share_of_flops))
         << num_cell(table_rate(or_nan(n.achieved_flops_per_second)), or_nan(n.achieved_flops_per_second))
         << num_cell(intensity_text(or_nan(n.arithmetic_intensity)), or_nan(n.arithmetic_intensity))
         << bound_cell(n) << num_cell(efficiency_text(n), or_nan(n.efficiency), "eff", or_nan(n.efficiency))
         << forecast_cells(n) << "</tr>\n";
  }
  out_ << "</tbody></table></div>\n</section>\n";
}

void Page::layer_table() {
  out_ << "<section id=\"layers\">\n<h2>All layers</h2>\n";
  if (!o_.show_all_nodes) {
    out_ << "<p class=\"note\">Per-layer rows left out (hotspots only).</p>\n</section>\n";
    return;
  }
  const bool subgraphs = !r_.subgraph_nodes.empty();
  out_ << "<p class=\"note\">" << r_.nodes.size()
       << " nodes in execution order; click a column to sort. Bytes = read + written; efficiency is against "
          "the bounding roof.";
  if (subgraphs)
    out_ << " Under a control-flow node, indented, the " << r_.subgraph_nodes.size()
         << " subgraph nodes that ran inside it (If / Loop / Scan), named by their path: time and cost per "
            "model "
            "run, the sum over its calls (calls: per run), inside their parent's.";
  out_ << "</p>\n";
  out_ << "<div class=\"scroll\"><table class=\"sortable\"><thead><tr><th>#</th><th "
          "class=\"l\">node</th><th class=\"l\">op</th>"
       << (subgraphs ? "<th>calls</th>" : "")
       << "<th>MACs</th><th>FLOPs</th><th>bytes</th><th>time</th><th>% time</th><th>FLOP/s</th><th>B/s</th>"
          "<th>FLOP/B</th><th class=\"l\">bound</th><th>efficiency</th>"
       << forecast_headers() << "</tr></thead>\n<tbody>\n";
  std::vector<const JoinedNode*> top;
  for (const JoinedNode& n : r_.nodes) top.push_back(&n);
  for (const auto& [node, in_subgraph] : report_detail::under_their_parents(top, r_.subgraph_nodes)) {
    const JoinedNode& n = *node;
    const bool exact = n.status == CostStatus::Exact;
    // A subgraph node: indented by its depth, its index (its parent's) kept only as the sort key.
    const std::string indent = n.depth > 0 ? " style=\"padding-left:" + std::to_string(n.depth) + "em\"" : "";
    out_ << "<tr>" << num_cell(in_subgraph ? "" : std::to_string(n.index), double(n.index))
         << "<td class=\"l name\"" << indent << " title=\"" << escape(n.name) << "\">" << escape(n.name)
         << members_note_html(n) << "</td>" << op_cell(n.op_type, n.upcast_to_fp32);
    if (subgraphs)
      out_ << (in_subgraph ? num_cell(mean_count(n.calls_per_run), n.calls_per_run) : num_cell("", 1.0));
    out_ << num_cell(exact ? human_count(n.macs.value_or(0)) : cost_status_name(n.status), or_nan(n.macs))
         << num_cell(exact ? human_count(n.flops.value_or(0)) : "?", or_nan(n.flops))
         << num_cell(exact ? human_bytes(n.bytes.value_or(0)) : "?", or_nan(n.bytes))
         << num_cell(human_seconds(or_nan(n.median_seconds)), or_nan(n.median_seconds))
         << num_cell(percent_of(or_nan(n.share_of_time), 1.0), or_nan(n.share_of_time))
         << num_cell(table_rate(or_nan(n.achieved_flops_per_second)), or_nan(n.achieved_flops_per_second))
         << num_cell(table_rate(or_nan(n.achieved_bytes_per_second)), or_nan(n.achieved_bytes_per_second))
         << num_cell(intensity_text(or_nan(n.arithmetic_intensity)), or_nan(n.arithmetic_intensity))
         << bound_cell(n) << num_cell(efficiency_text(n), or_nan(n.efficiency), "eff", or_nan(n.efficiency))
         << forecast_cells(n) << "</tr>\n";
  }
  out_ << "</tbody></table></div>\n</section>\n";
}

void Page::group_table() {
  const ProfileResult& pr = p();
  out_ << "<section id=\"groups\">\n<h2>By group (--group-by " << escape(pr.group_by) << ")</h2>\n";
  out_ << "<p class=\"note\">" << pr.groups.size() << " group" << (pr.groups.size() == 1 ? "" : "s")
       << " of the " << r_.nodes.size() << " nodes, in order of first appearance; click a column to sort. "
       << escape(std::string("Time: the sum of the group's node medians; FLOP/s, B/s: its FLOPs, bytes / its "
                             "time; ") +
                 report_detail::kGroupLegend + ".")
       << "</p>\n";
  out_ << "<div class=\"scroll\"><table class=\"sortable\"><thead><tr><th class=\"l\">group</th><th>#</th>"
          "<th>nodes</th><th>time</th><th>% time</th><th>FLOPs</th><th>% FLOPs</th><th>bytes</th>"
          "<th>FLOP/s</th><th>B/s</th></tr></thead>\n<tbody>\n";
  for (const LayerGroup& g : pr.groups) {
    const bool none_known = g.layers_not_exact == g.layers;
    const std::string mark = g.layers_not_exact > 0 ? "?" : "";
    out_ << "<tr><td class=\"l name\" title=\"" << escape(g.key) << "\">" << escape(g.key) << "</td>"
         << num_cell(std::to_string(g.first_index), double(g.first_index))
         << num_cell(std::to_string(g.layers), double(g.layers))
         << num_cell(human_seconds(g.seconds), g.seconds)
         << num_cell(percent_of(or_nan(g.share_of_time), 1.0), or_nan(g.share_of_time), "share",
                     or_nan(g.share_of_time))
         << num_cell(none_known ? "unknown" : human_count(g.flops) + mark, double(g.flops))
         << num_cell(percent_of(or_nan(g.share_of_flops), 1.0), or_nan(g.share_of_flops))
         << num_cell(none_known ? "unknown" : human_bytes(g.bytes) + mark, double(g.bytes))
         << num_cell(table_rate(or_nan(g.achieved_flops_per_second)), or_nan(g.achieved_flops_per_second))
         << num_cell(table_rate(or_nan(g.achieved_bytes_per_second)), or_nan(g.achieved_bytes_per_second))
         << "</tr>\n";
  }
  out_ << "</tbody></table></div>\n</section>\n";
}

void Page::scaling_table() {
  if (!r_.scaling) return;
  const ScalingView& v = *r_.scaling;
  out_ << "<section id=\"scaling\">\n<h2>Thread scaling (1 &rarr; " << v.threads << " threads)</h2>\n";
  out_ << "<p class=\"note\">Whole model " << escape(human_seconds(v.one_thread_median)) << " &rarr; "
       << escape(human_seconds(v.median)) << ": " << escape(fmt::format("{:.2f}x", v.speedup)) << ", "
       << escape(percent_of(v.efficiency, 1.0))
       << " parallel efficiency. Per node, by time lost against a perfect split (the N-thread median minus "
          "the 1-thread one over N); click a column to sort.</p>\n";
  out_ << "<div class=\"scroll\"><table class=\"sortable\"><thead><tr><th>#</th><th class=\"l\">node</th>"
          "<th class=\"l\">op</th><th>1 thread</th><th>"
       << v.threads
       << " threads</th><th>speedup</th><th>efficiency</th><th>lost</th><th class=\"l\">why</th></tr></thead>\n"
          "<tbody>\n";
  for (const NodeScaling& n : v.nodes)
    out_ << "<tr>" << num_cell(std::to_string(n.index), double(n.index)) << "<td class=\"l name\" title=\""
         << escape(n.name) << "\">" << escape(n.name) << "</td>" << op_cell(n.op_type)
         << num_cell(human_seconds(n.one_thread_seconds), n.one_thread_seconds)
         << num_cell(human_seconds(n.seconds), n.seconds) << num_cell(fmt::format("{:.2f}x", n.speedup), n.speedup)
         << num_cell(percent_of(n.efficiency, 1.0), n.efficiency, "eff", std::min(1.0, n.efficiency))
         << num_cell(human_seconds(n.lost_seconds), n.lost_seconds) << "<td class=\"l\">"
         << escape(n.why.empty() ? std::string("scales") : n.why) << "</td></tr>\n";
  out_ << "</tbody></table></div>\n</section>\n";
}

void Page::op_type_table() {
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

}  // namespace modelstat::report::html

// Page (joined_html_page.hpp): the inline SVG charts of the joined HTML report and their legend.
#include "tools/writers/joined_html_page.hpp"

namespace modelstat::report::html {

void Page::figure_open(const char* id, const std::string& title, const std::string& caption_html,
                 bool wide) {
  out_ << "<figure id=\"" << id << "\"" << (wide ? " class=\"wide\"" : "") << ">\n<figcaption><h3>" << title
       << "</h3><p>" << caption_html << "</p></figcaption>\n";
}

std::pair<svg::Scale, svg::Scale> Page::log_log_chart(double x_lo, double x_hi, double y_lo, double y_hi,
                                                      const std::string& label, const svg::Labeler& y_label,
                                                      const std::string& x_title, const std::string& y_title) {
  const svg::Frame f = kPlotWithLegend;
  const svg::Scale x = svg::Scale::log10(x_lo, x_hi, f.left, f.right);
  const svg::Scale y = svg::Scale::log10(y_lo, y_hi, f.bottom, f.top);
  svg_open(kChartWidth, kChartHeight, label);
  svg::draw_axes(out_, f, x, y, svg::si_label, y_label, x_title, y_title);
  return {x, y};
}

void Page::svg_open(double width, double height, const std::string& label) {
  // Inline SVG in HTML needs no xmlns (and the page then names no URL at all).
  out_ << "<svg viewBox=\"0 0 " << num(width) << " " << num(height) << "\" role=\"img\" aria-label=\""
       << escape(label) << "\">\n";
}

void Page::legend(const std::set<std::string>& plotted_types, double x, double y,
            const std::string& line_label) {
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

std::string Page::point_title(const JoinedNode& n) const {
  return escape(n.name) + "&#10;" + escape(n.op_type) + " &#183; " + escape(human_count(n.flops.value_or(0))) +
         "FLOP &#183; " + escape(human_seconds(or_nan(n.median_seconds))) + " (" +
         escape(percent_of(or_nan(n.share_of_time), 1.0)) + " of time) &#183; " +
         escape(rate_text(or_nan(n.achieved_flops_per_second), "FLOP/s")) + members_note(n);
}

// A fused group's head: the nodes its one kernel ran, named (its point is the group's).
std::string Page::members_note(const JoinedNode& n) const {
  if (n.fused_members.empty()) return {};
  std::string list;
  for (const std::string& m : n.fused_members) list += (list.empty() ? "" : ", ") + m;
  return "&#10;one kernel" + (n.kernel.empty() ? std::string() : " (" + escape(n.kernel) + ")") + " with " +
         escape(list);
}

std::string Page::left_out_note(size_t count, const char* why) {
  if (count == 0) return {};
  return "<p class=\"note left-out\">" + std::to_string(count) + " node" + (count == 1 ? "" : "s") + " " +
         why + " not shown (no place on a log axis).</p>\n";
}

void Page::scatter() {
  std::vector<const JoinedNode*> shown;
  // A fused member's own time is only its marker's (its work is in its group's row, which carries its FLOPs).
  size_t members = 0;
  for (const auto& n : r_.nodes) {
    if (!n.fused_into.empty()) ++members;
    else if (n.flops.value_or(0) > 0 && positive(or_nan(n.median_seconds))) shown.push_back(&n);
  }
  const size_t left_out = r_.nodes.size() - shown.size() - members;
  const std::string fused_note =
      members == 0 ? std::string()
                   : "<p class=\"note left-out\">" + std::to_string(members) +
                         (members == 1 ? " fused member not shown: its work is in its group's point"
                                       : " fused members not shown: their work is in their groups' points") +
                         ".</p>\n";
  figure_open("chart-scatter", "FLOPs vs latency per layer",
              "Each point is one node: its analysed FLOPs against its median time in the per-layer pass. "
              "The dashed line is the time each FLOP count would take at the compute roof.");
  if (shown.empty()) {
    out_ << "<p class=\"note\">No node has both FLOPs and a measured time: nothing to plot.</p>\n"
         << left_out_note(left_out, "with no FLOPs or no time") << fused_note << "</figure>\n";
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
  const auto [x, y] = log_log_chart(fmin, fmax, tmin, tmax, "FLOPs versus median latency per layer, log-log",
                                    svg::seconds_label, "FLOPs per node", "median time per node");
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
  out_ << "</svg>\n" << left_out_note(left_out, "with no FLOPs or no time") << fused_note << "</figure>\n";
}

void Page::roofline() {
  const double peak = r_.peak_flops_per_second, bandwidth = r_.memory_bandwidth, ridge = r_.ridge_intensity;
  const bool roofs = positive(peak) && positive(bandwidth) && positive(ridge);
  figure_open(
      "chart-roofline", "Roofline",
      "Each node at its arithmetic intensity (FLOPs / bytes moved) and achieved FLOP/s; marker area "
      "is its share of time. Roofs: " +
          (roofs ? escape(rate_text(bandwidth, "B/s")) + " &times; intensity and " +
                       escape(rate_text(peak, "FLOP/s")) + " (" + escape(r_.compute_dtype) +
                       (r_.peak_is_machine_roof ? " machine peak" : " matmul") + "), " + source_badge()
                 : std::string("none (no ceilings)")) +
          "." +
          (r_.memory_roofs.size() > 1
               ? " Thin lines: the bandwidth of each cache level (a node is judged against the level its bytes "
                 "fit in); dashed: the achievable matmul."
               : std::string()));
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
  // Cache levels: faster than DRAM, so their ridges lie to the left of its own.
  double fastest_level = bandwidth;
  for (const MemoryLevel& l : r_.memory_roofs) fastest_level = std::max(fastest_level, l.bytes_per_second);
  if (roofs) {
    // Room on both sides of the ridge, and above the compute roof for its label.
    imin = std::min(imin, peak / fastest_level / 10);
    imin = std::min(imin, ridge / 10);
    imax = std::max(imax, ridge * 10);
    pmax = std::max(pmax, peak * 2);
    pmin = std::min(pmin, peak / 1000);
  }
  const svg::Frame f = kPlotWithLegend;
  const auto [x, y] = log_log_chart(imin, imax, pmin, pmax,
                                    "Roofline: achieved FLOP/s against arithmetic intensity per layer",
                                    svg::si_label, "arithmetic intensity (FLOP/byte)", "achieved FLOP/s");
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
         << "\" text-anchor=\"end\">" << (r_.peak_is_machine_roof ? "machine peak: " : "") << escape(rate_text(peak, "FLOP/s")) << " "
         << escape(r_.compute_dtype) << "</text>\n";
    // Every cache level: bandwidth x I up to the compute roof, labelled at its top.
    for (size_t k = 0; k + 1 < r_.memory_roofs.size(); ++k) {
      const MemoryLevel& level = r_.memory_roofs[k];
      const double bw = level.bytes_per_second;
      if (!positive(bw) || bw <= bandwidth) continue;
      const double l0 = std::max(x.lo(), y.lo() / bw), l1 = peak / bw;
      out_ << "<line class=\"level-roof\" x1=\"" << num(x(l0)) << "\" y1=\"" << num(y(bw * l0)) << "\" x2=\""
           << num(x(l1)) << "\" y2=\"" << num(y(peak)) << "\"><title>" << escape(level.level) << ": "
           << escape(rate_text(bw, "B/s")) << "</title></line>\n";
      const double angle = std::atan2(y(peak) - y(bw * l0), x(l1) - x(l0)) * 180.0 / kPi;
      // Labels staggered along their lines, so that close levels do not print over each other.
      const double along = 0.3 + 0.22 * double(k % 3);
      const double lx = x(l0) + (x(l1) - x(l0)) * along, ly = y(bw * l0) + (y(peak) - y(bw * l0)) * along;
      out_ << "<text class=\"roof-label\" transform=\"translate(" << num(lx) << "," << num(ly) << ") rotate("
           << num(angle) << ")\" y=\"-5\">" << escape(level.level) << " " << escape(rate_text(bw, "B/s"))
           << "</text>\n";
    }
    // The achievable roof: what the library's matmul reached, below the machine's.
    const double achievable = r_.achievable_flops_per_second;
    if (r_.peak_is_machine_roof && positive(achievable) && achievable < peak) {
      out_ << "<line class=\"achievable\" x1=\"" << num(x(std::max(x.lo(), achievable / fastest_level))) << "\" y1=\""
           << num(y(achievable)) << "\" x2=\"" << num(x(x.hi())) << "\" y2=\"" << num(y(achievable)) << "\"/>\n";
      out_ << "<text class=\"roof-label\" x=\"" << num(f.right - 4) << "\" y=\"" << num(y(achievable) + 14)
           << "\" text-anchor=\"end\">achievable: " << escape(rate_text(achievable, "FLOP/s")) << " "
           << escape(r_.compute_dtype) << " matmul</text>\n";
    }
    // The bandwidth label runs along the memory roof, two thirds of the way up it
    // (memory-bound layers crowd its low-intensity end); a white halo keeps it readable.
    const double ax = x(i0), ay = y(bandwidth * i0), bx = x(ridge), by = y(peak);
    const double angle = std::atan2(by - ay, bx - ax) * 180.0 / kPi;
    const double lx = ax + (bx - ax) * 0.62, ly = ay + (by - ay) * 0.62;
    if (bx - ax > 60)
      out_ << "<text class=\"roof-label\" transform=\"translate(" << num(lx) << "," << num(ly)
           << ") rotate(" << num(angle) << ")\" y=\"-6\">"
           << (r_.memory_roofs.empty() ? std::string() : escape(r_.memory_roofs.back().level) + " ")
           << escape(rate_text(bandwidth, "B/s")) << "</text>\n";
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
         << bound_name(n->bound) << "-bound"
         << (n->memory_level.empty() ? std::string() : " (" + escape(n->memory_level) + ")") << ", efficiency "
         << escape(report::efficiency_text(*n))
         << "</title></circle>\n";
  }
  out_ << "</g>\n";
  legend(types, f.right + 14, f.top + 10);
  out_ << "</svg>\n" << left_out_note(left_out, "with no FLOPs, no bytes or no time") << "</figure>\n";
}

void Page::op_type_bars() {
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

void Page::latency_histogram() {
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

template <typename Value>
void Page::batch_panel(const std::vector<const BatchPoint*>& ran, double x_offset, const std::string& title,
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

void Page::batch_curve() {
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

}  // namespace modelstat::report::html

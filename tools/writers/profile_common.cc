// What the profile writers share: the writer factory, the per-layer figures
// (share, achieved GFLOP/s and GB/s: a join of the measured time with the
// analysis cost of the same node), and the human report as data
// (profile_document), rendered by document_text.cc and
// document_markdown.cc.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "modelstat/error.hpp"
#include "tools/writers/format_util.hpp"

namespace modelstat {

// Defined here rather than in the profiler: the report library does not link
// LibTorch, and every report prints it.

std::unique_ptr<ProfileWriter> make_profile_writer(const std::string& format) {
  using namespace report_detail;
  return pick_writer<ProfileResult>("output", format,
                                    {{"table", document_table_writer<ProfileResult, profile_document>},
                                     {"json", make_profile_json_writer}, {"csv", make_profile_csv_writer},
                                     {"md", document_markdown_writer<ProfileResult, profile_document>}});
}

namespace report_detail {

namespace {

bool positive(double v) {
  return std::isfinite(v) && v > 0;
}

std::string or_dash(const std::string& s) {
  return s.empty() ? std::string("-") : s;
}

// "1.22 ms .. 1.24 ms (±0.8%)"
std::string ci_text(const TimingSummary& t) {
  std::string out = human_seconds(t.median_ci_low) + " .. " + human_seconds(t.median_ci_high);
  if (std::isfinite(t.rel_ci)) out += fmt::format(" (\xC2\xB1{:.1f}%)", 100.0 * t.rel_ci);
  return out;
}

// The full statistics of one set of samples, as "key  value" fields.
std::vector<std::pair<std::string, std::string>> timing_fields(const TimingSummary& t) {
  if (t.count <= 0) return {{"runs", "0 (not measured)"}};
  return {{"median", human_seconds(t.median)},
          {"median 95% CI", ci_text(t)},
          {"mean", human_seconds(t.mean)},
          {"std", human_seconds(t.stddev)},
          {"CV", std::isfinite(t.cv) ? fmt::format("{:.1f}%", 100.0 * t.cv) : std::string("-")},
          {"min", human_seconds(t.min)},
          {"max", human_seconds(t.max)},
          {"p90", human_seconds(t.p90)},
          {"p95", human_seconds(t.p95)},
          {"p99", human_seconds(t.p99)},
          {"runs", group_digits(t.count)},
          {"stopped", or_dash(t.stop_reason)}};
}

// FLOPs of a layer for humans: "236.03 M", "1.20 K?" when a shape was
// unknown (a lower bound), "unknown" for an op without a cost rule (not
// counted, and not zero), "-" when the analysis has no such node.
std::string layer_flops_text(const LayerCost& f) {
  if (!f.node) return "-";
  if (!f.flops) return "unknown";
  return human_count(*f.flops) + cost_marker(f.node->cost);
}

DocumentSection cold_section(const ColdStart& cold) {
  DocumentSection s;
  s.title = "Cold start (paid once; not in the steady-state numbers)";
  std::string first = human_seconds(cold.first_inference);
  if (positive(cold.steady_state_median) && positive(cold.first_inference))
    first += fmt::format(" ({}x the steady state)", rate_text(cold.first_inference / cold.steady_state_median));
  s.fields = {{"model load", human_seconds(cold.model_load)},
              {"weight upload", human_seconds(cold.weight_upload)},
              {"first inference", first},
              {"steady state (median)", human_seconds(cold.steady_state_median)}};
  return s;
}

DocumentSection whole_section(const ProfileResult& r) {
  DocumentSection s;
  s.title = "Whole-model latency (clean pass, no per-layer instrumentation)";
  s.fields = timing_fields(r.whole);
  s.fields.emplace_back("copies", r.end_to_end ? "included (end-to-end: H2D + compute + D2H)"
                                               : "not included (compute only; H2D / D2H timed apart)");
  const std::optional<double> throughput = rate(double(r.context.batch), r.whole.median);
  if (r.whole.count > 0 && throughput)
    s.fields.emplace_back("throughput", fmt::format("{} samples/s (batch {} / median {})", rate_text(*throughput),
                                                    r.context.batch, human_seconds(r.whole.median)));
  return s;
}

DocumentSection layer_sum_section(const ProfileResult& r) {
  DocumentSection s;
  s.title = "Layer sum vs whole model";
  if (r.layer_sum.count <= 0) {
    s.lines.push_back("per-layer pass not run");
    return s;
  }
  s.fields = {{"layer sum (median)", human_seconds(r.layer_sum.median)},
              {"whole model (median)", r.whole.count > 0 ? human_seconds(r.whole.median) : std::string("-")}};
  const std::optional<double> overhead = instrumentation_overhead(r);
  s.fields.emplace_back("instrumentation overhead", overhead ? signed_percent(*overhead) : std::string("-"));
  s.fields.emplace_back("layer sum runs", group_digits(r.layer_sum.count));
  // Both passes ran the same kernels: fused groups (one row each) or every node as written.
  if (!r.fusion.empty())
    s.fields.emplace_back("fusion", r.fusion == "on" ? "on (both passes; --fusion off for one row per node)"
                                                     : "off (both passes, every node as written)");
  s.lines.push_back(
      "layer sum: per-iteration sum of the per-layer times of the instrumented pass; "
      "the overhead is layer sum / whole model - 1");
  return s;
}

DocumentSection transfer_section(const ProfileResult& r) {
  DocumentSection s;
  s.title = "Host-device copies (timed apart)";
  s.columns = {{"copy", Align::Left}, {"bytes"}, {"median"}, {"p99"}, {"GB/s"}, {"runs"}};
  auto add = [&](const char* name, const TimingSummary& t, int64_t bytes) {
    if (t.count <= 0) {
      s.rows.push_back({name, human_bytes(bytes), "-", "-", "-", "0 (not measured)"});
    } else {
      const std::optional<double> gbps = rate(double(bytes), t.median);
      s.rows.push_back({name, human_bytes(bytes), human_seconds(t.median), human_seconds(t.p99),
                        gbps ? rate_text(*gbps / 1e9) : std::string("-"), group_digits(t.count)});
    }
    s.highlight.push_back(false);
  };
  add("H2D (inputs)", r.h2d, r.h2d_bytes);
  add("D2H (outputs)", r.d2h, r.d2h_bytes);
  s.lines.push_back(r.end_to_end ? "the whole-model latency includes these copies (end-to-end)"
                                 : "the whole-model latency does not include these copies");
  return s;
}

DocumentSection layers_section(const ProfileResult& r) {
  const bool subgraphs = !r.subgraph_layers.empty();
  DocumentSection s;
  s.title = subgraphs
                ? fmt::format(
                      "Per-layer times ({} layers, graph order, and {} subgraph nodes that ran, "
                      "indented under theirs; instrumented passes)",
                      r.layers.size(), r.subgraph_layers.size())
                : fmt::format("Per-layer times ({} layers, graph order; instrumented pass)", r.layers.size());
  s.columns = {{"#"},
               {"node", Align::Left, kNodeNameWidth},
               {"op", Align::Left},
               {"median"},
               {"mean"},
               {"p90"},
               {"%sum"},
               {"FLOPs"},
               {"GFLOP/s"}};
  if (subgraphs) s.columns.insert(s.columns.begin() + 3, Column{"calls"});
  bool any_unknown_shape = false, any_upcast = false, any_fused = false, any_observed = false;
  const double sum = layer_median_sum(r);
  for (const auto& [layer, in_subgraph] : timed_rows_in_order(r)) {
    const LayerCost f = join_layer(r, *layer, sum);
    const bool measured = layer->time.count > 0;
    const bool inexact = f.node && f.node->cost.status != CostStatus::Exact;
    any_unknown_shape = any_unknown_shape || (f.node && f.node->cost.status == CostStatus::UnknownShape);
    any_observed = any_observed || (f.node && !f.node->cost.shapes.empty());
    any_upcast = any_upcast || layer->upcast_to_fp32;
    any_fused = any_fused || !layer->fused_into.empty() || !layer->fused_members.empty();
    std::vector<std::string> cells = {in_subgraph ? std::string() : std::to_string(layer->index),
                                      layer->name,
                                      timed_op_text(layer->op_type, layer->upcast_to_fp32, !layer->fused_into.empty(),
                                                    layer->fused_members.size()),
                                      measured ? human_seconds(layer->time.median) : "-",
                                      measured ? human_seconds(layer->time.mean) : "-",
                                      measured ? human_seconds(layer->time.p90) : "-",
                                      f.share_of_time ? percent_of(*f.share_of_time, 1.0) : std::string("-"),
                                      layer_flops_text(f),
                                      rate_text(giga(f.achieved_flops_per_second))};
    if (subgraphs) cells.insert(cells.begin() + 3, in_subgraph ? mean_count(layer->calls_per_run) : "");
    s.rows.push_back(std::move(cells));
    s.highlight.push_back(inexact);
    s.depth.push_back(layer->depth);
  }
  s.lines.push_back(fmt::format("%sum: share of the sum of the layers' medians ({}); "
                                "GFLOP/s: the analysis FLOPs of the node / its median time",
                                human_seconds(sum)));
  if (subgraphs)
    s.lines.push_back(fmt::format(
        "subgraph nodes (inside If / Loop / Scan): time per model run, the sum over its calls (calls: per "
        "run), "
        "from a pass of their own ({} runs) so that the top-level times carry none of their markers; inside "
        "their parent's time, not added to the sum",
        group_digits(r.subgraph_layer_sum.count)));
  if (any_unknown_shape) s.lines.push_back("FLOPs: ? a shape was unknown, the count is incomplete");
  if (any_observed) s.lines.push_back(std::string("FLOPs: ") + kObservedLegend);
  if (any_upcast) s.lines.push_back(kUpcastLegend);
  if (any_fused) s.lines.push_back(kFusedLegend);
  s.lines.push_back("FLOPs coverage: " + coverage_summary(r.analysis));
  return s;
}

// --group-by: the group rows, in place of the per-layer ones.
DocumentSection groups_section(const ProfileResult& r) {
  DocumentSection s;
  s.title = groups_title(r.group_by, r.groups.size(), r.layers.size(), "times");
  s.columns = {
      {"group", Align::Left, kNodeNameWidth}, {"#"}, {"layers"}, {"time"}, {"%sum"}, {"FLOPs"}, {"GFLOP/s"}};
  bool any_partial = false;
  for (const LayerGroup& g : r.groups) {
    const bool inexact = g.layers_not_exact > 0;
    const bool none_known = g.layers_not_exact == g.layers;
    any_partial = any_partial || (inexact && !none_known);
    s.rows.push_back({g.key, std::to_string(g.first_index), std::to_string(g.layers),
                      human_seconds(g.seconds),
                      g.share_of_time ? percent_of(*g.share_of_time, 1.0) : std::string("-"),
                      none_known ? std::string("unknown") : human_count(g.flops) + (inexact ? "?" : ""),
                      rate_text(giga(g.achieved_flops_per_second))});
    s.highlight.push_back(inexact);
  }
  s.lines.push_back(
      fmt::format("time: the sum of the group's layer medians; %sum: its share of the sum of all "
                  "layers' medians ({}); GFLOP/s: its FLOPs / its time",
                  human_seconds(layer_median_sum(r))));
  s.lines.push_back(kGroupLegend);
  if (any_partial) s.lines.push_back("FLOPs: ? some layers have no exact cost, the count is a lower bound");
  return s;
}

DocumentSection hotspot_section(const ProfileResult& r, const std::vector<const LayerTiming*>& hot) {
  DocumentSection s;
  s.title = fmt::format("Hotspots (top {} by median time)", hot.size());
  s.columns = {{"rank"}, {"#"},     {"node", Align::Left, kNodeNameWidth}, {"op", Align::Left}, {"median"},
               {"%sum"}, {"FLOPs"}, {"GFLOP/s"},                       {"GB/s"}};
  const double sum = layer_median_sum(r);
  bool any_upcast = false;
  for (size_t i = 0; i < hot.size(); ++i) {
    const LayerTiming& layer = *hot[i];
    const LayerCost f = join_layer(r, layer, sum);
    any_upcast = any_upcast || layer.upcast_to_fp32;
    s.rows.push_back({std::to_string(i + 1), std::to_string(layer.index), layer.name,
                      timed_op_text(layer.op_type, layer.upcast_to_fp32, !layer.fused_into.empty(), layer.fused_members.size()),
                      human_seconds(layer.time.median),
                      f.share_of_time ? percent_of(*f.share_of_time, 1.0) : std::string("-"),
                      layer_flops_text(f), rate_text(giga(f.achieved_flops_per_second)),
                      rate_text(giga(f.achieved_bytes_per_second))});
    s.highlight.push_back(false);
  }
  if (any_upcast) s.lines.push_back(kUpcastLegend);
  return s;
}

DocumentSection batch_section(const ProfileResult& r) {
  DocumentSection s;
  s.title = "Batch sweep";
  if (!r.batch_sweep.empty()) {
    s.columns = {{"batch"}, {"median"}, {"per sample"}, {"samples/s"}, {"status", Align::Left}};
    for (const BatchPoint& p : r.batch_sweep) {
      if (!p.fits) {
        s.rows.push_back({std::to_string(p.batch), "-", "-", "-", "failed: " + or_dash(p.failure)});
        s.highlight.push_back(true);
        continue;
      }
      s.rows.push_back({std::to_string(p.batch), human_seconds(p.median),
                        p.batch > 0 ? human_seconds(p.median / double(p.batch)) : std::string("-"),
                        rate_text(p.throughput), "ok"});
      s.highlight.push_back(false);
    }
    s.lines.push_back("samples/s = batch * iterations / elapsed time");
  }
  s.lines.push_back(r.max_batch > 0 ? fmt::format("max batch: {} (largest that ran; doubling, then binary search)",
                                                  r.max_batch)
                                    : std::string("max batch: not searched"));
  return s;
}

DocumentSection concurrency_section(const ProfileResult& r, const ConcurrencyResult& c) {
  DocumentSection s;
  s.title = fmt::format("Concurrency ({} requests in flight)", c.requests_in_flight);
  s.fields = {{"mechanism", or_dash(c.mechanism)}, {"requests in flight", std::to_string(c.requests_in_flight)}};
  std::string throughput = rate_text(c.throughput) + " requests/s";
  if (r.context.batch > 0)
    throughput += fmt::format(" = {} samples/s", rate_text(c.throughput * double(r.context.batch)));
  if (const std::optional<double> single = rate(1.0, r.whole.median); single && r.whole.count > 0)
    throughput += fmt::format(" ({}x one request at a time)", rate_text(c.throughput / *single));
  s.fields.emplace_back("throughput", throughput);
  for (auto& [key, value] : timing_fields(c.latency)) {
    if (key == "median" || key == "p90" || key == "p99" || key == "runs")
      s.fields.emplace_back("latency " + key, value);
  }
  return s;
}

DocumentSection memory_section(const MemoryMeasurement& m) {
  DocumentSection s;
  s.title = "Memory (measured by the allocator)";
  s.fields = {{"weights (live before any run)", bytes_with_exact(m.weights_bytes)},
              {"inference peak (weights included)", bytes_with_exact(m.inference_peak_bytes)},
              {"peak above the weights", bytes_with_exact(m.inference_peak_bytes - m.weights_bytes)}};
  s.lines.push_back("peak = weights + one input set + the growth of live bytes during one inference after warm-up "
                    "(activations, outputs, workspace)");
  s.lines.push_back("method: " + or_dash(m.method));
  return s;
}

DocumentSection train_step_section(const TrainStepResult& t) {
  DocumentSection s;
  s.title = fmt::format("Training step ({}, {})", or_dash(t.optimizer),
                        t.precision == "bf16" ? "bf16 autocast, fp32 master weights" : or_dash(t.precision));
  s.fields = {{"trainable parameters", count_with_exact(t.trainable_params)}};
  if (t.time.count > 0) {
    s.fields.emplace_back("step (median)", human_seconds(t.time.median));
    s.fields.emplace_back("step median 95% CI", ci_text(t.time));
    s.fields.emplace_back("step p90", human_seconds(t.time.p90));
    // Medians of the parts need not add up to the median of the whole.
    s.fields.emplace_back("forward + loss (median)", human_seconds(t.forward_seconds) + " (" +
                                                         percent_of(t.forward_seconds, t.time.median) + ")");
    s.fields.emplace_back("backward (median)", human_seconds(t.backward_seconds) + " (" +
                                                   percent_of(t.backward_seconds, t.time.median) + ")");
    s.fields.emplace_back("optimizer update (median)", human_seconds(t.optimizer_seconds) + " (" +
                                                           percent_of(t.optimizer_seconds, t.time.median) + ")");
    s.fields.emplace_back("runs", group_digits(t.time.count));
    s.fields.emplace_back("stopped", or_dash(t.time.stop_reason));
  } else {
    s.fields.emplace_back("runs", "0 (not measured)");
  }
  s.fields.emplace_back("peak memory", bytes_with_exact(t.peak_bytes));
  s.lines.push_back("loss: " + or_dash(t.loss));
  s.lines.push_back("parts: % of the step median; peak = weights + one input set + the growth of live bytes over the "
                    "timed steps (saved activations, gradients, optimizer state)");
  s.lines.push_back("memory method: " + or_dash(t.memory_method));
  return s;
}

}  // namespace

DocumentSection context_section(const RunContext& c) {
  DocumentSection s;
  s.title = "Context";
  std::string device = or_dash(c.device_name);
  if (!c.device_kind.empty()) device += " (" + c.device_kind + ")";
  s.fields = {{"device", device},
              {"runtime / driver", or_dash(c.runtime_version) + " / " + or_dash(c.driver_version)},
              {"LibTorch", or_dash(c.torch_version)},
              {"threads", std::to_string(c.threads)},
              {"dtype", or_dash(c.dtype)},
              {"batch", std::to_string(c.batch)},
              {"clocks", c.clocks.empty() ? std::string("not readable") : c.clocks},
              {"timer", or_dash(c.timer)},
              {"allocator", or_dash(c.allocator)},
              {"blas", or_dash(c.blas)},
              {"oneDNN isa", or_dash(c.onednn_isa)},
              {"OpenMP", or_dash(c.openmp)},
              {"date", or_dash(c.date)},
              {"host", or_dash(c.host)}};
  return s;
}

std::string inputs_text(const RunContext& c) {
  std::string text = "random, seed " + std::to_string(c.seed) + " (input set k: seed + k)";
  for (const GivenInput& g : c.given_inputs) {
    std::string dims;
    for (size_t k = 0; k < g.dims.size(); ++k) dims += (k ? "x" : "") + std::to_string(g.dims[k]);
    text += "; " + g.name + " (" + g.dtype + " " + (dims.empty() ? "scalar" : dims) + ") = " +
            (g.source == "--value" ? g.values + " (--value)" : g.source);
  }
  return text;
}

std::optional<double> giga(const std::optional<double>& per_second) {
  if (!per_second) return std::nullopt;
  return *per_second / 1e9;
}

std::optional<double> rate(double count, double seconds) {
  if (!std::isfinite(count) || count < 0 || !positive(seconds)) return std::nullopt;
  return count / seconds;
}

std::vector<const LayerTiming*> layers_in_order(const ProfileResult& result) {
  std::vector<const LayerTiming*> layers;
  for (const LayerTiming& layer : result.layers) layers.push_back(&layer);
  std::stable_sort(layers.begin(), layers.end(),
                   [](const LayerTiming* a, const LayerTiming* b) { return a->index < b->index; });
  return layers;
}

std::vector<std::pair<const LayerTiming*, bool>> timed_rows_in_order(const ProfileResult& result) {
  return under_their_parents(layers_in_order(result), result.subgraph_layers);
}

std::vector<const LayerTiming*> hotspot_layers(const ProfileResult& result, int n) {
  std::vector<const LayerTiming*> layers;
  if (n <= 0) return layers;
  for (const LayerTiming* layer : layers_in_order(result))
    if (layer->time.count > 0 && std::isfinite(layer->time.median)) layers.push_back(layer);
  std::stable_sort(layers.begin(), layers.end(),
                   [](const LayerTiming* a, const LayerTiming* b) { return a->time.median > b->time.median; });
  if (layers.size() > size_t(n)) layers.resize(size_t(n));
  return layers;
}

std::optional<double> instrumentation_overhead(const ProfileResult& result) {
  if (result.whole.count <= 0 || result.layer_sum.count <= 0) return std::nullopt;
  if (!positive(result.whole.median) || !std::isfinite(result.layer_sum.median)) return std::nullopt;
  return result.layer_sum.median / result.whole.median - 1.0;
}

Document profile_document(const ProfileResult& r, const ReportOptions& options) {
  Document doc;
  doc.title = "modelstat profile: " + or_dash(r.analysis.model_path);
  doc.sections.push_back(context_section(r.context));
  doc.sections.back().fields.emplace_back("inputs", inputs_text(r.context));

  DocumentSection conventions;
  conventions.lines = {kPercentileMethod, std::string("convention: ") + (kCostConvention ? kCostConvention : "")};
  conventions.line_style = LineStyle::Dim;
  doc.sections.push_back(std::move(conventions));

  doc.sections.push_back(cold_section(r.cold));
  doc.sections.push_back(whole_section(r));
  doc.sections.push_back(layer_sum_section(r));
  doc.sections.push_back(transfer_section(r));
  if (!r.group_by.empty() && !r.layers.empty())  // --no-layers: no times to group
    doc.sections.push_back(groups_section(r));
  else if (r.group_by.empty() && options.show_all_nodes && !r.layers.empty())
    doc.sections.push_back(layers_section(r));
  const std::vector<const LayerTiming*> hot = hotspot_layers(r, options.top);
  if (!hot.empty()) doc.sections.push_back(hotspot_section(r, hot));
  if (!r.batch_sweep.empty() || r.max_batch > 0) doc.sections.push_back(batch_section(r));
  if (r.concurrency) doc.sections.push_back(concurrency_section(r, *r.concurrency));
  if (r.memory) doc.sections.push_back(memory_section(*r.memory));
  if (r.train_step) doc.sections.push_back(train_step_section(*r.train_step));
  std::vector<std::string> notes;
  for (const std::string& notice : r.notices) notes.push_back("note: " + notice);
  add_warning_section(doc, "Notices", std::move(notes));
  return doc;
}

void add_warning_section(Document& doc, const std::string& title, std::vector<std::string> lines) {
  if (lines.empty()) return;
  DocumentSection s;
  s.title = title;
  s.lines = std::move(lines);
  s.line_style = LineStyle::Warn;
  doc.sections.push_back(std::move(s));
}

}  // namespace report_detail
}  // namespace modelstat

// What the generation writers share: the factory, and the human report as
// data (generation_document), rendered as a terminal table or Markdown by the
// profile report's renderers. Everything here selects and formats; the
// figures are the record's (profiler/generate_protocol.cc) and join_layer's.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "modelstat/error.hpp"
#include "tools/writers/generation_writers.hpp"
#include "tools/writers/joined_writers.hpp"

namespace modelstat {

namespace report_detail {

namespace {

std::string or_dash(const std::string& s) { return s.empty() ? std::string("-") : s; }

std::string seconds_or_dash(double s) { return std::isfinite(s) && s > 0 ? human_seconds(s) : "-"; }

std::string rate_cell(const TokenRate& r) {
  if (r.samples.empty() || !std::isfinite(r.mean)) return "-";
  return fmt::format("{} \xC2\xB1 {}", rate_text(r.mean), rate_text(r.stddev));
}

DocumentSection request_section(const GenerationResult& r) {
  DocumentSection s;
  s.title = "Generation";
  const int64_t steps = r.generate - 1;
  s.fields = {
      {"request", fmt::format("prompt {} tokens, {} generated per sequence (1 from the prefill, {} decode step{}), "
                              "batch {}",
                              r.prompt, r.generate, steps, steps == 1 ? "" : "s", r.batch)},
      {"tokens", r.tokens == "greedy" ? "greedy (argmax of the last position's logits '" + r.logits + "')"
                                      : "random ids from a fixed seed, the same every generation (the logits unread)"},
      {"generations", fmt::format("{} measured ({}), after {} warm-up and 1 cold", r.end_to_end.count,
                                  or_dash(r.end_to_end.stop_reason), r.warmup_generations)},
      {"KV cache", kv_cache_summary(r.kv_cache)},
      {"layout", r.kv_cache.layout == "shared buffer"
                     ? "shared buffer (ONNX Runtime GenAI's: one buffer of prompt + generated rows per tensor, fed "
                       "as past and returned as present, the step's rows written in place)"
                     : "separate (each step's present tensors are the next step's past)"},
      {"max context", r.kv_cache.max_context > 0
                          ? fmt::format("{} tokens ({})", r.kv_cache.max_context, r.kv_cache.max_context_source)
                          : std::string("none found in the model")},
  };
  for (size_t i = 0; i < r.input_roles.size(); ++i) s.fields.emplace_back(i == 0 ? "inputs" : "", r.input_roles[i]);
  return s;
}

DocumentSection latency_section(const GenerationResult& r) {
  DocumentSection s;
  s.title = "Latency (TTFT, TPOT, end to end: one value per generation; ITL: every decode step)";
  s.columns = {{"metric", Align::Left}, {"median"}, {"mean"}, {"p90"}, {"p99"}, {"stddev"}, {"samples"}};
  auto row = [&](const std::string& name, const TimingSummary& t) {
    if (t.count <= 0) {
      s.rows.push_back({name, "-", "-", "-", "-", "-", "0"});
      return;
    }
    s.rows.push_back({name, human_seconds(t.median), human_seconds(t.mean), human_seconds(t.p90),
                      human_seconds(t.p99), human_seconds(t.stddev), group_digits(t.count)});
  };
  row("TTFT (prefill + first token)", r.ttft);
  row("TPOT (decode step mean)", r.tpot);
  row("ITL (every decode step)", r.itl);
  row("end to end", r.end_to_end);
  s.lines.push_back(kPercentileMethod);
  return s;
}

DocumentSection throughput_section(const GenerationResult& r) {
  DocumentSection s;
  s.title = "Throughput (llama-bench's rows: tokens/s, mean \xC2\xB1 stddev over the generations)";
  s.columns = {{"test", Align::Left}, {"tokens"}, {"t/s"}, {"what", Align::Left}};
  s.rows.push_back({prompt_test_name(r), std::to_string(r.batch * r.prompt), rate_cell(r.prompt_tokens_per_second),
                    "batch x prompt / TTFT"});
  s.rows.push_back({generation_test_name(r), std::to_string(r.batch * (r.generate - 1)),
                    rate_cell(r.generation_tokens_per_second), "batch x decode steps / their time"});
  return s;
}

DocumentSection curve_section(const GenerationResult& r) {
  DocumentSection s;
  s.title = "Decode step time against context (median over the generations)";
  if (r.step_curve.empty()) {
    s.lines.push_back("no decode step (G = 1)");
    return s;
  }
  const ContextPoint& first = r.step_curve.front();
  const ContextPoint& last = r.step_curve.back();
  s.fields = {{"first step", fmt::format("{} at context {}", human_seconds(first.median_seconds), first.context)},
              {"last step", fmt::format("{} at context {}", human_seconds(last.median_seconds), last.context)},
              {"slope", slope_text(r.step_slope_seconds_per_token) + " of context (least squares over " +
                            std::to_string(r.step_curve.size()) + " steps)"},
              {"intercept", human_seconds(r.step_intercept_seconds) + " at context 0"}};
  // About 8 points, evenly spaced, the last always in.
  s.columns = {{"context"}, {"median"}};
  const size_t n = r.step_curve.size(), every = std::max<size_t>(1, (n + 7) / 8);
  for (size_t i = 0; i < n; i += every)
    s.rows.push_back({std::to_string(r.step_curve[i].context), human_seconds(r.step_curve[i].median_seconds)});
  if ((n - 1) % every != 0) s.rows.push_back({std::to_string(last.context), human_seconds(last.median_seconds)});
  return s;
}

DocumentSection memory_section(const GenerationResult& r) {
  DocumentSection s;
  s.title = "Memory";
  s.fields = {{"peak", bytes_with_exact(r.peak_memory_bytes) + " (" + or_dash(r.memory_method) + ")"},
              {"KV cache at the end", bytes_with_exact(r.kv_cache_bytes)}};
  if (r.kv_cache.bytes_per_token > 0)
    s.fields.emplace_back("KV cache per token", bytes_with_exact(r.kv_cache.bytes_per_token) + " (whole batch)");
  return s;
}

DocumentSection phases_section(const GenerationResult& r) {
  DocumentSection s;
  s.title = "Phases (each step alone, with the cache it had in the loop)";
  s.columns = {{"phase", Align::Left}, {"tokens"}, {"context"},  {"in the loop"}, {"clean step"}, {"layer sum"},
               {"sum vs clean"},      {"FLOPs"},  {"bytes"},    {"forecast"},    {"error"}};
  for (const GenerationPhase& p : r.phases) {
    const ProfileResult& pr = p.profile;
    const bool clean = pr.whole.count > 0, layers = pr.layer_sum.count > 0;
    const AnalysisTotals& t = pr.analysis.totals;
    s.rows.push_back(
        {p.name, std::to_string(p.tokens), std::to_string(p.context), seconds_or_dash(p.loop_median_seconds),
         clean ? human_seconds(pr.whole.median) : "-", layers ? human_seconds(pr.layer_sum.median) : "-",
         clean && layers ? signed_percent(pr.layer_sum.median / pr.whole.median - 1) : "-", human_count(t.flops),
         human_bytes(t.bytes_read + t.bytes_written), p.forecast_seconds ? human_seconds(*p.forecast_seconds) : "-",
         p.forecast_error ? signed_percent(*p.forecast_error) : "-"});
  }
  s.lines.push_back("in the loop: the step's median inside the generations (the TTFT, or the step curve at that "
                    "context, choosing the token included); clean step: the step alone, no instrumentation; layer sum: "
                    "the sum of its per-node medians (instrumented pass); forecast: fit's, error against the loop");
  if (!r.forecast_ceilings.empty()) s.lines.push_back("forecasts priced with " + r.forecast_ceilings);
  return s;
}

// The two phases the node table compares: the prefill and the last decode step.
std::pair<const GenerationPhase*, const GenerationPhase*> compared_phases(const GenerationResult& r) {
  const GenerationPhase* prefill = nullptr;
  const GenerationPhase* decode = nullptr;
  for (const GenerationPhase& p : r.phases) {
    if (p.profile.layers.empty()) continue;
    if (p.name == "prefill") prefill = &p;
    else decode = &p;
  }
  return {prefill, decode};
}

std::string bound_cell(const GenerationPhase& p, size_t k) {
  if (!p.joined || k >= p.joined->nodes.size()) return "-";
  const JoinedNode& n = p.joined->nodes[k];
  if (n.bound == Bound::None) return "-";
  return std::string(bound_name(n.bound)) + " " + report::efficiency_text(n);
}

DocumentSection nodes_section(const GenerationResult& r, const ReportOptions& options) {
  DocumentSection s;
  const auto [prefill, decode] = compared_phases(r);
  if (!prefill || !decode) return s;
  const bool joined = prefill->joined && decode->joined;
  const std::string dp = "decode@" + std::to_string(decode->context);
  s.columns = {{"#"}, {"node", Align::Left, kNodeNameWidth}, {"op", Align::Left}, {"prefill"}, {"share"}};
  if (joined) s.columns.insert(s.columns.end(), {{"GFLOP/s"}, {"bound (efficiency)", Align::Left}});
  s.columns.insert(s.columns.end(), {{dp}, {"share"}});
  if (joined) s.columns.insert(s.columns.end(), {{"GB/s"}, {"bound (efficiency)", Align::Left}});
  if (!prefill->profile.groups.empty() && prefill->profile.groups.size() == decode->profile.groups.size()) {
    s.title = groups_title(r.group_by, prefill->profile.groups.size(), prefill->profile.layers.size(), "times") +
              ", prefill against " + dp;
    for (size_t i = 0; i < prefill->profile.groups.size(); ++i) {
      const LayerGroup& a = prefill->profile.groups[i];
      const LayerGroup& b = decode->profile.groups[i];
      std::vector<std::string> row = {std::to_string(a.first_index), a.key, std::to_string(a.layers) + " nodes",
                                      human_seconds(a.seconds), a.share_of_time ? percent_of(*a.share_of_time, 1) : "-"};
      if (joined) row.insert(row.end(), {a.achieved_flops_per_second ? rate_text(*giga(a.achieved_flops_per_second)) : "-", ""});
      row.insert(row.end(), {human_seconds(b.seconds), b.share_of_time ? percent_of(*b.share_of_time, 1) : "-"});
      if (joined) row.insert(row.end(), {b.achieved_bytes_per_second ? rate_text(*giga(b.achieved_bytes_per_second)) : "-", ""});
      s.rows.push_back(std::move(row));
    }
    s.lines.push_back(kGroupLegend);
    return s;
  }
  if (options.top <= 0 || !options.show_all_nodes) return s;
  s.title = fmt::format("Per node, prefill against {}: the {} slowest in decode", dp,
                        std::min<size_t>(size_t(options.top), decode->profile.layers.size()));
  const double sum_a = layer_median_sum(prefill->profile), sum_b = layer_median_sum(decode->profile);
  for (const LayerTiming* layer : hotspot_layers(decode->profile, options.top)) {
    const size_t k = size_t(layer->index);
    if (k >= prefill->profile.layers.size()) continue;
    const LayerTiming& a = prefill->profile.layers[k];
    const LayerCost ca = join_layer(prefill->profile, a, sum_a);
    const LayerCost cb = join_layer(decode->profile, *layer, sum_b);
    std::vector<std::string> row = {
        std::to_string(k), layer->name,
        timed_op_text(layer->op_type, layer->upcast_to_fp32, !layer->fused_into.empty(), layer->fused_members.size()),
        ca.median_seconds ? human_seconds(*ca.median_seconds) : "-", ca.share_of_time ? percent_of(*ca.share_of_time, 1) : "-"};
    if (joined)
      row.insert(row.end(), {ca.achieved_flops_per_second ? rate_text(*giga(ca.achieved_flops_per_second)) : "-",
                             bound_cell(*prefill, k)});
    row.insert(row.end(), {cb.median_seconds ? human_seconds(*cb.median_seconds) : "-",
                           cb.share_of_time ? percent_of(*cb.share_of_time, 1) : "-"});
    if (joined)
      row.insert(row.end(), {cb.achieved_bytes_per_second ? rate_text(*giga(cb.achieved_bytes_per_second)) : "-",
                             bound_cell(*decode, k)});
    s.rows.push_back(std::move(row));
  }
  s.lines.push_back(kFusedLegend);
  return s;
}

DocumentSection roofline_section(const GenerationResult& r) {
  DocumentSection s;
  for (const GenerationPhase& p : r.phases) {
    if (!p.joined) continue;
    const JoinedReport& j = *p.joined;
    s.title = "Roofline (report --generate)";
    s.fields = {{"ceilings", report::ceilings_source_text(j.ceilings)},
                {"compute roof", si_rate(j.peak_flops_per_second, "FLOP/s") + " (" + j.peak_source + ")"},
                {"memory roof", si_rate(j.memory_bandwidth, "B/s") + " (DRAM or the copy)"}};
    s.lines.push_back("a decode step reads every weight for one token per sequence: memory-bound; the prefill "
                      "multiplies them by P tokens: compute-bound (bound = the roof at the node's FLOPs per byte)");
    break;
  }
  return s;
}

DocumentSection slo_section(const GenerationResult& r) {
  DocumentSection s;
  if (!r.slo) return s;
  s.title = "Latency objectives (" + r.slo->name + ": p99 over the measured generations" +
            (r.slo->source.empty() ? "" : "; " + r.slo->source) + ")";
  s.columns = {{"metric", Align::Left}, {"limit"}, {"p99"}, {"verdict", Align::Left}};
  for (const SloVerdict& v : r.slo_verdicts)
    s.rows.push_back({v.metric == "ttft" ? "TTFT" : "TPOT", human_seconds(v.limit_seconds),
                      human_seconds(v.measured_seconds), v.met ? "met" : "NOT MET"});
  for (size_t i = 0; i < s.rows.size(); ++i) s.highlight.push_back(!r.slo_verdicts[i].met);
  s.lines.push_back(r.slo_met() ? "every objective met (exit 0)"
                                : "an objective is not met (exit " + std::to_string(kSloNotMetExitCode) + ")");
  return s;
}

}  // namespace

std::string slope_text(double seconds_per_token) {
  if (!std::isfinite(seconds_per_token)) return "-";
  const double per_1k = seconds_per_token * 1000.0;
  return (per_1k < 0 ? "-" : "") + human_seconds(std::abs(per_1k)) + " per 1k tokens";
}

std::string prompt_test_name(const GenerationResult& r) { return "pp" + std::to_string(r.prompt); }
std::string generation_test_name(const GenerationResult& r) { return "tg" + std::to_string(r.generate - 1); }

Document generation_document(const GenerationResult& r, const ReportOptions& options) {
  Document doc;
  doc.title = fmt::format("modelstat generation: {} (prompt {}, {} generated, batch {})", r.model_path, r.prompt,
                          r.generate, r.batch);
  doc.sections.push_back(context_section(r.context));
  doc.sections.push_back(request_section(r));
  doc.sections.push_back(latency_section(r));
  doc.sections.push_back(throughput_section(r));
  doc.sections.push_back(curve_section(r));
  doc.sections.push_back(memory_section(r));
  if (!r.phases.empty()) doc.sections.push_back(phases_section(r));
  for (DocumentSection s : {roofline_section(r), nodes_section(r, options), slo_section(r)})
    if (!s.title.empty()) doc.sections.push_back(std::move(s));
  add_warning_section(doc, "Notices", r.notices);
  return doc;
}

}  // namespace report_detail

std::unique_ptr<GenerationWriter> make_generation_writer(const std::string& format) {
  using namespace report_detail;
  return pick_writer<GenerationResult>(
      "generation", format,
      {{"table", document_table_writer<GenerationResult, generation_document>}, {"json", make_generation_json_writer},
       {"csv", make_generation_csv_writer}, {"md", document_markdown_writer<GenerationResult, generation_document>},
       {"html", make_generation_html_writer}});
}

}  // namespace modelstat

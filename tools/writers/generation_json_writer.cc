// Generation, JSON (docs/generation.md): the record with its raw samples,
// each phase with its analysis totals, its clean and per-layer passes and,
// from `report --generate`, its nodes on the roofline. Each record's keys are
// its to_json (analyzer/measurements/generation_json.hpp, record_json.hpp);
// a figure that does not exist is null.
#include "analyzer/measurements/generation_json.hpp"
#include "analyzer/measurements/json_document.hpp"
#include "tools/writers/generation_writers.hpp"
#include "tools/writers/json_stream.hpp"

namespace modelstat::report_detail {

namespace {

Json phase_json(const GenerationPhase& p) {
  const ProfileResult& pr = p.profile;
  Json j;
  j["name"] = p.name;
  j["tokens"] = p.tokens;
  j["context"] = p.context;
  j["bindings"] = p.bindings;
  j["totals"] = pr.analysis.totals;
  j["loop_median_s"] = json_number(p.loop_median_seconds);
  j["clean_step"] = pr.whole;
  j["layer_sum"] = pr.layer_sum;
  j["layer_sum_vs_clean"] = pr.whole.count > 0 && pr.layer_sum.count > 0
                                ? json_number(pr.layer_sum.median / pr.whole.median - 1)
                                : Json(nullptr);
  j["forecast_s"] = json_optional(p.forecast_seconds);
  j["forecast_error"] = json_optional(p.forecast_error);
  Json layers = Json::array();
  const double sum = layer_median_sum(pr);
  for (const LayerTiming& layer : pr.layers) layers.push_back(profile_layer_json(layer, join_layer(pr, layer, sum)));
  j["layers"] = std::move(layers);
  j["groups"] = pr.groups;
  if (p.joined) {
    Json nodes = Json::array();
    for (const JoinedNode& n : p.joined->nodes) nodes.push_back(report::joined_node_json(*p.joined, n));
    j["roofline_nodes"] = std::move(nodes);
  } else {
    j["roofline_nodes"] = nullptr;
  }
  return j;
}

class GenerationJsonWriter final : public GenerationWriter {
 public:
  void write(const GenerationResult& r, const ReportOptions&, std::ostream& out) const override {
    Json doc = document_head(kGenerationJsonSchemaVersion, "generation");
    doc["model"] = r.model_path;
    doc["percentile_method"] = kPercentileMethod;
    doc["context"] = r.context;
    doc["cold_start"] = r.cold;
    doc["request"] = Json{{"prompt", r.prompt},
                          {"generate", r.generate},
                          {"decode_steps", r.generate - 1},
                          {"batch", r.batch},
                          {"tokens", r.tokens}};
    doc["kv_cache"] = generation_kv_cache_json(r.kv_cache);
    doc["inputs"] = r.input_roles;
    doc["logits"] = r.logits;
    doc["warmup_generations"] = r.warmup_generations;
    doc["ttft"] = r.ttft;
    doc["tpot"] = r.tpot;
    doc["itl"] = r.itl;
    doc["end_to_end"] = r.end_to_end;
    doc["prompt_tokens_per_s"] = r.prompt_tokens_per_second;
    doc["generation_tokens_per_s"] = r.generation_tokens_per_second;
    doc["llama_bench_names"] = Json{{"prompt", prompt_test_name(r)}, {"generation", generation_test_name(r)}};
    doc["step_curve"] = r.step_curve;
    doc["step_slope_s_per_1k_tokens"] = json_number(r.step_slope_seconds_per_token * 1000.0);
    doc["step_intercept_s"] = json_number(r.step_intercept_seconds);
    doc["memory"] = Json{{"peak_bytes", r.peak_memory_bytes},
                         {"method", r.memory_method},
                         {"kv_cache_bytes", r.kv_cache_bytes}};
    doc["tokens"] = Json{{"prompt", r.prompt_tokens}, {"generated", r.generated_tokens}};
    doc["group_by"] = r.group_by.empty() ? Json(nullptr) : Json(r.group_by);
    doc["forecast_ceilings"] = r.forecast_ceilings.empty() ? Json(nullptr) : Json(r.forecast_ceilings);
    const JoinedReport* joined = nullptr;
    for (const GenerationPhase& p : r.phases)
      if (p.joined) joined = &*p.joined;
    doc["roofline"] = joined ? report::joined_roofline_json(*joined) : Json(nullptr);
    if (r.slo) {
      Json slo = *r.slo;
      slo["verdicts"] = r.slo_verdicts;
      slo["met"] = r.slo_met();
      doc["slo"] = std::move(slo);
    } else {
      doc["slo"] = nullptr;
    }
    JsonStream json(out);
    json.begin_object();
    json.members(doc);
    json.key("phases");
    json.begin_array();
    for (const GenerationPhase& p : r.phases) json.element(phase_json(p));
    json.end_array();
    json.member("notices", r.notices);
    json.end_object();
    out << '\n';
  }
};

}  // namespace

std::unique_ptr<GenerationWriter> make_generation_json_writer() { return std::make_unique<GenerationJsonWriter>(); }

}  // namespace modelstat::report_detail

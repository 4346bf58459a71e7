// JSON comparison (docs/compare-json.md): every node in the base run's graph
// order, whatever --top says. Doubles are written by nlohmann as the shortest
// decimal that reads back as the same double; NaN ("does not exist") as null.
#include <ostream>

#include "analyzer/measurements/json_document.hpp"
#include "analyzer/measurements/record_json.hpp"
#include "tools/writers/compare_writers.hpp"

namespace modelstat::report {

void put_delta(Json& j, const SampleDelta& d) {
  j["count_base"] = d.count_base;
  j["count_new"] = d.count_new;
  j["median_base_s"] = json_number(d.median_base);
  j["median_new_s"] = json_number(d.median_new);
  j["delta"] = json_number(d.delta);
  j["ratio_ci_low"] = json_number(d.ratio_ci_low);
  j["ratio_ci_high"] = json_number(d.ratio_ci_high);
  j["p_value"] = json_number(d.p_value);
  j["p_method"] = d.verdict == Verdict::NoData ? "" : d.exact_p ? "exact" : "normal approximation";
  j["significant"] = d.significant;
  j["verdict"] = verdict_name(d.verdict);
}

namespace {

// The run's context record (to_json, record_json.hpp), the fields a comparison shows.
Json context_json(const RunContext& c) {
  const Json all = c;
  Json j = Json::object();
  for (const char* key : {"device_name", "device_kind", "dtype", "threads", "batch", "torch_version", "timer", "date",
                          "host"})
    j[key] = all.at(key);
  return j;
}

Json unmatched_json(const std::vector<UnmatchedNode>& nodes) {
  Json arr = Json::array();
  for (const UnmatchedNode& n : nodes)
    arr.push_back(
        Json{{"index", n.index}, {"name", n.name}, {"op_type", n.op_type}, {"median_s", json_number(n.median)}});
  return arr;
}

class CompareJsonWriter final : public CompareWriter {
 public:
  void write(const Comparison& c, const ReportOptions&, std::ostream& out) const override {
    const CompareOptions& o = c.options;
    Json j = document_head(kCompareJsonSchemaVersion, "compare");
    j["test"] = Json{{"threshold", o.threshold},
                     {"alpha", o.alpha},
                     {"ratio_ci_confidence", 1.0 - o.alpha},
                     {"bootstrap_resamples", o.resamples},
                     {"bootstrap_seed", o.seed},
                     {"per_node_gate", o.per_node_gate},
                     {"gate_min_share", o.gate_min_share}};
    j["base"] = Json{{"file", c.base_origin},
                     {"document_kind", c.base_document_kind},
                     {"model", c.base_model_path},
                     {"context", context_json(c.base_context)}};
    j["new"] = Json{{"file", c.new_origin},
                    {"document_kind", c.new_document_kind},
                    {"model", c.new_model_path},
                    {"context", context_json(c.new_context)}};
    j["warnings"] = c.warnings;
    j["notices"] = c.notices;
    Json whole;
    put_delta(whole, c.whole);
    j["whole"] = whole;
    j["matched_by"] = c.matched_by;
    Json nodes = Json::array();
    for (const NodeDelta& n : c.nodes) {
      Json e{{"name", n.name},
             {"new_name", n.new_name.empty() ? n.name : n.new_name},
             {"op_type", n.op_type},
             {"index_base", n.index_base},
             {"index_new", n.index_new},
             {"share_base", json_number(n.share_base)},
             {"share_new", json_number(n.share_new)},
             {"gated", n.gated}};
      put_delta(e, n.time);
      nodes.push_back(std::move(e));
    }
    j["nodes"] = std::move(nodes);
    j["only_in_base"] = unmatched_json(c.only_in_base);
    j["only_in_new"] = unmatched_json(c.only_in_new);
    Json regressed = Json::array();
    for (int k : c.gated_node_regressions) regressed.push_back(c.nodes[static_cast<size_t>(k)].name);
    j["gate"] = Json{{"failed", c.gate_failed()},
                     {"whole_regressed", c.whole_regressed},
                     {"regressed_nodes", std::move(regressed)},
                     {"summary", gate_summary(c)}};
    // Node names are the model's bytes: replace invalid UTF-8 rather than fail.
    out << j.dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
  }
};

}  // namespace

std::unique_ptr<CompareWriter> make_compare_json_writer() {
  return std::make_unique<CompareJsonWriter>();
}

}  // namespace modelstat::report

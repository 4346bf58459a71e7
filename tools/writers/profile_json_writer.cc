// JSON profile report: every field of the ProfileResult, raw samples included,
// with the analysis document (json_writer.cc) nested under "analysis".
// Described field by field in docs/profile-json.md and docs/profile.schema.json.
//
// Numbers: integers are exact (never through a double); doubles are written as
// the shortest decimal that reads back as the same double; a statistic that
// does not exist (no samples, a non-finite value) is null. Layout: the document
// is indented by 2 like the analysis JSON, but sample arrays are packed
// kSamplesPerLine values a line, so a layer with 10,000 samples is 1,250 lines
// rather than 10,000 (JsonStream's rule for "samples_s"). Each record's keys
// are its to_json (analyzer/measurements/record_json.hpp); the document adds
// the figures derived from joining them.
#include <optional>
#include <ostream>

#include "analyzer/measurements/json_document.hpp"
#include "tools/writers/format_util.hpp"
#include "tools/writers/json_stream.hpp"

namespace modelstat {

// Semantic versioning, as for the analysis document: major for incompatible
// changes, minor for added fields, patch for clarifications (docs/profile-json.md).
// 1.5: train_step.precision; 1.6: group_by, groups; 1.7: fusion, layers[].fused_members and kernel (CPU Conv groups);
// 1.8: context.seed and context.given_inputs, control_flow, layers[].shapes (a cost on observed shapes)
const char* const kProfileJsonSchemaVersion = "1.8.0";

namespace report_detail {
namespace {

Json transfer_json(const TimingSummary& t, int64_t bytes) {
  const std::optional<double> bps = t.count > 0 ? rate(double(bytes), t.median) : std::nullopt;
  return Json{{"bytes", bytes}, {"gb_per_s", bps ? json_number(*bps / 1e9) : Json(nullptr)}, {"time", t}};
}

Json concurrency_json(const ProfileResult& r) {
  if (!r.concurrency) return Json(nullptr);
  const ConcurrencyResult& c = *r.concurrency;
  return Json{{"mechanism", c.mechanism},
              {"requests_in_flight", c.requests_in_flight},
              {"throughput_requests_per_s", json_number(c.throughput)},
              {"throughput_samples_per_s", json_number(c.throughput * double(r.context.batch))},
              {"latency", c.latency}};
}

template <typename T>
Json optional_record(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}


}  // namespace

// The layer record with the figures of its join with the analysis cost
// (join_layer) between its name and its time, as docs/profile-json.md lists them.
Json profile_layer_json(const LayerTiming& layer, const LayerCost& f) {
  Json j = layer;
  j.erase("time");
  j["cost_status"] = f.node ? Json(cost_status_name(f.node->cost.status)) : Json(nullptr);
  if (f.node && !f.node->cost.shapes.empty()) j["shapes"] = f.node->cost.shapes;  // 1.8
  j["flops"] = json_optional(f.flops);
  j["macs"] = json_optional(f.macs);
  j["bytes"] = json_optional(f.bytes);
  j["share_of_layer_sum"] = json_optional(f.share_of_time);
  j["achieved_gflops"] = json_optional(giga(f.achieved_flops_per_second));
  j["achieved_gbps"] = json_optional(giga(f.achieved_bytes_per_second));
  j["time"] = layer.time;
  return j;
}

void write_profile_json(const ProfileResult& r, const ReportOptions& options, JsonStream& json) {
  Json doc = document_head(kProfileJsonSchemaVersion, "profile");
  doc["percentile_method"] = kPercentileMethod;
  doc["context"] = r.context;
  doc["cold_start"] = r.cold;
  doc["whole"] = r.whole;
  doc["layer_sum"] = r.layer_sum;
  doc["instrumentation_overhead"] = json_optional(instrumentation_overhead(r));
  doc["fusion"] = r.fusion.empty() ? Json(nullptr) : Json(r.fusion);
  doc["throughput_samples_per_s"] =
      r.whole.count > 0 ? json_optional(rate(double(r.context.batch), r.whole.median)) : Json(nullptr);
  Json layers = Json::array();
  const double sum = layer_median_sum(r);
  for (const LayerTiming* layer : layers_in_order(r)) layers.push_back(profile_layer_json(*layer, join_layer(r, *layer, sum)));
  doc["layers"] = std::move(layers);
  doc["subgraph_layer_sum"] = r.subgraph_layer_sum;
  Json subgraph_layers = Json::array();
  for (const LayerTiming& layer : r.subgraph_layers)
    subgraph_layers.push_back(profile_layer_json(layer, join_layer(r, layer, sum)));
  doc["subgraph_layers"] = std::move(subgraph_layers);
  // --group-by: the rule (null without one) and the layers summed per group.
  doc["group_by"] = r.group_by.empty() ? Json(nullptr) : Json(r.group_by);
  doc["groups"] = r.groups;
  doc["transfers"] = Json{{"h2d", transfer_json(r.h2d, r.h2d_bytes)},
                          {"d2h", transfer_json(r.d2h, r.d2h_bytes)},
                          {"end_to_end", r.end_to_end}};
  doc["batch_sweep"] = r.batch_sweep;
  doc["max_batch"] = r.max_batch > 0 ? Json(r.max_batch) : Json(nullptr);
  doc["concurrency"] = concurrency_json(r);
  doc["memory"] = optional_record(r.memory);
  doc["train_step"] = optional_record(r.train_step);
  doc["control_flow"] = r.control_flow;

  json.begin_object();
  json.members(doc);
  json.key("analysis");  // nested at its depth, nodes streamed (json_stream.hpp)
  write_analysis_json(r.analysis, options, json);
  json.member("notices", r.notices);
  json.end_object();
}

std::unique_ptr<ProfileWriter> make_profile_json_writer() {
  return std::make_unique<StreamedJsonWriter<ProfileResult, write_profile_json>>();
}

}  // namespace report_detail
}  // namespace modelstat

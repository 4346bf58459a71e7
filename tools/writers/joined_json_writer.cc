// Joined report, JSON (docs/report-json.md, docs/report.schema.json): the
// roofline figures of every node, the op-type summary and the hotspots, with
// the complete profile document (exactly what `modelstat profile -f json`
// writes, raw samples included) nested under "profile", so that a report
// JSON is also a profile (`modelstat compare` reads doc["profile"]).
//
// Numbers follow the profile document: integers exact, doubles as the
// shortest decimal that reads back as the same double, null for a figure
// that does not exist (never 0). Rates are in base units (FLOP/s, bytes/s).
#include "analyzer/measurements/json_document.hpp"
#include "tools/writers/format_util.hpp"
#include "tools/writers/joined_writers.hpp"
#include "tools/writers/json_stream.hpp"

namespace modelstat::report {

namespace {

Json real(bool exists, double v) {
  return exists && std::isfinite(v) ? Json(v) : Json(nullptr);
}

Json context_json(const JoinedReport& r) {
  const RunContext& c = r.profile.context;
  Json j;
  j["model"] = r.profile.analysis.model_path;
  j["device_name"] = c.device_name;
  j["device_kind"] = c.device_kind;
  j["dtype"] = c.dtype;
  j["threads"] = c.threads;
  j["batch"] = c.batch;
  return j;
}

Json whole_json(const JoinedReport& r) {
  const bool whole = r.profile.whole.count > 0 && r.profile.whole.median > 0;
  Json j;
  j["median_s"] = real(whole, r.profile.whole.median);
  j["layer_sum_s"] = real(true, r.layer_sum_seconds);
  j["flops"] = r.profile.analysis.totals.flops;
  j["achieved_flops_per_s"] = real(whole, r.whole_achieved_flops_per_second);
  j["efficiency"] = real(whole && r.peak_flops_per_second > 0, r.whole_efficiency);
  j["achievable_efficiency"] = real(whole && r.whole_achievable_efficiency > 0, r.whole_achievable_efficiency);
  if (r.forecast_seconds) {  // 2.6: fit's forecast of the run
    j["forecast_s"] = *r.forecast_seconds;
    j["forecast_error"] = json_optional(r.forecast_error);
  }
  if (!r.forecast_note.empty()) j["forecast_note"] = r.forecast_note;
  return j;
}

Json op_type_json(const JoinedReport& r, const JoinedOpType& t) {
  const bool none_known = t.nodes_not_exact == t.count;
  Json j;
  j["op_type"] = t.op_type;
  j["count"] = t.count;
  j["nodes_not_exact"] = t.nodes_not_exact;
  j["flops"] = t.flops;
  j["bytes"] = t.bytes;
  j["time_s"] = real(true, t.seconds);
  j["share_of_time"] = real(r.layer_sum_seconds > 0, t.share_of_time);
  j["share_of_flops"] = real(!none_known && r.profile.analysis.totals.flops > 0, t.share_of_flops);
  j["achieved_flops_per_s"] = real(!none_known && t.seconds > 0, t.achieved_flops_per_second);
  return j;
}

// --scaling: the whole model and every node timed at 1 and N threads, by time lost.
Json scaling_json(const ScalingView& v) {
  Json j;
  j["threads"] = v.threads;
  j["one_thread_median_s"] = real(v.one_thread_median > 0, v.one_thread_median);
  j["median_s"] = real(v.median > 0, v.median);
  j["speedup"] = real(v.median > 0 && v.one_thread_median > 0, v.speedup);
  j["efficiency"] = real(v.median > 0 && v.one_thread_median > 0, v.efficiency);
  j["layer_sum_one_thread_s"] = v.layer_sum_one_thread;
  j["layer_sum_s"] = v.layer_sum;
  Json nodes = Json::array();
  for (const NodeScaling& n : v.nodes) {
    Json row;
    row["index"] = n.index;
    row["name"] = n.name;
    row["op_type"] = n.op_type;
    row["one_thread_s"] = n.one_thread_seconds;
    row["s"] = n.seconds;
    row["speedup"] = n.speedup;
    row["efficiency"] = n.efficiency;
    row["lost_s"] = n.lost_seconds;
    row["why"] = n.why.empty() ? Json(nullptr) : Json(n.why);
    nodes.push_back(std::move(row));
  }
  j["nodes"] = std::move(nodes);
  return j;
}

class JoinedJsonWriter final : public JoinedWriter {
 public:
  void write(const JoinedReport& r, const ReportOptions& options, std::ostream& out) const override {
    Json doc = document_head(kJoinedJsonSchemaVersion, "report");
    doc["cost_convention"] = kCostConvention ? kCostConvention : "";
    doc["context"] = context_json(r);
    doc["ceilings"] = r.ceilings;  // the ceilings file's keys (docs/ceilings.md)
    doc["roofline"] = joined_roofline_json(r);
    doc["whole"] = whole_json(r);
    Json hotspots = Json::array();
    const size_t top = std::min(r.hotspots.size(), size_t(std::max(options.top, 0)));
    for (size_t i = 0; i < top; ++i) hotspots.push_back(r.nodes[size_t(r.hotspots[i])].index);
    doc["hotspots"] = std::move(hotspots);
    Json nodes = Json::array();
    for (const JoinedNode& n : r.nodes) nodes.push_back(joined_node_json(r, n));
    doc["nodes"] = std::move(nodes);
    Json subgraph_nodes = Json::array();
    for (const JoinedNode& n : r.subgraph_nodes) subgraph_nodes.push_back(joined_node_json(r, n));
    doc["subgraph_nodes"] = std::move(subgraph_nodes);
    // --group-by: the rule (null without one) and the nodes summed per group.
    doc["group_by"] = r.profile.group_by.empty() ? Json(nullptr) : Json(r.profile.group_by);
    Json groups = Json::array();
    for (const LayerGroup& g : r.profile.groups) groups.push_back(joined_group_json(g));
    doc["groups"] = std::move(groups);
    Json by_type = Json::array();
    for (const JoinedOpType& t : r.by_op_type) by_type.push_back(op_type_json(r, t));
    doc["by_op_type"] = std::move(by_type);
    if (r.scaling) doc["scaling"] = scaling_json(*r.scaling);  // 2.6, --scaling
    doc["notices"] = r.notices;

    // The profile document goes last, written by the profile JSON writer's
    // own function one level down: it is then exactly the profile output.
    report_detail::JsonStream json(out);
    json.begin_object();
    json.members(doc);
    json.key("profile");
    report_detail::write_profile_json(r.profile, options, json);
    json.end_object();
    out << '\n';
  }
};

}  // namespace

Json joined_roofline_json(const JoinedReport& r) {
  Json j;
  j["compute_dtype"] = r.compute_dtype;
  j["peak_flops_per_s"] = real(r.peak_flops_per_second > 0, r.peak_flops_per_second);
  j["memory_bandwidth_bytes_per_s"] = real(r.memory_bandwidth > 0, r.memory_bandwidth);
  j["ridge_flops_per_byte"] = real(r.ridge_intensity > 0, r.ridge_intensity);
  j["peak_is_machine_roof"] = r.peak_is_machine_roof;
  j["peak_source"] = r.peak_source;
  j["achievable_flops_per_s"] = real(r.achievable_flops_per_second > 0, r.achievable_flops_per_second);
  Json levels = Json::array();
  for (const MemoryLevel& l : r.memory_roofs)
    levels.push_back({{"level", l.level}, {"bytes_per_s", l.bytes_per_second}, {"capacity_bytes", l.capacity_bytes}});
  j["memory_roofs"] = std::move(levels);
  return j;
}

Json joined_node_json(const JoinedReport& r, const JoinedNode& n) {
  Json j;
  j["index"] = n.index;
  j["name"] = n.name;
  j["op_type"] = n.op_type;
  j["upcast_to_fp32"] = n.upcast_to_fp32;
  if (!n.fused_into.empty()) j["fused_into"] = n.fused_into;
  if (!n.fused_members.empty()) j["fused_members"] = n.fused_members;  // 2.5, a Conv group's head
  if (!n.kernel.empty()) j["kernel"] = n.kernel;                       // 2.5, likewise
  if (n.depth > 0) {  // a subgraph node's row
    j["depth"] = n.depth;
    j["calls_per_run"] = json_number(n.calls_per_run);
  }
  j["cost_status"] = cost_status_name(n.status);
  if (!n.shapes.empty()) j["shapes"] = n.shapes;  // 2.6: counted on the shapes a run observed
  j["macs"] = json_optional(n.macs);
  j["flops"] = json_optional(n.flops);
  j["bytes"] = json_optional(n.bytes);
  j["median_s"] = json_optional(n.median_seconds);
  j["share_of_time"] = json_optional(n.share_of_time);
  j["share_of_flops"] = json_optional(n.share_of_flops);
  j["achieved_flops_per_s"] = json_optional(n.achieved_flops_per_second);
  j["achieved_bytes_per_s"] = json_optional(n.achieved_bytes_per_second);
  j["arithmetic_intensity"] = json_optional(n.arithmetic_intensity);
  j["bound"] = bound_name(n.bound);
  j["memory_level"] = n.memory_level.empty() ? Json(nullptr) : Json(n.memory_level);
  j["attainable_flops_per_s"] = json_optional(n.attainable_flops_per_second);
  j["efficiency"] = json_optional(n.efficiency);
  if (n.forecast_seconds) j["forecast_s"] = *n.forecast_seconds;  // 2.6
  return j;
}

// A group of the profile (LayerGroup) in the report's units and key names
// (those of by_op_type: count, time_s, rates per second).
Json joined_group_json(const LayerGroup& g) {
  Json j;
  j["key"] = g.key;
  j["first_index"] = g.first_index;
  j["count"] = g.layers;
  j["nodes_not_exact"] = g.layers_not_exact;
  j["macs"] = g.macs;
  j["flops"] = g.flops;
  j["bytes"] = g.bytes;
  j["time_s"] = real(true, g.seconds);
  j["share_of_time"] = json_optional(g.share_of_time);
  j["share_of_flops"] = json_optional(g.share_of_flops);
  j["achieved_flops_per_s"] = json_optional(g.achieved_flops_per_second);
  j["achieved_bytes_per_s"] = json_optional(g.achieved_bytes_per_second);
  return j;
}

std::unique_ptr<JoinedWriter> make_joined_json_writer() { return std::make_unique<JoinedJsonWriter>(); }

}  // namespace modelstat::report

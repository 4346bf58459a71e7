// Joined report, JSON (docs/report-json.md, docs/report.schema.json): the
// roofline figures of every node, the op-type summary and the hotspots, with
// the complete profile document (exactly what `modelstat profile -f json`
// writes, raw samples included) nested under "profile", so that a report
// JSON is also a profile (`modelstat compare` reads doc["profile"]).
//
// Numbers follow the profile document: integers exact, doubles as the
// shortest decimal that reads back as the same double, null for a figure
// that does not exist (never 0). Rates are in base units (FLOP/s, bytes/s).
#include <nlohmann/json.hpp>
#include <sstream>

#include "tools/writers/writers.hpp"
#include "tools/writers/joined_writers.hpp"

namespace modelstat::report {

namespace {

using Json = nlohmann::ordered_json;  // keys keep insertion order: stable output

Json real(bool exists, double v) {
  return exists && std::isfinite(v) ? Json(v) : Json(nullptr);
}

Json strings(const std::vector<std::string>& values) {
  Json array = Json::array();
  for (const std::string& v : values) array.push_back(v);
  return array;
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

Json ceilings_json(const DeviceCeilings& c) {
  Json j;
  j["source"] = c.source;
  j["measured"] = c.measured();
  j["device_kind"] = c.device_kind;
  j["device_name"] = c.device_name;
  j["threads"] = c.threads;
  j["date"] = c.date;
  j["host"] = c.host;
  j["torch_version"] = c.torch_version;
  j["memory_bandwidth_bytes_per_s"] = real(c.memory_bandwidth > 0, c.memory_bandwidth);
  j["copy_bytes"] = c.copy_bytes;
  j["op_overhead_s"] = real(true, c.op_overhead_seconds);
  Json matmul = Json::array();
  for (const MatmulCeiling& m : c.matmul) {
    Json e;
    e["dtype"] = m.dtype;
    e["flops_per_s"] = real(true, m.flops_per_second);
    e["best_size"] = m.best_size;
    Json curve = Json::array();
    for (const MatmulCeiling::Point& p : m.curve) {
      Json point;
      point["n"] = p.n;
      point["flops_per_s"] = real(true, p.flops_per_second);
      curve.push_back(std::move(point));
    }
    e["curve"] = std::move(curve);
    matmul.push_back(std::move(e));
  }
  j["matmul"] = std::move(matmul);
  j["notes"] = strings(c.notes);
  return j;
}

Json roofline_json(const JoinedReport& r) {
  Json j;
  j["compute_dtype"] = r.compute_dtype;
  j["peak_flops_per_s"] = real(r.peak_flops_per_second > 0, r.peak_flops_per_second);
  j["memory_bandwidth_bytes_per_s"] = real(r.memory_bandwidth > 0, r.memory_bandwidth);
  j["ridge_flops_per_byte"] = real(r.ridge_intensity > 0, r.ridge_intensity);
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
  return j;
}

Json node_json(const JoinedReport& r, const JoinedNode& n) {
  auto count = [&](int64_t v) { return cost_known(n) ? Json(v) : Json(nullptr); };
  Json j;
  j["index"] = n.index;
  j["name"] = n.name;
  j["op_type"] = n.op_type;
  j["cost_status"] = cost_status_name(n.status);
  j["macs"] = count(n.macs);
  j["flops"] = count(n.flops);
  j["bytes"] = count(n.bytes);
  j["median_s"] = real(timed(n), n.median_seconds);
  j["share_of_time"] = real(timed(n) && r.layer_sum_seconds > 0, n.share_of_time);
  j["share_of_flops"] = real(cost_known(n) && r.profile.analysis.totals.flops > 0, n.share_of_flops);
  j["achieved_flops_per_s"] = real(has_rates(n), n.achieved_flops_per_second);
  j["achieved_bytes_per_s"] = real(has_rates(n), n.achieved_bytes_per_second);
  j["arithmetic_intensity"] = real(has_intensity(n), n.arithmetic_intensity);
  j["bound"] = bound_name(n.bound);
  j["attainable_flops_per_s"] = real(has_bound(n), n.attainable_flops_per_second);
  j["efficiency"] = real(has_bound(n), n.efficiency);
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

class JoinedJsonWriter final : public JoinedWriter {
 public:
  void write(const JoinedReport& r, const ReportOptions& options, std::ostream& out) const override {
    Json doc;
    doc["schema_version"] = kJoinedJsonSchemaVersion;
    doc["tool"] = "modelstat";
    doc["kind"] = "report";
    doc["cost_convention"] = kCostConvention ? kCostConvention : "";
    doc["context"] = context_json(r);
    doc["ceilings"] = ceilings_json(r.ceilings);
    doc["roofline"] = roofline_json(r);
    doc["whole"] = whole_json(r);
    Json hotspots = Json::array();
    const size_t top = std::min(r.hotspots.size(), size_t(std::max(options.top, 0)));
    for (size_t i = 0; i < top; ++i) hotspots.push_back(r.nodes[size_t(r.hotspots[i])].index);
    doc["hotspots"] = std::move(hotspots);
    Json nodes = Json::array();
    for (const JoinedNode& n : r.nodes) nodes.push_back(node_json(r, n));
    doc["nodes"] = std::move(nodes);
    Json by_type = Json::array();
    for (const JoinedOpType& t : r.by_op_type) by_type.push_back(op_type_json(r, t));
    doc["by_op_type"] = std::move(by_type);
    doc["notices"] = strings(r.notices);

    // The profile document goes last, written by the profile JSON writer
    // itself and indented one level: it is then byte for byte the profile
    // output, not a re-serialisation that could drift from it. Every line
    // break in JSON text is structural (strings hold none), so indenting each
    // line is safe.
    std::ostringstream profile;
    make_profile_writer("json")->write(r.profile, options, profile);
    std::string text = doc.dump(2, ' ', false, Json::error_handler_t::replace);
    text.pop_back();  // the closing '}'
    while (!text.empty() && text.back() == '\n') text.pop_back();
    out << text << ",\n  \"profile\": ";
    const std::string nested = profile.str();
    size_t end = nested.size();
    while (end > 0 && nested[end - 1] == '\n') --end;
    for (size_t i = 0; i < end; ++i) {
      out << nested[i];
      if (nested[i] == '\n') out << "  ";
    }
    out << "\n}\n";
  }
};

}  // namespace

std::unique_ptr<JoinedWriter> make_joined_json_writer() { return std::make_unique<JoinedJsonWriter>(); }

}  // namespace modelstat::report

// JSON report: every field of the AnalysisResult, integers exact (nlohmann
// writes int64 as integers, never through a double). The document is
// described field by field in docs/json-schema.md and docs/analysis.schema.json.
// Each record's keys are its to_json (analyzer/measurements/record_json.hpp);
// the document is written through JsonStream, one node per line.
#include <ostream>

#include "tools/writers/format_util.hpp"
#include "tools/writers/json_stream.hpp"

namespace modelstat {

// Semantic versioning of the document: major for incompatible changes
// (a field removed, renamed or given another meaning or unit), minor for
// added fields, patch for clarifications. See docs/json-schema.md.
// 1.1: subgraph_nodes; 1.2: macs_by_dtype; 1.3: kv_cache, decoder; 1.4: group_by, groups;
// 2.0: model.inputs / model.outputs as objects {name, dtype, dims} (were
// "name: dtype dims" strings, ambiguous when a name holds ": "); 2.1: nodes[].shapes
// ("observed", only on a row counted on the shapes a run observed: profile, report).
const char* const kAnalysisJsonSchemaVersion = "2.1.0";

namespace report_detail {

void write_analysis_json(const AnalysisResult& r, const ReportOptions& options, JsonStream& json) {
  json.begin_object();
  json.member("schema_version", kAnalysisJsonSchemaVersion);
  json.member("tool", "modelstat");
  json.member("kind", "analysis");
  json.member("convention", kCostConvention ? kCostConvention : "");
  json.key("model");
  json.begin_object();
  json.members(Json{{"path", r.model_path},
                    {"producer", r.producer},
                    {"ir_version", r.ir_version},
                    {"opsets", r.opsets},
                    {"file_size_bytes", r.file_size_bytes}});
  // One input or output a line: {"name": ..., "dtype": ..., "dims": [...]}.
  for (const auto& [key, values] : {std::pair{"inputs", &r.inputs}, std::pair{"outputs", &r.outputs}}) {
    json.key(key);
    json.begin_array();
    for (const GraphValue& v : *values) json.element(Json(v), Layout::OneLine);
    json.end_array();
  }
  json.end_object();
  json.member("totals", r.totals);

  // Every node, whatever options.show_all_nodes says: the JSON loses nothing.
  // One at a time, one a line (json_stream.hpp says why).
  json.key("nodes");
  json.begin_array();
  for (const NodeReport& n : r.nodes) json.element_line(n);
  json.end_array();
  // Nodes inside If / Loop / Scan that one run executes, named by path;
  // "index" is the top-level parent's (AnalysisResult::subgraph_nodes).
  json.key("subgraph_nodes");
  json.begin_array();
  for (const NodeReport& n : r.subgraph_nodes) json.element_line(n);
  json.end_array();
  // --group-by: the rule (null without one) and the nodes' sums per group,
  // in order of first appearance, one a line (empty without a rule).
  json.member("group_by", r.group_by.empty() ? Json(nullptr) : Json(r.group_by));
  json.key("groups");
  json.begin_array();
  for (const NodeGroup& g : r.groups) json.element(g, Layout::OneLine);
  json.end_array();

  json.member("by_op_type", r.by_op_type);
  json.member("size_by_dtype", r.size_by_dtype);
  json.member("macs_by_dtype", r.macs_by_dtype);
  json.member("shared_weights", r.shared_weights);
  // Node indices (NodeReport::index) of the top options.top nodes by FLOPs.
  Json hotspots = Json::array();
  for (const NodeReport* n : hotspot_nodes(r, options.top)) hotspots.push_back(n->index);
  json.member("hotspots", hotspots);
  // The KV cache (null when the graph has none) and, with --context, the
  // prefill and decode views (null otherwise).
  json.member("kv_cache", r.kv_cache ? Json(*r.kv_cache) : Json(nullptr));
  json.member("decoder", r.decoder ? Json(*r.decoder) : Json(nullptr));
  json.member("unknown_dims", r.unknown_dims);
  json.member("notices", r.notices);
  json.member("analysis_seconds", r.analysis_seconds);
  json.end_object();
}

std::unique_ptr<AnalysisWriter> make_json_writer() {
  return std::make_unique<StreamedJsonWriter<AnalysisResult, write_analysis_json>>();
}

}  // namespace report_detail
}  // namespace modelstat

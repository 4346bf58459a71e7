// JSON report: every field of the AnalysisResult, integers exact (nlohmann
// writes int64 as integers, never through a double). The document is
// described field by field in docs/json-schema.md and docs/analysis.schema.json.
#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>

#include "tools/writers/format_util.hpp"

namespace modelstat {

// Semantic versioning of the document: major for incompatible changes
// (a field removed, renamed or given another meaning or unit), minor for
// added fields, patch for clarifications. See docs/json-schema.md.
const char* const kAnalysisJsonSchemaVersion = "1.0.0";

namespace report_detail {
namespace {

using Json = nlohmann::ordered_json;  // keys keep insertion order: stable output

Json strings(const std::vector<std::string>& values) {
  Json array = Json::array();
  for (const std::string& v : values) array.push_back(v);
  return array;
}

Json model_json(const AnalysisResult& r) {
  Json opsets = Json::array();
  for (const OpsetImport& o : r.opsets) opsets.push_back(Json{{"domain", o.domain}, {"version", o.version}});
  return Json{{"path", r.model_path},
              {"producer", r.producer},
              {"ir_version", r.ir_version},
              {"opsets", std::move(opsets)},
              {"file_size_bytes", r.file_size_bytes},
              {"inputs", strings(r.inputs)},
              {"outputs", strings(r.outputs)}};
}

Json totals_json(const AnalysisTotals& t) {
  Json j;
  j["nodes"] = t.nodes;
  j["nodes_exact"] = t.nodes_exact;
  j["nodes_unknown_shape"] = t.nodes_unknown_shape;
  j["nodes_unknown_op"] = t.nodes_unknown_op;
  j["coverage"] = t.coverage();
  j["params"] = t.params;
  j["macs"] = t.macs;
  j["flops"] = t.flops;
  j["bytes_read"] = t.bytes_read;
  j["bytes_written"] = t.bytes_written;
  j["weight_bytes"] = t.weight_bytes;
  j["peak_activation_bytes"] = t.peak_activation_bytes;
  j["peak_at_node"] = t.peak_at_node;
  j["peak_is_lower_bound"] = t.peak_is_lower_bound;
  j["input_bytes"] = t.input_bytes;
  j["output_bytes"] = t.output_bytes;
  return j;
}

std::string quoted(const std::string& text) {
  return Json(text).dump(-1, ' ', false, Json::error_handler_t::replace);
}

void write_strings(std::ostream& out, const std::vector<std::string>& values) {
  out << '[';
  for (size_t i = 0; i < values.size(); ++i) out << (i ? ", " : "") << quoted(values[i]);
  out << ']';
}

// One node per line, written directly: a 100,000-node model would otherwise
// spend seconds building a DOM. Keys in the documented order.
void write_node(std::ostream& out, const NodeReport& n) {
  out << "{\"index\": " << n.index << ", \"name\": " << quoted(n.name) << ", \"op_type\": " << quoted(n.op_type)
      << ", \"domain\": " << quoted(n.domain) << ", \"input_shapes\": ";
  write_strings(out, n.input_shapes);
  out << ", \"output_shapes\": ";
  write_strings(out, n.output_shapes);
  // cost_status_name() spells the schema's status enum; the writer tests
  // validate every status against docs/analysis.schema.json.
  out << ", \"output_dtype\": " << quoted(n.output_dtype) << ", \"status\": \"" << cost_status_name(n.cost.status)
      << "\", \"params\": " << n.cost.params << ", \"macs\": " << n.cost.macs << ", \"flops\": " << n.cost.flops
      << ", \"bytes_read\": " << n.cost.bytes_read << ", \"bytes_written\": " << n.cost.bytes_written
      << ", \"weight_bytes\": " << n.cost.weight_bytes << ", \"arithmetic_intensity\": ";
  // null rather than an invalid JSON token should the ratio ever be non-finite.
  const double intensity = n.cost.arithmetic_intensity();
  out << (std::isfinite(intensity) ? Json(intensity).dump() : std::string("null"));
  out << ", \"rule\": " << quoted(n.cost.rule) << ", \"note\": " << quoted(n.cost.note)
      << ", \"subgraph_nodes\": " << n.subgraph_nodes << '}';
}

constexpr const char* kNodesPlaceholder = "@@modelstat-nodes@@";

class JsonWriter final : public AnalysisWriter {
 public:
  void write(const AnalysisResult& r, const ReportOptions& options, std::ostream& out) const override {
    write_analysis_json(r, options, out);
    out << '\n';
  }
};

// Writes text with every '\n' followed by indent (JSON strings never hold a
// raw line break, so only the layout's line breaks are affected).
void write_indented(std::ostream& out, const char* text, size_t size, const std::string& indent) {
  if (indent.empty()) {
    out.write(text, std::streamsize(size));
    return;
  }
  size_t start = 0;
  for (size_t i = 0; i < size; ++i) {
    if (text[i] != '\n') continue;
    out.write(text + start, std::streamsize(i + 1 - start));
    out << indent;
    start = i + 1;
  }
  out.write(text + start, std::streamsize(size - start));
}

}  // namespace

void write_analysis_json(const AnalysisResult& r, const ReportOptions& options, std::ostream& out,
                         const std::string& indent) {
  Json doc;
  doc["schema_version"] = kAnalysisJsonSchemaVersion;
  doc["tool"] = "modelstat";
  doc["kind"] = "analysis";
  doc["convention"] = kCostConvention ? kCostConvention : "";
  doc["model"] = model_json(r);
  doc["totals"] = totals_json(r.totals);

  // Every node, whatever options.show_all_nodes says: the JSON loses nothing.
  doc["nodes"] = kNodesPlaceholder;  // streamed below

  Json ops = Json::array();
  for (const OpTypeSummary& s : r.by_op_type)
    ops.push_back(Json{{"op_type", s.op_type},
                       {"count", s.count},
                       {"params", s.params},
                       {"macs", s.macs},
                       {"flops", s.flops},
                       {"bytes", s.bytes},
                       {"unknown", s.unknown}});
  doc["by_op_type"] = std::move(ops);

  Json sizes = Json::array();
  for (const DTypeSize& d : r.size_by_dtype)
    sizes.push_back(
        Json{{"dtype", d.dtype}, {"tensors", d.tensors}, {"elements", d.elements}, {"bytes", d.bytes}});
  doc["size_by_dtype"] = std::move(sizes);

  Json shared = Json::array();
  for (const SharedWeight& w : r.shared_weights)
    shared.push_back(Json{{"name", w.name}, {"elements", w.elements}, {"consumers", strings(w.consumers)}});
  doc["shared_weights"] = std::move(shared);

  // Node indices (NodeReport::index) of the top options.top nodes by FLOPs.
  Json hotspots = Json::array();
  for (const NodeReport* n : hotspot_nodes(r, options.top)) hotspots.push_back(n->index);
  doc["hotspots"] = std::move(hotspots);

  doc["unknown_dims"] = strings(r.unknown_dims);
  doc["notices"] = strings(r.notices);
  doc["analysis_seconds"] = r.analysis_seconds;

  // Invalid UTF-8 in a model's names is replaced (U+FFFD) rather than
  // aborting the whole report.
  const std::string text = doc.dump(2, ' ', false, Json::error_handler_t::replace);
  // The key and the line break before it make the marker unique: a string
  // value (a model path or node name that happens to spell the placeholder)
  // never holds a raw line break.
  const std::string key = "\n  \"nodes\": ";
  const std::string marker = key + "\"" + kNodesPlaceholder + "\"";
  const size_t at = text.find(marker);
  write_indented(out, text.data(), at + key.size(), indent);
  // Every node, whatever options.show_all_nodes says: the JSON loses nothing.
  const std::string line_break = "\n" + indent;
  out << '[';
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    out << (i ? "," : "") << line_break << "    ";
    write_node(out, r.nodes[i]);
  }
  if (r.nodes.empty())
    out << ']';
  else
    out << line_break << "  ]";
  const size_t rest = at + marker.size();
  write_indented(out, text.data() + rest, text.size() - rest, indent);
}

std::unique_ptr<AnalysisWriter> make_json_writer() {
  return std::make_unique<JsonWriter>();
}

}  // namespace report_detail
}  // namespace modelstat

// The JSON form of every record modelstat writes or reads back: one
// to_json/from_json pair per record, found by nlohmann's ADL convention
// (`Json j = record;`, `j.get<Record>()`). Each key of a record is spelled
// here and nowhere else; the writers (tools/writers/*_json_writer.cc) and the
// readers (ceilings files, `compare` reading profile JSON) all go through these
// functions, so a record cannot be written with one key set and read with another.
//
// Why here: the record types live in include/modelstat, whose public headers stay
// free of nlohmann; this private header belongs to modelstat_measurements (the
// lowest library that links nlohmann_json) and is included by the libraries and
// tools above it. Documents (schema_version, kind, figures derived by joining
// records) are assembled by the writers, not here.
//
// Units follow docs/profile-json.md for the profile records (seconds as `_s`)
// and docs/ceilings.md for the ceilings (`_seconds`, `_per_second`: the released
// ceilings-file schema, which every document that embeds ceilings now uses).
// A figure that does not exist is null, never 0.
#pragma once

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>

#include "modelstat/analysis.hpp"
#include "modelstat/ceilings.hpp"
#include "modelstat/profile.hpp"
#include "modelstat/verification.hpp"

namespace modelstat {

using Json = nlohmann::ordered_json;  // keys keep insertion order: stable output

// A double, or null when it is not finite.
inline Json json_number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

// The value, or null when empty (or not finite).
template <typename T>
Json json_optional(const std::optional<T>& v) {
  if (!v) return Json(nullptr);
  if constexpr (std::is_floating_point_v<T>)
    return json_number(*v);
  else
    return Json(*v);
}

// ------------------------------------------------------------------ analysis
// Written only (no reader needs an analysis back); docs/json-schema.md.
void to_json(Json& j, const OpsetImport& o);
// verify (docs/verify.md): written only.
void to_json(Json& j, const OutputCheck& c);
void to_json(Json& j, const VerifyRecord& r);
void to_json(Json& j, const GraphValue& v);  // analysis 2.0: {"name", "dtype", "dims"}

// A node row's fields in document order, each passed to f(key, value) with
// value an int64_t, a double (null in JSON when not finite), a std::string
// or a std::vector<std::string>. to_json(NodeReport) builds its object from
// it, and the writers stream the analysis's rows straight from it (a
// 100,000-node model's rows would otherwise be 2M small JSON values built and
// freed): the keys are spelled here only.
template <typename F>
void for_each_field(const NodeReport& n, F&& f) {
  f("index", int64_t(n.index));
  f("name", n.name);
  f("op_type", n.op_type);
  f("domain", n.domain);
  f("input_shapes", n.input_shapes);
  f("output_shapes", n.output_shapes);
  f("output_dtype", n.output_dtype);
  // cost_status_name() spells the schema's status enum; the writer tests
  // validate every status against docs/analysis.schema.json.
  f("status", std::string(cost_status_name(n.cost.status)));
  f("params", n.cost.params);
  f("macs", n.cost.macs);
  f("flops", n.cost.flops);
  f("bytes_read", n.cost.bytes_read);
  f("bytes_written", n.cost.bytes_written);
  f("weight_bytes", n.cost.weight_bytes);
  f("arithmetic_intensity", n.cost.arithmetic_intensity());
  f("rule", n.cost.rule);
  f("note", n.cost.note);
  f("subgraph_nodes", int64_t(n.subgraph_nodes));
  // 2.1: only on a row counted on the shapes a run observed (profile, report).
  if (!n.cost.shapes.empty()) f("shapes", n.cost.shapes);
}
void to_json(Json& j, const NodeReport& n);
void to_json(Json& j, const AnalysisTotals& t);
void to_json(Json& j, const KvCache& c);
void to_json(Json& j, const DecoderView& v);
void to_json(Json& j, const DecoderAnalysis& d);
void to_json(Json& j, const OpTypeSummary& s);
void to_json(Json& j, const NodeGroup& g);
void to_json(Json& j, const DTypeSize& d);
void to_json(Json& j, const DTypeMacs& d);
void to_json(Json& j, const SharedWeight& w);

// ------------------------------------------------------------------- profile
// docs/profile-json.md. Statistics of no samples are null; read back as NaN.
void to_json(Json& j, const TimingSummary& t);
void to_json(Json& j, const ControlFlowRun& c);  // 1.8
void from_json(const Json& j, TimingSummary& t);
// Entries of a timing object's samples_s that are null or not finite (a
// non-finite timer value): from_json(TimingSummary) leaves them out.
int64_t dropped_samples(const Json& timing);
// Every string field is optional on read (an older or trimmed document).
void to_json(Json& j, const RunContext& c);
void from_json(const Json& j, RunContext& c);
void to_json(Json& j, const ColdStart& c);
// index, name, op_type, upcast_to_fp32, [a subgraph row's depth, calls_per_run, median_per_call_s], time
void to_json(Json& j, const LayerTiming& l);
void from_json(const Json& j, LayerTiming& l);
void to_json(Json& j, const LayerGroup& g);  // written only (compare reads layers, not groups)
void to_json(Json& j, const BatchPoint& p);
void to_json(Json& j, const MemoryMeasurement& m);
void to_json(Json& j, const TrainStepResult& t);

// ------------------------------------------------------------------ ceilings
// docs/ceilings.md. from_json checks types and presence (nlohmann throws);
// ceilings_from_json adds the range checks and names the file.
void to_json(Json& j, const MatmulCeiling& m);
void from_json(const Json& j, MatmulCeiling& m);
void to_json(Json& j, const ConvSample& c);
void from_json(const Json& j, ConvSample& c);
void to_json(Json& j, const TrainConvSample& c);
void from_json(const Json& j, TrainConvSample& c);
void to_json(Json& j, const OpCost& o);
void from_json(const Json& j, OpCost& o);
void to_json(Json& j, const OptimizerUpdateCost& o);
void from_json(const Json& j, OptimizerUpdateCost& o);
void to_json(Json& j, const DeviceCeilings& c);
void from_json(const Json& j, DeviceCeilings& c);

}  // namespace modelstat

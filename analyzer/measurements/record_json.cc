// to_json / from_json of the analysis and profile records (record_json.hpp).
// The ceilings' pair is in ceilings.cc, beside the file's validation.
#include "analyzer/measurements/record_json.hpp"

#include <limits>
#include <stdexcept>

namespace modelstat {

namespace {

// A statistic that was read back: its value, or NaN for null (unknown, never 0).
double number_or_nan(const Json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : std::numeric_limits<double>::quiet_NaN();
}

std::string string_or_empty(const Json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

// ------------------------------------------------------------------ analysis

void to_json(Json& j, const OpsetImport& o) { j = Json{{"domain", o.domain}, {"version", o.version}}; }

void to_json(Json& j, const NodeReport& n) {
  // cost_status_name() spells the schema's status enum; the writer tests
  // validate every status against docs/analysis.schema.json.
  j = Json{{"index", n.index},
           {"name", n.name},
           {"op_type", n.op_type},
           {"domain", n.domain},
           {"input_shapes", n.input_shapes},
           {"output_shapes", n.output_shapes},
           {"output_dtype", n.output_dtype},
           {"status", cost_status_name(n.cost.status)},
           {"params", n.cost.params},
           {"macs", n.cost.macs},
           {"flops", n.cost.flops},
           {"bytes_read", n.cost.bytes_read},
           {"bytes_written", n.cost.bytes_written},
           {"weight_bytes", n.cost.weight_bytes},
           // null rather than an invalid JSON token should the ratio ever be non-finite.
           {"arithmetic_intensity", json_number(n.cost.arithmetic_intensity())},
           {"rule", n.cost.rule},
           {"note", n.cost.note},
           {"subgraph_nodes", n.subgraph_nodes}};
}

void to_json(Json& j, const AnalysisTotals& t) {
  j = Json{{"nodes", t.nodes},
           {"nodes_exact", t.nodes_exact},
           {"nodes_unknown_shape", t.nodes_unknown_shape},
           {"nodes_unknown_op", t.nodes_unknown_op},
           {"coverage", t.coverage()},
           {"params", t.params},
           {"macs", t.macs},
           {"flops", t.flops},
           {"bytes_read", t.bytes_read},
           {"bytes_written", t.bytes_written},
           {"weight_bytes", t.weight_bytes},
           {"peak_activation_bytes", t.peak_activation_bytes},
           {"peak_at_node", t.peak_at_node},
           {"peak_is_lower_bound", t.peak_is_lower_bound},
           {"input_bytes", t.input_bytes},
           {"output_bytes", t.output_bytes}};
}

void to_json(Json& j, const OpTypeSummary& s) {
  j = Json{{"op_type", s.op_type}, {"count", s.count}, {"params", s.params}, {"macs", s.macs},
           {"flops", s.flops},     {"bytes", s.bytes}, {"unknown", s.unknown}};
}

void to_json(Json& j, const DTypeSize& d) {
  j = Json{{"dtype", d.dtype}, {"tensors", d.tensors}, {"elements", d.elements}, {"bytes", d.bytes}};
}

void to_json(Json& j, const SharedWeight& w) {
  j = Json{{"name", w.name}, {"elements", w.elements}, {"consumers", w.consumers}};
}

// ------------------------------------------------------------------- profile

void to_json(Json& j, const TimingSummary& t) {
  const bool measured = t.count > 0;
  auto stat = [&](double v) { return measured ? json_number(v) : Json(nullptr); };
  j = Json::object();
  j["count"] = t.count;
  j["median_s"] = stat(t.median);
  j["mean_s"] = stat(t.mean);
  j["stddev_s"] = stat(t.stddev);
  j["cv"] = stat(t.cv);
  j["min_s"] = stat(t.min);
  j["max_s"] = stat(t.max);
  j["p50_s"] = stat(t.p50);
  j["p90_s"] = stat(t.p90);
  j["p95_s"] = stat(t.p95);
  j["p99_s"] = stat(t.p99);
  j["median_ci_low_s"] = stat(t.median_ci_low);
  j["median_ci_high_s"] = stat(t.median_ci_high);
  j["rel_ci"] = stat(t.rel_ci);
  j["stop_reason"] = t.stop_reason;
  j["samples_s"] = t.samples;  // non-finite entries dump as null
}

void from_json(const Json& j, TimingSummary& t) {
  const Json& samples = j.at("samples_s");
  if (!samples.is_array()) throw std::invalid_argument("samples_s is not an array");
  t.samples.clear();
  t.samples.reserve(samples.size());
  for (const Json& v : samples) {
    if (v.is_null()) continue;
    const double x = v.get<double>();
    if (std::isfinite(x)) t.samples.push_back(x);
  }
  const auto count = j.find("count");
  t.count = count != j.end() && count->is_number_integer() ? count->get<int64_t>() : int64_t(t.samples.size());
  t.median = number_or_nan(j, "median_s");
  t.mean = number_or_nan(j, "mean_s");
  t.stddev = number_or_nan(j, "stddev_s");
  t.cv = number_or_nan(j, "cv");
  t.min = number_or_nan(j, "min_s");
  t.max = number_or_nan(j, "max_s");
  t.p50 = number_or_nan(j, "p50_s");
  t.p90 = number_or_nan(j, "p90_s");
  t.p95 = number_or_nan(j, "p95_s");
  t.p99 = number_or_nan(j, "p99_s");
  t.median_ci_low = number_or_nan(j, "median_ci_low_s");
  t.median_ci_high = number_or_nan(j, "median_ci_high_s");
  t.rel_ci = number_or_nan(j, "rel_ci");
  t.stop_reason = string_or_empty(j, "stop_reason");
}

int64_t dropped_samples(const Json& timing) {
  int64_t dropped = 0;
  for (const Json& v : timing.at("samples_s"))
    if (v.is_null() || !std::isfinite(v.get<double>())) ++dropped;
  return dropped;
}

void to_json(Json& j, const RunContext& c) {
  j = Json{{"device_name", c.device_name},
           {"device_kind", c.device_kind},
           {"driver_version", c.driver_version},
           {"runtime_version", c.runtime_version},
           {"torch_version", c.torch_version},
           {"threads", c.threads},
           {"dtype", c.dtype},
           {"batch", c.batch},
           {"clocks", c.clocks},
           {"timer", c.timer},
           {"allocator", c.allocator},
           {"date", c.date},
           {"host", c.host}};
}

void from_json(const Json& j, RunContext& c) {
  c.device_name = string_or_empty(j, "device_name");
  c.device_kind = string_or_empty(j, "device_kind");
  c.driver_version = string_or_empty(j, "driver_version");
  c.runtime_version = string_or_empty(j, "runtime_version");
  c.torch_version = string_or_empty(j, "torch_version");
  c.threads = j.value("threads", 0);
  c.dtype = string_or_empty(j, "dtype");
  c.batch = j.value("batch", int64_t(0));
  c.clocks = string_or_empty(j, "clocks");
  c.timer = string_or_empty(j, "timer");
  c.allocator = string_or_empty(j, "allocator");
  c.date = string_or_empty(j, "date");
  c.host = string_or_empty(j, "host");
}

void to_json(Json& j, const ColdStart& c) {
  j = Json{{"model_load_s", json_number(c.model_load)},
           {"weight_upload_s", json_number(c.weight_upload)},
           {"first_inference_s", json_number(c.first_inference)},
           {"steady_state_median_s", json_number(c.steady_state_median)}};
}

void to_json(Json& j, const LayerTiming& l) {
  j = Json{{"index", l.index}, {"name", l.name}, {"op_type", l.op_type}, {"time", l.time}};
}

void from_json(const Json& j, LayerTiming& l) {
  l.index = j.at("index").get<int>();
  l.name = j.at("name").get<std::string>();
  l.op_type = j.at("op_type").get<std::string>();
  l.time = j.at("time").get<TimingSummary>();
}

void to_json(Json& j, const BatchPoint& p) {
  j = Json{{"batch", p.batch},
           {"fits", p.fits},
           {"failure", p.failure},
           {"median_s", p.fits ? json_number(p.median) : Json(nullptr)},
           {"throughput_samples_per_s", p.fits ? json_number(p.throughput) : Json(nullptr)}};
}

void to_json(Json& j, const MemoryMeasurement& m) {
  j = Json{{"method", m.method},
           {"weights_bytes", m.weights_bytes},
           {"inference_peak_bytes", m.inference_peak_bytes}};
}

void to_json(Json& j, const TrainStepResult& t) {
  const bool measured = t.time.count > 0;
  j = Json{{"optimizer", t.optimizer},
           {"loss", t.loss},
           {"trainable_params", t.trainable_params},
           {"time", t.time},
           {"forward_s", measured ? json_number(t.forward_seconds) : Json(nullptr)},
           {"backward_s", measured ? json_number(t.backward_seconds) : Json(nullptr)},
           {"optimizer_s", measured ? json_number(t.optimizer_seconds) : Json(nullptr)},
           {"peak_bytes", t.peak_bytes},
           {"memory_method", t.memory_method}};
}

}  // namespace modelstat

#include "analyzer/suite/cell_json.hpp"

#include <limits>

#include "analyzer/measurements/json_document.hpp"
#include "analyzer/measurements/json_input.hpp"
#include "analyzer/suite/machine.hpp"

namespace modelstat::suite {

const char* const kCellResultSchemaVersion = "1.0.0";
const char* const kCellResultKind = "suite-cell";

namespace {

constexpr int64_t kMaxCount = int64_t(1) << 53;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// An identity: 16 lower-case hex digits (hash_hex).
std::string json_hash(const Json& j, const char* key) {
  const std::string s = json_string(j, key);
  const bool ok = s.size() == 16 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
  if (!ok) json_expected(j, key, "16 lower-case hex digits");
  return s;
}

std::optional<int64_t> optional_integer(const Json& j, const char* key) {
  if (!json_field_if(j, key)) return std::nullopt;
  return json_integer(j, key, 0, std::numeric_limits<int64_t>::max());
}

std::optional<double> optional_number(const Json& j, const char* key, JsonNumber rule) {
  if (!json_field_if(j, key)) return std::nullopt;
  return json_number(j, key, rule);
}

// {"name": "value", ...} <-> pairs, in the object's order.
Json pairs_json(const std::vector<std::pair<std::string, std::string>>& pairs) {
  Json j = Json::object();
  for (const auto& [k, v] : pairs) j[k] = v;
  return j;
}
std::vector<std::pair<std::string, std::string>> read_pairs(const Json& j, const char* key) {
  std::vector<std::pair<std::string, std::string>> out;
  const Json& o = json_object(j, key);
  for (auto it = o.begin(); it != o.end(); ++it) out.emplace_back(it.key(), json_string(o, it.key().c_str()));
  return out;
}

std::vector<std::string> read_strings(const Json& j, const char* key) {
  std::vector<std::string> out;
  for (const Json& v : json_array(j, key)) out.push_back(json_string_value(v));
  return out;
}

}  // namespace

void to_json(Json& j, const Cell& c) {
  Json bindings = Json::object();
  for (const auto& [k, v] : c.bindings) bindings[k] = v;
  j = Json{{"index", c.index},     {"key", c.key},           {"model", c.model},       {"model_path", c.model_path},
           {"model_hash", c.model_hash}, {"task", c.task},   {"bindings", bindings},   {"inputs", c.inputs},
           {"batch", c.batch},     {"threads", c.threads},   {"dtype", c.dtype},       {"fusion", c.fusion},
           {"mode", c.mode_name()}, {"requests", c.requests}, {"device", c.device},    {"runtime", c.runtime}};
}

void from_json(const Json& j, Cell& c) {
  c.index = json_integer(j, "index", 0, kMaxCount);
  c.key = json_hash(j, "key");
  c.model = json_string(j, "model");
  c.model_path = json_string_or(j, "model_path");
  c.model_hash = json_hash(j, "model_hash");
  c.task = json_string_or(j, "task", "inference");
  c.bindings.clear();
  const Json& b = json_object(j, "bindings");
  for (auto it = b.begin(); it != b.end(); ++it)
    c.bindings.emplace_back(it.key(), json_integer(b, it.key().c_str(), 1, int64_t(1) << 40));
  c.inputs = read_strings(j, "inputs");
  c.batch = json_integer(j, "batch", 1, int64_t(1) << 20);
  c.threads = static_cast<int>(json_integer(j, "threads", 0, 4096));
  c.dtype = json_string(j, "dtype");
  c.fusion = json_string(j, "fusion");
  c.requests = static_cast<int>(json_integer(j, "requests", 0, 1024));
  const std::string mode = json_string(j, "mode");
  if (mode != c.mode_name()) json_expected(j, "mode", c.requests > 0 ? "\"async\" (requests > 0)" : "\"sync\" (requests 0)");
  c.device = json_string(j, "device");
  c.runtime = json_string(j, "runtime");
}

void to_json(Json& j, const Machine& m) {
  j = Json{{"id", m.id},       {"name", m.name},         {"cpu_model", m.cpu_model},
           {"cores", m.cores}, {"memory_bytes", m.memory_bytes}, {"gpu", m.gpu},
           {"gpu_driver", m.gpu_driver}, {"host", m.host}};
}

void from_json(const Json& j, Machine& m) {
  m.id = json_hash(j, "id");
  m.name = json_string(j, "name");
  m.cpu_model = json_string_or(j, "cpu_model");
  m.cores = json_integer(j, "cores", 0, 1 << 20);
  m.memory_bytes = json_integer(j, "memory_bytes", 0, std::numeric_limits<int64_t>::max());
  m.gpu = json_string_or(j, "gpu");
  m.gpu_driver = json_string_or(j, "gpu_driver");
  m.host = json_string_or(j, "host");
}

void to_json(Json& j, const Environment& e) {
  j = Json{{"id", e.id},
           {"modelstat_version", e.modelstat_version},
           {"modelstat_commit", e.modelstat_commit},
           {"libraries", pairs_json(e.libraries)},
           {"variables", pairs_json(e.variables)},
           {"cpu_affinity", e.cpu_affinity}};
}

void from_json(const Json& j, Environment& e) {
  e.id = json_hash(j, "id");
  e.modelstat_version = json_string(j, "modelstat_version");
  e.modelstat_commit = json_string(j, "modelstat_commit");
  e.libraries = read_pairs(j, "libraries");
  e.variables = read_pairs(j, "variables");
  e.cpu_affinity = json_string_or(j, "cpu_affinity");
}

void to_json(Json& j, const Measurement& m) {
  j = Json{{"latency", m.latency},
           {"fps", json_number(m.fps)},
           {"average_pass_s", json_number(m.average_pass_s)},
           {"async_latency", m.async_latency ? Json(*m.async_latency) : Json(nullptr)},
           {"batch_fps", json_optional(m.batch_fps)},
           {"tokens", json_optional(m.tokens)},
           {"latency_per_token_s", json_optional(m.latency_per_token_s)}};
}

void from_json(const Json& j, Measurement& m) {
  from_json(json_object(j, "latency"), m.latency);
  if (m.latency.samples.empty()) json_expected(json_object(j, "latency"), "samples_s", "at least one sample");
  m.fps = json_number_or(j, "fps", JsonNumber::NonNegative, kNaN);
  m.average_pass_s = json_number_or(j, "average_pass_s", JsonNumber::NonNegative, kNaN);
  m.async_latency.reset();
  if (const Json* a = json_field_if(j, "async_latency")) {
    TimingSummary t;
    from_json(*a, t);
    m.async_latency = t;
  }
  m.batch_fps = optional_number(j, "batch_fps", JsonNumber::NonNegative);
  m.tokens = optional_integer(j, "tokens");
  m.latency_per_token_s = optional_number(j, "latency_per_token_s", JsonNumber::NonNegative);
}

void to_json(Json& j, const StaticTotals& t) {
  j = Json{{"params", json_optional(t.params)}, {"macs", json_optional(t.macs)},   {"flops", json_optional(t.flops)},
           {"bytes", json_optional(t.bytes)},   {"model_bytes", t.model_bytes}, {"inputs", t.inputs},
           {"precision", t.precision}};
}

void from_json(const Json& j, StaticTotals& t) {
  t.params = optional_integer(j, "params");
  t.macs = optional_integer(j, "macs");
  t.flops = optional_integer(j, "flops");
  t.bytes = optional_integer(j, "bytes");
  t.model_bytes = json_integer_or(j, "model_bytes", 0, std::numeric_limits<int64_t>::max(), 0);
  t.inputs = read_strings(j, "inputs");
  t.precision = json_string_or(j, "precision");
}

void to_json(Json& j, const Forecast& f) {
  j = Json{{"latency_s", json_optional(f.latency_s)},
           {"error", json_optional(f.error)},
           {"memory_bytes", json_optional(f.memory_bytes)},
           {"source", f.source},
           {"note", f.note}};
}

void from_json(const Json& j, Forecast& f) {
  f.latency_s = optional_number(j, "latency_s", JsonNumber::NonNegative);
  f.error = optional_number(j, "error", JsonNumber::Finite);
  f.memory_bytes = optional_integer(j, "memory_bytes");
  f.source = json_string_or(j, "source");
  f.note = json_string_or(j, "note");
}

void to_json(Json& j, const CellResult& r) {
  j = document_head(kCellResultSchemaVersion, kCellResultKind);
  j["suite"] = Json{{"name", r.suite_name}, {"file", r.suite_file}, {"hash", r.suite_hash}, {"run_id", r.run_id}};
  j["cell"] = r.cell;
  j["machine"] = r.machine;
  j["environment"] = r.environment;
  j["status"] = r.status;
  j["exit_code"] = r.exit_code;
  j["error_type"] = r.error_type;
  j["error"] = r.error;
  j["started_at"] = r.started_at;
  j["finished_at"] = r.finished_at;
  j["wall_s"] = json_number(r.wall_s);
  j["runtime_version"] = r.runtime_version;
  j["measurement"] = r.measurement ? Json(*r.measurement) : Json(nullptr);
  j["totals"] = r.totals ? Json(*r.totals) : Json(nullptr);
  j["forecast"] = r.forecast;
  j["context"] = r.context ? Json(*r.context) : Json(nullptr);
  j["notices"] = r.notices;
}

void from_json(const Json& j, CellResult& r) {
  if (!j.is_object()) json_expected(j, "a modelstat suite-cell result (a JSON object)");
  if (json_string_or(j, "kind") != kCellResultKind)
    json_expected(j, "kind", std::string("\"") + kCellResultKind + "\": a result file of `modelstat suite cell`");
  const std::string version = json_string(j, "schema_version");
  if (version.substr(0, version.find('.')) != "1") json_expected(j, "schema_version", "a result schema this modelstat reads (1.x)");
  const Json& s = json_object(j, "suite");
  r.suite_name = json_string(s, "name");
  r.suite_file = json_string_or(s, "file");
  r.suite_hash = json_hash(s, "hash");
  r.run_id = json_string(s, "run_id");
  from_json(json_object(j, "cell"), r.cell);
  from_json(json_object(j, "machine"), r.machine);
  from_json(json_object(j, "environment"), r.environment);
  r.status = json_string(j, "status");
  if (r.status != "ok" && r.status != "failed") json_expected(j, "status", "\"ok\" or \"failed\"");
  r.exit_code = static_cast<int>(json_integer(j, "exit_code", 0, 255));
  r.error_type = json_string_or(j, "error_type");
  r.error = json_string_or(j, "error");
  r.started_at = json_string(j, "started_at");
  r.finished_at = json_string(j, "finished_at");
  r.wall_s = json_number_or(j, "wall_s", JsonNumber::NonNegative, 0);
  r.runtime_version = json_string_or(j, "runtime_version");
  r.measurement.reset();
  if (const Json* m = json_field_if(j, "measurement")) r.measurement = m->get<Measurement>();
  if (r.status == "ok" && !r.measurement) json_expected(j, "measurement", "a measurement (status is \"ok\")");
  r.totals.reset();
  if (const Json* t = json_field_if(j, "totals")) r.totals = t->get<StaticTotals>();
  from_json(json_object(j, "forecast"), r.forecast);
  r.context.reset();
  if (const Json* c = json_field_if(j, "context")) {
    RunContext context;
    modelstat::from_json(*c, context);
    r.context = context;
  }
  r.notices = read_strings(j, "notices");
}

std::string cell_result_text(const CellResult& r) { return Json(r).dump() + "\n"; }

CellResult read_cell_result(const std::string& text, const std::string& origin) {
  return read_json_record(parse_json_document(text, origin), origin,
                          [](const Json& doc) { return doc.get<CellResult>(); });
}

}  // namespace modelstat::suite

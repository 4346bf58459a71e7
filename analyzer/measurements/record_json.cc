// to_json / from_json of the analysis and profile records (record_json.hpp).
// The ceilings' pair is in ceilings.cc, beside the file's validation.
#include "analyzer/measurements/record_json.hpp"

#include <climits>
#include <limits>

#include "analyzer/measurements/json_input.hpp"

namespace modelstat {

// ------------------------------------------------------------------ analysis

void to_json(Json& j, const OpsetImport& o) { j = Json{{"domain", o.domain}, {"version", o.version}}; }

void to_json(Json& j, const GraphValue& v) {
  Json dims = nullptr;  // unknown rank
  if (v.shape.rank_known) {
    dims = Json::array();
    for (const Dim& d : v.shape.dims) {
      if (d.known()) dims.push_back(d.value);
      else if (!d.symbol.empty()) dims.push_back(d.symbol.str());
      else dims.push_back(nullptr);
    }
  }
  j = Json{{"name", v.name}, {"dtype", v.dtype}, {"dims", dims}};
}

void to_json(Json& j, const NodeReport& n) {
  j = Json::object();
  for_each_field(n, [&j](const char* key, const auto& value) {
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, double>)
      j[key] = json_number(value);  // null rather than an invalid JSON token
    else
      j[key] = value;
  });
}

void to_json(Json& j, const KvCache& c) {
  Json tensors = Json::array();
  for (const auto& t : c.tensors) tensors.push_back(Json{{"input", t.input}, {"output", t.output}, {"seq_axis", t.seq_axis}});
  j = Json{{"tensors", tensors},
           {"recognised_by", c.recognised_by},
           {"past_dim", c.past_dim},
           {"seq_dim", c.seq_dim},
           {"total_dims", c.total_dims},
           {"past_bytes", c.past_bytes},
           {"present_bytes", c.present_bytes},
           {"past_length", c.past_length},
           {"present_length", c.present_length},
           {"bytes_per_token", c.bytes_per_token}};
}

void to_json(Json& j, const DecoderView& v) {
  j = Json{{"name", v.name},
           {"tokens", v.tokens},
           {"batch", v.batch},
           {"context", v.context},
           {"bindings", v.bindings},
           {"totals", v.totals},
           {"kv_read_bytes", v.kv_read_bytes},
           {"kv_written_bytes", v.kv_written_bytes},
           {"attention_flops", v.attention_flops},
           {"flops_per_token", v.flops_per_token()},
           {"bytes_per_token", v.bytes_per_token()},
           {"arithmetic_intensity", v.arithmetic_intensity()},
           {"attention_share", v.attention_share()}};
}

void to_json(Json& j, const DecoderAnalysis& d) {
  j = Json{{"context", d.context}, {"prompt", d.prompt}, {"kv_cache", d.kv_cache}, {"prefill", d.prefill}, {"decode", d.decode}};
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

void to_json(Json& j, const NodeGroup& g) {
  j = Json{{"key", g.key},
           {"first_index", g.first_index},
           {"nodes", g.nodes},
           {"nodes_not_exact", g.nodes_not_exact},
           {"params", g.params},
           {"macs", g.macs},
           {"flops", g.flops},
           {"bytes_read", g.bytes_read},
           {"bytes_written", g.bytes_written},
           {"weight_bytes", g.weight_bytes}};
}

void to_json(Json& j, const DTypeSize& d) {
  j = Json{{"dtype", d.dtype}, {"tensors", d.tensors}, {"elements", d.elements}, {"bytes", d.bytes}};
}

void to_json(Json& j, const DTypeMacs& d) {
  j = Json{{"dtype", d.dtype}, {"nodes", d.nodes}, {"macs", d.macs}};
}

void to_json(Json& j, const SharedWeight& w) {
  j = Json{{"name", w.name}, {"elements", w.elements}, {"consumers", w.consumers}};
}

// ------------------------------------------------------------------- profile

namespace {

// The statistics of a TimingSummary and their keys, in document order: one
// table read by both to_json and from_json, so the two cannot drift apart.
struct StatKey {
  const char* key;
  double TimingSummary::*member;
};
constexpr StatKey kStatKeys[] = {
    {"median_s", &TimingSummary::median},
    {"mean_s", &TimingSummary::mean},
    {"stddev_s", &TimingSummary::stddev},
    {"cv", &TimingSummary::cv},
    {"min_s", &TimingSummary::min},
    {"max_s", &TimingSummary::max},
    {"p50_s", &TimingSummary::p50},
    {"p90_s", &TimingSummary::p90},
    {"p95_s", &TimingSummary::p95},
    {"p99_s", &TimingSummary::p99},
    {"median_ci_low_s", &TimingSummary::median_ci_low},
    {"median_ci_high_s", &TimingSummary::median_ci_high},
    {"rel_ci", &TimingSummary::rel_ci},
};

}  // namespace

void to_json(Json& j, const TimingSummary& t) {
  j = Json::object();
  j["count"] = t.count;
  for (const StatKey& s : kStatKeys) j[s.key] = t.count > 0 ? json_number(t.*s.member) : Json(nullptr);
  j["stop_reason"] = t.stop_reason;
  j["samples_s"] = t.samples;  // non-finite entries dump as null
}

// Read with the checks of json_input.hpp: samples and statistics are times (a
// number >= 0; null: unknown), so a refused document names the offending entry.
void from_json(const Json& j, TimingSummary& t) {
  const Json& samples = json_array(j, "samples_s");
  t.samples.clear();
  t.samples.reserve(samples.size());  // at most kJsonMaxArrayElements: the parser's limit
  for (const Json& v : samples)
    if (!v.is_null()) t.samples.push_back(json_number_value(v, JsonNumber::NonNegative));
  t.count = json_integer_or(j, "count", 0, int64_t(1) << 53, int64_t(t.samples.size()));
  for (const StatKey& s : kStatKeys)
    t.*s.member = json_number_or(j, s.key, JsonNumber::NonNegative, std::numeric_limits<double>::quiet_NaN());
  t.stop_reason = json_string_or(j, "stop_reason");
}

int64_t dropped_samples(const Json& timing) {
  int64_t dropped = 0;
  for (const Json& v : json_array(timing, "samples_s"))
    if (!v.is_number() || !std::isfinite(v.get<double>())) ++dropped;
  return dropped;
}

namespace {

// The run context's fields and their keys, in document order (threads and
// batch are numbers, the rest strings), for both directions.
struct ContextKey {
  const char* key;
  std::string RunContext::*text = nullptr;
  int RunContext::*small = nullptr;
  int64_t RunContext::*large = nullptr;
};
const ContextKey kContextKeys[] = {
    {"device_name", &RunContext::device_name},
    {"device_kind", &RunContext::device_kind},
    {"driver_version", &RunContext::driver_version},
    {"runtime_version", &RunContext::runtime_version},
    {"torch_version", &RunContext::torch_version},
    {"threads", nullptr, &RunContext::threads},
    {"dtype", &RunContext::dtype},
    {"batch", nullptr, nullptr, &RunContext::batch},
    {"clocks", &RunContext::clocks},
    {"timer", &RunContext::timer},
    {"allocator", &RunContext::allocator},
    {"blas", &RunContext::blas},
    {"onednn_isa", &RunContext::onednn_isa},
    {"openmp", &RunContext::openmp},
    {"date", &RunContext::date},
    {"host", &RunContext::host},
};

}  // namespace

void to_json(Json& j, const RunContext& c) {
  j = Json::object();
  for (const ContextKey& k : kContextKeys) {
    if (k.text) j[k.key] = c.*k.text;
    if (k.small) j[k.key] = c.*k.small;
    if (k.large) j[k.key] = c.*k.large;
  }
  // Profile 1.8: the inputs' seed and the values given in their place; absent
  // where no inputs were drawn from a seed (a generation's context: seed 0).
  if (c.seed == 0 && c.given_inputs.empty()) return;
  j["seed"] = c.seed;
  Json given = Json::array();
  for (const GivenInput& g : c.given_inputs)
    given.push_back(Json{{"name", g.name}, {"dtype", g.dtype}, {"dims", g.dims}, {"source", g.source}, {"values", g.values}});
  j["given_inputs"] = std::move(given);
}

// Every field is optional on read (absent or null: empty, 0); one of another
// type, or a count out of range, is refused.
void from_json(const Json& j, RunContext& c) {
  for (const ContextKey& k : kContextKeys) {
    if (k.text) c.*k.text = json_string_or(j, k.key);
    if (k.small) c.*k.small = static_cast<int>(json_integer_or(j, k.key, 0, 1 << 16, 0));
    if (k.large) c.*k.large = json_integer_or(j, k.key, 0, int64_t(1) << 40, 0);
  }
  if (const auto it = j.find("seed"); it != j.end() && it->is_number_unsigned()) c.seed = it->get<uint64_t>();
  if (const auto it = j.find("given_inputs"); it != j.end() && it->is_array())
    for (const Json& g : *it) {
      GivenInput in;
      in.name = json_string_or(g, "name");
      in.dtype = json_string_or(g, "dtype");
      in.source = json_string_or(g, "source");
      in.values = json_string_or(g, "values");
      if (const auto d = g.find("dims"); d != g.end() && d->is_array())
        for (const Json& v : *d)
          if (v.is_number_integer()) in.dims.push_back(v.get<int64_t>());
      c.given_inputs.push_back(std::move(in));
    }
}

void to_json(Json& j, const ControlFlowRun& c) {
  j = Json{{"node", c.node}, {"op_type", c.op_type}};
  if (c.op_type == "If") j["taken"] = c.taken;
  else j["trips"] = c.trips;
  j["varied"] = c.varied;
  j["counted"] = c.counted;
}

void to_json(Json& j, const ColdStart& c) {
  j = Json{{"model_load_s", json_number(c.model_load)},
           {"weight_upload_s", json_number(c.weight_upload)},
           {"first_inference_s", json_number(c.first_inference)},
           {"steady_state_median_s", json_number(c.steady_state_median)}};
}

// A subgraph node's row (depth > 0) adds depth, calls_per_run and
// median_per_call_s after upcast_to_fp32; a top-level row has none of them.
void to_json(Json& j, const LayerTiming& l) {
  j = Json{
      {"index", l.index}, {"name", l.name}, {"op_type", l.op_type}, {"upcast_to_fp32", l.upcast_to_fp32}};
  if (l.depth > 0) {
    j["depth"] = l.depth;
    j["calls_per_run"] = json_number(l.calls_per_run);
    j["median_per_call_s"] = l.time.count > 0 ? json_number(l.median_per_call) : Json(nullptr);
  }
  if (!l.fused_into.empty()) j["fused_into"] = l.fused_into;  // 1.4.0, fused rows only
  if (!l.fused_members.empty()) j["fused_members"] = l.fused_members;  // 1.7.0, a Conv group's head only
  if (!l.kernel.empty()) j["kernel"] = l.kernel;                       // 1.7.0, likewise
  j["time"] = l.time;
}

void from_json(const Json& j, LayerTiming& l) {
  l.index = static_cast<int>(json_integer(j, "index", 0, INT_MAX));
  l.name = json_string(j, "name");
  l.op_type = json_string(j, "op_type");
  l.upcast_to_fp32 = json_bool_or(j, "upcast_to_fp32", false);  // 1.3.0
  // 1.4.0, subgraph rows only: absent in a top-level row and in older documents.
  l.depth = static_cast<int>(json_integer_or(j, "depth", 0, 1 << 16, 0));
  l.calls_per_run = json_number_or(j, "calls_per_run", JsonNumber::NonNegative, 1.0);
  l.median_per_call = json_number_or(j, "median_per_call_s", JsonNumber::NonNegative,
                                     std::numeric_limits<double>::quiet_NaN());
  l.fused_into = json_string_or(j, "fused_into");
  // 1.7.0, a Conv group's head only: absent elsewhere and in older documents.
  l.fused_members.clear();
  if (j.contains("fused_members")) {
    const Json& members = j.at("fused_members");
    if (!members.is_array()) json_expected(j, "fused_members", "an array of node names");
    for (const Json& m : members) {
      if (!m.is_string()) json_expected(j, "fused_members", "an array of node names");
      l.fused_members.push_back(m.get<std::string>());
    }
  }
  l.kernel = json_string_or(j, "kernel");
  from_json(json_object(j, "time"), l.time);
}

void to_json(Json& j, const LayerGroup& g) {
  // Rates in the units of the profile's layer rows (GFLOP/s, GB/s).
  auto giga = [](const std::optional<double>& v) { return v ? json_number(*v / 1e9) : Json(nullptr); };
  j = Json{{"key", g.key},
           {"first_index", g.first_index},
           {"layers", g.layers},
           {"layers_not_exact", g.layers_not_exact},
           {"macs", g.macs},
           {"flops", g.flops},
           {"bytes", g.bytes},
           {"median_sum_s", json_number(g.seconds)},
           {"share_of_layer_sum", json_optional(g.share_of_time)},
           {"share_of_flops", json_optional(g.share_of_flops)},
           {"achieved_gflops", giga(g.achieved_flops_per_second)},
           {"achieved_gbps", giga(g.achieved_bytes_per_second)}};
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
           {"precision", t.precision},
           {"loss", t.loss},
           {"trainable_params", t.trainable_params},
           {"time", t.time},
           {"forward_s", measured ? json_number(t.forward_seconds) : Json(nullptr)},
           {"backward_s", measured ? json_number(t.backward_seconds) : Json(nullptr)},
           {"optimizer_s", measured ? json_number(t.optimizer_seconds) : Json(nullptr)},
           {"peak_bytes", t.peak_bytes},
           {"memory_method", t.memory_method}};
}

// ---- verify

void to_json(Json& j, const OutputCheck& c) {
  j = {{"data_set", c.data_set}, {"index", c.index}, {"name", c.name}};
  if (!c.problem.empty()) j["problem"] = c.problem;
  j["exact"] = c.exact;
  j["elements"] = c.elements;
  j["outside"] = c.outside;
  j["max_abs_diff"] = json_number(c.max_abs_diff);
  j["max_rel_diff"] = json_optional(c.max_rel_diff);
  j["norm_rel_err"] = json_number(c.norm_rel_err);
  if (c.exact) j["decision_flips"] = c.decision_flips;
  if (!c.judged) return;
  j["sensitivity"] = json_optional(c.sensitivity);
  if (c.quant_step) {
    j["quantisation_step"] = *c.quant_step;
    j["one_step_off"] = c.one_step_off;
  }
  if (c.exact) j["flips_reproduced"] = c.flips_reproduced;
  j["explained"] = c.explained;
  j["why"] = c.why;
}

void to_json(Json& j, const VerifyRecord& r) {
  j = {{"kind", "verify"}, {"schema_version", "1.0.0"}, {"case", r.case_dir}, {"verdict", r.verdict},
       {"exit_code", r.exit_code}};
  if (!r.error.empty()) j["error"] = r.error;
  if (!r.unsupported.empty()) j["unsupported"] = r.unsupported;
  if (r.mode.empty()) return;
  j["criterion"] = {{"mode", r.mode},
                    {"rtol", r.rtol},
                    {"atol", r.atol},
                    {"tolerance_source", r.tolerance_source},
                    {"sensitivity_factor", kSensitivityFactor}};
  j["notices"] = r.notices;
  j["reruns"] = r.reruns;
  j["quantised"] = r.quantised;
  j["outside"] = r.outside;
  j["explained"] = r.explained;
  j["outputs"] = r.outputs;
}

}  // namespace modelstat

// Fit report, JSON (docs/FIT.md, "JSON"). Formats only.
#include "analyzer/measurements/record_json.hpp"
#include "tools/writers/fit_writers.hpp"

namespace modelstat::report {

namespace {

template <typename T>
Json optional_value(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

class FitJsonWriter : public FitWriter {
 public:
  void write(const FitReport& r, const ReportOptions&, std::ostream& out) const override {
    Json j;
    j["schema_version"] = kFitJsonSchemaVersion;
    j["model"] = r.model_path;
    j["batch"] = r.batch;
    j["mode"] = r.train ? "train" : "inference";
    j["optimizer"] = r.train ? Json(name_of(r.optimizer)) : Json(nullptr);
    j["budgets"] = {{"memory_bytes", optional_value(r.memory_budget_bytes)},
                    {"latency_seconds", optional_value(r.latency_budget_seconds)}};
    j["verdict"] = {{"fits_memory", optional_value(r.fits_memory)},
                    {"meets_latency", optional_value(r.meets_latency)},
                    {"within_budgets", r.within_budgets()}};
    const DeviceCeilings& c = r.ceilings;
    // The ceilings' own keys (to_json, docs/ceilings.md), the ones a forecast
    // uses, with the compute roof it chose.
    const Json ceilings = c;
    Json& used = j["ceilings"];
    for (const char* key : {"device_kind", "device_name", "source", "threads", "date"}) used[key] = ceilings.at(key);
    used["compute_dtype"] = r.compute_dtype;
    used["peak_flops_per_second"] = r.compute_peak_flops_per_second;
    for (const char* key : {"memory_bandwidth_bytes_per_second", "op_overhead_seconds",
                            "fresh_allocation_threshold_bytes", "fresh_allocation_seconds_per_byte"})
      used[key] = ceilings.at(key);

    const MemoryForecast& m = r.memory;
    j["memory"] = {{"total_bytes", m.total_bytes},
                   {"weights_bytes", m.weights_bytes},
                   {"trainable_params", m.trainable_params},
                   {"gradient_bytes", m.gradient_bytes},
                   {"gradient_bytes_at_peak", m.gradient_bytes_at_peak},
                   {"optimizer_state_bytes", m.optimizer_state_bytes},
                   {"saved_activation_bytes", m.saved_activation_bytes},
                   {"activation_peak_bytes", m.activation_peak_bytes},
                   {"activation_sharing", m.activation_sharing},
                   {"workspace_bytes", m.workspace_bytes},
                   {"peak_node", m.peak_node},
                   {"peak_phase", m.peak_phase},
                   {"largest_workspace_bytes", m.largest_workspace_bytes},
                   {"largest_workspace_node", m.largest_workspace_node},
                   {"lower_bound", m.lower_bound}};
    if (r.train) {
      // Schema 1.4: the training setup and the model-state breakdown (docs/FIT.md).
      j["memory"]["training"] = {
          {"precision", m.precision},
          {"precision_layout", m.precision_layout},
          {"checkpointing", m.checkpointing},
          {"recomputed_regions", m.recomputed_regions},
          {"zero_stage", m.zero_stage >= 0 ? Json(m.zero_stage) : Json(nullptr)},
          {"shards", m.shards},
          {"low_precision_weight_bytes", m.low_precision_weight_bytes},
          {"low_precision_weight_bytes_at_peak", m.low_precision_weight_bytes_at_peak},
          {"master_weight_bytes", m.master_weight_bytes},
          {"gathered_parameter_bytes", m.gathered_parameter_bytes},
          {"divided_by_shards", m.divided_by_shards},
          {"basis", m.basis.empty() ? Json(nullptr) : Json(m.basis)},
          {"deepspeed_model_states_bytes", optional_value(m.deepspeed_model_states_bytes)},
          {"deepspeed_estimator", m.deepspeed_estimator.empty() ? Json(nullptr) : Json(m.deepspeed_estimator)}};
    }
    const LatencyForecast& l = r.latency;
    j["latency"] = {{"total_seconds", l.total_seconds},
                    {"forward_seconds", l.forward_seconds},
                    {"backward_seconds", l.backward_seconds},
                    {"optimizer_seconds", l.optimizer_seconds},
                    {"optimizer_fresh_bytes", l.optimizer_fresh_bytes}};
    // Schema 1.5: fit --context (null otherwise).
    if (r.decoder) {
      const DecoderForecast& d = *r.decoder;
      j["decoder"] = {{"context", d.context},
                      {"prompt", d.prompt},
                      {"batch", d.batch},
                      {"bindings", d.bindings},
                      {"prefill_seconds", d.prefill_seconds},
                      {"decode_seconds", d.decode_seconds},
                      {"tokens_per_second", d.tokens_per_second},
                      {"weights_bytes", d.weights_bytes},
                      {"kv_cache_bytes", d.kv_cache_bytes},
                      {"kv_bytes_per_token", d.kv_bytes_per_token},
                      {"prefill_memory_bytes", d.prefill_memory_bytes},
                      {"decode_memory_bytes", d.decode_memory_bytes},
                      {"token_budget_seconds", optional_value(d.token_budget_seconds)},
                      {"meets_token_budget", optional_value(d.meets_token_budget)}};
    } else {
      j["decoder"] = nullptr;
    }
    const BatchSearch& s = r.batch_search;
    j["batch_search"] = {{"searched", s.searched},
                         {"method", "doubling then binary search, re-analysing the model per batch"},
                         {"analyses", s.analyses},
                         {"largest_fitting_memory", optional_value(s.largest_fitting_memory)},
                         {"largest_meeting_latency", optional_value(s.largest_meeting_latency)},
                         {"note", s.note}};
    Json nodes = Json::array();
    for (const NodeForecast& n : r.nodes)
      nodes.push_back({{"index", n.index},
                       {"name", n.name},
                       {"op_type", n.op_type},
                       {"contraction", n.contraction},
                       {"equivalent_gemm_n", n.equivalent_gemm_n},
                       {"compute_flops_per_second", n.compute_flops_per_second},
                       {"compute_seconds", n.compute_seconds},
                       {"memory_seconds", n.memory_seconds},
                       {"scratch_seconds", n.scratch_seconds},
                       {"overhead_seconds", n.overhead_seconds},
                       {"op_cost", n.op_cost.empty() ? Json(nullptr) : Json(n.op_cost)},
                       {"kernel_seconds", n.kernel_seconds},
                       {"fresh_bytes", n.fresh_bytes},
                       {"fresh_seconds", n.fresh_seconds},
                       {"backward_fresh_bytes", n.backward_fresh_bytes},
                       {"forward_seconds", n.forward_seconds},
                       {"backward_seconds", n.backward_seconds},
                       {"workspace_bytes", n.workspace_bytes},
                       {"bound", bound_name(n.bound)}});
    j["nodes"] = std::move(nodes);
    j["notices"] = r.notices;
    out << j.dump(2) << "\n";
  }
};

}  // namespace

std::unique_ptr<FitWriter> make_fit_json_writer() { return std::make_unique<FitJsonWriter>(); }

}  // namespace modelstat::report

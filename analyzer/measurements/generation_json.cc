#include "analyzer/measurements/generation_json.hpp"

namespace modelstat {

void to_json(Json& j, const ContextPoint& p) {
  j = Json::object();
  j["context"] = p.context;
  j["median_s"] = json_number(p.median_seconds);
}

void to_json(Json& j, const TokenRate& r) {
  j = Json::object();
  j["mean"] = json_number(r.mean);
  j["stddev"] = json_number(r.stddev);
  Json samples = Json::array();
  for (double v : r.samples) samples.push_back(json_number(v));
  j["samples"] = std::move(samples);
}

void to_json(Json& j, const Slo& s) {
  j = Json::object();
  j["name"] = s.name;
  j["source"] = s.source;
  j["ttft_limit_s"] = json_optional(s.ttft_seconds);
  j["tpot_limit_s"] = json_optional(s.tpot_seconds);
}

void to_json(Json& j, const SloVerdict& v) {
  j = Json::object();
  j["metric"] = v.metric;
  j["limit_s"] = json_number(v.limit_seconds);
  j["measured_p99_s"] = json_number(v.measured_seconds);
  j["met"] = v.met;
}

Json generation_kv_cache_json(const KvCache& c) {
  Json j = c;
  j["layout"] = c.layout;
  j["max_context"] = c.max_context > 0 ? Json(c.max_context) : Json(nullptr);
  j["max_context_source"] = c.max_context_source.empty() ? Json(nullptr) : Json(c.max_context_source);
  return j;
}

}  // namespace modelstat

// The JSON form of the generation records (include/modelstat/generation.hpp),
// docs/generation.md: one to_json per record, as record_json.hpp does for the
// profile's. Written only (nothing reads a generation document back yet).
#pragma once

#include "analyzer/measurements/record_json.hpp"
#include "modelstat/generation.hpp"

namespace modelstat {

void to_json(Json& j, const ContextPoint& p);
void to_json(Json& j, const TokenRate& r);
void to_json(Json& j, const Slo& s);
void to_json(Json& j, const SloVerdict& v);
// The cache as the generation fed it: record_json's KvCache keys, plus its
// layout and the model's maximum context.
Json generation_kv_cache_json(const KvCache& c);

}  // namespace modelstat

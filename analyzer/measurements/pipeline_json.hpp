// The JSON form of the pipeline records (include/modelstat/pipeline.hpp),
// docs/pipeline.md: one to_json per record, as record_json.hpp does for the
// profile's. Written only (nothing reads a pipeline document back yet).
#pragma once

#include "analyzer/measurements/record_json.hpp"
#include "modelstat/pipeline.hpp"

namespace modelstat {

void to_json(Json& j, const StageInputSource& s);
void to_json(Json& j, const PipelineStage& s);
void to_json(Json& j, const StageTiming& s);
void to_json(Json& j, const PathTiming& p);
void to_json(Json& j, const TimelineSpan& s);
void to_json(Json& j, const InFlightResult& r);
void to_json(Json& j, const StageLayers& l);

}  // namespace modelstat

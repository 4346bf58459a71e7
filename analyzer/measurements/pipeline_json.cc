#include "analyzer/measurements/pipeline_json.hpp"

namespace modelstat {

void to_json(Json& j, const StageInputSource& s) {
  j = Json::object();
  j["input"] = s.input;
  if (s.from_stage < 0) {
    j["from_stage"] = nullptr;  // its own random input (fixed seed)
    return;
  }
  j["from_stage"] = s.from_stage;
  j["from_output"] = s.output_name;
}

void to_json(Json& j, const PipelineStage& s) {
  j = Json::object();
  j["name"] = s.name;
  j["kind"] = stage_kind_name(s.kind);
  j["device"] = s.device;
  j["clock"] = s.on_host() ? "host" : "device";
  if (s.kind == StageKind::HostBusy) {
    j["busy_s"] = s.busy_seconds;
    return;
  }
  j["model"] = s.model;
  j["inputs"] = s.inputs;
  Json outputs = Json::array();
  for (size_t i = 0; i < s.output_names.size(); ++i)
    outputs.push_back({{"name", s.output_names[i]}, {"shape", i < s.output_shapes.size() ? s.output_shapes[i] : ""}});
  j["outputs"] = outputs;
}

void to_json(Json& j, const StageTiming& s) {
  j = Json::object();
  j["stage"] = s.stage;
  j["clock"] = s.clock;
  j["time"] = s.time;
}

void to_json(Json& j, const PathTiming& p) {
  j = Json::object();
  j["method"] = p.method;
  j["description"] = p.description;
  j["stages"] = p.stages;
  j["stage_sum"] = p.stage_sum;
  j["end_to_end"] = p.end_to_end;
}

void to_json(Json& j, const TimelineSpan& s) {
  j = Json::object();
  j["stage"] = s.stage;
  j["iteration"] = s.iteration;
  j["start_s"] = json_number(s.start);
  j["end_s"] = json_number(s.end);
}

void to_json(Json& j, const InFlightResult& r) {
  j = Json::object();
  j["frames_in_flight"] = r.frames_in_flight;
  j["mechanism"] = r.mechanism;
  j["threads"] = r.threads;
  j["intra_op_threads_per_stage"] = r.intra_op_threads_per_stage;
  j["throughput_per_s"] = json_number(r.throughput);
  j["measured_s"] = json_number(r.measured_seconds);
  j["frames"] = r.frames;
  j["latency"] = r.latency;
  j["stages"] = r.stages;
  j["bottleneck_stage"] = r.bottleneck_stage < 0 ? Json(nullptr) : Json(r.bottleneck_stage);
  j["bottleneck_bound_per_s"] = json_number(r.bottleneck_bound);
  j["timeline"] = r.timeline;
}

void to_json(Json& j, const StageLayers& l) {
  j = Json::object();
  j["stage"] = l.stage;
  j["whole"] = l.whole;
  j["layer_sum"] = l.layer_sum;
  j["layers"] = l.layers;
}

}  // namespace modelstat

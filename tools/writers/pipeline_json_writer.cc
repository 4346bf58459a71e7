// The pipeline JSON document (docs/pipeline.md): every record's to_json
// (analyzer/measurements/pipeline_json.hpp), raw samples included, written
// through JsonStream (sample arrays packed).
#include "analyzer/measurements/json_document.hpp"
#include "analyzer/measurements/pipeline_json.hpp"
#include "tools/writers/json_stream.hpp"
#include "tools/writers/pipeline_writers.hpp"

namespace modelstat {

const char* const kPipelineJsonSchemaVersion = "1.0.0";

namespace pipeline_detail {
namespace {

class JsonWriter final : public PipelineWriter {
 public:
  void write(const PipelineResult& r, const ReportOptions&, std::ostream& out) const override {
    Json doc = document_head(kPipelineJsonSchemaVersion, "pipeline");
    doc["percentile_method"] = kPercentileMethod;
    doc["source"] = r.source;
    doc["context"] = r.context;
    doc["stages"] = r.stages;
    doc["end_to_end"] = r.end_to_end;
    doc["staged"] = r.staged;
    doc["sum_vs_end_to_end"] = json_optional(sum_vs_end_to_end(r.staged, r.end_to_end));
    doc["timeline"] = r.timeline;
    doc["timer_comparison"] =
        r.comparison.empty() ? Json(nullptr) : Json{{"note", r.comparison_note}, {"methods", r.comparison}};
    doc["in_flight"] = r.in_flight ? Json(*r.in_flight) : Json(nullptr);
    doc["layers"] = r.layers;
    doc["notices"] = r.notices;
    report_detail::JsonStream json(out);
    json.value(doc);
    out << '\n';
  }
};

}  // namespace

std::unique_ptr<PipelineWriter> make_json_writer() { return std::make_unique<JsonWriter>(); }

}  // namespace pipeline_detail
}  // namespace modelstat

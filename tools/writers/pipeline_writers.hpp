// The writers of `modelstat pipeline` (docs/pipeline.md): table, JSON, CSV,
// Markdown, HTML (a timeline, one track per stage) and Chrome trace (one
// track per stage). They format the PipelineResult; every time and every
// statistic in it comes from profiler/pipeline.cc. Files:
//   pipeline_text_writers.cc      table, Markdown, CSV (one row model); make_pipeline_writer
//   pipeline_json_writer.cc       JSON
//   pipeline_timeline_writers.cc  HTML and trace (one timeline model)
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "modelstat/pipeline.hpp"
#include "tools/writers/writers.hpp"

namespace modelstat {

// Version of the pipeline JSON document (docs/pipeline.md). Major for
// incompatible changes, minor for added fields.
extern const char* const kPipelineJsonSchemaVersion;

using PipelineWriter = RecordWriter<PipelineResult>;

// "table", "json", "csv", "md", "html", "trace". Throws Error(Usage) for another name.
std::unique_ptr<PipelineWriter> make_pipeline_writer(const std::string& format);

namespace pipeline_detail {

// "model (cpu)", "host: busy 2.00 ms", "host model (cpu)".
std::string stage_label(const PipelineStage& stage);
// (sum of stage medians - end-to-end median) / end-to-end median; nullopt without samples.
std::optional<double> sum_vs_end_to_end(const PathTiming& staged, const TimingSummary& end_to_end);

std::unique_ptr<PipelineWriter> make_json_writer();
std::unique_ptr<PipelineWriter> make_html_writer();
std::unique_ptr<PipelineWriter> make_trace_writer();

}  // namespace pipeline_detail
}  // namespace modelstat

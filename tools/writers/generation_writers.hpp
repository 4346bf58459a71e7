// The generation writers (`profile --generate`, `report --generate`): one
// record, GenerationResult (modelstat/generation.hpp), in table, JSON, CSV,
// Markdown and HTML (docs/generation.md). Table and Markdown render one
// document (generation_document) through the profile report's renderers;
// JSON, CSV and HTML have a file each. They only format.
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "modelstat/generation.hpp"
#include "tools/writers/format_util.hpp"

namespace modelstat {

// options.top: the nodes listed per phase by decode time (0: none);
// options.show_all_nodes false: no per-node table (table, Markdown).
using GenerationWriter = RecordWriter<GenerationResult>;

// "table", "json", "csv", "md", "html". Throws Error(Usage) for another name.
std::unique_ptr<GenerationWriter> make_generation_writer(const std::string& format);

namespace report_detail {
// The human report as data (table and Markdown).
Document generation_document(const GenerationResult& result, const ReportOptions& options);
// "12.3 µs per 1k tokens": a decode step's growth with its context.
std::string slope_text(double seconds_per_token);
// "pp128", "tg127": llama-bench's names of the prompt and generation rows.
std::string prompt_test_name(const GenerationResult& r);
std::string generation_test_name(const GenerationResult& r);

std::unique_ptr<GenerationWriter> make_generation_json_writer();
std::unique_ptr<GenerationWriter> make_generation_csv_writer();
std::unique_ptr<GenerationWriter> make_generation_html_writer();
}  // namespace report_detail

}  // namespace modelstat

// The writers' interface: one abstract writer per record (RecordWriter),
// each with one implementation per output format in this folder
// (tools/writers/README.md). Writers only format; every
// figure comes from the library that computed it. Not part of the public API
// in include/modelstat: the command line (tools/) is their only client.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "tools/writers/units.hpp"
#include "modelstat/analysis.hpp"
#include "modelstat/compare.hpp"
#include "modelstat/fit.hpp"
#include "modelstat/joined.hpp"
#include "modelstat/profile.hpp"
#include "modelstat/verification.hpp"

namespace modelstat {

struct ReportOptions {
  int top = 10;                // hotspots listed (0: none)
  bool show_all_nodes = true;  // per-layer rows in table/markdown
  bool color = false;          // ANSI colour in the table (only on a TTY)
};

// The one writer interface: a record written in one format. Every command's
// output goes through a RecordWriter of its record (AnalysisResult,
// ProfileResult, JoinedReport, Comparison, FitReport, VerifyRecord, and in
// their own headers PipelineResult and GenerationResult).
template <class Record>
class RecordWriter {
 public:
  virtual ~RecordWriter() = default;
  virtual void write(const Record& record, const ReportOptions& options, std::ostream& out) const = 0;
  // The record with the default options (fit and verify take none).
  void write(const Record& record, std::ostream& out) const { write(record, ReportOptions(), out); }
};

// A format a record is written in: its name (-f NAME) and its writer.
template <class Record>
struct WriterFormat {
  const char* name;
  std::unique_ptr<RecordWriter<Record>> (*make)();
};

// Error(Usage): "unknown WHAT format 'xml' (table, json, csv, md)".
[[noreturn]] void throw_unknown_format(const std::string& what, const std::string& format,
                                       const std::vector<std::string>& names);

// The writer of `format` among `formats`; throw_unknown_format otherwise.
template <class Record>
std::unique_ptr<RecordWriter<Record>> pick_writer(const std::string& what, const std::string& format,
                                                  const std::vector<WriterFormat<Record>>& formats) {
  std::vector<std::string> names;
  for (const WriterFormat<Record>& f : formats) {
    if (format == f.name) return f.make();
    names.push_back(f.name);
  }
  throw_unknown_format(what, format, names);
}

// A writer class of a record's format as a factory: writer_of<Record, TableWriter>.
template <class Record, class Writer>
std::unique_ptr<RecordWriter<Record>> writer_of() {
  return std::make_unique<Writer>();
}

// Version of the JSON document written by the analysis JSON writer (docs/json-schema.md).
// Bump the major on any incompatible change.
extern const char* const kAnalysisJsonSchemaVersion;
// Version of the JSON document written by the profile JSON writer
// (docs/profile-json.md, docs/profile.schema.json). Bump the major on any
// incompatible change.
extern const char* const kProfileJsonSchemaVersion;

// options.top: hotspots listed (0: none); options.show_all_nodes: the per-node
// rows in table/md (JSON and CSV always hold every row); options.color: ANSI
// colour in the table.
using AnalysisWriter = RecordWriter<AnalysisResult>;
using ProfileWriter = RecordWriter<ProfileResult>;
using JoinedWriter = RecordWriter<JoinedReport>;
// options.top: node rows shown in table and Markdown (ranked_nodes order; 0: none).
using CompareWriter = RecordWriter<Comparison>;
using FitWriter = RecordWriter<FitReport>;
using VerifyWriter = RecordWriter<VerifyRecord>;

// The writer of each record by format name; Error(Usage) for an unknown name.
// analysis, profile: "table", "json", "csv", "md".
std::unique_ptr<AnalysisWriter> make_analysis_writer(const std::string& format);
std::unique_ptr<ProfileWriter> make_profile_writer(const std::string& format);
// "table", "json", "csv", "md", "html", "trace" (Chrome trace JSON of one
// instrumented iteration).
std::unique_ptr<JoinedWriter> make_joined_writer(const std::string& format);
// "table", "json", "md".
std::unique_ptr<CompareWriter> make_compare_writer(const std::string& format);
// "table", "json" (docs/FIT.md).
std::unique_ptr<FitWriter> make_fit_writer(const std::string& format);
// "table", "json".
std::unique_ptr<VerifyWriter> make_verify_writer(const std::string& format);

// Human units (1.81 G, 44.6 MiB, 1.23 ms, ...): tools/writers/units.hpp.

}  // namespace modelstat

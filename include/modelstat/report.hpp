// Report writers. They format an AnalysisResult; they never compute a cost.
// One writer per format behind one interface (tools/report/*_writer.cc).
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "modelstat/analysis.hpp"

namespace modelstat {

// Version of the JSON document written by JsonWriter (docs/json-schema.md).
// Bump the major on any incompatible change.
extern const char* const kAnalysisJsonSchemaVersion;

struct ReportOptions {
  int top = 10;                // hotspots listed (0: none)
  bool show_all_nodes = true;  // per-layer rows in table/markdown
  bool color = false;          // ANSI colour in the table (only on a TTY)
};

class AnalysisWriter {
 public:
  virtual ~AnalysisWriter() = default;
  virtual void write(const AnalysisResult& result, const ReportOptions& options,
                     std::ostream& out) const = 0;
};

// "table", "json", "csv", "md". Throws Error(Usage) for an unknown name.
std::unique_ptr<AnalysisWriter> make_analysis_writer(const std::string& format);

// Human units: 1.81 G, 11.7 M, 4.2 K; bytes as 44.6 MiB.
std::string human_count(int64_t n);
std::string human_bytes(int64_t n);

}  // namespace modelstat

// The writers' interface: one abstract writer per record (analysis, profile,
// joined report, comparison, fit), each with one implementation per output
// format in this folder (tools/writers/README.md). Writers only format; every
// figure comes from the library that computed it. Not part of the public API
// in include/modelstat: the command line (tools/) is their only client.
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "tools/writers/units.hpp"
#include "modelstat/analysis.hpp"
#include "modelstat/compare.hpp"
#include "modelstat/fit.hpp"
#include "modelstat/joined.hpp"
#include "modelstat/profile.hpp"
#include "modelstat/verification.hpp"

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

// Human units (1.81 G, 44.6 MiB, 1.23 ms, ...): tools/writers/units.hpp.

// Version of the JSON document written by the profile JSON writer
// (docs/profile-json.md, docs/profile.schema.json). Bump the major on any
// incompatible change.
extern const char* const kProfileJsonSchemaVersion;

class ProfileWriter {
 public:
  virtual ~ProfileWriter() = default;
  // options.top: hotspot layers listed by time (0: none); options.show_all_nodes:
  // the per-layer table in table/md (JSON and CSV always hold every layer);
  // options.color: ANSI colour in the table.
  virtual void write(const ProfileResult& result, const ReportOptions& options, std::ostream& out) const = 0;
};

// "table", "json", "csv", "md". Throws Error(Usage) for an unknown name.
std::unique_ptr<ProfileWriter> make_profile_writer(const std::string& format);

class JoinedWriter {
 public:
  virtual ~JoinedWriter() = default;
  virtual void write(const JoinedReport& report, const ReportOptions& options, std::ostream& out) const = 0;
};

// "table", "json", "csv", "md", "html", "trace" (Chrome trace JSON of one
// instrumented iteration). Throws Error(Usage) for an unknown name.
std::unique_ptr<JoinedWriter> make_joined_writer(const std::string& format);

class CompareWriter {
 public:
  virtual ~CompareWriter() = default;
  // options.top: node rows shown in table and Markdown (ranked_nodes order; 0: none).
  virtual void write(const Comparison& comparison, const ReportOptions& options, std::ostream& out) const = 0;
};

// "table", "json", "md". Throws Error(Usage) for an unknown name.
std::unique_ptr<CompareWriter> make_compare_writer(const std::string& format);

class FitWriter {
 public:
  virtual ~FitWriter() = default;
  virtual void write(const FitReport& report, std::ostream& out) const = 0;
};

// "table" or "json" (docs/FIT.md). Throws Error(Usage) for another name.
std::unique_ptr<FitWriter> make_fit_writer(const std::string& format);

class VerifyWriter {
 public:
  virtual ~VerifyWriter() = default;
  virtual void write(const VerifyRecord& record, std::ostream& out) const = 0;
};

// "table", "json". Throws Error(Usage) for an unknown name.
std::unique_ptr<VerifyWriter> make_verify_writer(const std::string& format);

}  // namespace modelstat

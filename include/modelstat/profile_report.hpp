// Profile report writers. They format a ProfileResult (modelstat/profile.hpp);
// they never measure or compute a statistic (the profiler did). One writer per
// format behind one interface (tools/report/profile_*_writer.cc). The writers
// live in the report library, which does not link LibTorch.
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "modelstat/profile.hpp"
#include "modelstat/report.hpp"

namespace modelstat {

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

}  // namespace modelstat

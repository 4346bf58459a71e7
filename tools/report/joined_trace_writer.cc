// Joined report, trace format. (Being written.)
#include "modelstat/error.hpp"
#include "tools/report/joined_writers.hpp"

namespace modelstat::report {

namespace {

class JoinedTraceWriter : public JoinedWriter {
 public:
  void write(const JoinedReport&, const ReportOptions&, std::ostream&) const override {
    throw Error(ErrorKind::Runtime, "the trace report format is not implemented yet");
  }
};

}  // namespace

std::unique_ptr<JoinedWriter> make_joined_trace_writer() { return std::make_unique<JoinedTraceWriter>(); }

}  // namespace modelstat::report

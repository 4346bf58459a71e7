// Joined report, json format. (Being written.)
#include "modelstat/error.hpp"
#include "tools/report/joined_writers.hpp"

namespace modelstat::report {

namespace {

class JoinedJsonWriter : public JoinedWriter {
 public:
  void write(const JoinedReport&, const ReportOptions&, std::ostream&) const override {
    throw Error(ErrorKind::Runtime, "the json report format is not implemented yet");
  }
};

}  // namespace

std::unique_ptr<JoinedWriter> make_joined_json_writer() { return std::make_unique<JoinedJsonWriter>(); }

}  // namespace modelstat::report

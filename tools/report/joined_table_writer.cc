// Joined report, table format. (Being written.)
#include "modelstat/error.hpp"
#include "tools/report/joined_writers.hpp"

namespace modelstat::report {

namespace {

class JoinedTableWriter : public JoinedWriter {
 public:
  void write(const JoinedReport&, const ReportOptions&, std::ostream&) const override {
    throw Error(ErrorKind::Runtime, "the table report format is not implemented yet");
  }
};

}  // namespace

std::unique_ptr<JoinedWriter> make_joined_table_writer() { return std::make_unique<JoinedTableWriter>(); }

}  // namespace modelstat::report

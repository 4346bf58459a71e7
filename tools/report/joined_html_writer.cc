// Joined report, html format. (Being written.)
#include "modelstat/error.hpp"
#include "tools/report/joined_writers.hpp"

namespace modelstat::report {

namespace {

class JoinedHtmlWriter : public JoinedWriter {
 public:
  void write(const JoinedReport&, const ReportOptions&, std::ostream&) const override {
    throw Error(ErrorKind::Runtime, "the html report format is not implemented yet");
  }
};

}  // namespace

std::unique_ptr<JoinedWriter> make_joined_html_writer() { return std::make_unique<JoinedHtmlWriter>(); }

}  // namespace modelstat::report

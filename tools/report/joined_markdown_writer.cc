// Joined report, markdown format. (Being written.)
#include "modelstat/error.hpp"
#include "tools/report/joined_writers.hpp"

namespace modelstat::report {

namespace {

class JoinedMarkdownWriter : public JoinedWriter {
 public:
  void write(const JoinedReport&, const ReportOptions&, std::ostream&) const override {
    throw Error(ErrorKind::Runtime, "the markdown report format is not implemented yet");
  }
};

}  // namespace

std::unique_ptr<JoinedWriter> make_joined_markdown_writer() { return std::make_unique<JoinedMarkdownWriter>(); }

}  // namespace modelstat::report

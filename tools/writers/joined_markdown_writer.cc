// Joined report, GitHub-flavoured Markdown: the same content as the terminal
// table (joined_document()), for pasting into an issue or a pull request.
#include "tools/writers/joined_writers.hpp"

namespace modelstat::report {

namespace {

class JoinedMarkdownWriter final : public JoinedWriter {
 public:
  void write(const JoinedReport& report, const ReportOptions& options, std::ostream& out) const override {
    report_detail::print_markdown_document(joined_document(report, options), out);
  }
};

}  // namespace

std::unique_ptr<JoinedWriter> make_joined_markdown_writer() { return std::make_unique<JoinedMarkdownWriter>(); }

}  // namespace modelstat::report

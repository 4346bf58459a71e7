// Markdown comparison: compare_document() as GitHub-flavoured Markdown, for a
// pull-request comment from a CI job.
#include <ostream>

#include "tools/writers/compare_writers.hpp"

namespace modelstat::report {

namespace {

class CompareMarkdownWriter final : public CompareWriter {
 public:
  void write(const Comparison& c, const ReportOptions& options, std::ostream& out) const override {
    report_detail::print_markdown_document(compare_document(c, options), out);
  }
};

}  // namespace

std::unique_ptr<CompareWriter> make_compare_markdown_writer() {
  return std::make_unique<CompareMarkdownWriter>();
}

}  // namespace modelstat::report

// Terminal comparison: compare_document() as aligned text, regressions highlighted.
#include <ostream>

#include "tools/writers/compare_writers.hpp"

namespace modelstat::report {

namespace {

class CompareTableWriter final : public CompareWriter {
 public:
  void write(const Comparison& c, const ReportOptions& options, std::ostream& out) const override {
    report_detail::print_text_document(compare_document(c, options), report_detail::Style(options.color),
                                       out);
  }
};

}  // namespace

std::unique_ptr<CompareWriter> make_compare_table_writer() {
  return std::make_unique<CompareTableWriter>();
}

}  // namespace modelstat::report

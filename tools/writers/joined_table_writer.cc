// Joined report, terminal table: joined_document() rendered as aligned text in
// human units (the profile report's renderer), optional ANSI colour.
#include "tools/writers/joined_writers.hpp"

namespace modelstat::report {

namespace {

class JoinedTableWriter final : public JoinedWriter {
 public:
  void write(const JoinedReport& report, const ReportOptions& options, std::ostream& out) const override {
    report_detail::print_text_document(joined_document(report, options), report_detail::Style(options.color), out);
  }
};

}  // namespace

std::unique_ptr<JoinedWriter> make_joined_table_writer() { return std::make_unique<JoinedTableWriter>(); }

}  // namespace modelstat::report

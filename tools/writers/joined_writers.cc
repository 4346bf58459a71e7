// make_joined_writer: format name -> writer.
#include "tools/writers/joined_writers.hpp"

#include "modelstat/error.hpp"

namespace modelstat {

std::unique_ptr<JoinedWriter> make_joined_writer(const std::string& format) {
  using namespace report;
  return pick_writer<JoinedReport>(
      "report", format,
      {{"table", report_detail::document_table_writer<JoinedReport, joined_document>}, {"json", make_joined_json_writer},
       {"csv", make_joined_csv_writer}, {"md", report_detail::document_markdown_writer<JoinedReport, joined_document>},
       {"html", make_joined_html_writer}, {"trace", make_joined_trace_writer}});
}

}  // namespace modelstat

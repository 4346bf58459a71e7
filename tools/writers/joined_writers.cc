// make_joined_writer: format name -> writer.
#include "tools/writers/joined_writers.hpp"

#include "modelstat/error.hpp"

namespace modelstat {

std::unique_ptr<JoinedWriter> make_joined_writer(const std::string& format) {
  using namespace report;
  return pick_writer<JoinedReport>(
      "report", format,
      {{"table", make_joined_table_writer}, {"json", make_joined_json_writer}, {"csv", make_joined_csv_writer},
       {"md", make_joined_markdown_writer}, {"html", make_joined_html_writer}, {"trace", make_joined_trace_writer}});
}

}  // namespace modelstat

// make_joined_writer: format name -> writer.
#include "tools/writers/joined_writers.hpp"

#include "modelstat/error.hpp"

namespace modelstat {

std::unique_ptr<JoinedWriter> make_joined_writer(const std::string& format) {
  if (format == "table") return report::make_joined_table_writer();
  if (format == "json") return report::make_joined_json_writer();
  if (format == "csv") return report::make_joined_csv_writer();
  if (format == "md") return report::make_joined_markdown_writer();
  if (format == "html") return report::make_joined_html_writer();
  if (format == "trace") return report::make_joined_trace_writer();
  throw_usage("unknown report format '" + format + "' (table, json, csv, md, html, trace)");
}

}  // namespace modelstat

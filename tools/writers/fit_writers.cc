// make_fit_writer: format name -> writer.
#include "modelstat/error.hpp"
#include "tools/writers/fit_writers.hpp"

namespace modelstat {

std::unique_ptr<FitWriter> make_fit_writer(const std::string& format) {
  if (format == "table") return report::make_fit_table_writer();
  if (format == "json") return report::make_fit_json_writer();
  throw_usage("unknown fit format '" + format + "' (table, json)");
}

}  // namespace modelstat

// make_fit_writer: format name -> writer.
#include "modelstat/error.hpp"
#include "tools/writers/fit_writers.hpp"

namespace modelstat {

std::unique_ptr<FitWriter> make_fit_writer(const std::string& format) {
  return pick_writer<FitReport>("fit", format,
                                {{"table", report::make_fit_table_writer}, {"json", report::make_fit_json_writer}});
}

}  // namespace modelstat

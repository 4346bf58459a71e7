// The fit-report writers, one file each (tools/writers/fit_*_writer.cc), behind
// make_fit_writer (modelstat/fit.hpp). They only format a FitReport.
#pragma once

#include <memory>

#include "modelstat/fit.hpp"
#include "tools/writers/writers.hpp"

namespace modelstat::report {

std::unique_ptr<FitWriter> make_fit_table_writer();
std::unique_ptr<FitWriter> make_fit_json_writer();

}  // namespace modelstat::report

// `modelstat results compare`: two sides of a results database (two machines,
// two commits, two dates or two runs), cell by cell, with compare's
// significance test. The test is compare_runs (analyzer/measurements/compare.cc)
// applied to each pair of cells' raw samples; nothing here tests anything.
#pragma once

#include <string>

#include "analyzer/suite/results_db.hpp"
#include "modelstat/suite.hpp"

namespace modelstat::suite {

// "machine=vm-a" -> {machine, vm-a}. Error(Usage) for another key or no '='.
ResultSelector parse_selector(const std::string& text, const char* flag);

// The latest result of each cell on each side (within `common`), paired by
// cell (and by machine unless the sides are machines), compared.
ResultsComparison compare_results(ResultsDb& db, const ResultFilter& common, const ResultSelector& base,
                                  const ResultSelector& next, const CompareOptions& options);

}  // namespace modelstat::suite

// A set of timing samples as the TimingSummary every report prints
// (modelstat/profile.hpp): the profiler's passes and a suite's external
// runners (analyzer/suite) summarise samples with this one function.
#pragma once

#include <string>
#include <vector>

#include "modelstat/profile.hpp"

namespace modelstat {

// The statistics of `samples` (seconds, run order, kept raw in the summary)
// by stats::summarize, and why sampling stopped.
TimingSummary summarize_timing(const std::vector<double>& samples, const std::string& stop_reason);

}  // namespace modelstat

// The joined-report writers, one file each (tools/writers/joined_*_writer.cc),
// behind make_joined_writer (modelstat/joined.hpp). They only format; every
// figure comes from join_profile (analyzer/measurements/join.cc).
#pragma once

#include <cmath>
#include <memory>
#include <string>

#include "modelstat/joined.hpp"
#include "tools/writers/writers.hpp"
#include "tools/writers/format_util.hpp"

namespace modelstat::report {

std::unique_ptr<JoinedWriter> make_joined_json_writer();
std::unique_ptr<JoinedWriter> make_joined_csv_writer();
std::unique_ptr<JoinedWriter> make_joined_html_writer();
std::unique_ptr<JoinedWriter> make_joined_trace_writer();

// A node's figures that join_profile could not compute are empty optionals
// (JoinedNode): writers print "-" / null / an empty field for them ("unknown is
// not zero"). has_bound: the node has a place on the roofline.
inline bool has_bound(const JoinedNode& n) { return n.bound != Bound::None; }  // attainable, efficiency

// si_rate(5.12e13, "FLOP/s") = "51.2 TFLOP/s": units.hpp.
using modelstat::si_rate;

// "measured 2024-05-01 on host (16 threads)" or "datasheet: h100-sxm (not measured)".
std::string ceilings_source_text(const DeviceCeilings& c);

// The instrumented iteration the trace writer draws: the one whose layer sum
// (its per-node samples added up) is the median of all iterations' layer sums
// (the lower median for an even count; ties go to the earliest). count: the
// iterations every timed layer has a sample of. Throws Error(Usage) when no
// layer has samples.
struct TraceIteration {
  size_t index = 0, count = 0;
};
TraceIteration median_iteration(const ProfileResult& profile);

// The human report (table and Markdown) as data, like profile_document():
// header, ceilings, whole model, hotspots, per-node table (unless
// options.show_all_nodes is false), by op type, notices.
report_detail::Document joined_document(const JoinedReport& report, const ReportOptions& options);
// A node's efficiency as every writer prints it: "42.0%", "-" without a bound,
// "above roof" past 100% (a roof is wrong; the number stays in JSON and CSV).
std::string efficiency_text(const JoinedNode& n);
// fit's forecast over the measured median, "1.25x"; "-" when either is missing.
std::string forecast_ratio_text(const JoinedNode& n);

}  // namespace modelstat::report

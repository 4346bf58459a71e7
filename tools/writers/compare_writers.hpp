// The compare writers (JSON in compare_json_writer.cc; table and Markdown
// render compare_document), behind
// make_compare_writer (modelstat/compare.hpp). They only format a Comparison;
// every figure and verdict comes from compare_runs (analyzer/measurements/compare.cc).
#pragma once

#include <memory>

#include "analyzer/measurements/record_json.hpp"
#include "modelstat/compare.hpp"
#include "tools/writers/writers.hpp"
#include "tools/writers/format_util.hpp"

namespace modelstat::report {

std::unique_ptr<CompareWriter> make_compare_json_writer();

// The human comparison (table and Markdown) as data, rendered by
// print_text_document / print_markdown_document: warnings first, then the
// conditions, the whole model, the top options.top nodes in ranked order, the
// nodes found in one run only, notices, and the gate's outcome.
// One line for logs and the exit message: "regression beyond 5%: whole model +20.0% (1.00 s
// -> 1.20 s, p <0.0001, ratio CI 1.151-1.249)", or "no regression beyond 5%: ...".
std::string gate_summary(const Comparison& comparison);

// Pieces of the comparison's text and JSON, shared with `results compare`
// (results_compare_writers.cc): "<0.0001" / "0.031"; "1.151-1.249"; "REGRESSION",
// "improvement", "within 10%", "not significant", "no data"; "10%".
std::string p_text(double p);
std::string ci_text(const SampleDelta& d);
std::string verdict_text(const SampleDelta& d, const CompareOptions& o);
std::string threshold_text(double threshold);
// A SampleDelta's JSON members (docs/compare-json.md, "whole"), added to j.
void put_delta(Json& j, const SampleDelta& d);

report_detail::Document compare_document(const Comparison& comparison, const ReportOptions& options);

}  // namespace modelstat::report

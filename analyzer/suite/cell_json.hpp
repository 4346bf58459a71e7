// The JSON form of a cell's result (docs/suites.md, "The result file"): one
// to_json/from_json pair per record, as record_json.hpp does for the profile's
// records (whose TimingSummary and RunContext forms are reused here). The same
// document is the per-cell result file of `suite cell`, the `record` column of
// the results database and an element of `results -f json`.
#pragma once

#include <string>

#include "analyzer/measurements/record_json.hpp"
#include "modelstat/suite.hpp"

namespace modelstat::suite {

// "1.0.0": MAJOR changes when a reader of the old version could misread the
// new one, MINOR when fields are added (readers ignore fields they do not know).
extern const char* const kCellResultSchemaVersion;
extern const char* const kCellResultKind;  // "suite-cell"

void to_json(Json& j, const Cell& c);
void from_json(const Json& j, Cell& c);
void to_json(Json& j, const Machine& m);
void from_json(const Json& j, Machine& m);
void to_json(Json& j, const Environment& e);
void from_json(const Json& j, Environment& e);
void to_json(Json& j, const Measurement& m);
void from_json(const Json& j, Measurement& m);
void to_json(Json& j, const StaticTotals& t);
void from_json(const Json& j, StaticTotals& t);
void to_json(Json& j, const Forecast& f);
void from_json(const Json& j, Forecast& f);
void to_json(Json& j, const CellResult& r);  // the whole document, schema_version and kind first
void from_json(const Json& j, CellResult& r);

// The document as written to a result file (one line, compact: a million of
// them must stay small).
std::string cell_result_text(const CellResult& r);
// Reads a result document someone else wrote: Error(Input) naming `origin` and
// the field when it is not JSON, not a "suite-cell" document of major version
// 1, or a field is missing, of the wrong type or out of range.
CellResult read_cell_result(const std::string& text, const std::string& origin);

}  // namespace modelstat::suite

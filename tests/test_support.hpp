// Small builders for tests: single-node IR graphs with given input/output
// shapes, dtypes and attributes, and a shortcut that runs the registered cost
// rule on such a node.
//
//   Graph g = NodeBuilder("Conv")
//                 .input({1, 3, 224, 224})
//                 .weight({64, 3, 7, 7})
//                 .output({1, 64, 112, 112})
//                 .attr("strides", std::vector<int64_t>{2, 2})
//                 .build();
//
// A dim of -1 is unknown (kUnknownDim); unknown_rank_input() gives a tensor of
// unknown rank; omitted_input() an omitted optional input.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/cost/cost_rule.hpp"
#include "modelstat/ceilings.hpp"
#include "modelstat/error.hpp"
#include "modelstat/graph.hpp"
#include "modelstat/profile.hpp"

namespace modelstat::test {

constexpr int64_t kUnknownDim = -1;

// A Shape from dims; -1 entries are unknown dims.
Shape make_shape(const std::vector<int64_t>& dims);

class NodeBuilder {
 public:
  explicit NodeBuilder(std::string op_type, std::string domain = {});

  // A graph input (activation) with the given dims.
  NodeBuilder& input(const std::vector<int64_t>& dims, DType dtype = DType::Float);
  // An initializer (weight), optionally with small integer values (shape constants).
  NodeBuilder& weight(const std::vector<int64_t>& dims, DType dtype = DType::Float,
                      std::vector<int64_t> int_values = {});
  NodeBuilder& unknown_rank_input(DType dtype = DType::Float);
  NodeBuilder& omitted_input();
  NodeBuilder& output(const std::vector<int64_t>& dims, DType dtype = DType::Float);
  NodeBuilder& unknown_rank_output(DType dtype = DType::Float);
  NodeBuilder& omitted_output();
  NodeBuilder& attr(const std::string& key, AttrValue value);

  Graph build() const;

 private:
  int add_tensor(Shape shape, DType dtype, TensorRole role);

  Graph graph_;
  Node node_;
};

// Runs the rule registered for the graph's first node at `opset` (default
// domain). Fails the calling test (ADD_FAILURE) and returns an UnknownOp result
// when no rule is registered.
cost::RuleResult run_cost_rule(const Graph& graph, int64_t opset = 17);

// A node of an analysis as the writers and the join see it: float32 output,
// `status`, and its MACs, FLOPs and bytes (0 where not given).
NodeReport cost_node(int index, std::string name, std::string op, CostStatus status, int64_t macs = 0,
                     int64_t flops = 0, int64_t bytes_read = 0, int64_t bytes_written = 0);

// A subgraph node's row of a profile (ProfileResult::subgraph_layers) under the
// top-level node `index`: `time` per run, `calls` a run, per call time's
// median / calls.
LayerTiming subgraph_layer(int index, std::string name, std::string op, int depth, double calls,
                           TimingSummary time);

// Ceilings of a 4-thread "Test CPU": `bandwidth` bytes/s and an fp32 matmul
// peak of `peak` FLOP/s (no curve), from `source` ("measured", "datasheet: ...").
DeviceCeilings cpu_ceilings(double bandwidth, double peak, const std::string& source = "measured");
// A matmul curve of one point at n = 1024 (flat: every size prices at `rate`), e.g. an int8 curve.
MatmulCeiling flat_matmul_curve(const std::string& dtype, double rate);

// ProfileOptions for a short test run (timings are never asserted): one
// thread, one warm-up run, at least `min_iterations` timed runs, at most
// `max_seconds` of them, no per-layer pass.
ProfileOptions quick_profile_options(int min_iterations, double max_seconds);

// Writes, as `modelstat device` saves them, the ceilings of a one-thread test
// CPU: 100 GFLOP/s fp32 (reached at n = 1024), 20 GB/s, so the ridge is 5
// FLOP/B; 2 us per op. Returns `path`.
std::string write_test_cpu_ceilings(const std::string& path);

// ------------------------------------------------------------ JSON Schema

// A validator for the subset of JSON Schema (draft 2020-12) that
// docs/analysis.schema.json and docs/profile.schema.json use: type (string or
// array), enum, minimum, maximum, required, properties, additionalProperties
// (false or absent), items, and $ref to "#/$defs/NAME". A keyword it does not
// implement is an error, so a schema cannot silently grow constraints that
// nothing checks. Header-only: only the writer tests include nlohmann's DOM.
class SchemaValidator {
 public:
  // Errors as "$.path: what"; empty when value conforms.
  std::vector<std::string> validate(const nlohmann::json& schema, const nlohmann::json& value) {
    errors_.clear();
    root_ = &schema;
    check(schema, value, "$");
    root_ = nullptr;
    return errors_;
  }

 private:
  static bool has_type(const nlohmann::json& v, const std::string& type) {
    if (type == "object") return v.is_object();
    if (type == "array") return v.is_array();
    if (type == "string") return v.is_string();
    if (type == "integer") return v.is_number_integer();
    if (type == "number") return v.is_number();
    if (type == "boolean") return v.is_boolean();
    if (type == "null") return v.is_null();
    return false;
  }

  void fail(const std::string& path, const std::string& what) { errors_.push_back(path + ": " + what); }

  void check(const nlohmann::json& schema, const nlohmann::json& v, const std::string& path) {
    static const std::set<std::string> kKnown = {"$schema", "$id",     "$defs",      "$ref",  "title",
                                                 "description", "type", "required", "properties", "items",
                                                 "enum",    "minimum", "maximum",    "additionalProperties"};
    for (const auto& item : schema.items())
      if (!kKnown.count(item.key())) fail(path, "schema keyword not supported by the test: " + item.key());

    if (schema.contains("$ref")) {
      const std::string ref = schema["$ref"].get<std::string>();
      const std::string prefix = "#/$defs/";
      if (ref.rfind(prefix, 0) != 0 || !root_->contains("$defs") || !(*root_)["$defs"].contains(ref.substr(prefix.size()))) {
        fail(path, "unresolvable $ref " + ref);
        return;
      }
      check((*root_)["$defs"][ref.substr(prefix.size())], v, path);
    }
    if (schema.contains("type")) {
      const nlohmann::json& type = schema["type"];
      bool ok = false;
      if (type.is_string()) ok = has_type(v, type.get<std::string>());
      for (const nlohmann::json& t : type.is_array() ? type : nlohmann::json::array())
        ok = ok || has_type(v, t.get<std::string>());
      if (!ok) {
        fail(path, "expected type " + type.dump() + ", got " + v.dump());
        return;
      }
    }
    if (schema.contains("enum")) {
      bool found = false;
      for (const nlohmann::json& e : schema["enum"]) found = found || e == v;
      if (!found) fail(path, v.dump() + " not in " + schema["enum"].dump());
    }
    if (v.is_number()) {
      if (schema.contains("minimum") && v.get<double>() < schema["minimum"].get<double>())
        fail(path, v.dump() + " below minimum");
      if (schema.contains("maximum") && v.get<double>() > schema["maximum"].get<double>())
        fail(path, v.dump() + " above maximum");
    }
    if (v.is_object()) {
      for (const nlohmann::json& key : schema.value("required", nlohmann::json::array()))
        if (!v.contains(key.get<std::string>())) fail(path, "missing required " + key.dump());
      const nlohmann::json props = schema.value("properties", nlohmann::json::object());
      for (const auto& item : v.items()) {
        if (props.contains(item.key()))
          check(props[item.key()], item.value(), path + "." + item.key());
        else if (schema.value("additionalProperties", true) == false)
          fail(path, "property not in schema: " + item.key());
      }
    }
    if (v.is_array() && schema.contains("items"))
      for (size_t i = 0; i < v.size(); ++i) check(schema["items"], v[i], path + "[" + std::to_string(i) + "]");
  }

  const nlohmann::json* root_ = nullptr;
  std::vector<std::string> errors_;
};

#ifdef MODELSTAT_SOURCE_DIR
// Parses a JSON file under the source tree, e.g. "docs/analysis.schema.json".
// Throws (failing the test) when it cannot be read or parsed.
inline nlohmann::json load_source_json(const std::string& relative_path) {
  const std::string path = std::string(MODELSTAT_SOURCE_DIR) + "/" + relative_path;
  std::ifstream in(path);
  if (!in.good()) throw std::runtime_error("cannot open " + path);
  return nlohmann::json::parse(in);
}
#endif

// ------------------------------------------------------------ the CLI binary

struct CliResult {
  int exit_code = -1;    // 128 + N when killed by signal N
  std::string out, err;  // standard output and standard error, apart
};

// Runs a shell command line (through popen); the standard error of its last
// command goes to a file of its own per process and call, so tests that ctest
// runs in parallel never read each other's.
CliResult run_shell_command(const std::string& command);

// A command refused or stopped in the one form (a memory limit hit included):
// not killed by a signal, exit 2, one line "modelstat: error: ..." on
// standard error (no ATen backtrace), nothing on standard output. Fatal on a
// signal: call it under ASSERT_NO_FATAL_FAILURE.
void expect_one_line_usage_error(const CliResult& r);

#ifdef MODELSTAT_BINARY
// Runs `ENV modelstat ARGS` through the shell (ENV: "NAME=value ..." or empty),
// under `timeout`.
CliResult run_modelstat_cli(const std::string& args, const std::string& env = {}, int timeout_seconds = 300);
#endif

// A whole file as bytes; empty when it cannot be read.
std::string read_file(const std::string& path);
// Writes `bytes` to `path` (replacing the file), creating its folders first.
void write_file(const std::string& path, const std::string& bytes);
// A fresh, empty folder TempDir()/<name>: what an earlier run left there is removed.
std::string fresh_temp_dir(const std::string& name);

// ------------------------------------------------------------ golden files

// Replaces what differs from run to run or machine to machine with a fixed
// token, so a writer's output can be compared with a checked-in file:
// ISO 8601 dates and timestamps ("2024-04-30", "2024-04-30T12:00:00Z") become
// <DATE>, and each `volatile_values` entry (a host name, a LibTorch version, a
// temporary path, a timing measured at run time as the writer prints it)
// becomes <VOLATILE>. Plain text in, plain text out.
std::string normalise_volatile(std::string text, const std::vector<std::string>& volatile_values = {});

#ifdef MODELSTAT_SOURCE_DIR
// Compares `actual` (normalised) with tests/data/golden/NAME. On a mismatch
// the calling test fails with a unified-style diff of the first differing
// lines and the command that regenerates the file. With MODELSTAT_UPDATE_GOLDEN=1
// in the environment the file is (re)written instead, and the test passes:
//   MODELSTAT_UPDATE_GOLDEN=1 ctest --test-dir build -R Golden
// then review the change with `git diff tests/data/golden`. An HTML page's
// static stylesheet and script are compared by size and hash (one line in its
// golden file), the rest of the page line by line.
void expect_golden(const std::string& name, const std::string& actual,
                   const std::vector<std::string>& volatile_values = {});

// A variant of an output pinned by its own golden file (the same record with
// one option changed), kept as its difference from that output:
// tests/data/golden/NAME (PAGE.diff) holds the line diff from `base` to
// `actual`, both as expect_golden holds them, in unified hunks with two lines
// of context. Given `base`, it pins `actual` byte for byte, and it shows what
// the option changes instead of a second copy of everything it leaves alone.
void expect_golden_variant(const std::string& name, const std::string& actual, const std::string& base,
                           const std::vector<std::string>& volatile_values = {});

// expect_golden for each format: `render(format)` against STEM + the format's
// file ending (table .txt, json .json, csv .csv, md .md, html .html, trace .trace.json).
void expect_golden_formats(const std::string& stem, const std::vector<std::string>& formats,
                           const std::function<std::string(const std::string& format)>& render,
                           const std::vector<std::string>& volatile_values = {});
#endif

// ------------------------------------------------------- report text helpers

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Runs `run`, which must throw a modelstat::Error of `kind` whose message
// holds each of `needles`: the test fails otherwise. Returns the error's
// what() ("" when nothing was thrown), for checks of its exact wording.
inline std::string expect_error(const std::function<void()>& run, ErrorKind kind,
                                const std::vector<std::string>& needles = {}) {
  try {
    run();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    for (const std::string& needle : needles) EXPECT_TRUE(contains(e.what(), needle)) << needle << " in: " << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

// RFC 4180 reader: records of fields, quotes doubled inside quoted fields.
inline std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false, after_quote = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
        after_quote = true;
      } else {
        field += c;
      }
      continue;
    }
    if (c == '"') {
      EXPECT_TRUE(field.empty() && !after_quote) << "stray quote at byte " << i;
      quoted = true;
    } else if (c == ',') {
      record.push_back(field);
      field.clear();
      after_quote = false;
    } else if (c == '\n') {
      record.push_back(field);
      records.push_back(record);
      record.clear();
      field.clear();
      after_quote = false;
    } else {
      EXPECT_FALSE(after_quote) << "text after a closing quote at byte " << i;
      field += c;
    }
  }
  EXPECT_FALSE(quoted) << "unterminated quoted field";
  EXPECT_TRUE(field.empty() && record.empty()) << "last record not terminated by a newline";
  return records;
}

// Number of cells in a GFM table row: '|' separators that are not escaped by
// an odd run of backslashes, minus the leading and trailing ones.
inline size_t md_cells(const std::string& row) {
  size_t pipes = 0, backslashes = 0;
  for (char c : row) {
    if (c == '|' && backslashes % 2 == 0) ++pipes;
    backslashes = c == '\\' ? backslashes + 1 : 0;
  }
  return pipes - 1;
}

// "| :--- | ---: |": the delimiter row under a table header, `columns` cells.
inline bool is_md_delimiter_row(const std::string& row, size_t columns) {
  std::istringstream in(row);
  std::string cell;
  std::getline(in, cell, '|');  // before the leading '|'
  size_t cells = 0;
  while (std::getline(in, cell, '|')) {
    if (in.eof() && cell.empty()) break;  // after the trailing '|'
    ++cells;
    if (cell != " :--- " && cell != " ---: " && cell != " --- " && cell != " :---: ") return false;
  }
  return cells == columns;
}

// Checks every GFM table in `lines` (a header row, the delimiter row under it,
// rows that all start and end with '|' and have the header's cell count) and
// returns how many tables there are.
inline size_t expect_well_formed_md_tables(const std::vector<std::string>& lines) {
  size_t tables = 0;
  for (size_t i = 0; i < lines.size();) {
    if (lines[i].empty() || lines[i][0] != '|') {
      ++i;
      continue;
    }
    ++tables;
    const size_t columns = md_cells(lines[i]);
    EXPECT_LT(i + 1, lines.size()) << "a table header ends the text";
    if (i + 1 < lines.size()) {
      EXPECT_TRUE(is_md_delimiter_row(lines[i + 1], columns)) << lines[i + 1];
    }
    for (; i < lines.size() && !lines[i].empty() && lines[i][0] == '|'; ++i) {
      EXPECT_EQ(lines[i].back(), '|') << lines[i];
      EXPECT_EQ(md_cells(lines[i]), columns) << lines[i];
    }
  }
  return tables;
}

}  // namespace modelstat::test

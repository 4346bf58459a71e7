// Hostile variants of every JSON record modelstat reads back (a ceilings file,
// a profile document, a report document nesting a profile), one table shared
// by the CLI tests of `compare`, `fit --ceilings` (tests/tools) and
// `report --ceilings` (tests/profiler). Each variant says what the one-line
// error must contain: the field's path, or for a file-level problem its words.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace modelstat::test {

struct HostileJson {
  std::string name;     // also the file name, "<name>.json"
  std::string content;  // written as is (ignored for the path cases below)
  std::string says;     // a fragment of the message: `field "..."` or the file-level words
};

// A valid ceilings file; the variants below change one thing each.
inline std::string valid_ceilings_text() {
  return R"({"schema_version": "1.3", "device_kind": "cpu", "device_name": "cpu0", "threads": 2,
  "source": "measured", "memory_bandwidth_bytes_per_second": 1e10, "copy_bytes": 268435456,
  "op_overhead_seconds": 2e-6,
  "matmul": [{"dtype": "fp32", "flops_per_second": 1e11, "best_size": 512,
              "curve": [{"n": 64, "flops_per_second": 5e10}, {"n": 512, "flops_per_second": 1e11}]}],
  "op_costs": [{"op": "Relu", "fixed_seconds": 1e-6, "seconds_per_byte": 1e-10}]})";
}

// A valid profile document (docs/profile-json.md), whole and per-layer samples.
inline std::string valid_profile_text() {
  return R"({"schema_version": "1.2.0", "tool": "modelstat", "kind": "profile",
  "context": {"device_name": "cpu0", "device_kind": "cpu", "threads": 2, "dtype": "fp32", "batch": 1},
  "whole": {"count": 5, "samples_s": [0.0010, 0.0011, 0.0012, 0.0010, 0.0009]},
  "layers": [{"index": 0, "name": "conv", "op_type": "Conv",
              "time": {"count": 3, "samples_s": [0.00010, 0.00020, 0.00010]}}]})";
}

// The report document nests the profile under "profile".
inline std::string valid_report_text(const std::string& profile = valid_profile_text()) {
  return R"({"schema_version": "1.0.0", "tool": "modelstat", "kind": "report", "profile": )" + profile + "}";
}

inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  if (at == std::string::npos) throw std::logic_error("hostile_json_cases: no '" + from + "' in the document");
  return text.replace(at, from.size(), to);
}

// Variants every record shares: the file-level classes.
inline std::vector<HostileJson> file_level_cases(const std::string& valid) {
  std::string binary;
  for (int i = 0; i < 256; ++i) binary += static_cast<char>((i * 37 + 11) % 256);
  return {
      {"truncated", valid.substr(0, valid.size() * 2 / 3), "not valid JSON"},
      {"empty", "", "empty file"},
      {"blank", "  \n\t ", "no JSON value"},
      {"binary", binary, "not valid JSON"},
      {"deep", std::string(100000, '['), "nested deeper than 64 levels"},
  };
}

// A number a reader must refuse inside `valid` at `number` (its text): NaN and
// Infinity are not JSON, 1e999 overflows a double.
inline void add_non_finite(std::vector<HostileJson>& out, const std::string& valid, const std::string& number,
                           const std::string& field) {
  out.push_back({"nan_literal", replaced(valid, number, "NaN"), "field \"" + field + "\": not valid JSON"});
  out.push_back({"infinity_literal", replaced(valid, number, "Infinity"), "field \"" + field + "\": not valid JSON"});
  out.push_back({"overflow_1e999", replaced(valid, number, "1e999"), "field \"" + field + "\": not valid JSON: number overflow"});
  out.push_back({"minus_overflow", replaced(valid, number, "-1e999"), "field \"" + field + "\": not valid JSON: number overflow"});
}

// An array of more elements than a document may hold (json_input.hpp: 4,000,000).
inline std::string huge_array(size_t elements) {
  std::string a = "[";
  a.reserve(elements * 2 + 2);
  for (size_t i = 0; i < elements; ++i) a += i == 0 ? "0" : ",0";
  return a + "]";
}

inline std::vector<HostileJson> hostile_ceilings() {
  const std::string v = valid_ceilings_text();
  std::vector<HostileJson> c = file_level_cases(v);
  const std::string bw = "\"memory_bandwidth_bytes_per_second\": 1e10";
  c.push_back({"top_level_array", "[1, 2, 3]", "expected an object, got an array"});
  c.push_back({"wrong_schema_version", replaced(v, "\"1.3\"", "\"3.0\""),
               "field \"schema_version\": expected a version this modelstat reads (1.x or 2.x; it writes 2.12), got \"3.0\""});
  c.push_back({"missing_schema_version", replaced(v, "\"schema_version\": \"1.3\",", ""), "field \"schema_version\": missing"});
  c.push_back({"schema_version_number", replaced(v, "\"1.3\"", "1.3"), "field \"schema_version\": expected a string, got 1.3"});
  c.push_back({"wrong_type", replaced(v, bw, "\"memory_bandwidth_bytes_per_second\": \"abc\""),
               "field \"memory_bandwidth_bytes_per_second\": expected a positive finite number, got \"abc\""});
  c.push_back({"missing_field", replaced(v, bw + ",", ""), "field \"memory_bandwidth_bytes_per_second\": missing"});
  c.push_back({"zero_rate", replaced(v, bw, "\"memory_bandwidth_bytes_per_second\": 0"),
               "field \"memory_bandwidth_bytes_per_second\": expected a positive finite number, got 0"});
  c.push_back({"negative_time", replaced(v, "\"op_overhead_seconds\": 2e-6", "\"op_overhead_seconds\": -2e-6"),
               "field \"op_overhead_seconds\": expected a finite number >= 0, got -2e-06"});
  c.push_back({"negative_size", replaced(v, "\"copy_bytes\": 268435456", "\"copy_bytes\": -1"),
               "field \"copy_bytes\": expected a whole number from 0 to"});
  c.push_back({"absurd_count", replaced(v, "\"threads\": 2", "\"threads\": 99999999999"),
               "field \"threads\": expected a whole number from 0 to 65536, got 99999999999"});
  c.push_back({"fractional_count", replaced(v, "\"threads\": 2", "\"threads\": 2.5"),
               "field \"threads\": expected a whole number from 0 to 65536, got 2.5"});
  c.push_back({"nested_wrong_type", replaced(v, "{\"n\": 64, \"flops_per_second\": 5e10}", "{\"n\": 64, \"flops_per_second\": true}"),
               "field \"matmul[0].curve[0].flops_per_second\": expected a positive finite number, got true"});
  c.push_back({"nested_absurd_size", replaced(v, "{\"n\": 64,", "{\"n\": 1e300,"),
               "field \"matmul[0].curve[0].n\": expected a whole number from 1 to 1048576, got 1e+300"});
  c.push_back({"element_not_object", replaced(v, "\"op_costs\": [{", "\"op_costs\": [7, {"),
               "field \"op_costs[0]\": expected an object, got 7"});
  c.push_back({"unknown_device_kind", replaced(v, "\"device_kind\": \"cpu\"", "\"device_kind\": \"tpu\""),
               "field \"device_kind\": expected \"cpu\" or \"cuda\", got \"tpu\""});
  c.push_back({"huge_array", replaced(v, "\"op_costs\": [", "\"notes\": " + huge_array(4'000'001) + ", \"op_costs\": ["),
               "field \"notes\": an array of more than 4000000 elements"});
  add_non_finite(c, v, "1e10", "memory_bandwidth_bytes_per_second");
  return c;
}

inline std::vector<HostileJson> hostile_profiles() {
  const std::string v = valid_profile_text();
  std::vector<HostileJson> c = file_level_cases(v);
  c.push_back({"top_level_array", "[1, 2, 3]", "not a modelstat profile or report document (not a JSON object)"});
  c.push_back({"wrong_schema_version", replaced(v, "\"1.2.0\"", "\"7.0\""),
               "field \"schema_version\": expected a profile schema version this modelstat reads (1.x), got \"7.0\""});
  c.push_back({"missing_schema_version", replaced(v, "\"schema_version\": \"1.2.0\",", ""), "field \"schema_version\": missing"});
  c.push_back({"wrong_type", replaced(v, "0.00020", "\"abc\""),
               "field \"layers[0].time.samples_s[1]\": expected a finite number >= 0, got \"abc\""});
  c.push_back({"samples_not_array", replaced(v, "[0.0010, 0.0011, 0.0012, 0.0010, 0.0009]", "{\"a\": 1}"),
               "field \"whole.samples_s\": expected an array, got an object"});
  c.push_back({"missing_field", replaced(v, "\"whole\"", "\"hole\""), "field \"whole\": missing"});
  c.push_back({"negative_time", replaced(v, "0.0012", "-0.0012"),
               "field \"whole.samples_s[2]\": expected a finite number >= 0, got -0.0012"});
  c.push_back({"negative_count", replaced(v, "\"count\": 5", "\"count\": -5"),
               "field \"whole.count\": expected a whole number from 0 to"});
  c.push_back({"absurd_index", replaced(v, "\"index\": 0", "\"index\": 1e12"),
               "field \"layers[0].index\": expected a whole number from 0 to 2147483647, got 1000000000000.0"});
  c.push_back({"absurd_threads", replaced(v, "\"threads\": 2", "\"threads\": -4"),
               "field \"context.threads\": expected a whole number from 0 to 65536, got -4"});
  c.push_back({"context_wrong_type", replaced(v, "\"dtype\": \"fp32\"", "\"dtype\": [1]"),
               "field \"context.dtype\": expected a string, got an array"});
  c.push_back({"huge_array", replaced(v, "[0.0010, 0.0011, 0.0012, 0.0010, 0.0009]", huge_array(4'000'001)),
               "field \"whole.samples_s\": an array of more than 4000000 elements"});
  add_non_finite(c, v, "0.0011", "whole.samples_s[1]");
  return c;
}

// The report document: every profile variant's field, one level down.
inline std::vector<HostileJson> hostile_reports() {
  std::vector<HostileJson> c = {
      {"truncated", valid_report_text().substr(0, 150), "not valid JSON"},
      {"wrong_type", valid_report_text(replaced(valid_profile_text(), "0.00020", "\"abc\"")),
       "field \"profile.layers[0].time.samples_s[1]\": expected a finite number >= 0, got \"abc\""},
      {"wrong_schema_version", valid_report_text(replaced(valid_profile_text(), "\"1.2.0\"", "\"7.0\"")),
       "field \"profile.schema_version\": expected a profile schema version this modelstat reads (1.x), got \"7.0\""},
      {"negative_time", valid_report_text(replaced(valid_profile_text(), "0.0012", "-0.0012")),
       "field \"profile.whole.samples_s[2]\": expected a finite number >= 0, got -0.0012"},
      {"profile_not_object", replaced(valid_report_text(), "\"profile\": {", "\"profile\": 3, \"x\": {"),
       "a report document without its \"profile\" object"},
      {"nan_literal", valid_report_text(replaced(valid_profile_text(), "0.0011", "NaN")),
       "field \"profile.whole.samples_s[1]\": not valid JSON"},
  };
  return c;
}

// Writes each case to `dir`/<prefix>_<name>.json; returns the paths in table order.
inline std::vector<std::string> write_hostile(const std::filesystem::path& dir, const std::string& prefix,
                                              const std::vector<HostileJson>& cases) {
  std::filesystem::create_directories(dir);
  std::vector<std::string> paths;
  for (const HostileJson& c : cases) {
    const std::string path = (dir / (prefix + "_" + c.name + ".json")).string();
    std::ofstream(path, std::ios::binary | std::ios::trunc) << c.content;
    paths.push_back(path);
  }
  return paths;
}

// A folder of its own for one table (under gtest's TempDir, named by process).
inline std::filesystem::path hostile_scratch(const std::string& name) {
  return std::filesystem::path(::testing::TempDir()) / ("modelstat_hostile_" + std::to_string(getpid()) + "_" + name);
}

// Paths that are not a readable file, for every reader: a folder, a path
// through a regular file (ENOTDIR: unreadable even for root), a missing file.
struct HostilePath {
  std::string name, path, says;
};
inline std::vector<HostilePath> hostile_paths(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir / "a_folder.json");
  std::ofstream(dir / "plain_file") << "{}";
  return {
      {"directory", (dir / "a_folder.json").string(), "is a directory"},
      {"not_a_directory", (dir / "plain_file" / "x.json").string(), "cannot read: Not a directory"},
  };
}

}  // namespace modelstat::test

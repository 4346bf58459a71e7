// JsonStream: writes one JSON document member by member, with the layout every
// modelstat document has: nlohmann's dump(2) (indent 2, ", " never on a line
// end, invalid UTF-8 replaced by U+FFFD) plus two rules of its own, applied
// while printing, never by editing text afterwards:
//   - an array that is the value of a "samples_s" key is packed kSamplesPerLine
//     numbers a line (a layer with 10,000 samples is 1,250 lines, not 10,000);
//   - element(v, Layout::OneLine) prints an object on one line,
//     {"key": value, ...} (the analysis nodes: one node per line).
// The values are records turned into JSON by their to_json
// (analyzer/measurements/record_json.hpp).
//
// Why a streaming writer rather than one to_json of the whole document: the
// analysis document of a 100,000-node model (nested in the profile and report
// documents) would spend seconds and hundreds of MB building a DOM of every
// node, so nodes are converted and written one at a time; nesting a document
// in another is then a call at the right depth (write_analysis_json inside the
// profile's "analysis", the profile inside the report's "profile").
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "analyzer/measurements/record_json.hpp"

namespace modelstat::report_detail {

constexpr size_t kSamplesPerLine = 6;

enum class Layout { Pretty, OneLine };

class JsonStream {
 public:
  explicit JsonStream(std::ostream& out) : out_(out) {}

  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  // An object member: key() then one begin_* or value(); member() is both.
  void key(const std::string& name);
  void value(const Json& v, Layout layout = Layout::Pretty);
  void member(const std::string& name, const Json& v) {
    key(name);
    value(v);
  }
  // Every member of an object, in order.
  void members(const Json& object);
  // An array element.
  void element(const Json& v, Layout layout = Layout::Pretty) { value(v, layout); }
  // An array element on one line, straight from a record's for_each_field
  // (record_json.hpp): the same text as element(Json(record), OneLine)
  // without building the Json.
  template <typename Record>
  void element_line(const Record& record) {
    next_item();
    line_.assign(1, '{');
    bool first = true;
    for_each_field(record, [this, &first](const char* key, const auto& value) {
      if (!first) line_ += ", ";
      first = false;
      append_string(line_, key);
      line_ += ": ";
      append(line_, value);
    });
    line_ += '}';
    out_ << line_;
  }

 private:
  // JSON text of a value as nlohmann's dump() writes it, appended to out.
  static void append_string(std::string& out, const std::string& s);
  static void append(std::string& out, const std::string& s) { append_string(out, s); }
  static void append(std::string& out, int64_t v);
  static void append(std::string& out, double v);
  static void append(std::string& out, const std::vector<std::string>& v);

  void next_item();  // the separator and line break before an object member or array element
  void pretty(const Json& v, const std::string* key);
  void one_line(const Json& v);
  void samples(const Json& array);
  std::string indent() const { return std::string(2 * levels_.size(), ' '); }

  std::ostream& out_;
  std::vector<bool> levels_;  // per open object/array: does it have an item yet
  bool after_key_ = false;
  std::string pending_key_;   // the key of the value about to be written
  std::string line_;          // element_line's text, reused
};

}  // namespace modelstat::report_detail

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

#include <algorithm>
#include <charconv>
#include <cstring>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include "analyzer/measurements/record_json.hpp"
#include "modelstat/joined.hpp"
#include "tools/writers/writers.hpp"

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
    line_.clear();
    separator(line_);  // with the row: one write a line
    line_.put('{');
    bool first = true;
    for_each_field(record, [this, &first](const auto& key, const auto& value) {
      // Keys are record_json.hpp's own identifiers: plain ASCII, no escapes.
      // A string literal's length is known when compiling: the separator,
      // the quoted key and ": " go in with one extend and fixed-size copies
      // (a 100k-node document writes 1.9M keys).
      size_t n = 0;
      if constexpr (std::is_array_v<std::remove_reference_t<decltype(key)>>) {
        n = sizeof(key) - 1;
      } else {
        n = std::strlen(key);
      }
      char* p = line_.extend(n + (first ? 4 : 6));
      if (!first) {
        std::memcpy(p, ", ", 2);
        p += 2;
      }
      first = false;
      *p = '"';
      std::memcpy(p + 1, key, n);
      std::memcpy(p + 1 + n, "\": ", 3);
      append(line_, value);
    });
    line_.put('}');
    out_.write(line_.data(), std::streamsize(line_.size()));
  }

 private:
  // A line's text, grown as needed and reused from line to line.
  class LineBuffer {
   public:
    void clear() { size_ = 0; }
    char* extend(size_t n) {
      if (size_ + n > buf_.size()) grow(n);
      char* at = &buf_[size_];
      size_ += n;
      return at;
    }
    void put(const char* p, size_t n) { std::memcpy(extend(n), p, n); }
    void put(char c) { *extend(1) = c; }
    void drop(size_t n) { size_ -= n; }  // the last n bytes of an extend left unwritten
    const char* data() const { return buf_.data(); }
    size_t size() const { return size_; }

   private:
    // Out of line: extend, inlined at each of a row's ~40 pieces, stays a
    // compare and an add.
    [[gnu::noinline]] void grow(size_t n) { buf_.resize(std::max(2 * buf_.size(), size_ + n + 256)); }
    std::string buf_;
    size_t size_ = 0;
  };

  // JSON text of a value as nlohmann's dump() writes it, appended to out.
  static void append_string(LineBuffer& out, const std::string& s);
  static void append(LineBuffer& out, const std::string& s) { append_string(out, s); }
  static void append(LineBuffer& out, int64_t v) {
    constexpr size_t kMaxDigits = 20;  // a sign and 19 digits
    char* p = out.extend(kMaxDigits);
    const auto r = std::to_chars(p, p + kMaxDigits, v);
    out.drop(kMaxDigits - size_t(r.ptr - p));
  }
  static void append(LineBuffer& out, double v);
  static void append(LineBuffer& out, const std::vector<std::string>& v);

  // The separator and line break before an object member or array element,
  // written to the stream (next_item) or appended to a line (separator).
  void next_item();
  void separator(LineBuffer& line);
  void pretty(const Json& v, const std::string* key);
  void one_line(const Json& v);
  void samples(const Json& array);
  std::string indent() const { return std::string(2 * levels_.size(), ' '); }

  std::ostream& out_;
  std::vector<bool> levels_;  // per open object/array: does it have an item yet
  bool after_key_ = false;
  std::string pending_key_;   // the key of the value about to be written
  LineBuffer line_;           // element_line's and key's text
};

// Pieces of one document that another nests (the generation document's
// phases): a layer of the profile document, its record with its join's
// figures (join_layer) (profile_json_writer.cc).
Json profile_layer_json(const LayerTiming& layer, const LayerCost& cost);

// The JSON writer of a record whose document `Write` streams
// (write_analysis_json, write_profile_json): the document, then a newline.
template <class Record, void (*Write)(const Record&, const ReportOptions&, JsonStream&)>
class StreamedJsonWriter final : public RecordWriter<Record> {
 public:
  void write(const Record& record, const ReportOptions& options, std::ostream& out) const override {
    JsonStream json(out);
    Write(record, options, json);
    out << '\n';
  }
};

}  // namespace modelstat::report_detail

namespace modelstat::report {
// The joined report's pieces (joined_json_writer.cc, docs/report-json.md):
// its roofline, a node on it, a --group-by group in its units.
Json joined_roofline_json(const JoinedReport& r);
Json joined_node_json(const JoinedReport& r, const JoinedNode& n);
Json joined_group_json(const LayerGroup& g);
}  // namespace modelstat::report

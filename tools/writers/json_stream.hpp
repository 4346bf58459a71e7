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
#include "modelstat/joined.hpp"

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

 private:
  void next_item();  // the separator and line break before an object member or array element
  void pretty(const Json& v, const std::string* key);
  void one_line(const Json& v);
  void samples(const Json& array);
  std::string indent() const { return std::string(2 * levels_.size(), ' '); }

  std::ostream& out_;
  std::vector<bool> levels_;  // per open object/array: does it have an item yet
  bool after_key_ = false;
  std::string pending_key_;   // the key of the value about to be written
};

// Pieces of one document that another nests (the generation document's
// phases): a layer of the profile document, its record with its join's
// figures (join_layer) (profile_json_writer.cc).
Json profile_layer_json(const LayerTiming& layer, const LayerCost& cost);

}  // namespace modelstat::report_detail

namespace modelstat::report {
// The joined report's pieces (joined_json_writer.cc, docs/report-json.md):
// its roofline, a node on it, a --group-by group in its units.
Json joined_roofline_json(const JoinedReport& r);
Json joined_node_json(const JoinedReport& r, const JoinedNode& n);
Json joined_group_json(const LayerGroup& g);
}  // namespace modelstat::report

// JsonStream::element_line (the analysis rows, written field by field) gives
// the text of the DOM path, element(Json(row), Layout::OneLine), whose
// strings and numbers nlohmann's dump() prints: every byte value at every
// position of an 8-byte step of the plain-text test (plain ASCII as it is;
// quotes, backslashes, control bytes escaped; UTF-8 kept, invalid bytes
// replaced by U+FFFD), and the separators and indents between rows.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/measurements/record_json.hpp"
#include "tools/writers/json_stream.hpp"

namespace modelstat {
namespace {

using report_detail::JsonStream;
using report_detail::Layout;

// One document holding `rows` twice: in an array member through
// element_line, and in another through the Json of each row.
std::pair<std::string, std::string> both_ways(const std::vector<NodeReport>& rows) {
  std::ostringstream streamed, dom;
  JsonStream a(streamed), b(dom);
  for (JsonStream* s : {&a, &b}) {
    s->begin_object();
    s->key("nodes");
    s->begin_array();
  }
  for (const NodeReport& row : rows) {
    a.element_line(row);
    b.element(Json(row), Layout::OneLine);
  }
  for (JsonStream* s : {&a, &b}) {
    s->end_array();
    s->end_object();
  }
  return {streamed.str(), dom.str()};
}

NodeReport row_named(const std::string& name) {
  NodeReport row;
  row.index = 7;
  row.name = name;
  row.op_type = "MatMul";
  row.input_shapes = {"1x64", name};
  row.output_shapes = {"batchx?x64"};
  row.output_dtype = "float32";
  row.cost.macs = std::numeric_limits<int64_t>::max();
  row.cost.params = -1;
  row.cost.bytes_read = 3;
  row.cost.rule = name;
  return row;
}

TEST(JsonStream, RowsAsTheDomWritesThemForEveryByteAtEveryPosition) {
  std::vector<NodeReport> rows;
  for (int byte = 1; byte < 256; ++byte)
    for (size_t at = 0; at < 18; ++at) {
      std::string name = "/blocks.12/mlp/Mat";  // 18 plain characters
      name[at] = char(byte);
      rows.push_back(row_named(name));
    }
  // Plain names of every length up to 3 words, and UTF-8 that stays as it is.
  for (size_t n = 0; n <= 24; ++n) rows.push_back(row_named(std::string(n, 'a')));
  rows.push_back(row_named("caf\xC3\xA9/\xE2\x80\xA6/conv"));
  rows.push_back(row_named(std::string("nul\0inside", 10)));
  const auto [streamed, dom] = both_ways(rows);
  EXPECT_EQ(streamed, dom);
  // Spot checks of what nlohmann prints, so that the comparison cannot pass
  // on two empty or identically broken documents.
  EXPECT_EQ(streamed.find("{\n  \"nodes\": [\n    {\"index\": 7, \"name\": \"\\u0001blocks.12/mlp/Mat\", "), 0u);
  EXPECT_NE(streamed.find("\"name\": \"\\\"blocks.12/mlp/Mat\""), std::string::npos);
  EXPECT_NE(streamed.find("\"name\": \"\\\\blocks.12/mlp/Mat\""), std::string::npos);
  EXPECT_NE(streamed.find("\"name\": \"/blocks.12/mlp/Ma\\u0001\""), std::string::npos);
  EXPECT_NE(streamed.find("\"name\": \"/blocks.12/mlp/Ma\xEF\xBF\xBD\""), std::string::npos);  // a lone 0xff
  EXPECT_NE(streamed.find("\"name\": \"/blocks.12/mlp/Ma\x7f\""), std::string::npos);
  EXPECT_NE(streamed.find("\"macs\": 9223372036854775807"), std::string::npos);
  EXPECT_NE(streamed.find("\"params\": -1"), std::string::npos);
  EXPECT_NE(streamed.find("\"subgraph_nodes\": 0},\n    {\"index\": 7"), std::string::npos);
  EXPECT_EQ(streamed.substr(streamed.size() - 8), "0}\n  ]\n}");
}

// A row's arithmetic intensity (FLOPs / bytes, a double) as the DOM path
// prints it, where values repeat: 3,000 values, more than the writer keeps
// texts of (a memo of 1,024 slots, so slots shared by several values),
// written twice over; and values whose text is known by hand.
TEST(JsonStream, RowDoublesAsTheDomWritesThemWhereValuesRepeat) {
  std::vector<NodeReport> rows;
  for (int pass = 0; pass < 2; ++pass)
    for (int64_t flops = 0; flops < 3000; ++flops) {
      NodeReport row = row_named("n");  // 3 bytes read
      row.cost.flops = flops;
      rows.push_back(row);
    }
  NodeReport quarter = row_named("q");
  quarter.cost.flops = 1;
  quarter.cost.bytes_read = 4;
  rows.push_back(quarter);
  const auto [streamed, dom] = both_ways(rows);
  EXPECT_EQ(streamed, dom);
  auto count = [&s = streamed](const std::string& needle) {
    size_t n = 0;
    for (size_t at = s.find(needle); at != std::string::npos; at = s.find(needle, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("\"arithmetic_intensity\": 0.0,"), 2u);                 // 0 / 3
  EXPECT_EQ(count("\"arithmetic_intensity\": 0.3333333333333333,"), 2u);  // 1 / 3
  EXPECT_EQ(count("\"arithmetic_intensity\": 1.0,"), 2u);                 // 3 / 3
  EXPECT_EQ(count("\"arithmetic_intensity\": 999.6666666666666,"), 2u);   // 2999 / 3
  EXPECT_EQ(count("\"arithmetic_intensity\": 0.25,"), 1u);                // 1 / 4
}

}  // namespace
}  // namespace modelstat

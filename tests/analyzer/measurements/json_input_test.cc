// The hostile-input JSON reader (analyzer/measurements/json_input.hpp) on its
// own: the limits at and past their edge, the path a refused value is named by,
// file-level refusals. The CLI tables (tests/tools/cli_hostile_json_test.cc)
// run it through every command that reads JSON.
#include "analyzer/measurements/json_input.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>

#include "scratch_folder.hpp"
#include "test_support.hpp"

namespace modelstat {
namespace {

// The one-line message of the Error(Input) that parsing `text` ends in.
std::string parse_error_of(const std::string& text) {
  try {
    parse_json_document(text, "doc.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input) << e.what();
    EXPECT_EQ(e.file(), "doc.json");
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "parsed: " << text.substr(0, 80);
  return {};
}

std::string zeros(size_t n) {
  std::string a = "[";
  for (size_t i = 0; i < n; ++i) a += i == 0 ? "0" : ",0";
  return a + "]";
}

TEST(JsonInput, AParseErrorIsNamedByThePathBeingRead) {
  EXPECT_EQ(parse_error_of(R"({"a": {"b": [1, 2, {"c": tru}]}})").rfind("doc.json: field \"a.b[2].c\": not valid JSON: ", 0),
            0u);
  EXPECT_EQ(parse_error_of(R"({"a": [1, 2, -])").rfind("doc.json: field \"a[2]\": not valid JSON", 0), 0u);
  EXPECT_EQ(parse_error_of("nul").rfind("doc.json: not valid JSON", 0), 0u);  // no field at the top
  // Between two members (a missing comma, a truncated key): the member before.
  EXPECT_EQ(parse_error_of(R"({"a": {"b": 1 "c": 2}})").rfind("doc.json: after field \"a.b\": not valid JSON", 0), 0u);
  EXPECT_EQ(parse_error_of(R"({"a": {"b": [1]}, "c)").rfind("doc.json: after field \"a\": not valid JSON", 0), 0u);
}

TEST(JsonInput, ArraysUpToTheLimitAreReadAndOneMoreIsRefused) {
  EXPECT_EQ(parse_json_document("{\"a\": " + zeros(kJsonMaxArrayElements) + "}", "doc.json")["a"].size(),
            size_t(kJsonMaxArrayElements));
  EXPECT_EQ(parse_error_of("{\"a\": " + zeros(kJsonMaxArrayElements + 1) + "}"),
            "doc.json: field \"a\": an array of more than 4000000 elements (the most a modelstat document may hold)");
}

TEST(JsonInput, NestingUpToTheLimitIsReadAndDeeperIsRefused) {
  const auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  EXPECT_NO_THROW(parse_json_document(nested(kJsonMaxDepth), "doc.json"));
  EXPECT_NE(parse_error_of(nested(kJsonMaxDepth + 1)).find("nested deeper than 64 levels"), std::string::npos);
  EXPECT_NE(parse_error_of(std::string(1'000'000, '[')).find("nested deeper than 64 levels"), std::string::npos);
}

TEST(JsonInput, AnObjectOfTooManyMembersIsRefused) {
  std::string text = "{\"big\": {";
  for (int64_t i = 0; i <= kJsonMaxObjectMembers; ++i) text += (i ? ",\"k" : "\"k") + std::to_string(i) + "\": 0";
  text += "}}";
  EXPECT_EQ(parse_error_of(text), "doc.json: field \"big\": an object of more than 10000 members");
}

TEST(JsonInput, AFieldReaderErrorIsNamedByItsPathInTheDocument) {
  const Json doc = parse_json_document(R"({"runs": [{"t": 1}, {"t": {"x": "y"}}], "n": -3})", "doc.json");
  const auto message_of = [&](const std::function<void(const Json&)>& read) {
    try {
      read_json_record(doc, "doc.json", [&](const Json& d) {
        read(d);
        return 0;
      });
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message_of([](const Json& d) { json_number(d["runs"][1], "t", JsonNumber::Finite); }),
            "doc.json: field \"runs[1].t\": expected a finite number, got an object");
  EXPECT_EQ(message_of([](const Json& d) { json_string(d["runs"][1]["t"], "z"); }),
            "doc.json: field \"runs[1].t.z\": missing");
  EXPECT_EQ(message_of([](const Json& d) { json_integer(d, "n", 0, 10); }),
            "doc.json: field \"n\": expected a whole number from 0 to 10, got -3");
  EXPECT_EQ(message_of([](const Json& d) { json_array(d["runs"][0], "t"); }),
            "doc.json: field \"runs[0].t\": expected an array, got 1");
}

TEST(JsonInput, ANonFiniteNumberBuiltInCodeIsRefusedToo) {
  // The parser never yields one; a document built in memory may.
  const Json doc = Json{{"x", std::numeric_limits<double>::infinity()}};
  EXPECT_THROW(read_json_record(doc, "mem", [](const Json& d) { return json_number(d, "x", JsonNumber::Finite); }),
               Error);
}

using JsonInputFile = test::ScratchFolder;

TEST_F(JsonInputFile, AFileOverTheLimitIsRefusedBeforeItIsRead) {
  // Sparse: 1 GiB + 1 byte of nothing, refused by its size alone.
  const std::string p = path("huge.json");
  std::ofstream(p) << "";
  std::filesystem::resize_file(p, static_cast<uintmax_t>(kJsonMaxFileBytes) + 1);
  try {
    read_json_file(p);
    ADD_FAILURE() << "read";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), p + ": larger than 1024 MiB, the most a modelstat JSON document may be");
  }
}

TEST_F(JsonInputFile, FileLevelProblemsNameTheFile) {
  std::ofstream(path("empty.json")) << "";
  std::ofstream(path("blank.json")) << " \n";
  std::filesystem::create_directories(path("folder.json"));
  const std::pair<std::string, std::string> cases[] = {
      {path("empty.json"), "empty file, not a JSON document"},
      {path("blank.json"), "no JSON value, only white space"},
      {path("folder.json"), "is a directory, not a JSON file"},
      {path("absent.json"), "cannot read: No such file or directory"},
      {path("empty.json") + "/x", "cannot read: Not a directory"},
  };
  for (const auto& [p, says] : cases) {
    const std::string file = p;
    EXPECT_EQ(test::expect_error([&] { read_json_file(file); }, ErrorKind::Input), file + ": " + says);
  }
}

}  // namespace
}  // namespace modelstat

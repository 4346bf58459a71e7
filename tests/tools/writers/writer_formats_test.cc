// Every record's writer factory (make_*_writer, pick_writer in writers.hpp):
// each format it names gives a writer, and an unknown name is a usage error
// that names what was asked and what there is. One table for every record.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "modelstat/error.hpp"
#include "test_support.hpp"
#include "tools/writers/generation_writers.hpp"
#include "tools/writers/pipeline_writers.hpp"
#include "tools/writers/writers.hpp"

namespace modelstat {
namespace {

struct Factory {
  const char* record;
  std::vector<std::string> formats;
  std::function<bool(const std::string&)> makes;  // a writer came back
  const char* unknown_message;                    // for the format "xml"
};

template <class Make>
std::function<bool(const std::string&)> makes(Make make) {
  return [make](const std::string& format) { return make(format) != nullptr; };
}

TEST(WriterFormats, EveryFactoryKnowsItsFormatsAndRefusesOthers) {
  const std::vector<Factory> factories = {
      {"analysis", {"table", "json", "csv", "md"}, makes(make_analysis_writer),
       "unknown output format 'xml' (table, json, csv, md)"},
      {"profile", {"table", "json", "csv", "md"}, makes(make_profile_writer),
       "unknown output format 'xml' (table, json, csv, md)"},
      {"joined", {"table", "json", "csv", "md", "html", "trace"}, makes(make_joined_writer),
       "unknown report format 'xml' (table, json, csv, md, html, trace)"},
      {"compare", {"table", "json", "md"}, makes(make_compare_writer), "unknown compare format 'xml' (table, json, md)"},
      {"fit", {"table", "json"}, makes(make_fit_writer), "unknown fit format 'xml' (table, json)"},
      {"verify", {"table", "json"}, makes(make_verify_writer), "unknown verify format 'xml' (table, json)"},
      {"pipeline", {"table", "json", "csv", "md", "html", "trace"}, makes(make_pipeline_writer),
       "unknown pipeline output format 'xml' (table, json, csv, md, html, trace)"},
      {"generation", {"table", "json", "csv", "md", "html"}, makes(make_generation_writer),
       "unknown generation format 'xml' (table, json, csv, md, html)"},
  };
  for (const Factory& f : factories) {
    SCOPED_TRACE(f.record);
    for (const std::string& format : f.formats) EXPECT_TRUE(f.makes(format)) << format;
    test::expect_error([&] { f.makes("xml"); }, ErrorKind::Usage, {f.unknown_message});
  }
}

}  // namespace
}  // namespace modelstat

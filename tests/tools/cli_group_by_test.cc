// End-to-end `modelstat MODEL --group-by RULE` (tools/cli_common.hpp, the
// analyze command in tools/modelstat_main.cc) on sample_models/tiny_gpt2.onnx:
// every format has the group rows, the groups hold the nodes counted by hand
// from the model's names (tests/analyzer/grouping_test.cc lists them), their
// sums equal the ungrouped run's totals, and a bad rule is a usage error
// before anything is analysed. `profile` and `report` have theirs in
// tests/profiler/cli_profile_test.cc and cli_report_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace modelstat::test {
namespace {

std::string gpt2() {
  return std::string(MODELSTAT_SOURCE_DIR) + "/sample_models/tiny_gpt2.onnx --dim seq=16";
}

TEST(CliGroupBy, CsvHasOneRowPerBlockSummingToTheTotals) {
  const CliResult grouped = run_modelstat_cli(gpt2() + " --group-by block -f csv");
  ASSERT_EQ(grouped.exit_code, 0) << grouped.err;
  const auto rows = parse_csv(grouped.out);
  ASSERT_EQ(rows.size(), 7u);
  EXPECT_EQ(rows[0][0], "group");
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"(other)", "47"},     {"/wte/", "1"},       {"/wpe/", "1"},
      {"/blocks.0/", "101"}, {"/blocks.1/", "99"}, {"/ln_f/", "11"}};
  int64_t macs = 0, flops = 0, read = 0, written = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const std::vector<std::string>& row = rows[i + 1];
    EXPECT_EQ(row[0], expected[i].first);
    EXPECT_EQ(row[2], expected[i].second) << row[0];
    macs += std::stoll(row[5]);
    flops += std::stoll(row[6]);
    read += std::stoll(row[7]);
    written += std::stoll(row[8]);
  }
  // The totals of the same model analysed without --group-by.
  const CliResult plain = run_modelstat_cli(gpt2() + " -f json");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const auto totals = nlohmann::json::parse(plain.out)["totals"];
  EXPECT_EQ(macs, totals["macs"].get<int64_t>());
  EXPECT_EQ(flops, totals["flops"].get<int64_t>());
  EXPECT_EQ(read, totals["bytes_read"].get<int64_t>());
  EXPECT_EQ(written, totals["bytes_written"].get<int64_t>());
  EXPECT_GT(flops, 0);
}

TEST(CliGroupBy, RegexCaptureGroupIsTheKeyInJsonBesideEveryNode) {
  const CliResult r = run_modelstat_cli(gpt2() + R"( --group-by 're:^/blocks\.(\d+)/' -f json)");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["group_by"], R"(re:^/blocks\.(\d+)/)");
  EXPECT_EQ(doc["nodes"].size(), 260u);
  ASSERT_EQ(doc["groups"].size(), 3u);
  EXPECT_EQ(doc["groups"][0]["key"], "(other)");
  EXPECT_EQ(doc["groups"][0]["nodes"], 60);  // 47 unscoped + /wte/ + /wpe/ + 11 /ln_f/
  EXPECT_EQ(doc["groups"][1]["key"], "0");
  EXPECT_EQ(doc["groups"][1]["first_index"], 13);
  EXPECT_EQ(doc["groups"][1]["nodes"], 101);
  EXPECT_EQ(doc["groups"][2]["key"], "1");
  EXPECT_EQ(doc["groups"][2]["nodes"], 99);
}

TEST(CliGroupBy, HumanFormatsShowGroupRowsInsteadOfNodeRows) {
  for (const char* format : {"table", "md"}) {
    SCOPED_TRACE(format);
    // --top 0: the hotspots, per node, would list node names too.
    const CliResult r = run_modelstat_cli(gpt2() + " --group-by op --top 0 -f " + format);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "Per-op-type costs (--group-by op: ")) << r.out;
    EXPECT_FALSE(contains(r.out, "Per-layer costs"));
    EXPECT_FALSE(contains(r.out, "/blocks.0/attn/q/MatMul  ")) << "no node rows";
  }
}

TEST(CliGroupBy, ABadRuleIsAUsageErrorBeforeAnyAnalysis) {
  for (const char* rule : {"layers", "'re:('", "re:"}) {
    SCOPED_TRACE(rule);
    const CliResult r = run_modelstat_cli(std::string(MODELSTAT_SOURCE_DIR) +
                                          "/sample_models/absent.onnx --group-by " + rule);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err.rfind("modelstat: error: --group-by", 0), 0u) << r.err;  // not the missing model
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
}

TEST(CliGroupBy, HelpDocumentsTheRule) {
  const CliResult r = run_modelstat_cli("analyze --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* needle : {"--group-by", "re:REGEX", "(other)", "/h.3/"})
    EXPECT_TRUE(contains(r.out, needle)) << needle << "\n" << r.out;
}

}  // namespace
}  // namespace modelstat::test

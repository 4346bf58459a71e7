// `modelstat results` in every format and `results compare`'s verdicts and exit
// codes, on results built by hand (so every expected figure is known).
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>

#include "analyzer/suite/results_compare.hpp"
#include "analyzer/suite/results_db.hpp"
#include "suite_test_support.hpp"
#include "tools/writers/results_writers.hpp"

namespace modelstat::test {
namespace {

using nlohmann::json;
using suite::CellResult;
using suite::ResultsDb;

class ResultsOutputTest : public ScratchFolder {
 protected:
  // Two machines, three cells each; vm-b's cell 2 failed; a model name that needs escaping.
  void fill(ResultsDb& db) {
    for (int i = 0; i < 3; ++i) {
      char key[17];
      std::snprintf(key, sizeof key, "00000000000000c%d", i);
      CellResult a = hand_result("vm-a", i, key, 0.002 * (i + 1));
      CellResult b = hand_result("vm-b", i, key, 0.003 * (i + 1));
      a.cell.model = b.cell.model = i == 0 ? "<script>alert(1)</script>,\"x\"" : "net" + std::to_string(i);
      if (i == 2) {
        b.status = "failed";
        b.exit_code = 137;
        b.error_type = "profile: signal 9 (Killed)";
        b.error = "out of memory";
        b.measurement.reset();
        b.forecast = {};
      }
      db.insert(a);
      db.insert(b);
    }
  }
};

TEST_F(ResultsOutputTest, CsvHasDlisColumnsFirstAndOneRowPerResult) {
  {
    ResultsDb db(path("r.db"));
    fill(db);
  }
  const CliResult r = run_modelstat_cli("results " + path("r.db") + " -f csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = parse_csv(r.out);
  ASSERT_EQ(rows.size(), 7u);  // header + 6
  const std::vector<std::string> dli = {"status", "task", "topology", "framework", "input shapes", "precision",
                                        "batch size", "mode", "parameters", "infrastructure",
                                        "average time of a single pass (s)", "latency (s)", "FPS", "batch FPS",
                                        "latency per token (s)", "error type"};
  ASSERT_GE(rows[0].size(), dli.size());
  for (size_t i = 0; i < dli.size(); ++i) EXPECT_EQ(rows[0][i], dli[i]);
  const auto col = [&](const std::string& name) {
    return static_cast<size_t>(std::find(rows[0].begin(), rows[0].end(), name) - rows[0].begin());
  };
  int failed = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), rows[0].size());
    const auto& row = rows[i];
    if (row[col("status")] == "failed") {
      ++failed;
      EXPECT_EQ(row[col("error type")], "profile: signal 9 (Killed)");
      EXPECT_EQ(row[col("latency (s)")], "");
      continue;
    }
    const double latency = std::stod(row[col("latency (s)")]);
    const int64_t batch = std::stoll(row[col("batch size")]);
    EXPECT_DOUBLE_EQ(std::stod(row[col("FPS")]), static_cast<double>(batch) / latency);
    EXPECT_EQ(row[col("mode")], "sync");
    EXPECT_NE(row[col("infrastructure")].find("Hand CPU (4 CPUs"), std::string::npos);
    EXPECT_EQ(row[col("parameters")], "threads=1; requests=1; dtype=model; fusion=on; device=cpu");
  }
  EXPECT_EQ(failed, 1);
  EXPECT_EQ(rows[1][col("topology")], "<script>alert(1)</script>,\"x\"");  // quoted by CSV's rules, read back whole
}

TEST_F(ResultsOutputTest, TableMarkdownJsonAndTheFilters) {
  {
    ResultsDb db(path("r.db"));
    fill(db);
  }
  const CliResult table = run_modelstat_cli("results " + path("r.db"));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("6 results in"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("failed: profile: signal 9 (Killed)"), std::string::npos);
  EXPECT_NE(table.out.find("out of memory"), std::string::npos);

  const CliResult md = run_modelstat_cli("results " + path("r.db") + " -f md --machine vm-a");
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_EQ(expect_well_formed_md_tables(lines_of(md.out)), 1u);
  EXPECT_NE(md.out.find("machine=vm-a"), std::string::npos);
  EXPECT_EQ(md.out.find("vm-b"), std::string::npos);

  const CliResult js = run_modelstat_cli("results " + path("r.db") + " -f json --model 'net*' --limit 1 --offset 1");
  ASSERT_EQ(js.exit_code, 0) << js.err;
  const json doc = json::parse(js.out);
  EXPECT_EQ(doc["kind"], "results");
  EXPECT_EQ(doc["total"], 4);  // net1 and net2 on two machines
  ASSERT_EQ(doc["results"].size(), 1u);
  EXPECT_EQ(doc["results"][0]["kind"], "suite-cell");
  EXPECT_EQ(doc["results"][0]["cell"]["model"], "net1");
  // A cell's rows come by machine id (the results_order index, not the machine's name): the page
  // before this one holds net1's other machine.
  const CliResult first = run_modelstat_cli("results " + path("r.db") + " -f json --model 'net*' --limit 1");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const json before = json::parse(first.out);
  ASSERT_EQ(before["results"].size(), 1u);
  EXPECT_EQ(before["results"][0]["cell"]["model"], "net1");
  std::set<std::string> machines = {doc["results"][0]["machine"]["name"], before["results"][0]["machine"]["name"]};
  EXPECT_EQ(machines, (std::set<std::string>{"vm-a", "vm-b"}));
}

TEST_F(ResultsOutputTest, TheHtmlPageIsSelfContainedAndEscapesNames) {
  {
    ResultsDb db(path("r.db"));
    fill(db);
  }
  const CliResult r = run_modelstat_cli("results " + path("r.db") + " -f html -o " + path("r.html"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = read(path("r.html"));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* external : {"http://", "https://", " src=", "<link", "@import", "url("})
    EXPECT_EQ(html.find(external), std::string::npos) << external;
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);  // the model's name is data, escaped
  EXPECT_NE(html.find("\\u003cscript\\u003ealert(1)\\u003c/script\\u003e"), std::string::npos);
  // The data block parses and holds the 2 machines x 3 cells matrix.
  const std::string tag = "<script id=\"data\" type=\"application/json\">";
  const auto begin = html.find(tag) + tag.size();
  const json data = json::parse(html.substr(begin, html.find("</script>", begin) - begin));
  EXPECT_EQ(data["machines"].size(), 2u);
  EXPECT_EQ(data["cells"].size(), 3u);
  EXPECT_EQ(data["lat"].size(), 6u);
  ASSERT_EQ(data["fail"].size(), 1u);
  EXPECT_EQ(data["fail"][0][0], 2 * 2 + 1);  // cell 2 on vm-b (machine 1): index cell * machines + machine
  EXPECT_EQ(data["lat"][0], 2000);  // 0.002 s on vm-a (machine 0), cell 0, in µs
}

// vm-fast's samples are a quarter of vm-slow's and do not overlap: the new side
// (slow) regressed beyond any threshold below 300%; the same machine against
// itself is unchanged.
TEST_F(ResultsOutputTest, CompareGivesVerdictsAndExitsOneOnARegression) {
  {
    ResultsDb db(path("r.db"));
    for (int i = 0; i < 2; ++i) {
      char key[17];
      std::snprintf(key, sizeof key, "00000000000000d%d", i);
      for (const auto& [machine, scale] : {std::pair<std::string, double>{"vm-fast", 1.0}, {"vm-slow", 4.0}}) {
        CellResult r = hand_result(machine, i, key, 0.01 * scale);
        r.measurement->latency.samples.clear();
        for (int k = 0; k < 12; ++k) r.measurement->latency.samples.push_back(scale * (0.010 + 0.0001 * k));
        db.insert(r);
      }
    }
  }
  const CliResult worse = run_modelstat_cli("results compare " + path("r.db") + " --base machine=vm-fast --new machine=vm-slow -f json");
  EXPECT_EQ(worse.exit_code, 1) << worse.err;
  const json doc = json::parse(worse.out);
  EXPECT_EQ(doc["regressions"], 2);
  EXPECT_EQ(doc["gate_failed"], true);
  for (const json& c : doc["cells"]) {
    EXPECT_EQ(c["verdict"], "regression");
    EXPECT_NEAR(c["delta"].get<double>(), 3.0, 1e-9);  // medians 4 x apart
  }
  EXPECT_NE(worse.err.find("2 regressions beyond 10%"), std::string::npos) << worse.err;
  const CliResult better = run_modelstat_cli("results compare " + path("r.db") + " --base machine=vm-slow --new machine=vm-fast");
  EXPECT_EQ(better.exit_code, 0) << better.err;
  EXPECT_NE(better.out.find("2 improvements"), std::string::npos) << better.out;
  const CliResult same = run_modelstat_cli("results compare " + path("r.db") + " --base machine=vm-fast --new machine=vm-fast -f md");
  EXPECT_EQ(same.exit_code, 0) << same.err;
  EXPECT_NE(same.out.find("0 regressions, 0 improvements, 2 unchanged"), std::string::npos) << same.out;
  // Bad sides: exit 2.
  EXPECT_EQ(run_modelstat_cli("results compare " + path("r.db") + " --base host=a --new host=b").exit_code, 2);
  EXPECT_EQ(run_modelstat_cli("results compare " + path("r.db") + " --base machine=a --new commit=b").exit_code, 2);
  EXPECT_EQ(run_modelstat_cli("results compare " + path("r.db") + " --base machine=nosuch --new machine=vm-fast").exit_code, 2);
}

}  // namespace
}  // namespace modelstat::test

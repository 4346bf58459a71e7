// The results database: a result read back column by column, adding it twice,
// a newer schema refused with its version, an older one migrated with its rows,
// files that are not results databases, filters, and writers in several
// processes at once losing nothing.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analyzer/suite/cell_json.hpp"
#include "analyzer/suite/results_db.hpp"
#include "modelstat/error.hpp"
#include "suite_test_support.hpp"

namespace modelstat::test {
namespace {

using suite::CellResult;
using suite::ResultFilter;
using suite::ResultRow;
using suite::ResultsDb;

class ResultsDbTest : public ScratchFolder {};

TEST_F(ResultsDbTest, AResultReadsBackAsItWasWritten) {
  ResultsDb db(path("r.db"));
  EXPECT_EQ(db.schema_version(), suite::results_schema_version());
  CellResult r = hand_result("vm-a", 3, "0123456789abcdef", 0.004);
  r.cell.bindings = {{"seq", 16}};
  r.cell.requests = 4;
  r.measurement->batch_fps = 1234.5;
  EXPECT_TRUE(db.insert(r));
  const std::vector<ResultRow> rows = db.query({});
  ASSERT_EQ(rows.size(), 1u);
  const ResultRow& row = rows[0];
  EXPECT_EQ(row.cell_key, "0123456789abcdef");
  EXPECT_EQ(row.cell_index, 3);
  EXPECT_EQ(row.model, "model0");
  EXPECT_EQ(row.bindings, "seq=16");
  EXPECT_EQ(row.batch, 2);  // hand_result: 1 + index % 2
  EXPECT_EQ(row.mode, "async");
  EXPECT_EQ(row.requests, 4);
  EXPECT_EQ(row.machine_name, "vm-a");
  EXPECT_EQ(row.cpu_model, "Hand CPU");
  EXPECT_EQ(row.modelstat_commit, "abcdef1234");
  EXPECT_EQ(row.status, "ok");
  EXPECT_DOUBLE_EQ(*row.median_s, 0.004);
  EXPECT_DOUBLE_EQ(*row.fps, 2 / 0.004);
  EXPECT_DOUBLE_EQ(*row.batch_fps, 1234.5);
  EXPECT_EQ(row.samples, 3);
  EXPECT_EQ(*row.macs, 2000);
  EXPECT_DOUBLE_EQ(*row.forecast_error, 0.1);
  EXPECT_EQ(row.inputs, "x: float32 1x3x8x8");
  // The stored document is the record itself.
  const std::vector<std::string> records = db.records(rows);
  const CellResult back = suite::read_cell_result(records[0], "stored");
  EXPECT_EQ(back.measurement->latency.samples, r.measurement->latency.samples);
  EXPECT_EQ(back.cell.key, r.cell.key);
}

TEST_F(ResultsDbTest, AddingTheSameResultTwiceKeepsOneRow) {
  ResultsDb db(path("r.db"));
  const CellResult r = hand_result("vm-a", 0, "00000000000000a0", 0.01);
  EXPECT_TRUE(db.insert(r));
  EXPECT_FALSE(db.insert(r));
  EXPECT_EQ(db.insert_many({r, r, hand_result("vm-a", 1, "00000000000000a1", 0.01)}), 1);
  EXPECT_EQ(db.count({}), 2);
}

TEST_F(ResultsDbTest, ANewerSchemaIsRefusedWithItsVersion) {
  { ResultsDb db(path("r.db")); }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path("r.db").c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "PRAGMA user_version = 99", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  try {
    ResultsDb db(path("r.db"));
    ADD_FAILURE() << "opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_EQ(e.file(), path("r.db"));
    EXPECT_NE(e.message().find("schema version 99, newer than this modelstat's (" +
                               std::to_string(suite::results_schema_version()) + ")"),
              std::string::npos)
        << e.what();
  }
  write_file(path("suite.yaml"), "models: [" + sample_model("tiny_cnn.onnx") + "]\n");
  const CliResult r = run_modelstat_cli("results " + path("r.db"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("schema version 99"), std::string::npos) << r.err;
}

// Version 1 had no commit column on results: a file written then opens with its
// rows, each given the commit of its environment.
TEST_F(ResultsDbTest, AnOlderSchemaIsMigratedWithItsRows) {
  suite::create_results_db_at_version(path("old.db"), 1);
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path("old.db").c_str(), &raw), SQLITE_OK);
  const char* rows =
      "INSERT INTO machines VALUES ('1111111111111111', 'old-box', 'Old CPU', 2, 1024, '', '', 'old-box');"
      "INSERT INTO environments VALUES ('2222222222222222', '0.0.9', 'feedface00', '{}', '{}', '0-1');"
      "INSERT INTO runs VALUES ('run-old', 'local', 'old', 'old.yaml', '3333333333333333', '1111111111111111', 1, "
      "'2025-12-01T00:00:00Z', '2025-12-01T00:01:00Z');"
      "INSERT INTO results (run_id, cell_key, machine_id, env_id, suite_name, cell_index, model, model_hash, task, "
      "bindings, input_shapes, batch, threads, dtype, fusion, mode, requests, device, runtime, runtime_version, status, "
      "exit_code, error_type, error, started_at, finished_at, wall_s, median_s, samples, precision, record) VALUES "
      "('run-old', '4444444444444444', '1111111111111111', '2222222222222222', 'old', 0, 'oldnet', '5555555555555555', "
      "'inference', '', '', 1, 1, 'model', 'on', 'sync', 0, 'cpu', 'modelstat', '', 'ok', 0, '', '', "
      "'2025-12-01T00:00:00Z', '2025-12-01T00:00:30Z', 1.0, 0.25, 10, 'fp32', '{}');";
  ASSERT_EQ(sqlite3_exec(raw, rows, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(raw);
  sqlite3_close(raw);

  ResultsDb db(path("old.db"));
  EXPECT_EQ(db.schema_version(), suite::results_schema_version());
  ResultFilter f;
  f.commit = "feed";
  const std::vector<ResultRow> found = db.query(f);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].model, "oldnet");
  EXPECT_EQ(found[0].modelstat_commit, "feedface00");
  EXPECT_DOUBLE_EQ(*found[0].median_s, 0.25);
  // and the migrated file takes new results
  EXPECT_TRUE(db.insert(hand_result("vm-a", 0, "00000000000000a0", 0.01)));
  EXPECT_EQ(db.count({}), 2);
}

TEST_F(ResultsDbTest, FilesThatAreNotResultsDatabasesAreRefused) {
  write_file(path("text.db"), "this is not an SQLite file at all, just some bytes of text\n");
  EXPECT_THROW(ResultsDb(path("text.db")), Error);
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path("other.db").c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE photos (id INTEGER)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  try {
    ResultsDb db(path("other.db"));
    ADD_FAILURE() << "opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(e.message().find("not a modelstat results database"), std::string::npos) << e.what();
  }
  for (const std::string name : {"text.db", "other.db"}) {
    const CliResult r = run_modelstat_cli("results " + path(name));
    EXPECT_EQ(r.exit_code, 2) << name << ": " << r.err;
    EXPECT_NE(r.err.find(path(name)), std::string::npos) << r.err;
  }
  const CliResult missing = run_modelstat_cli("results " + path("missing.db"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(path("missing.db")));  // reading never creates one
}

TEST_F(ResultsDbTest, FiltersAndTheLatestResultPerCellAndMachine) {
  ResultsDb db(path("r.db"));
  CellResult old_a = hand_result("vm-a", 0, "00000000000000a0", 0.010, "run-1");
  CellResult new_a = hand_result("vm-a", 0, "00000000000000a0", 0.008, "run-2");
  new_a.finished_at = "2026-02-01T00:00:00Z";
  new_a.environment.id = "00000000000000dd";
  new_a.environment.modelstat_commit = "1234567890";
  CellResult b = hand_result("vm-b", 1, "00000000000000a1", 0.020, "run-3");
  for (const CellResult& r : {old_a, new_a, b}) db.insert(r);

  EXPECT_EQ(db.count({}), 2);  // the latest of vm-a's two runs, and vm-b's
  ResultFilter all;
  all.latest_only = false;
  EXPECT_EQ(db.count(all), 3);
  const auto latest = db.query({});
  ASSERT_EQ(latest.size(), 2u);
  EXPECT_EQ(latest[0].run_id, "run-2");
  ResultFilter machine;
  machine.machine = "vm-b";
  EXPECT_EQ(db.query(machine).size(), 1u);
  ResultFilter model;
  model.model = "model*";
  EXPECT_EQ(db.count(model), 2);
  model.model = "model1";
  EXPECT_EQ(db.count(model), 1);
  ResultFilter commit;
  commit.commit = "abcdef";  // the older run's commit: its result is the latest *with that commit*
  ASSERT_EQ(db.query(commit).size(), 2u);
  EXPECT_EQ(db.query(commit)[0].run_id, "run-1");
  ResultFilter dates;
  dates.since = "2026-01-15";
  EXPECT_EQ(db.count(dates), 1);
  dates.since.clear();
  dates.until = "2026-01-02";  // the whole day
  dates.latest_only = false;
  EXPECT_EQ(db.count(dates), 2);
  ResultFilter page;
  page.limit = 1;
  page.offset = 1;
  ASSERT_EQ(db.query(page).size(), 1u);
  EXPECT_EQ(db.query(page)[0].machine_name, "vm-b");
}

// Two processes adding 150 results each to one database at the same moment: all 300 are there.
TEST_F(ResultsDbTest, WritersInSeveralProcessesLoseNothing) {
  { ResultsDb db(path("r.db")); }
  constexpr int kPerWriter = 150;
  std::vector<pid_t> children;
  for (int w = 0; w < 2; ++w) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int code = 0;
      try {
        ResultsDb db(path("r.db"));
        for (int i = 0; i < kPerWriter; ++i) {
          char key[17];
          std::snprintf(key, sizeof key, "%04x%012x", w, i);
          if (!db.insert(hand_result(w == 0 ? "writer-a" : "writer-b", i, key, 0.001 * (i + 1)))) code = 3;
        }
      } catch (...) {
        code = 4;
      }
      _exit(code);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  ResultsDb db(path("r.db"));
  EXPECT_EQ(db.count({}), 2 * kPerWriter);
}

}  // namespace
}  // namespace modelstat::test

namespace modelstat::test {
namespace {

// The plans SQLite picks (no statistics are kept, so a small file gets the plan a million rows
// get): the page's query (every row, in order) reads results_order in order, never sorts, and
// finds each row's newer results through results_latest; a model pattern is a range of
// results_order; a machine, a status, a batch and thread count their own indexes.
TEST_F(ResultsDbTest, QueriesReadTheIndexesAndThePageNeverSorts) {
  ResultsDb db(path("r.db"));
  for (int i = 0; i < 6; ++i) db.insert(hand_result(i % 2 ? "vm-a" : "vm-b", i, "00000000000000" + std::to_string(10 + i), 0.01));
  const auto plan_of = [&](const ResultFilter& f) {
    std::string all;
    for (const std::string& step : db.query_plan(f)) all += step + "\n";
    return all;
  };
  const std::string page = plan_of({});
  EXPECT_NE(page.find("SCAN r USING INDEX results_order"), std::string::npos) << page;
  EXPECT_NE(page.find("USING COVERING INDEX results_latest (cell_key=? AND machine_id=?)"), std::string::npos) << page;
  EXPECT_EQ(page.find("TEMP B-TREE"), std::string::npos) << page;
  ResultFilter model;
  model.model = "model0*";
  const std::string by_model = plan_of(model);
  EXPECT_NE(by_model.find("SEARCH r USING INDEX results_order (model>? AND model<?)"), std::string::npos) << by_model;
  EXPECT_EQ(by_model.find("TEMP B-TREE"), std::string::npos) << by_model;
  ResultFilter machine;
  machine.machine = "vm-a";
  const std::string by_machine = plan_of(machine);
  EXPECT_NE(by_machine.find("SEARCH r USING INDEX results_machine (machine_id=?)"), std::string::npos) << by_machine;
  ResultFilter failed;
  failed.status = "failed";
  const std::string by_status = plan_of(failed);
  EXPECT_NE(by_status.find("SEARCH r USING INDEX results_status (status>? AND status<?)"), std::string::npos) << by_status;
  ResultFilter setting;
  setting.batch = 8;
  setting.threads = 4;
  const std::string by_setting = plan_of(setting);
  EXPECT_NE(by_setting.find("SEARCH r USING INDEX results_setting (batch=? AND threads=?)"), std::string::npos) << by_setting;
  // Each row's newer results are searched by its cell and machine, whatever the filter: through a
  // filter's index they were a scan of the whole answer per row (quadratic).
  for (const std::string& plan : {page, by_model, by_machine, by_status, by_setting}) {
    for (size_t at = plan.find("SEARCH r2 "); at != std::string::npos; at = plan.find("SEARCH r2 ", at + 1)) {
      const std::string line = plan.substr(at, plan.find('\n', at) - at);
      EXPECT_NE(line.find("INDEX results_latest (cell_key=? AND machine_id=?"), std::string::npos) << plan;
    }
  }
}

}  // namespace
}  // namespace modelstat::test

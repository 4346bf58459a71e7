// `suite collect`: result files merged once however often it runs; a corrupt
// file, a file of another schema or kind reported and not merged while the rest
// merge; links never followed, in or out of the folder.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <tuple>

#include "analyzer/suite/cell_json.hpp"
#include "analyzer/suite/result_files.hpp"
#include "analyzer/suite/results_db.hpp"
#include "modelstat/error.hpp"
#include "suite_test_support.hpp"

namespace modelstat::test {
namespace {

namespace fs = std::filesystem;
using suite::CellResult;

class CollectTest : public ScratchFolder {};

TEST_F(CollectTest, MergesOnceReportsCorruptFilesAndFollowsNoLink) {
  const std::string dir = path("results");
  for (int i = 0; i < 5; ++i) {
    char key[17];
    std::snprintf(key, sizeof key, "00000000000001%02x", i);
    suite::write_result_file(dir + (i < 3 ? "" : "/node2"), hand_result("vm-a", i, key, 0.01 + 0.001 * i));
  }
  // Bad files among them, named as results.
  const CellResult good = hand_result("vm-a", 9, "0000000000000999", 0.02);
  const std::string text = suite::cell_result_text(good);
  write_file(dir + "/cell-000010-truncated.json", text.substr(0, text.size() / 2));
  write_file(dir + "/cell-000011-profile.json", "{\"schema_version\": \"1.7.0\", \"kind\": \"profile\"}\n");
  std::string newer = text;
  newer.replace(newer.find("\"1.0.0\""), 7, "\"2.0.0\"");
  write_file(dir + "/cell-000012-newer.json", newer);
  std::string negative = text;
  negative.replace(negative.find("\"samples_s\":[") + 13, 0, "-1.0,");
  write_file(dir + "/cell-000013-negative.json", negative);
  write_file(dir + "/notes.txt", "not a result\n");
  // A valid result outside the folder, reached through links: never read.
  fs::create_directories(path("outside"));
  suite::write_result_file(path("outside"), good);
  const std::string outside_file = path("outside") + "/" + suite::result_file_name(good);
  fs::create_symlink(outside_file, dir + "/cell-000014-link.json");
  fs::create_directory_symlink(path("outside"), dir + "/linked-folder");

  suite::ResultsDb db(path("r.db"));
  const suite::CollectReport first = suite::collect_results(dir, db, {});
  EXPECT_EQ(first.files, 9);  // 5 good + 4 bad named as results
  EXPECT_EQ(first.added, 5);
  EXPECT_EQ(first.already, 0);
  EXPECT_EQ(first.other_files, 1);
  ASSERT_EQ(first.refused.size(), 4u);
  for (const char* name : {"truncated", "profile", "newer", "negative"}) {
    bool named = false;
    for (const std::string& why : first.refused) named = named || why.find(name) != std::string::npos;
    EXPECT_TRUE(named) << name;
  }
  EXPECT_EQ(first.links.size(), 2u);
  EXPECT_EQ(db.count({}), 5);  // not the outside result

  const suite::CollectReport second = suite::collect_results(dir, db, {});
  EXPECT_EQ(second.added, 0);
  EXPECT_EQ(second.already, 5);
  EXPECT_EQ(db.count({}), 5);

  // The command line: the good files merge, the refused ones are named, exit 2.
  const CliResult r = run_modelstat_cli("suite collect " + dir + " --into " + path("cli.db"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.out.find("9 result files"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("5 added"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("cell-000010-truncated.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("field \"measurement.latency.samples_s[0]\""), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("a link, not followed"), std::string::npos) << r.err;
  EXPECT_EQ(suite::ResultsDb(path("cli.db")).count({}), 5);
  const CliResult again = run_modelstat_cli("suite collect " + dir + " --into " + path("cli.db"));
  EXPECT_NE(again.out.find("0 added"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("5 already there"), std::string::npos) << again.out;
}

// Results spread over machines (as a Slurm array leaves them), merged in transactions smaller than
// the folder: each machine's results land once, across transaction boundaries, and the same folder
// merged again by a second connection adds nothing.
TEST_F(CollectTest, TransactionsSmallerThanTheFolderMergeEveryFileOnce) {
  const std::string dir = path("results");
  for (int m = 0; m < 3; ++m)
    for (int i = 0; i < 7; ++i) {
      char key[17];
      std::snprintf(key, sizeof key, "00000000000002%02x", i);
      suite::write_result_file(dir + "/vm-" + std::to_string(m), hand_result("vm-" + std::to_string(m), i, key, 0.01 + 0.001 * i));
    }
  {
    suite::ResultsDb db(path("r.db"));
    const suite::CollectReport r = suite::collect_results(dir, db, {}, 4);  // 21 files: 6 transactions
    EXPECT_EQ(r.files, 21);
    EXPECT_EQ(r.added, 21);
    EXPECT_EQ(r.already, 0);
    EXPECT_EQ(db.count({}), 21);
  }
  suite::ResultsDb again(path("r.db"));
  const suite::CollectReport r = suite::collect_results(dir, again, {}, 5);
  EXPECT_EQ(r.added, 0);
  EXPECT_EQ(r.already, 21);
  EXPECT_EQ(again.count({}), 21);
}

// The results' indexes as sqlite_master has them: (name, statement).
std::set<std::pair<std::string, std::string>> indexes(suite::ResultsDb& db) {
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db.handle(), "SELECT name, coalesce(sql, '') FROM sqlite_master WHERE type = 'index'", -1,
                               &s, nullptr),
            SQLITE_OK);
  std::set<std::pair<std::string, std::string>> out;
  while (sqlite3_step(s) == SQLITE_ROW)
    out.emplace(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)), reinterpret_cast<const char*>(sqlite3_column_text(s, 1)));
  sqlite3_finalize(s);
  return out;
}

// What a database holds, one tuple per result: (machine, cell key, median).
std::set<std::tuple<std::string, std::string, double>> contents(suite::ResultsDb& db) {
  std::set<std::tuple<std::string, std::string, double>> out;
  db.each({}, [&](const suite::ResultRow& r) { out.emplace(r.machine_name, r.cell_key, r.median_s.value_or(-1)); });
  return out;
}

// 3 machines x `cells` results of run `run` (medians 10 ms + 1 us x cell) and one truncated file.
void write_folder(const std::string& dir, int cells, const std::string& run = "run-a") {
  for (int m = 0; m < 3; ++m)
    for (int i = 0; i < cells; ++i) {
      char key[17];
      std::snprintf(key, sizeof key, "0000000000%06x", i);
      suite::write_result_file(dir + "/vm-" + std::to_string(m), hand_result("vm-" + std::to_string(m), i, key, 0.01 + 1e-6 * i, run));
    }
  write_file(dir + "/cell-999999-truncated.json", "{\"schema_version\": \"1.0.0\", \"kind\": ");
}

// A bulk load (indexes dropped, rebuilt at the end) merges what transactions of a few files
// merge, refuses the same file, leaves the indexes a fresh database has, and stays idempotent.
TEST_F(CollectTest, ABulkLoadMergesWhatSmallTransactionsMergeAndRebuildsTheIndexes) {
  const std::string dir = path("results");
  write_folder(dir, 7);
  suite::ResultsDb fresh(path("fresh.db"));
  const auto schema_indexes = indexes(fresh);
  EXPECT_GE(schema_indexes.size(), 5u);  // the secondary ones and the UNIQUE constraint's

  suite::ResultsDb small(path("small.db"));
  const suite::CollectReport by_batches = suite::collect_results(dir, small, {}, 4, /*bulk_files=*/1000000);
  suite::ResultsDb bulk(path("bulk.db"));
  const suite::CollectReport by_bulk = suite::collect_results(dir, bulk, {}, 4, /*bulk_files=*/1);
  for (const suite::CollectReport* r : {&by_batches, &by_bulk}) {
    EXPECT_EQ(r->files, 22);
    EXPECT_EQ(r->added, 21);
    ASSERT_EQ(r->refused.size(), 1u);
    EXPECT_NE(r->refused[0].find("truncated"), std::string::npos) << r->refused[0];
  }
  EXPECT_EQ(contents(bulk).size(), 21u);
  EXPECT_EQ(contents(bulk), contents(small));
  EXPECT_EQ(indexes(bulk), schema_indexes);

  const suite::CollectReport again = suite::collect_results(dir, bulk, {}, 4, 1);
  EXPECT_EQ(again.added, 0);
  EXPECT_EQ(again.already, 21);
  EXPECT_EQ(indexes(bulk), schema_indexes);
  EXPECT_EQ(bulk.count({}), 21);
}

// A bulk load stopped halfway (here an error from its progress callback, after 1,000 files)
// leaves the database as it was: no row of the load, every index in place; a second
// connection opened meanwhile reads the old rows through the old indexes.
TEST_F(CollectTest, AnInterruptedBulkLoadLeavesTheDatabaseAsItWas) {
  const std::string first = path("first"), second = path("second");
  write_folder(first, 2);
  write_folder(second, 400, "run-b");  // 1,200 results: the callback runs at 1,000
  suite::ResultFilter every;  // every run's rows: run-b's cells 0 and 1 shadow run-a's in the latest view
  every.latest_only = false;
  suite::ResultsDb db(path("r.db"));
  ASSERT_EQ(suite::collect_results(first, db, {}).added, 6);
  const auto before = indexes(db);
  const auto stop = [&](int64_t files) {
    suite::ResultsDb reader(path("r.db"));  // mid-load, the indexes dropped in the open transaction
    EXPECT_EQ(indexes(reader), before);
    EXPECT_EQ(reader.count(every), 6);
    throw Error(ErrorKind::Runtime, "stopped after " + std::to_string(files) + " files");
  };
  EXPECT_THROW(suite::collect_results(second, db, stop, 100, 1), Error);  // indexes dropped at 100
  EXPECT_EQ(db.count(every), 6);
  EXPECT_EQ(indexes(db), before);
  suite::ResultsDb other(path("r.db"));
  EXPECT_EQ(other.count(every), 6);
  // And the load, run again to the end, merges everything.
  const suite::CollectReport r = suite::collect_results(second, db, {}, 100, 1);
  EXPECT_EQ(r.added, 1200);
  EXPECT_EQ(db.count(every), 1206);
  EXPECT_EQ(indexes(db), before);
}

TEST_F(CollectTest, TheFolderItselfMustBeAFolderNotALink) {
  fs::create_directories(path("real"));
  fs::create_directory_symlink(path("real"), path("alias"));
  EXPECT_EQ(run_modelstat_cli("suite collect " + path("alias") + " --into " + path("r.db")).exit_code, 2);
  EXPECT_EQ(run_modelstat_cli("suite collect " + path("none") + " --into " + path("r.db")).exit_code, 2);
}

TEST_F(CollectTest, AResultFileReadsBackAsTheRecord) {
  CellResult r = hand_result("vm-a", 1, "0000000000000abc", 0.003);
  r.cell.bindings = {{"seq", 8}};
  r.measurement->tokens = 8;
  r.measurement->latency_per_token_s = 0.003 / 8;
  r.notices = {"a notice"};
  const CellResult back = suite::read_cell_result(suite::cell_result_text(r), "mem");
  EXPECT_EQ(suite::cell_result_text(back), suite::cell_result_text(r));
}

}  // namespace
}  // namespace modelstat::test

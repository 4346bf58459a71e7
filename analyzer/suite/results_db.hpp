// The results database: one SQLite file (docs/suites.md, "The results
// database"). WAL mode, so readers never block the writer and two suites can
// write one file at once (each waits for the other's transaction, up to
// kBusyTimeoutMs); one transaction per cell, so a killed suite leaves no partial row.
// The schema is versioned (PRAGMA user_version): an older file is migrated
// step by step when opened, a newer one refused with its version.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "modelstat/suite.hpp"

struct sqlite3;

namespace modelstat::suite {

// How long a writer waits for another's transaction (ms): a cell's takes
// milliseconds, a bulk collect of a million results minutes (bench/RESULTS.md).
constexpr int kBusyTimeoutMs = 30 * 60 * 1000;

// The schema version this modelstat writes.
int results_schema_version();

// A run: one `suite run` (or one results folder of `suite cell` tasks) on one machine.
struct RunInfo {
  std::string run_id, suite_name, suite_file, suite_hash, machine_id;
  int64_t cells = 0;
  std::string started_at, finished_at;  // finished_at "" while it has cells to run
};

class ResultsDb {
 public:
  // Opens `path`, creating it (and its folder) when absent. Error(Input) naming
  // the file: not an SQLite file, not a modelstat results database, or written
  // by a newer modelstat (its schema version is said). An older schema is
  // migrated in one transaction.
  explicit ResultsDb(const std::string& path);
  ~ResultsDb();
  ResultsDb(const ResultsDb&) = delete;
  ResultsDb& operator=(const ResultsDb&) = delete;

  const std::string& path() const { return path_; }
  int schema_version() const;

  // Adds one result with its machine and environment, in one transaction.
  // Returns false when the database already holds it (same run, cell and
  // machine): adding is idempotent.
  bool insert(const CellResult& r);
  // Adds many in one transaction (collect); returns how many were new. texts[i],
  // when given, is results[i]'s document as it was read, stored as it is. Inside a
  // bulk load, they join its transaction.
  int64_t insert_many(const std::vector<CellResult>& results, const std::vector<std::string>& texts = {});

  // A bulk load (a collect of many files): one transaction that takes every
  // insert_many() until commit_bulk(). drop_indexes() drops the results' secondary
  // indexes in it, and commit_bulk() builds them again: a sort each, where keeping
  // them would update a random page of every index per row, and the load slows as
  // the database outgrows the page cache (bench/RESULTS.md, "Suites (issue 28)").
  // Readers see the database as it was, indexes included, until the commit; other
  // writers wait for it (kBusyTimeoutMs). A load that does not commit (an error, a
  // kill, a power cut) rolls back whole: the database is as before, indexes
  // included, and collecting again merges everything (merging is idempotent).
  void begin_bulk();
  void drop_indexes();  // inside a bulk load
  void commit_bulk();   // builds the dropped indexes, commits, and truncates the write-ahead log
  void abort_bulk() noexcept;  // rolls the whole load back (the destructor does too)
  // The highest result id: how many results the database holds, about, without counting them.
  int64_t result_id_max();
  // SQLite's page cache for this connection, at most `bytes` (allocated as pages are used). A bulk
  // merge wants its indexes' pages to stay in memory across its transactions: with the default 2 MB,
  // every transaction rewrites each index page it touches to the WAL, and a million results spread
  // over 100 machines rewrote tens of GB (bench/RESULTS.md, "Suites (issue 28)").
  void set_cache_bytes(int64_t bytes);

  void begin_run(const RunInfo& run);  // records a run (kept as it is when already there)
  void finish_run(const std::string& run_id);
  // The latest run `suite run` began with this suite content on this machine
  // (what --resume continues when it has not finished); nullopt if none.
  std::optional<RunInfo> latest_run(const std::string& suite_hash, const std::string& machine_id);
  std::set<std::string> cells_done(const std::string& run_id);  // cell keys with a result in the run

  std::vector<ResultRow> query(const ResultFilter& filter);
  // The same rows, one at a time (the row is reused between calls): a million rows without a million in memory.
  void each(const ResultFilter& filter, const std::function<void(const ResultRow&)>& visit);
  int64_t count(const ResultFilter& filter);  // rows query() would return without limit/offset
  // SQLite's plan for query()/each() (EXPLAIN QUERY PLAN, one step a line): how a test
  // checks that the filters and the page's ordered scan use the indexes.
  std::vector<std::string> query_plan(const ResultFilter& filter);
  // The stored documents (cell_json.hpp) of `rows`, in their order.
  std::vector<std::string> records(const std::vector<ResultRow>& rows);

  // The raw handle, for tests that write an older schema.
  sqlite3* handle() { return db_; }

 private:
  void exec(const std::string& sql);
  void migrate();
  std::string path_;
  sqlite3* db_ = nullptr;
  bool bulk_ = false;                      // in a bulk load's transaction
  std::vector<std::string> bulk_indexes_;  // the CREATE INDEX statements it dropped
};

// Creates an empty database at exactly `version` (1 .. results_schema_version()):
// how the migration test makes the older file a newer modelstat must read.
void create_results_db_at_version(const std::string& path, int version);

}  // namespace modelstat::suite

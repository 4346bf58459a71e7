#include "analyzer/suite/results_db.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iterator>
#include <set>
#include <thread>
#include <filesystem>
#include <variant>

#include "analyzer/suite/cell_json.hpp"
#include "modelstat/error.hpp"

namespace modelstat::suite {

namespace {

// A file that is not a database, or a damaged one, is the user's input (exit 2); any other SQLite
// failure is a runtime one.
ErrorKind error_kind_of(sqlite3* db) {
  const int code = sqlite3_extended_errcode(db);
  return code == SQLITE_NOTADB || code == SQLITE_CORRUPT ? ErrorKind::Input : ErrorKind::Runtime;
}

// The schema, as the steps that build it: step k takes a version k-1 file to
// version k. A new version appends a step; a written step never changes, so
// every older file migrates along the same path (docs/suites.md, "Schema").
const char* const kMigrations[] = {
    // 1: machines, environments, runs and results; the full record beside the columns results filters on.
    R"sql(
CREATE TABLE modelstat_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO modelstat_meta VALUES ('application', 'modelstat results');
CREATE TABLE machines (
  machine_id TEXT PRIMARY KEY, name TEXT NOT NULL, cpu_model TEXT NOT NULL, cores INTEGER NOT NULL,
  memory_bytes INTEGER NOT NULL, gpu TEXT NOT NULL, gpu_driver TEXT NOT NULL, host TEXT NOT NULL);
CREATE TABLE environments (
  env_id TEXT PRIMARY KEY, modelstat_version TEXT NOT NULL, modelstat_commit TEXT NOT NULL,
  libraries TEXT NOT NULL, variables TEXT NOT NULL, cpu_affinity TEXT NOT NULL);
CREATE TABLE runs (
  run_id TEXT PRIMARY KEY, source TEXT NOT NULL, suite_name TEXT NOT NULL, suite_file TEXT NOT NULL,
  suite_hash TEXT NOT NULL, machine_id TEXT NOT NULL, cells INTEGER NOT NULL, started_at TEXT NOT NULL,
  finished_at TEXT NOT NULL);
CREATE TABLE results (
  result_id INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL, cell_key TEXT NOT NULL, machine_id TEXT NOT NULL REFERENCES machines,
  env_id TEXT NOT NULL REFERENCES environments,
  suite_name TEXT NOT NULL, cell_index INTEGER NOT NULL, model TEXT NOT NULL, model_hash TEXT NOT NULL,
  task TEXT NOT NULL, bindings TEXT NOT NULL, input_shapes TEXT NOT NULL, batch INTEGER NOT NULL,
  threads INTEGER NOT NULL, dtype TEXT NOT NULL, fusion TEXT NOT NULL, mode TEXT NOT NULL, requests INTEGER NOT NULL,
  device TEXT NOT NULL, runtime TEXT NOT NULL, runtime_version TEXT NOT NULL,
  status TEXT NOT NULL, exit_code INTEGER NOT NULL, error_type TEXT NOT NULL, error TEXT NOT NULL,
  started_at TEXT NOT NULL, finished_at TEXT NOT NULL, wall_s REAL,
  median_s REAL, mean_s REAL, p90_s REAL, p99_s REAL, cv REAL, samples INTEGER NOT NULL, fps REAL,
  batch_fps REAL, average_pass_s REAL, latency_per_token_s REAL,
  params INTEGER, macs INTEGER, flops INTEGER, bytes INTEGER, precision TEXT NOT NULL,
  forecast_s REAL, forecast_error REAL,
  record TEXT NOT NULL,
  UNIQUE (run_id, cell_key, machine_id));
)sql",
    // 2: the commit on each row (filters by commit without a join), an async cell's
    // latency per request (the page's sync-vs-async chart), the documents moved to a
    // table of their own (results' rows stay narrow: a scan of a million rows reads
    // hundreds of MB, not GB), and the indexes of the filters and of "the latest
    // result per cell and machine".
    R"sql(
ALTER TABLE results ADD COLUMN modelstat_commit TEXT NOT NULL DEFAULT '';
UPDATE results SET modelstat_commit =
  COALESCE((SELECT e.modelstat_commit FROM environments e WHERE e.env_id = results.env_id), '');
ALTER TABLE results ADD COLUMN async_median_s REAL;
UPDATE results SET async_median_s = json_extract(record, '$.measurement.async_latency.median_s')
  WHERE json_valid(record);
CREATE TABLE records (result_id INTEGER PRIMARY KEY REFERENCES results, record TEXT NOT NULL);
INSERT INTO records SELECT result_id, record FROM results;
ALTER TABLE results DROP COLUMN record;
CREATE INDEX results_model ON results (model);
CREATE INDEX results_machine ON results (machine_id);
CREATE INDEX results_finished ON results (finished_at);
CREATE INDEX results_latest ON results (cell_key, machine_id, finished_at);
CREATE INDEX results_order ON results (model, runtime, device, dtype, fusion, requests, batch, threads, cell_key,
  machine_id, finished_at);
)sql",
    // 3: the indexes of the status and batch/threads filters: without them `--status failed` read every row and
    // `--batch 8 --threads 4` all of results_order (19 s and 10 s on a million results, bench/RESULTS.md).
    R"sql(
CREATE INDEX results_status ON results (status);
CREATE INDEX results_setting ON results (batch, threads);
)sql",
};
constexpr int kSchemaVersion = static_cast<int>(sizeof kMigrations / sizeof kMigrations[0]);

using Value = std::variant<std::nullptr_t, int64_t, double, std::string>;

class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql, const std::string& path) : db_(db), path_(path) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) fail("prepare");
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement& bind(int i, const Value& v) {
    int rc = SQLITE_OK;
    if (std::holds_alternative<std::nullptr_t>(v)) rc = sqlite3_bind_null(stmt_, i);
    if (const auto* n = std::get_if<int64_t>(&v)) rc = sqlite3_bind_int64(stmt_, i, *n);
    if (const auto* d = std::get_if<double>(&v)) rc = std::isfinite(*d) ? sqlite3_bind_double(stmt_, i, *d) : sqlite3_bind_null(stmt_, i);
    if (const auto* s = std::get_if<std::string>(&v))
      rc = sqlite3_bind_text(stmt_, i, s->data(), static_cast<int>(s->size()), SQLITE_TRANSIENT);
    if (rc != SQLITE_OK) fail("bind");
    return *this;
  }
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail("step");
  }
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  int64_t integer(int col) const { return sqlite3_column_int64(stmt_, col); }
  std::string text(int col) const {
    const auto* p = sqlite3_column_text(stmt_, col);
    return p ? std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, col))) : "";
  }
  std::optional<double> real(int col) const {
    if (sqlite3_column_type(stmt_, col) == SQLITE_NULL) return std::nullopt;
    return sqlite3_column_double(stmt_, col);
  }
  std::optional<int64_t> optional_integer(int col) const {
    if (sqlite3_column_type(stmt_, col) == SQLITE_NULL) return std::nullopt;
    return sqlite3_column_int64(stmt_, col);
  }

 private:
  [[noreturn]] void fail(const char* what) const {
    throw Error(error_kind_of(db_), fmt::format("results database: {}: {}", what, sqlite3_errmsg(db_)), path_);
  }
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string path_;
};

Value optional_value(const std::optional<double>& v) { return v ? Value(*v) : Value(nullptr); }
Value optional_value(const std::optional<int64_t>& v) { return v ? Value(*v) : Value(nullptr); }

// An SQL transaction that rolls back unless committed (an exception, or the
// process ending, leaves no partial row).
class Transaction {
 public:
  explicit Transaction(const std::function<void(const std::string&)>& exec) : exec_(exec) { exec_("BEGIN IMMEDIATE"); }
  ~Transaction() {
    if (!done_) try {
        exec_("ROLLBACK");
      } catch (...) {
      }
  }
  void commit() {
    exec_("COMMIT");
    done_ = true;
  }

 private:
  std::function<void(const std::string&)> exec_;
  bool done_ = false;
};

void apply_migrations(sqlite3* db, const std::string& path, int from, int to) {
  for (int v = from; v < to; ++v) {
    char* message = nullptr;
    if (sqlite3_exec(db, kMigrations[v], nullptr, nullptr, &message) != SQLITE_OK) {
      const std::string why = message ? message : "unknown";
      sqlite3_free(message);
      throw Error(ErrorKind::Runtime, fmt::format("results database: migrating to schema {}: {}", v + 1, why), path);
    }
  }
  char* message = nullptr;
  sqlite3_exec(db, fmt::format("PRAGMA user_version = {}", to).c_str(), nullptr, nullptr, &message);
  sqlite3_free(message);
}

sqlite3* open_db(const std::string& path) {
  std::error_code ec;
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK) {
    const std::string why = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    throw Error(ErrorKind::Input, "cannot open the results database: " + why, path);
  }
  // Two writers wait for each other's transaction instead of failing.
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  return db;
}

// PRAGMA journal_mode = WAL, retried while the file is busy. Two processes creating one database at once
// (two suites writing one results file) each hold the shared lock of the rollback journal a new file starts
// with, and the switch needs the exclusive one: SQLite then answers SQLITE_BUSY at once instead of calling
// the busy handler, which could only deadlock. One of them gets it after the other's statement ends.
std::string switch_to_wal(sqlite3* db, const std::string& path) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  for (;;) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db, "PRAGMA journal_mode = WAL", -1, &stmt, nullptr);
    if (rc == SQLITE_OK) rc = sqlite3_step(stmt);
    const unsigned char* text = rc == SQLITE_ROW ? sqlite3_column_text(stmt, 0) : nullptr;
    const std::string mode = text ? reinterpret_cast<const char*>(text) : "";
    sqlite3_finalize(stmt);
    if (rc == SQLITE_ROW) return mode;
    if (rc != SQLITE_BUSY || std::chrono::steady_clock::now() > deadline) {
      throw Error(error_kind_of(db), std::string("results database: ") + sqlite3_errmsg(db), path);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

int results_schema_version() { return kSchemaVersion; }

ResultsDb::ResultsDb(const std::string& path) : path_(path) {
  db_ = open_db(path);
  try {
    exec("PRAGMA foreign_keys = ON");
    // WAL: readers and one writer at a time without blocking each other; FULL: a
    // committed cell survives a power cut, not only a killed process.
    const std::string mode = switch_to_wal(db_, path_);
    if (mode != "wal") throw Error(ErrorKind::Runtime, "results database: cannot switch to WAL mode (" + mode + ")", path_);
    exec("PRAGMA synchronous = FULL");
    migrate();
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

ResultsDb::~ResultsDb() {
  abort_bulk();  // an uncommitted bulk load leaves nothing
  sqlite3_close(db_);
}

void ResultsDb::exec(const std::string& sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    const std::string why = message ? message : sqlite3_errmsg(db_);
    sqlite3_free(message);
    throw Error(error_kind_of(db_), "results database: " + why, path_);
  }
}

int ResultsDb::schema_version() const {
  Statement s(db_, "PRAGMA user_version", path_);
  s.step();
  return static_cast<int>(s.integer(0));
}

void ResultsDb::migrate() {
  if (schema_version() == kSchemaVersion) return;  // the common case, without taking the write lock
  Transaction t([this](const std::string& sql) { exec(sql); });
  const int version = schema_version();  // again, now that no other writer can change it
  if (version > kSchemaVersion)
    throw Error(ErrorKind::Input,
                fmt::format("the results database has schema version {}, newer than this modelstat's ({}): read it with "
                            "the modelstat that wrote it, or a newer one",
                            version, kSchemaVersion),
                path_);
  if (version == 0) {
    Statement tables(db_, "SELECT count(*) FROM sqlite_master", path_);
    tables.step();
    if (tables.integer(0) > 0)
      throw Error(ErrorKind::Input, "not a modelstat results database (an SQLite file with other tables)", path_);
  }
  apply_migrations(db_, path_, version, kSchemaVersion);
  t.commit();
}

void create_results_db_at_version(const std::string& path, int version) {
  if (version < 1 || version > kSchemaVersion) throw_usage(fmt::format("no results schema version {}", version));
  sqlite3* db = open_db(path);
  try {
    apply_migrations(db, path, 0, version);
  } catch (...) {
    sqlite3_close(db);
    throw;
  }
  sqlite3_close(db);
}

namespace {

std::string joined(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// Adds results, its statements prepared once: a collect of a million files spends its
// time reading them, not compiling SQL. Machines and environments are added once each.
class Inserter {
 public:
  Inserter(sqlite3* db, const std::string& path)
      : db_(db),
        machine_(db, "INSERT OR IGNORE INTO machines VALUES (?, ?, ?, ?, ?, ?, ?, ?)", path),
        environment_(db, "INSERT OR IGNORE INTO environments VALUES (?, ?, ?, ?, ?, ?)", path),
        // A result collected from a folder whose run no `suite run` recorded.
        run_(db, "INSERT OR IGNORE INTO runs VALUES (?, 'collected', ?, ?, ?, ?, 0, ?, ?)", path),
        result_(db,
                "INSERT OR IGNORE INTO results (run_id, cell_key, machine_id, env_id, suite_name, cell_index, model, "
                "model_hash, task, bindings, input_shapes, batch, threads, dtype, fusion, mode, requests, device, runtime, "
                "runtime_version, status, exit_code, error_type, error, started_at, finished_at, wall_s, median_s, mean_s, "
                "p90_s, p99_s, cv, samples, fps, batch_fps, average_pass_s, latency_per_token_s, params, macs, flops, "
                "bytes, precision, forecast_s, forecast_error, modelstat_commit, async_median_s) VALUES (?, ?, ?, ?, ?, "
                "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                "?, ?, ?, ?, ?)",
                path),
        record_(db, "INSERT INTO records VALUES (?, ?)", path) {}

  // `text`: the document as read (a result file), stored as it is; else the record is written.
  bool add(const CellResult& r, const std::string* text) {
    if (machines_.insert(r.machine.id).second) {
      machine_.reset();
      machine_.bind(1, r.machine.id).bind(2, r.machine.name).bind(3, r.machine.cpu_model).bind(4, r.machine.cores);
      machine_.bind(5, r.machine.memory_bytes).bind(6, r.machine.gpu).bind(7, r.machine.gpu_driver).bind(8, r.machine.host);
      machine_.step();
    }
    if (environments_.insert(r.environment.id).second) {
      const Json j = r.environment;
      environment_.reset();
      environment_.bind(1, r.environment.id).bind(2, r.environment.modelstat_version).bind(3, r.environment.modelstat_commit);
      environment_.bind(4, j["libraries"].dump()).bind(5, j["variables"].dump()).bind(6, r.environment.cpu_affinity);
      environment_.step();
    }
    if (runs_.insert(r.run_id).second) {
      run_.reset();
      run_.bind(1, r.run_id).bind(2, r.suite_name).bind(3, r.suite_file).bind(4, r.suite_hash).bind(5, r.machine.id);
      run_.bind(6, r.started_at).bind(7, r.finished_at);
      run_.step();
    }
    std::string bindings;
    for (const auto& [k, v] : r.cell.bindings) bindings += (bindings.empty() ? "" : ",") + k + "=" + std::to_string(v);
    const Measurement* m = r.measurement ? &*r.measurement : nullptr;
    const StaticTotals* t = r.totals ? &*r.totals : nullptr;
    const Value none = nullptr;
    const Value values[] = {
        r.run_id, r.cell.key, r.machine.id, r.environment.id, r.suite_name, r.cell.index, r.cell.model,
        r.cell.model_hash, r.cell.task, bindings, t ? joined(t->inputs, "; ") : std::string(), r.cell.batch,
        int64_t(r.cell.threads), r.cell.dtype, r.cell.fusion, r.cell.mode_name(), int64_t(r.cell.requests),
        r.cell.device, r.cell.runtime, r.runtime_version, r.status, int64_t(r.exit_code), r.error_type, r.error,
        r.started_at, r.finished_at, r.wall_s, m ? Value(m->latency.median) : none, m ? Value(m->latency.mean) : none,
        m ? Value(m->latency.p90) : none, m ? Value(m->latency.p99) : none, m ? Value(m->latency.cv) : none,
        m ? int64_t(m->latency.samples.size()) : int64_t(0), m ? Value(m->fps) : none,
        m ? optional_value(m->batch_fps) : none, m ? Value(m->average_pass_s) : none,
        m ? optional_value(m->latency_per_token_s) : none, t ? optional_value(t->params) : none,
        t ? optional_value(t->macs) : none, t ? optional_value(t->flops) : none, t ? optional_value(t->bytes) : none,
        t ? t->precision : std::string(), optional_value(r.forecast.latency_s), optional_value(r.forecast.error),
        r.environment.modelstat_commit, m && m->async_latency ? Value(m->async_latency->median) : none};
    result_.reset();
    for (size_t i = 0; i < std::size(values); ++i) result_.bind(static_cast<int>(i + 1), values[i]);
    result_.step();
    if (sqlite3_changes(db_) == 0) return false;  // already there
    record_.reset();
    record_.bind(1, int64_t(sqlite3_last_insert_rowid(db_))).bind(2, text ? *text : cell_result_text(r));
    record_.step();
    return true;
  }

 private:
  sqlite3* db_;
  Statement machine_, environment_, run_, result_, record_;
  std::set<std::string> machines_, environments_, runs_;
};

}  // namespace

bool ResultsDb::insert(const CellResult& r) {
  Transaction t([this](const std::string& sql) { exec(sql); });
  const bool added = Inserter(db_, path_).add(r, nullptr);
  t.commit();
  return added;
}

int64_t ResultsDb::insert_many(const std::vector<CellResult>& results, const std::vector<std::string>& texts) {
  std::optional<Transaction> t;
  if (!bulk_) t.emplace([this](const std::string& sql) { exec(sql); });
  int64_t added = 0;
  {
    Inserter inserter(db_, path_);
    for (size_t i = 0; i < results.size(); ++i) added += inserter.add(results[i], i < texts.size() ? &texts[i] : nullptr) ? 1 : 0;
  }
  if (t) t->commit();
  return added;
}

void ResultsDb::begin_bulk() {
  if (bulk_) throw Error(ErrorKind::Runtime, "results database: a bulk load is already open", path_);
  exec("BEGIN IMMEDIATE");
  bulk_ = true;
}

void ResultsDb::drop_indexes() {
  if (!bulk_ || !bulk_indexes_.empty()) throw Error(ErrorKind::Runtime, "results database: drop_indexes outside a bulk load", path_);
  // The indexes as the schema made them (sqlite_master keeps their statements): built again
  // from there, whatever the schema version, so their definitions stay in one place. The
  // UNIQUE constraint's own index (no statement) stays: it is what makes adding idempotent.
  Statement s(db_, "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'results' AND sql IS NOT NULL",
              path_);
  std::vector<std::string> names;
  while (s.step()) {
    names.push_back(s.text(0));
    bulk_indexes_.push_back(s.text(1));
  }
  for (const std::string& name : names) exec("DROP INDEX \"" + name + "\"");
}

void ResultsDb::commit_bulk() {
  if (!bulk_) throw Error(ErrorKind::Runtime, "results database: no bulk load to commit", path_);
  for (const std::string& sql : bulk_indexes_) exec(sql);
  exec("COMMIT");
  bulk_ = false;
  bulk_indexes_.clear();
  // The log holds the whole load (as large as what was added): copy it into the database
  // and give its space back now, not at the next writer's checkpoint. A reader still on
  // the old snapshot keeps it from completing; then the next checkpoint does it.
  sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr);
}

void ResultsDb::abort_bulk() noexcept {
  if (!bulk_) return;
  sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  bulk_ = false;
  bulk_indexes_.clear();
}

int64_t ResultsDb::result_id_max() {
  Statement s(db_, "SELECT coalesce(max(result_id), 0) FROM results", path_);
  s.step();
  return s.integer(0);
}

void ResultsDb::set_cache_bytes(int64_t bytes) {
  // A negative cache_size is a size in KiB (a positive one counts pages).
  exec(fmt::format("PRAGMA cache_size = -{}", std::max<int64_t>(bytes / 1024, 1)));
}

void ResultsDb::begin_run(const RunInfo& run) {
  Statement s(db_, "INSERT OR IGNORE INTO runs VALUES (?, 'local', ?, ?, ?, ?, ?, ?, '')", path_);
  s.bind(1, run.run_id).bind(2, run.suite_name).bind(3, run.suite_file).bind(4, run.suite_hash);
  s.bind(5, run.machine_id).bind(6, run.cells).bind(7, run.started_at);
  s.step();
}

void ResultsDb::finish_run(const std::string& run_id) {
  Statement s(db_, "UPDATE runs SET finished_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now') WHERE run_id = ?", path_);
  s.bind(1, run_id);
  s.step();
}

std::optional<RunInfo> ResultsDb::latest_run(const std::string& suite_hash, const std::string& machine_id) {
  Statement s(db_,
              "SELECT run_id, suite_name, suite_file, suite_hash, machine_id, cells, started_at, finished_at FROM runs "
              "WHERE source = 'local' AND suite_hash = ? AND machine_id = ? ORDER BY started_at DESC, rowid DESC LIMIT 1",
              path_);
  s.bind(1, suite_hash).bind(2, machine_id);
  if (!s.step()) return std::nullopt;
  return RunInfo{s.text(0), s.text(1), s.text(2), s.text(3), s.text(4), s.integer(5), s.text(6), s.text(7)};
}

std::set<std::string> ResultsDb::cells_done(const std::string& run_id) {
  Statement s(db_, "SELECT cell_key FROM results WHERE run_id = ?", path_);
  s.bind(1, run_id);
  std::set<std::string> keys;
  while (s.step()) keys.insert(s.text(0));
  return keys;
}

namespace {

// The WHERE clause of a filter on the results table aliased `a`, and its values.
std::string where_clause(const ResultFilter& f, const std::string& a, std::vector<Value>& values) {
  std::string w = "1";
  const auto glob = [&](const std::string& column, const std::string& pattern) {
    if (pattern.empty()) return;
    w += " AND " + a + "." + column + " GLOB ?";
    values.push_back(pattern);
  };
  glob("model", f.model);
  glob("suite_name", f.suite);
  glob("run_id", f.run);
  glob("status", f.status);
  glob("runtime", f.runtime);
  if (!f.machine.empty()) {
    w += " AND " + a + ".machine_id IN (SELECT machine_id FROM machines WHERE name GLOB ? OR machine_id GLOB ?)";
    values.push_back(f.machine);
    values.push_back(f.machine);
  }
  if (!f.commit.empty()) {
    w += " AND " + a + ".modelstat_commit GLOB ?";
    values.push_back(f.commit + "*");  // a prefix, as git abbreviates
  }
  if (!f.since.empty()) {
    w += " AND " + a + ".finished_at >= ?";
    values.push_back(f.since);
  }
  if (!f.until.empty()) {
    // A date prefix includes its whole day (or month...): compare with the prefix's last instant.
    w += " AND " + a + ".finished_at <= ?";
    values.push_back(f.until + "\xff");
  }
  if (f.batch) {
    w += " AND " + a + ".batch = ?";
    values.push_back(*f.batch);
  }
  if (f.threads) {
    w += " AND " + a + ".threads = ?";
    values.push_back(int64_t(*f.threads));
  }
  return w;
}

std::string filtered_where(const ResultFilter& f, std::vector<Value>& values) {
  std::string w = where_clause(f, "r", values);
  if (f.latest_only)
    // INDEXED BY: SQLite keeps no statistics here, and with a filter's own index at hand (results_setting for
    // --batch/--threads) it searched the newer results of each row through that index, every row's scan as
    // long as the whole answer (minutes on a million rows), not through the cell and machine's few.
    w += " AND NOT EXISTS (SELECT 1 FROM results r2 INDEXED BY results_latest WHERE r2.cell_key = r.cell_key AND r2.machine_id = r.machine_id "
         "AND (r2.finished_at > r.finished_at OR (r2.finished_at = r.finished_at AND r2.result_id > r.result_id)) AND " +
         where_clause(f, "r2", values) + ")";
  return w;
}

}  // namespace

std::vector<ResultRow> ResultsDb::query(const ResultFilter& f) {
  std::vector<ResultRow> rows;
  each(f, [&](const ResultRow& r) { rows.push_back(r); });
  return rows;
}

namespace {

// each()'s statement and its values.
std::string select_sql(const ResultFilter& f, std::vector<Value>& values) {
  std::string sql =
      "SELECT r.result_id, r.run_id, r.suite_name, r.cell_key, r.cell_index, r.model, r.task, r.bindings, "
      "r.input_shapes, r.batch, r.threads, r.dtype, r.fusion, r.mode, r.requests, r.device, r.runtime, "
      "r.runtime_version, r.machine_id, m.name, m.cpu_model, m.gpu, m.cores, m.memory_bytes, r.env_id, "
      "e.modelstat_version, r.modelstat_commit, r.status, r.error_type, r.error, r.exit_code, r.started_at, "
      "r.finished_at, r.wall_s, r.median_s, r.mean_s, r.p90_s, r.p99_s, r.cv, r.fps, r.batch_fps, r.average_pass_s, "
      "r.latency_per_token_s, r.samples, r.params, r.macs, r.flops, r.bytes, r.precision, r.forecast_s, "
      "r.forecast_error, r.async_median_s FROM results r JOIN machines m ON m.machine_id = r.machine_id JOIN environments e ON "
      "e.env_id = r.env_id WHERE " +
      filtered_where(f, values) +
      // results_order's columns, then the rowid: the rows come off the index in order, never sorted
      // (a million rows sorted with their columns took minutes).
      " ORDER BY r.model, r.runtime, r.device, r.dtype, r.fusion, r.requests, r.batch, r.threads, r.cell_key, "
      "r.machine_id, r.finished_at, r.result_id";
  if (f.limit > 0 || f.offset > 0) {
    sql += " LIMIT ? OFFSET ?";
    values.push_back(f.limit > 0 ? f.limit : int64_t(-1));
    values.push_back(f.offset);
  }
  return sql;
}

}  // namespace

std::vector<std::string> ResultsDb::query_plan(const ResultFilter& f) {
  std::vector<Value> values;
  Statement s(db_, "EXPLAIN QUERY PLAN " + select_sql(f, values), path_);
  for (size_t i = 0; i < values.size(); ++i) s.bind(static_cast<int>(i + 1), values[i]);
  std::vector<std::string> steps;
  while (s.step()) steps.push_back(s.text(3));  // columns: id, parent, notused, detail
  return steps;
}

void ResultsDb::each(const ResultFilter& f, const std::function<void(const ResultRow&)>& visit) {
  std::vector<Value> values;
  Statement s(db_, select_sql(f, values), path_);
  for (size_t i = 0; i < values.size(); ++i) s.bind(static_cast<int>(i + 1), values[i]);
  ResultRow r;  // one row reused: its strings keep their buffers
  while (s.step()) {
    int c = 0;
    r.result_id = s.integer(c++);
    r.run_id = s.text(c++);
    r.suite = s.text(c++);
    r.cell_key = s.text(c++);
    r.cell_index = s.integer(c++);
    r.model = s.text(c++);
    r.task = s.text(c++);
    r.bindings = s.text(c++);
    r.inputs = s.text(c++);
    r.batch = s.integer(c++);
    r.threads = static_cast<int>(s.integer(c++));
    r.dtype = s.text(c++);
    r.fusion = s.text(c++);
    r.mode = s.text(c++);
    r.requests = static_cast<int>(s.integer(c++));
    r.device = s.text(c++);
    r.runtime = s.text(c++);
    r.runtime_version = s.text(c++);
    r.machine_id = s.text(c++);
    r.machine_name = s.text(c++);
    r.cpu_model = s.text(c++);
    r.gpu = s.text(c++);
    r.cores = s.integer(c++);
    r.memory_bytes = s.integer(c++);
    r.env_id = s.text(c++);
    r.modelstat_version = s.text(c++);
    r.modelstat_commit = s.text(c++);
    r.status = s.text(c++);
    r.error_type = s.text(c++);
    r.error = s.text(c++);
    r.exit_code = static_cast<int>(s.integer(c++));
    r.started_at = s.text(c++);
    r.finished_at = s.text(c++);
    r.wall_s = s.real(c++).value_or(0);
    for (std::optional<double>* v : {&r.median_s, &r.mean_s, &r.p90_s, &r.p99_s, &r.cv, &r.fps, &r.batch_fps,
                                     &r.average_pass_s, &r.latency_per_token_s})
      *v = s.real(c++);
    r.samples = s.integer(c++);
    for (std::optional<int64_t>* v : {&r.params, &r.macs, &r.flops, &r.bytes}) *v = s.optional_integer(c++);
    r.precision = s.text(c++);
    r.forecast_s = s.real(c++);
    r.forecast_error = s.real(c++);
    r.async_median_s = s.real(c++);
    visit(r);
  }
}

int64_t ResultsDb::count(const ResultFilter& f) {
  std::vector<Value> values;
  Statement s(db_, "SELECT count(*) FROM results r WHERE " + filtered_where(f, values), path_);
  for (size_t i = 0; i < values.size(); ++i) s.bind(static_cast<int>(i + 1), values[i]);
  s.step();
  return s.integer(0);
}

std::vector<std::string> ResultsDb::records(const std::vector<ResultRow>& rows) {
  Statement s(db_, "SELECT record FROM records WHERE result_id = ?", path_);
  std::vector<std::string> out;
  out.reserve(rows.size());
  for (const ResultRow& r : rows) {
    s.reset();
    s.bind(1, r.result_id);
    out.push_back(s.step() ? s.text(0) : std::string());
  }
  return out;
}

}  // namespace modelstat::suite

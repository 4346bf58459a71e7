// A results folder: one file per cell result (`suite cell`, on any machine,
// e.g. a Slurm array task or a Kubernetes Indexed Job pod, never a shared
// SQLite file over a network filesystem), merged into a database by `suite
// collect`. Files are written atomically (a temporary renamed), so a task
// killed mid-cell leaves no partial file.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "analyzer/suite/results_db.hpp"
#include "modelstat/suite.hpp"

namespace modelstat::suite {

// "cell-000042-<cell key>-<machine id>.json": what `collect` reads (nothing else).
std::string result_file_name(const CellResult& r);
// Writes `r` into `dir` (created when absent); Error(Runtime) naming the file when it cannot.
void write_result_file(const std::string& dir, const CellResult& r);

struct CollectReport {
  int64_t files = 0;    // result files read
  int64_t added = 0;    // new in the database
  int64_t already = 0;  // the database held them (collect is idempotent)
  std::vector<std::string> refused;  // "PATH: why" (corrupt, another schema, unreadable), not merged
  std::vector<std::string> links;    // symbolic links found and not followed
  int64_t other_files = 0;           // files not named like a result, left alone
  bool bulk = false;                 // merged as one bulk load, its indexes built at the end
  double index_seconds = 0;          // the time building them took (s)
};

// From how many result files a collect is a bulk load: below it, keeping the
// indexes costs less than building them again (about 20 s for a million rows).
constexpr int64_t kBulkCollectFiles = 50000;

// The page cache of a collect (bytes): room for the indexes of about a million
// results, so that each index page is written about once per transaction, not
// once per result (SQLite allocates it only as pages are read).
constexpr int64_t kCollectCacheBytes = int64_t(512) << 20;

// Merges every result file under `dir` (subfolders included; links are never
// followed, in or out of the folder) into `db`, with a page cache of up to
// kCollectCacheBytes. A refused file is reported and the rest still merge.
// `progress` is called with the files read so far (may be empty).
//
// A folder of at least `bulk_files` result files, and at least a quarter of
// what the database holds, is merged as one bulk load (ResultsDb::begin_bulk):
// when most of its first `batch` files are new, the indexes are dropped and
// built once at the end, so the time grows with the files, not faster. A
// smaller folder merges in transactions of `batch` files, indexes kept (a small
// merge into a large database would pay for rebuilding all of them).
CollectReport collect_results(const std::string& dir, ResultsDb& db, const std::function<void(int64_t)>& progress,
                              int64_t batch = 20000, int64_t bulk_files = kBulkCollectFiles);

}  // namespace modelstat::suite

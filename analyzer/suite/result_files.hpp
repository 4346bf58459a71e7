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
};

// Merges every result file under `dir` (subfolders included; links are never
// followed, in or out of the folder) into `db`, a transaction per `batch`
// files, with a page cache of up to kCollectCacheBytes. A refused file is
// reported and the rest still merge. `progress` is called with the files read
// so far (may be empty).
CollectReport collect_results(const std::string& dir, ResultsDb& db, const std::function<void(int64_t)>& progress,
                              int64_t batch = 20000);

// The page cache of a collect (bytes): room for the indexes of about a million
// results, so that each index page is written about once per transaction, not
// once per result (SQLite allocates it only as pages are read).
constexpr int64_t kCollectCacheBytes = int64_t(512) << 20;

}  // namespace modelstat::suite

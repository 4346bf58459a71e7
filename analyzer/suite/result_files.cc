#include "analyzer/suite/result_files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "analyzer/measurements/atomic_file.hpp"
#include "analyzer/suite/cell_json.hpp"
#include "modelstat/error.hpp"

namespace modelstat::suite {

namespace fs = std::filesystem;

namespace {

// Far above a result's size (a cell with 10^5 samples is ~2 MB), far below what would hurt.
constexpr int64_t kMaxResultFileBytes = int64_t(64) << 20;

bool is_result_name(const std::string& name) {
  return name.size() > 10 && name.rfind("cell-", 0) == 0 && name.compare(name.size() - 5, 5, ".json") == 0;
}

// The file's bytes, opened without following a link (the walk saw a regular
// file; O_NOFOLLOW keeps it so if it is swapped for a link meanwhile).
std::string read_no_follow(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) throw Error(ErrorKind::Input, std::string("cannot open: ") + std::strerror(errno), path);
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(ErrorKind::Input, "not a regular file", path);
  }
  if (st.st_size > kMaxResultFileBytes) {
    ::close(fd);
    throw Error(ErrorKind::Input, fmt::format("{} bytes: larger than any result file ({} MiB at most)", st.st_size,
                                              kMaxResultFileBytes >> 20),
                path);
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  text.resize(done);
  return text;
}

}  // namespace

std::string result_file_name(const CellResult& r) {
  return fmt::format("cell-{:06d}-{}-{}.json", r.cell.index, r.cell.key, r.machine.id);
}

void write_result_file(const std::string& dir, const CellResult& r) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(ErrorKind::Runtime, "cannot create the results folder: " + ec.message(), dir);
  write_file_atomically((fs::path(dir) / result_file_name(r)).string(), [&](std::ostream& out) { out << cell_result_text(r); });
}

namespace {

// Calls `visit` with each regular file named as a result under `dir`, and `other` with everything
// else it meets: a link (never followed), a folder it cannot read, a file of another name.
enum class Met { Link, Unreadable, OtherFile };
void walk_results(const std::string& dir, const std::function<void(const std::string&)>& visit,
                  const std::function<void(Met, const std::string&, const std::string&)>& other) {
  std::error_code ec;
  // recursive_directory_iterator does not follow directory links unless told to.
  fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end;
  if (ec) throw Error(ErrorKind::Input, "cannot read the results folder: " + ec.message(), dir);
  for (; it != end; it.increment(ec)) {
    if (ec) {
      other(Met::Unreadable, it->path().string(), ec.message());
      ec.clear();
      continue;
    }
    const fs::file_status st = it->symlink_status(ec);
    if (fs::is_symlink(st)) {
      other(Met::Link, it->path().string(), "");
      continue;
    }
    if (!fs::is_regular_file(st)) continue;
    if (!is_result_name(it->path().filename().string())) {
      other(Met::OtherFile, it->path().string(), "");
      continue;
    }
    visit(it->path().string());
  }
}

}  // namespace

CollectReport collect_results(const std::string& dir, ResultsDb& db, const std::function<void(int64_t)>& progress,
                              int64_t batch, int64_t bulk_files) {
  std::error_code ec;
  const fs::file_status top = fs::symlink_status(dir, ec);
  if (ec || !fs::is_directory(top))
    throw Error(ErrorKind::Input, fs::is_symlink(top) ? "a link, not a folder (links are not followed)" : "no such results folder", dir);
  CollectReport report;
  db.set_cache_bytes(kCollectCacheBytes);
  // Counting the names first costs a directory walk (seconds for a million, no file opened).
  int64_t names = 0;
  walk_results(dir, [&](const std::string&) { ++names; }, [](Met, const std::string&, const std::string&) {});
  const bool bulk = names >= bulk_files && names >= db.result_id_max() / 4;
  bool decided = !bulk;  // whether to drop the indexes, decided at the first batch
  if (bulk) db.begin_bulk();
  // An error leaves the database as it was (a bulk load rolls back whole; batches already committed stay).
  struct AbortBulk {
    ResultsDb& db;
    ~AbortBulk() { db.abort_bulk(); }
  } abort_bulk{db};
  std::vector<CellResult> pending;
  std::vector<std::string> texts;  // as read: stored as they are
  const auto flush = [&] {
    const int64_t added = db.insert_many(pending, texts);
    // Most of the first batch new: a load, the indexes are rebuilt once at the end. Most of it
    // there already: the folder collected again, the indexes are kept (nothing to write).
    if (!decided && 2 * added >= static_cast<int64_t>(pending.size()) && added > 0) {
      db.drop_indexes();
      report.bulk = true;
    }
    decided = true;
    report.added += added;
    report.already += static_cast<int64_t>(pending.size()) - added;
    pending.clear();
    texts.clear();
  };
  walk_results(
      dir,
      [&](const std::string& path) {
        ++report.files;
        try {
          std::string text = read_no_follow(path);
          pending.push_back(read_cell_result(text, path));
          texts.push_back(std::move(text));
        } catch (const Error& e) {
          report.refused.push_back(e.what());
        }
        if (static_cast<int64_t>(pending.size()) >= batch) flush();
        if (progress && report.files % 1000 == 0) progress(report.files);
      },
      [&](Met met, const std::string& path, const std::string& why) {
        if (met == Met::Link) report.links.push_back(path);
        if (met == Met::Unreadable) report.refused.push_back(fmt::format("{}: cannot read: {}", path, why));
        if (met == Met::OtherFile) ++report.other_files;
      });
  flush();
  if (bulk) {
    const auto start = std::chrono::steady_clock::now();
    db.commit_bulk();
    report.index_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return report;
}

}  // namespace modelstat::suite

#include "analyzer/suite/result_files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
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

CollectReport collect_results(const std::string& dir, ResultsDb& db, const std::function<void(int64_t)>& progress,
                              int64_t batch) {
  std::error_code ec;
  const fs::file_status top = fs::symlink_status(dir, ec);
  if (ec || !fs::is_directory(top))
    throw Error(ErrorKind::Input, fs::is_symlink(top) ? "a link, not a folder (links are not followed)" : "no such results folder", dir);
  CollectReport report;
  db.set_cache_bytes(kCollectCacheBytes);
  std::vector<CellResult> pending;
  std::vector<std::string> texts;  // as read: stored as they are
  const auto flush = [&] {
    const int64_t added = db.insert_many(pending, texts);
    report.added += added;
    report.already += static_cast<int64_t>(pending.size()) - added;
    pending.clear();
    texts.clear();
  };
  // recursive_directory_iterator does not follow directory links unless told to.
  fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end;
  if (ec) throw Error(ErrorKind::Input, "cannot read the results folder: " + ec.message(), dir);
  for (; it != end; it.increment(ec)) {
    if (ec) {
      report.refused.push_back(fmt::format("{}: cannot read: {}", it->path().string(), ec.message()));
      ec.clear();
      continue;
    }
    const fs::file_status st = it->symlink_status(ec);
    const std::string path = it->path().string();
    if (fs::is_symlink(st)) {
      report.links.push_back(path);
      continue;
    }
    if (!fs::is_regular_file(st)) continue;
    if (!is_result_name(it->path().filename().string())) {
      ++report.other_files;
      continue;
    }
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
  }
  flush();
  return report;
}

}  // namespace modelstat::suite

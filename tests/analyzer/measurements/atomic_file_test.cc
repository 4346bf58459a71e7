// write_file_atomically: a file is either the older one or the complete new
// one; a failed write is Error(Runtime) naming the path and leaves no
// temporary behind, whether the writer throws, the stream fails, the disk
// refuses (RLIMIT_FSIZE: the kernel's EFBIG, as a full disk's ENOSPC), the
// folder is missing or not writable, or SIGTERM arrives mid-write.
#include "analyzer/measurements/atomic_file.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>

#include "modelstat/error.hpp"
#include "scratch_folder.hpp"

namespace modelstat {
namespace {

namespace fs = std::filesystem;

class AtomicFile : public test::ScratchFolder {
 protected:
  // Every entry of the folder but `keep`: a temporary left behind shows here.
  std::vector<std::string> others(const std::string& keep) const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_))
      if (e.path().filename() != keep) names.push_back(e.path().filename().string());
    return names;
  }
  // The message of the Error(Runtime) that `write` into `p` ends in.
  static std::string runtime_error_of(const std::string& p, const std::function<void(std::ostream&)>& write) {
    try {
      write_file_atomically(p, write);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Runtime) << e.what();
      EXPECT_EQ(e.exit_code(), 1);
      return e.what();
    }
    ADD_FAILURE() << "no error writing " << p;
    return {};
  }

  // Runs `body` in a child process (so that a signal or a resource limit stays
  // there) and returns its wait status; `body` ends with _exit or a signal.
  static int status_of_child(const std::function<void()>& body) {
    const pid_t child = fork();
    if (child == 0) {
      body();
      _exit(99);
    }
    int status = -1;
    if (child < 0 || waitpid(child, &status, 0) != child) ADD_FAILURE() << "fork or wait failed";
    return status;
  }
};

TEST_F(AtomicFile, ReplacesTheFileKeepingItsModeAndLeavesNoTemporary) {
  const std::string p = path("report.json");
  std::ofstream(p) << "old";
  ::chmod(p.c_str(), 0640);
  write_file_atomically(p, [](std::ostream& out) { out << "new contents"; });
  EXPECT_EQ(read(p), "new contents");
  struct stat st {};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_TRUE(others("report.json").empty());
}

TEST_F(AtomicFile, ANewFileGetsTheUsualModeNotTheTemporarys0600) {
  const std::string p = path("new.md");
  const mode_t mask = ::umask(022);
  write_file_atomically(p, [](std::ostream& out) { out << "x"; });
  ::umask(mask);
  struct stat st {};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST_F(AtomicFile, AWriterThatThrowsKeepsTheOlderFile) {
  const std::string p = path("report.html");
  std::ofstream(p) << "older good report";
  EXPECT_THROW(write_file_atomically(p,
                                     [](std::ostream& out) {
                                       out << std::string(200000, 'x');  // past the buffer: bytes on disk
                                       throw std::runtime_error("writer failed");
                                     }),
               std::runtime_error);
  EXPECT_EQ(read(p), "older good report");
  EXPECT_TRUE(others("report.html").empty());
}

TEST_F(AtomicFile, AFailedStreamIsARuntimeErrorNamingThePath) {
  const std::string p = path("report.csv");
  std::ofstream(p) << "older good report";
  const std::string message = runtime_error_of(p, [](std::ostream& out) {
    out << "half a report";
    out.setstate(std::ios::badbit);
  });
  EXPECT_NE(message.find("cannot write '" + p + "'"), std::string::npos) << message;
  EXPECT_NE(message.find("unchanged"), std::string::npos) << message;
  EXPECT_EQ(read(p), "older good report");
  EXPECT_TRUE(others("report.csv").empty());
}

TEST_F(AtomicFile, AMissingFolderIsARuntimeErrorNamingThePath) {
  const std::string p = path("no/such/folder/report.json");
  const std::string message = runtime_error_of(p, [](std::ostream& out) { out << "x"; });
  EXPECT_NE(message.find("cannot write '" + p + "': No such file or directory"), std::string::npos) << message;
  EXPECT_TRUE(others("").empty());
}

TEST_F(AtomicFile, AFolderNobodyMayWriteIsARuntimeErrorNamingThePath) {
  // /sys refuses new files even to root (EACCES, or EROFS where mounted read-only).
  const std::string message = runtime_error_of("/sys/modelstat_report.json", [](std::ostream& out) { out << "x"; });
  EXPECT_NE(message.find("cannot write '/sys/modelstat_report.json': "), std::string::npos) << message;
}

// In a child process: what the kernel does when a write is refused (the file
// size limit: EFBIG, the same path as ENOSPC on a full disk).
TEST_F(AtomicFile, AWriteTheKernelRefusesKeepsTheOlderFile) {
  const std::string p = path("big.json");
  std::ofstream(p) << "older good report";
  const int status = status_of_child([&] {
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    try {
      write_file_atomically(p, [](std::ostream& out) { out << std::string(1 << 20, 'x'); });
    } catch (const Error& e) {
      const std::string what = e.what();
      _exit(e.kind() == ErrorKind::Runtime && what.find("cannot write '" + p + "': File too large") == 0 ? 0 : 3);
    }
    _exit(4);
  });
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "3: wrong error, 4: no error";
  EXPECT_EQ(read(p), "older good report");
  EXPECT_TRUE(others("big.json").empty());
}

TEST_F(AtomicFile, SigtermMidWriteRemovesTheTemporary) {
  const std::string p = path("report.json");
  std::ofstream(p) << "older good report";
  const int status = status_of_child([&] {
    std::signal(SIGTERM, SIG_DFL);
    write_file_atomically(p, [](std::ostream& out) {
      out << std::string(200000, 'x') << std::flush;  // the temporary exists and holds bytes
      std::raise(SIGTERM);
    });
  });
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  EXPECT_EQ(read(p), "older good report");
  EXPECT_TRUE(others("report.json").empty());
}

TEST_F(AtomicFile, ASymbolicLinkIsFollowedAndKept) {
  const std::string target = path("real.json"), link = path("link.json");
  std::ofstream(target) << "old";
  fs::create_symlink(target, link);
  write_file_atomically(link, [](std::ostream& out) { out << "new"; });
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(read(target), "new");
}

TEST_F(AtomicFile, ADeviceIsWrittenInPlaceNotReplaced) {
  write_file_atomically("/dev/null", [](std::ostream& out) { out << "discarded"; });
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

}  // namespace
}  // namespace modelstat

// write_file_atomically (atomic_file.hpp): a temporary beside the target,
// written through a stream that keeps the system's error, fsync'd and renamed.
#include "analyzer/measurements/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <streambuf>

#include "modelstat/error.hpp"

namespace modelstat {

namespace {

// An ostream buffer over a file descriptor that remembers why a write failed
// (errno: ENOSPC, EFBIG, EIO), which std::ofstream does not say.
class FdBuffer : public std::streambuf {
 public:
  explicit FdBuffer(int fd) : fd_(fd) { setp(buffer_, buffer_ + sizeof buffer_); }
  int error = 0;  // errno of the first failed write; 0 when none

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  bool drain() {
    const char* p = pbase();
    size_t left = static_cast<size_t>(pptr() - pbase());
    while (left > 0) {
      const ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error = n < 0 ? errno : EIO;
        return false;
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
    setp(buffer_, buffer_ + sizeof buffer_);
    return true;
  }

  int fd_;
  char buffer_[1 << 16];
};

// The temporary to remove should SIGINT or SIGTERM arrive while it exists. A
// handler may only call async-signal-safe functions: unlink, signal, raise.
char g_temporary[PATH_MAX + 64];
volatile sig_atomic_t g_have_temporary = 0;

void remove_temporary_and_die(int signal_number) {
  if (g_have_temporary) ::unlink(g_temporary);
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

// Installs the handler for the lifetime of one temporary, where the signal is
// not already handled or ignored by someone else; restores what was there.
class TemporaryGuard {
 public:
  explicit TemporaryGuard(const std::string& temporary) {
    std::strncpy(g_temporary, temporary.c_str(), sizeof g_temporary - 1);
    g_have_temporary = 1;
    for (int i = 0; i < 2; ++i) {
      struct sigaction action {};
      action.sa_handler = remove_temporary_and_die;
      sigemptyset(&action.sa_mask);
      installed_[i] = ::sigaction(kSignals[i], nullptr, &previous_[i]) == 0 && previous_[i].sa_handler == SIG_DFL &&
                      ::sigaction(kSignals[i], &action, nullptr) == 0;
    }
  }
  ~TemporaryGuard() {
    for (int i = 0; i < 2; ++i)
      if (installed_[i]) ::sigaction(kSignals[i], &previous_[i], nullptr);
    g_have_temporary = 0;
  }
  TemporaryGuard(const TemporaryGuard&) = delete;
  TemporaryGuard& operator=(const TemporaryGuard&) = delete;

 private:
  static constexpr int kSignals[2] = {SIGINT, SIGTERM};
  struct sigaction previous_[2] {};
  bool installed_[2] = {false, false};
};

// `error`: errno, or 0 when the stream failed without one (a writer set badbit).
[[noreturn]] void fail(const std::string& path, int error, bool replacing = false) {
  throw Error(ErrorKind::Runtime, "cannot write '" + path + "': " +
                                      (error != 0 ? std::strerror(error) : "the output stream failed") +
                                      (replacing ? " (the file there before is unchanged)" : ""));
}

// Writes a path that exists and is not a regular file, in place.
void write_in_place(const std::string& path, const std::function<void(std::ostream&)>& write) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) fail(path, errno);
  FdBuffer buffer(fd);
  std::ostream out(&buffer);
  try {
    write(out);
  } catch (...) {
    ::close(fd);
    throw;
  }
  out.flush();
  const bool ok = static_cast<bool>(out);
  ::close(fd);
  if (!ok) fail(path, buffer.error);
}

}  // namespace

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  std::string target = path;
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) return write_in_place(path, write);
  if (exists) {
    // Follow a symbolic link: replace the file it names, not the link.
    if (char* real = ::realpath(path.c_str(), nullptr)) {
      target = real;
      std::free(real);
    }
  }
  const size_t slash = target.rfind('/');
  const std::string folder = slash == std::string::npos ? std::string() : target.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? target : target.substr(slash + 1);
  std::string temporary = folder + "." + name + ".tmp-" + std::to_string(::getpid()) + "-XXXXXX";
  if (temporary.size() >= PATH_MAX) fail(path, ENAMETOOLONG);

  const int fd = ::mkostemp(temporary.data(), O_CLOEXEC);
  if (fd < 0) fail(path, errno, exists);
  const TemporaryGuard guard(temporary);
  const auto give_up = [&] {
    ::close(fd);
    ::unlink(temporary.c_str());
  };
  // mkstemp creates 0600; a report is as readable as any file the user creates.
  mode_t mode = 0666;
  if (exists) {
    mode = st.st_mode & 07777;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode &= ~mask;
  }
  ::fchmod(fd, mode);

  FdBuffer buffer(fd);
  std::ostream out(&buffer);
  try {
    write(out);
  } catch (...) {
    give_up();
    throw;
  }
  out.flush();
  if (!out) {
    const int error = buffer.error;
    give_up();
    fail(path, error, exists);
  }
  // On disk before the rename, so that a crash cannot leave an empty file under the name.
  if (::fsync(fd) != 0 && errno != EINVAL) {
    const int error = errno;
    give_up();
    fail(path, error, exists);
  }
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    fail(path, error, exists);
  }
  if (::rename(temporary.c_str(), target.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    fail(path, error, exists);
  }
}

}  // namespace modelstat

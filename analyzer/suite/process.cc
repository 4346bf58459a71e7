#include "analyzer/suite/process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "modelstat/error.hpp"

namespace modelstat::suite {

namespace {

volatile sig_atomic_t g_stop_signal = 0;

void on_stop(int signal) { g_stop_signal = signal; }

// In the child, between fork and exec: only async-signal-safe calls.
[[noreturn]] void exec_child(const std::vector<std::string>& argv, const ProcessOptions& o, pid_t parent) {
  setpgid(0, 0);
  // Dies with the suite: a SIGKILLed suite leaves no cell running (kept across exec).
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);  // the suite died before prctl took effect
  signal(SIGTERM, SIG_DFL);
  signal(SIGINT, SIG_DFL);
  const int in = open("/dev/null", O_RDONLY);
  const int out = open(o.stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err = open(o.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (in < 0 || out < 0 || err < 0) _exit(127);
  dup2(in, 0);
  dup2(out, 1);
  dup2(err, 2);
  for (const auto& [name, value] : o.env) setenv(name.c_str(), value.c_str(), 1);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  const char* why = strerror(errno);
  const char* prefix = "modelstat: error: cannot run ";
  (void)!write(2, prefix, strlen(prefix));
  (void)!write(2, args[0], strlen(args[0]));
  (void)!write(2, ": ", 2);
  (void)!write(2, why, strlen(why));
  (void)!write(2, "\n", 1);
  _exit(127);
}

// Ends the child's process group: SIGTERM, then SIGKILL after a grace period.
void end_group(pid_t pid, int& status) {
  kill(-pid, SIGTERM);
  for (int i = 0; i < 200; ++i) {  // 2 s
    if (waitpid(pid, &status, WNOHANG) == pid) {
      kill(-pid, SIGKILL);  // anything it left in its group
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(-pid, SIGKILL);
  waitpid(pid, &status, 0);
}

}  // namespace

std::string ProcessResult::describe(double timeout_seconds) const {
  if (stopped) return "stopped";
  if (timed_out) return fmt::format("timeout after {:g} s", timeout_seconds);
  if (signal != 0) return fmt::format("signal {} ({})", signal, strsignal(signal));
  return fmt::format("exit {}", exit_code);
}

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& o) {
  if (argv.empty()) throw Error(ErrorKind::Runtime, "no program to run");
  const auto start = std::chrono::steady_clock::now();
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw Error(ErrorKind::Runtime, std::string("cannot start a process: ") + strerror(errno), argv[0]);
  if (pid == 0) exec_child(argv, o, parent);
  setpgid(pid, pid);  // also here: whichever runs first

  ProcessResult r;
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) throw Error(ErrorKind::Runtime, std::string("waitpid: ") + strerror(errno));
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (stop_requested()) {
      r.stopped = true;
      end_group(pid, status);
      break;
    }
    if (o.timeout_seconds > 0 && elapsed > o.timeout_seconds) {
      r.timed_out = true;
      end_group(pid, status);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(elapsed < 1 ? 2 : 20));
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
    r.exit_code = 128 + r.signal;
  }
  if (r.timed_out || r.stopped) r.exit_code = r.exit_code == 0 ? 124 : r.exit_code;
  return r;
}

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
}

bool stop_requested() { return g_stop_signal != 0; }
int stop_signal() { return g_stop_signal; }

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string tail_lines(const std::string& path, int max_lines) {
  std::vector<std::string> lines;
  std::istringstream in(read_text(path));
  for (std::string line; std::getline(in, line);)
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line);
  std::string out;
  for (size_t i = lines.size() > size_t(max_lines) ? lines.size() - size_t(max_lines) : 0; i < lines.size(); ++i)
    out += (out.empty() ? "" : "\n") + lines[i];
  return out;
}

}  // namespace modelstat::suite

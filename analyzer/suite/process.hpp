// Running a program as a child process: an argument vector (never a shell
// string), standard output and error to files, a time limit, and the child's
// whole process group ended when the limit passes, when the suite is asked to
// stop (SIGTERM, SIGINT) or when the suite itself dies (PR_SET_PDEATHSIG), so
// a killed suite leaves no cell running behind it.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace modelstat::suite {

struct ProcessOptions {
  double timeout_seconds = 0;  // 0: none
  std::string stdout_path = "/dev/null", stderr_path = "/dev/null";
  std::vector<std::pair<std::string, std::string>> env;  // set in the child
};

struct ProcessResult {
  int exit_code = 0;   // the child's; 128 + signal when a signal ended it; 127 when it could not start
  int signal = 0;      // the signal that ended it, 0 if it exited
  bool timed_out = false;
  bool stopped = false;  // ended because the suite was asked to stop
  double seconds = 0;
  bool ok() const { return exit_code == 0 && signal == 0 && !timed_out && !stopped; }
  // "exit 2", "signal 9 (Killed)", "timeout after 600 s", "stopped"
  std::string describe(double timeout_seconds) const;
};

// Runs argv[0] (looked up in PATH when it has no '/') with the rest as its
// arguments. Error(Runtime) when the process cannot be created at all.
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options);

// SIGTERM and SIGINT set a flag instead of killing the suite; the child that is
// running is ended, and the suite leaves without recording it.
void install_stop_handlers();
bool stop_requested();
int stop_signal();  // the signal that asked, 0 if none

// The last `max_lines` non-empty lines of a file (what a failed step printed last).
std::string tail_lines(const std::string& path, int max_lines);
// The whole file; "" when it cannot be read.
std::string read_text(const std::string& path);

}  // namespace modelstat::suite

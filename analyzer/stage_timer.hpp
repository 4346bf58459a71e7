// MODELSTAT_TIMING=1: how long each stage of a command took, on stderr, as
// wall time and this process's CPU time (the CPU time is what to compare on
// a busy machine: other processes stretch the wall time, not the CPU time),
// and the page faults it took (each first touch of a 4 KiB page of new
// memory: ~1-3 us of system time apiece on a VM, a large part of a big load).
#pragma once

#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace modelstat {

class StageTimer {
 public:
  StageTimer()
      : enabled_(std::getenv("MODELSTAT_TIMING") != nullptr), wall_(now_wall()), cpu_(now_cpu()), faults_(now_faults()) {}
  // Prints the time since the last lap (or construction) under `stage`.
  void lap(const char* stage) {
    if (!enabled_) return;
    const double wall = now_wall(), cpu = now_cpu();
    const long faults = now_faults();
    std::fprintf(stderr, "modelstat: timing: %-24s %8.1f ms wall %8.1f ms cpu %7ld page faults\n", stage,
                 (wall - wall_) * 1e3, (cpu - cpu_) * 1e3, faults - faults_);
    wall_ = wall;
    cpu_ = cpu;
    faults_ = faults;
  }

 private:
  static double now_wall() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  static double now_cpu() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
  }

  static long now_faults() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt + ru.ru_majflt;
  }

  bool enabled_;
  double wall_, cpu_;
  long faults_;
};

}  // namespace modelstat

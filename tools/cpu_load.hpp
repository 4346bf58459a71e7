// How busy the CPUs this process may run on are, from two readings of
// /proc/stat a moment apart: what chooses the OpenMP wait policy at start
// (cli_common.hpp, default_openmp_wait_policy).
//
// Why it decides anything: at 2 threads, a team that sleeps at once after each
// parallel region (OMP_WAIT_POLICY=PASSIVE, libgomp's spin count 0) pays a
// futex wake-up per oneDNN primitive, 1.7-1.8x ONNX Runtime on mobilenet_v2,
// efficientnet_b0 and regnet_y_800mf on idle CPUs; spinning ~30 us first
// (GOMP_SPINCOUNT=3000) is at 0.92-1.19x there, but 1.7-2.1x ORT beside one
// CPU hog, where passive is at 0.66-1.05x (bench/RESULTS.md, "OpenMP wait
// policy, chosen by the load at start"). So: spin when the CPUs are idle, sleep
// when anything else is running.
//
// "Running" means in each of two consecutive windows: a load that shows in one
// only (the previous process's exit, a shell's `ps`, a build step ending) is
// not what the run will share the CPUs with. /proc/stat counts 10 ms ticks: on
// this project's idle 2-CPU VM one 0.15 s window read 0.00-0.13 CPUs (0 to 2
// stray ticks of 30), and 4 stray ticks, 40 ms of anyone's work, were enough
// to choose sleeping.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace modelstat::cli {

struct CpuTicks {
  uint64_t busy = 0;   // user + nice + system + irq + softirq + steal
  uint64_t total = 0;  // busy + idle + iowait
};

// The per-CPU lines ("cpuN ...") of /proc/stat's text, by CPU number; the
// aggregate "cpu" line and everything else are ignored.
std::map<int, CpuTicks> parse_proc_stat(const std::string& text);

// How many CPUs' worth of time was busy between two readings, over `cpus`
// (e.g. 1.0: one of them fully busy); a CPU missing from either reading, or
// with no ticks in between, counts as idle.
double busy_cpus(const std::map<int, CpuTicks>& before, const std::map<int, CpuTicks>& after,
                 const std::vector<int>& cpus);

// The spin count to run with: kSpinWhenIdle when less than kBusyLimit CPUs'
// worth of other work ran on the allowed CPUs, else 0 (sleep at once).
constexpr double kBusyLimit = 0.25;
constexpr int kSpinWhenIdle = 3000;  // libgomp spins, ~100 per microsecond: ~30 us
int spin_count_for(double busy);

// The CPUs this process may run on (sched_getaffinity); empty if unknown.
std::vector<int> allowed_cpus();

// The load present in both of two consecutive windows, from three readings:
// the smaller of busy_cpus(r0, r1) and busy_cpus(r1, r2).
double persistent_busy_cpus(const std::map<int, CpuTicks>& r0, const std::map<int, CpuTicks>& r1,
                            const std::map<int, CpuTicks>& r2, const std::vector<int>& cpus);

// Three readings `window` seconds apart: persistent_busy_cpus over
// allowed_cpus(); negative if /proc/stat cannot be read.
double sample_persistent_busy_cpus(double window);

}  // namespace modelstat::cli

#include "tools/cpu_load.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

namespace modelstat::cli {

std::map<int, CpuTicks> parse_proc_stat(const std::string& text) {
  std::map<int, CpuTicks> cpus;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.size() < 4 || line.compare(0, 3, "cpu") != 0 || line[3] < '0' || line[3] > '9') continue;
    std::istringstream in(line.substr(3));
    int cpu = -1;
    // user nice system idle iowait irq softirq steal (guest time is already inside user)
    uint64_t v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    in >> cpu;
    int read = 0;
    while (read < 8 && in >> v[read]) ++read;
    if (cpu < 0 || read < 4) continue;
    CpuTicks t;
    t.busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    t.total = t.busy + v[3] + v[4];
    cpus[cpu] = t;
  }
  return cpus;
}

double busy_cpus(const std::map<int, CpuTicks>& before, const std::map<int, CpuTicks>& after,
                 const std::vector<int>& cpus) {
  double busy = 0;
  for (int cpu : cpus) {
    const auto b = before.find(cpu), a = after.find(cpu);
    if (b == before.end() || a == after.end() || a->second.total <= b->second.total) continue;
    const double total = double(a->second.total - b->second.total);
    const double used = a->second.busy >= b->second.busy ? double(a->second.busy - b->second.busy) : 0.0;
    busy += std::min(1.0, used / total);
  }
  return busy;
}

int spin_count_for(double busy) { return busy >= 0 && busy < kBusyLimit ? kSpinWhenIdle : 0; }

std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

namespace {
bool read_proc_stat(std::map<int, CpuTicks>& out) {
  std::ifstream in("/proc/stat");
  if (!in) return false;
  std::stringstream text;
  text << in.rdbuf();
  out = parse_proc_stat(text.str());
  return !out.empty();
}
}  // namespace

double persistent_busy_cpus(const std::map<int, CpuTicks>& r0, const std::map<int, CpuTicks>& r1,
                            const std::map<int, CpuTicks>& r2, const std::vector<int>& cpus) {
  return std::min(busy_cpus(r0, r1, cpus), busy_cpus(r1, r2, cpus));
}

double sample_persistent_busy_cpus(double window) {
  std::map<int, CpuTicks> r0, r1, r2;
  if (!read_proc_stat(r0)) return -1;
  std::this_thread::sleep_for(std::chrono::duration<double>(window));
  if (!read_proc_stat(r1)) return -1;
  std::this_thread::sleep_for(std::chrono::duration<double>(window));
  if (!read_proc_stat(r2)) return -1;
  return persistent_busy_cpus(r0, r1, r2, allowed_cpus());
}

}  // namespace modelstat::cli

#include "analyzer/suite/machine.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analyzer/measurements/record_json.hpp"
#include "analyzer/suite/hash.hpp"
#include "modelstat/error.hpp"

extern char** environ;

namespace modelstat::suite {

namespace {

// The value after "KEY:" on the first line of `path` that starts with `key`, trimmed; "" if none.
std::string proc_field(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string v = line.substr(colon + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    v.erase(v.find_last_not_of(" \t\r") + 1);
    return v;
  }
  return {};
}

std::string host_name() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// "0-1,4": the CPUs this process may run on.
std::string affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return {};
  std::string out;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    int last = cpu;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) ++last;
    out += (out.empty() ? "" : ",") + std::to_string(cpu) + (last > cpu ? "-" + std::to_string(last) : "");
    cpu = last;
  }
  return out;
}

}  // namespace

std::string hash_hex(uint64_t hash) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(hash));
  return buf;
}

std::string hash_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::Input, "cannot read the file to identify it", path);
  uint64_t h = kFnvOffset;
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    h = fnv1a64(buf.data(), static_cast<size_t>(in.gcount()), h);
  }
  return hash_hex(h);
}

std::string utc_now() {
  char buf[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

std::string machine_id(const Machine& m) {
  const Json id = {m.name, m.cpu_model, m.cores, m.memory_bytes, m.gpu, m.gpu_driver};
  return hash_text(id.dump());
}

Machine probe_machine(const std::string& name) {
  Machine m;
  m.host = host_name();
  m.name = name.empty() ? m.host : name;
  m.cpu_model = proc_field("/proc/cpuinfo", "model name");
  if (m.cpu_model.empty()) m.cpu_model = "unknown CPU";
  m.cores = std::max<long>(1, sysconf(_SC_NPROCESSORS_ONLN));
  const std::string mem = proc_field("/proc/meminfo", "MemTotal");  // "24683748 kB"
  m.memory_bytes = mem.empty() ? 0 : std::stoll(mem) * 1024;
  // NVIDIA's kernel driver says its version and each GPU's model here; no library is loaded.
  const std::string version = proc_field("/proc/driver/nvidia/version", "NVRM version");
  if (!version.empty()) {
    std::istringstream words(version);
    for (std::string w; words >> w;)
      if (!w.empty() && std::isdigit(static_cast<unsigned char>(w[0])) && w.find('.') != std::string::npos) {
        m.gpu_driver = w;
        break;
      }
    std::error_code ec;
    std::vector<std::string> gpus;
    for (const auto& d : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec))
      gpus.push_back(proc_field((d.path() / "information").string(), "Model"));
    std::sort(gpus.begin(), gpus.end());
    for (const auto& g : gpus) m.gpu += (m.gpu.empty() ? "" : ", ") + g;
  }
  m.id = machine_id(m);
  return m;
}

bool is_timing_variable(const std::string& name) {
  static const char* const kPrefixes[] = {"OMP_", "GOMP_", "KMP_", "MKL_", "OPENBLAS_", "DNNL_", "ONEDNN_", "MALLOC_"};
  static const char* const kNames[] = {"MODELSTAT_GLIBC_MALLOC", "MODELSTAT_OMP_WAIT_POLICY",
                                       "MODELSTAT_OPENBLAS_THREAD_TIMEOUT", "CUDA_VISIBLE_DEVICES", "LD_PRELOAD",
                                       "CUDA_LAUNCH_BLOCKING", "CUBLAS_WORKSPACE_CONFIG"};
  for (const char* p : kPrefixes)
    if (name.rfind(p, 0) == 0) return true;
  for (const char* n : kNames)
    if (name == n) return true;
  return false;
}

Environment probe_environment() {
  Environment e;
  e.modelstat_version = build_version();
  e.modelstat_commit = build_commit();
  for (char** v = environ; v && *v; ++v) {
    const std::string entry = *v;
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = entry.substr(0, eq);
    if (is_timing_variable(name)) e.variables.emplace_back(name, entry.substr(eq + 1));
  }
  std::sort(e.variables.begin(), e.variables.end());
  e.cpu_affinity = affinity();
  return e;
}

void finish_environment(Environment& e) {
  const Json id = {e.modelstat_version, e.modelstat_commit, e.libraries, e.variables, e.cpu_affinity};
  e.id = hash_text(id.dump());
}

}  // namespace modelstat::suite

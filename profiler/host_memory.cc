#include "profiler/host_memory.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

namespace modelstat::profiler {

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

int64_t add(int64_t a, int64_t b) {
  int64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? kMax : sum;
}

int64_t times(int64_t a, int64_t n) {
  int64_t product = 0;
  return __builtin_mul_overflow(a, n, &product) ? kMax : product;
}

// The number in the first line of a file ("max" or unreadable: nullopt).
std::optional<int64_t> read_number(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  try {
    return std::stoll(text);
  } catch (const std::exception&) {
    return std::nullopt;  // beyond int64: no limit
  }
}

}  // namespace

int64_t HostMemoryEstimate::total() const {
  return add(add(add(weights, activations), add(inputs, outputs)), training);
}

std::optional<AvailableMemory> available_host_memory() {
  std::optional<AvailableMemory> out;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib) {
    std::getline(meminfo, unit);
    if (key == "MemAvailable:") {
      out = AvailableMemory{times(kib, 1024), "MemAvailable in /proc/meminfo"};
      break;
    }
  }
  // A container's limit can be far below the host's free memory: the kernel
  // kills at the cgroup's limit.
  const struct {
    const char *limit, *usage, *name;
  } cgroups[] = {{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current", "the cgroup's memory.max"},
                 {"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes",
                  "the cgroup's memory.limit_in_bytes"}};
  for (const auto& c : cgroups) {
    const auto limit = read_number(c.limit), usage = read_number(c.usage);
    if (!limit || !usage) continue;
    const int64_t left = std::max<int64_t>(0, *limit - *usage);
    if (!out || left < out->bytes) out = AvailableMemory{left, std::string(c.name) + " less its usage"};
    break;
  }
  return out;
}

HostMemoryEstimate estimate_host_memory(const AnalysisResult& analysis, const RunShape& run) {
  const AnalysisTotals& t = analysis.totals;
  HostMemoryEstimate e;
  e.inputs = times(t.input_bytes, std::max(0, run.input_sets - (run.on_cpu ? 1 : 0)));
  if (!run.on_cpu) return e;  // the rest is on the GPU, whose allocator reports its own out-of-memory
  e.weights = t.weight_bytes;
  e.activations = t.peak_activation_bytes;
  e.outputs = t.output_bytes;
  if (run.optimizer_states >= 0) {
    // Gradients and optimizer states as large as the weights; every node's
    // output (bytes_written) saved for backward, an upper bound of what autograd keeps.
    e.training = add(times(t.weight_bytes, 1 + run.optimizer_states), t.bytes_written);
  }
  return e;
}

std::string memory_text(int64_t bytes) {
  const double gib = double(bytes) / double(int64_t(1) << 30), mib = double(bytes) / double(1 << 20);
  char text[64];
  if (gib >= 1) std::snprintf(text, sizeof text, "%.2f GiB", gib);
  else if (mib >= 1) std::snprintf(text, sizeof text, "%.1f MiB", mib);
  else std::snprintf(text, sizeof text, "%.1f KiB", double(bytes) / 1024);
  return text;
}

std::string exceeds_host_memory(const HostMemoryEstimate& e) {
  const auto available = available_host_memory();
  if (!available || e.total() <= available->bytes) return {};
  std::ostringstream s;
  s << "needs about " << memory_text(e.total()) << " of host memory (";
  const char* sep = "";
  const std::pair<const char*, int64_t> parts[] = {{"weights", e.weights},      {"activations", e.activations},
                                                   {"other input sets", e.inputs}, {"outputs", e.outputs},
                                                   {"training state", e.training}};
  for (const auto& [name, bytes] : parts)
    if (bytes > 0) {
      s << sep << name << " " << memory_text(bytes);
      sep = ", ";
    }
  s << "), " << memory_text(available->bytes) << " available (" << available->source << ")";
  return s.str();
}

}  // namespace modelstat::profiler

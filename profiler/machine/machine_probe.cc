// Runs the micro-kernels of cpu_kernels.hpp on pinned threads and turns their
// times into machine roofs. Timing: std::chrono::steady_clock per thread
// around each sample; a sample's time is the slowest thread's (the threads
// start together at a barrier), after one warm-up sample (AVX-512 clock
// transitions, page faults). A roof is the best sample, as likwid-bench and
// the Empirical Roofline Toolkit report it, not the median: it is an upper
// bound of what the machine sustains, and anything else running (on a shared
// VM, another process's build) only ever lowers a sample, so the best sample
// is the least disturbed one. Every sample lasts at least 20 ms (5 ms quick).
#include "profiler/machine/machine_probe.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <thread>

#include "profiler/device_query.hpp"
#include "profiler/machine/cpu_kernels.hpp"

namespace modelstat::profiler::machine {

namespace {

constexpr int64_t kKiB = 1024, kMiB = kKiB * 1024;

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The CPUs this process may run on, in order (taskset, cgroups).
std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &mask)) cpus.push_back(c);
  if (cpus.empty()) cpus.push_back(0);
  return cpus;
}

// Runs `threads` threads, thread i pinned to the i-th allowed CPU (wrapping
// when there are fewer), each calling setup(i) once, then for every sample
// (the first a warm-up) waiting at a barrier and timing body(i). Returns,
// per measured sample, the slowest thread's seconds.
std::vector<double> run_pinned(int threads, int samples, const std::function<void(int)>& setup,
                               const std::function<void(int)>& body) {
  const std::vector<int> cpus = allowed_cpus();
  std::vector<std::vector<double>> elapsed(size_t(threads), std::vector<double>(size_t(samples + 1)));
  std::atomic<int> arrived{0};
  auto barrier = [&](int generation) {
    arrived.fetch_add(1);
    while (arrived.load() < threads * generation) std::this_thread::yield();
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpus[size_t(t) % cpus.size()], &set);
      (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);
      setup(t);
      for (int s = 0; s <= samples; ++s) {
        barrier(s + 1);
        const double t0 = now_seconds();
        body(t);
        elapsed[size_t(t)][size_t(s)] = now_seconds() - t0;
      }
    });
  for (auto& th : pool) th.join();
  std::vector<double> slowest;
  for (int s = 1; s <= samples; ++s) {  // sample 0 was the warm-up
    double m = 0;
    for (int t = 0; t < threads; ++t) m = std::max(m, elapsed[size_t(t)][size_t(s)]);
    slowest.push_back(m);
  }
  return slowest;
}

// The least disturbed sample (see the top of this file).
double best(const std::vector<double>& seconds) { return *std::min_element(seconds.begin(), seconds.end()); }

// Iterations of a kernel lasting about `seconds` on this thread.
int64_t calibrate(const FmaKernel& k, double seconds) {
  for (int64_t n = 1000;; n *= 2) {
    const double t0 = now_seconds();
    k.run(n);
    const double dt = now_seconds() - t0;
    if (dt > seconds / 8 || n > (int64_t(1) << 40)) return std::max<int64_t>(1, int64_t(double(n) * seconds / dt));
  }
}

int64_t read_int(const std::string& path, int64_t fallback) {
  std::ifstream in(path);
  std::string s;
  if (!(in >> s)) return fallback;
  char* end = nullptr;
  int64_t v = std::strtoll(s.c_str(), &end, 10);
  if (end && (*end == 'K' || *end == 'k')) v *= kKiB;
  if (end && (*end == 'M' || *end == 'm')) v *= kMiB;
  return v;
}

// CPUs in a sysfs list such as "0-3,8,10-11".
int count_cpu_list(const std::string& list) {
  int n = 0;
  size_t pos = 0;
  while (pos < list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    const std::string part = list.substr(pos, comma - pos);
    const size_t dash = part.find('-');
    if (!part.empty()) n += dash == std::string::npos ? 1 : std::atoi(part.c_str() + dash + 1) - std::atoi(part.c_str()) + 1;
    pos = comma + 1;
  }
  return std::max(n, 1);
}

}  // namespace

std::vector<CacheSize> sysfs_data_caches() {
  std::vector<CacheSize> caches;
  for (int i = 0; i < 16; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream type_file(dir + "type");
    std::string type;
    if (!(type_file >> type)) break;
    if (type == "Instruction") continue;
    CacheSize c;
    c.level = int(read_int(dir + "level", 0));
    c.bytes = read_int(dir + "size", 0);
    std::ifstream shared(dir + "shared_cpu_list");
    std::string list;
    c.cpus_sharing = (shared >> list) ? count_cpu_list(list) : 1;
    if (c.level > 0 && c.bytes > 0) caches.push_back(c);
  }
  return caches;
}

MachineRoofs measure_cpu_machine_roofs(const MachineProbeOptions& options) {
  MachineRoofs out;
  const int samples = options.quick ? 5 : 11;
  const double sample_seconds = options.quick ? 0.005 : 0.02;
  const std::vector<int> cpus = allowed_cpus();

  // 1. FMA peaks: per kernel, per thread count.
  const std::vector<FmaKernel> kernels = available_fma_kernels();
  if (kernels.empty()) out.notes.push_back("no FMA micro-kernel for this CPU (x86-64 AVX2 or AVX-512 only): no machine compute roof");
  for (const FmaKernel& k : kernels) {
    const int64_t iterations = calibrate(k, sample_seconds);
    for (int threads : options.thread_counts) {
      const std::vector<double> times = run_pinned(threads, samples, [](int) {}, [&](int) { k.run(iterations); });
      ComputeRoof r;
      r.dtype = k.dtype;
      r.kernel = k.kernel;
      r.threads = threads;
      r.flops_per_second = k.flops_per_iteration * double(iterations) * threads / best(times);
      out.compute_roofs.push_back(r);
    }
  }
  for (const std::string& f : cpu_features())
    if (f == "amx_bf16") out.notes.push_back("the CPU has AMX (amx_bf16): no AMX micro-kernel yet, its bf16 roof is not measured");

  // 2. Read bandwidth over working sets: 4 KiB per thread up to 8x the
  //    last-level cache (at least 256 MiB, at most 1 GiB) in all, so that
  //    DRAM has a plateau of several points past the cache's own tail.
  const std::vector<CacheSize> caches = sysfs_data_caches();
  int64_t largest_cache = 0;
  for (const CacheSize& c : caches) largest_cache = std::max(largest_cache, c.bytes);
  const int64_t max_total = std::min<int64_t>(1024 * kMiB, std::max<int64_t>(256 * kMiB, 8 * largest_cache));
  const double step = options.quick ? 2.0 : 1.41421356;  // a point per octave, or per half octave
  const int sweep_samples = options.quick ? 3 : 7;
  const double bytes_per_sample = options.quick ? 32.0 * double(kMiB) : 256.0 * double(kMiB);
  for (int threads : options.thread_counts) {
    std::vector<int64_t> sizes;  // per thread, multiples of read_buffer's 512-byte step
    for (double s = 4.0 * kKiB; s * threads <= double(max_total) * 1.0001; s *= step)
      sizes.push_back(std::max<int64_t>(512, int64_t(s) / 512 * 512));
    std::vector<float*> buffers(size_t(threads), nullptr);
    const int64_t per_thread_max = sizes.empty() ? 0 : sizes.back();
    std::vector<BandwidthPoint> points;
    volatile float sink = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      const int64_t bytes = sizes[i];
      const int64_t passes = std::max<int64_t>(1, int64_t(bytes_per_sample / double(bytes * threads)));
      const std::vector<double> times = run_pinned(
          threads, sweep_samples,
          [&](int t) {
            // Allocated and first touched by the thread that reads it (its NUMA node), once.
            if (!buffers[size_t(t)]) {
              buffers[size_t(t)] = static_cast<float*>(std::aligned_alloc(64, size_t(per_thread_max)));
              for (int64_t e = 0; e < per_thread_max / 4; ++e) buffers[size_t(t)][e] = 1.0f + float(e % 7);
            }
          },
          [&](int t) { sink = sink + read_buffer(buffers[size_t(t)], bytes, passes); });
      // The same working set updated in place (read + written, as nodes count bytes).
      const std::vector<double> update_times = run_pinned(
          threads, sweep_samples, [](int) {}, [&](int t) { update_buffer(buffers[size_t(t)], bytes, passes); });
      const double moved = double(bytes) * double(passes) * threads;
      points.push_back({threads, bytes * threads, moved / best(times), 2.0 * moved / best(update_times)});
    }
    for (float* b : buffers) std::free(b);
    std::vector<MemoryLevel> levels = find_memory_levels(points, caches, threads, out.notes);
    out.levels.insert(out.levels.end(), levels.begin(), levels.end());
    out.sweep.insert(out.sweep.end(), points.begin(), points.end());
  }
  if (caches.empty()) out.notes.push_back("no cache sizes from sysfs: the levels are named by order only");
  out.notes.push_back("machine roofs: FMA micro-kernels (best of " + std::to_string(samples) +
                      " samples) and a sweep of read-only and in-place read + write streams (" + read_kernel_name() + ", best of " + std::to_string(sweep_samples) +
                      ") on threads pinned to CPUs " +
                      [&] {
                        std::string s;
                        for (int c : cpus) s += (s.empty() ? "" : ",") + std::to_string(c);
                        return s;
                      }());
  int most = 0;
  for (int t : options.thread_counts) most = std::max(most, t);
  if (most > int(cpus.size()))
    out.notes.push_back("machine roofs at " + std::to_string(most) + " threads share " + std::to_string(cpus.size()) +
                        " allowed CPU(s): not a per-core figure");
  return out;
}

std::vector<ComputeRoof> cuda_theoretical_roofs(int device, std::vector<std::string>& notes) {
  const CudaRuntimeInfo info = query_cuda_runtime();
  for (const CudaDeviceInfo& d : info.devices) {
    if (d.index != device) continue;
    if (d.sm_clock_khz <= 0) {
      notes.push_back("the device does not report its SM clock: no machine roof");
      return {};
    }
    std::vector<ComputeRoof> roofs = cuda_machine_roofs(d.compute_capability_major, d.compute_capability_minor,
                                                        d.multiprocessor_count, double(d.sm_clock_khz) * 1e3);
    if (roofs.empty())
      notes.push_back("sm_" + std::to_string(d.compute_capability_major) + std::to_string(d.compute_capability_minor) +
                      ": not in modelstat's table of per-SM rates: no machine roof (the cuBLAS curve is the roof)");
    else
      notes.push_back("machine roofs: theoretical (SMs x the reported peak clock x FLOPs/cycle/SM of the "
                      "architecture, dense tensor-core rates from NVIDIA's whitepapers); unverified: this table has "
                      "not been checked on a GPU by modelstat's authors");
    return roofs;
  }
  notes.push_back("CUDA device " + std::to_string(device) + " not found: no machine roof");
  return {};
}

}  // namespace modelstat::profiler::machine

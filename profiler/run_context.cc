#include "profiler/run_context.hpp"

#include <ATen/Parallel.h>
#include <torch/csrc/api/include/torch/version.h>
#include <dlfcn.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#ifdef MODELSTAT_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <thread>

#include "modelstat/error.hpp"

namespace modelstat::profiler {

namespace {

std::string utc_now_iso8601() {
  char buf[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

std::string hostname() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

}  // namespace

void set_intra_op_threads(int threads) {
  at::set_num_threads(threads);
  // Looked up, not linked: a LibTorch built on MKL or without BLAS has no OpenBLAS.
  using SetThreads = void (*)(int);
  if (auto* set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) set(threads);
}

namespace {
constexpr int64_t kGlibcMmapThresholdMax = int64_t(32) << 20;  // glibc's upper limit for M_MMAP_THRESHOLD on 64-bit

struct HostAllocator {
  std::string description;
  int64_t mmap_threshold_bytes = 0;  // host_mmap_threshold_bytes
};

// Configures the allocator on first use (configure_host_allocator's rules).
const HostAllocator& host_allocator() {
  static const HostAllocator configured = [] {
#if defined(__GLIBC__)
    const char* env = std::getenv("MODELSTAT_GLIBC_MALLOC");
    const std::string mode = env ? env : "";  // "" (the heap only), "mmap" or "dynamic"
    const std::string trimmed = "heap trimmed above 1 GiB";
    if (mode == "dynamic")
      return HostAllocator{"glibc malloc, dynamic thresholds (MODELSTAT_GLIBC_MALLOC=dynamic)", kGlibcMmapThresholdMax};
    constexpr int kTrimThreshold = 1 << 30;
    if (mallopt(M_MMAP_THRESHOLD, int(kGlibcMmapThresholdMax)) != 1 || mallopt(M_TRIM_THRESHOLD, kTrimThreshold) != 1)
      return HostAllocator{"glibc malloc, dynamic thresholds (mallopt refused the fixed ones)", kGlibcMmapThresholdMax};
    if (mode == "mmap")
      return HostAllocator{"glibc malloc, fixed thresholds: mmap above 32 MiB, " + trimmed + " (MODELSTAT_GLIBC_MALLOC=mmap)",
                           kGlibcMmapThresholdMax};
    // The heap only. glibc still maps a block afresh where the heap cannot
    // grow (brk blocked, or a worker thread's arena asked for over 64 MiB).
    if (mallopt(M_MMAP_MAX, 0) == 1)
      return HostAllocator{"glibc malloc, fixed thresholds: every block from the heap (no mmap), " + trimmed, 0};
    return HostAllocator{"glibc malloc, fixed thresholds: mmap above 32 MiB (mallopt refused M_MMAP_MAX 0), " + trimmed,
                         kGlibcMmapThresholdMax};
#else
    return HostAllocator{"system malloc (not glibc: left as it is)", 0};
#endif
  }();
  return configured;
}
}  // namespace

int64_t host_mmap_threshold_bytes() { return host_allocator().mmap_threshold_bytes; }

std::string configure_host_allocator() { return host_allocator().description; }

int openblas_threads() {
  using GetThreads = int (*)();
  auto* get = reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  return get ? get() : -1;
}

int resolve_threads(int requested) {
  if (requested < 0) throw Error(ErrorKind::Usage, "--threads must be positive");
  return requested > 0 ? requested : int(std::max(1u, std::thread::hardware_concurrency()));
}

std::string blas_description() {
  using Text = char* (*)();
  auto* corename = reinterpret_cast<Text>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  auto* config = reinterpret_cast<Text>(dlsym(RTLD_DEFAULT, "openblas_get_config"));
  std::string s;
  if (!corename) {
    s = "no OpenBLAS in this process";
  } else {
    s = "OpenBLAS, core " + std::string(corename());
    if (config) s += " (" + std::string(config()) + ")";
  }
  // OpenBLAS reads it once at load: it forces the kernels (Haswell = AVX2 on an AVX-512 CPU).
  if (const char* forced = std::getenv("OPENBLAS_CORETYPE"); forced && *forced)
    s += std::string("; OPENBLAS_CORETYPE=") + forced + " set";
  // Read at load too: how long its worker threads spin after a call (2^N cycles; OpenBLAS's default 28).
  if (const char* timeout = std::getenv("OPENBLAS_THREAD_TIMEOUT"); corename && timeout && *timeout) {
    const char* chooser = std::getenv("MODELSTAT_OPENBLAS_THREAD_TIMEOUT");
    s += std::string("; OPENBLAS_THREAD_TIMEOUT=") + timeout +
         (chooser && std::string(chooser) == "default" ? " (modelstat's default: threads sleep after a call)"
                                                       : " (set by the user)");
  }
  return s;
}

std::string onednn_isa_description() {
#ifdef MODELSTAT_HAVE_DNNL
  const dnnl_version_t* v = dnnl_version();
  std::string isa;
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41: isa = "sse41"; break;
    case dnnl_cpu_isa_avx: isa = "avx"; break;
    case dnnl_cpu_isa_avx2: isa = "avx2"; break;
    case dnnl_cpu_isa_avx2_vnni: isa = "avx2_vnni"; break;
    case dnnl_cpu_isa_avx512_mic: isa = "avx512_mic"; break;
    case dnnl_cpu_isa_avx512_mic_4ops: isa = "avx512_mic_4ops"; break;
    case dnnl_cpu_isa_avx512_core: isa = "avx512_core"; break;
    case dnnl_cpu_isa_avx512_core_vnni: isa = "avx512_core_vnni"; break;
    case dnnl_cpu_isa_avx512_core_bf16: isa = "avx512_core_bf16"; break;
    case dnnl_cpu_isa_avx512_core_amx: isa = "avx512_core_amx"; break;
    default: isa = "isa " + std::to_string(int(dnnl_get_effective_cpu_isa())); break;
  }
  std::string s = isa + " (oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                  std::to_string(v->patch) + ")";
  for (const char* var : {"ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"})
    if (const char* limit = std::getenv(var); limit && *limit) s += std::string("; ") + var + "=" + limit + " set";
  return s;
#else
  return "no oneDNN in this build";
#endif
}

int onednn_fp32_lanes() {
#ifdef MODELSTAT_HAVE_DNNL
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41: return 4;
    case dnnl_cpu_isa_avx:
    case dnnl_cpu_isa_avx2:
    case dnnl_cpu_isa_avx2_vnni: return 8;
    case dnnl_cpu_isa_avx512_mic:
    case dnnl_cpu_isa_avx512_mic_4ops:
    case dnnl_cpu_isa_avx512_core:
    case dnnl_cpu_isa_avx512_core_vnni:
    case dnnl_cpu_isa_avx512_core_bf16:
    case dnnl_cpu_isa_avx512_core_amx: return 16;
    default: return 0;
  }
#else
  return 0;
#endif
}

std::string openmp_description() {
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  if (!policy || !*policy)
    return "OMP_WAIT_POLICY unset: libgomp's default, threads spin after each parallel region before they sleep "
           "(slow when anything else shares the CPUs)";
  const char* chooser = std::getenv("MODELSTAT_OMP_WAIT_POLICY");
  const bool ours = chooser && std::string(chooser) == "default";
  std::string s = std::string("OMP_WAIT_POLICY=") + policy;
  const char* spin = std::getenv("GOMP_SPINCOUNT");
  if (spin && *spin) s += std::string(", GOMP_SPINCOUNT=") + spin;
  if (!ours) return s + " (set by the user)";
  // modelstat chose; the spin count by the load it measured at start (tools/cpu_load.hpp).
  const char* busy = std::getenv("MODELSTAT_CPU_BUSY_AT_START");
  if (!busy) return s + " (modelstat's default; set OMP_WAIT_POLICY to choose another)";
  return s + " (modelstat's default: " + busy + " CPUs' worth of other work ran at start, so team threads " +
         (spin && *spin ? "spin briefly before they sleep" : "sleep at once") +
         "; set OMP_WAIT_POLICY or GOMP_SPINCOUNT to choose)";
}

void describe_run(Device& device, RunContext& context) {
  device.describe(context);
  if (context.device_kind == "cpu") {
    context.blas = blas_description();
    context.onednn_isa = onednn_isa_description();
    context.openmp = openmp_description();
  }
  context.threads = at::get_num_threads();
  context.allocator = configure_host_allocator();
  context.date = utc_now_iso8601();
  context.host = hostname();
  context.torch_version = std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
                          std::to_string(TORCH_VERSION_PATCH);
}

}  // namespace modelstat::profiler

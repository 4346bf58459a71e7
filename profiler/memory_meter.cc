// The CPU memory meter: a counting allocator in front of c10's default CPU
// allocator.
//
// Each block is allocated from the default allocator with a 64-byte header in
// front of the data (64 keeps the default alignment, c10::gAlignment): the
// header holds the requested size, so the deleter can subtract it without a
// lookup table or a per-block heap context. The data pointer is also the
// DataPtr's context, so the raw_allocate / raw_deallocate interface keeps
// working (raw_deleter() below). Frees of blocks allocated before the
// counting allocator was installed go through their original deleter and
// never touch the counters.
#include "profiler/memory_meter.hpp"
#include "profiler/torch_compat.hpp"

#include <c10/core/CPUAllocator.h>

#include <atomic>
#include <mutex>

#include "modelstat/error.hpp"

namespace modelstat::profiler {

namespace {

constexpr size_t kHeaderBytes = 64;
static_assert(kHeaderBytes % alignof(std::max_align_t) == 0 && kHeaderBytes >= sizeof(size_t));

struct Counters {
  std::atomic<int64_t> live{0};
  std::atomic<int64_t> peak{0};

  void add(int64_t bytes) {
    const int64_t now = live.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    int64_t seen = peak.load(std::memory_order_relaxed);
    while (now > seen && !peak.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
    }
  }
  void remove(int64_t bytes) { live.fetch_sub(bytes, std::memory_order_relaxed); }
};

Counters& counters() {
  static Counters* c = new Counters();  // never destroyed: deleters may run at exit
  return *c;
}

c10::Allocator* underlying() {
  static c10::Allocator* a = c10::GetDefaultCPUAllocator();
  return a;
}

void counted_delete(void* data) {
  if (!data) return;
  char* base = static_cast<char*>(data) - kHeaderBytes;
  counters().remove(int64_t(*reinterpret_cast<size_t*>(base)));
  underlying()->raw_deleter()(base);
}

class CountingCpuAllocator final : public c10::Allocator {
 public:
#if MODELSTAT_TORCH_AT_LEAST(2, 4)
  c10::DataPtr allocate(size_t n) override { return counted_allocate(n); }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
#else
  c10::DataPtr allocate(size_t n) const override { return counted_allocate(n); }
#endif
  c10::DeleterFnPtr raw_deleter() const override { return &counted_delete; }

 private:
  static c10::DataPtr counted_allocate(size_t n) {
    if (n == 0) return underlying()->allocate(0);  // nothing to count; its own deleter
    c10::DataPtr block = underlying()->allocate(n + kHeaderBytes);
    char* base = static_cast<char*>(block.get());
    // The default CPU allocator's context is its data pointer (raw interface):
    // take the block over and free it through raw_deleter() in counted_delete.
    block.release_context();
    *reinterpret_cast<size_t*>(base) = n;
    counters().add(int64_t(n));
    void* data = base + kHeaderBytes;
    return {data, data, &counted_delete, c10::Device(c10::DeviceType::CPU)};
  }
};

void install_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (!underlying()->raw_deleter())
      throw Error(ErrorKind::Runtime,
                  "the default CPU allocator has no raw deleter: cannot count CPU memory");
    static CountingCpuAllocator* counting = new CountingCpuAllocator();  // never destroyed, as its deleter
    // Highest priority, so a later SetCPUAllocator of lower priority cannot
    // silently bypass the counting.
    c10::SetCPUAllocator(counting, /*priority=*/UINT8_MAX);
    if (c10::GetCPUAllocator() != counting)
      throw Error(ErrorKind::Runtime,
                  "could not install the counting CPU allocator (another one has priority)");
  });
}

class CpuMemoryMeter final : public MemoryMeter {
 public:
  CpuMemoryMeter() { install_once(); }
  int64_t live_bytes() override { return counters().live.load(); }
  int64_t peak_bytes() override { return counters().peak.load(); }
  void reset_peak() override { counters().peak.store(counters().live.load()); }
  std::string method() const override {
    return "CPU: counting wrapper around c10's default CPU allocator (bytes ATen requested for tensor "
           "storage; library-internal buffers such as oneDNN scratchpads not seen)";
  }
};

}  // namespace

std::unique_ptr<MemoryMeter> make_cpu_memory_meter() {
  return std::make_unique<CpuMemoryMeter>();
}

std::unique_ptr<MemoryMeter> make_memory_meter(const at::Device& device) {
  if (device.is_cpu()) return make_cpu_memory_meter();
  if (device.is_cuda()) {
#ifdef MODELSTAT_TORCH_CUDA
    return make_torch_cuda_memory_meter(device.has_index() ? device.index() : 0);
#endif
  }
  throw Error(ErrorKind::Runtime, "no memory meter for device " + device.str() + " in this build");
}

}  // namespace modelstat::profiler

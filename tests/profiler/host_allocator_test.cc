// The host allocator's rule (profiler/run_context.hpp, configure_host_allocator):
// every block on glibc's heap, none mapped afresh, so a buffer above glibc's
// 32 MiB mmap threshold that one inference frees is reused by the next with
// its pages mapped. Checked against glibc's own accounting (mallinfo2) and the
// kernel's page-fault counter, never against a timing.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <cstdint>

#include "profiler/run_context.hpp"

namespace modelstat::profiler {
namespace {

#if defined(__GLIBC__)
constexpr int64_t kBytes = int64_t(48) << 20;  // above glibc's largest mmap threshold (32 MiB)

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return u.ru_minflt;
}

TEST(HostAllocator, BlocksAboveTheMmapThresholdComeFromTheHeap) {
  const std::string rule = configure_host_allocator();
  ASSERT_NE(rule.find("no mmap"), std::string::npos) << rule;
  EXPECT_EQ(host_mmap_threshold_bytes(), 0);
  const struct mallinfo2 before = mallinfo2();
  at::Tensor t = at::empty({kBytes / 4}, at::kFloat);
  t.fill_(1.0f);
  const struct mallinfo2 live = mallinfo2();
  // glibc counts mmapped blocks in hblkhd and heap blocks in uordblks.
  EXPECT_LT(live.hblkhd - before.hblkhd, size_t(kBytes)) << "the 48 MiB block was mapped afresh";
  EXPECT_GE(live.uordblks - before.uordblks, size_t(kBytes));
}

TEST(HostAllocator, AFreedLargeBufferIsReusedWithItsPagesMapped) {
  configure_host_allocator();
  const int64_t n = kBytes / 4;
  // Inference after inference: the same 48 MiB buffer allocated, filled and freed. Mapped afresh
  // (glibc's rule for blocks above its mmap threshold), every cycle faults in all 12288 pages. On
  // the heap, a cycle reuses pages a previous one faulted in; glibc may still grow the heap now and
  // then (posix_memalign's 64-byte alignment asks for a little more than a freed block of the same
  // size holds, and a small block placed after it can keep it from merging with the heap's top), so
  // the check is on the total over several cycles after warm-up ones, not on any one cycle. How many
  // cycles grow the heap before it settles depends on the heap's state when the test starts (two did
  // after two warm-ups in one build of this binary, none in another, none with --gtest_repeat):
  // eight warm-up cycles, then the steady state is measured. Mapped afresh, every cycle still faults.
  constexpr int kCycles = 6;
  for (int warm = 0; warm < 8; ++warm) at::empty({n}, at::kFloat).fill_(1.0f);
  const long start = minor_faults();
  for (int cycle = 0; cycle < kCycles; ++cycle) at::empty({n}, at::kFloat).fill_(2.0f);
  const long faults = minor_faults() - start;
  const long fresh = long(kBytes / 4096) * kCycles;  // every cycle on fresh pages
  EXPECT_LT(faults, fresh / 3) << faults << " minor faults over " << kCycles << " cycles of a 48 MiB buffer ("
                               << fresh << " if every cycle were mapped afresh)";
}
#endif

}  // namespace
}  // namespace modelstat::profiler

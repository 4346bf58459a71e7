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
  { at::empty({n}, at::kFloat).fill_(1.0f); }  // the heap grows once and keeps the pages
  const long start = minor_faults();
  { at::empty({n}, at::kFloat).fill_(2.0f); }
  const long faults = minor_faults() - start;
  // A fresh 48 MiB mapping takes one fault per 4 KiB page written: 12288.
  EXPECT_LT(faults, kBytes / 4096 / 8) << faults << " minor faults filling a reused 48 MiB buffer";
}
#endif

}  // namespace
}  // namespace modelstat::profiler

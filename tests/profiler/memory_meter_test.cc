// The memory meters count known allocations exactly: the CPU counting
// allocator, and on a CUDA build with a GPU, the caching allocator's
// statistics (skipped cleanly otherwise).
#include "profiler/memory_meter.hpp"

#include <ATen/ATen.h>
#include <c10/core/CPUAllocator.h>
#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace modelstat::profiler {
namespace {

TEST(MemoryMeterTest, CpuCountsATensorExactly) {
  auto meter = make_cpu_memory_meter();
  const int64_t base = meter->live_bytes();
  meter->reset_peak();
  EXPECT_EQ(meter->peak_bytes(), base);
  {
    const at::Tensor t = at::empty({1024}, at::kFloat);  // 1024 * 4 bytes
    EXPECT_EQ(meter->live_bytes(), base + 4096);
    EXPECT_EQ(meter->peak_bytes(), base + 4096);
    const at::Tensor u = at::empty({256}, at::kDouble);  // 256 * 8 bytes, both live
    EXPECT_EQ(meter->live_bytes(), base + 4096 + 2048);
    EXPECT_EQ(meter->peak_bytes(), base + 6144);
  }
  EXPECT_EQ(meter->live_bytes(), base) << "freed: back to the baseline";
  EXPECT_EQ(meter->peak_bytes(), base + 6144) << "the peak stays until reset";
  meter->reset_peak();
  EXPECT_EQ(meter->peak_bytes(), base);
}

TEST(MemoryMeterTest, CpuDataIsUsableAndAligned) {
  auto meter = make_cpu_memory_meter();
  at::Tensor t = at::arange(1000, at::kFloat);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64, 0u) << "the 64-byte alignment of c10 is kept";
  EXPECT_FLOAT_EQ(t.sum().item<float>(), 499500.0f);
}

TEST(MemoryMeterTest, CpuFreesBlocksFromTheDefaultAllocator) {
  auto meter = make_cpu_memory_meter();
  // A block with the default allocator's own deleter, as every block
  // allocated before the counting allocator was installed has.
  c10::DataPtr old_block = c10::GetDefaultCPUAllocator()->allocate(4096);
  const int64_t base = meter->live_bytes();
  old_block.clear();  // freed through its own deleter: not counted, no crash
  EXPECT_EQ(meter->live_bytes(), base);
}

TEST(MemoryMeterTest, CpuRawInterfaceIsCounted) {
  auto meter = make_cpu_memory_meter();
  c10::Allocator* allocator = c10::GetCPUAllocator();
  const int64_t base = meter->live_bytes();
  void* p = allocator->raw_allocate(100);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(meter->live_bytes(), base + 100);
  allocator->raw_deallocate(p);
  EXPECT_EQ(meter->live_bytes(), base);
}

TEST(MemoryMeterTest, CpuCountsAcrossThreads) {
  auto meter = make_cpu_memory_meter();
  const int64_t base = meter->live_bytes();
  meter->reset_peak();
  std::vector<at::Tensor> kept(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&kept, i] {
      for (int k = 0; k < 1000; ++k) at::empty({64}, at::kFloat);  // 256 B, freed at once
      kept[size_t(i)] = at::empty({1000}, at::kByte);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(meter->live_bytes(), base + 4000);
  EXPECT_GE(meter->peak_bytes(), base + 4000);
  EXPECT_LE(meter->peak_bytes(), base + 4000 + 4 * 256);
  kept.clear();
  EXPECT_EQ(meter->live_bytes(), base);
}

TEST(MemoryMeterTest, CudaCountsATensor) {
#ifdef MODELSTAT_TORCH_CUDA
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  auto meter = make_memory_meter(at::Device(at::kCUDA, 0));
  const int64_t base = meter->live_bytes();
  meter->reset_peak();
  {
    const at::Tensor t = at::empty({1 << 20}, at::TensorOptions().dtype(at::kFloat).device(at::kCUDA));
    EXPECT_EQ(meter->live_bytes(), base + (4 << 20));  // a multiple of the 512-byte rounding
    EXPECT_EQ(meter->peak_bytes(), base + (4 << 20));
  }
  EXPECT_EQ(meter->live_bytes(), base);
  EXPECT_EQ(meter->peak_bytes(), base + (4 << 20));
#else
  GTEST_SKIP() << "built without a CUDA LibTorch";
#endif
}

}  // namespace
}  // namespace modelstat::profiler

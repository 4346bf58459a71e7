// CUDA timers and device query. Runs in every build: without CUDA support it checks the
// clean "not built with CUDA" answers; with it but without a device (or driver) it checks
// that errors surface as modelstat::Error and the GPU tests skip; on a GPU machine it times
// real device work (cudaMemsetAsync, no kernels needed).
#include <gtest/gtest.h>

#include "modelstat/error.hpp"
#include "profiler/device_query.hpp"
#include "profiler/timer.hpp"
#include "test_support.hpp"

#if defined(MODELSTAT_HAVE_CUDA) && MODELSTAT_HAVE_CUDA
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <type_traits>
#include <utility>

#include "profiler/cuda/cuda_runtime.hpp"
#include "profiler/cuda/cuda_timer.hpp"
#endif

namespace modelstat::profiler {
namespace {

#define SKIP_WITHOUT_CUDA_DEVICE()                                                     \
  do {                                                                                 \
    if (!cuda_available()) GTEST_SKIP() << "no CUDA: " << query_cuda_runtime().status; \
  } while (0)

TEST(CudaQuery, NeverThrowsAndIsConsistent) {
  const CudaRuntimeInfo info = query_cuda_runtime();
  EXPECT_FALSE(info.status.empty());
  EXPECT_EQ(info.available, cuda_available());
  if (info.available) {
    EXPECT_EQ(info.status, "ok");
    ASSERT_FALSE(info.devices.empty());
    for (const CudaDeviceInfo& d : info.devices) {
      EXPECT_FALSE(d.name.empty());
      EXPECT_GT(d.total_memory_bytes, 0);
      EXPECT_GT(d.multiprocessor_count, 0);
      EXPECT_GE(d.compute_capability_major, 3);
    }
    EXPECT_GT(info.driver_version, 0);
  } else {
    EXPECT_TRUE(info.devices.empty());
  }
}

TEST(CudaQuery, VersionString) {
  EXPECT_EQ(cuda_version_string(13000), "13.0");
  EXPECT_EQ(cuda_version_string(12040), "12.4");
  EXPECT_EQ(cuda_version_string(11080), "11.8");
  EXPECT_EQ(cuda_version_string(0), "none");
}

#if !(defined(MODELSTAT_HAVE_CUDA) && MODELSTAT_HAVE_CUDA)

TEST(CudaQuery, BuildWithoutCudaAnswersCleanly) {
  EXPECT_FALSE(cuda_available());
  const CudaRuntimeInfo info = query_cuda_runtime(/*query_free_memory=*/true);
  EXPECT_FALSE(info.built_with_cuda);
  EXPECT_FALSE(info.available);
  EXPECT_NE(info.status.find("not built with CUDA"), std::string::npos) << info.status;
  modelstat::test::expect_error([] { make_cuda_interval_timer(nullptr); }, ErrorKind::Runtime,
                                {"not built with CUDA"});
  EXPECT_THROW(make_cuda_marker_timer(nullptr), Error);
}

TEST(CudaTimer, SkippedWithoutCudaBuild) {
  GTEST_SKIP() << "built without CUDA (MODELSTAT_CUDA=OFF)";
}

#else  // a CUDA build

TEST(CudaQuery, CudaBuildReportsRuntimeVersion) {
  const CudaRuntimeInfo info = query_cuda_runtime();
  EXPECT_TRUE(info.built_with_cuda);
  // libcudart answers without a driver; its major version is the one compiled against.
  EXPECT_EQ(info.runtime_version / 1000, CUDART_VERSION / 1000);
}

TEST(CudaQuery, NoDeviceSurfacesAsErrorNotCrash) {
  // A failed CUDA call is a modelstat::Error, a successful one nothing.
  EXPECT_THROW(cuda::check(cudaErrorNoDevice, "cudaFake()"), Error);
  EXPECT_NO_THROW(cuda::check(cudaSuccess, "cudaFake()"));
  // With a device the event is created (the CudaFixture tests below time with it).
  if (cuda_available()) return;
  // Creating an event needs a device: the checked call must throw modelstat::Error(Runtime)
  // naming the CUDA call, rather than leave a null event behind.
  modelstat::test::expect_error([] { make_cuda_interval_timer(nullptr); }, ErrorKind::Runtime, {"cudaEventCreate"});
}

// Device memory and a stream for the tests below.
class CudaFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_CUDA_DEVICE();
    MODELSTAT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    MODELSTAT_CUDA_CHECK(cudaMalloc(&buffer_, kBytes));
  }
  void TearDown() override {
    if (buffer_ != nullptr) (void)cudaFree(buffer_);
    if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
  }
  // Device work of a size proportional to `bytes`, asynchronous to the host.
  void memset_async(size_t bytes, int value) {
    MODELSTAT_CUDA_CHECK(cudaMemsetAsync(buffer_, value, bytes, stream_));
  }
  static constexpr size_t kBytes = size_t(1) << 30;  // 1 GiB: milliseconds of memset on any GPU
  cudaStream_t stream_ = nullptr;
  void* buffer_ = nullptr;
};

TEST_F(CudaFixture, EventIsMoveOnlyRaii) {
  static_assert(!std::is_copy_constructible_v<cuda::CudaEvent>);
  static_assert(std::is_nothrow_move_constructible_v<cuda::CudaEvent>);
  cuda::CudaEvent a;
  const cudaEvent_t handle = a.get();
  cuda::CudaEvent b(std::move(a));
  EXPECT_EQ(b.get(), handle);
  EXPECT_EQ(a.get(), nullptr);  // NOLINT(bugprone-use-after-move): checking the moved-from state
  b.record(stream_);
  b.synchronize();
  EXPECT_TRUE(b.ready());
}

TEST_F(CudaFixture, IntervalTimesDeviceWorkNotTheEnqueue) {
  auto timer = make_cuda_interval_timer(stream_);
  EXPECT_EQ(timer->domain(), TimeDomain::CudaEvents);
  memset_async(kBytes, 1);  // warm-up: first use of the stream and memory
  MODELSTAT_CUDA_CHECK(cudaStreamSynchronize(stream_));

  const auto host_start = std::chrono::steady_clock::now();
  timer->start();
  for (int i = 0; i < 8; ++i) memset_async(kBytes, i);
  timer->stop();
  const double enqueue_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - host_start).count();
  const double device_seconds = timer->seconds();  // waits for the stop event
  EXPECT_GT(device_seconds, 0.0);
  // 8 GiB of memset takes milliseconds even at ~3 TB/s; enqueueing it takes microseconds.
  EXPECT_GT(device_seconds, 1e-3);
  EXPECT_GT(device_seconds, enqueue_seconds) << "enqueue " << enqueue_seconds << " s";
}

TEST_F(CudaFixture, MarkersGivePositiveOrderedIntervalsWithOneWait) {
  auto timer = make_cuda_marker_timer(stream_);
  EXPECT_EQ(timer->domain(), TimeDomain::CudaEvents);
  memset_async(kBytes, 0);
  for (int iteration = 0; iteration < 3; ++iteration) {  // events are pooled and reused
    timer->reset(4);
    timer->mark(0);
    memset_async(kBytes / 8, 1);  // small
    timer->mark(1);
    memset_async(kBytes, 2);  // 8x larger
    timer->mark(2);
    timer->mark(3);  // nothing between: (near) zero
    const std::vector<double> iv = timer->intervals();
    ASSERT_EQ(iv.size(), 3u);
    EXPECT_GT(iv[0], 0.0);
    EXPECT_GT(iv[1], 0.0);
    EXPECT_GT(iv[1], 2.0 * iv[0]) << iv[0] << " vs " << iv[1];
    EXPECT_GE(iv[2], 0.0);
    EXPECT_LT(iv[2], iv[0]);
  }
  timer->reset(3);
  timer->mark(0);
  EXPECT_THROW(timer->mark(2), Error);
  EXPECT_THROW(timer->intervals(), Error);
}

// append() grows the event pool only when it is full; offsets() reads nested
// intervals from one wait.
TEST_F(CudaFixture, AppendedMarkersGiveOffsetsForNestedIntervals) {
  auto timer = make_cuda_marker_timer(stream_);
  memset_async(kBytes, 0);
  for (int iteration = 0; iteration < 3; ++iteration) {
    timer->reset(0);
    EXPECT_EQ(timer->append(), 0u);  // outer begins
    memset_async(kBytes / 8, 1);
    EXPECT_EQ(timer->append(), 1u);  // inner begins
    memset_async(kBytes, 2);
    EXPECT_EQ(timer->append(), 2u);  // inner ends
    memset_async(kBytes / 8, 3);
    EXPECT_EQ(timer->append(), 3u);  // outer ends
    const std::vector<double> t = timer->offsets();
    ASSERT_EQ(t.size(), 4u);
    EXPECT_EQ(t[0], 0.0);
    for (size_t i = 1; i < t.size(); ++i) EXPECT_GT(t[i], t[i - 1]);
    EXPECT_GT(t[3] - t[0], t[2] - t[1]);  // the outer interval holds the inner one and more
  }
  timer->reset(0);
  timer->append();
  timer->append();
  EXPECT_EQ(timer->offsets().size(), 2u);
}

TEST_F(CudaFixture, QueryReadsClocksAndFreeMemory) {
  const CudaRuntimeInfo info = query_cuda_runtime(/*query_free_memory=*/true);
  ASSERT_TRUE(info.available);
  for (const CudaDeviceInfo& d : info.devices) {
    EXPECT_GT(d.free_memory_bytes, 0);
    EXPECT_LE(d.free_memory_bytes, d.total_memory_bytes);
    EXPECT_FALSE(d.pci_bus_id.empty());
  }
  std::printf("[ info     ] driver %s, runtime %s, device 0: %s, SM clock %d kHz, memory clock %d kHz\n",
              cuda_version_string(info.driver_version).c_str(),
              cuda_version_string(info.runtime_version).c_str(), info.devices[0].name.c_str(),
              info.devices[0].sm_clock_khz, info.devices[0].memory_clock_khz);
}

#endif

}  // namespace
}  // namespace modelstat::profiler

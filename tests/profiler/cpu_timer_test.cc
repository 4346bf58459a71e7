#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "modelstat/error.hpp"
#include "profiler/timer.hpp"

namespace modelstat::profiler {
namespace {

void busy_wait(double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
  }
}

TEST(CpuTimer, IntervalMeasuresTheWorkBetweenStartAndStop) {
  auto timer = make_cpu_interval_timer();
  EXPECT_EQ(timer->domain(), TimeDomain::Host);
  timer->start();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  timer->stop();
  const double s = timer->seconds();
  EXPECT_GE(s, 0.020);
  EXPECT_LT(s, 1.0);
  EXPECT_DOUBLE_EQ(timer->seconds(), s);  // reading twice gives the same interval
}

TEST(CpuTimer, IntervalMisuseThrows) {
  auto timer = make_cpu_interval_timer();
  EXPECT_THROW(timer->seconds(), Error);
  EXPECT_THROW(timer->stop(), Error);
  timer->start();
  EXPECT_THROW(timer->seconds(), Error);  // started, not stopped
}

TEST(CpuTimer, MarkersGiveOrderedPositiveIntervals) {
  auto timer = make_cpu_marker_timer();
  EXPECT_EQ(timer->domain(), TimeDomain::Host);
  for (int iteration = 0; iteration < 2; ++iteration) {  // reusable
    timer->reset(4);
    timer->mark(0);
    busy_wait(0.002);
    timer->mark(1);
    busy_wait(0.010);
    timer->mark(2);
    timer->mark(3);  // an empty interval
    const std::vector<double> iv = timer->intervals();
    ASSERT_EQ(iv.size(), 3u);
    EXPECT_GE(iv[0], 0.002);
    EXPECT_GE(iv[1], 0.010);
    EXPECT_GT(iv[1], iv[0]);
    EXPECT_GE(iv[2], 0.0);
    EXPECT_LT(iv[2], 0.002);
  }
}

TEST(CpuTimer, MarkerMisuseThrows) {
  auto timer = make_cpu_marker_timer();
  timer->reset(3);
  EXPECT_THROW(timer->mark(1), Error);  // out of order
  timer->mark(0);
  timer->mark(1);
  EXPECT_THROW(timer->intervals(), Error);  // marker 2 missing
  timer->mark(2);
  EXPECT_THROW(timer->mark(3), Error);  // beyond reset()'s count
  EXPECT_EQ(timer->intervals().size(), 2u);
  timer->reset(1);
  timer->mark(0);
  EXPECT_TRUE(timer->intervals().empty());
}

// Markers whose number is not known in advance: append() past reset()'s
// count, offsets() from marker 0, nested intervals read from them.
TEST(CpuTimer, AppendedMarkersGiveOffsetsForNestedIntervals) {
  auto timer = make_cpu_marker_timer();
  for (int iteration = 0; iteration < 2; ++iteration) {  // the pool grown by the first is reused
    timer->reset(0);
    EXPECT_EQ(timer->append(), 0u);  // outer begins
    busy_wait(0.002);
    EXPECT_EQ(timer->append(), 1u);  // inner begins
    busy_wait(0.005);
    EXPECT_EQ(timer->append(), 2u);  // inner ends
    busy_wait(0.002);
    EXPECT_EQ(timer->append(), 3u);  // outer ends
    const std::vector<double> t = timer->offsets();
    ASSERT_EQ(t.size(), 4u);
    EXPECT_EQ(t[0], 0.0);
    for (size_t i = 1; i < t.size(); ++i) EXPECT_GE(t[i], t[i - 1]);  // one clock, in order
    const double inner = t[2] - t[1], outer = t[3] - t[0];
    EXPECT_GE(inner, 0.005);
    EXPECT_GE(outer, inner + 0.004);  // the inner interval and both waits around it
    // The same markers read as consecutive intervals.
    const std::vector<double> iv = timer->intervals();
    ASSERT_EQ(iv.size(), 3u);
    EXPECT_GE(iv[1], 0.005);
  }
  // append() continues a reset() count and goes beyond it; offsets() needs them all.
  timer->reset(3);
  EXPECT_EQ(timer->append(), 0u);
  timer->mark(1);
  EXPECT_THROW(timer->offsets(), Error);  // marker 2 missing
  EXPECT_EQ(timer->append(), 2u);
  EXPECT_EQ(timer->append(), 3u);
  EXPECT_EQ(timer->offsets().size(), 4u);
  timer->reset(0);
  EXPECT_TRUE(timer->offsets().empty());
  EXPECT_TRUE(timer->intervals().empty());
}

TEST(CpuTimer, DomainNames) {
  EXPECT_STREQ(to_string(TimeDomain::Host), "host steady_clock");
  EXPECT_STREQ(to_string(TimeDomain::CudaEvents), "CUDA events");
}

}  // namespace
}  // namespace modelstat::profiler

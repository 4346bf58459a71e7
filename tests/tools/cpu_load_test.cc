// The load reading that chooses the OpenMP spin count at start (tools/cpu_load.hpp),
// on /proc/stat texts written by hand in the kernel's layout
// (user nice system idle iowait irq softirq steal guest guest_nice).
#include "tools/cpu_load.hpp"

#include <gtest/gtest.h>

namespace modelstat::cli {
namespace {

TEST(CpuLoadTest, ParsesPerCpuLinesOnly) {
  const auto cpus = parse_proc_stat(
      "cpu  300 10 50 1000 5 1 2 3 0 0\n"
      "cpu0 100 10 20 500 5 1 2 3 0 0\n"
      "cpu1 200 0 30 500 0 0 0 0 0 0\n"
      "intr 12345 1 2\n"
      "ctxt 999\n");
  ASSERT_EQ(cpus.size(), 2u);
  // cpu0: busy = 100 + 10 + 20 + 1 + 2 + 3 = 136; total = 136 + 500 + 5 = 641.
  EXPECT_EQ(cpus.at(0).busy, 136u);
  EXPECT_EQ(cpus.at(0).total, 641u);
  EXPECT_EQ(cpus.at(1).busy, 230u);
  EXPECT_EQ(cpus.at(1).total, 730u);
}

TEST(CpuLoadTest, OldKernelsWithFourFieldsStillParse) {
  const auto cpus = parse_proc_stat("cpu0 10 0 10 80\n");
  ASSERT_EQ(cpus.size(), 1u);
  EXPECT_EQ(cpus.at(0).busy, 20u);
  EXPECT_EQ(cpus.at(0).total, 100u);
}

TEST(CpuLoadTest, OneHogOnTwoCpusIsOneCpuBusy) {
  // Between the readings: cpu0 ran a hog for all of its 20 ticks, cpu1 was idle for its 20.
  const auto before = parse_proc_stat("cpu0 100 0 0 100 0 0 0 0\ncpu1 100 0 0 100 0 0 0 0\n");
  const auto after = parse_proc_stat("cpu0 120 0 0 100 0 0 0 0\ncpu1 100 0 0 120 0 0 0 0\n");
  EXPECT_DOUBLE_EQ(busy_cpus(before, after, {0, 1}), 1.0);
  EXPECT_DOUBLE_EQ(busy_cpus(before, after, {1}), 0.0);  // only the allowed CPUs count
  EXPECT_EQ(spin_count_for(1.0), 0);
}

TEST(CpuLoadTest, IdleCpusSpinAndAStrayTickDoesNotChangeThat) {
  // One busy tick out of 15 on cpu0 (a timer, the shell): 0.067 CPUs, under the 0.25 limit.
  const auto before = parse_proc_stat("cpu0 0 0 0 0 0 0 0 0\ncpu1 0 0 0 0 0 0 0 0\n");
  const auto after = parse_proc_stat("cpu0 0 0 1 14 0 0 0 0\ncpu1 0 0 0 15 0 0 0 0\n");
  const double busy = busy_cpus(before, after, {0, 1});
  EXPECT_NEAR(busy, 1.0 / 15.0, 1e-12);
  EXPECT_EQ(spin_count_for(busy), kSpinWhenIdle);
  EXPECT_EQ(kSpinWhenIdle, 3000);
}

TEST(CpuLoadTest, ALowPriorityBuildCountsAsBusy) {
  // nice time is busy time: a nice 19 compiler on one CPU half the time is 0.5 CPUs of other work.
  const auto before = parse_proc_stat("cpu0 0 0 0 0 0 0 0 0\ncpu1 0 0 0 0 0 0 0 0\n");
  const auto after = parse_proc_stat("cpu0 0 10 0 10 0 0 0 0\ncpu1 0 0 0 20 0 0 0 0\n");
  EXPECT_DOUBLE_EQ(busy_cpus(before, after, {0, 1}), 0.5);
  EXPECT_EQ(spin_count_for(0.5), 0);
}

TEST(CpuLoadTest, ALoadInOneWindowOnlyIsNotPersistentAHogInBothIs) {
  // 10 ticks a window per CPU. Window 1: cpu0 busy 6 of 10 (a process exiting); window 2: idle.
  const auto r0 = parse_proc_stat("cpu0 0 0 0 0 0 0 0 0\ncpu1 0 0 0 0 0 0 0 0\n");
  const auto r1 = parse_proc_stat("cpu0 0 0 6 4 0 0 0 0\ncpu1 0 0 0 10 0 0 0 0\n");
  const auto r2 = parse_proc_stat("cpu0 0 0 6 14 0 0 0 0\ncpu1 0 0 0 20 0 0 0 0\n");
  EXPECT_DOUBLE_EQ(busy_cpus(r0, r2, {0, 1}), 0.3);  // one 0.2 s window would call it busy
  EXPECT_DOUBLE_EQ(persistent_busy_cpus(r0, r1, r2, {0, 1}), 0.0);
  // A hog on cpu1 in both windows (and the same exit on cpu0 in the first): one CPU busy.
  const auto h1 = parse_proc_stat("cpu0 0 0 6 4 0 0 0 0\ncpu1 10 0 0 0 0 0 0 0\n");
  const auto h2 = parse_proc_stat("cpu0 0 0 6 14 0 0 0 0\ncpu1 20 0 0 0 0 0 0 0\n");
  EXPECT_DOUBLE_EQ(persistent_busy_cpus(r0, h1, h2, {0, 1}), 1.0);
  EXPECT_EQ(spin_count_for(persistent_busy_cpus(r0, h1, h2, {0, 1})), 0);
}

TEST(CpuLoadTest, UnreadableOrMissingCountsAsNoSpin) {
  EXPECT_EQ(spin_count_for(-1), 0);  // /proc/stat could not be read: sleep at once, the safe side
  const auto before = parse_proc_stat("cpu0 0 0 0 0 0 0 0 0\n");
  EXPECT_DOUBLE_EQ(busy_cpus(before, before, {0, 7}), 0.0);  // no ticks passed, cpu7 absent
}

TEST(CpuLoadTest, ThisMachineHasAllowedCpusAndAReading) {
  EXPECT_FALSE(allowed_cpus().empty());
  const double persistent = sample_persistent_busy_cpus(0.02);
  EXPECT_GE(persistent, 0.0);
  EXPECT_LE(persistent, double(allowed_cpus().size()));
}

}  // namespace
}  // namespace modelstat::cli

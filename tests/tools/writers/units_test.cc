// The human-unit formatters (tools/writers/units.hpp): one prefix rule for all
// of them, so a value whose printed form rounds up to the base moves to the
// next prefix in every unit ("999.96" never prints as "1000").
#include "tools/writers/units.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace modelstat {
namespace {

TEST(Units, EveryUnitRollsOverWhereItsPrintedFormRoundsToTheBase) {
  EXPECT_EQ(human_count(999994), "999.99 K");
  EXPECT_EQ(human_count(999999), "1.00 M");              // 999.999 K at two decimals
  EXPECT_EQ(human_bytes(1048575), "1.00 MiB");           // 1023.999 KiB at one decimal
  EXPECT_EQ(human_bytes(1000 * 1024), "1000.0 KiB");     // below the base: stays
  EXPECT_EQ(human_seconds(0.0009996), "1.00 ms");        // 999.6 µs at no decimal
  EXPECT_EQ(seconds_label(999.7e-6), "1 ms");
  EXPECT_EQ(si_rate(999.7e9, "FLOP/s"), "1.00 TFLOP/s");
  EXPECT_EQ(si_label(999960), "1M");
  EXPECT_EQ(human_flops_rate(9.9996e11), "1.00 TFLOP/s");  // was "1000 GFLOP/s"
  EXPECT_EQ(rate_text(999.6), "1,000");
}

TEST(Units, ThreeSignificantDigitsCountTheRounding) {
  EXPECT_EQ(human_seconds(9.996e-6), "10.0 \xC2\xB5s");  // not "10.00 µs"
  EXPECT_EQ(human_seconds(99.96e-3), "100 ms");
  EXPECT_EQ(rate_text(99.96), "100");
  EXPECT_EQ(rate_text(9.996), "10.0");
  EXPECT_EQ(rate_text(0.52), "0.52");
  EXPECT_EQ(three_digits(0.5), "0.500");
  EXPECT_EQ(three_digits(95.34), "95.3");
  EXPECT_EQ(human_bandwidth(2.9e12), "2900 GB/s");       // one unit: no prefix
}

TEST(Units, NotKnownIsADash) {
  for (double v : {NAN, INFINITY}) {
    EXPECT_EQ(human_seconds(v), "-");
    EXPECT_EQ(seconds_label(v), "-");
    EXPECT_EQ(rate_text(v), "-");
    EXPECT_EQ(si_rate(v, "B/s"), "-");
    EXPECT_EQ(si_text(v, "B/s"), "-");
    EXPECT_EQ(three_digits(v), "-");
  }
  EXPECT_EQ(rate_text(std::optional<double>()), "-");
}

}  // namespace
}  // namespace modelstat

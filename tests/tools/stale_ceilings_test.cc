// The age of saved ceilings and the notice a forecast on old ones carries
// (tools/cli_common.hpp): dates written by hand as `modelstat device` writes
// them, `now` fixed.
#include <gtest/gtest.h>

#include <ctime>

#include "tools/cli_common.hpp"

namespace modelstat::cli {
namespace {

DeviceCeilings dated(const std::string& date, const std::string& source = "measured") {
  DeviceCeilings c;
  c.source = source;
  c.date = date;
  return c;
}

// 2026-11-29T12:00:00Z: 1795953600 s after the epoch (20,786 days x 86,400 + 12 x 3,600).
constexpr std::time_t kNoon = 1795953600;

TEST(StaleCeilings, AgeIsTheSecondsFromTheirDateToNow) {
  EXPECT_DOUBLE_EQ(*ceilings_age_seconds(dated("2026-11-29T12:00:00Z"), kNoon), 0.0);
  EXPECT_DOUBLE_EQ(*ceilings_age_seconds(dated("2026-11-27T11:30:00Z"), kNoon), 2 * 86400.0 + 1800.0);
  // Not measured (a datasheet), undated, or in another form: no age.
  EXPECT_FALSE(ceilings_age_seconds(dated("2026-11-27T11:30:00Z", "datasheet"), kNoon));
  EXPECT_FALSE(ceilings_age_seconds(dated(""), kNoon));
  EXPECT_FALSE(ceilings_age_seconds(dated("2026-11-27 11:30:00"), kNoon));
  EXPECT_FALSE(ceilings_age_seconds(dated("2026-11-27T11:30:00+01"), kNoon));
}

TEST(StaleCeilings, AForecastOnCeilingsADayOldOrMoreSaysSo) {
  // 23 hours: no notice.
  EXPECT_EQ(stale_ceilings_notice(dated("2026-11-28T13:00:00Z"), kNoon, "this forecast"), "");
  // Two days and a quarter: the notice names the date and the age, and the way out.
  const std::string notice = stale_ceilings_notice(dated("2026-11-27T06:00:00Z"), kNoon, "this forecast");
  EXPECT_NE(notice.find("this forecast"), std::string::npos) << notice;
  EXPECT_NE(notice.find("2026-11-27T06:00:00Z (2 days ago)"), std::string::npos) << notice;
  EXPECT_NE(notice.find("modelstat device"), std::string::npos) << notice;
  // 25 hours: "1 day".
  EXPECT_NE(stale_ceilings_notice(dated("2026-11-28T11:00:00Z"), kNoon, "x").find("(1 day ago)"), std::string::npos);
  // A datasheet's ceilings are not a calibration: no notice.
  EXPECT_EQ(stale_ceilings_notice(dated("2026-01-01T00:00:00Z", "datasheet"), kNoon, "this forecast"), "");
}

}  // namespace
}  // namespace modelstat::cli

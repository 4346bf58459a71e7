// Saturating int64 sums for costs: a hostile model's dims can make a count
// overflow 64 bits; the sum then stays at INT64_MAX instead of wrapping.
// Private to modelstat_analyzer (analysis.cc, grouping.cc).
#pragma once

#include <cstdint>

namespace modelstat {

inline int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

}  // namespace modelstat

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

// Adds a node's counts (params, MACs, FLOPs, bytes read and written, weight
// bytes) into a sum of them: a NodeCost (totals, a subgraph's body) or a
// NodeGroup (--group-by), saturating.
template <class Sum, class Cost>
void add_counts(Sum& into, const Cost& c) {
  into.params = sat_add(into.params, c.params);
  into.macs = sat_add(into.macs, c.macs);
  into.flops = sat_add(into.flops, c.flops);
  into.bytes_read = sat_add(into.bytes_read, c.bytes_read);
  into.bytes_written = sat_add(into.bytes_written, c.bytes_written);
  into.weight_bytes = sat_add(into.weight_bytes, c.weight_bytes);
}

}  // namespace modelstat

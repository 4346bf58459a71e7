// A verify record in one paragraph, for test failure messages.
#pragma once

#include <sstream>
#include <string>

#include "modelstat/verification.hpp"

namespace modelstat::profiler {

inline std::string summary(const VerifyRecord& r) {
  std::ostringstream s;
  s << r.verdict << " (exit " << r.exit_code << ")";
  if (!r.error.empty()) s << ": " << r.error;
  for (const auto& op : r.unsupported) s << " [unsupported " << op << "]";
  for (const OutputCheck& c : r.outputs)
    if (c.outside > 0 || !c.problem.empty())
      s << "; " << c.data_set << " output " << c.index << " '" << c.name << "': " << c.outside << " of " << c.elements
        << " outside, max abs diff " << c.max_abs_diff << ", norm rel err " << c.norm_rel_err
        << (c.problem.empty() ? "" : " (" + c.problem + ")") << (c.why.empty() ? "" : "; " + c.why);
  return s.str();
}

}  // namespace modelstat::profiler

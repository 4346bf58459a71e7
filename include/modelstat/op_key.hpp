// The registry key shared by the analyzer's cost rules and the profiler's
// executors: (domain, op type, opset range). One type so a test can check
// that every op with a cost rule also has an executor.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace modelstat {

struct OpKey {
  std::string domain;   // "" is the default ONNX domain ("ai.onnx" is normalised to "")
  std::string op_type;
  int64_t since_version = 1;                                  // first opset covered
  int64_t until_version = std::numeric_limits<int64_t>::max(); // last opset covered

  bool matches(const std::string& d, const std::string& op, int64_t version) const {
    return op == op_type && d == domain && version >= since_version && version <= until_version;
  }
};

// "ai.onnx" and "" are the same domain.
inline std::string normalize_domain(const std::string& d) { return d == "ai.onnx" ? std::string() : d; }

}  // namespace modelstat

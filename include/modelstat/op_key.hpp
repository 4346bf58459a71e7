// The registry key shared by the analyzer's cost rules and the profiler's
// executors: (domain, op type, opset range). One type so a test can check
// that every op with a cost rule also has an executor.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

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

// Lookup of a rule (anything with an OpKey `key`) by (domain, op type, opset),
// indexed by op type once: a model may have 100k nodes. Shared by the cost
// registry and the executor registry.
template <typename Rule>
class OpIndex {
 public:
  explicit OpIndex(const std::vector<Rule>& rules) {
    for (const auto& rule : rules) by_op_.emplace(rule.key.op_type, &rule);
  }
  const Rule* find(const std::string& domain, const std::string& op_type, int64_t opset_version) const {
    const std::string d = normalize_domain(domain);
    auto [begin, end] = by_op_.equal_range(op_type);
    for (auto it = begin; it != end; ++it)
      if (it->second->key.matches(d, op_type, opset_version)) return it->second;
    return nullptr;
  }
  // The rule of (domain, op_type) with the highest since_version, whatever the
  // opset; nullptr when none.
  const Rule* find_newest(const std::string& domain, const std::string& op_type) const {
    const std::string d = normalize_domain(domain);
    const Rule* newest = nullptr;
    auto [begin, end] = by_op_.equal_range(op_type);
    for (auto it = begin; it != end; ++it)
      if (it->second->key.domain == d && (!newest || it->second->key.since_version > newest->key.since_version))
        newest = it->second;
    return newest;
  }

 private:
  std::unordered_multimap<std::string, const Rule*> by_op_;
};

}  // namespace modelstat

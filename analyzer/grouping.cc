// --group-by: the rule that gives a node its group (modelstat/grouping.hpp
// states it with examples) and the analysis's sums per group.
#include "modelstat/grouping.hpp"

#include <cctype>
#include <map>
#include <regex>
#include <vector>

#include "analyzer/saturating.hpp"
#include "modelstat/error.hpp"

namespace modelstat {

const char* const kOtherGroup = "(other)";

namespace {

bool is_separator(char c) {
  return c == '/' || c == '.';
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// "3" (the digits of "h.3" or "/layers/3/"), or "layer_3": a layer index.
bool is_layer_index(std::string_view component) {
  if (all_digits(component)) return true;
  const size_t underscore = component.rfind('_');
  return underscore != std::string_view::npos && underscore > 0 &&
         all_digits(component.substr(underscore + 1));
}

}  // namespace

std::string block_prefix(std::string_view name) {
  // Components end at a separator; the one after the last separator is the
  // node's own name and is never a block.
  size_t begin = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    if (!is_separator(name[i])) continue;
    const std::string_view component = name.substr(begin, i - begin);
    if (i + 1 < name.size() && is_layer_index(component)) return std::string(name.substr(0, i + 1));
    begin = i + 1;
  }
  // No layer index: the first '/'-path component, when something follows it.
  const size_t first = name.find_first_not_of('/');
  if (first == std::string_view::npos) return {};
  const size_t slash = name.find('/', first);
  if (slash == std::string_view::npos || slash + 1 >= name.size()) return {};
  return std::string(name.substr(0, slash + 1));
}

struct GroupRule::Pattern {
  std::regex regex;
};

GroupRule GroupRule::parse(const std::string& spec) {
  GroupRule rule;
  rule.spec_ = spec;
  if (spec == "block") {
    rule.kind_ = Kind::Block;
  } else if (spec == "op") {
    rule.kind_ = Kind::OpType;
  } else if (spec.rfind("re:", 0) == 0) {
    const std::string pattern = spec.substr(3);
    if (pattern.empty())
      throw_usage("--group-by re: needs a pattern after 're:', e.g. --group-by 're:^/h\\.\\d+/'");
    rule.kind_ = Kind::Regex;
    try {
      rule.pattern_ = std::make_shared<const Pattern>(Pattern{std::regex(pattern, std::regex::ECMAScript)});
    } catch (const std::regex_error& e) {
      throw_usage("--group-by: '" + pattern + "' is not a valid ECMAScript regular expression (" + e.what() +
                  ")");
    }
  } else {
    throw_usage("--group-by must be block, op or re:PATTERN, got '" + spec + "'");
  }
  return rule;
}

std::string GroupRule::key(std::string_view node_name, const std::string& op_type) const {
  std::string key;
  switch (kind_) {
    case Kind::Block:
      key = block_prefix(node_name);
      break;
    case Kind::OpType:
      key = op_type;
      break;
    case Kind::Regex: {
      const std::string_view subject = node_name.substr(0, kGroupRegexSubjectLimit);
      std::match_results<std::string_view::const_iterator> match;
      if (std::regex_search(subject.begin(), subject.end(), match, pattern_->regex))
        key = match.size() > 1 && match[1].matched ? match[1].str() : match[0].str();
      break;
    }
  }
  return key.empty() ? std::string(kOtherGroup) : key;
}

void apply_grouping(AnalysisResult& result, const GroupRule& rule) {
  result.group_by = rule.spec();
  result.groups.clear();
  std::map<std::string, size_t> position;  // key -> index in result.groups
  for (const NodeReport& node : result.nodes) {
    NodeGroup& g = group_of(result.groups, position, rule.key(node.name, node.op_type), node.index);
    const NodeCost& c = node.cost;
    g.nodes += 1;
    if (c.status != CostStatus::Exact) g.nodes_not_exact += 1;
    add_counts(g, c);
  }
}

}  // namespace modelstat

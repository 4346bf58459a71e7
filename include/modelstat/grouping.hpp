// Grouped views (--group-by): a rule gives every top-level node a group key,
// and the analysis, the profile and the report sum their rows per group, the
// groups in the order their first node appears (graph order). The rule exists
// here once; the sums are apply_grouping's (analysis: analyzer/grouping.cc;
// profile: modelstat/joined.hpp, on the same join as the per-layer rows), and
// the writers only format them. Subgraph nodes (inside If / Loop / Scan) are
// in their parent's row and so in its group; they are not grouped again.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "modelstat/analysis.hpp"

namespace modelstat {

// The group of a node the rule gives no key: no block in its name, no match of
// the regex, or an empty match.
extern const char* const kOtherGroup;  // "(other)"

// A regex sees at most this many leading characters of a node name: the
// standard library's matcher recurses per character and would exhaust the
// stack on a hostile model's megabyte-long name. Real names are far shorter.
inline constexpr size_t kGroupRegexSubjectLimit = 1024;

// The block a node name belongs to under --group-by block; "" when none.
// The name is read as components separated by '/' or '.' (torch exporters
// write both "/h.3/attn/MatMul" and "h.3.attn.c_attn"). The block is the
// prefix up to and including the first component that is a layer index,
// with the separator after it: a component of digits ("3" in "/h.3/",
// "/layers/3/"), or one ending in '_' and digits ("layer_3"). The name's last
// component is the node's own name and never counts ("/blocks.0/Add_2"'s
// block is "/blocks.0/", "Conv_3" has none). No index: the first '/'-path
// component when the name has more than one ("/wte/Gather" -> "/wte/").
//   "/h.3/attn/c_attn/MatMul"               -> "/h.3/"
//   "/encoder/layer.11/attention/self/Add"  -> "/encoder/layer.11/"
//   "model.layers.3.mlp.fc1/MatMul"         -> "model.layers.3."
//   "/layer1/layer1.0/conv1/Conv"           -> "/layer1/layer1.0/"
//   "/ln_f/Add", "Constant_38", "/Shape"    -> "/ln_f/", "", ""
std::string block_prefix(std::string_view node_name);

class GroupRule {
 public:
  enum class Kind {
    Block,   // "block": block_prefix of the node name
    OpType,  // "op": the node's op type
    Regex,   // "re:PATTERN": ECMAScript regex searched in the node name; the key is its
             // first capture group when it has one (and it matched), else the whole match
  };

  // "block", "op" or "re:PATTERN". Throws Error(Usage) for another word, an
  // empty pattern or one std::regex refuses (naming the flag and the reason).
  static GroupRule parse(const std::string& spec);

  Kind kind() const { return kind_; }
  // As given on the command line ("block", "op", "re:^/h\.(\d+)/").
  const std::string& spec() const { return spec_; }

  // The group of a node; never empty (kOtherGroup for no key).
  std::string key(std::string_view node_name, const std::string& op_type) const;

 private:
  struct Pattern;  // the compiled regex (grouping.cc), shared by copies
  Kind kind_ = Kind::Block;
  std::string spec_;
  std::shared_ptr<const Pattern> pattern_;
};

// The group of `key` among `groups`, kept in order of first appearance
// (`position`: key -> index), added with `first_index` when new: the
// analysis's groups (NodeGroup) and the profile's (LayerGroup) collect through it.
template <typename Group>
Group& group_of(std::vector<Group>& groups, std::map<std::string, size_t>& position, const std::string& key,
                int first_index) {
  const auto [it, fresh] = position.try_emplace(key, groups.size());
  if (fresh) {
    Group g;
    g.key = key;
    g.first_index = first_index;
    groups.push_back(std::move(g));
  }
  return groups[it->second];
}

// Sets result.group_by to rule.spec() and result.groups to the sums of the
// top-level nodes per group (NodeGroup), in order of first appearance.
void apply_grouping(AnalysisResult& result, const GroupRule& rule);

}  // namespace modelstat

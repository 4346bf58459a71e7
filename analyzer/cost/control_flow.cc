// Control flow and container ops. If/Loop/Scan/SequenceMap cost nothing
// themselves: the caller costs their subgraph nodes (each counted once, a Loop
// body is not multiplied by a trip count) and lists them as their own rows, so
// the node's own bytes are 0 to avoid counting the subgraph's values twice.
// Sequence and Optional ops move data (default bytes).
#include "analyzer/cost/cost_helpers.hpp"

namespace modelstat::cost {
namespace {

RuleResult control_flow(const CostContext& ctx) {
  RuleResult r = exact("control_flow", 0, 0, "subgraph counted once; see subgraph rows");
  r.bytes_read_override = 0;
  r.bytes_written_override = 0;
  return r;
}

RuleResult container(const CostContext& ctx) { return data_movement("data_movement"); }

}  // namespace

void add_control_flow_rules(std::vector<CostRule>& rules) {
  const char* subgraph_doc = "0 FLOPs, 0 bytes itself; subgraph nodes counted once as their own rows";
  add_rule(rules, "If", control_flow, subgraph_doc);
  add_rule(rules, "Loop", control_flow, subgraph_doc);
  add_rule(rules, "Scan", control_flow, subgraph_doc);
  add_rule(rules, "SequenceMap", control_flow, subgraph_doc);
  const char* container_doc = "sequence/optional container: data movement, 0 FLOPs";
  for (const char* op : {"SequenceAt", "SequenceConstruct", "SequenceEmpty", "SequenceErase", "SequenceInsert",
                         "SequenceLength", "SplitToSequence", "ConcatFromSequence", "Optional",
                         "OptionalGetElement", "OptionalHasElement"})
    add_rule(rules, op, container, container_doc);
}

}  // namespace modelstat::cost

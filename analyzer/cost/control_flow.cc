// Control flow and container ops. If/Loop/Scan/SequenceMap cost nothing
// themselves: the analysis adds their subgraph nodes' cost as one run
// executes them (analyzer/analysis.cc, control_flow_cost: the If's selected
// or costlier branch, a Loop body times its trip count, a Scan body times the
// sequence length, and times the batch in opset 8), so the node's own bytes are 0 to avoid counting the
// subgraph's values twice.
// Sequence and Optional ops move data (default bytes).
#include "analyzer/cost/cost_helpers.hpp"

namespace modelstat::cost {
namespace {

RuleResult control_flow(const CostContext& ctx) {
  RuleResult r = exact("control_flow", 0, 0, "the subgraph's cost is added as one run executes it");
  r.bytes_read_override = 0;
  r.bytes_written_override = 0;
  return r;
}

RuleResult container(const CostContext& ctx) { return data_movement("data_movement"); }

}  // namespace

void add_control_flow_rules(std::vector<CostRule>& rules) {
  const char* subgraph_doc =
      "0 FLOPs, 0 bytes itself; plus its subgraph as one run executes it (If: the selected or costlier branch; "
      "Loop: body x trip count; Scan: body x sequence length, x batch in opset 8)";
  const char* container_doc = "sequence/optional container: data movement, 0 FLOPs";
  const OpRow rows[] = {
      {"If", 1, control_flow, subgraph_doc},
      {"Loop", 1, control_flow, subgraph_doc},
      {"Scan", 8, control_flow, subgraph_doc},
      {"SequenceMap", 17, control_flow, subgraph_doc},
      {"SequenceAt", 11, container, container_doc},
      {"SequenceConstruct", 11, container, container_doc},
      {"SequenceEmpty", 11, container, container_doc},
      {"SequenceErase", 11, container, container_doc},
      {"SequenceInsert", 11, container, container_doc},
      {"SequenceLength", 11, container, container_doc},
      {"SplitToSequence", 11, container, container_doc},
      {"ConcatFromSequence", 11, container, container_doc},
      {"Optional", 15, container, container_doc},
      {"OptionalGetElement", 15, container, container_doc},
      {"OptionalHasElement", 15, container, container_doc},
  };
  add_rows(rules, rows);
}

}  // namespace modelstat::cost

#include "analyzer/cost/cost_rule.hpp"

namespace modelstat::cost {

void add_control_flow_rules(std::vector<CostRule>& rules) {}

}  // namespace modelstat::cost

#include "analyzer/cost/cost_rule.hpp"

namespace modelstat::cost {

void add_normalization_rules(std::vector<CostRule>& rules) {}

}  // namespace modelstat::cost

// The one visible list of cost rules. Order matters only for readability:
// lookups match (domain, op_type, opset range), and the registry test checks
// that no two rules overlap.
#include "analyzer/cost/cost_rule.hpp"

#include <unordered_map>

namespace modelstat::cost {

const std::vector<CostRule>& all_rules() {
  static const std::vector<CostRule> rules = [] {
    std::vector<CostRule> r;
    add_conv_rules(r);
    add_gemm_matmul_rules(r);
    add_recurrent_rules(r);
    add_elementwise_rules(r);
    add_normalization_rules(r);
    add_pooling_rules(r);
    add_reduction_rules(r);
    add_shape_ops_rules(r);
    add_control_flow_rules(r);
    return r;
  }();
  return rules;
}

const CostRule* find_rule(const std::string& domain, const std::string& op_type, int64_t opset_version) {
  static const OpIndex<CostRule> index(all_rules());
  return index.find(domain, op_type, opset_version);
}

}  // namespace modelstat::cost

// The one visible list of op records. Order matters only for readability:
// lookups match (domain, op_type, opset range), and the registry test checks
// that no two records overlap.
#include "analyzer/cost/cost_rule.hpp"


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
    add_attention_rules(r);
    return r;
  }();
  return rules;
}

namespace {

const OpIndex<CostRule>& rule_index() {
  static const OpIndex<CostRule> by_op(all_rules());
  return by_op;
}

}  // namespace

const CostRule* find_rule(const std::string& domain, const std::string& op_type, int64_t opset_version) {
  return rule_index().find(domain, op_type, opset_version);
}

const CostRule* find_op(const std::string& domain, const std::string& op_type) {
  return rule_index().find_newest(domain, op_type);
}

bool domain_has_records(const std::string& domain) {
  const std::string d = normalize_domain(domain);
  for (const auto& r : all_rules())
    if (r.key.domain == d) return true;
  return false;
}

}  // namespace modelstat::cost

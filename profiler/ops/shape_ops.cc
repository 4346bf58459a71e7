#include "profiler/ops/exec_rule.hpp"

namespace modelstat::profiler {

void add_shape_ops_executors(std::vector<ExecRule>& rules) {}

}  // namespace modelstat::profiler

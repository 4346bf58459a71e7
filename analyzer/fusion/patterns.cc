// The fusion patterns, in priority order: the one visible list. A pattern's
// groups are taken before those of the patterns after it, so a QDQ Conv is
// never an fp32 Conv group, and a GELU right after a MatMul joins the
// MatMul's group before the standalone GELU pattern sees it.
#include "analyzer/fusion/pattern.hpp"

namespace modelstat::fusion {

const std::vector<FusionPattern>& fusion_patterns() {
  static const std::vector<FusionPattern> patterns = {
      {"qdq", [](const FusionOptions& o) { return o.qdq; }, match_qdq},
      {"conv_group", [](const FusionOptions& o) { return o.cpu_groups; }, match_conv_group},
      {"matmul_group", [](const FusionOptions& o) { return o.cpu_groups || o.matmul_kernels; }, match_matmul_group},
      {"gelu", [](const FusionOptions& o) { return o.cpu_groups; }, match_gelu},
      {"layer_norm", [](const FusionOptions& o) { return o.cpu_groups; }, match_layer_norm},
      {"hard_swish", [](const FusionOptions& o) { return o.cpu_groups; }, match_hard_swish},
      {"transpose_matmul", [](const FusionOptions& o) { return o.cpu_groups; }, match_transpose_matmul},
      {"batch_norm_relu", [](const FusionOptions& o) { return o.cpu_groups; }, match_batch_norm_relu},
  };
  return patterns;
}

}  // namespace modelstat::fusion

// ZeRO model states and DeepSpeed's estimators (sharding.hpp).
#include "analyzer/fit/sharding.hpp"

namespace modelstat::fit {

ModelStateLayout zero_layout(TrainPrecision precision, Optimizer optimizer, int zero_stage) {
  ModelStateLayout l;
  const bool mixed = precision != TrainPrecision::Fp32;
  l.parameter_bytes = mixed ? 2 : 4;
  l.gradient_bytes = mixed ? 2 : 4;
  l.master_bytes = mixed ? 4 : 0;
  l.moment_bytes = optimizer == Optimizer::Adam ? 8 : optimizer == Optimizer::Momentum ? 4 : 0;
  l.optimizer_divided = zero_stage >= 1;
  l.gradients_divided = zero_stage >= 2;
  l.parameters_divided = zero_stage >= 3;
  return l;
}

int64_t zero_model_state_bytes(int64_t params, const ModelStateLayout& l, int64_t shards) {
  auto part = [&](int64_t bytes_per_param, bool divided) {
    const int64_t total = bytes_per_param * params;
    return divided ? total / shards : total;
  };
  return part(l.parameter_bytes, l.parameters_divided) + part(l.gradient_bytes, l.gradients_divided) +
         part(l.master_bytes + l.moment_bytes, l.optimizer_divided);
}

int64_t deepspeed_zero2_gpu_bytes(int64_t params, int64_t gpus, bool offload_optimizer) {
  if (offload_optimizer) return 2 * params;
  return 4 * params + int64_t(16.0 * double(params) / double(gpus));
}

int64_t deepspeed_zero3_gpu_bytes(int64_t params, int64_t largest_layer_params, int64_t gpus, bool offload_optimizer,
                                  bool offload_params) {
  const int64_t largest_layer = 4 * largest_layer_params;  // 16-bit params gathered + their 16-bit grads
  if (offload_optimizer && offload_params) return largest_layer;
  if (offload_optimizer) return largest_layer + int64_t(2.0 * double(params) / double(gpus));
  return largest_layer + int64_t(18.0 * double(params) / double(gpus));
}

}  // namespace modelstat::fit

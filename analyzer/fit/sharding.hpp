// Model states of a training step (weights, gradients, fp32 master weights,
// optimizer moments) per device under ZeRO data parallelism, and the
// published estimators they are checked against (docs/FIT.md, "Sharding").
// Formula-based: nothing here was measured on this machine.
#pragma once

#include <cstdint>

#include "modelstat/optimizer.hpp"
#include "modelstat/training_setup.hpp"

namespace modelstat::fit {

// Bytes per trainable parameter of each model state, before any division, and
// which of them ZeRO stage `zero_stage` divides by the shard count
// (Rajbhandari et al. 2020, "ZeRO", section 5: stage 1 partitions the
// optimizer states, 2 also the gradients, 3 also the parameters). Mixed
// precision here is the layout the paper and DeepSpeed use (a 16-bit model,
// 16-bit gradients, an fp32 master copy inside the optimizer: K = 12 bytes
// with Adam); fp32 has no master copy (K = 8 with Adam).
struct ModelStateLayout {
  int parameter_bytes = 4;     // per param: the model's weights (2 in mixed precision)
  int gradient_bytes = 4;      // per param
  int master_bytes = 0;        // per param: fp32 master weights (mixed precision)
  int moment_bytes = 0;        // per param: sgd 0, momentum 4, adam 8
  bool parameters_divided = false, gradients_divided = false, optimizer_divided = false;
};
ModelStateLayout zero_layout(TrainPrecision precision, Optimizer optimizer, int zero_stage);

// The paper's model-state memory per device: (parameters + gradients +
// K) x params, each term divided by `shards` where the stage divides it.
int64_t zero_model_state_bytes(int64_t params, const ModelStateLayout& layout, int64_t shards);

// DeepSpeed's estimators (deepspeed/runtime/zero, docs "Memory Requirements"),
// per GPU, no offload, mixed precision with Adam:
//   ZeRO-2: 4 * params + 16 * params / gpus    (16-bit params and grads whole;
//            fp32 params, grads, momentum and variance partitioned)
//   ZeRO-3: 4 * largest_layer_params + 18 * params / gpus
// and with the optimizer offloaded to the CPU: ZeRO-2 2 * params; ZeRO-3
// 4 * largest_layer_params + 2 * params / gpus (parameters on the GPU) or
// 4 * largest_layer_params (parameters offloaded too).
int64_t deepspeed_zero2_gpu_bytes(int64_t params, int64_t gpus, bool offload_optimizer);
int64_t deepspeed_zero3_gpu_bytes(int64_t params, int64_t largest_layer_params, int64_t gpus, bool offload_optimizer,
                                  bool offload_params);

}  // namespace modelstat::fit

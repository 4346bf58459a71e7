// What a ceilings probe measures on one kind of device, and for how long: the
// part of `modelstat device` that differs between CPU and CUDA. The CPU plan
// is in ceilings_probe.cc, the CUDA one in cuda/ceilings_cuda.cc; the
// measuring loop (ceilings_probe.cc) is the same for both.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "profiler/stopping.hpp"

namespace modelstat::profiler {

struct CeilingsPlan {
  // Bytes of one buffer of the device-to-device copy (read once, written once).
  int64_t copy_bytes = 0;
  // Square matmul sizes n, ascending, and the dtypes, in report order.
  std::vector<int64_t> matmul_sizes;
  std::vector<std::string> dtypes;
  // Every sample times enough back-to-back repetitions of the op to last at
  // least this long (then divides): a sub-microsecond op is not timed alone
  // with a clock whose resolution is near its duration (CUDA events: ~0.5 us).
  double min_sample_seconds = 1e-3;
  WarmupConfig warmup;
  StoppingConfig stopping;
  // Set up the math mode for one dtype's products (CUDA: TF32 on for "tf32",
  // off otherwise) and restore it when the returned guard is destroyed. Empty
  // when the device has nothing to set.
  std::function<std::shared_ptr<void>(const std::string& dtype)> math_mode;
  std::vector<std::string> notes;
  // Allotments of the stages of many points, in seconds (0: none): behind
  // its allotment's pace a point is timed to its minimums only
  // (ceilings_timing.hpp, StageSchedule). The full CPU plan sets them.
  struct Allotments {
    double matmul = 0;      // per dtype's curve (the int8 curve's three passes too)
    double op_classes = 0;  // every class's points
    double conv_samples = 0;
    double int8_conv_samples = 0;
    double optimizers = 0;  // the update costs
    double matmul_samples = 0;
  } allot;
};

// The warm-up and stopping rule of a probe. Full (not --quick), the same on
// every device: 3 runs and 0.2 s of warm-up, then >= 10 samples and 0.25 s,
// until the median's CI is within 2% or 3 s have passed. Quick: the device's
// `quick_warmup`, then >= 5 samples and `quick_min_seconds`, until the CI is
// within 5% or `quick_max_seconds` have passed.
void use_protocol(CeilingsPlan& plan, bool quick, const WarmupConfig& quick_warmup, double quick_min_seconds,
                  double quick_max_seconds);

// The plan of a probe of many short points: the plan's warm-up and minimum
// sampling times capped at `warmup_seconds` and `sample_seconds` (a plan
// already shorter, --quick, keeps its own). The op-class points (0.05 s,
// 0.15 s), the int8 curve's passes (0.05 s, 0.1 s) and the conv samples
// (0.05 s, 0.1 s, with counts and a time-out of their own) are timed so.
inline CeilingsPlan shortened_plan(const CeilingsPlan& plan, double warmup_seconds, double sample_seconds) {
  CeilingsPlan p = plan;
  p.warmup.min_seconds = std::min(plan.warmup.min_seconds, warmup_seconds);
  p.stopping.min_seconds = std::min(plan.stopping.min_seconds, sample_seconds);
  return p;
}

// Shrinks a plan to fit `usable_bytes` of device memory (< 0: unknown, keep
// the plan): the copy buffer is halved, down to 16 MiB, until source +
// destination fit in half of it, and matmul sizes whose three n x n fp32
// matrices do not fit in half of it are dropped (the largest size that fits
// is kept even then, so every dtype has a point). Says so in notes.
void fit_plan_to_memory(CeilingsPlan& plan, int64_t usable_bytes);

// ceilings_probe.cc: fp32 (and the int8 curve), n 64..2048 (quick: 64, 256,
// 1024); the full plan's stages on a schedule (Allotments).
CeilingsPlan cpu_ceilings_plan(bool quick);

#ifdef MODELSTAT_TORCH_CUDA
// cuda/ceilings_cuda.cc: fp32, tf32 (sm_80+), fp16, bf16 (sm_80+); n 256..8192;
// a 1 GiB copy; fitted to the current device's free memory.
CeilingsPlan cuda_ceilings_plan(bool quick);
#endif

}  // namespace modelstat::profiler

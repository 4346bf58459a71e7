// Concat of CPU tensors as rows of bytes (the Concat executor's fast path,
// profiler/ops/shape_ops.cc).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace modelstat::profiler {

// Concat on the CPU as rows of bytes: in memory order (NCHW's, or NHWC's for
// channels-last parts) the output is `outer` rows, each the parts' rows side
// by side, one copy per part and row, the rows split across threads. ATen's
// cat ran channels-last Concats on one thread (DenseNet's 62 Concats on the
// channel axis: 4.3 ms at 1 thread, 6.0 ms at 2, report --scaling). The parts
// must have one dtype and the output's sizes but on `axis` (a part in another
// layout than the largest one's is copied into it first); nullopt otherwise
// (the caller runs ATen's cat, which also reports a malformed input). Not
// while autograd records (no backward here).
std::optional<at::Tensor> concat_rows(const std::vector<at::Tensor>& parts, int64_t axis);

}  // namespace modelstat::profiler

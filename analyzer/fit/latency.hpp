// The fit forecast's latency (docs/FIT.md, "Latency" and "Training step"):
// each node's forward time (roofline, measured op class, CPU scratch pass,
// fixed call cost, fresh allocations) and the term that bounds it, its
// backward in a training step, and the optimizer update.
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/fit/libtorch_1_13_kernels.hpp"
#include "analyzer/fit/training_step.hpp"
#include "analyzer/fusion/fusion_plan.hpp"
#include "modelstat/fit.hpp"

namespace modelstat::fit {

// What every node is priced with.
struct Pricing {
  const Graph& graph;
  const DeviceCeilings& ceilings;
  const FitOptions& options;
  double peak_flops_per_second = 0;  // non-contractions' compute rate
  int64_t fresh_threshold = 0;       // DeviceCeilings::fresh_allocation_threshold_bytes
  double fresh_seconds_per_byte = 0; // 0 when the ceilings measured no fresh-allocation cost
  // The graph's weights and inputs together pass the device's last-level
  // cache: what a run reads of its graph inputs (a decoder's KV cache) was
  // pushed out to memory by the run before (graph_inputs_from_memory).
  bool inputs_from_memory = false;
  // How much of a conv's weight comes from memory rather than the caches
  // (weights_cold_share): the share of the conv samples' cold rate in its price.
  double weights_cold_share = 1.0;
};

// Whether a graph's weights and inputs together (the analysis' totals:
// weight_bytes + input_bytes) pass the largest cache level the ceilings
// measured (none measured: never).
bool graph_inputs_from_memory(int64_t weight_and_input_bytes, const DeviceCeilings& ceilings);

// The share of a run's conv weights read from memory rather than the caches,
// from the bytes one run touches (the analysis' totals: weight_bytes +
// bytes_written) against E, the largest working set the largest cache level
// was measured to hold (the ceilings' sweep; its size where no edge was
// measured): 0 up to 0.75 E (the run stays in the cache from one run to the
// next), 1 from 1.25 E (every weight streams in), linear between. 1 when the
// ceilings have no cache levels.
double weights_cold_share(int64_t run_bytes, const DeviceCeilings& ceilings);

// Node `index` of the graph: its forward (and, when options.train, backward)
// forecast. `kernel` is its CPU kernel rule ({} off CPU); `fresh_bytes` what
// its forward allocates afresh (fresh_forward_bytes).
NodeForecast forecast_node(const Pricing& p, size_t index, const NodeReport& report, const CpuKernel& kernel,
                           int64_t fresh_bytes, const GradientFlow& flow);

// The head of a QDQ int8 group (a Conv, Gemm or MatMul run on its quantized
// operands by one int8 kernel): re-prices `f`, forecast as an fp32 node, on
// the device's int8 curve at its equivalent GEMM size and on the bytes its
// kernel moves (the quantized operands, the float output), when the ceilings
// have an int8 curve (`modelstat device` measures one on the CPU).
void price_int8_head(const Pricing& p, const Node& node, const FusedGroup& group, NodeForecast& f);

// An integer contraction (ConvInteger, MatMulInteger, QLinearConv,
// QLinearMatMul: a dynamically quantized model's convolutions) in CPU
// inference runs on the executor's int8 kernel: re-prices `f`'s compute on
// the device's int8 curve at its equivalent GEMM size, when the ceilings
// have one.
void price_integer_contraction(const Pricing& p, const Node& node, NodeForecast& f);

// The head of an fp32 Conv group on the CPU. Group 1: re-prices `f` at the
// rate of the device's conv samples of its kind nearest its M x N x K
// (DeviceCeilings::conv_seconds_at: below the samples' smallest shape, that
// shape's time), which were timed on the executor's own
// kernel with their call cost and cold weights in, so no scratch pass, call
// cost or memory term is added; leaves `f` as it is when the ceilings have no
// sample of its kind (saved before schema 2.2). A residual Add adds its
// residual's bytes at the device's measured cost per residual byte.
// Depthwise (group = C_in = C_out): keeps its op class price (measured on a
// 3x3), scaled for other taps by the depthwise samples' ratio of its taps to
// 3x3 at its M, N and stride (schema 2.3). Either: a trailing SiLU adds its
// output's bytes at the measured cost of that pass.
void price_conv_head(const Pricing& p, const Node& node, const FusedGroup& group, NodeForecast& f);

// Inference, fp32: a Gemm / MatMul group of 8 rows or more (the head of a
// FusedKind::MatMul group: a constant weight on the executor's MatMul kernel)
// priced at the product samples' time for its (M, N, K) (schema 2.12; "matmul"
// in DeviceCeilings::conv_samples), plus a residual post-op's read at the
// Conv groups' measured rate. Ceilings without such samples keep
// forecast_node's price (the square matmul curve at the harmonic size).
void price_matmul_head(const Pricing& p, const Node& node, const FusedGroup& group, NodeForecast& f);

// A group written out as one kernel, or with a GELU post-op (CPU inference,
// when the ceilings measured the class): a GELU written out ("gelu") is
// priced as the Gelu class's kernel on the group's input and output, a
// LayerNorm written out ("layer_norm") as the LayerNormalization class's; a
// Conv or Gemm/MatMul group with a GELU post-op adds the Gelu class's cost of
// a pass over its output (read and written).
void price_written_out(const Pricing& p, const FusedGroup& group, NodeForecast& f);

// The optimizer update of a training step: sets optimizer_seconds and
// optimizer_fresh_bytes of `latency`.
void forecast_optimizer(const Pricing& p, const TrainableWeights& weights, LatencyForecast& latency);

}  // namespace modelstat::fit

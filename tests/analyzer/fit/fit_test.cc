// `modelstat fit` (analyzer/fit/, tools/fit_command.cc): every
// expectation is computed by hand in the comment next to it from the rules in
// docs/FIT.md and a hand-written ceilings file, not read back from the code.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "modelstat/analysis.hpp"
#include "modelstat/ceilings.hpp"
#include "modelstat/error.hpp"
#include "modelstat/fit.hpp"
#include "test_support.hpp"
#include "tools/writers/writers.hpp"

namespace modelstat {
namespace {

namespace fs = std::filesystem;
using test::NodeBuilder;

// Bandwidth 10 GB/s, 5 us per op, fp32 matmul 25 GFLOP/s at n=64 rising to
// 100 GFLOP/s at n=1024 (log-log in between).
DeviceCeilings hand_ceilings() {
  DeviceCeilings c = test::cpu_ceilings(1e10, 1e11);
  c.device_name = "hand cpu";
  c.threads = 1;
  c.op_overhead_seconds = 5e-6;
  c.matmul[0].best_size = 1024;
  c.matmul[0].curve = {{64, 2.5e10}, {1024, 1e11}};
  return c;
}

// The same with a flat 100 GFLOP/s matmul (one point): latency is then linear in batch.
DeviceCeilings flat_ceilings() {
  DeviceCeilings c = hand_ceilings();
  c.matmul[0].curve = {{1024, 1e11}};
  return c;
}

// Gemm Y[b,256] = A[b,128] x B[128,256] + C[256], fp32, as an analysed model.
AnalysisResult gemm_analysis(int64_t batch) {
  Model m;
  m.opsets = {{"", 17}};
  m.graph = NodeBuilder("Gemm").input({batch, 128}).weight({128, 256}).weight({256}).output({batch, 256}).build();
  AnalysisResult r = analyze_model(m);
  r.model = std::make_shared<Model>(m);
  return r;
}

AnalysisResult file_analysis(const std::string& relative, int64_t batch = 1) {
  LoadOptions o;
  o.default_batch = batch;
  return analyze_file(std::string(MODELSTAT_SOURCE_DIR) + "/" + relative, o);
}

// ------------------------------------------------------------------ parsing

TEST(FitParse, Optimizers) {
  EXPECT_EQ(parse_as<Optimizer>("sgd", "--optimizer"), Optimizer::Sgd);
  EXPECT_EQ(parse_as<Optimizer>("momentum", "--optimizer"), Optimizer::Momentum);
  EXPECT_EQ(parse_as<Optimizer>("adam", "--optimizer"), Optimizer::Adam);
  EXPECT_EQ(name_of(Optimizer::Momentum), std::string("momentum"));
  test::expect_error([] { parse_as<Optimizer>("adamw", "--optimizer"); }, ErrorKind::Usage, {"sgd, momentum or adam"});
}

// ---------------------------------------------------------------- latency

// The hand-computed matmul rate of gemm_analysis(64) on hand_ceilings() (below).
double gemm_rate_hand() { return 25e9 * std::pow(4.0, std::log(3.0 * 256.0 / 7.0 / 64.0) / std::log(16.0)); }

TEST(FitLatency, SingleGemmAgainstHandComputation) {
  const FitReport r = forecast_fit(gemm_analysis(64), hand_ceilings(), FitOptions{});
  ASSERT_EQ(r.nodes.size(), 1u);
  const NodeForecast& n = r.nodes[0];
  // M = 64, K = 128, N = 256: the square product of the same arithmetic
  // intensity has n = 3 / (1/64 + 1/128 + 1/256) = 3 * 256 / 7.
  EXPECT_TRUE(n.contraction);
  const double n_eff = 3.0 * 256.0 / 7.0;
  EXPECT_NEAR(n.equivalent_gemm_n, n_eff, 1e-9);
  // log-log between (64, 25e9) and (1024, 100e9): t = log(n_eff / 64) / log(16),
  // rate = 25e9 * 4^t.
  const double rate = 25e9 * std::pow(4.0, std::log(n_eff / 64.0) / std::log(16.0));
  EXPECT_NEAR(n.compute_flops_per_second, rate, rate * 1e-12);
  // FLOPs = 2*MACs + bias M*N = 4194304 + 16384 = 4210688.
  EXPECT_NEAR(n.compute_seconds, 4210688.0 / rate, 1e-15);
  // Bytes: A 32768 + B 131072 + C 1024 read, Y 65536 written = 230400 at 10 GB/s.
  EXPECT_NEAR(n.memory_seconds, 230400.0 / 1e10, 1e-15);
  EXPECT_DOUBLE_EQ(n.overhead_seconds, 5e-6);
  EXPECT_NEAR(n.forward_seconds, 4210688.0 / rate + 5e-6, 1e-15);
  EXPECT_EQ(n.bound, ForecastBound::Compute);
  EXPECT_NEAR(r.latency.total_seconds, 4210688.0 / rate + 5e-6, 1e-15);
  EXPECT_EQ(r.latency.backward_seconds, 0.0);
}

// A MatMul against one weight matrix runs as one product of all of A's rows
// (the executor reshapes A to [rows, K]): ConvNeXt's MLP [1, 56, 56, 96] x
// [96, 384] has M = 3136, N = 384, K = 96, n_eff = 3 / (1/3136 + 1/384 +
// 1/96), and a [3, 1, 768] x [1, 768, 64] product (B's leading dim 1) M = 3.
// Two activations batched (attention's [12, 197, 64] x [12, 64, 197]) keep
// one matrix of the batch: M = 197, N = 197, K = 64.
TEST(FitLatency, MatMulAgainstAWeightFoldsTheLeadingDimsIntoRows) {
  auto n_of = [](Graph g) {
    Model m;
    m.opsets = {{"", 17}};
    m.graph = std::move(g);
    AnalysisResult r = analyze_model(m);
    r.model = std::make_shared<Model>(m);
    return forecast_fit(r, hand_ceilings(), FitOptions{}).nodes.at(0).equivalent_gemm_n;
  };
  EXPECT_NEAR(n_of(NodeBuilder("MatMul").input({1, 56, 56, 96}).weight({96, 384}).output({1, 56, 56, 384}).build()),
              3.0 / (1.0 / 3136 + 1.0 / 384 + 1.0 / 96), 1e-9);
  EXPECT_NEAR(n_of(NodeBuilder("MatMul").input({3, 1, 768}).weight({1, 768, 64}).output({3, 1, 64}).build()),
              3.0 / (1.0 / 3 + 1.0 / 64 + 1.0 / 768), 1e-9);
  EXPECT_NEAR(n_of(NodeBuilder("MatMul").input({12, 197, 64}).input({12, 64, 197}).output({12, 197, 197}).build()),
              3.0 / (1.0 / 197 + 1.0 / 197 + 1.0 / 64), 1e-9);
}

TEST(FitLatency, TrainingStepGemmAdam) {
  FitOptions o;
  o.train = true;
  o.optimizer = Optimizer::Adam;
  const FitReport r = forecast_fit(gemm_analysis(64), hand_ceilings(), o);
  const double forward = 4210688.0 / gemm_rate_hand() + 5e-6;
  // The input A needs no gradient, the weight does: one gradient product,
  // priced like the forward product.
  EXPECT_NEAR(r.latency.backward_seconds, forward, 1e-15);
  // Adam: 33024 params * 20 accesses * 4 bytes / 10 GB/s + 2 tensors * 8 ops * 5 us.
  const double optimizer = 33024.0 * 20 * 4 / 1e10 + 2 * 8 * 5e-6;
  EXPECT_NEAR(r.latency.optimizer_seconds, optimizer, 1e-15);
  EXPECT_NEAR(r.latency.total_seconds, 2 * forward + optimizer, 1e-15);
}

TEST(FitLatency, MeasuredOptimizerUpdateCostPricesTheUpdate) {
  DeviceCeilings c = hand_ceilings();
  OptimizerUpdateCost adam;
  adam.optimizer = "adam";
  adam.per_tensor_seconds = 40e-6;
  adam.seconds_per_element = 1e-8;  // the streamed rule would say 20 accesses x 4 B at 10 GB/s (8 ns)
  c.optimizer_costs = {adam};
  FitOptions o;
  o.train = true;
  o.optimizer = Optimizer::Adam;
  // 33024 params in 2 tensors (B and C of the Gemm).
  const FitReport r = forecast_fit(gemm_analysis(64), c, o);
  EXPECT_NEAR(r.latency.optimizer_seconds, 33024.0 * 1e-8 + 2 * 40e-6, 1e-15);
  // Also when it is below the streamed rule's 8 ns (caches serve part of the
  // accesses): the measurement, taken past the last-level cache, wins.
  c.optimizer_costs[0].seconds_per_element = 1e-9;
  EXPECT_NEAR(forecast_fit(gemm_analysis(64), c, o).latency.optimizer_seconds, 33024.0 * 1e-9 + 2 * 40e-6, 1e-15);
  // Another optimizer without a measurement keeps the rule of the table.
  o.optimizer = Optimizer::Sgd;
  EXPECT_NEAR(forecast_fit(gemm_analysis(64), c, o).latency.optimizer_seconds, 33024.0 * 3 * 4 / 1e10 + 2 * 1 * 5e-6,
              1e-15);
}

// Schema 2.4: a weight whose update no longer finds it in the caches is
// priced at the streamed rate; between the two measured sizes, linear in the
// logarithm of its elements.
TEST(FitLatency, OptimizerUpdateOfALargeWeightTakesTheStreamedRate) {
  DeviceCeilings c = hand_ceilings();
  OptimizerUpdateCost adam;
  adam.optimizer = "adam";
  adam.per_tensor_seconds = 40e-6;
  adam.seconds_per_element = 1e-9;
  adam.tensor_elements = 256;
  adam.streamed_seconds_per_element = 4e-9;
  adam.streamed_tensor_elements = 65536;
  c.optimizer_costs = {adam};
  FitOptions o;
  o.train = true;
  o.optimizer = Optimizer::Adam;
  // B: 128 x 256 = 32768 elements, ln(32768 / 256) / ln(65536 / 256) = 7/8 of
  // the way: 1 + 7/8 x 3 = 3.625 ns. C: 256 elements, the cached 1 ns.
  const FitReport r = forecast_fit(gemm_analysis(64), c, o);
  EXPECT_NEAR(r.latency.optimizer_seconds, 32768.0 * 3.625e-9 + 256.0 * 1e-9 + 2 * 40e-6, 1e-15);
  // Past the streamed size: the streamed rate.
  c.optimizer_costs[0].streamed_tensor_elements = 16384;
  EXPECT_NEAR(forecast_fit(gemm_analysis(64), c, o).latency.optimizer_seconds,
              32768.0 * 4e-9 + 256.0 * 1e-9 + 2 * 40e-6, 1e-15);
  // Without a streamed point (a file before 2.4): one rate for every size.
  c.optimizer_costs[0].streamed_seconds_per_element = 0;
  EXPECT_NEAR(forecast_fit(gemm_analysis(64), c, o).latency.optimizer_seconds, 33024.0 * 1e-9 + 2 * 40e-6, 1e-15);
}

// A one-row product streams its weight at the device's measured Gemm/thin
// rate (in the bytes of B); with enough rows the compute term takes over.
TEST(FitLatency, ThinGemmIsPricedAtItsWeightsMeasuredRate) {
  DeviceCeilings c = hand_ceilings();
  OpCost thin;
  thin.op = "Gemm/thin";
  thin.fixed_seconds = 4e-6;
  thin.seconds_per_byte = 5e-10;
  thin.backward_fixed_seconds = 3e-5;
  thin.backward_seconds_per_byte = 2e-9;
  c.op_costs = {thin};
  FitOptions train;
  train.train = true;
  train.optimizer = Optimizer::Sgd;
  {
    // Batch 1: B is 128 x 256 floats = 131072 bytes: kernel 131072 x 0.5 ns =
    // 65.536 us, above the compute (n_eff = 3/(1 + 1/128 + 1/256) < 64: 25
    // GFLOP/s, 65792 FLOPs = 2.63 us) and the copy (A 512 + B 131072 + C 1024
    // + Y 1024 = 133632 bytes at 10 GB/s = 13.4 us) terms; plus the 5 us per op.
    const FitReport r = forecast_fit(gemm_analysis(1), c, FitOptions{});
    const NodeForecast& n = r.nodes[0];
    EXPECT_EQ(n.op_cost, "Gemm/thin");
    EXPECT_NEAR(n.kernel_seconds, 131072 * 5e-10, 1e-18);
    EXPECT_NEAR(n.compute_seconds, 65792 / 25e9, 1e-18);
    EXPECT_NEAR(n.memory_seconds, 133632 / 1e10, 1e-18);
    EXPECT_EQ(n.bound, ForecastBound::Kernel);
    EXPECT_NEAR(n.forward_seconds, 131072 * 5e-10 + 5e-6, 1e-15);
    // Backward: the class's measured backward in the bytes of B, 3e-5 + 131072 x 2 ns.
    const FitReport t = forecast_fit(gemm_analysis(1), c, train);
    EXPECT_NEAR(t.nodes[0].backward_seconds, 3e-5 + 131072 * 2e-9, 1e-15);
  }
  {
    // A class that streams faster than the copy (0.05 ns a byte: 20 GB/s
    // against 10): the copy does not bound its read stream. Kernel 131072 x
    // 0.05 ns = 6.5536 us; the memory term at the class's rate, 133632 x
    // 0.05 ns = 6.6816 us (13.4 us at the copy's), the larger: the forward
    // 6.6816 + 5 us.
    DeviceCeilings fast = c;
    fast.op_costs[0].seconds_per_byte = 5e-11;
    const NodeForecast n = forecast_fit(gemm_analysis(1), fast, FitOptions{}).nodes[0];
    EXPECT_NEAR(n.kernel_seconds, 131072 * 5e-11, 1e-18);
    EXPECT_NEAR(n.memory_seconds, 133632 * 5e-11, 1e-18);
    EXPECT_NEAR(n.forward_seconds, 133632 * 5e-11 + 5e-6, 1e-15);
  }
  {
    // Batch 64: compute (4210688 FLOPs at the curve's rate for n_eff = 768/7,
    // 128.7 us) is above the kernel's 65.5 us: priced as before, and its
    // backward by the contraction rule (one product, like the forward).
    const FitReport r = forecast_fit(gemm_analysis(64), c, FitOptions{});
    EXPECT_EQ(r.nodes[0].bound, ForecastBound::Compute);
    EXPECT_NEAR(r.nodes[0].forward_seconds, 4210688.0 / gemm_rate_hand() + 5e-6, 1e-15);
    const FitReport t = forecast_fit(gemm_analysis(64), c, train);
    EXPECT_NEAR(t.nodes[0].backward_seconds, 4210688.0 / gemm_rate_hand() + 5e-6, 1e-15);
  }
}

// With product samples (schema 2.12) an fp32 Gemm / MatMul group of 8 rows or
// more is priced at the samples' time for its (M, N, K), which holds the
// call, the weight's read and the output's write: no overhead, memory or
// curve term beside it. Fewer rows, and a training step, keep the other rules.
TEST(FitLatency, ProductsOfEightRowsOrMoreArePricedOnTheProductSamples) {
  DeviceCeilings c = hand_ceilings();
  c.conv_samples = {{"matmul", 8, 256, 128, 10e9}, {"matmul", 64, 256, 128, 40e9}, {"1x1", 64, 256, 128, 90e9}};
  {
    // gemm_analysis(64): M 64, N 256, K 128, the second sample itself: 2 x
    // 64 x 256 x 128 = 4,194,304 FLOPs at 40 GFLOP/s = 104.8576 us (the
    // curve's price was 4,210,688 FLOPs at gemm_rate_hand() + 5 us).
    const NodeForecast n = forecast_fit(gemm_analysis(64), c, FitOptions{}).nodes[0];
    EXPECT_EQ(n.op_cost, "matmul samples");
    EXPECT_EQ(n.bound, ForecastBound::Compute);
    EXPECT_NEAR(n.compute_flops_per_second, 40e9, 1.0);
    EXPECT_NEAR(n.forward_seconds, 4194304.0 / 40e9, 1e-15);
  }
  {
    // A MatMul of [1, 16, 128] rows by a 128 x 256 weight: M = 16, between
    // the samples at M 8 (one log2 step away: weight 1) and 64 (two steps:
    // weight 1/4), rate = exp((ln 10e9 + ln 40e9 / 4) / (5 / 4)) = 10e9 x
    // 4^(1/5); the 1x1 conv sample is another kind.
    Model m;
    m.opsets = {{"", 17}};
    m.graph = NodeBuilder("MatMul").input({1, 16, 128}).weight({128, 256}).output({1, 16, 256}).build();
    AnalysisResult a = analyze_model(m);
    a.model = std::make_shared<Model>(m);
    const NodeForecast n = forecast_fit(a, c, FitOptions{}).nodes[0];
    const double rate = 10e9 * std::pow(4.0, 0.2);
    EXPECT_EQ(n.op_cost, "matmul samples");
    EXPECT_NEAR(n.compute_flops_per_second, rate, rate * 1e-12);
    EXPECT_NEAR(n.forward_seconds, 2.0 * 16 * 256 * 128 / rate, 1e-15);
  }
  // One row (gemm_analysis(1)), and the training step of 64 rows: the samples
  // change nothing.
  FitOptions train;
  train.train = true;
  train.optimizer = Optimizer::Sgd;
  for (const auto& [batch, options] : {std::pair{int64_t(1), FitOptions{}}, std::pair{int64_t(64), train}}) {
    const NodeForecast with = forecast_fit(gemm_analysis(batch), c, options).nodes[0];
    const NodeForecast without = forecast_fit(gemm_analysis(batch), hand_ceilings(), options).nodes[0];
    EXPECT_NE(with.op_cost, "matmul samples") << batch;
    EXPECT_DOUBLE_EQ(with.forward_seconds, without.forward_seconds) << batch;
    EXPECT_DOUBLE_EQ(with.backward_seconds, without.backward_seconds) << batch;
  }
}

// A Gemm the executor runs as its direct row loop (at most 4 rows and 256k
// MACs against a weight: analyzer/fusion/direct_gemm_limits.hpp) costs the
// per-op overhead (5 us here), not the measured small Gemm's fixed cost (8
// us): gemm_analysis(1) is 1 x 128 x 256, 32,768 MACs. gemm_analysis(8), 8
// rows, runs on BLAS / oneDNN and takes the Gemm class's 8 us.
TEST(FitLatency, AGemmOnTheDirectRowLoopCostsTheOpOverhead) {
  DeviceCeilings c = hand_ceilings();
  OpCost gemm;
  gemm.op = "Gemm";
  gemm.fixed_seconds = 8e-6;
  gemm.seconds_per_byte = 1e-12;
  c.op_costs = {gemm};
  EXPECT_DOUBLE_EQ(forecast_fit(gemm_analysis(1), c, FitOptions{}).nodes[0].overhead_seconds, 5e-6);
  EXPECT_DOUBLE_EQ(forecast_fit(gemm_analysis(8), c, FitOptions{}).nodes[0].overhead_seconds, 8e-6);
}

// Buffers above the fresh-allocation threshold cost their bytes at the
// measured first-touch rate: outputs in the forward, gradients in the
// backward, Adam's two temporaries per weight in the update.
TEST(FitLatency, FreshAllocationsAboveTheThresholdArePricedPerByte) {
  DeviceCeilings c = flat_ceilings();
  c.fresh_allocation_threshold_bytes = 100000;
  c.fresh_allocation_seconds_per_byte = 1e-9;
  // Batch 128: Y is 128 x 256 floats = 131072 bytes (above 100000), A
  // 65536 (below), B 131072 (above), C 1024. Flat 100 GFLOP/s: FLOPs
  // 2 x 128 x 128 x 256 + 128 x 256 = 8421376, 84.21376 us.
  const double compute = 8421376.0 / 1e11;
  const FitReport inference = forecast_fit(gemm_analysis(128), c, FitOptions{});
  const NodeForecast& n = inference.nodes[0];
  EXPECT_EQ(n.fresh_bytes, 131072);
  EXPECT_NEAR(n.fresh_seconds, 131072e-9, 1e-18);
  EXPECT_NEAR(n.forward_seconds, compute + 5e-6 + 131072e-9, 1e-15);
  EXPECT_EQ(n.bound, ForecastBound::Fresh);  // 131 us of first touch against 84 us of compute
  FitOptions o;
  o.train = true;
  o.optimizer = Optimizer::Adam;
  const FitReport t = forecast_fit(gemm_analysis(128), c, o);
  // Backward: the weight's gradient (131072 bytes) is fresh, A needs none;
  // one product priced like the forward without its fresh output.
  EXPECT_EQ(t.nodes[0].backward_fresh_bytes, 131072);
  EXPECT_NEAR(t.nodes[0].backward_seconds, compute + 5e-6 + 131072e-9, 1e-15);
  // Adam: 33024 params x 20 accesses x 4 B at 10 GB/s + 2 tensors x 8 ops x 5 us,
  // plus two temporaries of B (2 x 131072 bytes) mapped afresh.
  EXPECT_EQ(t.latency.optimizer_fresh_bytes, 2 * 131072);
  EXPECT_NEAR(t.latency.optimizer_seconds, 33024.0 * 20 * 4 / 1e10 + 2 * 8 * 5e-6 + 2 * 131072e-9, 1e-15);
  // SGD updates in place: nothing fresh.
  o.optimizer = Optimizer::Sgd;
  EXPECT_EQ(forecast_fit(gemm_analysis(128), c, o).latency.optimizer_fresh_bytes, 0);
  // Below the threshold (batch 64: Y 65536 bytes), or with no threshold measured, nothing is fresh.
  EXPECT_EQ(forecast_fit(gemm_analysis(64), c, FitOptions{}).nodes[0].fresh_bytes, 0);
  c.fresh_allocation_threshold_bytes = 0;
  EXPECT_EQ(forecast_fit(gemm_analysis(128), c, FitOptions{}).nodes[0].fresh_seconds, 0.0);
}

TEST(FitLatency, TrainingStepAddsAutogradCostPerDifferentiatedNode) {
  DeviceCeilings c = hand_ceilings();
  c.node_overhead_seconds = 6e-6;
  c.train_node_overhead_seconds = 20e-6;  // 20 - 2 x 6 = 8 us of autograd per node
  FitOptions o;
  o.train = true;
  o.optimizer = Optimizer::Sgd;
  const FitReport r = forecast_fit(gemm_analysis(64), c, o);
  const double forward = 4210688.0 / gemm_rate_hand() + 5e-6;
  EXPECT_NEAR(r.latency.backward_seconds, forward + 8e-6, 1e-15);
  // Inference is unchanged: autograd's cost is a training cost.
  EXPECT_NEAR(forecast_fit(gemm_analysis(64), c, FitOptions{}).latency.total_seconds, forward, 1e-15);
}

TEST(FitLatency, CpuConvScratchPassInATrainingStepAndCallCost) {
  // One Conv as a model; flat 100 GFLOP/s, 10 GB/s, 5 us per op, 1 thread.
  auto conv_analysis = [](std::vector<int64_t> x, std::vector<int64_t> w, std::vector<int64_t> y, int64_t group) {
    Model m;
    m.opsets = {{"", 17}};
    m.graph = NodeBuilder("Conv")
                  .input(x)
                  .weight(w)
                  .output(y)
                  .attr("pads", std::vector<int64_t>{1, 1, 1, 1})
                  .attr("group", group)
                  .build();
    AnalysisResult r = analyze_model(m);
    r.model = std::make_shared<Model>(m);
    return r;
  };
  FitOptions train;
  train.train = true;
  // A training step runs the Conv on ATen: 3x3 64->64 at 56x56 (oneDNN,
  // dense): MACs 64*56*56*64*9 = 115605504, compute 231211008 / 1e11; the
  // reorder moves 2 * (802816 + 147456) bytes; call 5 op overheads.
  FitReport r = forecast_fit(conv_analysis({1, 64, 56, 56}, {64, 64, 3, 3}, {1, 64, 56, 56}, 1), flat_ceilings(), train);
  EXPECT_NEAR(r.nodes[0].compute_seconds, 231211008.0 / 1e11, 1e-15);
  EXPECT_NEAR(r.nodes[0].scratch_seconds, 2.0 * 950272 / 1e10, 1e-15);
  EXPECT_NEAR(r.nodes[0].overhead_seconds, 5 * 5e-6, 1e-15);
  EXPECT_NEAR(r.nodes[0].forward_seconds, 231211008.0 / 1e11 + 2.0 * 950272 / 1e10 + 25e-6, 1e-15);
  EXPECT_EQ(r.nodes[0].bound, ForecastBound::Compute);
  // Inference runs it as the executor's Conv group (weights prepacked at
  // load, channels-last activations): no reorder pass, the same call cost.
  r = forecast_fit(conv_analysis({1, 64, 56, 56}, {64, 64, 3, 3}, {1, 64, 56, 56}, 1), flat_ceilings(), {});
  EXPECT_DOUBLE_EQ(r.nodes[0].scratch_seconds, 0.0);
  EXPECT_NEAR(r.nodes[0].forward_seconds, 231211008.0 / 1e11 + 25e-6, 1e-15);
  // Depthwise 3x3 on 32x112x112 (oneDNN, grouped), training: memory-bound,
  // x + w + y = 1605632 + 1152 + 1605632 bytes; reorder 2 * 1606784; call 36
  // op overheads.
  r = forecast_fit(conv_analysis({1, 32, 112, 112}, {32, 1, 3, 3}, {1, 32, 112, 112}, 32), flat_ceilings(), train);
  // One product per group: M = 112*112 positions, N = 1 channel, K = 9 taps.
  EXPECT_NEAR(r.nodes[0].equivalent_gemm_n, 3.0 / (1.0 / 12544 + 1.0 + 1.0 / 9), 1e-9);
  EXPECT_NEAR(r.nodes[0].forward_seconds, 3212416.0 / 1e10 + 2.0 * 1606784 / 1e10 + 36 * 5e-6, 1e-15);
  EXPECT_EQ(r.nodes[0].bound, ForecastBound::Scratch);
  // Inference: its group's kernel, no reorder pass; memory (3.2e-4 s) over the call cost (1.8e-4 s).
  r = forecast_fit(conv_analysis({1, 32, 112, 112}, {32, 1, 3, 3}, {1, 32, 112, 112}, 32), flat_ceilings(), {});
  EXPECT_NEAR(r.nodes[0].forward_seconds, 3212416.0 / 1e10 + 36 * 5e-6, 1e-15);
  EXPECT_EQ(r.nodes[0].bound, ForecastBound::Memory);
}

// A MatMulInteger (A u8 64x128 by B s8 128x256 -> int32, a dynamically
// quantized model's product) runs on the executor's int8 kernel: with an int8
// curve fit prices its compute there. MACs 64 * 128 * 256 = 2,097,152, 2 ops
// each; on a flat 400 G op/s int8 curve 4,194,304 / 4e11 = 1.048576e-5 s.
// Without the curve: the fp32 curve (hand_ceilings: 25 GFLOP/s at n = 64),
// so slower than that.
TEST(FitLatency, IntegerContractionIsPricedOnTheInt8Curve) {
  Model m;
  m.opsets = {{"", 17}};
  m.graph = NodeBuilder("MatMulInteger")
                .input({64, 128}, DType::UInt8)
                .weight({128, 256}, DType::Int8)
                .output({64, 256}, DType::Int32)
                .build();
  AnalysisResult a = analyze_model(m);
  a.model = std::make_shared<Model>(m);
  DeviceCeilings c = hand_ceilings();
  const FitReport fp32 = forecast_fit(a, c, {});
  EXPECT_NE(fp32.nodes[0].op_cost, "int8");
  EXPECT_GT(fp32.nodes[0].compute_seconds, 4194304.0 / 1e11);
  c.matmul.push_back(test::flat_matmul_curve("int8", 4e11));
  const FitReport r = forecast_fit(a, c, {});
  EXPECT_EQ(r.nodes[0].op_cost, "int8");
  EXPECT_NEAR(r.nodes[0].compute_seconds, 1.048576e-5, 1e-15);
  EXPECT_DOUBLE_EQ(r.nodes[0].compute_flops_per_second, 4e11);
  EXPECT_GE(r.nodes[0].forward_seconds, r.nodes[0].compute_seconds + r.nodes[0].overhead_seconds);
  // A CPU without VNNI runs a full-range weight as two 7-bit products
  // (int8_weight_products 2): 2 x 1.048576e-5 s, at half the curve's rate.
  c.int8_weight_products = 2;
  const FitReport halves = forecast_fit(a, c, {});
  EXPECT_EQ(halves.nodes[0].op_cost, "int8");
  EXPECT_NEAR(halves.nodes[0].compute_seconds, 2.097152e-5, 1e-15);
  EXPECT_DOUBLE_EQ(halves.nodes[0].compute_flops_per_second, 2e11);
  // 1 (VNNI) is the curve's own rate.
  c.int8_weight_products = 1;
  EXPECT_NEAR(forecast_fit(a, c, {}).nodes[0].compute_seconds, 1.048576e-5, 1e-15);
}

// One node as an analysed model.
AnalysisResult one_node_analysis(const NodeBuilder& b) {
  Model m;
  m.opsets = {{"", 17}};
  m.graph = b.build();
  AnalysisResult r = analyze_model(m);
  r.model = std::make_shared<Model>(m);
  return r;
}

TEST(FitLatency, MeasuredOpClassPricesItsNodeForwardAndBackward) {
  // Mul of x[1,1000] by a trainable w[1000]: 8000 bytes read, 4000 written.
  DeviceCeilings c = hand_ceilings();
  c.node_overhead_seconds = 6e-6;
  c.train_node_overhead_seconds = 20e-6;  // not added: the class's backward was measured with autograd
  OpCost mul;
  mul.op = "Mul";
  mul.fixed_seconds = 2e-6;
  mul.seconds_per_byte = 1e-9;           // 1 GB/s, below the 10 GB/s copy: the class's own ceiling
  mul.backward_fixed_seconds = 9e-6;
  mul.backward_seconds_per_byte = 3e-9;
  c.op_costs = {mul};
  FitOptions o;
  o.train = true;
  o.optimizer = Optimizer::Sgd;
  const FitReport r =
      forecast_fit(one_node_analysis(NodeBuilder("Mul").input({1, 1000}).weight({1000}).output({1, 1000})), c, o);
  ASSERT_EQ(r.nodes.size(), 1u);
  const NodeForecast& n = r.nodes[0];
  EXPECT_EQ(n.op_cost, "Mul");
  EXPECT_NEAR(n.memory_seconds, 12000.0 / 1e10, 1e-15);
  EXPECT_NEAR(n.kernel_seconds, 12000.0 * 1e-9, 1e-15);
  EXPECT_DOUBLE_EQ(n.overhead_seconds, 2e-6);  // the class's fixed cost, not the op overhead
  EXPECT_NEAR(n.forward_seconds, 12e-6 + 2e-6, 1e-15);
  EXPECT_EQ(n.bound, ForecastBound::Kernel);
  EXPECT_NEAR(n.backward_seconds, 12000.0 * 3e-9 + 9e-6, 1e-15);

  // Without the class: the roofline, the op overhead, the forward again plus autograd's cost.
  c.op_costs.clear();
  const FitReport plain =
      forecast_fit(one_node_analysis(NodeBuilder("Mul").input({1, 1000}).weight({1000}).output({1, 1000})), c, o);
  EXPECT_EQ(plain.nodes[0].op_cost, "");
  auto says_no_op_costs = [](const FitReport& f) {
    for (const auto& n : f.notices)
      if (n.find("no op costs") != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(says_no_op_costs(plain)) << "measured ceilings without op costs say how to get them";
  EXPECT_FALSE(says_no_op_costs(r));
  EXPECT_NEAR(plain.nodes[0].forward_seconds, 12000.0 / 1e10 + 5e-6, 1e-15);
  EXPECT_NEAR(plain.nodes[0].backward_seconds, 12000.0 / 1e10 + 5e-6 + (20e-6 - 2 * 6e-6), 1e-15);
}

// A 1x1 unstrided conv's backward takes the measured Conv/1x1 ratio, a 3x3
// conv's the Conv ratio; without a Conv/1x1 figure (an older file) the Conv one.
TEST(FitLatency, OneByOneConvBackwardUsesItsOwnMeasuredRatio) {
  DeviceCeilings c = flat_ceilings();
  OpCost conv, pointwise;
  conv.op = "Conv";
  conv.backward_ratio = 2.0;  // 1.0 forward per gradient product
  pointwise.op = "Conv/1x1";
  pointwise.backward_ratio = 3.0;  // 1.5 forward per gradient product
  c.op_costs = {conv, pointwise};
  FitOptions train;
  train.train = true;
  train.optimizer = Optimizer::Sgd;
  auto conv_node = [](int64_t k, int64_t stride) {
    NodeBuilder b("Conv");
    b.input({1, 32, 28, 28}).weight({32, 32, k, k}).output({1, 32, 28 / stride, 28 / stride});
    b.attr("strides", std::vector<int64_t>{stride, stride});
    if (k == 3) b.attr("pads", std::vector<int64_t>{1, 1, 1, 1});
    return one_node_analysis(b);
  };
  // The image needs no gradient, the weight does: one product, at half the ratio.
  const FitReport one = forecast_fit(conv_node(1, 1), c, train);
  EXPECT_NEAR(one.nodes[0].backward_seconds, 1.5 * one.nodes[0].forward_seconds, 1e-15);
  const FitReport three = forecast_fit(conv_node(3, 1), c, train);
  EXPECT_NEAR(three.nodes[0].backward_seconds, 1.0 * three.nodes[0].forward_seconds, 1e-15);
  // A strided 1x1 conv is not the plain GEMM: the Conv ratio.
  const FitReport strided = forecast_fit(conv_node(1, 2), c, train);
  EXPECT_NEAR(strided.nodes[0].backward_seconds, 1.0 * strided.nodes[0].forward_seconds, 1e-15);
  c.op_costs = {conv};
  const FitReport older = forecast_fit(conv_node(1, 1), c, train);
  EXPECT_NEAR(older.nodes[0].backward_seconds, 1.0 * older.nodes[0].forward_seconds, 1e-15);
}

// A training step runs its nodes unfused, NCHW, with autograd recording: a
// measured class's training forward line prices its forward there (schema
// 2.4), and a dense contraction's roofline time is scaled by its class's
// measured training forward / forward ratio, against which its backward ratio
// was taken.
TEST(FitLatency, TrainingForwardUsesTheClassTrainingLineAndTheDenseRatio) {
  // Mul of x[1,1000] by a trainable w[1000]: 8000 bytes read, 4000 written.
  DeviceCeilings c = flat_ceilings();
  OpCost mul;
  mul.op = "Mul";
  mul.fixed_seconds = 2e-6;
  mul.seconds_per_byte = 1e-9;
  mul.train_forward_fixed_seconds = 4e-6;
  mul.train_forward_seconds_per_byte = 2e-9;
  mul.train_forward_ratio = 2.0;
  mul.backward_fixed_seconds = 9e-6;
  mul.backward_seconds_per_byte = 3e-9;
  OpCost conv;
  conv.op = "Conv";
  conv.backward_ratio = 2.0;       // backward / inference forward: 1.0 a gradient product
  conv.train_forward_ratio = 1.5;  // the training forward is 1.5 inference forwards
  c.op_costs = {mul, conv};
  FitOptions train;
  train.train = true;
  train.optimizer = Optimizer::Sgd;
  const auto mul_model = one_node_analysis(NodeBuilder("Mul").input({1, 1000}).weight({1000}).output({1, 1000}));
  const NodeForecast t = forecast_fit(mul_model, c, train).nodes[0];
  EXPECT_NEAR(t.kernel_seconds, 12000.0 * 2e-9, 1e-15);  // 24 us, over 1.2 us of copy
  EXPECT_DOUBLE_EQ(t.overhead_seconds, 4e-6);
  EXPECT_NEAR(t.forward_seconds, 24e-6 + 4e-6, 1e-15);
  EXPECT_NEAR(t.backward_seconds, 12000.0 * 3e-9 + 9e-6, 1e-15);
  // Inference keeps the inference line: 12 us + 2 us.
  const NodeForecast i = forecast_fit(mul_model, c, FitOptions{}).nodes[0];
  EXPECT_NEAR(i.forward_seconds, 12e-6 + 2e-6, 1e-15);

  // Conv 3x3 32 -> 32 at 28x28: 28 x 28 x 32 outputs x 32 x 9 MACs = 7,225,344
  // MACs, 14,450,688 FLOPs, 144.50688 us at the flat 100 GFLOP/s.
  NodeBuilder b("Conv");
  b.input({1, 32, 28, 28}).weight({32, 32, 3, 3}).output({1, 32, 28, 28});
  b.attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  const auto conv_model = one_node_analysis(b);
  const NodeForecast ci = forecast_fit(conv_model, c, FitOptions{}).nodes[0];
  EXPECT_NEAR(ci.compute_seconds, 14450688.0 / 1e11, 1e-15);
  const NodeForecast ct = forecast_fit(conv_model, c, train).nodes[0];
  EXPECT_NEAR(ct.compute_seconds, 1.5 * 14450688.0 / 1e11, 1e-15);
  // One gradient product (the image needs none) at half the ratio, taken
  // against the inference forward: 1.0 x (training forward / 1.5).
  EXPECT_NEAR(ct.backward_seconds, ct.forward_seconds / 1.5, 1e-15);
  // A file saved before 2.4 (no training forward): the inference prices.
  c.op_costs[0].train_forward_ratio = 0;
  c.op_costs[1].train_forward_ratio = 0;
  EXPECT_NEAR(forecast_fit(mul_model, c, train).nodes[0].forward_seconds, 12e-6 + 2e-6, 1e-15);
  const NodeForecast old = forecast_fit(conv_model, c, train).nodes[0];
  EXPECT_NEAR(old.compute_seconds, 14450688.0 / 1e11, 1e-15);
  EXPECT_NEAR(old.backward_seconds, old.forward_seconds, 1e-15);
}

TEST(FitLatency, TrainingConvsArePricedOnTheTrainingConvSamples) {
  // Conv 3x3 32 -> 32 at 28x28 (pads 1): M = 784 positions, N = 32, K = 32 x 9
  // = 288; 2 M N K = 14,450,688 FLOPs. A training sample at that very point:
  // forward 20 GFLOP/s (722.5344 us), backward 10 GFLOP/s (1445.0688 us, both
  // gradients).
  DeviceCeilings c = flat_ceilings();
  OpCost conv;
  conv.op = "Conv";
  conv.backward_ratio = 2.0;
  conv.train_forward_ratio = 1.5;
  c.op_costs = {conv};
  c.train_conv_samples = {{"kxk", 784, 32, 288, 2e10, 1e10}, {"kxk/s2", 196, 32, 32, 4e10, 4e10}};
  FitOptions train;
  train.train = true;
  train.optimizer = Optimizer::Sgd;
  auto conv3x3 = [](NodeBuilder b) {
    return one_node_analysis(
        b.weight({32, 32, 3, 3}).output({1, 32, 28, 28}).attr("pads", std::vector<int64_t>{1, 1, 1, 1}));
  };
  // Reading the image (no gradient): the weight's gradient alone, half the backward.
  const NodeForecast first = forecast_fit(conv3x3(NodeBuilder("Conv").input({1, 32, 28, 28})), c, train).nodes[0];
  EXPECT_EQ(first.op_cost, "train conv kxk");
  EXPECT_NEAR(first.forward_seconds, 722.5344e-6, 1e-12);
  EXPECT_NEAR(first.backward_seconds, 0.5 * 1445.0688e-6, 1e-12);
  // Reading a tensor that needs a gradient (here a trainable one, as a hidden
  // layer's activation): both gradients.
  const NodeForecast hidden = forecast_fit(conv3x3(NodeBuilder("Conv").weight({1, 32, 28, 28})), c, train).nodes[0];
  EXPECT_NEAR(hidden.forward_seconds, 722.5344e-6, 1e-12);
  EXPECT_NEAR(hidden.backward_seconds, 1445.0688e-6, 1e-12);
  // A strided 1x1 (ResNet's downsample) runs as a strided conv: the "kxk/s2"
  // samples. 1x1 32 -> 32 from 28x28 to 14x14: M 196, K 32, 401,408 FLOPs at 40 GFLOP/s.
  const NodeForecast down = forecast_fit(one_node_analysis(NodeBuilder("Conv")
                                                                .input({1, 32, 28, 28})
                                                                .weight({32, 32, 1, 1})
                                                                .output({1, 32, 14, 14})
                                                                .attr("strides", std::vector<int64_t>{2, 2})),
                                         c, train)
                                .nodes[0];
  EXPECT_EQ(down.op_cost, "train conv kxk/s2");
  EXPECT_NEAR(down.forward_seconds, 401408.0 / 4e10, 1e-12);
  // Inference does not read them.
  EXPECT_NE(forecast_fit(conv3x3(NodeBuilder("Conv").input({1, 32, 28, 28})), c, FitOptions{}).nodes[0].op_cost,
            "train conv kxk");
  // Without a sample of the kind (1x1 unstrided here), the class rules hold:
  // the roofline's compute at the flat 100 GFLOP/s times the training forward ratio.
  const NodeForecast pointwise = forecast_fit(one_node_analysis(NodeBuilder("Conv")
                                                                     .input({1, 32, 28, 28})
                                                                     .weight({32, 32, 1, 1})
                                                                     .output({1, 32, 28, 28})),
                                              c, train)
                                     .nodes[0];
  EXPECT_NEAR(pointwise.compute_seconds, 1.5 * 2.0 * 784 * 32 * 32 / 1e11, 1e-15);
}

TEST(FitLatency, DepthwiseConvUsesItsMeasuredClassAndDenseContractionsTheirBackwardRatio) {
  DeviceCeilings c = flat_ceilings();
  OpCost dw;
  dw.op = "Conv/depthwise";
  dw.fixed_seconds = 30e-6;
  dw.seconds_per_byte = 2e-11;  // 50 GB/s: under the 10 GB/s copy roofline here
  dw.backward_fixed_seconds = 100e-6;
  dw.backward_seconds_per_byte = 5e-10;  // 2 GB/s
  OpCost gemm;
  gemm.op = "Gemm";
  gemm.backward_ratio = 3.0;  // both gradients together: 1.5 forward each
  c.op_costs = {dw, gemm};
  // Depthwise 3x3 on 1x32x112x112: x 1605632 + w 1152 read, y 1605632 written.
  const FitReport r = forecast_fit(one_node_analysis(NodeBuilder("Conv")
                                                         .input({1, 32, 112, 112})
                                                         .weight({32, 1, 3, 3})
                                                         .output({1, 32, 112, 112})
                                                         .attr("pads", std::vector<int64_t>{1, 1, 1, 1})
                                                         .attr("group", int64_t(32))),
                                   c, FitOptions{});
  const NodeForecast& n = r.nodes[0];
  EXPECT_EQ(n.op_cost, "Conv/depthwise");
  EXPECT_EQ(n.scratch_seconds, 0.0);  // the class was measured with oneDNN's reorders in it
  EXPECT_NEAR(n.forward_seconds, 3212416.0 / 1e10 + 30e-6, 1e-15);  // memory 321 us > kernel 64 us
  EXPECT_EQ(n.bound, ForecastBound::Memory);
  // Its backward (the weight needs a gradient) is the class's measured one, not
  // the dense ratio: 3212416 bytes at 2 GB/s + 100 us.
  FitOptions train;
  train.train = true;
  train.optimizer = Optimizer::Sgd;
  const FitReport rt = forecast_fit(one_node_analysis(NodeBuilder("Conv")
                                                          .input({1, 32, 112, 112})
                                                          .weight({32, 1, 3, 3})
                                                          .output({1, 32, 112, 112})
                                                          .attr("pads", std::vector<int64_t>{1, 1, 1, 1})
                                                          .attr("group", int64_t(32))),
                                    c, train);
  EXPECT_NEAR(rt.nodes[0].backward_seconds, 3212416.0 * 5e-10 + 100e-6, 1e-15);
  // A dense conv belongs to no class: priced on the curve, as before.
  const FitReport dense = forecast_fit(one_node_analysis(NodeBuilder("Conv")
                                                             .input({1, 32, 56, 56})
                                                             .weight({32, 32, 3, 3})
                                                             .output({1, 32, 56, 56})
                                                             .attr("pads", std::vector<int64_t>{1, 1, 1, 1})),
                                       c, FitOptions{});
  EXPECT_EQ(dense.nodes[0].op_cost, "");

  // The Gemm's one gradient product (the weight's) at half the measured ratio.
  FitOptions o;
  o.train = true;
  o.optimizer = Optimizer::Sgd;
  const FitReport g = forecast_fit(gemm_analysis(64), c, o);
  EXPECT_NEAR(g.latency.backward_seconds, 1.5 * g.latency.forward_seconds, 1e-15);
}

// ----------------------------------------------------------------- memory

// A graph built tensor by tensor: y = Clip(Pow(BN(Conv(x, w) * 0.5), e), lo, hi) * slope,
// with an unused initializer beside it.
TEST(FitMemory, TrainableWeightsAreTheParametersNotTheExportedConstants) {
  Graph g;
  auto tensor = [&](const std::string& name, std::vector<int64_t> dims, TensorRole role) {
    Tensor t;
    t.name = name;
    t.dtype = DType::Float;
    t.role = role;
    t.shape.rank_known = true;
    for (int64_t d : dims) t.shape.dims.push_back(Dim{d, {}});
    g.tensors.push_back(t);
    const int id = int(g.tensors.size()) - 1;
    if (role == TensorRole::Initializer) g.initializers.push_back(id);
    return id;
  };
  auto node = [&](const std::string& op, std::vector<int> inputs, int output) {
    Node n;
    n.op_type = op;
    n.inputs = std::move(inputs);
    n.outputs = {output};
    g.nodes.push_back(n);
  };
  const auto I = TensorRole::Initializer, A = TensorRole::Activation;
  const int x = tensor("x", {1, 4, 8, 8}, TensorRole::Input);
  const int w = tensor("w", {4, 4, 3, 3}, I), half = tensor("half", {}, I), scale = tensor("scale", {4}, I),
            bias = tensor("bias", {4}, I), mean = tensor("mean", {4}, I), var = tensor("var", {4}, I),
            e = tensor("e", {}, I), lo = tensor("lo", {}, I), hi = tensor("hi", {}, I),
            slope = tensor("slope", {1}, I), unused = tensor("unused", {16}, I);
  const int a = tensor("a", {1, 4, 8, 8}, A), b = tensor("b", {1, 4, 8, 8}, A), c = tensor("c", {1, 4, 8, 8}, A),
            d = tensor("d", {1, 4, 8, 8}, A), f = tensor("f", {1, 4, 8, 8}, A), y = tensor("y", {1, 4, 8, 8}, A);
  node("Conv", {x, w}, a);
  node("Mul", {a, half}, b);
  node("BatchNormalization", {b, scale, bias, mean, var}, c);
  node("Pow", {c, e}, d);
  node("Clip", {d, lo, hi}, f);
  node("PRelu", {f, slope}, y);  // a one-element slope outside Add/Sub/Mul/Div is a parameter
  const std::vector<bool> t = trainable_initializers(g);
  for (int k : {w, scale, bias, slope}) EXPECT_TRUE(t[size_t(k)]) << g.tensors[size_t(k)].name;
  for (int k : {half, mean, var, e, lo, hi, unused, x, a, y}) EXPECT_FALSE(t[size_t(k)]) << g.tensors[size_t(k)].name;
}

TEST(FitMemory, GemmInference) {
  const FitReport r = forecast_fit(gemm_analysis(64), hand_ceilings(), FitOptions{});
  // Weights: B 128*256*4 + C 256*4 = 132096; activations A 32768 + Y 65536 live together.
  EXPECT_EQ(r.memory.weights_bytes, 132096);
  EXPECT_EQ(r.memory.activation_peak_bytes, 98304);
  EXPECT_EQ(r.memory.workspace_bytes, 0);
  EXPECT_EQ(r.memory.gradient_bytes, 0);
  EXPECT_EQ(r.memory.total_bytes, 132096 + 98304);
}

TEST(FitMemory, GemmTrainingWeightsGradientsOptimizerState) {
  // Weights B + C = 132096 bytes (33024 floats). Forward: A (32768) and Y
  // (65536); Gemm saves its inputs, so A stays. Backward: dY (65536) first,
  // then the node's weight gradients dB + dC (132096); A needs no gradient.
  // So the backward peak is 32768 + 65536 + 65536 activations + 132096
  // gradients. The update then holds every gradient, the input A and the
  // output Y (the caller's) and, for Adam, two temporaries of the largest
  // weight (2 * 131072).
  struct Case {
    Optimizer optimizer;
    int64_t state, activations, workspace, total;
    const char* phase;
  };
  for (const Case& c : {Case{Optimizer::Sgd, 0, 163840, 0, 132096 + 132096 + 163840, "backward"},
                        Case{Optimizer::Momentum, 132096, 163840, 0, 132096 + 132096 + 132096 + 163840, "backward"},
                        Case{Optimizer::Adam, 264192, 98304, 262144, 132096 + 264192 + 132096 + 98304 + 262144,
                             "optimizer"}}) {
    FitOptions o;
    o.train = true;
    o.optimizer = c.optimizer;
    const FitReport r = forecast_fit(gemm_analysis(64), hand_ceilings(), o);
    SCOPED_TRACE(name_of(c.optimizer));
    EXPECT_EQ(r.memory.trainable_params, 128 * 256 + 256);
    EXPECT_EQ(r.memory.gradient_bytes, 132096);
    EXPECT_EQ(r.memory.gradient_bytes_at_peak, 132096);
    EXPECT_EQ(r.memory.optimizer_state_bytes, c.state);
    EXPECT_EQ(r.memory.saved_activation_bytes, 32768 + 65536);
    EXPECT_EQ(r.memory.activation_peak_bytes, c.activations);
    EXPECT_EQ(r.memory.workspace_bytes, c.workspace);
    EXPECT_EQ(r.memory.peak_phase, c.phase);
    EXPECT_EQ(r.memory.total_bytes, c.total);
  }
}

TEST(FitMemory, TinyCnnInferenceWithIm2colWorkspace) {
  const FitReport r = forecast_fit(file_analysis("sample_models/tiny_cnn.onnx"), hand_ceilings(), FitOptions{});
  // Params (docs: sample_models/README.md): conv 16*3*3*3+16 = 448, dw 16*9+16 = 160,
  // pw 16*16+16 = 272, bn 4*16 = 64, down 32*16*9+32 = 4640, fc 32*10+10 = 330:
  // 5914 floats = 23656 bytes.
  EXPECT_EQ(r.memory.weights_bytes, 23656);
  // The peak is the stem conv: input 1x3x32x32 (12288 B) + output 1x16x32x32
  // (65536 B) + its im2col columns: input numel 3072 <= 20480 and batch 1, so
  // ATen takes the THNN path, 3*3*3 x 32*32 floats = 110592 B.
  EXPECT_EQ(r.memory.peak_node, "/stem/stem.0/Conv");
  EXPECT_EQ(r.memory.activation_peak_bytes, 12288 + 65536);
  EXPECT_EQ(r.memory.workspace_bytes, 110592);
  EXPECT_EQ(r.memory.total_bytes, 23656 + 12288 + 65536 + 110592);
}

// The CPU workspace rule against the values measured with a counting
// allocator around at::convolution and at::max_pool2d (docs/FIT.md, "Workspace").
TEST(FitMemory, CpuWorkspaceRule) {
  auto conv = [](std::vector<int64_t> x, std::vector<int64_t> w, std::vector<int64_t> y, int64_t stride,
                 int64_t pad, int64_t group) {
    return NodeBuilder("Conv")
        .input(x)
        .weight(w)
        .output(y)
        .attr("strides", std::vector<int64_t>{stride, stride})
        .attr("pads", std::vector<int64_t>{pad, pad, pad, pad})
        .attr("group", group)
        .build();
  };
  // 3x3 64->64 at 56x56, batch 1: oneDNN; input 802816 + weight 147456 reordered.
  Graph g = conv({1, 64, 56, 56}, {64, 64, 3, 3}, {1, 64, 56, 56}, 1, 1, 1);
  EXPECT_EQ(cpu_workspace_bytes(g, g.nodes[0], 1), 950272);
  // 1x1 64->256, one thread: THNN, no columns.
  g = conv({1, 64, 56, 56}, {256, 64, 1, 1}, {1, 256, 56, 56}, 1, 0, 1);
  EXPECT_EQ(cpu_workspace_bytes(g, g.nodes[0], 1), 0);
  // ... with two threads: oneDNN, the blocked output (3211264) is the larger stage.
  EXPECT_EQ(cpu_workspace_bytes(g, g.nodes[0], 2), 3211264);
  // 3x3 8->16 at 32x32: input numel 8192 <= 20480: THNN im2col 8*9*1024*4.
  g = conv({1, 8, 32, 32}, {16, 8, 3, 3}, {1, 16, 32, 32}, 1, 1, 1);
  EXPECT_EQ(cpu_workspace_bytes(g, g.nodes[0], 1), 294912);
  // Depthwise 3x3 on 32x112x112: oneDNN (groups > 1), input 1605632 + weight 1152.
  g = conv({1, 32, 112, 112}, {32, 1, 3, 3}, {1, 32, 112, 112}, 1, 1, 32);
  EXPECT_EQ(cpu_workspace_bytes(g, g.nodes[0], 1), 1606784);
  // Strided 3x3 128->256 at 28x28: oneDNN, input 401408 + weight 1179648.
  g = conv({1, 128, 28, 28}, {256, 128, 3, 3}, {1, 256, 14, 14}, 2, 1, 1);
  EXPECT_EQ(cpu_workspace_bytes(g, g.nodes[0], 1), 1581056);
  // MaxPool 3x3 s2, 64x112x112 -> 64x56x56: int64 indices, 200704 * 8 (measured 1605632).
  g = NodeBuilder("MaxPool")
          .input({1, 64, 112, 112})
          .output({1, 64, 56, 56})
          .attr("kernel_shape", std::vector<int64_t>{3, 3})
          .attr("strides", std::vector<int64_t>{2, 2})
          .build();
  EXPECT_EQ(cpu_workspace_bytes(g, g.nodes[0], 1), 1605632);
}

// ---------------------------------------------------------------- verdicts

TEST(FitVerdict, BudgetsAndBatchSearch) {
  // Inference memory(b) = 132096 + (128 + 256) * 4 * b = 132096 + 1536 b.
  // 1 MiB: b <= (1048576 - 132096) / 1536 = 596.7 -> 596.
  // Flat 100 GFLOP/s: compute(b) = (2*32768 + 256) b / 1e11 = 6.5792e-7 b, memory
  // (1536 b + 132096) / 1e10; compute dominates past b = 26, so 100 us allows
  // 6.5792e-7 b + 5e-6 <= 1e-4 -> b <= 144.4 -> 144.
  FitOptions o;
  o.memory_budget_bytes = 1048576;
  o.latency_budget_seconds = 100e-6;
  const FitReport r = fit_model(gemm_analysis, 1, flat_ceilings(), o);
  EXPECT_EQ(r.fits_memory, std::optional<bool>(true));
  EXPECT_EQ(r.meets_latency, std::optional<bool>(true));
  EXPECT_TRUE(r.within_budgets());
  ASSERT_TRUE(r.batch_search.searched);
  EXPECT_EQ(r.batch_search.largest_fitting_memory, std::optional<int64_t>(596));
  EXPECT_EQ(r.batch_search.largest_meeting_latency, std::optional<int64_t>(144));

  // At batch 600 the memory budget is exceeded (132096 + 921600 > 1048576).
  const FitReport over = fit_model(gemm_analysis, 600, flat_ceilings(), o);
  EXPECT_EQ(over.fits_memory, std::optional<bool>(false));
  EXPECT_FALSE(over.within_budgets());

  // A budget nothing meets: 0. A budget everything meets: the search limit.
  FitOptions tiny;
  tiny.memory_budget_bytes = 1000;
  tiny.max_batch_limit = 1000;
  EXPECT_EQ(fit_model(gemm_analysis, 1, flat_ceilings(), tiny).batch_search.largest_fitting_memory,
            std::optional<int64_t>(0));
  FitOptions huge;
  huge.memory_budget_bytes = int64_t(1) << 40;
  huge.max_batch_limit = 1000;
  EXPECT_EQ(fit_model(gemm_analysis, 1, flat_ceilings(), huge).batch_search.largest_fitting_memory,
            std::optional<int64_t>(1000));
}

TEST(FitVerdict, FixedBatchIsNotSearched) {
  FitOptions o;
  o.memory_budget_bytes = 1048576;
  const FitReport r = fit_model([](int64_t) { return gemm_analysis(4); }, 4, flat_ceilings(), o);
  EXPECT_FALSE(r.batch_search.searched);
  EXPECT_TRUE(test::contains(r.batch_search.note, "fixes its batch dim"));
  EXPECT_FALSE(r.batch_search.largest_fitting_memory.has_value());
}

// -------------------------------------------------------------------- writers

TEST(FitWriters, JsonCarriesTheForecast) {
  FitOptions o;
  o.train = true;
  o.memory_budget_bytes = 1048576;
  const FitReport r = fit_model(gemm_analysis, 64, flat_ceilings(), o);
  std::ostringstream out;
  make_fit_writer("json")->write(r, out);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["schema_version"], kFitJsonSchemaVersion);
  EXPECT_EQ(j["mode"], "train");
  EXPECT_EQ(j["optimizer"], "adam");
  EXPECT_EQ(j["batch"], 64);
  EXPECT_EQ(j["memory"]["total_bytes"], r.memory.total_bytes);
  EXPECT_EQ(j["memory"]["optimizer_state_bytes"], 264192);
  EXPECT_EQ(j["budgets"]["memory_bytes"], 1048576);
  EXPECT_TRUE(j["budgets"]["latency_seconds"].is_null());
  EXPECT_EQ(j["verdict"]["fits_memory"], true);
  EXPECT_TRUE(j["verdict"]["meets_latency"].is_null());
  EXPECT_DOUBLE_EQ(j["latency"]["total_seconds"].get<double>(), r.latency.total_seconds);
  ASSERT_EQ(j["nodes"].size(), 1u);
  EXPECT_EQ(j["nodes"][0]["op_type"], "Gemm");
  EXPECT_THROW(make_fit_writer("csv"), Error);

  std::ostringstream table;
  make_fit_writer("table")->write(r, table);
  EXPECT_TRUE(test::contains(table.str(), "optimizer state"));
  EXPECT_TRUE(test::contains(table.str(), "fits against 1.00 MiB"));
}

// ------------------------------------------------------------------------ CLI

struct RunResult {
  int exit_code = -1;
  std::string output;  // standard output, then standard error
};

// timeout: seconds; a run that measures quick ceilings takes longer on a busy machine.
RunResult run_modelstat(const std::string& args, const std::string& env = {}, int timeout = 60) {
  const test::CliResult r = test::run_modelstat_cli(args, env, timeout);
  return {r.exit_code, r.out + r.err};
}

class FitCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("modelstat_fit_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    ceilings_ = (dir_ / "ceilings-cpu.json").string();
    std::ofstream(ceilings_) << ceilings_to_json(hand_ceilings());
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string model(const std::string& name) const { return std::string(MODELSTAT_SOURCE_DIR) + "/sample_models/" + name; }

  fs::path dir_;
  std::string ceilings_;
};

TEST_F(FitCli, ExitCodesFollowTheBudgets) {
  const std::string base = "fit " + model("tiny_cnn.onnx") + " --ceilings " + ceilings_;
  // tiny_cnn needs 212072 bytes (FitMemory.TinyCnnInferenceWithIm2colWorkspace).
  EXPECT_EQ(run_modelstat(base + " --memory 1MiB").exit_code, 0);
  EXPECT_EQ(run_modelstat(base + " --memory 212072B").exit_code, 0);
  RunResult over = run_modelstat(base + " --memory 212071B");
  EXPECT_EQ(over.exit_code, kFitBudgetExceededExitCode) << over.output;
  EXPECT_TRUE(test::contains(over.output, "EXCEEDS")) << over.output;
  // 14 nodes at 5 us of overhead each already take 70 us.
  EXPECT_EQ(run_modelstat(base + " --latency-budget 50us").exit_code, kFitBudgetExceededExitCode);
  EXPECT_EQ(run_modelstat(base + " --latency-budget 1s").exit_code, 0);
  EXPECT_EQ(run_modelstat(base).exit_code, 0);  // no budget: nothing to exceed
}

TEST_F(FitCli, UsageErrorsExitTwo) {
  const std::string base = "fit " + model("tiny_cnn.onnx") + " --ceilings " + ceilings_;
  RunResult r = run_modelstat(base + " --memory 8XB");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(test::contains(r.output, "not a memory size")) << r.output;
  EXPECT_EQ(run_modelstat(base + " --latency-budget 10").exit_code, 2);
  EXPECT_EQ(run_modelstat(base + " --train --optimizer adamw").exit_code, 2);
  EXPECT_EQ(run_modelstat(base + " --batch 0").exit_code, 2);
  EXPECT_EQ(run_modelstat(base + " --datasheet h100-sxm").exit_code, 2);  // --ceilings excludes it
}

// --memory and --latency-budget are parsed by the command line (CLI11
// transforms in tools/fit_command.cc); the forecast takes bytes and seconds.
TEST_F(FitCli, BudgetSpellings) {
  const std::string base = "fit " + model("tiny_cnn.onnx") + " --ceilings " + ceilings_ + " -f json";
  auto budgets = [&](const std::string& flags) {
    const RunResult r = run_modelstat(base + " " + flags);
    EXPECT_NE(r.exit_code, 2) << flags << ": " << r.output;
    return nlohmann::json::parse(r.output.substr(r.output.find('{')))["budgets"];
  };
  const std::vector<std::pair<std::string, int64_t>> sizes = {
      {"8GiB", 8LL * 1024 * 1024 * 1024}, {"512MiB", 512LL * 1024 * 1024}, {"1KiB", 1024},
      {"2TiB", 2LL * 1024 * 1024 * 1024 * 1024}, {"1.5GB", 1500000000}, {"10KB", 10000}, {"10kB", 10000},
      {"3MB", 3000000}, {"4096", 4096}, {"4096B", 4096}, {"'8 GiB'", 8LL * 1024 * 1024 * 1024}};
  for (const auto& [text, bytes] : sizes) EXPECT_EQ(budgets("--memory " + text)["memory_bytes"], bytes) << text;
  const std::vector<std::pair<std::string, double>> durations = {
      {"10ms", 0.010}, {"0.5s", 0.5}, {"250us", 250e-6}, {"250\xC2\xB5s", 250e-6}, {"40ns", 40e-9}};
  for (const auto& [text, seconds] : durations)
    EXPECT_DOUBLE_EQ(budgets("--latency-budget " + text)["latency_seconds"].get<double>(), seconds) << text;
  for (const char* bad : {"''", "GiB", "8XB", "8gib", "1e9", "1.2.3MB", "'8 GiB extra'", "99999999TiB"}) {
    const RunResult r = run_modelstat(base + " --memory " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_TRUE(test::contains(r.output, "is not a memory size (e.g. 8GiB")) << bad << ": " << r.output;
  }
  EXPECT_EQ(run_modelstat(base + " --memory=-1GiB").exit_code, 2);
  for (const char* bad : {"''", "10", "10m", "ms", "'10 min'"}) {
    const RunResult r = run_modelstat(base + " --latency-budget " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_TRUE(test::contains(r.output, "is not a duration (e.g. 10ms")) << bad << ": " << r.output;
  }
  EXPECT_EQ(run_modelstat(base + " --latency-budget=-3ms").exit_code, 2);
}

// No saved ceilings: fit measures quick ones itself (as report does), says so and
// what to run for accurate ones, and saves nothing; a saved file is used once it exists.
TEST_F(FitCli, MissingCeilingsAreMeasuredQuicklyWithANotice) {
  const fs::path empty = dir_ / "empty";
  fs::create_directories(empty);
  RunResult r = run_modelstat("fit " + model("tiny_cnn.onnx"), "MODELSTAT_CEILINGS_DIR=" + empty.string(), 600);
#if MODELSTAT_WITH_PROFILER
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(test::contains(r.output, "no ceilings saved for this device (" + (empty / "ceilings-cpu.json").string() +
                                           "): measured quick ceilings for this forecast"))
      << r.output;
  EXPECT_FALSE(fs::exists(empty / "ceilings-cpu.json")) << "quick ceilings are not saved";
#else
  EXPECT_EQ(r.exit_code, 2);  // nothing here can measure them
#endif
  EXPECT_TRUE(test::contains(r.output, "modelstat device")) << r.output;
  // The saved file is found there once it exists: no measurement, no notice.
  std::ofstream((empty / "ceilings-cpu.json").string()) << ceilings_to_json(hand_ceilings());
  RunResult saved = run_modelstat("fit " + model("tiny_cnn.onnx"), "MODELSTAT_CEILINGS_DIR=" + empty.string());
  EXPECT_EQ(saved.exit_code, 0) << saved.output;
  EXPECT_FALSE(test::contains(saved.output, "quick ceilings")) << saved.output;
}

TEST_F(FitCli, JsonOutputAndBatchSearchOnSymbolicBatch) {
  const std::string out = (dir_ / "fit.json").string();
  RunResult r = run_modelstat("fit " + model("custom_model.onnx") + " --ceilings " + ceilings_ +
                              " --train --optimizer sgd --batch 2 --memory 8GiB -f json -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(out);
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["batch"], 2);
  EXPECT_EQ(j["optimizer"], "sgd");
  EXPECT_EQ(j["memory"]["optimizer_state_bytes"], 0);
  EXPECT_EQ(j["batch_search"]["searched"], true);
  EXPECT_GE(j["batch_search"]["largest_fitting_memory"].get<int64_t>(), 2);
}

}  // namespace
}  // namespace modelstat

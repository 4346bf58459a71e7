// fit's training setup: ZeRO's model states against the figures the ZeRO
// paper and DeepSpeed's documentation publish, and precision and
// checkpointing on small graphs whose bytes are worked out by hand in the
// comments (docs/FIT.md, "Precision, checkpointing, sharding").
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/fit/sharding.hpp"
#include "analyzer/fit/training_graph.hpp"
#include "modelstat/analysis.hpp"
#include "modelstat/error.hpp"
#include "modelstat/fit.hpp"
#include "test_support.hpp"

namespace modelstat {
namespace {

double round_to(double value, double step) { return std::round(value / step) * step; }
double gib(int64_t bytes) { return double(bytes) / double(int64_t(1) << 30); }

// ZeRO (Rajbhandari et al. 2020), Figure 1: a 7.5B-parameter model, mixed
// precision with Adam (K = 12), N = 64 data-parallel devices: baseline 120 GB,
// P_os 31.4 GB, P_os+g 16.6 GB, P_os+g+p 1.9 GB per device.
TEST(ZeroSharding, PaperFigure1) {
  const int64_t params = 7'500'000'000;
  const double expected_gb[] = {120.0, 31.4, 16.6, 1.9};
  for (int stage = 0; stage <= 3; ++stage) {
    SCOPED_TRACE(stage);
    const auto layout = fit::zero_layout(TrainPrecision::Bf16, Optimizer::Adam, stage);
    EXPECT_NEAR(round_to(double(fit::zero_model_state_bytes(params, layout, 64)) / 1e9, 0.1), expected_gb[stage],
                1e-9);
  }
}

// DeepSpeed, docs "Memory Requirements" (memory.rst): t5-3b, 2851M params,
// 32M largest layer, 1 node of 8 GPUs, "all_cold" estimators:
// ZeRO-2 per GPU 15.93GB (offload_optimizer=none), 5.31GB (cpu);
// ZeRO-3 6.09GB (none/none), 0.78GB (param none, optimizer cpu), 0.12GB (both cpu).
// (DeepSpeed prints bytes / 2^30 with two decimals.)
TEST(ZeroSharding, DeepSpeedDocumentedT5_3B) {
  const int64_t params = 2'851'000'000, largest = 32'000'000;
  EXPECT_NEAR(round_to(gib(fit::deepspeed_zero2_gpu_bytes(params, 8, false)), 0.01), 15.93, 1e-9);
  EXPECT_NEAR(round_to(gib(fit::deepspeed_zero2_gpu_bytes(params, 8, true)), 0.01), 5.31, 1e-9);
  EXPECT_NEAR(round_to(gib(fit::deepspeed_zero3_gpu_bytes(params, largest, 8, false, false)), 0.01), 6.09, 1e-9);
  EXPECT_NEAR(round_to(gib(fit::deepspeed_zero3_gpu_bytes(params, largest, 8, true, false)), 0.01), 0.78, 1e-9);
  EXPECT_NEAR(round_to(gib(fit::deepspeed_zero3_gpu_bytes(params, largest, 8, true, true)), 0.01), 0.12, 1e-9);
}

// The same page's t5-large example: 737.67M params, 32.90M largest layer, 4
// GPUs: case 1 (nothing offloaded) 3291MB, case 2 (both offloaded) 125MB,
// case 3 (optimizer offloaded) 477MB, printed as bytes >> 20.
TEST(ZeroSharding, DeepSpeedDocumentedT5Large) {
  const int64_t params = 737'670'000, largest = 32'900'000;
  EXPECT_EQ(fit::deepspeed_zero3_gpu_bytes(params, largest, 4, false, false) >> 20, 3291);
  EXPECT_EQ(fit::deepspeed_zero3_gpu_bytes(params, largest, 4, true, true) >> 20, 125);
  EXPECT_EQ(fit::deepspeed_zero3_gpu_bytes(params, largest, 4, true, false) >> 20, 477);
}

// Gemm Y[64,256] = A[64,128] x B[128,256] + C[256]: 33024 trainable params.
AnalysisResult gemm_analysis() {
  Model m;
  m.opsets = {{"", 17}};
  m.graph = test::NodeBuilder("Gemm").input({64, 128}).weight({128, 256}).weight({256}).output({64, 256}).build();
  AnalysisResult r = analyze_model(m);
  r.model = std::make_shared<Model>(m);
  return r;
}

FitOptions train_options() {
  FitOptions o;
  o.train = true;
  o.optimizer = Optimizer::Adam;
  return o;
}

// torch.autocast: Gemm (addmm) casts every input to bf16; B and C are
// trainable, so their casts are the cached weight copies: 33024 params x 2 =
// 66048 bytes. Weights, gradients (of the fp32 leaves) and Adam's m, v stay
// fp32: 132096, 132096, 264192 bytes.
TEST(FitTrainingSetup, AutocastKeepsFp32WeightsAndAddsSixteenBitCopies) {
  FitOptions o = train_options();
  o.precision = TrainPrecision::Bf16;
  const FitReport r = forecast_fit(gemm_analysis(), test::cpu_ceilings(1e10, 1e11), o);
  EXPECT_EQ(r.memory.low_precision_weight_bytes, 66048);
  EXPECT_EQ(r.memory.weights_bytes, 132096);
  EXPECT_EQ(r.memory.gradient_bytes, 132096);
  EXPECT_EQ(r.memory.optimizer_state_bytes, 264192);
  EXPECT_EQ(r.memory.master_weight_bytes, 0);
  EXPECT_TRUE(r.memory.basis.empty());  // bf16 autocast is measured (bench/fit_train_validate.py)
}

// ZeRO-3 over 4 shards, bf16, Adam: 16-bit weights 66048 / 4 = 16512; fp32
// master 132096 / 4 = 33024; moments 264192 / 4 = 66048; gradients 66048 / 4
// at most; gathered: the largest weight B (32768 params) x (2 + 2) = 131072.
// The paper's model states for 33024 params: (2 + 2 + 12) x 33024 / 4 = 132096.
TEST(FitTrainingSetup, ZeroStage3DividesEveryModelState) {
  FitOptions o = train_options();
  o.precision = TrainPrecision::Bf16;
  o.zero_stage = 3;
  o.shards = 4;
  const FitReport r = forecast_fit(gemm_analysis(), test::cpu_ceilings(1e10, 1e11), o);
  EXPECT_EQ(r.memory.weights_bytes, 16512);
  EXPECT_EQ(r.memory.master_weight_bytes, 33024);
  EXPECT_EQ(r.memory.optimizer_state_bytes, 66048);
  EXPECT_EQ(r.memory.gradient_bytes, 66048);
  EXPECT_LE(r.memory.gradient_bytes_at_peak, 66048 / 4);
  EXPECT_EQ(r.memory.gathered_parameter_bytes, 131072);
  EXPECT_EQ(r.memory.weights_bytes + r.memory.master_weight_bytes + r.memory.optimizer_state_bytes +
                r.memory.gradient_bytes / 4,
            132096);
  EXPECT_EQ(r.memory.basis, "formula-based (not measured)");
  const std::vector<std::string> divided = {"master weights", "optimizer state", "gradients", "weights"};
  EXPECT_EQ(r.memory.divided_by_shards, divided);
  ASSERT_TRUE(r.memory.deepspeed_model_states_bytes);
  // DeepSpeed's ZeRO-3: 4 x 32768 + 18 x 33024 / 4 = 131072 + 148608.
  EXPECT_EQ(*r.memory.deepspeed_model_states_bytes, 131072 + 148608);
}

TEST(FitTrainingSetup, CombinationsAreChecked) {
  FitOptions o;  // inference
  o.precision = TrainPrecision::Bf16;
  EXPECT_THROW(forecast_fit(gemm_analysis(), test::cpu_ceilings(1e10, 1e11), o), Error);
  o = train_options();
  o.shards = 8;  // sharding without a ZeRO stage
  EXPECT_THROW(forecast_fit(gemm_analysis(), test::cpu_ceilings(1e10, 1e11), o), Error);
}

TEST(FitTrainingSetup, BlockOfNodeNames) {
  EXPECT_EQ(fit::block_of("/encoder/layer.3/attention/self/MatMul"), "/encoder/layer.3");
  EXPECT_EQ(fit::block_of("/h.0/attn/MatMul_1"), "/h.0");
  EXPECT_EQ(fit::block_of("/enc/layers.11/linear1/Add"), "/enc/layers.11");
  EXPECT_EQ(fit::block_of("MatMul_12"), "");
  EXPECT_EQ(fit::block_of("/pool/Gemm"), "");
}

// A small multi-node graph: tensors by name, every dim known, fp32.
struct GraphMaker {
  Graph g;
  int tensor(const std::string& name, const std::vector<int64_t>& dims, TensorRole role = TensorRole::Activation) {
    Tensor t;
    t.name = name;
    t.dtype = DType::Float;
    t.shape = test::make_shape(dims);
    t.role = role;
    g.tensors.push_back(t);
    const int id = int(g.tensors.size()) - 1;
    if (role == TensorRole::Initializer) g.initializers.push_back(id);
    return id;
  }
  void node(const std::string& op, const std::string& name, std::vector<int> inputs, std::vector<int> outputs) {
    Node n;
    n.op_type = op;
    n.name = name;
    n.inputs = std::move(inputs);
    n.outputs = std::move(outputs);
    for (int t : n.inputs) g.tensors[size_t(t)].consumers.push_back(int(g.nodes.size()));
    for (int t : n.outputs) g.tensors[size_t(t)].producer = int(g.nodes.size());
    g.nodes.push_back(std::move(n));
  }
  AnalysisResult analysis() const {
    Model m;
    m.opsets = {{"", 17}};
    m.graph = g;
    AnalysisResult r = analyze_model(m);
    r.model = std::make_shared<Model>(m);
    return r;
  }
  // The training forecasts without checkpointing and with `mode`, on the same ceilings.
  std::pair<FitReport, FitReport> without_and_with(Checkpointing mode) const {
    FitOptions with = train_options();
    with.checkpointing = mode;
    const DeviceCeilings ceilings = test::cpu_ceilings(1e10, 1e11);
    return {forecast_fit(analysis(), ceilings, train_options()), forecast_fit(analysis(), ceilings, with)};
  }
};

// One attention head over 16 tokens of width 8: Q, K, V projections,
// S = Q x K^T [1,16,16], P = Softmax(S), O = P x V, Y = O x Wo. Without
// checkpointing the step saves P (Softmax saves its output and P x V its
// inputs): 16 x 16 x 4 = 1024 bytes. Selective recomputes the core (S, P):
// saved for backward drops by exactly P's 1024 bytes (S is saved by no one).
TEST(FitTrainingSetup, SelectiveCheckpointingDropsTheAttentionScores) {
  GraphMaker m;
  const int x = m.tensor("x", {1, 16, 8});
  m.g.inputs = {x};
  auto weight = [&](const std::string& name) { return m.tensor(name, {8, 8}, TensorRole::Initializer); };
  const int q = m.tensor("q", {1, 16, 8}), k = m.tensor("k", {1, 16, 8}), v = m.tensor("v", {1, 16, 8});
  const int kt = m.tensor("kt", {1, 8, 16}), s = m.tensor("s", {1, 16, 16}), p = m.tensor("p", {1, 16, 16});
  const int o = m.tensor("o", {1, 16, 8}), y = m.tensor("y", {1, 16, 8});
  m.node("MatMul", "/attn/q", {x, weight("wq")}, {q});
  m.node("MatMul", "/attn/k", {x, weight("wk")}, {k});
  m.node("MatMul", "/attn/v", {x, weight("wv")}, {v});
  Node& transpose = (m.node("Transpose", "/attn/kt", {k}, {kt}), m.g.nodes.back());
  transpose.attributes["perm"] = std::vector<int64_t>{0, 2, 1};
  m.node("MatMul", "/attn/scores", {q, kt}, {s});
  m.node("Softmax", "/attn/softmax", {s}, {p});
  m.node("MatMul", "/attn/context", {p, v}, {o});
  m.node("MatMul", "/attn/out", {o, weight("wo")}, {y});
  m.g.outputs = {y};
  const auto [a, b] = m.without_and_with(Checkpointing::Selective);
  EXPECT_EQ(b.memory.recomputed_regions, 1);
  EXPECT_EQ(a.memory.saved_activation_bytes - b.memory.saved_activation_bytes, 1024);
  EXPECT_EQ(b.memory.basis, "formula-based (not measured)");
}

// Two blocks /l.0 and /l.1, each MatMul [1,32] x [32,32] then Erf (which
// saves its input). Full checkpointing keeps what leaves a block (Erf's
// output: the next block's input, and the graph output) and drops the
// MatMul outputs, 32 x 4 = 128 bytes each, from what forward holds.
TEST(FitTrainingSetup, FullCheckpointingKeepsOnlyBlockInputs) {
  GraphMaker m;
  const int x = m.tensor("x", {1, 32});
  m.g.inputs = {x};
  const int w0 = m.tensor("w0", {32, 32}, TensorRole::Initializer);
  const int w1 = m.tensor("w1", {32, 32}, TensorRole::Initializer);
  const int h0 = m.tensor("h0", {1, 32}), e0 = m.tensor("e0", {1, 32});
  const int h1 = m.tensor("h1", {1, 32}), e1 = m.tensor("e1", {1, 32});
  m.node("MatMul", "/l.0/fc/MatMul", {x, w0}, {h0});
  m.node("Erf", "/l.0/act/Erf", {h0}, {e0});
  m.node("MatMul", "/l.1/fc/MatMul", {e0, w1}, {h1});
  m.node("Erf", "/l.1/act/Erf", {h1}, {e1});
  m.g.outputs = {e1};
  const auto [a, b] = m.without_and_with(Checkpointing::Full);
  EXPECT_EQ(b.memory.recomputed_regions, 2);
  EXPECT_EQ(a.memory.saved_activation_bytes - b.memory.saved_activation_bytes, 2 * 128);
}

}  // namespace
}  // namespace modelstat

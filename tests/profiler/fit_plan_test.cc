// The fusion plan `fit` prices is the one the executor runs (issue 33): node by node, fit prices
// as "fused" (its work inside its group head's kernel, op_cost "fused") exactly the nodes the
// executor runs inside a group (Executor::fused_into). On every sample model, and on hand-made
// graphs where a non-constant operand blocks a group, with the same graph fused alongside as
// the positive control. The expected groups of the hand-made graphs are stated by hand below.
#include <gtest/gtest.h>

#include <filesystem>

#include "modelstat/analysis.hpp"
#include "modelstat/fit.hpp"
#include "profiler/executor.hpp"
#include "tests/profiler/ir_model.hpp"

namespace modelstat::profiler {
namespace {

// The node indices each side runs inside a group: fit's "fused" rows, the executor's members.
struct Members {
  std::vector<int> fit, executor;
};

Members members_of(const Model& model) {
  AnalysisResult analysis = analyze_model(model);
  analysis.model = std::make_shared<const Model>(model);  // what forecast_fit plans on
  const FitReport fit = forecast_fit(analysis, test::cpu_ceilings(20e9, 100e9), FitOptions{});
  const Executor exec(model, ExecOptions{});  // profile's defaults: CPU, fp32, fusion on
  Members m;
  for (const NodeForecast& n : fit.nodes)
    if (n.op_cost == "fused") m.fit.push_back(n.index);
  for (size_t k = 0; k < model.graph.nodes.size(); ++k)
    if (!exec.fused_into(int(k)).empty()) m.executor.push_back(int(k));
  return m;
}

TEST(FitPlan, EverySampleModelIsPricedWithTheGroupsTheExecutorRuns) {
  const std::filesystem::path dir = std::filesystem::path(MODELSTAT_SOURCE_DIR) / "sample_models";
  int models = 0;
  size_t members = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".onnx") continue;
    SCOPED_TRACE(entry.path().filename().string());
    const Model model = load_model(entry.path().string(), LoadOptions{});
    const Members m = members_of(model);
    EXPECT_EQ(m.fit, m.executor);
    members += m.executor.size();
    ++models;
  }
  EXPECT_GE(models, 10);
  // Not vacuous: tiny_cnn's Conv groups (BatchNormalization, Relu) and tiny_bert's MatMul groups
  // (bias Add, GELU) alone absorb nodes.
  EXPECT_GT(members, 5u);
}

at::Tensor filled(std::vector<int64_t> dims, float value) { return at::full(dims, value, at::kFloat); }

// x -> Conv(W, B) -> BatchNormalization(scale, bias, mean, var) -> Relu. With every BN operand a
// constant, BN folds into the Conv and Relu is its post-op: nodes 1 and 2 run in node 0's kernel.
// With the BN scale a graph input, nothing can fold it: BN and the Relu after it run as written.
Model conv_bn_relu(bool scale_is_input) {
  IrModel b;
  const int x = b.input("x", {1, 4, 8, 8});
  const int w = b.weight("W", filled({8, 4, 3, 3}, 0.1f));
  const int bias = b.weight("B", filled({8}, 0.0f));
  const int scale = scale_is_input ? b.input("scale", {8}) : b.weight("scale", filled({8}, 1.0f));
  const int beta = b.weight("beta", filled({8}, 0.0f));
  const int mean = b.weight("mean", filled({8}, 0.0f));
  const int var = b.weight("var", filled({8}, 1.0f));
  const int c = b.node("Conv", {x, w, bias}, 1, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}})[0];
  const int n = b.node("BatchNormalization", {c, scale, beta, mean, var})[0];
  b.output(b.node("Relu", {n})[0]);
  return b.model;
}

// x -> MatMul(x, W) -> Add(bias): with W a constant, the bias Add is the MatMul kernel's post-op
// (node 1 runs in node 0's kernel); with W a graph input there is no packed kernel and no group.
Model matmul_add(bool weight_is_input) {
  IrModel b;
  const int x = b.input("x", {4, 16});
  const int w = weight_is_input ? b.input("W", {16, 8}) : b.weight("W", filled({16, 8}, 0.1f));
  const int bias = b.weight("bias", filled({8}, 0.5f));
  const int y = b.node("MatMul", {x, w})[0];
  const int z = b.node("Add", {y, bias})[0];
  // As shape inference would have them: the pattern checks that the bias spans the output's last dim.
  for (int t : {y, z}) b.model.graph.tensors[size_t(t)].shape = test::make_shape({4, 8});
  b.output(z);
  return b.model;
}

TEST(FitPlan, ANonConstantOperandBlocksTheGroupInFitAndInTheExecutor) {
  Members m = members_of(conv_bn_relu(false));
  EXPECT_EQ(m.executor, (std::vector<int>{1, 2}));
  EXPECT_EQ(m.fit, m.executor);

  // The BatchNormalization does not fold into the Conv (its scale is computed): no Conv group. The
  // Relu after it still runs in its pass (pattern batch_norm_relu, which reads the statistics at
  // run time): node 2 only.
  m = members_of(conv_bn_relu(true));
  EXPECT_EQ(m.executor, std::vector<int>{2});
  EXPECT_EQ(m.fit, m.executor);

  m = members_of(matmul_add(false));
  EXPECT_EQ(m.executor, (std::vector<int>{1}));
  EXPECT_EQ(m.fit, m.executor);

  m = members_of(matmul_add(true));
  EXPECT_EQ(m.executor, std::vector<int>{});
  EXPECT_EQ(m.fit, m.executor);
}

}  // namespace
}  // namespace modelstat::profiler

// `fit` prices the kernels the executor runs (issue 33): the fused groups an
// inference forecast prices (NodeForecast::fused_head, op_cost "fused") are
// the groups the executor builds (Executor::fusion_plan()), node by node, on
// every sample model and on hand-made graphs where a constant's value or a
// computed operand blocks a fusion the structure alone would allow.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "analyzer/fusion/fusion_plan.hpp"
#include "modelstat/analysis.hpp"
#include "modelstat/fit.hpp"
#include "profiler/executor.hpp"
#include "tests/profiler/ir_model.hpp"
#include "tests/test_support.hpp"

namespace modelstat::profiler {
namespace {

// Per node: the head of the group it runs in as the executor built it (-1: alone).
std::vector<int> executor_heads(const Executor& exec, size_t nodes) {
  std::vector<int> heads(nodes, -1);
  const FusionPlan& plan = exec.fusion_plan();
  for (size_t i = 0; i < nodes && i < plan.group_of.size(); ++i)
    if (plan.group_of[i] >= 0) heads[i] = plan.groups[size_t(plan.group_of[i])].head;
  return heads;
}

// Per node: the head fit priced it with, and whether it priced it at 0 as a member.
void expect_same_groups(const AnalysisResult& analysis, const std::string& what) {
  ExecOptions options;  // inference on the CPU, fusion on: what `profile` and `report` run
  const Executor exec(*analysis.model, options);
  const FitReport fit = forecast_fit(analysis, test::cpu_ceilings(1e10, 1e11), FitOptions{});
  const size_t n = analysis.model->graph.nodes.size();
  ASSERT_EQ(fit.nodes.size(), n) << what;
  const std::vector<int> heads = executor_heads(exec, n);
  const FusionPlan& plan = exec.fusion_plan();
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(fit.nodes[i].fused_head, heads[i]) << what << ": node " << i << " " << fit.nodes[i].name;
    EXPECT_EQ(fit.nodes[i].op_cost == "fused", bool(plan.absorbed[i])) << what << ": node " << i;
  }
}

AnalysisResult analysis_of(const Model& m) {
  AnalysisResult a = analyze_model(m);
  a.model = std::make_shared<Model>(m);
  return a;
}

TEST(FitFusionPlan, EverySampleModelIsPricedAsTheExecutorGroupsIt) {
  int models = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(MODELSTAT_SOURCE_DIR) + "/sample_models")) {
    if (entry.path().extension() != ".onnx") continue;
    LoadOptions o;
    o.default_batch = 1;
    o.dim_values = {{"seq", 16}, {"past", 4}, {"past_seq", 4}, {"total_seq", 20}};
    const AnalysisResult a = analyze_file(entry.path().string(), o);
    expect_same_groups(a, entry.path().filename().string());
    ++models;
  }
  EXPECT_GE(models, 13);
}

TEST(FitFusionPlan, ConstantsThatBlockAFusionBlockItInBoth) {
  // 1. GELU written out with a divisor of 2 (not sqrt 2): another function, runs as written.
  // 2. A Conv whose weight is a graph input: no packed kernel, runs as written.
  // 3. Conv -> BatchNormalization whose scale is computed (Relu of a constant):
  //    the Conv is a group of one, the BatchNormalization runs on its own.
  // 4. Clip with a computed bound after a Conv: not a post-op.
  for (int variant = 0; variant < 4; ++variant) {
    IrModel m;
    if (variant == 0) {
      const int x = m.input("x", {2, 8});
      const int d = m.node("Div", {x, m.weight("two", at::full({}, 2.f))})[0];
      const int e = m.node("Erf", {d})[0];
      const int a = m.node("Add", {e, m.weight("one", at::full({}, 1.f))})[0];
      m.output(m.node("Mul", {m.node("Mul", {x, a})[0], m.weight("half", at::full({}, 0.5f))})[0]);
    } else {
      const int x = m.input("x", {1, 4, 8, 8});
      const int w = variant == 1 ? m.input("w", {4, 4, 3, 3}) : m.weight("w", at::ones({4, 4, 3, 3}));
      const int y = m.node("Conv", {x, w}, 1, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}})[0];
      if (variant == 2) {
        const int scale = m.node("Relu", {m.weight("s", at::ones({4}))})[0];
        m.output(m.node("BatchNormalization", {y, scale, m.weight("b", at::zeros({4})), m.weight("mean", at::zeros({4})),
                                               m.weight("var", at::ones({4}))})[0]);
      } else if (variant == 3) {
        const int low = m.node("Neg", {m.weight("l", at::full({}, 1.f))})[0];
        m.output(m.node("Clip", {y, low, m.weight("h", at::full({}, 6.f))})[0]);
      } else {
        m.output(y);
      }
    }
    const AnalysisResult a = analysis_of(m.model);
    expect_same_groups(a, "variant " + std::to_string(variant));
    // And the block holds: nothing absorbed in any variant.
    const Executor exec(m.model, ExecOptions{});
    EXPECT_EQ(exec.fusion_plan().absorbed_count, 0) << variant;
  }
}

}  // namespace
}  // namespace modelstat::profiler

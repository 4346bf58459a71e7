// The subgraph pass of the protocol (profiler/protocol.cc): the nodes inside
// If / Loop / Scan subgraphs get rows of their own, named as the analysis
// names its rows, with their calls per run, under their top-level node.
// Hand-built models (tests/profiler/onnx_builder.hpp) through profile_model
// on short budgets. Timings are never asserted; what is asserted holds for
// any timings: which rows exist, their names and calls, per-call <= per-run,
// and nested intervals inside their parent's.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "modelstat/joined.hpp"
#include "modelstat/profile.hpp"
#include "profiler/onnx_builder.hpp"
#include "scratch_folder.hpp"
#include "test_support.hpp"

namespace modelstat {
namespace {

class SubgraphTiming : public test::ScratchFolder {
 protected:
  ProfileResult profile(const onnx::ModelProto& proto, bool per_layer = true) {
    const std::string file = path("model.onnx");
    test::save_model(proto, file);
    return profile_model(file, {}, quick(per_layer));
  }
  static ProfileOptions quick(bool per_layer) {
    ProfileOptions o = test::quick_profile_options(5, 0.3);
    o.per_layer = per_layer;
    return o;
  }
};

std::vector<std::string> names(const std::vector<LayerTiming>& layers) {
  std::vector<std::string> out;
  for (const LayerTiming& l : layers) out.push_back(l.name);
  return out;
}

std::vector<std::string> names(const std::vector<NodeReport>& rows) {
  std::vector<std::string> out;
  for (const NodeReport& r : rows) out.push_back(r.name);
  return out;
}

const LayerTiming& row(const ProfileResult& r, const std::string& name) {
  const auto it = std::find_if(r.subgraph_layers.begin(), r.subgraph_layers.end(),
                               [&](const LayerTiming& l) { return l.name == name; });
  if (it == r.subgraph_layers.end()) throw std::runtime_error("no subgraph row " + name);
  return *it;
}

// Every row: measured in every iteration that called it, at most once per
// iteration of the pass, and a call takes no longer than the run's calls.
void expect_consistent_rows(const ProfileResult& r) {
  ASSERT_GT(r.subgraph_layer_sum.count, 0);
  for (const LayerTiming& l : r.subgraph_layers) {
    SCOPED_TRACE(l.name);
    EXPECT_GT(l.time.count, 0);
    EXPECT_LE(l.time.count, r.subgraph_layer_sum.count);
    EXPECT_EQ(l.time.samples.size(), size_t(l.time.count));
    EXPECT_GE(l.calls_per_run, 1.0);
    EXPECT_LE(l.median_per_call, l.time.median);
    EXPECT_FALSE(l.upcast_to_fp32);  // an fp32 model
  }
}

TEST_F(SubgraphTiming, LoopBodyNodesHaveRowsWithFiveCallsPerRun) {
  const ProfileResult r = profile(test::loop_five_model());
  // The top-level pass is as it was: one row per top-level node.
  EXPECT_EQ(names(r.layers), (std::vector<std::string>{"Relu_1", "Loop_2", "Neg_3"}));
  EXPECT_EQ(names(r.subgraph_layers), (std::vector<std::string>{"Loop_2/body/MatMul_1", "Loop_2/body/Add_2",
                                                                "Loop_2/body/Identity_3"}));
  // The analysis's rows for the same model bear the same names.
  EXPECT_EQ(names(r.subgraph_layers), names(r.analysis.subgraph_nodes));
  const std::vector<std::string> ops = {"MatMul", "Add", "Identity"};
  for (size_t k = 0; k < r.subgraph_layers.size(); ++k) {
    const LayerTiming& l = r.subgraph_layers[k];
    SCOPED_TRACE(l.name);
    EXPECT_EQ(l.op_type, ops[k]);
    EXPECT_EQ(l.index, 1);  // the Loop
    EXPECT_EQ(l.depth, 1);
    EXPECT_EQ(l.calls_per_run, 5.0);
    EXPECT_EQ(l.time.count, r.subgraph_layer_sum.count);  // called in every run
  }
  expect_consistent_rows(r);
  // Joined with its analysis row: [2, 4] x [4, 4] is 32 MACs a trip, 160 a run.
  const LayerCost cost = join_layer(r, row(r, "Loop_2/body/MatMul_1"), layer_median_sum(r));
  ASSERT_NE(cost.node, nullptr);
  EXPECT_EQ(cost.macs, 160);
  EXPECT_EQ(cost.flops, 320);
}

TEST_F(SubgraphTiming, ConstantIfHasRowsForItsTakenBranchOnly) {
  const ProfileResult r = profile(test::constant_if_model());
  EXPECT_EQ(names(r.subgraph_layers),
            (std::vector<std::string>{"If_2/then_branch/Add_1", "If_2/then_branch/Mul_2"}));
  EXPECT_EQ(names(r.analysis.subgraph_nodes), names(r.subgraph_layers));
  for (const LayerTiming& l : r.subgraph_layers) {
    EXPECT_EQ(l.index, 1);
    EXPECT_EQ(l.calls_per_run, 1.0);
    EXPECT_EQ(l.median_per_call, l.time.median);  // one call a run
  }
  expect_consistent_rows(r);
}

// An If inside a Loop body, three trips: the then branch on the first, the
// else branch (two nodes) on the other two.
TEST_F(SubgraphTiming, NestedIfInsideLoopNestsItsIntervals) {
  const ProfileResult r = profile(test::if_in_loop_model());
  struct Expected {
    const char* name;
    int depth;
    double calls;
  };
  const std::vector<Expected> expected = {
      {"Loop_1/body/Less_1", 1, 3},
      {"Loop_1/body/If_2", 1, 3},
      {"Loop_1/body/If_2/else_branch/Neg_1", 2, 2},
      {"Loop_1/body/If_2/else_branch/Abs_2", 2, 2},
      {"Loop_1/body/If_2/then_branch/Identity_1", 2, 1},
      {"Loop_1/body/Add_3", 1, 3},
      {"Loop_1/body/Identity_4", 1, 3},
  };
  ASSERT_EQ(r.subgraph_layers.size(), expected.size()) << testing::PrintToString(names(r.subgraph_layers));
  for (size_t k = 0; k < expected.size(); ++k) {
    const LayerTiming& l = r.subgraph_layers[k];
    SCOPED_TRACE(expected[k].name);
    EXPECT_EQ(l.name, expected[k].name);
    EXPECT_EQ(l.index, 0);
    EXPECT_EQ(l.depth, expected[k].depth);
    EXPECT_EQ(l.calls_per_run, expected[k].calls);
  }
  expect_consistent_rows(r);
  // Every node runs in every iteration, so sample i of each row is iteration
  // i's; the If's branch nodes ran inside the If's calls, one after another.
  const LayerTiming& iff = row(r, "Loop_1/body/If_2");
  const std::vector<const LayerTiming*> inside = {&row(r, "Loop_1/body/If_2/else_branch/Neg_1"),
                                                  &row(r, "Loop_1/body/If_2/else_branch/Abs_2"),
                                                  &row(r, "Loop_1/body/If_2/then_branch/Identity_1")};
  for (size_t i = 0; i < iff.time.samples.size(); ++i) {
    double branches = 0;
    for (const LayerTiming* l : inside) branches += l->time.samples.at(i);
    EXPECT_LE(branches, iff.time.samples[i] * (1 + 1e-9)) << "iteration " << i;
  }
}

TEST_F(SubgraphTiming, ModelWithoutControlFlowRunsOnePerLayerPass) {
  const std::string model = std::string(MODELSTAT_SOURCE_DIR) + "/sample_models/tiny_cnn.onnx";
  const ProfileResult r = profile_model(model, {}, quick(true));
  EXPECT_FALSE(r.layers.empty());
  EXPECT_GT(r.layer_sum.count, 0);
  EXPECT_TRUE(r.subgraph_layers.empty());
  EXPECT_EQ(r.subgraph_layer_sum.count, 0) << "the subgraph pass ran";
}

TEST_F(SubgraphTiming, NoLayersMeansNoSubgraphPass) {
  const ProfileResult r = profile(test::loop_five_model(), /*per_layer=*/false);
  EXPECT_TRUE(r.layers.empty());
  EXPECT_TRUE(r.subgraph_layers.empty());
  EXPECT_EQ(r.subgraph_layer_sum.count, 0);
}

}  // namespace
}  // namespace modelstat

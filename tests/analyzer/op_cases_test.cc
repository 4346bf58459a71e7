// The cost side of the op case table (tests/op_cases.hpp): each case's node
// analysed as a one-node model, its MACs, FLOPs and bytes against the figures
// derived by hand in the table. The executor side is
// tests/profiler/op_cases_exec_test.cc.
#include "op_cases.hpp"

#include <gtest/gtest.h>

#include <set>

#include "analyzer/cost/cost_rule.hpp"
#include "modelstat/analysis.hpp"
#include "test_support.hpp"

namespace modelstat {
namespace {

using test::OpCase;

// The case's node as a one-node model: float inputs and weights of its dims,
// int64 constants with their values, the output of the dims it states.
Model case_model(const OpCase& c) {
  test::NodeBuilder b(c.op);
  for (const test::OpCaseInput& in : c.inputs) {
    if (!in.int64_values.empty())
      b.weight(in.dims, DType::Int64, in.int64_values);
    else if (in.weight)
      b.weight(in.dims);
    else
      b.input(in.dims);
  }
  b.output(c.output);
  for (const auto& [key, value] : c.attrs) b.attr(key, value);
  Model m;
  m.opsets = {{"", c.opset}};
  m.graph = b.build();
  return m;
}

class OpCaseCost : public ::testing::TestWithParam<OpCase> {};

TEST_P(OpCaseCost, AnalysisMatchesTheHandDerivedFigures) {
  const OpCase& c = GetParam();
  const AnalysisResult r = analyze_model(case_model(c));
  ASSERT_EQ(r.nodes.size(), 1u);
  const NodeCost& cost = r.nodes[0].cost;
  EXPECT_EQ(cost.status, CostStatus::Exact) << cost.note;
  EXPECT_EQ(cost.macs, c.macs);
  EXPECT_EQ(cost.flops, c.flops);
  EXPECT_EQ(cost.bytes_read, c.bytes_read);
  EXPECT_EQ(cost.bytes_written, c.bytes_written);
}

// The table itself: unique names, a rule for every case, a reference that
// yields one value per output element.
TEST(OpCaseTable, EveryCaseIsWellFormed) {
  std::set<std::string> names;
  for (const OpCase& c : test::op_cases()) {
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate case " << c.name;
    EXPECT_NE(cost::find_rule("", c.op, c.opset), nullptr) << c.name;
    EXPECT_EQ(int64_t(c.reference(test::case_inputs(c)).size()), test::element_count(c.output)) << c.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, OpCaseCost, ::testing::ValuesIn(test::op_cases()),
                         [](const ::testing::TestParamInfo<OpCase>& info) { return info.param.name; });

}  // namespace
}  // namespace modelstat

// The executor side of the op case table (tests/op_cases.hpp): each case's
// node run through its registered ATen executor on the table's input values;
// the output's shape must be the one the case states (the shape the cost test
// gives the analysis) and its values the reference's, computed by formula.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "op_cases.hpp"
#include "profiler/exec_support.hpp"

namespace modelstat::profiler {
namespace {

using modelstat::test::OpCase;

class OpCaseExec : public ::testing::TestWithParam<OpCase> {};

TEST_P(OpCaseExec, OutputHasTheStatedShapeAndTheReferenceValues) {
  const OpCase& c = GetParam();
  const std::vector<modelstat::test::Values> values = modelstat::test::case_inputs(c);
  std::vector<at::Tensor> inputs;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    if (!c.inputs[k].int64_values.empty()) {
      inputs.push_back(at::tensor(c.inputs[k].int64_values, at::kLong).reshape(c.inputs[k].dims));
    } else {
      const std::vector<float> v(values[k].begin(), values[k].end());
      inputs.push_back(at::tensor(v, at::kFloat).reshape(c.inputs[k].dims));
    }
  }
  const std::vector<at::Tensor> out = test::run_node("", c.op, c.opset, inputs, c.attrs, 1);
  ASSERT_GE(out.size(), 1u);  // LayerNormalization also computes its optional Mean and InvStdDev
  ASSERT_TRUE(out[0].defined());
  EXPECT_EQ(out[0].scalar_type(), at::kFloat);
  ASSERT_EQ(out[0].sizes(), at::IntArrayRef(c.output));
  const modelstat::test::Values want = c.reference(values);
  const at::Tensor got = out[0].contiguous().to(at::kDouble);
  const double* g = got.data_ptr<double>();
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(g[i], want[i], 1e-5 + 1e-5 * std::abs(want[i])) << "element " << i;
}

INSTANTIATE_TEST_SUITE_P(Ops, OpCaseExec, ::testing::ValuesIn(modelstat::test::op_cases()),
                         [](const ::testing::TestParamInfo<OpCase>& info) { return info.param.name; });

}  // namespace
}  // namespace modelstat::profiler

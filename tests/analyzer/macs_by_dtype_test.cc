// Integer MACs count as MACs and the analysis says how many: a ConvInteger on
// uint8 data beside a float MatMul, counted by hand from the shapes.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <string>
#include <vector>

#include "modelstat/analysis.hpp"
#include "profiler/onnx_builder.hpp"

namespace {

using modelstat::test::add_node;
using modelstat::test::value_info;

// A float initializer is 4 bytes an element, an 8-bit one 1.
void initializer(onnx::GraphProto* g, const std::string& name, int type, const std::vector<int64_t>& dims) {
  modelstat::test::zeros_init(g, name, type, dims, type == onnx::TensorProto::FLOAT ? 4 : 1);
}

TEST(MacsByDtype, IntegerMacsCountAsMacsAndAreListedByOperandDtype) {
  onnx::ModelProto m = modelstat::test::new_model(13);
  onnx::GraphProto* g = m.mutable_graph();
  value_info(g->add_input(), "x", onnx::TensorProto::UINT8, {1, 4, 8, 8});
  value_info(g->add_input(), "f", onnx::TensorProto::FLOAT, {2, 5});
  initializer(g, "w", onnx::TensorProto::UINT8, {6, 4, 3, 3});
  initializer(g, "b", onnx::TensorProto::FLOAT, {5, 3});
  add_node(g, "ConvInteger", {"x", "w"}, {"y"});
  add_node(g, "MatMul", {"f", "b"}, {"z"});
  g->add_output()->set_name("y");
  g->add_output()->set_name("z");

  const std::string bytes = m.SerializeAsString();
  const modelstat::AnalysisResult r = modelstat::analyze_buffer(bytes.data(), bytes.size(), {});
  // ConvInteger: output 1x6x6x6 (3x3, no pads), each element 4 x 3 x 3 MACs.
  const int64_t conv_macs = 1 * 6 * 6 * 6 * (4 * 3 * 3);
  // MatMul 2x5 by 5x3: 2 x 3 outputs of 5 MACs.
  const int64_t matmul_macs = 2 * 3 * 5;
  EXPECT_EQ(r.totals.macs, conv_macs + matmul_macs);
  ASSERT_EQ(r.macs_by_dtype.size(), 2u);
  EXPECT_EQ(r.macs_by_dtype[0].dtype, "uint8");
  EXPECT_EQ(r.macs_by_dtype[0].nodes, 1);
  EXPECT_EQ(r.macs_by_dtype[0].macs, conv_macs);
  EXPECT_EQ(r.macs_by_dtype[1].dtype, "float32");
  EXPECT_EQ(r.macs_by_dtype[1].macs, matmul_macs);
}

// A QDQ model: the float MatMul multiplies DequantizeLinear(int8 data), which
// its runtime runs on the int8 data: listed as "int8 (QDQ)"; a MatMul of
// plain float data beside it stays float32.
TEST(MacsByDtype, AQdqMatMulIsListedByItsQuantizedDtype) {
  onnx::ModelProto m = modelstat::test::new_model(13);
  onnx::GraphProto* g = m.mutable_graph();
  value_info(g->add_input(), "x", onnx::TensorProto::INT8, {3, 4});
  value_info(g->add_input(), "f", onnx::TensorProto::FLOAT, {3, 4});
  initializer(g, "w", onnx::TensorProto::FLOAT, {4, 2});
  initializer(g, "s", onnx::TensorProto::FLOAT, {});
  add_node(g, "DequantizeLinear", {"x", "s"}, {"xf"});
  add_node(g, "MatMul", {"xf", "w"}, {"y"});
  add_node(g, "MatMul", {"f", "w"}, {"z"});
  g->add_output()->set_name("y");
  g->add_output()->set_name("z");
  const std::string bytes = m.SerializeAsString();
  const modelstat::AnalysisResult r = modelstat::analyze_buffer(bytes.data(), bytes.size(), {});
  ASSERT_EQ(r.macs_by_dtype.size(), 2u);
  for (const auto& entry : r.macs_by_dtype) {
    EXPECT_EQ(entry.nodes, 1);
    EXPECT_EQ(entry.macs, 3 * 2 * 4);  // 3x4 by 4x2
  }
  std::vector<std::string> dtypes{r.macs_by_dtype[0].dtype, r.macs_by_dtype[1].dtype};
  std::sort(dtypes.begin(), dtypes.end());
  EXPECT_EQ(dtypes, (std::vector<std::string>{"float32", "int8 (QDQ)"}));
}

}  // namespace

// Output shapes of ONNX Runtime's contrib ops (and its ONNX-domain
// SimplifiedLayerNormalization), which ONNX 1.12 has no schema for: each op
// record's shape rule, run by the loader inside ONNX's shape inference on a
// one-node model. Expected shapes are ONNX Runtime 1.30's for the same models
// (bench/contrib_misc_cases.py runs them). Also: MatMulNBits' packed 4-bit
// weights count as values, not bytes, in params and the size by dtype.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <string>
#include <utility>
#include <vector>

#include "modelstat/analysis.hpp"
#include "modelstat/error.hpp"
#include "profiler/onnx_builder.hpp"

namespace modelstat {
namespace {

// A one-node model importing ai.onnx 17 and com.microsoft 1.
class OneNodeModel {
 public:
  OneNodeModel(const std::string& op, const std::string& domain) {
    model_.set_ir_version(8);
    model_.add_opset_import()->set_version(17);
    auto* ms = model_.add_opset_import();
    ms->set_domain("com.microsoft");
    ms->set_version(1);
    graph()->set_name("g");
    node_ = graph()->add_node();
    node_->set_op_type(op);
    node_->set_domain(domain);
    node_->set_name("n0");
  }

  // A graph input named `name`, or "" for an omitted optional input.
  OneNodeModel& input(const std::string& name, std::vector<int64_t> dims,
                      int dtype = onnx::TensorProto::FLOAT) {
    node_->add_input(name);
    if (name.empty()) return *this;
    auto* tt = graph()->add_input()->mutable_type()->mutable_tensor_type();
    graph()->mutable_input(graph()->input_size() - 1)->set_name(name);
    tt->set_elem_type(dtype);
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
    return *this;
  }
  // An initializer of `bytes_per_element`-byte elements (zeros).
  OneNodeModel& weight(const std::string& name, std::vector<int64_t> dims,
                       int dtype = onnx::TensorProto::FLOAT, int64_t bytes_per_element = 4) {
    node_->add_input(name);
    test::zeros_init(graph(), name, dtype, dims, bytes_per_element);
    return *this;
  }
  OneNodeModel& output(const std::string& name) {
    node_->add_output(name);
    graph()->add_output()->set_name(name);
    return *this;
  }
  OneNodeModel& attr(const std::string& name, int64_t value) {
    auto* a = node_->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
    return *this;
  }
  OneNodeModel& attr(const std::string& name, const std::string& value) {
    auto* a = node_->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(value);
    return *this;
  }
  OneNodeModel& attr(const std::string& name, std::vector<int64_t> values) {
    auto* a = node_->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values) a->add_ints(v);
    return *this;
  }

  AnalysisResult analyze() const {
    const std::string bytes = model_.SerializeAsString();
    return analyze_buffer(bytes.data(), bytes.size(), LoadOptions{});
  }

 private:
  onnx::GraphProto* graph() { return model_.mutable_graph(); }
  onnx::ModelProto model_;
  onnx::NodeProto* node_ = nullptr;
};

// The node's output shapes ("2x3x8"), checked exact (the rule had every shape).
std::vector<std::string> output_shapes(const OneNodeModel& m) {
  const AnalysisResult r = m.analyze();
  EXPECT_EQ(r.totals.nodes_exact, 1) << "the node's cost is not exact";
  return r.nodes.at(0).output_shapes;
}

using Shapes = std::vector<std::string>;
constexpr int kInt32 = onnx::TensorProto::INT32;

TEST(ContribShapes, SkipLayerNormalizationStatisticsArePerRow) {
  for (const char* op : {"SkipLayerNormalization", "SkipSimplifiedLayerNormalization"}) {
    SCOPED_TRACE(op);
    OneNodeModel m(op, "com.microsoft");
    m.input("x", {2, 3, 8}).input("skip", {2, 3, 8}).weight("gamma", {8});
    if (std::string(op) == "SkipLayerNormalization") m.weight("beta", {8});
    m.weight("bias", {8}).output("y").output("mean").output("inv_std_var").output("sum");
    EXPECT_EQ(output_shapes(m), (Shapes{"2x3x8", "2x3x1", "2x3x1", "2x3x8"}));
  }
}

TEST(ContribShapes, SimplifiedLayerNormalizationInTheOnnxDomain) {
  OneNodeModel m("SimplifiedLayerNormalization", "");
  m.input("x", {2, 3, 8}).weight("scale", {8}).output("y").output("inv_std_var").attr("axis", int64_t(-1));
  EXPECT_EQ(output_shapes(m), (Shapes{"2x3x8", "2x3x1"}));
}

TEST(ContribShapes, EmbedLayerNormalization) {
  OneNodeModel m("EmbedLayerNormalization", "com.microsoft");
  m.input("ids", {2, 5}, kInt32)
      .input("", {})
      .weight("word", {30, 8})
      .weight("pos", {16, 8})
      .input("", {})
      .weight("gamma", {8})
      .weight("beta", {8})
      .input("mask", {2, 5}, kInt32)
      .output("y")
      .output("mask_index")
      .output("embedding_sum");
  EXPECT_EQ(output_shapes(m), (Shapes{"2x5x8", "2", "2x5x8"}));
}

TEST(ContribShapes, FusedMatMulTransposesBatchAndMatrixDims) {
  // transBatchA moves A's dim 0 before the last two: [2,3,4,5] -> [3,4,2,5]; times [3,4,5,6] -> [3,4,2,6].
  OneNodeModel batch("FusedMatMul", "com.microsoft");
  batch.input("a", {2, 3, 4, 5}).input("b", {3, 4, 5, 6}).output("y").attr("transBatchA", int64_t(1));
  EXPECT_EQ(output_shapes(batch), (Shapes{"3x4x2x6"}));
  // transBatchB and transB: B [6,3,5] -> [3,6,5] -> [3,5,6]; A [3,4,5] -> [3,4,6].
  OneNodeModel both("FusedMatMul", "com.microsoft");
  both.input("a", {3, 4, 5})
      .input("b", {6, 3, 5})
      .output("y")
      .attr("transBatchB", int64_t(1))
      .attr("transB", int64_t(1));
  EXPECT_EQ(output_shapes(both), (Shapes{"3x4x6"}));
  // A 2-D B broadcasts over A's batch dims.
  OneNodeModel plain("FusedMatMul", "com.microsoft");
  plain.input("a", {2, 7, 4}).weight("b", {4, 9}).output("y");
  EXPECT_EQ(output_shapes(plain), (Shapes{"2x7x9"}));
}

TEST(ContribShapes, FusedGemmAndFusedConvFollowGemmAndConv) {
  OneNodeModel gemm("FusedGemm", "com.microsoft");
  gemm.input("a", {4, 8})
      .weight("b", {16, 8})
      .weight("c", {16})
      .output("y")
      .attr("transB", int64_t(1))
      .attr("activation", std::string("Relu"));
  EXPECT_EQ(output_shapes(gemm), (Shapes{"4x16"}));
  OneNodeModel conv("FusedConv", "com.microsoft");
  conv.input("x", {1, 3, 8, 8})
      .weight("w", {4, 3, 3, 3})
      .weight("b", {4})
      .input("z", {1, 4, 8, 8})
      .output("y")
      .attr("pads", std::vector<int64_t>{1, 1, 1, 1})
      .attr("activation", std::string("Relu"));
  EXPECT_EQ(output_shapes(conv), (Shapes{"1x4x8x8"}));
}

TEST(ContribShapes, ElementwiseContribOpsKeepInputZerosShape) {
  OneNodeModel fast("FastGelu", "com.microsoft");
  fast.input("x", {2, 5, 8}).weight("bias", {8}).output("y");
  EXPECT_EQ(output_shapes(fast), (Shapes{"2x5x8"}));
  OneNodeModel softmax("BiasSoftmax", "com.microsoft");
  softmax.input("x", {2, 3, 4, 4})
      .input("bias", {2, 1, 4, 4})
      .output("y")
      .attr("axis", int64_t(3))
      .attr("is_inner_broadcast", int64_t(1));
  EXPECT_EQ(output_shapes(softmax), (Shapes{"2x3x4x4"}));
}

// MatMulNBits A [2,3,64] x 4-bit W (K 64, N 32, block 32): Y [2,3,32]. Its B
// [32,2,16] uint8 holds 1024 bytes = 2048 4-bit values: params count the
// values (2048 + 64 scales = 2112) and the size by dtype lists B as uint4
// packed in uint8 (2048 elements, 1024 bytes), beside the float32 scales.
TEST(ContribShapes, MatMulNBitsOutputAndFourBitParams) {
  OneNodeModel m("MatMulNBits", "com.microsoft");
  m.input("a", {2, 3, 64})
      .weight("b", {32, 2, 16}, onnx::TensorProto::UINT8, 1)
      .weight("scales", {32, 2})
      .output("y")
      .attr("K", int64_t(64))
      .attr("N", int64_t(32))
      .attr("bits", int64_t(4))
      .attr("block_size", int64_t(32));
  const AnalysisResult r = m.analyze();
  EXPECT_EQ(r.totals.nodes_exact, 1);
  EXPECT_EQ(r.nodes.at(0).output_shapes, (Shapes{"2x3x32"}));
  EXPECT_EQ(r.totals.params, 2112);
  EXPECT_EQ(r.nodes.at(0).cost.params, 2112);
  bool packed_listed = false;
  for (const DTypeSize& s : r.size_by_dtype) {
    if (s.dtype != "uint4 (packed in uint8)") continue;
    packed_listed = true;
    EXPECT_EQ(s.elements, 2048);
    EXPECT_EQ(s.bytes, 1024);
    EXPECT_EQ(s.tensors, 1);
  }
  EXPECT_TRUE(packed_listed);
}

// A whose last dim is not K: the shape rule reports the node (a notice; the
// loader collects per-node inference errors) and the cost is unknown.
TEST(ContribShapes, MatMulNBitsReportsAnAWithoutKColumns) {
  OneNodeModel m("MatMulNBits", "com.microsoft");
  m.input("a", {2, 48}).weight("b", {32, 2, 16}, onnx::TensorProto::UINT8, 1).weight("scales", {32, 2})
      .output("y").attr("K", int64_t(64)).attr("N", int64_t(32)).attr("block_size", int64_t(32));
  const AnalysisResult r = m.analyze();
  EXPECT_EQ(r.totals.nodes_exact, 0);
  bool named = false;
  for (const std::string& notice : r.notices) named = named || notice.find("is not K = 64") != std::string::npos;
  EXPECT_TRUE(named) << ::testing::PrintToString(r.notices);
}

}  // namespace
}  // namespace modelstat

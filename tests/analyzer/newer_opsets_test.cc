// Default-domain opsets 18-23, newer than the ONNX 1.12 schemas the analyzer
// links: ops added since count through their records (Gelu 20), reductions
// whose axes became an input in 18 are read that way, and an op feature these
// schemas would misread fails the node's inference instead of giving it the
// shapes of the op's older meaning. Expected shapes and counts by hand.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "modelstat/analysis.hpp"
#include "modelstat/error.hpp"

namespace {

void set_type(onnx::ValueInfoProto* v, const std::string& name, const std::vector<int64_t>& dims,
              int elem = onnx::TensorProto::FLOAT) {
  v->set_name(name);
  v->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
  auto* shape = v->mutable_type()->mutable_tensor_type()->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

onnx::ModelProto one_node(int opset, const std::string& op, const std::vector<int64_t>& x_dims,
                          const std::vector<std::pair<std::string, std::vector<int64_t>>>& int_inputs = {},
                          int outputs = 1) {
  onnx::ModelProto m;
  m.set_ir_version(9);
  m.add_opset_import()->set_version(opset);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("newer");
  set_type(g->add_input(), "X", x_dims);
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name("node");
  n->add_input("X");
  for (const auto& [name, values] : int_inputs) {
    if (name.empty()) {
      n->add_input("");
      continue;
    }
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(int64_t(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
    n->add_input(name);
  }
  for (int k = 0; k < outputs; ++k) {
    n->add_output("Y" + std::to_string(k));
    g->add_output()->set_name("Y" + std::to_string(k));
  }
  return m;
}

modelstat::AnalysisResult analyze(const onnx::ModelProto& m) {
  const std::string bytes = m.SerializeAsString();
  return modelstat::analyze_buffer(bytes.data(), bytes.size(), modelstat::LoadOptions{}, "");
}

bool has_notice(const modelstat::AnalysisResult& r, const std::string& needle) {
  for (const auto& n : r.notices)
    if (n.find(needle) != std::string::npos) return true;
  return false;
}

TEST(NewerOpsets, Gelu20CountsThroughItsRecord) {
  const auto r = analyze(one_node(20, "Gelu", {2, 3}));
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_EQ(r.nodes[0].cost.status, modelstat::CostStatus::Exact);
  EXPECT_EQ(r.nodes[0].output_shapes.at(0), "2x3");
  EXPECT_EQ(r.totals.flops, 5 * 6);  // erf form: 5 per element
  EXPECT_TRUE(has_notice(r, "opset 20 is newer than this build's ONNX schemas"));
}

TEST(NewerOpsets, ReduceMean18TakesItsAxesFromInputOne) {
  auto m = one_node(18, "ReduceMean", {2, 3, 4}, {{"axes", {1}}});
  auto* keep = m.mutable_graph()->mutable_node(0)->add_attribute();
  keep->set_name("keepdims");
  keep->set_type(onnx::AttributeProto::INT);
  keep->set_i(0);
  const auto r = analyze(m);
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_EQ(r.nodes[0].output_shapes.at(0), "2x4");  // ReduceMean-13 would have reduced every axis
  EXPECT_EQ(r.nodes[0].cost.status, modelstat::CostStatus::Exact);
}

TEST(NewerOpsets, Split18NumOutputs) {
  auto m = one_node(18, "Split", {4, 6}, {}, 2);
  auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("axis");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(1);
  auto* n = m.mutable_graph()->mutable_node(0)->add_attribute();
  n->set_name("num_outputs");
  n->set_type(onnx::AttributeProto::INT);
  n->set_i(2);
  const auto r = analyze(m);
  ASSERT_EQ(r.nodes.size(), 1u);
  ASSERT_EQ(r.nodes[0].output_shapes.size(), 2u);
  EXPECT_EQ(r.nodes[0].output_shapes[0], "4x3");
  EXPECT_EQ(r.nodes[0].output_shapes[1], "4x3");
}

TEST(NewerOpsets, PadAxesIsRefusedNotMisread) {
  // Pad-18 pads only the axes its fourth input lists: [1] with pads [1, 1]
  // gives 2x5; Pad-13's schema cannot read that, so the node stays unsized.
  auto m = one_node(18, "Pad", {2, 3}, {{"pads", {1, 1}}, {"", {}}, {"axes", {1}}});
  const auto r = analyze(m);
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_NE(r.nodes[0].output_shapes.at(0), "4x5");
  EXPECT_TRUE(has_notice(r, "Pad's axes input (opset 18)"));
}

TEST(NewerOpsets, BeyondTwentyThreeIsRefused) {
  EXPECT_THROW(analyze(one_node(24, "Relu", {2})), modelstat::Error);
}

}  // namespace

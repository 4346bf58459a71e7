// Shape chains inside subgraphs: an If branch that computes its Pad amounts
// through ConstantOfShape + Concat (as Silero VAD's STFT padding does), which
// ONNX 1.12's data propagation does not follow. The analyzer's integer
// folding must reach into the branch as it does at top level, or every size
// after the Pad, and the branch's cost, stays unknown.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <string>

#include "modelstat/analysis.hpp"

namespace {

onnx::NodeProto* node(onnx::GraphProto* g, const char* op, std::initializer_list<const char*> in, const char* out) {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(out);
  for (const char* i : in) n->add_input(i);
  n->add_output(out);
  return n;
}

void int64_tensor_attr(onnx::NodeProto* n, const char* name, std::initializer_list<int64_t> dims,
                       std::initializer_list<int64_t> values) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) a->mutable_t()->add_dims(d);
  for (int64_t v : values) a->mutable_t()->add_int64_data(v);
}

// x[1,8] -> If(cond): then = Pad(x, [0,4,0,4]) with the pads built by
// Concat(Constant [0,4,0], ConstantOfShape([1]) of 4) -> [1,16];
// else = Identity(x) padded the same way by a plain Constant.
onnx::ModelProto if_with_padding_chain() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("outer");
  for (auto [name, type] : {std::pair{"x", onnx::TensorProto::FLOAT}, std::pair{"cond", onnx::TensorProto::BOOL}}) {
    auto* v = g->add_input();
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    auto* shape = tt->mutable_shape();
    if (std::string(name) == "x") {
      shape->add_dim()->set_dim_value(1);
      shape->add_dim()->set_dim_value(8);
    }
  }
  onnx::NodeProto* branch = node(g, "If", {"cond"}, "y");
  g->add_output()->set_name("y");

  onnx::AttributeProto* then_attr = branch->add_attribute();
  then_attr->set_name("then_branch");
  then_attr->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* then_g = then_attr->mutable_g();
  then_g->set_name("then");
  int64_tensor_attr(node(then_g, "Constant", {}, "head"), "value", {3}, {0, 4, 0});
  int64_tensor_attr(node(then_g, "Constant", {}, "count"), "value", {1}, {1});
  int64_tensor_attr(node(then_g, "ConstantOfShape", {"count"}, "tail"), "value", {1}, {4});
  node(then_g, "Concat", {"head", "tail"}, "pads")->add_attribute()->set_name("axis");
  then_g->mutable_node(3)->mutable_attribute(0)->set_type(onnx::AttributeProto::INT);
  then_g->mutable_node(3)->mutable_attribute(0)->set_i(0);
  node(then_g, "Pad", {"x", "pads"}, "padded");
  then_g->add_output()->set_name("padded");

  onnx::AttributeProto* else_attr = branch->add_attribute();
  else_attr->set_name("else_branch");
  else_attr->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* else_g = else_attr->mutable_g();
  else_g->set_name("else");
  int64_tensor_attr(node(else_g, "Constant", {}, "pads_else"), "value", {4}, {0, 4, 0, 4});
  node(else_g, "Pad", {"x", "pads_else"}, "padded_else");
  else_g->add_output()->set_name("padded_else");
  return m;
}

// The shape of `tensor` in whichever branch of the If holds it.
std::string shape_in_branches(const modelstat::Model& model, const std::string& tensor) {
  for (const auto& n : model.graph.nodes)
    for (const auto& sub : n.subgraphs())
      if (const int t = sub->find_tensor(tensor); t >= 0) return sub->tensors[size_t(t)].shape.to_string();
  return "absent";
}

TEST(SubgraphShapes, IntegerFoldingReachesIntoIfBranches) {
  const std::string bytes = if_with_padding_chain().SerializeAsString();
  const modelstat::AnalysisResult r = modelstat::analyze_buffer(bytes.data(), bytes.size(), {}, "");
  ASSERT_NE(r.model, nullptr);
  // Pad of [1,8] by 4 on each side of dim 1: [1, 16], in both branches.
  EXPECT_EQ(shape_in_branches(*r.model, "padded_else"), "1x16");  // plain Constant: ONNX alone
  EXPECT_EQ(shape_in_branches(*r.model, "padded"), "1x16");       // the chain: needs the folding
}

}  // namespace

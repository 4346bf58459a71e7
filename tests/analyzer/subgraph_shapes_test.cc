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

namespace {

onnx::GraphProto* branch_graph(onnx::NodeProto* n, const char* attr, const char* name) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(attr);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(name);
  return a->mutable_g();
}

// x[1,8], w[1,4] -> If "top"(cond): then = a nested If "inner" whose
// condition, Shape(x)[1] == 8, reads the shape of x from the enclosing graph
// (as Silero VAD's branches do); its then-branch reshapes x to [8,1], its
// else-branch passes x on ([1,8]): ONNX merges the two into unknown dims.
// After it, MatMul(inner, w): [8,1] x [1,4], 8*4*1 = 32 MACs once both the
// condition (from an outer shape) and the inner If's output (its selected
// branch's) are known. else = Identity(x).
onnx::ModelProto nested_if_reading_outer_shape() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("outer");
  auto input = [g](const char* name, int type, std::initializer_list<int64_t> dims) {
    auto* tt = g->add_input();
    tt->set_name(name);
    tt->mutable_type()->mutable_tensor_type()->set_elem_type(type);
    auto* shape = tt->mutable_type()->mutable_tensor_type()->mutable_shape();
    for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  };
  input("x", onnx::TensorProto::FLOAT, {1, 8});
  input("cond", onnx::TensorProto::BOOL, {});
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(1);
  w->add_dims(4);
  for (int i = 0; i < 4; ++i) w->add_float_data(1.0f);
  onnx::NodeProto* top = node(g, "If", {"cond"}, "y");
  top->set_name("top");
  g->add_output()->set_name("y");

  onnx::GraphProto* then_g = branch_graph(top, "then_branch", "top_then");
  node(then_g, "Shape", {"x"}, "x_shape");
  int64_tensor_attr(node(then_g, "Constant", {}, "one"), "value", {}, {1});
  node(then_g, "Gather", {"x_shape", "one"}, "width");
  int64_tensor_attr(node(then_g, "Constant", {}, "eight"), "value", {}, {8});
  node(then_g, "Equal", {"width", "eight"}, "is_eight");
  onnx::NodeProto* inner = node(then_g, "If", {"is_eight"}, "column");
  inner->set_name("inner");
  onnx::GraphProto* inner_then = branch_graph(inner, "then_branch", "inner_then");
  int64_tensor_attr(node(inner_then, "Constant", {}, "to_column"), "value", {2}, {8, 1});
  node(inner_then, "Reshape", {"x", "to_column"}, "reshaped");
  inner_then->add_output()->set_name("reshaped");
  onnx::GraphProto* inner_else = branch_graph(inner, "else_branch", "inner_else");
  node(inner_else, "Identity", {"x"}, "as_is");
  inner_else->add_output()->set_name("as_is");
  node(then_g, "MatMul", {"column", "w"}, "product");
  then_g->add_output()->set_name("product");

  onnx::GraphProto* else_g = branch_graph(top, "else_branch", "top_else");
  node(else_g, "Identity", {"x"}, "passed");
  else_g->add_output()->set_name("passed");
  return m;
}

}  // namespace

TEST(SubgraphShapes, NestedIfConditionFromAnOuterShapeSelectsItsBranchAndItsShapes) {
  const std::string bytes = nested_if_reading_outer_shape().SerializeAsString();
  modelstat::LoadOptions options;
  options.branches["top"] = true;
  const modelstat::AnalysisResult r = modelstat::analyze_buffer(bytes.data(), bytes.size(), options, "");
  EXPECT_EQ(r.totals.macs, 8 * 4 * 1);
  EXPECT_EQ(r.totals.nodes_exact, r.totals.nodes) << "every node counted";
  bool inner_decided = false;
  for (const auto& row : r.subgraph_nodes)
    if (row.name.find("inner") != std::string::npos && row.op_type == "If")
      inner_decided = row.cost.note.find("condition known before running") != std::string::npos;
  EXPECT_TRUE(inner_decided) << "Shape(x)[1] == 8 is known before running";
  for (const auto& n : r.notices) EXPECT_EQ(n.find("condition unknown"), std::string::npos) << n;
}

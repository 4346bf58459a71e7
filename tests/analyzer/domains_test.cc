// Imported domains: only a domain that a node uses and nothing can count is
// refused; one that is merely imported (ONNX Runtime's tools import
// com.ms.internal.nhwc into graphs that never use it) is a notice.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <string>

#include "modelstat/analysis.hpp"
#include "modelstat/error.hpp"

namespace {

// X -> Relu -> Y, importing `extra_domain`; with `use_it`, a second node of
// that domain (inside an If's then-branch when `in_subgraph`).
onnx::ModelProto model(const std::string& extra_domain, bool use_it, bool in_subgraph = false) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* extra = m.add_opset_import();
  extra->set_domain(extra_domain);
  extra->set_version(1);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("domains");
  auto* x = g->add_input();
  x->set_name("X");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(4);
  onnx::NodeProto* relu = g->add_node();
  relu->set_op_type("Relu");
  relu->set_name("relu");
  relu->add_input("X");
  relu->add_output("Y");
  g->add_output()->set_name("Y");
  if (use_it) {
    onnx::NodeProto custom;
    custom.set_op_type("Fancy");
    custom.set_name("fancy");
    custom.set_domain(extra_domain);
    custom.add_input("Y");
    custom.add_output("Z");
    if (!in_subgraph) {
      *g->add_node() = custom;
      g->add_output()->set_name("Z");
    } else {
      onnx::NodeProto* branch = g->add_node();
      branch->set_op_type("If");
      branch->set_name("if");
      branch->add_input("C");
      branch->add_output("Z");
      auto* c = g->add_input();
      c->set_name("C");
      c->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
      c->mutable_type()->mutable_tensor_type()->mutable_shape();
      for (const char* name : {"then_branch", "else_branch"}) {
        onnx::AttributeProto* a = branch->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::GRAPH);
        a->mutable_g()->set_name(name);
        *a->mutable_g()->add_node() = custom;
        a->mutable_g()->add_output()->set_name("Z");
      }
      g->add_output()->set_name("Z");
    }
  }
  return m;
}

modelstat::AnalysisResult analyze(const onnx::ModelProto& m, bool allow = false) {
  const std::string bytes = m.SerializeAsString();
  modelstat::LoadOptions options;
  options.allow_custom_domains = allow;
  return modelstat::analyze_buffer(bytes.data(), bytes.size(), options, "");
}

modelstat::AnalysisResult analyze(const onnx::ModelProto& m, const modelstat::LoadOptions& options) {
  const std::string bytes = m.SerializeAsString();
  return modelstat::analyze_buffer(bytes.data(), bytes.size(), options, "");
}

TEST(Domains, ImportedButUnusedIsANotice) {
  const auto r = analyze(model("com.ms.internal.nhwc", false));
  bool noticed = false;
  for (const auto& n : r.notices)
    noticed |= n.find("'com.ms.internal.nhwc' is imported but no node uses it") != std::string::npos;
  EXPECT_TRUE(noticed);
  EXPECT_EQ(r.nodes.size(), 1u);
}

TEST(Domains, UsedAndUnknownIsRefusedNamingTheNode) {
  for (bool in_subgraph : {false, true}) {
    SCOPED_TRACE(in_subgraph ? "in a subgraph" : "top level");
    try {
      analyze(model("com.example.custom", true, in_subgraph));
      FAIL() << "loaded";
    } catch (const modelstat::Error& e) {
      EXPECT_EQ(e.kind(), modelstat::ErrorKind::Input);
      EXPECT_EQ(e.node(), "fancy");
      EXPECT_NE(e.message().find("'com.example.custom'"), std::string::npos) << e.message();
      EXPECT_NE(e.message().find("--allow-custom-domains"), std::string::npos) << e.message();
    }
  }
  // With the flag: loaded, the node listed as unknown.
  const auto r = analyze(model("com.example.custom", true), true);
  ASSERT_EQ(r.nodes.size(), 2u);
  EXPECT_EQ(r.nodes[1].cost.status, modelstat::CostStatus::UnknownOp);
}

// ai.onnx.ml opset 5 (ONNX 1.15) is newer than ONNX 1.12's schemas: loaded
// with a notice; an ml op without a rule is an unknown row, not a refusal.
TEST(Domains, OnnxMlOpsetFiveLoads) {
  onnx::ModelProto m = model("ai.onnx.ml", false);
  m.mutable_opset_import(1)->set_version(5);
  onnx::NodeProto* b = m.mutable_graph()->add_node();
  b->set_op_type("Binarizer");
  b->set_name("binarizer");
  b->set_domain("ai.onnx.ml");
  b->add_input("Y");
  b->add_output("B");
  m.mutable_graph()->add_output()->set_name("B");
  const auto r = analyze(m);
  bool noticed = false;
  for (const auto& n : r.notices) noticed |= n.find("ai.onnx.ml opset 5") != std::string::npos;
  EXPECT_TRUE(noticed);
  ASSERT_EQ(r.nodes.size(), 2u);
  EXPECT_EQ(r.nodes[1].op_type, "Binarizer");
  m.mutable_opset_import(1)->set_version(6);
  EXPECT_THROW(analyze(m), modelstat::Error);
}

// A node of an unknown domain, admitted with --allow-custom-domains, stays
// unknown, but the shape the graph declares for its output (value_info, dims
// bound by --dim) reaches the MatMul after it: Z [n, 4] x W [4, 3] = n*4*3 MACs.
TEST(Domains, DeclaredShapesFlowPastUnknownNodes) {
  onnx::ModelProto m = model("my.custom", /*use_it=*/true);
  onnx::GraphProto* g = m.mutable_graph();
  auto* z = g->add_value_info();
  z->set_name("Z");
  z->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  z->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param("n");
  z->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(4);
  onnx::TensorProto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->add_dims(3);
  for (int i = 0; i < 12; ++i) w->add_float_data(1.0f);
  onnx::NodeProto* mm = g->add_node();
  mm->set_op_type("MatMul");
  mm->set_name("matmul");
  mm->add_input("Z");
  mm->add_input("W");
  mm->add_output("P");
  g->add_output()->set_name("P");
  modelstat::LoadOptions o;
  o.allow_custom_domains = true;
  o.dim_values["n"] = 5;
  const modelstat::AnalysisResult r = analyze(m, o);
  ASSERT_EQ(r.nodes.size(), 3u);
  EXPECT_EQ(r.nodes[1].cost.status, modelstat::CostStatus::UnknownOp);
  EXPECT_EQ(r.nodes[2].op_type, "MatMul");
  EXPECT_EQ(r.nodes[2].cost.status, modelstat::CostStatus::Exact);
  EXPECT_EQ(r.nodes[2].cost.macs, 5 * 4 * 3);
}

}  // namespace

// What one run executes, counted: an If counts the branch its condition
// selects (known before running, or --branch), else the costlier one with a
// notice; a Loop its body times the trip count (known, or --trip-count), else
// one trip with a notice; a Scan its body times the sequence length. MACs are
// hand-counted from the MatMul shapes below.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <string>
#include <tuple>

#include "modelstat/analysis.hpp"
#include "modelstat/error.hpp"

namespace {

void value(onnx::ValueInfoProto* v, const std::string& name, int type, std::initializer_list<int64_t> dims) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(type);
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

onnx::TensorProto* weight(onnx::GraphProto* g, const std::string& name, std::initializer_list<int64_t> dims) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    n *= d;
  }
  for (int64_t i = 0; i < n; ++i) t->add_float_data(0.5f);
  return t;
}

onnx::NodeProto* add(onnx::GraphProto* g, const std::string& name, const char* op, std::initializer_list<std::string> in,
                     std::initializer_list<std::string> out) {
  onnx::NodeProto* n = g->add_node();
  n->set_name(name);
  n->set_op_type(op);
  for (const auto& i : in) n->add_input(i);
  for (const auto& o : out) n->add_output(o);
  return n;
}

onnx::GraphProto* graph_attr(onnx::NodeProto* n, const char* name) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(name);
  return a->mutable_g();
}

void int_attr(onnx::NodeProto* n, const char* name, int64_t v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

onnx::ModelProto model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  m.mutable_graph()->set_name("control");
  return m;
}

// x[1,4] -> If(cond): then = x @ Wt[4,8] (32 MACs), else = x @ We[4,2] (8 MACs).
// cond is a Constant (`constant` = 0 or 1) or, with constant < 0, a graph input.
onnx::ModelProto if_model(int constant) {
  onnx::ModelProto m = model();
  onnx::GraphProto* g = m.mutable_graph();
  value(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 4});
  if (constant < 0) {
    value(g->add_input(), "cond", onnx::TensorProto::BOOL, {});
  } else {
    onnx::NodeProto* c = add(g, "c", "Constant", {}, {"cond"});
    onnx::AttributeProto* a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::BOOL);
    a->mutable_t()->add_int32_data(constant);
  }
  onnx::NodeProto* branch = add(g, "if0", "If", {"cond"}, {"y"});
  for (auto [attr, w, cols] : {std::tuple{"then_branch", "Wt", 8}, std::tuple{"else_branch", "We", 2}}) {
    onnx::GraphProto* b = graph_attr(branch, attr);
    weight(b, w, {4, cols});
    add(b, std::string("mm_") + w, "MatMul", {"x", w}, {std::string("out_") + w});
    value(b->add_output(), std::string("out_") + w, onnx::TensorProto::FLOAT, {1, cols});
  }
  g->add_output()->set_name("y");
  return m;
}

// Loop(M, cond=true, s[1,4]): body s' = s @ W[4,4] (16 MACs per trip).
// M is a Constant (`trips` >= 0) or a graph input (trips < 0).
onnx::ModelProto loop_model(int64_t trips) {
  onnx::ModelProto m = model();
  onnx::GraphProto* g = m.mutable_graph();
  value(g->add_input(), "s0", onnx::TensorProto::FLOAT, {1, 4});
  if (trips < 0) {
    value(g->add_input(), "M", onnx::TensorProto::INT64, {});
  } else {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name("M");
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_int64_data(trips);
  }
  onnx::TensorProto* c = g->add_initializer();
  c->set_name("keep_going");
  c->set_data_type(onnx::TensorProto::BOOL);
  c->add_int32_data(1);
  onnx::NodeProto* loop = add(g, "loop0", "Loop", {"M", "keep_going", "s0"}, {"s_final"});
  onnx::GraphProto* body = graph_attr(loop, "body");
  value(body->add_input(), "i", onnx::TensorProto::INT64, {});
  value(body->add_input(), "cond_in", onnx::TensorProto::BOOL, {});
  value(body->add_input(), "s", onnx::TensorProto::FLOAT, {1, 4});
  weight(body, "W", {4, 4});
  add(body, "cond_pass", "Identity", {"cond_in"}, {"cond_out"});
  add(body, "step", "MatMul", {"s", "W"}, {"s_next"});
  value(body->add_output(), "cond_out", onnx::TensorProto::BOOL, {});
  value(body->add_output(), "s_next", onnx::TensorProto::FLOAT, {1, 4});
  g->add_output()->set_name("s_final");
  return m;
}

// Scan over xs[6,4] with state h[4]: body h' = h + x_t @ W, x_t[4] @ W[4,4]
// -> [4] (16 MACs per step), 6 steps.
onnx::ModelProto scan_model() {
  onnx::ModelProto m = model();
  onnx::GraphProto* g = m.mutable_graph();
  value(g->add_input(), "h0", onnx::TensorProto::FLOAT, {4});
  value(g->add_input(), "xs", onnx::TensorProto::FLOAT, {6, 4});
  onnx::NodeProto* scan = add(g, "scan0", "Scan", {"h0", "xs"}, {"h_final"});
  int_attr(scan, "num_scan_inputs", 1);
  onnx::GraphProto* body = graph_attr(scan, "body");
  value(body->add_input(), "h", onnx::TensorProto::FLOAT, {4});
  value(body->add_input(), "x_t", onnx::TensorProto::FLOAT, {4});
  weight(body, "W", {4, 4});
  add(body, "proj", "MatMul", {"x_t", "W"}, {"p"});
  add(body, "acc", "Add", {"h", "p"}, {"h_next"});
  value(body->add_output(), "h_next", onnx::TensorProto::FLOAT, {4});
  g->add_output()->set_name("h_final");
  return m;
}

modelstat::AnalysisResult analyze(const onnx::ModelProto& m, const modelstat::LoadOptions& options = {}) {
  const std::string bytes = m.SerializeAsString();
  return modelstat::analyze_buffer(bytes.data(), bytes.size(), options, "");
}

bool has_notice(const modelstat::AnalysisResult& r, const std::string& part) {
  for (const auto& n : r.notices)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

TEST(ControlFlowCount, IfCountsTheBranchAConstantConditionSelects) {
  EXPECT_EQ(analyze(if_model(1)).totals.macs, 32);
  const auto r = analyze(if_model(0));
  EXPECT_EQ(r.totals.macs, 8);
  EXPECT_FALSE(has_notice(r, "--branch"));
  // The executed branch's node is a row of its own, named by its path, under
  // the If (index 1); coverage counts it: Constant, If, the MatMul.
  ASSERT_EQ(r.subgraph_nodes.size(), 1u);
  EXPECT_EQ(r.subgraph_nodes[0].name, "if0/else_branch/mm_We");
  EXPECT_EQ(r.subgraph_nodes[0].index, 1);
  EXPECT_EQ(r.subgraph_nodes[0].cost.macs, 8);
  EXPECT_EQ(r.totals.nodes, 3);
}

TEST(ControlFlowCount, IfWithUnknownConditionCountsTheCostlierBranchUnlessChosen) {
  const auto guessed = analyze(if_model(-1));
  EXPECT_EQ(guessed.totals.macs, 32);
  EXPECT_TRUE(has_notice(guessed, "if0=then")) << "names the node and the branch counted";
  EXPECT_TRUE(has_notice(guessed, "--branch NODE=then|else"));
  modelstat::LoadOptions options;
  parse_branch_spec("if0=else", options);
  const auto chosen = analyze(if_model(-1), options);
  EXPECT_EQ(chosen.totals.macs, 8);
  EXPECT_FALSE(has_notice(chosen, "--branch NODE"));
  EXPECT_THROW(parse_branch_spec("if0=maybe", options), modelstat::Error);
}

TEST(ControlFlowCount, LoopCountsItsBodyTimesTheTripCount) {
  const auto five = analyze(loop_model(5));
  EXPECT_EQ(five.totals.macs, 5 * 16);
  // Body rows carry the cost of all trips: the MatMul row holds the 80 MACs.
  ASSERT_EQ(five.subgraph_nodes.size(), 2u);
  EXPECT_EQ(five.subgraph_nodes[1].name, "loop0/body/step");
  EXPECT_EQ(five.subgraph_nodes[1].cost.macs, 5 * 16);
  EXPECT_EQ(analyze(loop_model(0)).totals.macs, 0);
  const auto unknown = analyze(loop_model(-1));
  EXPECT_EQ(unknown.totals.macs, 16);
  EXPECT_TRUE(has_notice(unknown, "--trip-count NODE=N"));
  modelstat::LoadOptions options;
  parse_trip_count_spec("loop0=3", options);
  EXPECT_EQ(analyze(loop_model(-1), options).totals.macs, 3 * 16);
  modelstat::LoadOptions stray;
  parse_trip_count_spec("nosuchloop=3", stray);
  EXPECT_TRUE(has_notice(analyze(loop_model(5), stray), "--trip-count nosuchloop matches no Loop node"));
}

TEST(ControlFlowCount, ScanCountsItsBodyTimesTheSequenceLength) {
  // 6 steps of a [4] x [4,4] MatMul.
  EXPECT_EQ(analyze(scan_model()).totals.macs, 6 * 16);
}

}  // namespace

// If, Loop and Scan through the Executor: hand-built ONNX models (subgraphs
// reading outer-scope values and initializers of their own), loaded through
// the loader, run, and compared with values worked out by hand below.
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "analyzer/loader/loader.hpp"
#include "modelstat/analysis.hpp"
#include "modelstat/error.hpp"
#include "profiler/executor.hpp"
#include "profiler/onnx_builder.hpp"

namespace modelstat::profiler {
namespace {

using onnx::TensorProto;

using test::add_node;
using test::float_init;
using test::graph_attr;
using test::int64_init;
using test::int_attr;
using test::ints_attr;
using test::new_model;
using test::value_info;

Model load(const onnx::ModelProto& proto) {
  const std::string bytes = proto.SerializeAsString();
  return loader::load_model_bytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), {}, "",
                                  "control_flow_test.onnx");
}

at::Tensor floats(std::vector<float> v, std::vector<int64_t> dims) {
  return at::tensor(v, at::kFloat).reshape(dims);
}

void expect_equal(const at::Tensor& actual, const at::Tensor& expected) {
  ASSERT_EQ(actual.sizes(), expected.sizes());
  EXPECT_TRUE(at::equal(actual.to(expected.scalar_type()), expected)) << actual << "\nexpected\n" << expected;
}

class ControlFlowTest : public ::testing::Test {
 protected:
  void SetUp() override { at::set_num_threads(1); }
};

// main: a = Relu(x); y = If(cond) then Add(a, tw) else Mul(a, ew); z = Neg(a).
// Each branch reads the outer activation `a` and an initializer of its own.
onnx::ModelProto if_model() {
  onnx::ModelProto proto = new_model(16);
  onnx::GraphProto* g = proto.mutable_graph();
  value_info(g->add_input(), "cond", TensorProto::BOOL, {});
  value_info(g->add_input(), "x", TensorProto::FLOAT, {3});
  add_node(g, "Relu", {"x"}, {"a"});
  onnx::NodeProto* n = add_node(g, "If", {"cond"}, {"y"});
  onnx::GraphProto* then_g = graph_attr(n, "then_branch")->mutable_g();
  float_init(then_g, "tw", {3}, {10, 20, 30});
  add_node(then_g, "Add", {"a", "tw"}, {"t_out"});
  value_info(then_g->add_output(), "t_out", TensorProto::FLOAT, {3});
  onnx::GraphProto* else_g = graph_attr(n, "else_branch")->mutable_g();
  float_init(else_g, "ew", {3}, {2, 2, 2});
  add_node(else_g, "Mul", {"a", "ew"}, {"e_out"});
  value_info(else_g->add_output(), "e_out", TensorProto::FLOAT, {3});
  add_node(g, "Neg", {"a"}, {"z"});
  value_info(g->add_output(), "y", TensorProto::FLOAT, {3});
  value_info(g->add_output(), "z", TensorProto::FLOAT, {3});
  return proto;
}

TEST_F(ControlFlowTest, IfBranchesReadOuterScopeAndTheirOwnInitializers) {
  const Model model = load(if_model());
  const Executor ex(model, {});
  const at::Tensor x = floats({-1, 2, 3}, {3});  // a = Relu(x) = [0, 2, 3]
  auto out = ex.run({at::scalar_tensor(true, at::kBool), x});
  expect_equal(out[0], floats({10, 22, 33}, {3}));  // a + [10, 20, 30]
  expect_equal(out[1], floats({0, -2, -3}, {3}));   // -a, read after the If
  out = ex.run({at::scalar_tensor(false, at::kBool), x});
  expect_equal(out[0], floats({0, 4, 6}, {3}));  // a * 2
  expect_equal(out[1], floats({0, -2, -3}, {3}));
}

TEST_F(ControlFlowTest, HookSeesTopLevelNodesOnly) {
  const Model model = load(if_model());
  const Executor ex(model, {});
  std::vector<std::pair<int, bool>> calls;
  ex.run({at::scalar_tensor(true, at::kBool), floats({1, 1, 1}, {3})},
         [&](int node, bool after) { calls.emplace_back(node, after); });
  // Relu, If, Neg: the branch's Add runs inside the If's interval.
  const std::vector<std::pair<int, bool>> expected{{0, false}, {0, true}, {1, false}, {1, true}, {2, false}, {2, true}};
  EXPECT_EQ(calls, expected);
}

// A float16 model whose If branch holds a node ATen may lack a float16 CPU
// kernel for: main: a = Relu(x); y = If(cond) then Sigmoid(a) else Neg(a);
// z = Neg(a). A subgraph node that runs upcast flags the top-level node it
// runs inside (the If), the only row the per-layer report has for it.
onnx::ModelProto half_if_model() {
  onnx::ModelProto proto = new_model(16);
  onnx::GraphProto* g = proto.mutable_graph();
  value_info(g->add_input(), "cond", TensorProto::BOOL, {});
  value_info(g->add_input(), "x", TensorProto::FLOAT16, {3});
  add_node(g, "Relu", {"x"}, {"a"});
  onnx::NodeProto* n = add_node(g, "If", {"cond"}, {"y"});
  onnx::GraphProto* then_g = graph_attr(n, "then_branch")->mutable_g();
  add_node(then_g, "Sigmoid", {"a"}, {"t_out"});
  value_info(then_g->add_output(), "t_out", TensorProto::FLOAT16, {3});
  onnx::GraphProto* else_g = graph_attr(n, "else_branch")->mutable_g();
  add_node(else_g, "Neg", {"a"}, {"e_out"});
  value_info(else_g->add_output(), "e_out", TensorProto::FLOAT16, {3});
  add_node(g, "Neg", {"a"}, {"z"});
  value_info(g->add_output(), "y", TensorProto::FLOAT16, {3});
  value_info(g->add_output(), "z", TensorProto::FLOAT16, {3});
  return proto;
}

TEST_F(ControlFlowTest, UpcastSubgraphNodeFlagsItsTopLevelNode) {
  const Model model = load(half_if_model());
  ExecOptions own;
  own.float_dtype = at::ScalarType::Undefined;  // the model's own dtypes
  const Executor ex(model, own);
  const at::Tensor x = floats({-1, 2, 3}, {3}).to(at::kHalf);
  auto out = ex.run({at::scalar_tensor(true, at::kBool), x});
  const at::Tensor a = floats({0, 2, 3}, {3});
  EXPECT_EQ(out[0].scalar_type(), at::kHalf);
  // Within float16's rounding (2^-11 relative): natively or upcast.
  EXPECT_TRUE(at::allclose(out[0].to(at::kFloat), at::sigmoid(a), 1e-3, 0)) << out[0];
  EXPECT_TRUE(at::equal(out[1], (-a).to(at::kHalf))) << out[1];

  // Which ops lack a float16 CPU kernel, asked of ATen itself.
  auto lacks = [&](const std::function<void()>& call) {
    try {
      call();
      return false;
    } catch (const c10::Error&) {
      return true;
    }
  };
  const at::Tensor h = a.to(at::kHalf);
  const bool relu = lacks([&] { at::relu(h); }), sigmoid = lacks([&] { at::sigmoid(h); }),
             neg = lacks([&] { at::neg(h); });
  const Upcasts u = ex.upcasts();
  EXPECT_EQ(u.top_level, (std::vector<bool>{relu, sigmoid, neg}));
  // The subgraph nodes: else_branch's Neg (did not run), then_branch's Sigmoid.
  ASSERT_EQ(ex.subgraph_nodes().size(), 2u);
  EXPECT_EQ(ex.subgraph_nodes()[1].path, "If_2/then_branch/Sigmoid_1");
  EXPECT_EQ(u.subgraph_nodes, (std::vector<bool>{false, sigmoid}));
  std::map<std::string, int64_t> expected;
  if (relu) expected["Relu"] = 1;
  if (sigmoid) expected["Sigmoid"] = 1;
  if (neg) expected["Neg"] = 1;  // the top-level Neg: the else branch did not run
  if (expected.empty())
    EXPECT_TRUE(u.empty());
  else
    EXPECT_EQ(u.nodes_by_dtype.at("fp16"), expected);
}

// main: (v, s) = Loop(M, cond, v0) with body
//   v_next = Add(v, step)          step: a main-graph initializer [1, 2]
//   c_out  = Less(i, limit)        limit: a body initializer, 2
//   s      = Mul(v_next, Cast(i))  scan output
onnx::ModelProto loop_model() {
  onnx::ModelProto proto = new_model(16);
  onnx::GraphProto* g = proto.mutable_graph();
  value_info(g->add_input(), "M", TensorProto::INT64, {});
  value_info(g->add_input(), "cond", TensorProto::BOOL, {});
  value_info(g->add_input(), "v0", TensorProto::FLOAT, {2});
  float_init(g, "step", {2}, {1, 2});
  onnx::NodeProto* n = add_node(g, "Loop", {"M", "cond", "v0"}, {"v_final", "s_all"});
  onnx::GraphProto* body = graph_attr(n, "body")->mutable_g();
  value_info(body->add_input(), "i", TensorProto::INT64, {});
  value_info(body->add_input(), "c_in", TensorProto::BOOL, {});
  value_info(body->add_input(), "v", TensorProto::FLOAT, {2});
  int64_init(body, "limit", {}, {2});
  add_node(body, "Add", {"v", "step"}, {"v_next"});
  add_node(body, "Less", {"i", "limit"}, {"c_out"});
  int_attr(add_node(body, "Cast", {"i"}, {"i_f"}), "to", TensorProto::FLOAT);
  add_node(body, "Mul", {"v_next", "i_f"}, {"s"});
  value_info(body->add_output(), "c_out", TensorProto::BOOL, {});
  value_info(body->add_output(), "v_next", TensorProto::FLOAT, {2});
  value_info(body->add_output(), "s", TensorProto::FLOAT, {2});
  value_info(g->add_output(), "v_final", TensorProto::FLOAT, {2});
  onnx::ValueInfoProto* s_all = g->add_output();
  s_all->set_name("s_all");
  s_all->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
  return proto;
}

TEST_F(ControlFlowTest, LoopStopsOnTheBodysConditionAndStacksScanOutputs) {
  const Model model = load(loop_model());
  const Executor ex(model, {});
  const at::Tensor v0 = floats({0, 0}, {2});
  auto M = [](int64_t m) { return at::scalar_tensor(m, at::kLong); };
  const at::Tensor yes = at::scalar_tensor(true, at::kBool), no = at::scalar_tensor(false, at::kBool);
  // M = 5: i = 0 -> v [1, 2], s [0, 0]; i = 1 -> v [2, 4], s [2, 4];
  // i = 2 -> v [3, 6], s [6, 12], and 2 < 2 is false: three iterations.
  auto out = ex.run({M(5), yes, v0});
  expect_equal(out[0], floats({3, 6}, {2}));
  expect_equal(out[1], floats({0, 0, 2, 4, 6, 12}, {3, 2}));
  // M = 2 ends it first: two iterations.
  out = ex.run({M(2), yes, v0});
  expect_equal(out[0], floats({2, 4}, {2}));
  expect_equal(out[1], floats({0, 0, 2, 4}, {2, 2}));
  // cond false on entry: no iteration, v0 comes back, the scan output is empty.
  out = ex.run({M(5), no, v0});
  expect_equal(out[0], v0);
  EXPECT_EQ(out[1].numel(), 0);
  EXPECT_EQ(out[1].size(0), 0);
}

// Scan (opset 16) with one state (a running sum) and one scan input x; the
// body gives the new sum as the state and as its scan output.
onnx::ModelProto scan_model(int64_t in_axis, int64_t in_dir, int64_t out_axis, int64_t out_dir,
                            const std::vector<int64_t>& x_dims) {
  onnx::ModelProto proto = new_model(16);
  onnx::GraphProto* g = proto.mutable_graph();
  value_info(g->add_input(), "sum0", TensorProto::FLOAT, {2});
  value_info(g->add_input(), "x", TensorProto::FLOAT, x_dims);
  onnx::NodeProto* n = add_node(g, "Scan", {"sum0", "x"}, {"sum", "ys"});
  int_attr(n, "num_scan_inputs", 1);
  ints_attr(n, "scan_input_axes", {in_axis});
  ints_attr(n, "scan_input_directions", {in_dir});
  ints_attr(n, "scan_output_axes", {out_axis});
  ints_attr(n, "scan_output_directions", {out_dir});
  onnx::GraphProto* body = graph_attr(n, "body")->mutable_g();
  value_info(body->add_input(), "s_in", TensorProto::FLOAT, {2});
  value_info(body->add_input(), "x_t", TensorProto::FLOAT, {2});
  add_node(body, "Add", {"s_in", "x_t"}, {"s_out"});
  add_node(body, "Identity", {"s_out"}, {"y_t"});
  value_info(body->add_output(), "s_out", TensorProto::FLOAT, {2});
  value_info(body->add_output(), "y_t", TensorProto::FLOAT, {2});
  value_info(g->add_output(), "sum", TensorProto::FLOAT, {2});
  onnx::ValueInfoProto* ys = g->add_output();
  ys->set_name("ys");
  ys->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
  return proto;
}

TEST_F(ControlFlowTest, ScanInReverseStacksOutputsInEitherDirection) {
  const at::Tensor x = floats({1, 2, 3, 4, 5, 6}, {3, 2});  // rows [1 2] [3 4] [5 6]
  const at::Tensor zero = floats({0, 0}, {2});
  {
    // Rows read last to first: sums [5 6], [8 10], [9 12].
    const Model model = load(scan_model(0, 1, 0, 0, {3, 2}));
    const auto out = Executor(model, {}).run({zero, x});
    expect_equal(out[0], floats({9, 12}, {2}));
    expect_equal(out[1], floats({5, 6, 8, 10, 9, 12}, {3, 2}));
  }
  {
    // The same scan, its output written in reverse: the last sum first.
    const Model model = load(scan_model(0, 1, 0, 1, {3, 2}));
    const auto out = Executor(model, {}).run({zero, x});
    expect_equal(out[0], floats({9, 12}, {2}));
    expect_equal(out[1], floats({9, 12, 8, 10, 5, 6}, {3, 2}));
  }
  {
    // x transposed ([2, 3]) scanned along axis 1, forward, output stacked on
    // axis 1: sums [1 2], [4 6], [9 12] as columns.
    const Model model = load(scan_model(1, 0, 1, 0, {2, 3}));
    const auto out = Executor(model, {}).run({zero, x.t().contiguous()});
    expect_equal(out[0], floats({9, 12}, {2}));
    expect_equal(out[1], floats({1, 4, 9, 2, 6, 12}, {2, 3}));
  }
}

// An If nested in a Loop body reads a tensor of the main graph (two scopes up).
TEST_F(ControlFlowTest, NestedSubgraphReadsAValueTwoScopesUp) {
  onnx::ModelProto proto = new_model(16);
  onnx::GraphProto* g = proto.mutable_graph();
  value_info(g->add_input(), "x", TensorProto::FLOAT, {2});
  int64_init(g, "M", {}, {3});
  add_node(g, "Neg", {"x"}, {"nx"});
  onnx::NodeProto* loop = add_node(g, "Loop", {"M", "", "acc0"}, {"acc"});
  float_init(g, "acc0", {2}, {0, 0});
  onnx::GraphProto* body = graph_attr(loop, "body")->mutable_g();
  value_info(body->add_input(), "i", TensorProto::INT64, {});
  value_info(body->add_input(), "c", TensorProto::BOOL, {});
  value_info(body->add_input(), "acc_in", TensorProto::FLOAT, {2});
  int64_init(body, "one", {}, {1});
  add_node(body, "Less", {"i", "one"}, {"first"});
  onnx::NodeProto* iff = add_node(body, "If", {"first"}, {"term"});
  onnx::GraphProto* then_g = graph_attr(iff, "then_branch")->mutable_g();
  add_node(then_g, "Identity", {"x"}, {"tt"});
  value_info(then_g->add_output(), "tt", TensorProto::FLOAT, {2});
  onnx::GraphProto* else_g = graph_attr(iff, "else_branch")->mutable_g();
  add_node(else_g, "Identity", {"nx"}, {"et"});
  value_info(else_g->add_output(), "et", TensorProto::FLOAT, {2});
  add_node(body, "Add", {"acc_in", "term"}, {"acc_out"});
  add_node(body, "Identity", {"c"}, {"c_out"});
  value_info(body->add_output(), "c_out", TensorProto::BOOL, {});
  value_info(body->add_output(), "acc_out", TensorProto::FLOAT, {2});
  value_info(g->add_output(), "acc", TensorProto::FLOAT, {2});
  const Model model = load(proto);
  const Executor ex(model, {});
  // i = 0 adds x, i = 1 and 2 add -x: x - 2x = -x.
  const auto out = ex.run({floats({1.5, -4}, {2})});
  expect_equal(out[0], floats({-1.5, 4}, {2}));
}

// A mode switch: sr == 16000 selects the branch. make_inputs gives sr the
// value it is compared with, so the model runs the branch built for it.
TEST_F(ControlFlowTest, IntegerInputComparedWithAConstantTakesItsValue) {
  onnx::ModelProto proto = new_model(16);
  onnx::GraphProto* g = proto.mutable_graph();
  value_info(g->add_input(), "sr", TensorProto::INT64, {});
  value_info(g->add_input(), "n", TensorProto::INT64, {});
  int64_init(g, "rate", {}, {16000});
  add_node(g, "Equal", {"sr", "rate"}, {"is16k"});
  onnx::NodeProto* n = add_node(g, "If", {"is16k"}, {"y"});
  onnx::GraphProto* then_g = graph_attr(n, "then_branch")->mutable_g();
  float_init(then_g, "t", {1}, {16});
  add_node(then_g, "Identity", {"t"}, {"t_out"});
  value_info(then_g->add_output(), "t_out", TensorProto::FLOAT, {1});
  onnx::GraphProto* else_g = graph_attr(n, "else_branch")->mutable_g();
  float_init(else_g, "e", {1}, {8});
  add_node(else_g, "Identity", {"e"}, {"e_out"});
  value_info(else_g->add_output(), "e_out", TensorProto::FLOAT, {1});
  add_node(g, "Neg", {"n"}, {"m"});
  value_info(g->add_output(), "y", TensorProto::FLOAT, {1});
  value_info(g->add_output(), "m", TensorProto::INT64, {});
  const Model model = load(proto);
  const Executor ex(model, {});
  for (uint64_t seed : {1, 2, 3}) {
    const auto inputs = ex.make_inputs(seed);
    EXPECT_EQ(inputs[0].item<int64_t>(), 16000);
    // An integer input nothing compares stays in the generic range [0, 2).
    EXPECT_GE(inputs[1].item<int64_t>(), 0);
    EXPECT_LT(inputs[1].item<int64_t>(), 2);
    expect_equal(ex.run(inputs)[0], floats({16}, {1}));
  }
}

TEST_F(ControlFlowTest, OpsetEightScanRefusesShortSequenceLengths) {
  onnx::ModelProto proto = new_model(8);
  proto.set_ir_version(3);
  onnx::GraphProto* g = proto.mutable_graph();
  value_info(g->add_input(), "lens", TensorProto::INT64, {1});
  value_info(g->add_input(), "s0", TensorProto::FLOAT, {1, 2});
  value_info(g->add_input(), "x", TensorProto::FLOAT, {1, 3, 2});
  onnx::NodeProto* n = add_node(g, "Scan", {"lens", "s0", "x"}, {"s", "ys"});
  int_attr(n, "num_scan_inputs", 1);
  onnx::GraphProto* body = graph_attr(n, "body")->mutable_g();
  value_info(body->add_input(), "s_in", TensorProto::FLOAT, {2});
  value_info(body->add_input(), "x_t", TensorProto::FLOAT, {2});
  add_node(body, "Add", {"s_in", "x_t"}, {"s_out"});
  add_node(body, "Identity", {"s_out"}, {"y_t"});
  value_info(body->add_output(), "s_out", TensorProto::FLOAT, {2});
  value_info(body->add_output(), "y_t", TensorProto::FLOAT, {2});
  value_info(g->add_output(), "s", TensorProto::FLOAT, {1, 2});
  value_info(g->add_output(), "ys", TensorProto::FLOAT, {1, 3, 2});
  const Model model = load(proto);
  const Executor ex(model, {});
  const at::Tensor x = floats({1, 2, 3, 4, 5, 6}, {1, 3, 2});
  const at::Tensor s0 = floats({0, 0}, {1, 2});
  // Full length: the batch of one scans all three rows forward.
  auto out = ex.run({at::tensor(std::vector<int64_t>{3}, at::kLong), s0, x});
  expect_equal(out[0], floats({9, 12}, {1, 2}));
  expect_equal(out[1], floats({1, 2, 4, 6, 9, 12}, {1, 3, 2}));
  try {
    ex.run({at::tensor(std::vector<int64_t>{2}, at::kLong), s0, x});
    FAIL() << "a sequence length of 2 of 3 ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find("sequence_lens"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------- subgraph nodes and their hook

// Every node of every subgraph, named by its path, in the analysis's order
// (each node, then the nodes of its own subgraphs; an If's branches in
// attribute-name order), with the top-level node it runs inside, its
// enclosing control-flow node and its depth.
TEST_F(ControlFlowTest, SubgraphNodesAreNamedByTheirPath) {
  const Model model = load(test::if_in_loop_model());
  const Executor ex(model, {});
  struct Expected {
    std::string path, op_type;
    int enclosing, depth;
  };
  const std::vector<Expected> expected = {
      {"Loop_1/body/Less_1", "Less", -1, 1},
      {"Loop_1/body/If_2", "If", -1, 1},
      {"Loop_1/body/If_2/else_branch/Neg_1", "Neg", 1, 2},
      {"Loop_1/body/If_2/else_branch/Abs_2", "Abs", 1, 2},
      {"Loop_1/body/If_2/then_branch/Identity_1", "Identity", 1, 2},
      {"Loop_1/body/Add_3", "Add", -1, 1},
      {"Loop_1/body/Identity_4", "Identity", -1, 1},
  };
  const std::vector<SubgraphNodeInfo>& nodes = ex.subgraph_nodes();
  ASSERT_EQ(nodes.size(), expected.size());
  for (size_t k = 0; k < nodes.size(); ++k) {
    SCOPED_TRACE(expected[k].path);
    EXPECT_EQ(nodes[k].path, expected[k].path);
    EXPECT_EQ(nodes[k].op_type, expected[k].op_type);
    EXPECT_EQ(nodes[k].top_level_node, 0);
    EXPECT_EQ(nodes[k].enclosing, expected[k].enclosing);
    EXPECT_EQ(nodes[k].depth, expected[k].depth);
  }
  // The analysis names its rows the same way (it lists one branch of the If:
  // the costlier, its condition being unknown before running).
  const AnalysisResult analysis = analyze_model(model);
  ASSERT_FALSE(analysis.subgraph_nodes.empty());
  for (const NodeReport& row : analysis.subgraph_nodes) {
    const auto it = std::find_if(nodes.begin(), nodes.end(),
                                 [&](const SubgraphNodeInfo& n) { return n.path == row.name; });
    ASSERT_NE(it, nodes.end()) << row.name;
    EXPECT_EQ(it->op_type, row.op_type);
    EXPECT_EQ(it->top_level_node, row.index);
  }
}

// The subgraph hook brackets every execution of a subgraph node, nested
// inside its control-flow node's pair and inside the top-level node's pair.
TEST_F(ControlFlowTest, SubgraphHookBracketsEachCallAndNests) {
  const Model model = load(test::if_in_loop_model());
  const Executor ex(model, {});
  std::vector<std::pair<int, bool>> top, sub;
  std::vector<int> top_open_during_sub;
  bool top_open = false;
  ex.run(
      ex.make_inputs(1),
      [&](int node, bool after) {
        top.emplace_back(node, after);
        top_open = !after;
      },
      [&](int id, bool after) {
        sub.emplace_back(id, after);
        top_open_during_sub.push_back(top_open);
      });
  EXPECT_EQ(top, (std::vector<std::pair<int, bool>>{{0, false}, {0, true}}));
  // Ids as in SubgraphNodesAreNamedByTheirPath: Less 0, If 1, Neg 2, Abs 3,
  // then-Identity 4, Add 5, Identity 6. Trip 0 takes the then branch, trips
  // 1 and 2 the else branch.
  std::vector<std::pair<int, bool>> expected;
  auto call = [&](int id) {
    expected.emplace_back(id, false);
    expected.emplace_back(id, true);
  };
  for (int trip = 0; trip < 3; ++trip) {
    call(0);
    expected.emplace_back(1, false);
    if (trip == 0) {
      call(4);
    } else {
      call(2);
      call(3);
    }
    expected.emplace_back(1, true);
    call(5);
    call(6);
  }
  EXPECT_EQ(sub, expected);
  for (bool open : top_open_during_sub)
    EXPECT_TRUE(open) << "a subgraph node ran outside the Loop's interval";
}

// A Loop with a constant trip count of 5: each body node is called 5 times a
// run; a run without hooks gives the same outputs as one with them.
TEST_F(ControlFlowTest, LoopBodyNodesAreCalledOncePerTrip) {
  const Model model = load(test::loop_five_model());
  const Executor ex(model, {});
  std::map<std::string, int> calls;
  const auto inputs = ex.make_inputs(3);
  const auto hooked = ex.run(inputs, {}, [&](int id, bool after) {
    if (after) ++calls[ex.subgraph_nodes()[size_t(id)].path];
  });
  EXPECT_EQ(calls,
            (std::map<std::string, int>{
                {"Loop_2/body/MatMul_1", 5}, {"Loop_2/body/Add_2", 5}, {"Loop_2/body/Identity_3", 5}}));
  expect_equal(ex.run(inputs)[0], hooked[0]);
}

}  // namespace
}  // namespace modelstat::profiler

namespace modelstat::profiler {
namespace {

// main: y = If_1(cond) with
//   then_branch: Constant_1 W = [1, 2, 3, 4];
//                If_2(cond2) with
//                  then_branch: Slice_1 s = W[1:3]; Concat_2 c = [s, s];
//                               Slice_3 g = c[1:3]; Mul_4 i_out = x * g
//                  else_branch: Concat_1 xx = [x, x]; Slice_2 e_in = xx[1:3]
//                Identity_3 t_out = the inner If's output
//   else_branch: Neg_1 e_out = -x
// The inner then-branch rearranges W, a constant of the scope above it, as
// exporters rearrange LSTM gates inside an If: those three nodes are
// run-invariant; the inner else-branch's read the input x and are not.
onnx::ModelProto if_rearranging_outer_weights_model() {
  onnx::ModelProto proto = new_model(16);
  onnx::GraphProto* g = proto.mutable_graph();
  value_info(g->add_input(), "cond", TensorProto::BOOL, {});
  value_info(g->add_input(), "cond2", TensorProto::BOOL, {});
  value_info(g->add_input(), "x", TensorProto::FLOAT, {2});
  onnx::NodeProto* outer = add_node(g, "If", {"cond"}, {"y"});
  onnx::GraphProto* then_g = graph_attr(outer, "then_branch")->mutable_g();
  onnx::NodeProto* constant = add_node(then_g, "Constant", {}, {"W"});
  onnx::AttributeProto* value = constant->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(TensorProto::FLOAT);
  value->mutable_t()->add_dims(4);
  for (float v : {1.f, 2.f, 3.f, 4.f}) value->mutable_t()->add_float_data(v);
  onnx::NodeProto* inner = add_node(then_g, "If", {"cond2"}, {"inner_out"});
  onnx::GraphProto* inner_then = graph_attr(inner, "then_branch")->mutable_g();
  int64_init(inner_then, "st", {1}, {1});
  int64_init(inner_then, "en", {1}, {3});
  add_node(inner_then, "Slice", {"W", "st", "en"}, {"s"});
  int_attr(add_node(inner_then, "Concat", {"s", "s"}, {"c"}), "axis", 0);
  add_node(inner_then, "Slice", {"c", "st", "en"}, {"gates"});
  add_node(inner_then, "Mul", {"x", "gates"}, {"i_out"});
  value_info(inner_then->add_output(), "i_out", TensorProto::FLOAT, {2});
  onnx::GraphProto* inner_else = graph_attr(inner, "else_branch")->mutable_g();
  int64_init(inner_else, "st2", {1}, {1});
  int64_init(inner_else, "en2", {1}, {3});
  int_attr(add_node(inner_else, "Concat", {"x", "x"}, {"xx"}), "axis", 0);
  add_node(inner_else, "Slice", {"xx", "st2", "en2"}, {"e_in"});
  value_info(inner_else->add_output(), "e_in", TensorProto::FLOAT, {2});
  add_node(then_g, "Identity", {"inner_out"}, {"t_out"});
  value_info(then_g->add_output(), "t_out", TensorProto::FLOAT, {2});
  onnx::GraphProto* else_g = graph_attr(outer, "else_branch")->mutable_g();
  add_node(else_g, "Neg", {"x"}, {"e_out"});
  value_info(else_g->add_output(), "e_out", TensorProto::FLOAT, {2});
  value_info(g->add_output(), "y", TensorProto::FLOAT, {2});
  return proto;
}

TEST_F(ControlFlowTest, SubgraphNodesOnOuterConstantsRunOncePerInputShapes) {
  const Model model = load(if_rearranging_outer_weights_model());
  const Executor ex(model, {});
  // The three nodes on W (two Slices, a Concat) fold; the inner else-branch's
  // Concat and Slice of x do not.
  std::string folded;
  for (const std::string& notice : ex.fusion_notices())
    if (notice.find("once per set of input shapes") != std::string::npos) folded = notice;
  EXPECT_NE(folded.find(": 2 Slice, 1 Concat"), std::string::npos) << folded;
  EXPECT_EQ(folded.find("3 Slice"), std::string::npos) << folded;

  auto run = [&](bool cond, bool cond2, std::vector<float> x) {
    return ex.run({at::scalar_tensor(cond, at::kBool), at::scalar_tensor(cond2, at::kBool), floats(x, {2})})[0];
  };
  // W[1:3] = [2, 3]; c = [2, 3, 2, 3]; gates = c[1:3] = [3, 2].
  expect_equal(run(true, true, {10, 20}), floats({30, 40}, {2}));
  expect_equal(run(true, true, {1, -1}), floats({3, -2}, {2}));  // the kept values, new x
  expect_equal(run(true, false, {10, 20}), floats({20, 10}, {2}));  // [x, x][1:3]
  expect_equal(run(false, true, {10, 20}), floats({-10, -20}, {2}));
  expect_equal(run(true, true, {2, 2}), floats({6, 4}, {2}));
}

}  // namespace
}  // namespace modelstat::profiler

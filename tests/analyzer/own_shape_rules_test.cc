// modelstat's own shape rules (analyzer/loader/own_shape_rules.hpp): the
// rules on their own, with shapes derived by hand from numpy's broadcasting,
// matmul and reshape semantics; and whole models in which nodes the rules
// cover, nodes they do not (Transpose), dynamic dims, declared outputs,
// data propagation and an error go through ONNX's inference instead.
#include "analyzer/loader/own_shape_rules.hpp"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "modelstat/analysis.hpp"
#include "profiler/onnx_builder.hpp"

namespace {

using modelstat::loader::own_rules::Dims;
using modelstat::loader::own_rules::Rule;
namespace own = modelstat::loader::own_rules;

Dims dims(std::initializer_list<int64_t> d) {
  Dims out;
  for (int64_t v : d) out.d[out.rank++] = v;
  return out;
}

std::vector<int64_t> as_vector(const Dims& d) { return std::vector<int64_t>(d.d, d.d + d.rank); }

TEST(OwnShapeRules, RuleForCoversOnlyTheVersionsWithONNXsFunction) {
  EXPECT_EQ(own::rule_for("Relu", 14), Rule::Unary);
  EXPECT_EQ(own::rule_for("Sigmoid", 6), Rule::Unary);
  EXPECT_EQ(own::rule_for("Relu", 1), Rule::None);  // consumed_inputs era: legacy inference
  EXPECT_EQ(own::rule_for("Add", 7), Rule::Broadcast);
  EXPECT_EQ(own::rule_for("Div", 14), Rule::Broadcast);
  EXPECT_EQ(own::rule_for("Add", 6), Rule::None);  // the broadcast attribute's era
  EXPECT_EQ(own::rule_for("MatMul", 13), Rule::MatMul);
  EXPECT_EQ(own::rule_for("MatMul", 1), Rule::None);
  EXPECT_EQ(own::rule_for("Reshape", 14), Rule::Reshape);
  EXPECT_EQ(own::rule_for("Reshape", 1), Rule::None);  // shape as an attribute
  EXPECT_EQ(own::rule_for("Transpose", 13), Rule::None);
  EXPECT_EQ(own::rule_for("Conv", 11), Rule::None);
}

TEST(OwnShapeRules, BroadcastAlignsFromTheRightAndStretchesOnes) {
  Dims out;
  ASSERT_TRUE(own::broadcast(dims({2, 1, 3}), dims({4, 1}), out));
  EXPECT_EQ(as_vector(out), (std::vector<int64_t>{2, 4, 3}));
  ASSERT_TRUE(own::broadcast(dims({}), dims({5}), out));  // a scalar with a vector
  EXPECT_EQ(as_vector(out), (std::vector<int64_t>{5}));
  ASSERT_TRUE(own::broadcast(dims({}), dims({}), out));
  EXPECT_EQ(out.rank, 0);
  ASSERT_TRUE(own::broadcast(dims({0, 3}), dims({1, 3}), out));  // an empty dim against 1
  EXPECT_EQ(as_vector(out), (std::vector<int64_t>{0, 3}));
  EXPECT_FALSE(own::broadcast(dims({2, 3}), dims({4, 3}), out));  // 2 vs 4: ONNX reports it
  EXPECT_FALSE(own::broadcast(dims({0}), dims({5}), out));
}

TEST(OwnShapeRules, MatMulPromotesVectorsAndBroadcastsBatchDims) {
  Dims out;
  ASSERT_TRUE(own::matmul(dims({2, 3, 4}), dims({4, 5}), out));
  EXPECT_EQ(as_vector(out), (std::vector<int64_t>{2, 3, 5}));
  ASSERT_TRUE(own::matmul(dims({4}), dims({4, 5}), out));  // [1,4] @ [4,5], the 1 dropped
  EXPECT_EQ(as_vector(out), (std::vector<int64_t>{5}));
  ASSERT_TRUE(own::matmul(dims({3, 4}), dims({4}), out));  // [3,4] @ [4,1], the 1 dropped
  EXPECT_EQ(as_vector(out), (std::vector<int64_t>{3}));
  ASSERT_TRUE(own::matmul(dims({4}), dims({4}), out));  // a dot product: rank 0
  EXPECT_EQ(out.rank, 0);
  ASSERT_TRUE(own::matmul(dims({2, 1, 3, 4}), dims({5, 4, 6}), out));  // batch [2,1] with [5]
  EXPECT_EQ(as_vector(out), (std::vector<int64_t>{2, 5, 3, 6}));
  EXPECT_FALSE(own::matmul(dims({3, 4}), dims({5, 6}), out));          // 4 vs 5
  EXPECT_FALSE(own::matmul(dims({2, 3, 4}), dims({3, 4, 6}), out));    // batch 2 vs 3
  EXPECT_FALSE(own::matmul(dims({}), dims({4, 5}), out));              // rank 0: ONNX fails it
}

TEST(OwnShapeRules, ReshapeCopiesZerosAndInfersOneMinusOne) {
  Dims out;
  const int64_t zero_rest[] = {0, -1};
  ASSERT_TRUE(own::reshape(dims({2, 3, 4}), zero_rest, 2, false, out));
  EXPECT_EQ(as_vector(out), (std::vector<int64_t>{2, 12}));
  const int64_t two_three[] = {2, 3};
  ASSERT_TRUE(own::reshape(dims({6}), two_three, 2, false, out));
  EXPECT_EQ(as_vector(out), (std::vector<int64_t>{2, 3}));
  const int64_t to_scalar[] = {0};
  ASSERT_TRUE(own::reshape(dims({1}), to_scalar, 0, false, out));  // an empty target: a scalar
  EXPECT_EQ(out.rank, 0);
  const int64_t four_rest[] = {4, -1};
  EXPECT_FALSE(own::reshape(dims({6}), four_rest, 2, false, out));  // 6 is no multiple of 4
  const int64_t two_unknowns[] = {-1, -1};
  EXPECT_FALSE(own::reshape(dims({6}), two_unknowns, 2, false, out));
  const int64_t literal_zero[] = {0, 6};
  EXPECT_FALSE(own::reshape(dims({6}), literal_zero, 2, true, out));  // allowzero: an empty tensor, declined
  const int64_t five[] = {5};
  EXPECT_FALSE(own::reshape(dims({6}), five, 1, false, out));  // 6 elements into 5: left to ONNX
  const int64_t past_rank[] = {3, 0};
  EXPECT_FALSE(own::reshape(dims({6}), past_rank, 2, false, out));  // a 0 past the input's rank
}

const modelstat::NodeReport& node(const modelstat::AnalysisResult& r, const std::string& name) {
  for (const auto& n : r.nodes)
    if (n.name == name) return n;
  ADD_FAILURE() << "no node " << name;
  static const modelstat::NodeReport kNone;
  return kNone;
}

// x -> Relu -> Add(c) -> Transpose -> MatMul(w) -> Reshape(s) -> Sigmoid -> y.
// Relu, Add, MatMul and Reshape have own rules, Transpose has none (ONNX's
// function sizes it and the MatMul after it reads that), y is declared (a
// merge into its declared type: ONNX's path).
onnx::ModelProto chain_model(std::initializer_list<const char*> x_dims, std::initializer_list<const char*> y_dims,
                             const std::vector<int64_t>& target) {
  using namespace modelstat::test;
  onnx::ModelProto m = new_model(14);
  onnx::GraphProto* g = m.mutable_graph();
  symbolic_value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, x_dims);
  float_init(g, "c", {4, 1}, {1, 2, 3, 4});
  float_init(g, "w", {4, 5}, std::vector<float>(20, 0.5f));
  int64_init(g, "s", {int64_t(target.size())}, target);
  add_node(g, "Relu", {"x"}, {"a"});
  add_node(g, "Add", {"a", "c"}, {"b"});
  ints_attr(add_node(g, "Transpose", {"b"}, {"t"}), "perm", {0, 2, 1});
  add_node(g, "MatMul", {"t", "w"}, {"mm"});
  add_node(g, "Reshape", {"mm", "s"}, {"r"});
  add_node(g, "Sigmoid", {"r"}, {"y"});
  symbolic_value_info(g->add_output(), "y", onnx::TensorProto::FLOAT, y_dims);
  return m;
}

modelstat::AnalysisResult analyze(const onnx::ModelProto& m, const modelstat::LoadOptions& options = {}) {
  const std::string bytes = m.SerializeAsString();
  return modelstat::analyze_buffer(bytes.data(), bytes.size(), options);
}

// Known dims: [2,1,3] + [4,1] = [2,4,3]; transposed [2,3,4]; @ [4,5] =
// [2,3,5]; reshaped [0,-1] = [2,15].
TEST(OwnShapeRules, ModelWithKnownDimsGetsEveryShape) {
  const modelstat::AnalysisResult r = analyze(chain_model({"2", "1", "3"}, {"2", "15"}, {0, -1}));
  EXPECT_EQ(node(r, "Relu_1").output_shapes.at(0), "2x1x3");
  EXPECT_EQ(node(r, "Add_2").output_shapes.at(0), "2x4x3");
  EXPECT_EQ(node(r, "Transpose_3").output_shapes.at(0), "2x3x4");
  EXPECT_EQ(node(r, "MatMul_4").output_shapes.at(0), "2x3x5");
  EXPECT_EQ(node(r, "Reshape_5").output_shapes.at(0), "2x15");
  EXPECT_EQ(node(r, "Sigmoid_6").output_shapes.at(0), "2x15");
  EXPECT_EQ(r.totals.nodes_exact, 6);
  // 2*3*4*5 multiply-adds in the MatMul.
  EXPECT_EQ(node(r, "MatMul_4").cost.macs, 120);
}

// A dynamic dim n (not leading an input: no batch binding sizes it): no own
// rule applies, ONNX's functions carry the symbol through broadcasting
// ([2,1,n] + [4,1] = [2,4,n]), the transpose and the MatMul ([2,n,4] @
// [4,5] = [2,n,5]); Reshape's two 0s copy 2 and n, and -1 is the known
// product 2*5 over 2 = 5.
TEST(OwnShapeRules, DynamicDimsGoThroughONNXsInference) {
  const modelstat::AnalysisResult r = analyze(chain_model({"2", "1", "n"}, {"2", "n", "5"}, {0, 0, -1}));
  EXPECT_EQ(node(r, "Relu_1").output_shapes.at(0), "2x1xn");
  EXPECT_EQ(node(r, "Add_2").output_shapes.at(0), "2x4xn");
  EXPECT_EQ(node(r, "Transpose_3").output_shapes.at(0), "2xnx4");
  EXPECT_EQ(node(r, "MatMul_4").output_shapes.at(0), "2xnx5");
  EXPECT_EQ(node(r, "Reshape_5").output_shapes.at(0), "2xnx5");
  // Bound with --dim n=3: every dim known, the own rules apply.
  modelstat::LoadOptions bound;
  bound.dim_values["n"] = 3;
  const modelstat::AnalysisResult b = analyze(chain_model({"2", "1", "n"}, {"2", "n", "5"}, {0, 0, -1}), bound);
  EXPECT_EQ(node(b, "Add_2").output_shapes.at(0), "2x4x3");
  EXPECT_EQ(node(b, "MatMul_4").output_shapes.at(0), "2x3x5");
  EXPECT_EQ(node(b, "Reshape_5").output_shapes.at(0), "2x3x5");
}

// An Add of [2,3] and [4,3]: the own rule declines, ONNX's function reports
// the mismatch (a notice) and the output stays unsized; the Relu after it
// is unsized too.
TEST(OwnShapeRules, MismatchFallsBackToONNXsError) {
  using namespace modelstat::test;
  onnx::ModelProto m = new_model(14);
  onnx::GraphProto* g = m.mutable_graph();
  value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
  float_init(g, "c", {4, 3}, std::vector<float>(12, 1.0f));
  add_node(g, "Add", {"x", "c"}, {"a"});
  add_node(g, "Relu", {"a"}, {"y"});
  g->add_output()->set_name("y");
  const modelstat::AnalysisResult r = analyze(m);
  EXPECT_EQ(node(r, "Add_1").output_shapes.at(0), "?");
  EXPECT_EQ(node(r, "Relu_2").output_shapes.at(0), "?");
  std::string notices;
  for (const auto& n : r.notices) notices += n + "\n";
  EXPECT_NE(notices.find("Incompatible dimensions"), std::string::npos) << notices;
}

// Integer values: Shape(x) + zeros is data ONNX's propagation (Add-14) and
// the folder carry; the Add goes through ONNX's path, and the Reshape to
// its value gets x's dims [2,3,4].
TEST(OwnShapeRules, ValuesStillReachReshapeThroughAnIntegerAdd) {
  using namespace modelstat::test;
  onnx::ModelProto m = new_model(14);
  onnx::GraphProto* g = m.mutable_graph();
  value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 3, 4});
  int64_init(g, "zeros", {3}, {0, 0, 0});
  add_node(g, "Shape", {"x"}, {"s"});
  add_node(g, "Add", {"s", "zeros"}, {"s2"});
  add_node(g, "Reshape", {"x", "s2"}, {"y"});
  g->add_output()->set_name("y");
  const modelstat::AnalysisResult r = analyze(m);
  EXPECT_EQ(node(r, "Add_2").output_shapes.at(0), "3");
  EXPECT_EQ(node(r, "Reshape_3").output_shapes.at(0), "2x3x4");
}

}  // namespace

// The op records: no overlapping keys, documented rules, domain
// normalisation, coverage of the ONNX operator set, opset ranges that start
// where ONNX defines each op, the traits derived from them, and the generated
// record table of docs/COST_MODEL.md.
#include <gtest/gtest.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/cost/cost_rule.hpp"
#include "analyzer/op_traits.hpp"
#include "modelstat/analysis.hpp"
#include "modelstat/error.hpp"
#include "profiler/onnx_builder.hpp"

namespace modelstat {
namespace {

using cost::all_rules;
using cost::find_rule;

TEST(CostRegistry, NoTwoRulesOverlapForTheSameOp) {
  std::map<std::pair<std::string, std::string>, std::vector<const OpKey*>> by_op;
  for (const auto& rule : all_rules()) by_op[{rule.key.domain, rule.key.op_type}].push_back(&rule.key);
  for (const auto& [op, keys] : by_op)
    for (size_t i = 0; i < keys.size(); ++i)
      for (size_t j = i + 1; j < keys.size(); ++j) {
        const bool disjoint = keys[i]->until_version < keys[j]->since_version ||
                              keys[j]->until_version < keys[i]->since_version;
        EXPECT_TRUE(disjoint) << op.first << "::" << op.second << " has overlapping opset ranges";
      }
}

TEST(CostRegistry, EveryRuleIsDocumentedAndWellFormed) {
  ASSERT_FALSE(all_rules().empty());
  for (const auto& rule : all_rules()) {
    SCOPED_TRACE(rule.key.op_type);
    EXPECT_FALSE(rule.key.op_type.empty());
    EXPECT_NE(rule.fn, nullptr);
    ASSERT_NE(rule.doc, nullptr);
    EXPECT_GT(std::string(rule.doc).size(), 3u);
    EXPECT_LE(rule.key.since_version, rule.key.until_version);
    EXPECT_GE(rule.key.since_version, 1);
    EXPECT_NE(rule.key.domain, "ai.onnx") << "domains are stored normalised";
  }
}

TEST(CostRegistry, FindRuleNormalisesTheDefaultDomain) {
  const cost::CostRule* by_alias = find_rule("ai.onnx", "Conv", 13);
  const cost::CostRule* by_empty = find_rule("", "Conv", 13);
  ASSERT_NE(by_alias, nullptr);
  EXPECT_EQ(by_alias, by_empty);
  EXPECT_EQ(by_alias->key.op_type, "Conv");
  EXPECT_EQ(find_rule("com.example", "Conv", 13), nullptr);
  EXPECT_EQ(find_rule("", "NoSuchOp", 13), nullptr);
  EXPECT_EQ(find_rule("", "conv", 13), nullptr) << "op types are case-sensitive";
}

// Every op seen in torchvision classifiers, BERT, GPT-2 and YOLO exports, at
// every opset where ONNX defines it.
TEST(CostRegistry, OpsOfCommonExportsArePresent) {
  const char* required[] = {
      "Conv", "Gemm", "MatMul", "Relu", "Clip", "Add", "Mul", "Sigmoid", "HardSigmoid", "HardSwish",
      "MaxPool", "AveragePool", "GlobalAveragePool", "Flatten", "Reshape", "Transpose", "Concat", "Split",
      "Slice", "Resize", "Softmax", "LayerNormalization", "Erf", "Div", "Sqrt", "Pow", "ReduceMean",
      "Gather", "Shape", "Unsqueeze", "Squeeze", "Expand", "Where", "Equal", "Cast", "ConstantOfShape",
      "Constant", "Sub", "Tanh", "Einsum", "BatchNormalization", "Dropout", "Identity", "Pad", "Range",
      "Tile", "ConvTranspose", "LeakyRelu", "Upsample", "Neg", "Less", "Not", "Softplus", "Exp", "Log",
      "Max", "Min", "Abs", "Floor", "ScatterND", "NonZero", "TopK", "ReduceSum", "ReduceMax", "ArgMax",
      "Trilu", "CumSum", "GatherElements", "LSTM", "GRU", "InstanceNormalization", "PRelu",
      "QuantizeLinear", "DequantizeLinear", "If", "Loop",
  };
  for (const char* op : required)
    for (int opset : {7, 11, 13, 17}) {
      if (!onnx::OpSchemaRegistry::Schema(op, opset, "")) continue;
      EXPECT_NE(find_rule("", op, opset), nullptr) << op << " at opset " << opset;
    }
}

// Ops whose cost cannot be known from shapes (random sampling, data-dependent
// boxes/bins, string processing) or is algorithm-dependent (FFT): deliberately
// without a rule, so they are reported as unknown rather than as zero.
const std::set<std::string> kDeliberatelyUncovered = {
    "Bernoulli", "DFT", "MaxRoiPool", "MelWeightMatrix", "Multinomial", "NonMaxSuppression",
    "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "STFT",
    "StringNormalizer", "TfIdfVectorizer",
};

// Every default-domain operator of ONNX 1.12 (opset 17), from its schema registry.
TEST(CostRegistry, EveryOnnx112OpIsCoveredOrDeliberatelyUnknown) {
  const char* onnx_1_12_ops[] = {
      "Abs", "Acos", "Acosh", "Add", "And", "ArgMax", "ArgMin", "Asin", "Asinh", "Atan", "Atanh",
      "AveragePool", "BatchNormalization", "Bernoulli", "BitShift", "BlackmanWindow", "Cast",
      "CastLike", "Ceil", "Celu", "Clip", "Compress", "Concat", "ConcatFromSequence", "Constant",
      "ConstantOfShape", "Conv", "ConvInteger", "ConvTranspose", "Cos", "Cosh", "CumSum", "DFT",
      "DepthToSpace", "DequantizeLinear", "Det", "Div", "Dropout", "DynamicQuantizeLinear", "Einsum",
      "Elu", "Equal", "Erf", "Exp", "Expand", "EyeLike", "Flatten", "Floor", "GRU", "Gather",
      "GatherElements", "GatherND", "Gemm", "GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool",
      "Greater", "GreaterOrEqual", "GridSample", "HammingWindow", "HannWindow", "HardSigmoid",
      "HardSwish", "Hardmax", "Identity", "If", "InstanceNormalization", "IsInf", "IsNaN", "LRN",
      "LSTM", "LayerNormalization", "LeakyRelu", "Less", "LessOrEqual", "Log", "LogSoftmax", "Loop",
      "LpNormalization", "LpPool", "MatMul", "MatMulInteger", "Max", "MaxPool", "MaxRoiPool",
      "MaxUnpool", "Mean", "MeanVarianceNormalization", "MelWeightMatrix", "Min", "Mod", "Mul",
      "Multinomial", "Neg", "NegativeLogLikelihoodLoss", "NonMaxSuppression", "NonZero", "Not",
      "OneHot", "Optional", "OptionalGetElement", "OptionalHasElement", "Or", "PRelu", "Pad", "Pow",
      "QLinearConv", "QLinearMatMul", "QuantizeLinear", "RNN", "RandomNormal", "RandomNormalLike",
      "RandomUniform", "RandomUniformLike", "Range", "Reciprocal", "ReduceL1", "ReduceL2",
      "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd",
      "ReduceSum", "ReduceSumSquare", "Relu", "Reshape", "Resize", "ReverseSequence", "RoiAlign",
      "Round", "STFT", "Scan", "Scatter", "ScatterElements", "ScatterND", "Selu", "SequenceAt",
      "SequenceConstruct", "SequenceEmpty", "SequenceErase", "SequenceInsert", "SequenceLength",
      "SequenceMap", "Shape", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh", "Size", "Slice", "Softmax",
      "SoftmaxCrossEntropyLoss", "Softplus", "Softsign", "SpaceToDepth", "Split", "SplitToSequence",
      "Sqrt", "Squeeze", "StringNormalizer", "Sub", "Sum", "Tan", "Tanh", "TfIdfVectorizer",
      "ThresholdedRelu", "Tile", "TopK", "Transpose", "Trilu", "Unique", "Unsqueeze", "Upsample",
      "Where", "Xor",
  };
  size_t covered = 0;
  for (const char* op : onnx_1_12_ops) {
    const bool has_rule = find_rule("", op, 17) != nullptr;
    if (kDeliberatelyUncovered.count(op))
      EXPECT_FALSE(has_rule) << op << " has a rule now: remove it from kDeliberatelyUncovered and docs";
    else
      EXPECT_TRUE(has_rule) << op << " has no cost rule";
    covered += has_rule;
  }
  EXPECT_EQ(covered + kDeliberatelyUncovered.size(), std::size(onnx_1_12_ops));
}

// Later opsets' additions that are covered too.
TEST(CostRegistry, NewerOpsAreCovered) {
  for (const char* op : {"Gelu", "GroupNormalization", "Mish", "BitwiseAnd", "BitwiseOr", "BitwiseXor",
                         "BitwiseNot", "CenterCropPad"})
    EXPECT_NE(find_rule("", op, 20), nullptr) << op;
}

// The first opset of an op, from ONNX 1.12's schema registry (the one the
// analyzer links); 0 when ONNX 1.12 does not define it.
int onnx_first_opset(const std::string& op, const std::string& domain) {
  for (int v = 1; v <= 17; ++v)
    if (const auto* schema = onnx::OpSchemaRegistry::Schema(op, v, domain)) return schema->since_version();
  return 0;
}

// Ops newer than ONNX 1.12, with the since_version of their first schema in
// the ONNX operator spec (docs/Operators.md), and contrib ops with the version
// of their domain they appear in (ONNX Runtime's docs/ContribOperators.md).
const std::map<std::pair<std::string, std::string>, int64_t> kFirstOpsetNotInOnnx112 = {
    {{"", "BitwiseAnd"}, 18}, {{"", "BitwiseNot"}, 18}, {{"", "BitwiseOr"}, 18}, {{"", "BitwiseXor"}, 18},
    {{"", "CenterCropPad"}, 18}, {{"", "GroupNormalization"}, 18}, {{"", "Mish"}, 18}, {{"", "Gelu"}, 20},
    {{"com.microsoft", "QuickGelu"}, 1},
    // The attention family (analyzer/cost/attention.cc).
    {{"com.microsoft", "Attention"}, 1}, {{"com.microsoft", "MultiHeadAttention"}, 1},
    {{"com.microsoft", "GroupQueryAttention"}, 1}, {{"com.microsoft", "RotaryEmbedding"}, 1},
    {{"", "Attention"}, 23}, {{"", "RotaryEmbedding"}, 23},
    // ONNX's RMS norm; ONNX Runtime's RMS norm in the ONNX domain and its other contrib ops.
    {{"", "RMSNormalization"}, 23}, {{"", "SimplifiedLayerNormalization"}, 1},
    {{"com.microsoft", "SkipLayerNormalization"}, 1}, {{"com.microsoft", "SkipSimplifiedLayerNormalization"}, 1},
    {{"com.microsoft", "EmbedLayerNormalization"}, 1}, {{"com.microsoft", "Gelu"}, 1},
    {{"com.microsoft", "FastGelu"}, 1}, {{"com.microsoft", "BiasGelu"}, 1}, {{"com.microsoft", "BiasAdd"}, 1},
    {{"com.microsoft", "BiasSoftmax"}, 1}, {{"com.microsoft", "FusedMatMul"}, 1},
    {{"com.microsoft", "FusedGemm"}, 1}, {{"com.microsoft", "FusedConv"}, 1},
    {{"com.microsoft", "MatMulNBits"}, 1},
};

// Records that start before ONNX defines the op, each with the reason.
const std::map<std::pair<std::string, std::string>, int64_t> kOlderThanOnnx = {
    // ONNX Runtime's LayerNormalization contrib op lives in the ONNX domain for
    // opsets 1-16 (its kernels are registered so), and its optimizer writes it there.
    {{"", "LayerNormalization"}, 1},
};

// A record covers an op from the opset ONNX introduced it in (Sin from 7, not 1):
// a model that uses an op before it existed gets no cost, as ONNX gives it no schema.
TEST(OpRecords, EveryRecordStartsWhereTheOpIsDefined) {
  for (const auto& rule : all_rules()) {
    const OpKey& key = rule.key;
    SCOPED_TRACE(key.domain + "::" + key.op_type);
    auto newer = kFirstOpsetNotInOnnx112.find({key.domain, key.op_type});
    const int onnx_first = onnx_first_opset(key.op_type, key.domain);
    if (auto older = kOlderThanOnnx.find({key.domain, key.op_type}); older != kOlderThanOnnx.end()) {
      EXPECT_EQ(key.since_version, older->second);
      EXPECT_LT(older->second, onnx_first) << "listed as older than ONNX but starts where ONNX does";
    } else if (onnx_first > 0) {
      EXPECT_EQ(key.since_version, onnx_first) << "ONNX defines the op from opset " << onnx_first;
      EXPECT_EQ(newer, kFirstOpsetNotInOnnx112.end()) << "listed as newer than ONNX 1.12 but ONNX 1.12 has it";
    } else {
      ASSERT_NE(newer, kFirstOpsetNotInOnnx112.end())
          << "unknown to ONNX 1.12: add its first opset to kFirstOpsetNotInOnnx112 from the spec";
      EXPECT_EQ(key.since_version, newer->second);
    }
  }
}

TEST(OpRecords, FindOpIgnoresTheOpsetAndNormalisesTheDomain) {
  const cost::OpRecord* sin = cost::find_op("ai.onnx", "Sin");
  ASSERT_NE(sin, nullptr);
  EXPECT_EQ(sin->key.since_version, 7);
  EXPECT_EQ(find_rule("", "Sin", 6), nullptr) << "Sin does not exist before opset 7";
  EXPECT_EQ(find_rule("", "Sin", 7), sin);
  EXPECT_EQ(cost::find_op("", "NoSuchOp"), nullptr);
  EXPECT_TRUE(cost::domain_has_records(""));
  EXPECT_FALSE(cost::domain_has_records("com.example"));
}

// Shape-value folding runs on default-domain nodes only (shape_values.hpp).
TEST(OpRecords, OnlyDefaultDomainOpsFold) {
  size_t folding = 0;
  for (const auto& rule : all_rules())
    if (rule.fold) {
      ++folding;
      EXPECT_TRUE(rule.key.domain.empty()) << rule.key.op_type;
    }
  EXPECT_GE(folding, 40u) << "the shape-value evaluator folds ~45 ops";
}

Node node_of(const std::string& op, const std::string& domain = "") {
  Node n;
  n.op_type = op;
  n.domain = domain;
  return n;
}

// What fit and the trainable-weight rule ask, answered from the records
// (docs/FIT.md "Activations"; PyTorch autograd's saved tensors).
TEST(OpRecords, TraitsOfKnownOps) {
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"}) {
    EXPECT_TRUE(op_output_is_view(node_of(op))) << op;
    EXPECT_EQ(op_backward_saves(node_of(op)), BackwardSaves::Nothing) << op;
  }
  for (const char* op : {"Transpose", "Slice", "Relu", "Conv", "Add"})
    EXPECT_FALSE(op_output_is_view(node_of(op))) << op;
  for (const char* op : {"Add", "Sub", "Mul", "Relu", "Clip"}) EXPECT_TRUE(op_may_run_in_place(node_of(op))) << op;
  for (const char* op : {"Div", "Sigmoid", "Conv", "Reshape"}) EXPECT_FALSE(op_may_run_in_place(node_of(op))) << op;
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Sqrt", "Softmax", "LogSoftmax", "Reciprocal"})
    EXPECT_EQ(op_backward_saves(node_of(op)), BackwardSaves::Output) << op;
  for (const char* op : {"Add", "Sub", "Neg", "Sum", "Concat", "Split", "Slice", "Transpose", "Pad", "Expand",
                         "Tile", "Cast", "ReduceSum", "ReduceMean", "GlobalAveragePool", "Shape", "Size",
                         "Constant", "ConstantOfShape", "Gather"})
    EXPECT_EQ(op_backward_saves(node_of(op)), BackwardSaves::Nothing) << op;
  for (const char* op : {"Conv", "MatMul", "Mul", "Div", "Pow", "Clip", "Gelu", "Erf", "MaxPool", "LayerNormalization"})
    EXPECT_EQ(op_backward_saves(node_of(op)), BackwardSaves::Inputs) << op;
  // An op without a record keeps its inputs and is neither a view nor in place.
  EXPECT_EQ(op_backward_saves(node_of("Relu", "com.example")), BackwardSaves::Inputs);
  EXPECT_FALSE(op_output_is_view(node_of("Reshape", "com.example")));
  EXPECT_FALSE(op_may_run_in_place(node_of("Add", "com.example")));
}

TEST(OpRecords, ConstantInputsOfKnownOps) {
  Graph g;
  auto tensor = [&](std::vector<int64_t> dims) {
    Tensor t;
    t.shape.rank_known = true;
    for (int64_t d : dims) t.shape.dims.push_back(Dim{d, {}});
    g.tensors.push_back(t);
    return int(g.tensors.size()) - 1;
  };
  const int x = tensor({1, 8}), scalar = tensor({}), vec = tensor({8});
  auto node = [&](const char* op, std::vector<int> inputs) {
    Node n = node_of(op);
    n.inputs = std::move(inputs);
    return n;
  };
  const Node bn = node("BatchNormalization", {x, vec, vec, vec, vec});
  for (size_t k = 0; k < 5; ++k) EXPECT_EQ(op_input_is_constant(g, bn, k), k == 3 || k == 4) << k;
  const Node clip = node("Clip", {x, scalar, scalar});
  EXPECT_FALSE(op_input_is_constant(g, clip, 0));
  EXPECT_TRUE(op_input_is_constant(g, clip, 1));
  EXPECT_TRUE(op_input_is_constant(g, clip, 2));
  EXPECT_TRUE(op_input_is_constant(g, node("Pow", {x, vec}), 1));
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    EXPECT_TRUE(op_input_is_constant(g, node(op, {x, scalar}), 1)) << op << ": a one-element operand";
    EXPECT_FALSE(op_input_is_constant(g, node(op, {x, vec}), 1)) << op << ": a bias";
  }
  EXPECT_FALSE(op_input_is_constant(g, node("Conv", {x, vec, vec}), 1));
  EXPECT_FALSE(op_input_is_constant(g, node("LayerNormalization", {x, vec, vec}), 1));
  // MatMulNBits: its quantised weight, scales, zero points and g_idx are not trained; its bias is.
  Node nbits = node("MatMulNBits", {x, vec, vec, vec, vec, vec});
  nbits.domain = "com.microsoft";
  for (size_t k = 0; k < 6; ++k) EXPECT_EQ(op_input_is_constant(g, nbits, k), k >= 1 && k <= 4) << k;
  EXPECT_EQ(op_packed_weight_bits(nbits, 1), 4) << "bits defaults to 4";
  EXPECT_EQ(op_packed_weight_bits(nbits, 2), 0);
  nbits.attributes["bits"] = int64_t(2);
  EXPECT_EQ(op_packed_weight_bits(nbits, 1), 2);
}

TEST(OpRecords, ConvPoolWeightInputs) {
  const std::map<std::string, int> expected = {{"Conv", 1},    {"ConvTranspose", 1}, {"ConvInteger", 1},
                                               {"QLinearConv", 3}, {"MaxPool", -1},     {"AveragePool", -1},
                                               {"LpPool", -1},     {"FusedConv", 1}};
  for (const auto& rule : all_rules()) {
    auto it = expected.find(rule.key.op_type);
    EXPECT_EQ(rule.traits.conv_pool_weight_input, it == expected.end() ? cost::OpTraits::kNotConvPool : it->second)
        << rule.key.op_type;
  }
}

// A one-node model of `domain`.`op` on a float [2, 3] input, importing
// ai.onnx 17 and the op's domain at version 1.
std::string one_node_model(const std::string& domain, const std::string& op) {
  onnx::ModelProto m = test::new_model(17, domain);
  onnx::GraphProto* g = m.mutable_graph();
  test::value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
  test::add_node(g, op, {"x"}, {"y"})->set_domain(domain);
  g->add_output()->set_name("y");
  return m.SerializeAsString();
}

// A contrib-domain op with a record loads without --allow-custom-domains and
// is costed like any op (its shape comes from the record: ONNX has no schema);
// an op of that domain without a record is refused as an unknown domain is.
TEST(OpRecords, ContribOpWithARecordIsKnown) {
  const std::string known = one_node_model("com.microsoft", "QuickGelu");
  const AnalysisResult r = analyze_buffer(known.data(), known.size(), LoadOptions{});
  EXPECT_EQ(r.totals.nodes_exact, 1);
  EXPECT_EQ(r.totals.flops, 6 * 6) << "6 per element of the [2, 3] output";
  const std::string unknown = one_node_model("com.microsoft", "NoSuchContribOp");
  EXPECT_THROW(analyze_buffer(unknown.data(), unknown.size(), LoadOptions{}), Error);
  LoadOptions allow;
  allow.allow_custom_domains = true;
  EXPECT_EQ(analyze_buffer(unknown.data(), unknown.size(), allow).totals.nodes_unknown_op, 1);
}

// fit prices Conv on the Conv classes and Gemm/MatMul on the Gemm classes; no other op.
TEST(OpRecords, DenseFamilies) {
  for (const auto& rule : all_rules()) {
    const std::string& op = rule.key.op_type;
    // ONNX Runtime's fused contractions are priced as the contraction they fuse.
    const DenseFamily want =
        op == "Conv" || op == "FusedConv" ? DenseFamily::Conv
        : op == "Gemm" || op == "MatMul" || op == "FusedGemm" || op == "FusedMatMul" || op == "MatMulNBits"
            ? DenseFamily::Gemm
            : DenseFamily::None;
    EXPECT_EQ(int(rule.traits.dense_family), int(want)) << op;
  }
  EXPECT_EQ(op_dense_family(node_of("MatMul")), DenseFamily::Gemm);
  EXPECT_EQ(op_dense_family(node_of("Conv", "com.example")), DenseFamily::None);
}

// LayerNormalization at opset 13, as ONNX Runtime's transformer optimizer writes
// it (its contrib op in the ONNX domain, opsets 1-16): costed, its shape carried.
TEST(OpRecords, OnnxRuntimeLayerNormalizationBeforeOpset17IsKnown) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto add_input = [&](const std::string& name, std::vector<int64_t> dims) {
    auto* v = g->add_input();
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  };
  add_input("x", {2, 3});
  add_input("scale", {3});
  add_input("bias", {3});
  auto* n = g->add_node();
  n->set_op_type("LayerNormalization");
  n->set_name("ln");
  for (const char* in : {"x", "scale", "bias"}) n->add_input(in);
  n->add_output("y");
  g->add_output()->set_name("y");
  const std::string bytes = m.SerializeAsString();
  const AnalysisResult r = analyze_buffer(bytes.data(), bytes.size(), LoadOptions{});
  EXPECT_EQ(r.totals.nodes_exact, 1);
  EXPECT_EQ(r.totals.flops, 8 * 6) << "8 per element of the [2, 3] output";
}

// ---- docs/COST_MODEL.md "Op records" -------------------------------------

const char* const kTableBegin = "<!-- op-records:begin (generated by tests/analyzer/registry_test.cc) -->";
const char* const kTableEnd = "<!-- op-records:end -->";

std::string traits_text(const cost::OpRecord& r) {
  std::vector<std::string> t;
  if (r.traits.view) t.push_back("view");
  if (r.traits.may_run_in_place) t.push_back("in place");
  if (r.traits.backward_saves == BackwardSaves::Output) t.push_back("backward saves output");
  if (r.traits.backward_saves == BackwardSaves::Nothing && !r.traits.view) t.push_back("backward saves nothing");
  for (int k = 0; k < 32; ++k)
    if ((r.traits.constant_inputs >> k) & 1u) t.push_back("input " + std::to_string(k) + " constant");
  if (r.traits.scalar_operands_constant) t.push_back("1-element operand constant");
  if (r.traits.conv_pool_weight_input >= 0)
    t.push_back("weight input " + std::to_string(r.traits.conv_pool_weight_input));
  if (r.traits.same_shape_as_input) t.push_back("output shape = input 0");
  if (r.traits.shape_rule) t.push_back("shape rule");
  if (r.traits.packed_weight_input >= 0)
    t.push_back("input " + std::to_string(r.traits.packed_weight_input) + " packed bits-bit weights");
  if (r.traits.dense_family == DenseFamily::Conv) t.push_back("dense: Conv classes");
  if (r.traits.dense_family == DenseFamily::Gemm) t.push_back("dense: Gemm classes");
  if (r.fold) t.push_back("folds constants");
  std::string out;
  for (const auto& s : t) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// The table of every record, in registry order: what `modelstat ops` prints, plus the traits.
std::string record_table() {
  std::ostringstream out;
  out << kTableBegin << "\n\n| Op | Opsets | Traits | Rule |\n|---|---|---|---|\n";
  for (const auto& r : all_rules()) {
    std::string doc = r.doc;
    for (size_t p = 0; (p = doc.find('|', p)) != std::string::npos; p += 2) doc.replace(p, 1, "\\|");
    out << "| " << (r.key.domain.empty() ? "" : r.key.domain + ".") << r.key.op_type << " | " << r.key.since_version
        << (r.key.until_version == std::numeric_limits<int64_t>::max() ? std::string("+")
                                                                        : "-" + std::to_string(r.key.until_version))
        << " | " << traits_text(r) << " | " << doc << " |\n";
  }
  out << "\n" << kTableEnd;
  return out.str();
}

// docs/COST_MODEL.md carries the records' table between two markers; it is
// regenerated with MODELSTAT_UPDATE_GOLDEN=1 and must otherwise match.
TEST(OpRecords, CostModelDocListsEveryRecord) {
  const std::string path = std::string(MODELSTAT_SOURCE_DIR) + "/docs/COST_MODEL.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream buf;
  buf << in.rdbuf();
  std::string doc = buf.str();
  const size_t begin = doc.find(kTableBegin), end = doc.find(kTableEnd);
  ASSERT_NE(begin, std::string::npos) << "no '" << kTableBegin << "' in " << path;
  ASSERT_NE(end, std::string::npos) << "no '" << kTableEnd << "' in " << path;
  const std::string current = doc.substr(begin, end + std::string(kTableEnd).size() - begin);
  const std::string expected = record_table();
  if (current != expected && std::getenv("MODELSTAT_UPDATE_GOLDEN")) {
    doc.replace(begin, current.size(), expected);
    std::ofstream(path) << doc;
    return;
  }
  EXPECT_EQ(current, expected) << "docs/COST_MODEL.md's op-record table is stale: run MODELSTAT_UPDATE_GOLDEN=1 "
                                  "./build/tests/modelstat_tests --gtest_filter='OpRecords.*'";
}

}  // namespace
}  // namespace modelstat

// The cost-rule registry: no overlapping keys, documented rules, domain
// normalisation, and coverage of the ONNX operator set.
#include <gtest/gtest.h>

#include <map>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "analyzer/cost/cost_rule.hpp"

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

// Every op seen in torchvision classifiers, BERT, GPT-2 and YOLO exports.
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
    for (int64_t opset : {7, 11, 13, 17}) EXPECT_NE(find_rule("", op, opset), nullptr) << op << " at opset " << opset;
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

}  // namespace
}  // namespace modelstat

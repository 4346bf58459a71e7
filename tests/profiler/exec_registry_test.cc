// The executor registry against the op records: every op the analyzer costs
// can be run over the same opset range, or is listed as analysis-only with a
// reason; no op is both; no two executors claim the same (domain, op, opset).
#include <gtest/gtest.h>
#include <onnx/defs/schema.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "analyzer/cost/cost_rule.hpp"
#include "profiler/op_cost_probe.hpp"
#include "profiler/ops/exec_rule.hpp"

namespace modelstat::profiler {
namespace {

bool has_any_executor(const OpKey& key) {
  for (const auto& rule : all_executors())
    if (rule.key.domain == key.domain && rule.key.op_type == key.op_type) return true;
  return false;
}

const AnalysisOnlyOp* analysis_only(const std::string& op) {
  for (const auto& a : analysis_only_ops())
    if (op == a.op_type) return &a;
  return nullptr;
}

TEST(ExecRegistry, EveryCostedOpRunsOrIsAnalysisOnly) {
  // At every opset from 7 to 17 where ONNX (1.12's schema registry) defines
  // the op and has not deprecated it, it must have an executor.
  std::vector<std::string> missing;
  for (const auto& rule : cost::all_rules()) {
    const OpKey& key = rule.key;
    if (analysis_only(key.op_type)) continue;
    for (int v = int(std::max<int64_t>(key.since_version, 7)); v <= 17 && v <= key.until_version; ++v) {
      const auto* schema = onnx::OpSchemaRegistry::Schema(key.op_type, v, key.domain);
      if (!schema || schema->Deprecated()) continue;
      if (find_executor(key.domain, key.op_type, v)) continue;
      missing.push_back(key.op_type + "@" + std::to_string(v));
      break;
    }
  }
  EXPECT_TRUE(missing.empty()) << "ops with a cost rule but neither an executor nor an analysis-only entry: "
                               << ::testing::PrintToString(missing);
}

TEST(ExecRegistry, AnalysisOnlyOpsHaveReasonsAndNoExecutor) {
  std::set<std::string> seen;
  for (const auto& a : analysis_only_ops()) {
    EXPECT_TRUE(seen.insert(a.op_type).second) << a.op_type << " listed twice";
    EXPECT_TRUE(a.reason && *a.reason) << a.op_type << " has no reason";
    EXPECT_FALSE(has_any_executor(OpKey{"", a.op_type})) << a.op_type << " is analysis-only but has an executor";
    EXPECT_NE(cost::find_rule("", a.op_type, 17), nullptr) << a.op_type << " is analysis-only but has no cost rule";
  }
}

TEST(ExecRegistry, NoOverlappingOpsetRanges) {
  std::map<std::pair<std::string, std::string>, std::vector<const ExecRule*>> by_op;
  for (const auto& rule : all_executors()) by_op[{rule.key.domain, rule.key.op_type}].push_back(&rule);
  for (const auto& [op, rules] : by_op)
    for (size_t i = 0; i < rules.size(); ++i)
      for (size_t j = i + 1; j < rules.size(); ++j) {
        const OpKey &a = rules[i]->key, &b = rules[j]->key;
        EXPECT_TRUE(a.until_version < b.since_version || b.until_version < a.since_version)
            << op.second << ": opset ranges [" << a.since_version << ", " << a.until_version << "] and ["
            << b.since_version << ", " << b.until_version << "] overlap";
      }
}

TEST(ExecRegistry, EveryExecutorHasACostRule) {
  // An executor without a cost rule would time a node the join cannot explain.
  for (const auto& rule : all_executors())
    EXPECT_NE(cost::find_rule(rule.key.domain, rule.key.op_type, std::max<int64_t>(rule.key.since_version, 7)),
              nullptr)
        << rule.key.op_type << " has an executor but no cost rule";
}

// Merged [since, until] ranges of the keys of one (domain, op).
using Ranges = std::vector<std::pair<int64_t, int64_t>>;
Ranges merged(Ranges r) {
  std::sort(r.begin(), r.end());
  Ranges out;
  for (const auto& [a, b] : r)
    if (!out.empty() && out.back().second != std::numeric_limits<int64_t>::max() && a == out.back().second + 1)
      out.back().second = b;
    else
      out.push_back({a, b});
  return out;
}

std::string text(const Ranges& r) {
  std::string out;
  for (const auto& [a, b] : r)
    out += "[" + std::to_string(a) + ", " +
           (b == std::numeric_limits<int64_t>::max() ? std::string("latest") : std::to_string(b)) + "] ";
  return out.empty() ? "none" : out;
}

// An op's record and its executor cover the same opsets: a model the analyzer
// costs runs, and nothing runs that the analyzer does not cost (Sin was costed
// from opset 1 and run from 7).
TEST(ExecRegistry, AnalyzerAndExecutorOpsetRangesAgree) {
  std::map<std::pair<std::string, std::string>, Ranges> costed, run;
  auto range = [](const OpKey& k) { return std::make_pair(k.since_version, k.until_version); };
  for (const auto& r : cost::all_rules()) costed[{r.key.domain, r.key.op_type}].push_back(range(r.key));
  for (const auto& r : all_executors()) run[{r.key.domain, r.key.op_type}].push_back(range(r.key));
  for (const auto& [op, ranges] : costed) {
    if (op.first.empty() && analysis_only(op.second)) continue;
    EXPECT_EQ(text(merged(ranges)), text(merged(run[op])))
        << op.first << "::" << op.second << ": the record's opsets and the executor's differ";
  }
  for (const auto& [op, ranges] : run)
    EXPECT_TRUE(costed.count(op)) << op.first << "::" << op.second << " runs but has no record";
}

// The device probe measures op classes named after an op ("Relu", "Conv/1x1"):
// each names an op with a record, and "Conv..."/"Gemm..." classes are the
// dense families the records give Conv and Gemm/MatMul.
TEST(ExecRegistry, ProbeClassesNameOpsWithRecords) {
  for (const std::string& key : op_cost_classes()) {
    const std::string op = key.substr(0, key.find('/'));
    const cost::OpRecord* record = cost::find_op("", op);
    ASSERT_NE(record, nullptr) << key;
    // The probe builds its graphs at opset 17, Gelu's at 20 (the op's first version).
    const int64_t opset = op == "Gelu" ? 20 : 17;
    EXPECT_NE(find_executor("", op, opset), nullptr) << key << " is measured through the executor";
    const DenseFamily want = op == "Conv" ? DenseFamily::Conv : op == "Gemm" ? DenseFamily::Gemm : DenseFamily::None;
    EXPECT_EQ(int(record->traits.dense_family), int(want)) << key;
  }
}

TEST(ExecRegistry, MyFamiliesAreComplete) {
  // The contraction, recurrent, normalization and pooling families run every
  // op they cost, at every opset from 7 to 18 where the op exists (RoiAlign
  // excepted, documented in analysis_only_ops()).
  for (const char* op : {"Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "Gemm", "MatMul", "MatMulInteger",
                         "QLinearMatMul", "Einsum", "Det", "LSTM", "GRU", "RNN", "BatchNormalization",
                         "InstanceNormalization", "LayerNormalization", "GroupNormalization",
                         "MeanVarianceNormalization", "LpNormalization", "LRN", "MaxPool", "AveragePool", "LpPool",
                         "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool", "MaxUnpool", "GridSample", "Resize",
                         "Upsample"})
    for (int64_t v = 7; v <= 18; ++v) {
      ASSERT_NE(cost::find_op("", op), nullptr) << op;
      if (!cost::find_rule("", op, v)) continue;
      EXPECT_NE(find_executor("", op, v), nullptr) << op << " opset " << v;
    }
}

}  // namespace
}  // namespace modelstat::profiler

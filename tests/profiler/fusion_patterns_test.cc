// One row per fusion pattern of the Rewrite kind (analyzer/fusion/patterns/):
// a small graph with the pattern written out the way exporters write it, the
// group the plan must make of it (pattern, head, members), and the function
// it computes in double. Each row checks the plan, the executor's group
// (fused_members, fused_kernel), and the fused and unfused outputs against
// the reference; a variant whose constants make it another function must
// not be planned. A new pattern of this kind is one file and one row here.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "analyzer/fusion/fusion_plan.hpp"
#include "profiler/executor.hpp"
#include "tests/profiler/ir_model.hpp"

namespace modelstat::profiler {
namespace {

at::Tensor randn(const std::vector<int64_t>& dims, uint64_t seed) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::randn(dims, gen, at::TensorOptions().dtype(at::kFloat));
}

struct PatternRow {
  const char* pattern;
  int64_t opset;
  // Builds the graph on input x (shape {2, 3, 17}): returns its output.
  // `exact` false: the same structure with a constant that makes it another
  // function (must not be planned).
  std::function<int(IrModel&, int x, bool exact)> build;
  int members;  // nodes the group absorbs (the head is node 0)
  std::function<at::Tensor(const at::Tensor&)> reference;  // the exact function, in double
  std::function<at::Tensor(const at::Tensor&)> variant_reference;  // the variant's, in double
};

int scalar(IrModel& m, const std::string& name, float v) { return m.weight(name, at::full({}, v)); }

// batch_norm_relu at `opset`, the mode given by attribute `mode` (its value
// `inference` for the exact row, the other one, training, for the variant).
PatternRow batch_norm_relu_row(int64_t opset, const char* mode, int64_t inference) {
  auto c = [](std::vector<double> v) { return at::tensor(v, at::kDouble).reshape({1, 3, 1}); };
  auto normalised = [c](const at::Tensor& x, const at::Tensor& mean, const at::Tensor& var) {
    return at::relu((x - mean) / at::sqrt(var + 1e-3) * c({0.5, 1.5, -2.0}) + c({0.1, -0.3, 0.2}));
  };
  return {"batch_norm_relu", opset,
          [mode, inference](IrModel& m, int x, bool exact) {
            const int scale = m.weight("scale", at::tensor({0.5f, 1.5f, -2.f}));
            const int bias = m.weight("bias", at::tensor({0.1f, -0.3f, 0.2f}));
            const int mean = m.weight("mean", at::tensor({0.2f, -0.1f, 0.05f}));
            const int var = m.weight("var", at::tensor({1.f, 0.5f, 2.f}));
            const std::map<std::string, AttrValue> attrs{{"epsilon", 1e-3},
                                                         {mode, exact ? inference : 1 - inference}};
            return m.node("Relu", {m.node("BatchNormalization", {x, scale, bias, mean, var}, 1, attrs)[0]})[0];
          },
          1, [c, normalised](const at::Tensor& x) { return normalised(x, c({0.2, -0.1, 0.05}), c({1.0, 0.5, 2.0})); },
          [normalised](const at::Tensor& x) {
            const at::Tensor mean = x.mean(at::IntArrayRef{0, 2}, true);
            return normalised(x, mean, (x - mean).pow(2).mean(at::IntArrayRef{0, 2}, true));
          }};
}

const std::vector<PatternRow>& rows() {
  static const std::vector<PatternRow> table = {
      {"gelu", 13,
       [](IrModel& m, int x, bool exact) {
         const int d = m.node("Div", {x, scalar(m, "sqrt2", exact ? float(std::sqrt(2.0)) : 2.f)})[0];
         const int a = m.node("Add", {m.node("Erf", {d})[0], scalar(m, "one", 1.f)})[0];
         return m.node("Mul", {m.node("Mul", {x, a})[0], scalar(m, "half", 0.5f)})[0];
       },
       4, [](const at::Tensor& x) { return 0.5 * x * (1 + at::erf(x / std::sqrt(2.0))); },
       [](const at::Tensor& x) { return 0.5 * x * (1 + at::erf(x / 2.0)); }},
      {"layer_norm", 13,
       [](IrModel& m, int x, bool exact) {
         const std::map<std::string, AttrValue> last{{"axes", std::vector<int64_t>{-1}}};
         const int d = m.node("Sub", {x, m.node("ReduceMean", {x}, 1, last)[0]})[0];
         const int sq = m.node("Pow", {d, scalar(m, "two", exact ? 2.f : 4.f)})[0];
         const int var = m.node("ReduceMean", {sq}, 1, last)[0];
         const int s = m.node("Sqrt", {m.node("Add", {var, scalar(m, "eps", 1e-5f)})[0]})[0];
         return m.node("Div", {d, s})[0];
       },
       6,
       [](const at::Tensor& x) {
         const at::Tensor d = x - x.mean(-1, true);
         return d / at::sqrt((d * d).mean(-1, true) + 1e-5);
       },
       [](const at::Tensor& x) {
         const at::Tensor d = x - x.mean(-1, true);
         return d / at::sqrt((d * d * d * d).mean(-1, true) + 1e-5);
       }},
      {"hard_swish", 13,
       [](IrModel& m, int x, bool exact) {
         const std::map<std::string, AttrValue> attrs{{"alpha", exact ? 1.0 / 6.0 : 0.2}, {"beta", 0.5}};
         return m.node("Mul", {x, m.node("HardSigmoid", {x}, 1, attrs)[0]})[0];
       },
       1, [](const at::Tensor& x) { return x * at::clamp(x / 6.0 + 0.5, 0.0, 1.0); },
       [](const at::Tensor& x) { return x * at::clamp(x * 0.2 + 0.5, 0.0, 1.0); }},
      // The variant is a training-mode BatchNormalization (batch statistics):
      // another function, run as written. Opset 15 says it with training_mode;
      // opset 6 with is_test (1: inference, which the group's node keeps).
      batch_norm_relu_row(15, "training_mode", 0),
      batch_norm_relu_row(6, "is_test", 1),
  };
  return table;
}

void expect_close(const at::Tensor& actual, const at::Tensor& expected, const std::string& what) {
  const at::Tensor ok = at::isfinite(expected);
  const at::Tensor a = actual.to(at::kDouble).masked_select(ok), e = expected.masked_select(ok);
  const double scale = std::max(1.0, e.abs().max().item<double>());
  EXPECT_LE((a - e).abs().max().item<double>(), 2e-5 * scale) << what;
}

TEST(FusionPatterns, EachRewritePatternIsPlannedRunsAsOneKernelAndComputesItsFunction) {
  for (const PatternRow& row : rows()) {
    for (const bool exact : {true, false}) {
      const std::string what = std::string(row.pattern) + (exact ? "" : " (variant)");
      IrModel m;
      m.model.opsets = {{"", row.opset}};
      const int x = m.input("x", {2, 3, 17});
      m.output(row.build(m, x, exact));
      const FusionPlan plan =
          plan_fusion(m.model.graph, m.model, inference_fusion_options(true, true, true, false, false));
      ASSERT_EQ(plan.count(row.pattern), exact ? 1 : 0) << what;
      Executor fused(m.model, ExecOptions{});
      if (exact) {
        ASSERT_NE(plan.headed_by(0), nullptr) << what;
        EXPECT_EQ(plan.headed_by(0)->members.size(), size_t(row.members)) << what;
        EXPECT_EQ(fused.fused_members(0).size(), size_t(row.members)) << what;
        EXPECT_FALSE(fused.fused_kernel(0).empty()) << what;
      } else {
        EXPECT_TRUE(fused.fused_members(0).empty()) << what;
      }
      ExecOptions off;
      off.fuse_cpu = false;
      Executor unfused(m.model, off);
      const at::Tensor xv = randn({2, 3, 17}, 7) * 2;
      const at::Tensor expected = (exact ? row.reference : row.variant_reference)(xv.to(at::kDouble));
      expect_close(fused.run({xv})[0], expected, what + " fused");
      expect_close(unfused.run({xv})[0], expected, what + " as written");
    }
  }
}

// transpose_matmul: a Transpose swapping the last two axes, read by one
// MatMul alone, runs inside the MatMul (FusedMatMul transA / transB); the
// group's head is the MatMul, its member the Transpose before it. Another
// permutation, or a second reader of the transposed tensor, leaves both as
// written.
TEST(FusionPatterns, ATransposeOfTheLastTwoAxesRunsInsideItsMatMul) {
  // UnknownRank: B's case where shape inference lost the operand's shape
  // (a decoder's cache past a dynamic Concat): perm's length gives the rank.
  enum class Case { B, A, OtherPerm, SecondReader, UnknownRank };
  for (const Case c : {Case::B, Case::A, Case::OtherPerm, Case::SecondReader, Case::UnknownRank}) {
    const std::string what = "case " + std::to_string(int(c));
    IrModel m;
    m.model.opsets = {{"", 13}};
    const int x = m.input("x", {2, 3, 17});
    if (c == Case::UnknownRank) m.model.graph.tensors[size_t(x)].shape = Shape{};
    const std::vector<int64_t> perm = c == Case::OtherPerm ? std::vector<int64_t>{1, 0, 2} : std::vector<int64_t>{0, 2, 1};
    const int t = m.node("Transpose", {x}, 1, {{"perm", perm}})[0];
    const int y = c == Case::A ? m.node("MatMul", {t, x})[0] : c == Case::OtherPerm ? m.node("MatMul", {t, t})[0]
                                                                                 : m.node("MatMul", {x, t})[0];
    m.output(y);
    if (c == Case::SecondReader) m.output(t);
    const FusionPlan plan = plan_fusion(m.model.graph, m.model, inference_fusion_options(true, true, true, false, false));
    const bool fused_case = c == Case::A || c == Case::B || c == Case::UnknownRank;
    ASSERT_EQ(plan.count("transpose_matmul"), fused_case ? 1 : 0) << what;
    Executor fused(m.model, ExecOptions{});
    ExecOptions off;
    off.fuse_cpu = false;
    Executor unfused(m.model, off);
    if (fused_case) {
      ASSERT_NE(plan.headed_by(1), nullptr) << what;
      EXPECT_EQ(plan.headed_by(1)->members, std::vector<int>{0}) << what;
      EXPECT_TRUE(plan.absorbed[0]) << what;
      EXPECT_EQ(fused.fused_members(1).size(), 1u) << what;
    } else {
      EXPECT_TRUE(fused.fused_members(1).empty()) << what;
    }
    const at::Tensor xv = randn({2, 3, 17}, 11);
    const at::Tensor xd = xv.to(at::kDouble);
    // x x^T (2 x 3 x 3), x^T x (2 x 17 x 17); perm (1, 0, 2) of a 2 x 3 x 17 is 3 x 2 x 17, squared by
    // MatMul only where shapes allow: here [3, 2, 17] x [3, 2, 17] does not, so that case checks the plan only.
    if (c == Case::OtherPerm) continue;
    const at::Tensor expected = c == Case::A ? at::matmul(xd.transpose(1, 2), xd) : at::matmul(xd, xd.transpose(1, 2));
    expect_close(fused.run({xv})[0], expected, what + " fused");
    expect_close(unfused.run({xv})[0], expected, what + " as written");
  }
}

}  // namespace
}  // namespace modelstat::profiler

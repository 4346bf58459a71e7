// verify's criterion (include/modelstat/verification.hpp) on a whole model,
// against a reference computed here in double: a correct result that the
// elementwise criterion fails (outputs that cancel) passes within the
// model's own rounding sensitivity; a deliberately wrong kernel (a mutation
// of the Softmax executor) and a wrong decision (an argmax) fail.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "profiler/ops/exec_rule.hpp"
#include "profiler/verify.hpp"
#include "test_support.hpp"
#include "tests/profiler/onnx_builder.hpp"
#include "tests/profiler/verify_summary.hpp"

namespace modelstat::profiler {
namespace {

namespace fs = std::filesystem;

at::Tensor randn(const std::vector<int64_t>& dims, uint64_t seed, double scale) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::randn(dims, gen, at::TensorOptions().dtype(at::kFloat)) * scale;
}

onnx::TensorProto proto_of(const at::Tensor& t, const std::string& name = {}) {
  onnx::TensorProto p;
  p.set_name(name);
  const at::Tensor c = t.contiguous();
  p.set_data_type(c.scalar_type() == at::kLong ? onnx::TensorProto::INT64 : onnx::TensorProto::FLOAT);
  for (int64_t d : c.sizes()) p.add_dims(d);
  p.set_raw_data(std::string(static_cast<const char*>(c.data_ptr()), size_t(c.nbytes())));
  return p;
}

void write(const fs::path& path, const std::string& bytes) { modelstat::test::write_file(path.string(), bytes); }

// x [32, 128] -> a = x @ W, b = x @ (W + 1e-4 d); outputs z = b - a (which
// cancels: each term ~45, the difference ~0.005), p = Softmax(a) and
// cls = ArgMax(a). Expected outputs: the same arithmetic in double.
struct CancellingModel {
  at::Tensor x = randn({32, 128}, 1, 4.0), w = randn({128, 64}, 2, 1.0), w2 = w + randn({128, 64}, 3, 1e-4);

  fs::path write_case(const std::string& name, bool wrong_decision) const {
    const fs::path dir = fs::path(testing::TempDir()) / ("modelstat_verify_criterion_" + name);
    fs::remove_all(dir);
    onnx::ModelProto m = test::new_model(13);
    onnx::GraphProto* g = m.mutable_graph();
    test::value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {32, 128});
    *g->add_initializer() = proto_of(w, "w");
    *g->add_initializer() = proto_of(w2, "w2");
    test::add_node(g, "MatMul", {"x", "w"}, {"a"});
    test::add_node(g, "MatMul", {"x", "w2"}, {"b"});
    test::add_node(g, "Sub", {"b", "a"}, {"z"});
    test::int_attr(test::add_node(g, "Softmax", {"a"}, {"p"}), "axis", -1);
    onnx::NodeProto* argmax = test::add_node(g, "ArgMax", {"a"}, {"cls"});
    test::int_attr(argmax, "axis", 1);
    test::int_attr(argmax, "keepdims", 0);
    test::value_info(g->add_output(), "z", onnx::TensorProto::FLOAT, {32, 64});
    test::value_info(g->add_output(), "p", onnx::TensorProto::FLOAT, {32, 64});
    test::value_info(g->add_output(), "cls", onnx::TensorProto::INT64, {32});
    fs::create_directories(dir);
    test::save_model(m, (dir / "model.onnx").string());
    const at::Tensor a = at::matmul(x.to(at::kDouble), w.to(at::kDouble));
    const at::Tensor b = at::matmul(x.to(at::kDouble), w2.to(at::kDouble));
    at::Tensor cls = a.argmax(1);
    if (wrong_decision) cls[5] = (cls[5].item<int64_t>() + 1) % 64;
    write(dir / "test_data_set_0" / "input_0.pb", proto_of(x).SerializeAsString());
    write(dir / "test_data_set_0" / "output_0.pb", proto_of((b - a).to(at::kFloat)).SerializeAsString());
    write(dir / "test_data_set_0" / "output_1.pb", proto_of(at::softmax(a, -1).to(at::kFloat)).SerializeAsString());
    write(dir / "test_data_set_0" / "output_2.pb", proto_of(cls).SerializeAsString());
    return dir;
  }
};

TEST(VerifyCriterion, CorrectCancellingOutputsPassWithinTheModelsRoundingSensitivity) {
  const CancellingModel model;
  const fs::path dir = model.write_case("correct", false);
  const VerifyRecord r = verify_case(dir.string());
  EXPECT_EQ(r.mode, "model");
  ASSERT_EQ(r.outputs.size(), 3u) << summary(r);
  const OutputCheck& z = r.outputs[0];
  EXPECT_GT(z.outside, 0) << "the elementwise criterion alone fails the cancelling output: " << summary(r);
  EXPECT_LT(z.norm_rel_err, 1e-2) << summary(r);
  EXPECT_TRUE(z.judged);
  EXPECT_TRUE(z.explained) << summary(r);
  ASSERT_TRUE(z.sensitivity.has_value());
  EXPECT_GT(*z.sensitivity, 0.0);
  EXPECT_EQ(r.exit_code, 0) << summary(r);
  EXPECT_EQ(r.verdict, r.outside > 0 ? "pass (rounding sensitivity)" : "pass");
  // ONNX's elementwise criterion alone fails the same result.
  VerifyOptions elementwise;
  elementwise.criterion = VerifyCriterion::Elementwise;
  EXPECT_EQ(verify_case(dir.string(), elementwise).exit_code, 1);
}

// A mutation: Softmax computed at a temperature 0.1% off, as a kernel with
// a wrong constant would. Verify must fail it, however sensitive the model.
void wrong_softmax(ExecContext& ctx) { ctx.outputs = {at::softmax(ctx.input(0) * 1.001, -1)}; }

TEST(VerifyCriterion, ADeliberatelyWrongKernelFails) {
  const CancellingModel model;
  const fs::path dir = model.write_case("mutated", false);
  auto* rule = const_cast<ExecRule*>(find_executor("", "Softmax", 13));
  ASSERT_NE(rule, nullptr);
  const ExecFn original = rule->fn;
  rule->fn = wrong_softmax;
  const VerifyRecord r = verify_case(dir.string());
  rule->fn = original;
  ASSERT_EQ(r.outputs.size(), 3u) << summary(r);
  const OutputCheck& p = r.outputs[1];
  EXPECT_GT(p.outside, 0) << summary(r);
  EXPECT_TRUE(p.judged);
  EXPECT_FALSE(p.explained) << summary(r);
  EXPECT_EQ(r.exit_code, 1) << summary(r);
  EXPECT_EQ(r.verdict, "fail");
  // With the kernel restored, the same case passes.
  EXPECT_EQ(verify_case(dir.string()).exit_code, 0);
}

TEST(VerifyCriterion, AWrongDecisionIsADecisionFlipNoRerunMakes) {
  const CancellingModel model;
  const VerifyRecord r = verify_case(model.write_case("wrong_decision", true).string());
  ASSERT_EQ(r.outputs.size(), 3u) << summary(r);
  const OutputCheck& cls = r.outputs[2];
  EXPECT_TRUE(cls.exact);
  EXPECT_EQ(cls.decision_flips, 1);
  EXPECT_EQ(cls.flips_reproduced, 0);
  EXPECT_FALSE(cls.explained);
  EXPECT_NE(cls.why.find("decision flip"), std::string::npos) << cls.why;
  EXPECT_EQ(r.exit_code, 1);
}

}  // namespace
}  // namespace modelstat::profiler

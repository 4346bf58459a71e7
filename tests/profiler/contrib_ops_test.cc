// Executors of ONNX Runtime's contrib ops (com.microsoft), its ONNX-domain
// SimplifiedLayerNormalization and ONNX's RMSNormalization (opset 23): each
// node run through find_executor and compared with a reference composed here
// of plain ATen ops from the op's spec (bench/contrib_misc_cases.py checks
// the same ops against ONNX Runtime itself).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "modelstat/error.hpp"
#include "modelstat/graph.hpp"
#include "profiler/exec_support.hpp"
#include "profiler/ops/exec_rule.hpp"

namespace modelstat::profiler {
namespace {

using test::Attrs;
constexpr const char* kMs = "com.microsoft";

// Runs one node of `domain`.`op` at `opset`; undefined inputs are omitted optional inputs.
std::vector<at::Tensor> run(const std::string& op, std::vector<at::Tensor> inputs, Attrs attrs = {},
                            int num_outputs = 1, const std::string& domain = kMs, int64_t opset = 1) {
  return test::run_node(domain, op, opset, std::move(inputs), std::move(attrs), num_outputs);
}

void expect_close(const at::Tensor& got, const at::Tensor& want, double atol = 1e-5) {
  ASSERT_TRUE(got.defined());
  EXPECT_EQ(got.scalar_type(), want.scalar_type());
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_TRUE(at::allclose(got, want, 1e-5, atol)) << (got - want).abs().max();
}

at::Tensor randn(std::vector<int64_t> shape) {
  return at::randn(shape, at::kFloat);
}

class ContribOps : public ::testing::Test {
 protected:
  void SetUp() override { at::manual_seed(7); }
};

// Layer norm over the last dim, by its definition.
at::Tensor layer_norm_ref(const at::Tensor& s, const at::Tensor& gamma, const at::Tensor& beta, double eps,
                          at::Tensor* mean_out = nullptr, at::Tensor* inv_out = nullptr) {
  const at::Tensor mean = s.mean({-1}, true);
  const at::Tensor var = (s - mean).pow(2).mean({-1}, true);
  const at::Tensor inv = 1.0 / at::sqrt(var + eps);
  if (mean_out) *mean_out = mean;
  if (inv_out) *inv_out = inv;
  at::Tensor y = (s - mean) * inv * gamma;
  return beta.defined() ? y + beta : y;
}

TEST_F(ContribOps, SkipLayerNormalizationAddsSkipAndBiasThenNormalises) {
  const at::Tensor x = randn({2, 3, 8}), gamma = randn({8}), beta = randn({8}), bias = randn({8});
  for (const at::Tensor& skip : {randn({2, 3, 8}), randn({3, 8})}) {  // full, and broadcast over the batch
    const auto out = run("SkipLayerNormalization", {x, skip, gamma, beta, bias}, {{"epsilon", 1e-5}}, 4);
    const at::Tensor s = x + skip + bias;
    at::Tensor mean, inv;
    const at::Tensor y = layer_norm_ref(s, gamma, beta, 1e-5, &mean, &inv);
    expect_close(out.at(0), y);
    expect_close(out.at(1), mean);
    expect_close(out.at(2), inv);
    expect_close(out.at(3), s);
  }
  // Without beta and bias.
  const at::Tensor skip = randn({2, 3, 8});
  const auto out = run("SkipLayerNormalization", {x, skip, gamma}, {{"epsilon", 1e-5}});
  expect_close(out.at(0), layer_norm_ref(x + skip, gamma, {}, 1e-5));
}

TEST_F(ContribOps, SkipSimplifiedLayerNormalizationIsAnRmsNorm) {
  const at::Tensor x = randn({2, 3, 8}), skip = randn({2, 3, 8}), gamma = randn({8}), bias = randn({8});
  const auto out = run("SkipSimplifiedLayerNormalization", {x, skip, gamma, bias}, {{"epsilon", 1e-6}}, 4);
  const at::Tensor s = x + skip + bias;
  const at::Tensor inv = 1.0 / at::sqrt((s * s).mean({-1}, true) + 1e-6);
  expect_close(out.at(0), s * inv * gamma);
  expect_close(out.at(1), at::zeros({2, 3, 1}));  // no mean in an RMS norm: ONNX Runtime writes zeros
  expect_close(out.at(2), inv);
  expect_close(out.at(3), s);
}

TEST_F(ContribOps, RmsNormsOverTheTrailingDims) {
  const at::Tensor x = randn({2, 3, 4}), scale = randn({3, 4});
  // axis 1: the mean of squares over dims 1 and 2.
  const at::Tensor inv = 1.0 / at::sqrt((x * x).mean({1, 2}, true) + 1e-5);
  const auto simplified = run("SimplifiedLayerNormalization", {x, scale}, {{"axis", int64_t(1)}}, 2, "", 1);
  expect_close(simplified.at(0), x * inv * scale);
  expect_close(simplified.at(1), inv);
  const auto rms = run("RMSNormalization", {x, scale}, {{"axis", int64_t(1)}}, 1, "", 23);
  expect_close(rms.at(0), x * inv * scale);
  // The default axis -1 and a given epsilon.
  const at::Tensor row_scale = randn({4});
  const at::Tensor inv_row = 1.0 / at::sqrt((x * x).mean({-1}, true) + 0.25);
  expect_close(run("RMSNormalization", {x, row_scale}, {{"epsilon", 0.25}}, 1, "", 23).at(0),
               x * inv_row * row_scale);
}

TEST_F(ContribOps, EmbedLayerNormalizationGathersAddsAndNormalises) {
  const at::Tensor ids = at::tensor(std::vector<int32_t>{1, 2, 3, 4, 0, 5}, at::kInt).reshape({2, 3});
  const at::Tensor segments = at::tensor(std::vector<int32_t>{0, 0, 1, 1, 1, 0}, at::kInt).reshape({2, 3});
  const at::Tensor mask = at::tensor(std::vector<int32_t>{1, 1, 0, 1, 1, 1}, at::kInt).reshape({2, 3});
  const at::Tensor word = randn({6, 4}), pos = randn({5, 4}), seg = randn({2, 4}), gamma = randn({4}),
                   beta = randn({4});
  // Row by row: word[ids[b, s]] + pos[s] + seg[segments[b, s]].
  at::Tensor sum = at::empty({2, 3, 4});
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t s = 0; s < 3; ++s)
      sum[b][s] = word[ids[b][s].item<int32_t>()] + pos[s] + seg[segments[b][s].item<int32_t>()];
  const auto out = run("EmbedLayerNormalization", {ids, segments, word, pos, seg, gamma, beta, mask},
                       {{"epsilon", 1e-5}}, 3);
  expect_close(out.at(0), layer_norm_ref(sum, gamma, beta, 1e-5));
  EXPECT_TRUE(at::equal(out.at(1), at::tensor(std::vector<int32_t>{2, 3}, at::kInt))) << out.at(1);
  expect_close(out.at(2), sum);
  // No segments, no mask (mask_index zeros, as ONNX Runtime writes), explicit position ids.
  const at::Tensor position_ids = at::tensor(std::vector<int32_t>{4, 0, 2}, at::kInt).reshape({1, 3});
  at::Tensor plain = at::empty({2, 3, 4});
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t s = 0; s < 3; ++s)
      plain[b][s] = word[ids[b][s].item<int32_t>()] + pos[position_ids[0][s].item<int32_t>()];
  const auto out2 = run("EmbedLayerNormalization", {ids, {}, word, pos, {}, gamma, beta, {}, position_ids},
                        {{"epsilon", 1e-5}}, 3);
  expect_close(out2.at(0), layer_norm_ref(plain, gamma, beta, 1e-5));
  EXPECT_TRUE(at::equal(out2.at(1), at::zeros({2}, at::kInt)));
}

TEST_F(ContribOps, GeluFormsAndBiasFusions) {
  const at::Tensor x = randn({3, 8}), bias = randn({8}), skip = randn({3, 8});
  auto erf_gelu = [](const at::Tensor& v) { return 0.5 * v * (1 + at::erf(v / std::sqrt(2.0))); };
  auto tanh_gelu = [](const at::Tensor& v) {
    return 0.5 * v * (1 + at::tanh(0.797885 * v + 0.035677 * v * v * v));
  };
  expect_close(run("Gelu", {x}).at(0), erf_gelu(x));
  expect_close(run("FastGelu", {x}).at(0), tanh_gelu(x));
  expect_close(run("FastGelu", {x, bias}).at(0), tanh_gelu(x + bias));
  expect_close(run("BiasGelu", {x, bias}).at(0), erf_gelu(x + bias));
  expect_close(run("BiasAdd", {x.reshape({1, 3, 8}), bias, skip.reshape({1, 3, 8})}).at(0),
               (x + bias + skip).reshape({1, 3, 8}));
}

TEST_F(ContribOps, BiasSoftmaxBroadcastsItsBias) {
  const at::Tensor x = randn({2, 3, 4, 5});
  auto softmax_ref = [](const at::Tensor& v) {  // over the last dim, by its definition
    const at::Tensor e = at::exp(v - std::get<0>(v.max(-1, true)));
    return e / e.sum({-1}, true);
  };
  // Same-rank bias broadcast over the heads (dim 1).
  const at::Tensor mask = randn({2, 1, 4, 5});
  expect_close(
      run("BiasSoftmax", {x, mask}, {{"axis", int64_t(3)}, {"is_inner_broadcast", int64_t(1)}}).at(0),
      softmax_ref(x + mask));
  // Lower-rank bias, inner broadcast, softmax over the last two dims (axis 2): [2, 4, 5] is [2, 1, 4, 5].
  const at::Tensor inner = randn({2, 4, 5});
  expect_close(
      run("BiasSoftmax", {x, inner}, {{"axis", int64_t(2)}, {"is_inner_broadcast", int64_t(1)}}).at(0),
      softmax_ref((x + inner.unsqueeze(1)).reshape({2, 3, 20})).reshape({2, 3, 4, 5}));
  // With axis 3, a [2, 5] bias broadcasts over dims 1 and 2.
  const at::Tensor per_batch = randn({2, 5});
  expect_close(
      run("BiasSoftmax", {x, per_batch}, {{"axis", int64_t(3)}, {"is_inner_broadcast", int64_t(1)}}).at(0),
      softmax_ref(x + per_batch.reshape({2, 1, 1, 5})));
  // Outer broadcast: [3, 4, 5] over the batch.
  const at::Tensor outer = randn({3, 4, 5});
  expect_close(
      run("BiasSoftmax", {x, outer}, {{"axis", int64_t(3)}, {"is_inner_broadcast", int64_t(0)}}).at(0),
      softmax_ref(x + outer));
  // axis 2: one softmax over the last two dims together.
  const at::Tensor flat = softmax_ref((x + mask).reshape({2, 3, 20})).reshape({2, 3, 4, 5});
  expect_close(
      run("BiasSoftmax", {x, mask}, {{"axis", int64_t(2)}, {"is_inner_broadcast", int64_t(1)}}).at(0), flat);
}

TEST_F(ContribOps, FusedMatMulTransposesAndScales) {
  const at::Tensor a = randn({2, 3, 4, 5}), b = randn({3, 4, 5, 6});
  // transBatchA: [2,3,4,5] -> [3,4,2,5] (dim 0 before the last two).
  expect_close(run("FusedMatMul", {a, b}, {{"transBatchA", int64_t(1)}}).at(0),
               at::matmul(a.permute({1, 2, 0, 3}), b));
  const at::Tensor a2 = randn({3, 5, 4}), b2 = randn({6, 3, 5});
  // transA on A; transBatchB then transB on B: [6,3,5] -> [3,6,5] -> [3,5,6]; alpha 0.5.
  expect_close(
      run("FusedMatMul", {a2, b2},
          {{"transA", int64_t(1)}, {"transBatchB", int64_t(1)}, {"transB", int64_t(1)}, {"alpha", 0.5}})
          .at(0),
      0.5 * at::matmul(a2.transpose(1, 2), b2.permute({1, 0, 2}).transpose(1, 2)));
}

TEST_F(ContribOps, FusedGemmAppliesItsActivation) {
  const at::Tensor a = randn({4, 8}), b = randn({16, 8}), c = randn({16});
  const at::Tensor gemm = at::matmul(a, b.t()) * 2.0 + c;
  const Attrs base = {{"transB", int64_t(1)}, {"alpha", 2.0}};
  Attrs leaky = base;
  leaky["activation"] = std::string("LeakyRelu");
  leaky["activation_alpha"] = 0.2;
  expect_close(run("FusedGemm", {a, b, c}, leaky).at(0), at::where(gemm > 0, gemm, gemm * 0.2));
  Attrs sigmoid = base;
  sigmoid["activation"] = std::string("Sigmoid");
  expect_close(run("FusedGemm", {a, b, c}, sigmoid).at(0), 1.0 / (1.0 + at::exp(-gemm)));
  Attrs unknown = base;
  unknown["activation"] = std::string("NoSuchActivation");
  EXPECT_THROW(run("FusedGemm", {a, b, c}, unknown), Error);
}

TEST_F(ContribOps, FusedConvAddsZBeforeItsActivation) {
  const at::Tensor x = randn({1, 3, 8, 8}), w = randn({4, 3, 3, 3}), bias = randn({4}),
                   z = randn({1, 4, 8, 8});
  const at::Tensor conv = at::conv2d(x, w, bias, {1, 1}, {1, 1});
  const Attrs pads = {{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  Attrs relu = pads;
  relu["activation"] = std::string("Relu");
  expect_close(run("FusedConv", {x, w, bias, z}, relu).at(0), at::clamp_min(conv + z, 0));
  Attrs clip = pads;
  clip["activation"] = std::string("Clip");
  clip["activation_params"] = std::vector<double>{-0.5, 0.5};
  expect_close(run("FusedConv", {x, w, bias}, clip).at(0), at::clamp(conv, -0.5, 0.5));
  Attrs hard = pads;
  hard["activation"] = std::string("HardSigmoid");
  hard["activation_params"] = std::vector<double>{0.1, 0.4};
  expect_close(run("FusedConv", {x, w, bias}, hard).at(0), at::clamp(conv * 0.1 + 0.4, 0, 1));
  expect_close(run("FusedConv", {x, w, bias, z}, pads).at(0), conv + z);  // no activation
}

// MatMulNBits with weights quantised here: q [N, K] 4-bit values, two a byte
// low nibble first, per block of 32 along K; the reference dequantises
// element by element: (q - zero_point) * scale.
TEST_F(ContribOps, MatMulNBitsDequantisesFourBitBlocks) {
  const int64_t n = 5, k = 80, block = 32, blocks = 3;  // K padded to 96 in the last block
  const at::Tensor q = at::randint(0, 16, {n, blocks * block}, at::kInt);
  const at::Tensor scales = at::rand({n, blocks}) * 0.1 + 0.01;
  const at::Tensor zp = at::randint(0, 16, {n, blocks}, at::kInt);
  // Packing: byte j of a row holds values 2j (low nibble) and 2j+1 (high nibble).
  const at::Tensor packed_b = (q.slice(1, 0, c10::nullopt, 2) + q.slice(1, 1, c10::nullopt, 2) * 16)
                                  .to(at::kByte)
                                  .reshape({n, blocks, block / 2});
  // Zero points packed the same way along the blocks: ceil(3 / 2) = 2 bytes a row.
  const at::Tensor zp_padded = at::cat({zp, at::zeros({n, 1}, at::kInt)}, 1);
  const at::Tensor packed_zp =
      (zp_padded.slice(1, 0, c10::nullopt, 2) + zp_padded.slice(1, 1, c10::nullopt, 2) * 16).to(at::kByte);
  const at::Tensor a = randn({2, 3, k}), bias = randn({n});
  auto reference = [&](const at::Tensor& zero_points) {
    at::Tensor w = at::empty({n, k});
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < k; ++c)
        w[r][c] = (q[r][c].item<int32_t>() - zero_points[r][c / block].item<float>()) *
                  scales[r][c / block].item<float>();
    return at::matmul(a, w.t());
  };
  const Attrs attrs = {{"K", k}, {"N", n}, {"bits", int64_t(4)}, {"block_size", block}};
  // Packed uint8 zero points, and a bias.
  expect_close(run("MatMulNBits", {a, packed_b, scales, packed_zp, {}, bias}, attrs).at(0),
               reference(zp.to(at::kFloat)) + bias, 1e-4);
  // No zero points: 2^(bits-1) = 8.
  expect_close(run("MatMulNBits", {a, packed_b, scales}, attrs).at(0), reference(at::full({n, blocks}, 8.0)),
               1e-4);
  // Float zero points (A's type, unpacked [N, blocks]).
  const at::Tensor float_zp = at::rand({n, blocks}) * 15;
  expect_close(run("MatMulNBits", {a, packed_b, scales, float_zp}, attrs).at(0), reference(float_zp), 1e-4);
  // B of the wrong size is refused naming the node.
  EXPECT_THROW(run("MatMulNBits", {a, packed_b.slice(0, 0, 4), scales}, attrs), Error);
}

TEST(ContribOpsRegistry, EveryContribOpOfThisFamilyRuns) {
  for (const char* op : {"SkipLayerNormalization", "SkipSimplifiedLayerNormalization",
                         "EmbedLayerNormalization", "Gelu", "FastGelu", "BiasGelu", "BiasAdd", "BiasSoftmax",
                         "FusedMatMul", "FusedGemm", "FusedConv", "MatMulNBits"})
    EXPECT_NE(find_executor(kMs, op, 1), nullptr) << op;
  EXPECT_NE(find_executor("", "SimplifiedLayerNormalization", 1), nullptr);
  EXPECT_NE(find_executor("", "RMSNormalization", 23), nullptr);
  EXPECT_EQ(find_executor("", "RMSNormalization", 22), nullptr) << "RMSNormalization is new in opset 23";
}

}  // namespace
}  // namespace modelstat::profiler

// The attention executors (profiler/ops/attention.cc) against a straightforward
// reference written here: per batch entry and head, softmax(q k^T * scale +
// mask) v with the masks spelled out element by element, and rotary
// embeddings rotated pair by pair. ONNX Runtime's own outputs are checked by
// bench/contrib_cases.py (bench/RESULTS.md).
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
const char* const kMs = "com.microsoft";

// Runs one node; undefined inputs are omitted optional inputs.
std::vector<at::Tensor> run(const std::string& op, const std::string& domain, int64_t opset,
                            std::vector<at::Tensor> inputs, Attrs attrs, int num_outputs) {
  return test::run_node(domain, op, opset, std::move(inputs), std::move(attrs), num_outputs);
}

at::Tensor randn(std::vector<int64_t> shape) {
  return at::randn(shape, at::kFloat);
}
at::Tensor i32(std::vector<int32_t> v) {
  return at::tensor(v, at::kInt);
}

void expect_close(const at::Tensor& got, const at::Tensor& want) {
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_TRUE(at::allclose(got, want, 1e-4, 1e-5)) << (got - want).abs().max();
}

// softmax(q k^T * scale + bias) v for one head: q [S, H], k [T, H], v [T, Hv], bias [S, T].
at::Tensor ref_head(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias,
                    double scale) {
  return at::softmax(at::mm(q, k.t()) * scale + bias, -1).mm(v);
}

// A [S, T] bias: `value` where masked(i, j).
template <typename F>
at::Tensor bias_where(int64_t s, int64_t t, double value, F masked) {
  at::Tensor b = at::zeros({s, t});
  for (int64_t i = 0; i < s; ++i)
    for (int64_t j = 0; j < t; ++j)
      if (masked(i, j)) b[i][j] = value;
  return b;
}

// Rotates the first 2*cos.size(1) channels of x [S, H] at positions pos[s]:
// pairs (p, p + R/2), or (2p, 2p + 1) when interleaved.
at::Tensor ref_rotate(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin,
                      std::vector<int64_t> pos, bool interleaved) {
  at::Tensor y = x.clone();
  const int64_t half = cos.size(1);
  for (int64_t s = 0; s < x.size(0); ++s)
    for (int64_t p = 0; p < half; ++p) {
      const int64_t a = interleaved ? 2 * p : p, b = interleaved ? 2 * p + 1 : p + half;
      const float c = cos[pos[s]][p].item<float>(), sn = sin[pos[s]][p].item<float>();
      const float x1 = x[s][a].item<float>(), x2 = x[s][b].item<float>();
      y[s][a] = x1 * c - x2 * sn;
      y[s][b] = x1 * sn + x2 * c;
    }
  return y;
}

TEST(AttentionExec, ContribAttentionWithRawMask) {
  at::manual_seed(1);
  const at::Tensor x = randn({2, 3, 8}), w = randn({8, 24}), bias = randn({24});
  const at::Tensor mask = i32({1, 1, 0, 1, 0, 1}).view({2, 3});
  const auto out = run("Attention", kMs, 1, {x, w, bias, mask}, {{"num_heads", int64_t(2)}}, 2);
  const at::Tensor qkv = at::matmul(x, w) + bias;
  at::Tensor want = at::zeros({2, 3, 8});
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t n = 0; n < 2; ++n) {
      const at::Tensor q = qkv[b].narrow(1, n * 4, 4), k = qkv[b].narrow(1, 8 + n * 4, 4),
                       v = qkv[b].narrow(1, 16 + n * 4, 4);
      const at::Tensor m =
          bias_where(3, 3, -10000.0, [&](int64_t, int64_t j) { return mask[b][j].item<int>() == 0; });
      want[b].narrow(1, n * 4, 4).copy_(ref_head(q, k, v, m, 0.5));
      expect_close(out[1][0][b][n], k);  // present: [2, B, N, T, H]
      expect_close(out[1][1][b][n], v);
    }
  expect_close(out[0], want);
}

TEST(AttentionExec, ContribAttentionUnidirectionalWithPast) {
  at::manual_seed(2);
  const at::Tensor x = randn({1, 2, 8}), w = randn({8, 24}), past = randn({2, 1, 2, 3, 4});
  const auto out = run("Attention", kMs, 1, {x, w, at::Tensor(), at::Tensor(), past},
                       {{"num_heads", int64_t(2)}, {"unidirectional", int64_t(1)}, {"scale", 0.3}}, 2);
  const at::Tensor qkv = at::matmul(x, w)[0];
  at::Tensor want = at::zeros({2, 8});
  for (int64_t n = 0; n < 2; ++n) {
    const at::Tensor k = at::cat({past[0][0][n], qkv.narrow(1, 8 + n * 4, 4)}),
                     v = at::cat({past[1][0][n], qkv.narrow(1, 16 + n * 4, 4)});
    const at::Tensor m = bias_where(2, 5, -10000.0, [](int64_t i, int64_t j) { return j > 3 + i; });
    want.narrow(1, n * 4, 4).copy_(ref_head(qkv.narrow(1, n * 4, 4), k, v, m, 0.3));
    expect_close(out[1][0][0][n], k);
  }
  expect_close(out[0][0], want);
  EXPECT_EQ(out[1].sizes(), (std::vector<int64_t>{2, 1, 2, 5, 4}));
}

TEST(AttentionExec, MultiHeadAttentionWithBiasPastAndPaddingMask) {
  at::manual_seed(3);
  const at::Tensor q = randn({1, 2, 8}), k = randn({1, 3, 8}), v = randn({1, 3, 8}), bias = randn({24});
  const at::Tensor past_k = randn({1, 2, 1, 4}), past_v = randn({1, 2, 1, 4}),
                   attn_bias = randn({1, 1, 2, 4});
  const at::Tensor lengths = i32({3});  // keys from 3 on are padding
  const auto out = run("MultiHeadAttention", kMs, 1, {q, k, v, bias, lengths, attn_bias, past_k, past_v},
                       {{"num_heads", int64_t(2)}}, 3);
  const at::Tensor qb = q[0] + bias.narrow(0, 0, 8), kb = k[0] + bias.narrow(0, 8, 8),
                   vb = v[0] + bias.narrow(0, 16, 8);
  at::Tensor want = at::zeros({2, 8});
  for (int64_t n = 0; n < 2; ++n) {
    const at::Tensor kk = at::cat({past_k[0][n], kb.narrow(1, n * 4, 4)}),
                     vv = at::cat({past_v[0][n], vb.narrow(1, n * 4, 4)});
    const at::Tensor m =
        bias_where(2, 4, -10000.0, [](int64_t, int64_t j) { return j >= 3; }) + attn_bias[0][0];
    want.narrow(1, n * 4, 4).copy_(ref_head(qb.narrow(1, n * 4, 4), kk, vv, m, 0.5));
    expect_close(out[1][0][n], kk);
    expect_close(out[2][0][n], vv);
  }
  expect_close(out[0][0], want);
}

TEST(AttentionExec, GroupQueryAttentionSharesKvHeadsAndRotates) {
  // 4 query heads on 2 KV heads of 8; 2 new tokens after 3 past ones; rotary at positions 3, 4.
  at::manual_seed(4);
  const at::Tensor q = randn({1, 2, 32}), k = randn({1, 2, 16}), v = randn({1, 2, 16});
  const at::Tensor past_k = randn({1, 2, 3, 8}), past_v = randn({1, 2, 3, 8});
  const at::Tensor cos = randn({8, 4}), sin = randn({8, 4});
  const auto out =
      run("GroupQueryAttention", kMs, 1, {q, k, v, past_k, past_v, i32({4}), i32({5}).reshape({}), cos, sin},
          {{"num_heads", int64_t(4)}, {"kv_num_heads", int64_t(2)}, {"do_rotary", int64_t(1)}}, 3);
  at::Tensor want = at::zeros({2, 32});
  for (int64_t n = 0; n < 4; ++n) {
    const int64_t g = n / 2;  // the KV head of query head n
    const at::Tensor qn = ref_rotate(q[0].narrow(1, n * 8, 8), cos, sin, {3, 4}, false);
    const at::Tensor kk =
        at::cat({past_k[0][g], ref_rotate(k[0].narrow(1, g * 8, 8), cos, sin, {3, 4}, false)});
    const at::Tensor vv = at::cat({past_v[0][g], v[0].narrow(1, g * 8, 8)});
    const at::Tensor m = bias_where(2, 5, -INFINITY, [](int64_t i, int64_t j) { return j > 3 + i; });
    want.narrow(1, n * 8, 8).copy_(ref_head(qn, kk, vv, m, 1 / std::sqrt(8.0)));
    expect_close(out[1][0][g], kk);
    expect_close(out[2][0][g], vv);
  }
  expect_close(out[0][0], want);
}

TEST(AttentionExec, GroupQueryAttentionFirstPromptPaddedOnTheRight) {
  // Batch entry 1 holds 2 real tokens of 3 (seqlens_k = 1); packed QKV; a local window of 2
  // keys, the query's own included (ONNX Runtime's count: bench/contrib_cases.py checks it).
  at::manual_seed(5);
  const at::Tensor qkv = randn({2, 3, 16});  // (2 + 2*1) heads of 4
  const auto out =
      run("GroupQueryAttention", kMs, 1,
          {qkv, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), i32({2, 1}), i32({3}).reshape({})},
          {{"num_heads", int64_t(2)}, {"kv_num_heads", int64_t(1)}, {"local_window_size", int64_t(2)}}, 3);
  for (int64_t b = 0; b < 2; ++b) {
    const int64_t valid = b == 0 ? 3 : 2;
    const at::Tensor kk = qkv[b].narrow(1, 8, 4), vv = qkv[b].narrow(1, 12, 4);
    for (int64_t n = 0; n < 2; ++n) {
      const at::Tensor m = bias_where(
          3, 3, -INFINITY, [&](int64_t i, int64_t j) { return j >= valid || j > i || j <= i - 2; });
      const at::Tensor want = ref_head(qkv[b].narrow(1, n * 4, 4), kk, vv, m, 0.5);
      expect_close(out[0][b].narrow(1, n * 4, 4).narrow(0, 0, valid), want.narrow(0, 0, valid));
    }
    expect_close(out[1][b][0].narrow(0, 0, 3), kk);
  }
}

TEST(AttentionExec, GroupQueryAttentionRefusesQuantizedCachesNamingTheNode) {
  const at::Tensor q = randn({1, 1, 8});
  try {
    run("GroupQueryAttention", kMs, 1, {q, q, q, at::Tensor(), at::Tensor(), i32({0}), i32({1}).reshape({})},
        {{"num_heads", int64_t(1)},
         {"kv_num_heads", int64_t(1)},
         {"k_quant_type", std::string("PER_TENSOR")}},
        1);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("GroupQueryAttention_0"), std::string::npos) << e.what();
  }
  EXPECT_THROW(run("Attention", kMs, 1, {randn({1, 2, 8}), randn({8, 24})},
                   {{"num_heads", int64_t(2)}, {"do_rotary", int64_t(1)}}, 1),
               Error);
}

TEST(AttentionExec, ContribRotaryEmbeddingInterleavedFromAnOffset) {
  at::manual_seed(6);
  const at::Tensor x = randn({1, 2, 8}), cos = randn({6, 2}), sin = randn({6, 2});
  const auto out = run("RotaryEmbedding", kMs, 1, {x, at::tensor({int64_t(3)}), cos, sin},
                       {{"num_heads", int64_t(2)}, {"interleaved", int64_t(1)}}, 1);
  for (int64_t n = 0; n < 2; ++n)
    expect_close(out[0][0].narrow(1, n * 4, 4), ref_rotate(x[0].narrow(1, n * 4, 4), cos, sin, {3, 4}, true));
}

TEST(AttentionExec, OnnxRotaryEmbedding23PartialRotationWithoutPositionIds) {
  // X [B, N, S, H] with H 6, rotary dim 4: channels 4 and 5 pass through; caches [B, S, 2].
  at::manual_seed(7);
  const at::Tensor x = randn({1, 2, 3, 6}), cos = randn({1, 3, 2}), sin = randn({1, 3, 2});
  const auto out = run("RotaryEmbedding", "", 23, {x, cos, sin}, {{"rotary_embedding_dim", int64_t(4)}}, 1);
  for (int64_t n = 0; n < 2; ++n)
    expect_close(out[0][0][n], ref_rotate(x[0][n], cos[0], sin[0], {0, 1, 2}, false));
}

TEST(AttentionExec, OnnxAttention23GroupedCausalWithPastAndBoolMask) {
  // Q [1, 2, 4*4], K/V [1, 2, 2*4]: query head n reads KV head n / 2; 1 past row;
  // causal bottom-right (query i sees keys up to 1 + i); the mask hides key 0.
  at::manual_seed(8);
  const at::Tensor q = randn({1, 2, 16}), k = randn({1, 2, 8}), v = randn({1, 2, 8});
  const at::Tensor past_k = randn({1, 2, 1, 4}), past_v = randn({1, 2, 1, 4});
  const at::Tensor mask = at::tensor({0, 1, 1}).to(at::kBool).view({1, 3});
  const auto out =
      run("Attention", "", 23, {q, k, v, mask, past_k, past_v},
          {{"q_num_heads", int64_t(4)}, {"kv_num_heads", int64_t(2)}, {"is_causal", int64_t(1)}}, 3);
  at::Tensor want = at::zeros({2, 16});
  for (int64_t n = 0; n < 4; ++n) {
    const int64_t g = n / 2;
    const at::Tensor kk = at::cat({past_k[0][g], k[0].narrow(1, g * 4, 4)}),
                     vv = at::cat({past_v[0][g], v[0].narrow(1, g * 4, 4)});
    const at::Tensor m =
        bias_where(2, 3, -INFINITY, [](int64_t i, int64_t j) { return j == 0 || j > 1 + i; });
    want.narrow(1, n * 4, 4).copy_(ref_head(q[0].narrow(1, n * 4, 4), kk, vv, m, 0.5));
    expect_close(out[1][0][g], kk);
  }
  expect_close(out[0][0], want);
}

TEST(AttentionExec, OnnxAttention23SoftcapAndSoftmaxOutput) {
  at::manual_seed(9);
  const at::Tensor q = randn({1, 1, 2, 4}), k = randn({1, 1, 3, 4}), v = randn({1, 1, 3, 5});
  const at::Tensor float_mask = randn({2, 3});
  const auto out = run("Attention", "", 23, {q, k, v, float_mask},
                       {{"softcap", 2.0}, {"scale", 0.7}, {"qk_matmul_output_mode", int64_t(3)}}, 4);
  const at::Tensor scores = at::tanh(at::mm(q[0][0], k[0][0].t()) * 0.7 / 2.0) * 2.0 + float_mask;
  expect_close(out[0][0][0], at::softmax(scores, -1).mm(v[0][0]));
  expect_close(out[3][0][0], at::softmax(scores, -1));
}

}  // namespace
}  // namespace modelstat::profiler

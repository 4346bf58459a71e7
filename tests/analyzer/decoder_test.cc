// The KV cache and the prefill / decode views (analyzer/decoder.cc) on the
// committed sample decoder, sample_models/tiny_gpt2_kv.onnx: the bench's
// GPT-2 code (bench/transformer_models.py) at toy sizes, 2 layers, d 64,
// 4 heads of 16, vocabulary 256, tied LM head; past_key_values.{0,1}.{key,value}
// [batch, 4, past, 16] -> present.{0,1}.{key,value}. Every expected figure is
// computed by hand from those sizes.
#include <gtest/gtest.h>

#include <string>

#include "modelstat/analysis.hpp"
#include "modelstat/error.hpp"

namespace {

using modelstat::AnalysisResult;
using modelstat::LoadOptions;

std::string sample(const std::string& name) { return std::string(MODELSTAT_SOURCE_DIR) + "/sample_models/" + name; }

// Weight matrices in products, per token: the tied head 256*64 = 16,384; per
// layer c_attn 64*192 + attn proj 64*64 + c_fc 64*256 + mlp proj 256*64 =
// 12,288 + 4,096 + 16,384 + 16,384 = 49,152, two layers 98,304: 114,688.
constexpr int64_t kWeightMacsPerToken = 114688;
// KV cache per token of context: 2 layers * (key + value) * 4 heads * 16 * 4 bytes.
constexpr int64_t kKvBytesPerToken = 2 * 2 * 4 * 16 * 4;  // 1,024

TEST(Decoder, RecognisesTheCacheByName) {
  LoadOptions o;
  o.dim_values = {{"seq", 1}, {"past", 7}};
  const AnalysisResult r = modelstat::analyze_file(sample("tiny_gpt2_kv.onnx"), o);
  ASSERT_TRUE(r.kv_cache.has_value());
  const modelstat::KvCache& c = *r.kv_cache;
  EXPECT_EQ(c.recognised_by, "name");
  ASSERT_EQ(c.tensors.size(), 4u);
  EXPECT_EQ(c.tensors[0].input, "past_key_values.0.key");
  EXPECT_EQ(c.tensors[0].output, "present.0.key");
  EXPECT_EQ(c.tensors[0].seq_axis, 2);
  EXPECT_EQ(c.bytes_per_token, kKvBytesPerToken);
  EXPECT_EQ(c.past_length, 7);
  EXPECT_EQ(c.present_length, 8);
  EXPECT_EQ(c.past_bytes, 7 * kKvBytesPerToken);
  EXPECT_EQ(c.present_bytes, 8 * kKvBytesPerToken);
}

TEST(Decoder, SymbolsAreFoundOnTheUnboundModel) {
  const modelstat::Model m = modelstat::load_model(sample("tiny_gpt2_kv.onnx"), LoadOptions{});
  const auto c = modelstat::find_kv_cache(m);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->past_dim, "past");
  EXPECT_EQ(c->seq_dim, "seq");
  EXPECT_TRUE(c->total_dims.empty());  // no attention-mask input
}

TEST(Decoder, ContextGivesPrefillAndDecodeViews) {
  const AnalysisResult r = modelstat::analyze_decoder(sample("tiny_gpt2_kv.onnx"), LoadOptions{}, 16, 16);
  ASSERT_TRUE(r.decoder.has_value());
  const modelstat::DecoderAnalysis& d = *r.decoder;
  EXPECT_EQ(r.totals.nodes_exact, r.totals.nodes);
  // Decode at context 16: the weights once, plus QK^T and AV over 16 positions:
  // 2 * layers * context * d = 2 * 2 * 16 * 64 = 4,096.
  EXPECT_EQ(d.decode.totals.macs, kWeightMacsPerToken + 4096);
  EXPECT_EQ(r.totals.macs, d.decode.totals.macs);  // the rows are the decode step
  EXPECT_EQ(d.decode.bindings.at("seq"), 1);
  EXPECT_EQ(d.decode.bindings.at("past"), 15);
  EXPECT_EQ(d.decode.kv_read_bytes, 15 * kKvBytesPerToken);
  EXPECT_EQ(d.decode.kv_written_bytes, 16 * kKvBytesPerToken);
  // Prefill of 16 tokens: 16 * the weights, plus per layer QK^T and AV of
  // 4 heads * 16 * 16 * 16 each (the causal mask computed over the whole square):
  // 16 * 114,688 + 2 layers * 2 * 16,384 = 1,835,008 + 65,536.
  EXPECT_EQ(d.prefill.totals.macs, 16 * kWeightMacsPerToken + 65536);
  EXPECT_EQ(d.prefill.bindings.at("past"), 0);
  EXPECT_EQ(d.prefill.kv_read_bytes, 0);
  EXPECT_EQ(d.prefill.kv_written_bytes, 16 * kKvBytesPerToken);
  // Decode reads every weight for one token: far fewer FLOPs per byte than prefill.
  EXPECT_LT(d.decode.arithmetic_intensity() * 4, d.prefill.arithmetic_intensity());
  // Attention: QK^T and AV are 2 * 2,048 of decode's MACs, i.e. 8,192 of its
  // FLOPs at least, and less than the whole.
  EXPECT_GE(d.decode.attention_flops, 8192);
  EXPECT_LT(d.decode.attention_share(), 0.5);
}

TEST(Decoder, ContextRefusesAModelWithoutCacheAndDoubleBinding) {
  EXPECT_THROW(modelstat::analyze_decoder(sample("tiny_gpt2.onnx"), LoadOptions{}, 16, 16), modelstat::Error);
  LoadOptions o;
  o.dim_values = {{"past", 3}};
  EXPECT_THROW(modelstat::analyze_decoder(sample("tiny_gpt2_kv.onnx"), o, 16, 16), modelstat::Error);
  EXPECT_THROW(modelstat::analyze_decoder(sample("tiny_gpt2_kv.onnx"), LoadOptions{}, 16, 17), modelstat::Error);
}

TEST(Decoder, NoCacheInAnEncoder) {
  const AnalysisResult r = modelstat::analyze_file(sample("tiny_bert.onnx"), LoadOptions{});
  EXPECT_FALSE(r.kv_cache.has_value());
}

}  // namespace

// The generation loop (profiler/generate.hpp) on decoders whose behaviour is
// known without the loop: the KV-cache mapping and the feedback on the
// sample decoders (each greedy token equal to the argmax of a full recompute
// of the whole sequence with no cache: the cache fed back must give what
// recomputing gives), ONNX Runtime GenAI's shared buffer written in place,
// and a decoder built here whose next token is known by construction: the
// sum of every token in its cache plus its attention mask's sum plus its
// last position id, mod V, so every role the loop feeds (the cache, the mask,
// the positions) shows in the tokens. Timings are not asserted (bench/).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "modelstat/analysis.hpp"
#include "modelstat/error.hpp"
#include "profiler/device.hpp"
#include "profiler/generate.hpp"
#include "profiler/onnx_builder.hpp"
#include "scratch_folder.hpp"

namespace {

using modelstat::KvCache;
using modelstat::LoadOptions;
using modelstat::Model;
using modelstat::TokenChoice;
using modelstat::profiler::DecoderIo;
using modelstat::profiler::Executor;
using modelstat::profiler::ExecOptions;
using modelstat::profiler::GenerationLoop;
using modelstat::profiler::InputRole;

std::string sample(const std::string& name) { return std::string(MODELSTAT_SOURCE_DIR) + "/sample_models/" + name; }

// A model loaded as the protocol loads it: bound at the first decode step after `prompt` tokens.
struct Loaded {
  Model model;
  KvCache cache;
};
Loaded load_decoder(const std::string& path, int64_t prompt, LoadOptions options = {}) {
  const Model unbound = modelstat::load_model(path, options);
  const auto cache = modelstat::find_kv_cache(unbound, options.kv_pairs);
  if (!cache) throw std::runtime_error("no cache in " + path);
  for (const auto& [dim, value] : cache->bindings(1, prompt)) options.dim_values[dim] = value;
  Loaded l{modelstat::load_model(path, options), *cache};
  return l;
}

ExecOptions exec_options(const KvCache& cache) {
  ExecOptions o;
  o.share_kv_buffers = cache.layout == "shared buffer";
  return o;
}

// The greedy tokens of the loop, and for each the argmax of the whole
// sequence so far recomputed from an empty cache.
void expect_feedback_equals_recompute(const std::string& path, int64_t prompt, int64_t generate) {
  const Loaded l = load_decoder(path, prompt);
  const Executor exec(l.model, exec_options(l.cache));
  const DecoderIo io = modelstat::profiler::decoder_io(l.model, l.cache);
  const GenerationLoop loop(exec, l.cache, io, 1, prompt, generate, TokenChoice::Greedy, 42);
  auto device = modelstat::profiler::make_device("cpu");
  auto timer = device->interval_timer();
  const GenerationLoop::Timings run = loop.generate(*timer);
  ASSERT_EQ(run.tokens.size(), size_t(generate));
  ASSERT_EQ(run.step_seconds.size(), size_t(generate));
  at::Tensor sequence = loop.prompt_tokens();
  for (int64_t k = 0; k < generate; ++k) {
    GenerationLoop::State full = loop.start();
    full.tokens = sequence;
    const at::Tensor expected = loop.step(full);
    EXPECT_EQ(run.tokens[size_t(k)].item<int64_t>(), expected.item<int64_t>()) << path << " token " << k;
    sequence = at::cat({sequence, expected.view({1, 1})}, 1);
  }
}

TEST(Generate, GptCacheIsMappedByNameAndFedBack) {
  const Loaded l = load_decoder(sample("tiny_gpt2_kv.onnx"), 5);
  EXPECT_EQ(l.cache.layout, "separate");
  EXPECT_EQ(l.cache.max_context, 128);  // wpe: 128 rows, indexed by Range(past, past + seq)
  EXPECT_NE(l.cache.max_context_source.find("position table 'wpe.weight'"), std::string::npos)
      << l.cache.max_context_source;
  const DecoderIo io = modelstat::profiler::decoder_io(l.model, l.cache);
  const auto& g = l.model.graph;
  ASSERT_EQ(io.roles.size(), 5u);
  EXPECT_EQ(io.roles[0], InputRole::Tokens);
  for (size_t i = 1; i < 5; ++i) {
    ASSERT_EQ(io.roles[i], InputRole::PastKv);
    // past_key_values.L.key -> present.L.key: the graph output of the same name pattern.
    const std::string past = g.tensors[size_t(g.inputs[i])].name;
    const std::string present = g.tensors[size_t(g.outputs[size_t(io.present_output[size_t(io.cache_tensor[i])])])].name;
    EXPECT_EQ("present" + past.substr(std::string("past_key_values").size()), present);
  }
  EXPECT_EQ(g.tensors[size_t(g.outputs[size_t(io.logits_output)])].name, "logits");
  EXPECT_EQ(io.vocabulary, 256);  // wte's rows
  expect_feedback_equals_recompute(sample("tiny_gpt2_kv.onnx"), 5, 6);
}

TEST(Generate, CacheGrowsOneRowPerStep) {
  const Loaded l = load_decoder(sample("tiny_gpt2_kv.onnx"), 3);
  const Executor exec(l.model, exec_options(l.cache));
  const GenerationLoop loop(exec, l.cache, modelstat::profiler::decoder_io(l.model, l.cache), 1, 3, 4,
                            TokenChoice::Greedy, 1);
  GenerationLoop::State s = loop.start();
  EXPECT_EQ(s.past[0].size(2), 0);
  for (int64_t k = 0; k < 4; ++k) {
    loop.step(s);
    // [batch, heads, past, head]: the prompt, then one more row per decode step.
    for (const at::Tensor& t : s.past) EXPECT_EQ(t.size(2), 3 + k);
    EXPECT_EQ(s.past_length, 3 + k);
    EXPECT_EQ(s.tokens.sizes(), (std::vector<int64_t>{1, 1}));
  }
  // 2 layers x (key + value) x 4 heads x 16 x 4 bytes per row.
  EXPECT_EQ(GenerationLoop::cache_bytes(s), 6 * 2 * 2 * 4 * 16 * 4);
}

TEST(Generate, GenAiSharedBufferIsWrittenInPlaceAndFedBack) {
  const Loaded l = load_decoder(sample("tiny_gqa_kv.onnx"), 4);
  EXPECT_EQ(l.cache.layout, "shared buffer");
  EXPECT_EQ(l.cache.max_context, 128);  // the rotary cos cache's rows
  const Executor exec(l.model, exec_options(l.cache));
  const DecoderIo io = modelstat::profiler::decoder_io(l.model, l.cache);
  EXPECT_EQ(io.roles[1], InputRole::AttentionMask);
  const GenerationLoop loop(exec, l.cache, io, 1, 4, 5, TokenChoice::Greedy, 3);
  GenerationLoop::State s = loop.start();
  const void* buffer = s.past[0].data_ptr();
  EXPECT_EQ(s.past[0].size(2), 9);  // prompt + generated rows, allocated once
  loop.step(s);
  loop.step(s);
  EXPECT_EQ(s.past[0].data_ptr(), buffer);  // present is the past buffer
  EXPECT_EQ(s.past[0].size(2), 9);
  // Rows 0..4 written (4 prompt tokens, 1 decode step), the rest still zero.
  EXPECT_GT(s.past[0].narrow(2, 0, 5).abs().sum().item<double>(), 0.0);
  EXPECT_EQ(s.past[0].narrow(2, 5, 4).abs().sum().item<double>(), 0.0);
  expect_feedback_equals_recompute(sample("tiny_gqa_kv.onnx"), 4, 5);
}

// ---- a decoder whose next token is known by construction --------------------

void symbolic_info(onnx::ValueInfoProto* v, const std::string& name, int elem, const std::vector<std::string>& dims) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  for (const std::string& d : dims) {
    auto* dim = tt->mutable_shape()->add_dim();
    if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0])))
      dim->set_dim_value(std::stoll(d));
    else
      dim->set_dim_param(d);
  }
}

constexpr int64_t kVocab = 50;

// next = (sum of the cached token values + sum(attention_mask) + max(position_ids)) mod 50,
// logits = -(v - next)^2 over v = 0..49; the cache holds each token's id as a float,
// [batch, 1, past, 1] -> [batch, 1, total, 1].
onnx::ModelProto counter_decoder(const std::string& past_name, const std::string& present_name) {
  using modelstat::test::add_node;
  onnx::ModelProto proto = modelstat::test::new_model(17);
  onnx::GraphProto* g = proto.mutable_graph();
  const int f32 = onnx::TensorProto::FLOAT, i64 = onnx::TensorProto::INT64;
  symbolic_info(g->add_input(), "input_ids", i64, {"batch", "seq"});
  symbolic_info(g->add_input(), "attention_mask", i64, {"batch", "total"});
  symbolic_info(g->add_input(), "position_ids", i64, {"batch", "seq"});
  symbolic_info(g->add_input(), past_name, f32, {"batch", "1", "past", "1"});
  symbolic_info(g->add_output(), "logits", f32, {"batch", "1", "50"});
  symbolic_info(g->add_output(), present_name, f32, {"batch", "1", "total", "1"});
  modelstat::test::int64_init(g, "axes_13", {2}, {1, 3});
  modelstat::test::int64_init(g, "axes_123", {3}, {1, 2, 3});
  modelstat::test::int64_init(g, "axes_1", {1}, {1});
  modelstat::test::int64_init(g, "axes_12", {2}, {1, 2});
  std::vector<float> vocab(kVocab);
  for (int64_t v = 0; v < kVocab; ++v) vocab[size_t(v)] = float(v);
  modelstat::test::float_init(g, "vocab", {kVocab}, vocab);
  modelstat::test::float_init(g, "V", {}, {float(kVocab)});
  modelstat::test::int_attr(add_node(g, "Cast", {"input_ids"}, {"ids_f"}), "to", f32);
  add_node(g, "Unsqueeze", {"ids_f", "axes_13"}, {"rows"});
  modelstat::test::int_attr(add_node(g, "Concat", {past_name, "rows"}, {present_name}), "axis", 2);
  modelstat::test::int_attr(add_node(g, "ReduceSum", {present_name, "axes_123"}, {"token_sum"}), "keepdims", 0);
  modelstat::test::int_attr(add_node(g, "Cast", {"attention_mask"}, {"mask_f"}), "to", f32);
  modelstat::test::int_attr(add_node(g, "ReduceSum", {"mask_f", "axes_1"}, {"mask_sum"}), "keepdims", 0);
  modelstat::test::int_attr(add_node(g, "Cast", {"position_ids"}, {"pos_f"}), "to", f32);
  onnx::NodeProto* max = add_node(g, "ReduceMax", {"pos_f"}, {"last_pos"});
  modelstat::test::ints_attr(max, "axes", {1});
  modelstat::test::int_attr(max, "keepdims", 0);
  add_node(g, "Add", {"token_sum", "mask_sum"}, {"s1"});
  add_node(g, "Add", {"s1", "last_pos"}, {"s2"});
  modelstat::test::int_attr(add_node(g, "Mod", {"s2", "V"}, {"next"}), "fmod", 1);
  add_node(g, "Unsqueeze", {"next", "axes_12"}, {"next3"});
  add_node(g, "Sub", {"vocab", "next3"}, {"d"});
  add_node(g, "Mul", {"d", "d"}, {"d2"});
  add_node(g, "Neg", {"d2"}, {"logits"});
  return proto;
}

// The tokens the construction gives: after n tokens fed (a prompt of P, then one a step),
// next = (their sum + n + (n - 1)) mod 50.
std::vector<int64_t> counted_tokens(std::vector<int64_t> fed, int64_t generate) {
  std::vector<int64_t> out;
  for (int64_t k = 0; k < generate; ++k) {
    int64_t sum = 0;
    for (int64_t t : fed) sum += t;
    const int64_t n = int64_t(fed.size());
    const int64_t next = (sum + n + (n - 1)) % kVocab;
    out.push_back(next);
    fed.push_back(next);
  }
  return out;
}

class GenerateCounter : public modelstat::test::ScratchFolder {};

TEST_F(GenerateCounter, TokensAreWhatTheConstructionGivesForEverySequence) {
  const std::string path = this->path("counter.onnx");
  modelstat::test::save_model(counter_decoder("past_key_values.0.key", "present.0.key"), path);
  LoadOptions options;
  options.dim_values["batch"] = 2;
  const Loaded l = load_decoder(path, 6, options);
  EXPECT_EQ(l.cache.max_context, -1);  // no position table: no limit
  const Executor exec(l.model, exec_options(l.cache));
  const DecoderIo io = modelstat::profiler::decoder_io(l.model, l.cache);
  EXPECT_EQ(io.roles[1], InputRole::AttentionMask);
  EXPECT_EQ(io.roles[2], InputRole::PositionIds);
  EXPECT_EQ(io.vocabulary, kVocab);  // the logits' last dim
  const int64_t generate = 12;
  const GenerationLoop loop(exec, l.cache, io, 2, 6, generate, TokenChoice::Greedy, 9);
  auto device = modelstat::profiler::make_device("cpu");
  auto timer = device->interval_timer();
  const GenerationLoop::Timings run = loop.generate(*timer);
  for (int64_t b = 0; b < 2; ++b) {
    std::vector<int64_t> prompt;
    for (int64_t k = 0; k < 6; ++k) prompt.push_back(loop.prompt_tokens()[b][k].item<int64_t>());
    const std::vector<int64_t> expected = counted_tokens(prompt, generate);
    for (int64_t k = 0; k < generate; ++k)
      EXPECT_EQ(run.tokens[size_t(k)][b].item<int64_t>(), expected[size_t(k)]) << "sequence " << b << " token " << k;
  }
}

TEST_F(GenerateCounter, RandomTokensAreTheSameEveryGeneration) {
  const std::string path = this->path("counter.onnx");
  modelstat::test::save_model(counter_decoder("past_key_values.0.key", "present.0.key"), path);
  const Loaded l = load_decoder(path, 3);
  const Executor exec(l.model, exec_options(l.cache));
  const GenerationLoop loop(exec, l.cache, modelstat::profiler::decoder_io(l.model, l.cache), 1, 3, 6,
                            TokenChoice::Random, 5);
  auto device = modelstat::profiler::make_device("cpu");
  auto timer = device->interval_timer();
  const auto a = loop.generate(*timer), b = loop.generate(*timer);
  bool any_differs_from_greedy = false;
  std::vector<int64_t> prompt;
  for (int64_t k = 0; k < 3; ++k) prompt.push_back(loop.prompt_tokens()[0][k].item<int64_t>());
  const std::vector<int64_t> greedy = counted_tokens(prompt, 6);
  for (size_t k = 0; k < 6; ++k) {
    EXPECT_EQ(a.tokens[k].item<int64_t>(), b.tokens[k].item<int64_t>());
    EXPECT_LT(a.tokens[k].item<int64_t>(), kVocab);
    any_differs_from_greedy = any_differs_from_greedy || a.tokens[k].item<int64_t>() != greedy[k];
  }
  EXPECT_TRUE(any_differs_from_greedy);  // the logits were not read
}

TEST_F(GenerateCounter, KvNamesTheCacheAPairOfUnusualNames) {
  const std::string path = this->path("state.onnx");
  modelstat::test::save_model(counter_decoder("state_in", "state_out"), path);
  const Model unbound = modelstat::load_model(path, {});
  // One input/output pair of unusual names: neither a name nor two pairs of one shape.
  EXPECT_FALSE(modelstat::find_kv_cache(unbound).has_value());
  const auto cache = modelstat::find_kv_cache(unbound, {{"state_in", "state_out"}});
  ASSERT_TRUE(cache.has_value());
  EXPECT_EQ(cache->recognised_by, "--kv");
  EXPECT_EQ(cache->tensors.front().seq_axis, 2);  // past -> total
  EXPECT_EQ(cache->past_dim, "past");
  EXPECT_EQ(cache->seq_dim, "seq");
  EXPECT_EQ(cache->total_dims, std::vector<std::string>{"total"});
  LoadOptions options;
  options.kv_pairs = {{"state_in", "state_out"}};
  const Loaded l = load_decoder(path, 4, options);
  const Executor exec(l.model, exec_options(l.cache));
  const GenerationLoop loop(exec, l.cache, modelstat::profiler::decoder_io(l.model, l.cache), 1, 4, 5,
                            TokenChoice::Greedy, 11);
  auto device = modelstat::profiler::make_device("cpu");
  auto timer = device->interval_timer();
  const auto run = loop.generate(*timer);
  std::vector<int64_t> prompt;
  for (int64_t k = 0; k < 4; ++k) prompt.push_back(loop.prompt_tokens()[0][k].item<int64_t>());
  const std::vector<int64_t> expected = counted_tokens(prompt, 5);
  for (size_t k = 0; k < 5; ++k) EXPECT_EQ(run.tokens[k].item<int64_t>(), expected[k]);
  // A pair naming what the graph does not have is refused naming the flag.
  for (const auto& pair : std::vector<std::pair<std::string, std::string>>{{"nope", "state_out"}, {"state_in", "nope"},
                                                                          {"input_ids", "logits"}}) {
    try {
      (void)modelstat::find_kv_cache(unbound, {pair});
      ADD_FAILURE() << pair.first << "=" << pair.second << " accepted";
    } catch (const modelstat::Error& e) {
      EXPECT_EQ(e.kind(), modelstat::ErrorKind::Usage);
      EXPECT_NE(std::string(e.what()).find("--kv " + pair.first + "=" + pair.second), std::string::npos) << e.what();
    }
  }
}

}  // namespace

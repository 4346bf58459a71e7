// The generation loop of a decoder with a KV cache (`--generate P:G`): how
// each graph input is fed at each step (the tokens, an attention mask and
// position ids grown with the context, the cache fed back from the previous
// step's present tensors), how the next token is chosen, and one step or one
// whole generation run through the executor. The protocol that times it
// (warm-up, the stopping rule, the per-phase passes) is generate_protocol.cc.
//
// The two cache layouts (KvCache::layout): "separate", the ONNX export's
// (present = past + the step's rows, a new tensor each step, which becomes
// the next past; the first past has 0 rows), and "shared buffer", ONNX
// Runtime GenAI's (one buffer of P + G rows per cache tensor, zeros at the
// start, fed as past and returned as present with the step's rows written in
// place: ExecOptions::share_kv_buffers).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "modelstat/analysis.hpp"
#include "modelstat/generation.hpp"
#include "profiler/executor.hpp"
#include "profiler/timer.hpp"

namespace modelstat::profiler {

// What a graph input of the decoder holds at each step.
enum class InputRole {
  Tokens,         // the token ids, [batch, new tokens]
  AttentionMask,  // ones, [batch, context after the step]
  PositionIds,    // past .. context - 1, [batch or 1, new tokens]
  PastKv,         // a cache tensor: the previous step's present
  SeqLensK,       // GroupQueryAttention's seqlens_k: context - 1 per sequence, [batch]
  TotalLength,    // total_sequence_length: the context, one value
  PastLength,     // past_sequence_length: the tokens cached before the step, one value
};

// The decoder's inputs and outputs as the loop uses them, found on the model.
struct DecoderIo {
  std::vector<InputRole> roles;      // per graph input
  std::vector<int> cache_tensor;     // per graph input: its KvCache::tensors index (PastKv), else -1
  std::vector<int> present_output;   // per KvCache::tensors entry: its graph output's position
  int logits_output = -1;            // position in the graph outputs
  int64_t vocabulary = 0;            // token ids are below it
  std::string vocabulary_source;
  // "input_ids: the tokens [batch, new]", ... one per graph input, and the logits.
  std::vector<std::string> describe(const Model& model) const;
};

// Finds the roles on a loaded model whose cache is `cache`. Throws
// Error(Usage) naming an input the loop cannot feed (and why), a model with
// no token-id input or no logits output.
DecoderIo decoder_io(const Model& model, const KvCache& cache);

class GenerationLoop {
 public:
  // `exec` runs `model` (bound at the first decode step's shapes); batch:
  // the sequences; prompt / generate: P and G; seed: the prompt's ids and,
  // with TokenChoice::Random, the generated ones.
  GenerationLoop(const Executor& exec, const KvCache& cache, DecoderIo io, int64_t batch, int64_t prompt,
                 int64_t generate, TokenChoice choice, uint64_t seed);

  // The cache and the tokens between steps.
  struct State {
    std::vector<at::Tensor> past;  // per KvCache::tensors entry
    int64_t past_length = 0;       // tokens cached
    at::Tensor tokens;             // [batch, new]: what the next step feeds
    int64_t step = 0;              // 0: the prefill
  };
  // Before the prefill: an empty cache (separate: 0 rows; a shared buffer:
  // P + G rows of zeros) and the prompt as the tokens to feed.
  State start() const;
  // A copy of `s` that later steps cannot change (a shared buffer is written in place).
  State snapshot(const State& s) const;
  // The graph inputs of the step `s` is at.
  std::vector<at::Tensor> inputs(const State& s) const;
  // One step: runs the model on inputs(s) (hook: Executor::run's), feeds the
  // present tensors back, chooses the next tokens and advances `s`. Returns
  // the tokens chosen, [batch].
  at::Tensor step(State& s, const Executor::NodeHook& hook = {}) const;

  // One generation: G steps, each timed on `timer` (step 0 = the prefill and
  // its token). `before_step(s)`, when set, is called untimed before each step.
  struct Timings {
    std::vector<double> step_seconds;  // G values
    std::vector<at::Tensor> tokens;    // G tensors [batch]
    int64_t cache_bytes = 0;           // the cache after the last step
  };
  Timings generate(IntervalTimer& timer, const std::function<void(const State&)>& before_step = {}) const;

  int64_t batch() const { return batch_; }
  int64_t max_length() const { return prompt_ + generate_; }
  const at::Tensor& prompt_tokens() const { return prompt_tokens_; }
  // Bytes of the cache tensors of `s`.
  static int64_t cache_bytes(const State& s);

 private:
  at::Tensor choose(const std::vector<at::Tensor>& outputs, int64_t step) const;
  at::Tensor filled(int input, const std::vector<int64_t>& dims, int64_t value) const;

  const Executor& exec_;
  const KvCache& cache_;
  DecoderIo io_;
  int64_t batch_, prompt_, generate_;
  TokenChoice choice_;
  uint64_t seed_;
  bool shared_;
  at::Tensor prompt_tokens_;                  // [batch, P], int64
  std::vector<std::vector<int64_t>> cache_dims_;  // per cache tensor: its shape, the sequence axis 0
};

}  // namespace modelstat::profiler

// Generation with a decoder's KV cache (`profile --generate P:G`, `report
// --generate P:G`): the loop LLM users run, measured as they measure it
// (METHODOLOGY rule 14). One prefill of the P prompt tokens gives the first
// token (TTFT); each later step feeds the previous step's present KV tensors
// back as its past and gives one more token (ITL). Produced by
// profiler/generate*.cc, serialised by analyzer/measurements/generation_json.cc,
// formatted by tools/writers/generation_*.cc (docs/generation.md). Plain
// data, no LibTorch. Times in seconds.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "modelstat/analysis.hpp"
#include "modelstat/joined.hpp"
#include "modelstat/profile.hpp"

namespace modelstat {

extern const char* const kGenerationJsonSchemaVersion;

// `profile --generate ... --slo ...` exits with this code when a latency
// objective is not met (as fit's budgets: 0 met, 1 and 2 keep their meaning).
constexpr int kSloNotMetExitCode = 3;

// How the next token is chosen: Greedy, the argmax of the last position's
// logits (what the loop's reference runtimes do at temperature 0); Random,
// ids drawn from a fixed seed below the vocabulary size, the same in every
// generation, so that the work does not depend on the logits.
enum class TokenChoice { Greedy, Random };
const char* token_choice_name(TokenChoice c);  // "greedy", "random"
// "greedy" or "random"; throws Error(Usage) otherwise.
TokenChoice parse_token_choice(const std::string& text);

// Latency objectives (--slo, parsed by tools/generate_command.cc): limits on the 99th percentile over the measured
// generations of the time to first token and of the time per output token,
// as MLPerf Inference's Server scenario sets them (loadgen/mlperf.conf).
struct Slo {
  std::string name;  // "ttft=500ms,tpot=30ms" as given, or "mlperf:llama3_1-8b-interactive"
  std::optional<double> ttft_seconds, tpot_seconds;
  std::string source;  // where a named profile's limits come from
};

struct SloVerdict {
  std::string metric;          // "ttft" or "tpot"
  double limit_seconds = 0;    // the objective
  double measured_seconds = 0; // p99 over the measured generations
  bool met = false;            // measured <= limit
};

// What the loop was asked to do.
struct GenerationOptions {
  int64_t prompt = 0;    // P, tokens of the prompt per sequence (>= 1)
  int64_t generate = 0;  // G, tokens generated per sequence (>= 1): 1 from the prefill, G - 1 decode steps
  TokenChoice tokens = TokenChoice::Greedy;
  std::optional<Slo> slo;
};

// One point of decode step time against context: the median over the
// measured generations of the decode step that ends at `context` tokens.
struct ContextPoint {
  int64_t context = 0;
  double median_seconds = 0;
};

// Tokens per second over the measured generations: one value per generation,
// as llama-bench's pp / tg rows (mean and sample stddev over repetitions).
struct TokenRate {
  double mean = 0, stddev = 0;
  std::vector<double> samples;  // one per generation, in run order
};

// One step of the loop measured on its own (prefill, or the decode step
// ending at `context`), with the KV cache the generation had there: a clean
// pass of the step alone (profile.whole) and, with layers on, the
// instrumented per-node pass (profile.layers, profile.layer_sum), the
// analysis of the graph at the step's bindings (profile.analysis) and,
// joined on the roofline by `report`, `joined`.
struct GenerationPhase {
  std::string name;          // "prefill" or "decode"
  int64_t tokens = 0;        // new tokens per sequence in this step (P, or 1)
  int64_t context = 0;       // tokens of context after the step
  std::map<std::string, int64_t> bindings;  // KvCache::bindings(tokens, context - tokens)
  ProfileResult profile;
  // The same step inside the generation loop: the TTFT's median (prefill) or
  // the step curve's point at `context` (decode); includes choosing the token.
  double loop_median_seconds = 0;
  // fit's forecast of the step on the same bindings (docs/FIT.md, "Decoders"),
  // and (forecast - loop median) / loop median; empty without ceilings.
  std::optional<double> forecast_seconds, forecast_error;
  std::optional<JoinedReport> joined;  // report --generate
};

struct GenerationResult {
  std::string model_path;
  RunContext context;
  ColdStart cold;              // model load and weight upload; first_inference: the first generation
  int64_t prompt = 0, generate = 0, batch = 1;
  std::string tokens;          // token_choice_name
  KvCache kv_cache;            // as recognised (tensors, layout, max context), sized at the last decode step
  // How each graph input was fed, e.g. "input_ids: the tokens [batch, new]",
  // "attention_mask: ones [batch, context]", "past_key_values.0.key: KV cache".
  std::vector<std::string> input_roles;
  std::string logits;          // the output the next token is chosen from
  int64_t warmup_generations = 0;
  // Per measured generation: TTFT (the prefill, the first token chosen), TPOT
  // (its decode steps' mean, the first token excluded), end to end (TTFT +
  // every decode step). itl: every decode step of every measured generation.
  TimingSummary ttft, tpot, itl, end_to_end;
  TokenRate prompt_tokens_per_second;      // batch * P / TTFT (llama-bench pp)
  TokenRate generation_tokens_per_second;  // batch * (G - 1) / decode time (tg)
  // Decode step time against context (G - 1 points) and its least-squares
  // line: slope in seconds per token of context (the writers print it per
  // 1,000 tokens), intercept at context 0.
  std::vector<ContextPoint> step_curve;
  double step_slope_seconds_per_token = 0, step_intercept_seconds = 0;
  // Peak live bytes of one generation (weights, inputs, the cache at its
  // longest, activations), from the allocator (MemoryMeasurement's method).
  int64_t peak_memory_bytes = 0;
  std::string memory_method;
  int64_t kv_cache_bytes = 0;  // the present tensors after the last step (a shared buffer: all of it)
  // Per sequence: the prompt and the G generated tokens of the first measured generation.
  std::vector<std::vector<int64_t>> prompt_tokens, generated_tokens;
  // The prefill and the decode steps at the first, middle and last context:
  // their analyses, loop medians and forecasts always; their own clean and
  // per-node passes unless --no-layers.
  std::vector<GenerationPhase> phases;
  std::string group_by;        // --group-by (phases' profile.groups)
  std::string forecast_ceilings;  // what the forecasts were priced with ("" when none)
  std::optional<Slo> slo;
  std::vector<SloVerdict> slo_verdicts;
  std::vector<std::string> notices;

  bool slo_met() const {
    for (const SloVerdict& v : slo_verdicts)
      if (!v.met) return false;
    return true;
  }
};

// The least-squares line through (context, median) points: slope and
// intercept of step_curve (the one rule both the record and its readers use).
void fit_step_curve(GenerationResult& result);

// The verdicts of result.slo against result.ttft / result.tpot (their p99).
void judge_slo(GenerationResult& result);

// Runs the generation loop on a model file (LibTorch; profiler/generate_protocol.cc).
GenerationResult profile_generation(const std::string& path, const LoadOptions& load, const ProfileOptions& options,
                                    const GenerationOptions& generation);

// Each phase priced by fit on its own bindings (forecast_seconds and
// forecast_error; analyzer/fit/generation_forecast.cc): the forecast of
// `fit --context`, beside the measurement.
void forecast_generation(GenerationResult& result, const DeviceCeilings& ceilings);

// `report --generate`: each phase's profile joined with the ceilings (join_profile).
void join_generation(GenerationResult& result, const DeviceCeilings& ceilings);

}  // namespace modelstat

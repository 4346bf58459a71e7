// `profile --generate P:G` / `report --generate P:G`: the flags, their checks
// before anything runs, the run (profile_generation), the forecasts and the
// join, and the output (tools/writers/generation_*.cc).
#include "tools/generate_command.hpp"

#include <sstream>

#include "modelstat/error.hpp"
#include "tools/run_ceilings.hpp"
#include "tools/writers/generation_writers.hpp"

namespace modelstat::cli {

namespace {

// MLPerf Inference's latency limits for its LLM benchmarks, Server scenario,
// milliseconds: loadgen/mlperf.conf (mlcommons/inference), `NAME.Server.ttft_latency`
// and `tpot_latency`, judged at the 99th percentile (`*.Server.target_latency_percentile = 99`).
struct MlperfLimits {
  const char* name;
  double ttft_ms, tpot_ms;
};
constexpr MlperfLimits kMlperf[] = {
    {"llama2-70b", 2000, 200},        {"llama2-70b-interactive", 450, 40}, {"mixtral-8x7b", 2000, 200},
    {"llama3_1-405b", 6000, 175},     {"llama3_1-405b-interactive", 4500, 80},
    {"llama3_1-8b", 2000, 100},       {"llama3_1-8b-interactive", 500, 30},
    {"deepseek-r1", 2000, 80},        {"deepseek-r1-interactive", 1500, 15},
};

std::string mlperf_names() {
  std::string names;
  for (const MlperfLimits& m : kMlperf) names += (names.empty() ? "mlperf:" : ", mlperf:") + std::string(m.name);
  return names;
}

// "P:G" -> the two counts.
std::pair<int64_t, int64_t> parse_prompt_generate(const std::string& text) {
  const std::string hint = "--generate takes P:G, the prompt's tokens and the tokens to generate, e.g. 128:128; got '" +
                           text + "'";
  const size_t colon = text.find(':');
  if (colon == std::string::npos) throw_usage(hint);
  auto count = [&](const std::string& part) {
    if (part.empty() || part.size() > 9 || part.find_first_not_of("0123456789") != std::string::npos) throw_usage(hint);
    const int64_t v = std::stoll(part);
    if (v < 1) throw_usage(hint + " (both at least 1)");
    return v;
  };
  return {count(text.substr(0, colon)), count(text.substr(colon + 1))};
}

GenerationOptions generation_options(const GenerationArgs& g) {
  GenerationOptions o;
  std::tie(o.prompt, o.generate) = parse_prompt_generate(g.generate);
  o.tokens = parse_token_choice(g.tokens);
  if (!g.slo.empty()) {
    o.slo = parse_slo(g.slo);
    if (o.slo->tpot_seconds && o.generate < 2)
      throw_usage("--slo " + g.slo + " sets a TPOT, which needs decode steps: generate at least 2 tokens");
  }
  return o;
}

// What --generate changes in the measurement flags: one sample is a whole
// generation, so the defaults are 1 warm-up generation and 3 measured ones,
// no minimum time (the flags given keep their values); what it cannot
// combine with is refused.
ProfileOptions generation_profile_options(const ProfileArgs& p, const GenerationArgs& g) {
  ProfileOptions o = p.options;
  auto given = [&](const char* flag) { return g.command && g.command->get_option(flag)->count() > 0; };
  if (!given("--warmup")) o.warmup_iterations = 1;
  if (!given("--warmup-time")) o.warmup_seconds = 0;
  if (!given("--iters")) o.min_iterations = 3;
  if (!given("--min-time")) o.min_seconds = 0;
  for (const char* flag : {"--batch-sweep", "--max-batch", "--concurrency", "--train-step", "--end-to-end", "--memory"})
    if (given(flag))
      throw_usage(std::string("--generate and ") + flag +
                  " do not combine: a generation is measured as generations (its peak memory included)");
  return o;
}

GenerationResult compute(const ProfileArgs& p, const GenerationArgs& g, const std::optional<GenerationReport>& report,
                         std::vector<std::string>& notices) {
  const GenerationOptions options = generation_options(g);
  const std::optional<GroupRule> group_rule = p.output.group_rule();
  if (report && p.no_layers)
    throw_usage("report --generate joins each phase's nodes with their costs, so it needs the per-layer pass: "
                "drop --no-layers");
  GenerationResult r = profile_generation(p.model.model, p.model.load_options(), generation_profile_options(p, g),
                                          options);
  if (group_rule) {
    r.group_by = p.output.group_by;
    for (GenerationPhase& phase : r.phases)
      if (!phase.profile.layers.empty()) apply_grouping(phase.profile, *group_rule);
  }
  // The forecasts: ceilings named, else the saved ones of this run's device
  // and threads, else (report) quick ones measured now; profile says why none.
  std::optional<DeviceCeilings> ceilings = report ? report->ceilings : std::nullopt;
  if (!ceilings) {
    std::string why;
    ceilings = saved_ceilings(p.options, r.context, why);
    if (!ceilings && report) ceilings = saved_or_quick_ceilings(p.options, r.context, notices);
    if (!ceilings) notices.push_back("no forecasts: " + why + "; run `modelstat device` to save this machine's");
  }
  if (ceilings) forecast_generation(r, *ceilings);
  if (report && ceilings) join_generation(r, *ceilings);
  r.notices.insert(r.notices.begin(), notices.begin(), notices.end());
  return r;
}

ReportOptions report_options(const ProfileArgs& p) {
  ReportOptions ro;
  ro.top = p.output.top;
  ro.show_all_nodes = !p.output.no_nodes;
  return ro;
}

void write_extra_outputs(const GenerationResult& r, const ProfileArgs& p, const std::optional<GenerationReport>& report) {
  if (!report) return;
  for (const auto& [format, path] : report->extra_outputs) {
    if (path.empty()) continue;
    const auto writer = make_generation_writer(format);
    write_output(path, [&](std::ostream& out, bool) { writer->write(r, report_options(p), out); });
  }
}

}  // namespace

void add_generation_flags(CLI::App& cmd, GenerationArgs& args) {
  args.command = &cmd;
  cmd.add_option("--generate", args.generate,
                 "Run a decoder's generation loop instead of one forward pass: a prefill of P prompt tokens (random "
                 "ids, fixed seed), then G - 1 decode steps, each feeding the previous step's present KV tensors back "
                 "as its past (the cache recognised by name or shape, or named with --kv; ONNX Runtime GenAI's "
                 "GroupQueryAttention shared buffer too), attention masks and position ids grown with the context. "
                 "Reports TTFT, TPOT, ITL p50/p90/p99, prompt and generation tokens/s (llama-bench's pp / tg), end to "
                 "end, decode step time against context (its slope per 1k tokens), peak memory and KV-cache bytes; "
                 "with layers, the prefill and decode steps at the first, middle and last context measured alone per "
                 "node, with fit's forecast. Defaults become 1 warm-up generation and 3 measured ones (--warmup, "
                 "--iters). G larger than the model's context (its position table or rotary cache) is refused")
      ->type_name("P:G");
  cmd.add_option("--tokens", args.tokens,
                 "With --generate: greedy (default; argmax of the last position's logits) or random (ids from a fixed "
                 "seed, the same every generation)")
      ->check(CLI::IsMember({"greedy", "random"}));
  cmd.add_option("--slo", args.slo,
                 "With --generate: latency objectives on the p99 over the measured generations, "
                 "ttft=DURATION,tpot=DURATION (e.g. ttft=500ms,tpot=30ms), or an MLPerf Inference Server limit: " +
                     mlperf_names() + ". Prints met / not met; exit 3 when one is not met")
      ->type_name("OBJECTIVES");
}

Slo parse_slo(const std::string& text) {
  Slo slo;
  slo.name = text;
  if (text.rfind("mlperf:", 0) == 0) {
    for (const MlperfLimits& m : kMlperf)
      if (text.substr(7) == m.name) {
        slo.ttft_seconds = m.ttft_ms * 1e-3;
        slo.tpot_seconds = m.tpot_ms * 1e-3;
        slo.source = "MLPerf Inference loadgen/mlperf.conf, " + std::string(m.name) + ".Server";
        return slo;
      }
    throw_usage("--slo " + text + ": no such MLPerf profile (" + mlperf_names() + ")");
  }
  const CLI::Validator duration = duration_seconds();
  std::stringstream parts(text);
  std::string part;
  while (std::getline(parts, part, ',')) {
    const size_t eq = part.find('=');
    const std::string key = part.substr(0, eq);
    if (eq == std::string::npos || (key != "ttft" && key != "tpot"))
      throw_usage("--slo takes ttft=DURATION,tpot=DURATION (either or both) or mlperf:NAME, got '" + text + "'");
    std::string value = part.substr(eq + 1);
    try {
      const std::string problem = duration(value);
      if (!problem.empty()) throw_usage("--slo " + key + ": " + problem);
    } catch (const CLI::ValidationError& e) {
      throw_usage("--slo " + key + ": " + e.what());
    }
    const double seconds = std::stod(value);
    if (!(seconds > 0)) throw_usage("--slo " + key + " must be a positive duration");
    (key == "ttft" ? slo.ttft_seconds : slo.tpot_seconds) = seconds;
  }
  if (!slo.ttft_seconds && !slo.tpot_seconds) throw_usage("--slo '" + text + "' sets no objective");
  return slo;
}

int run_generation(const ProfileArgs& p, const GenerationArgs& g, const std::optional<GenerationReport>& report) {
  const auto writer = make_generation_writer(p.output.format);  // a bad format fails before the run
  if (report)
    for (const auto& [format, path] : report->extra_outputs)
      if (!path.empty()) (void)make_generation_writer(format);
  std::vector<std::string> notices;
  const GenerationResult r = compute(p, g, report, notices);
  write_output(p.output.output, [&](std::ostream& out, bool is_tty) {
    ReportOptions ro = report_options(p);
    ro.color = p.output.format == "table" && is_tty;
    writer->write(r, ro, out);
  });
  write_extra_outputs(r, p, report);
  return r.slo_met() ? 0 : kSloNotMetExitCode;
}

Rendered render_generation(const ProfileArgs& p, const GenerationArgs& g, const std::optional<GenerationReport>& report) {
  std::vector<std::string> notices;
  const GenerationResult r = compute(p, g, report, notices);
  write_extra_outputs(r, p, report);
  std::ostringstream json, table;
  make_generation_writer("json")->write(r, report_options(p), json);
  make_generation_writer("table")->write(r, report_options(p), table);
  return {json.str(), table.str(), r.slo_met() ? 0 : kSloNotMetExitCode};
}

}  // namespace modelstat::cli

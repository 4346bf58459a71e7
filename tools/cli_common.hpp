// Pieces shared by the modelstat subcommands: model-binding flags, output
// flags, writing a report to stdout or a file.
#pragma once

#include <CLI/CLI.hpp>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "modelstat/analysis.hpp"
#include "modelstat/ceilings.hpp"
#include "modelstat/error.hpp"
#include "modelstat/grouping.hpp"
#include "tools/writers/writers.hpp"

namespace modelstat::cli {

struct ModelArgs {
  std::string model;
  std::vector<std::string> inputs, dims, branches, trip_counts, kv;
  int64_t default_batch = 1;
  bool allow_custom_domains = false;

  LoadOptions load_options() const {
    LoadOptions o;
    for (const auto& s : inputs) parse_input_spec(s, o);
    for (const auto& s : dims) parse_dim_spec(s, o);
    for (const auto& s : branches) parse_branch_spec(s, o);
    for (const auto& s : trip_counts) parse_trip_count_spec(s, o);
    for (const auto& s : kv) {
      const size_t eq = s.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
        throw_usage("--kv takes PAST=PRESENT (a cache input and the output that returns it), got '" + s + "'");
      o.kv_pairs.emplace_back(s.substr(0, eq), s.substr(eq + 1));
    }
    if (default_batch < 1) throw_usage("--default-batch must be at least 1");
    o.default_batch = default_batch;
    o.allow_custom_domains = allow_custom_domains;
    return o;
  }
  // For a command that runs the model (profile, report): an input dim left
  // unknown is an error naming every such input and the flags to give.
  LoadOptions run_load_options() const {
    LoadOptions o = load_options();
    o.require_bound_inputs = true;
    return o;
  }
};

// --context / --prompt: a decoder's prefill and decode views (analyze, fit).
struct DecoderArgs {
  int64_t context = 0;  // 0: not asked
  int64_t prompt = 0;   // 0: the whole context
  int64_t prompt_or_context() const { return prompt > 0 ? prompt : context; }
};

inline void add_decoder_flags(CLI::App& cmd, DecoderArgs& d) {
  auto* context = cmd.add_option(
      "--context", d.context,
      "Context length of a decoder with a KV cache: binds the cache's past length, the token input's sequence "
      "length and total lengths (an attention mask's) for two views of the graph, prefill (seq = --prompt, past = "
      "0) and one decode step (seq = 1, past = L - 1), and says which dims it bound; the rows are the decode step");
  context->check(CLI::PositiveNumber)->type_name("L");
  cmd.add_option("--prompt", d.prompt, "Prompt length of the prefill view with --context (default: the context)")
      ->check(CLI::PositiveNumber)
      ->needs(context)
      ->type_name("P");
}

struct OutputArgs {
  std::string format = "table";
  std::string output;
  int top = 10;
  bool no_nodes = false;
  std::string group_by;  // --group-by RULE, "" for none

  // The --group-by rule, parsed (so that a bad one fails before any work);
  // nullopt without the flag. Throws Error(Usage).
  std::optional<GroupRule> group_rule() const {
    if (group_by.empty()) return std::nullopt;
    return GroupRule::parse(group_by);
  }
};

// What --group-by says in every command's --help.
inline const char* const kGroupByHelp =
    "Sum the top-level nodes per group, groups in order of first appearance: block (the node name's "
    "prefix up to and including its first component that is a layer index, '/' and '.' separating "
    "components: /h.3/attn/MatMul -> /h.3/, /encoder/layer.11/... -> /encoder/layer.11/, "
    "model.layers.3.mlp... -> model.layers.3.; a name without one: its first path component, /wte/Gather "
    "-> /wte/, else (other)), op (the op type), or re:REGEX (ECMAScript, searched in the name; the key is "
    "its first capture group if it has one, else the match; no match: (other)). Group rows stand in for "
    "the node rows in table, Markdown and CSV; JSON adds \"groups\" beside the nodes";

inline void add_model_flags(CLI::App& cmd, ModelArgs& m) {
  cmd.add_option("model", m.model, "ONNX model file (.onnx); external weights may be absent")->required();
  cmd.add_option("--input", m.inputs,
                 "Shape of a graph input, NAME:DIMS, e.g. --input pixel_values:8x3x224x224 (repeatable)");
  cmd.add_option("--dim", m.dims, "Value of a symbolic dim, NAME=VALUE, e.g. --dim batch=8 --dim seq=128 (repeatable)");
  cmd.add_option("--default-batch", m.default_batch, "Value for an unbound leading (batch) dim")
      ->default_val(1);
  cmd.add_flag("--allow-custom-domains", m.allow_custom_domains,
               "Accept custom op domains; their nodes are listed as unknown instead of refused");
  cmd.add_option("--branch", m.branches,
                 "Branch an If counts when its condition is unknown before running, NODE=then|else (repeatable; "
                 "default: the costlier one, with a notice)");
  cmd.add_option("--trip-count", m.trip_counts,
                 "Trip count of a Loop the model does not fix, NODE=N (repeatable; default: one trip, with a notice)");
  cmd.add_option("--kv", m.kv,
                 "A KV-cache pair of a decoder, PAST=PRESENT: the graph input holding the cache and the output "
                 "returning it one step longer (repeatable; all pairs, in place of the cache recognised by name "
                 "or shape), for --context and --generate")
      ->type_name("PAST=PRESENT");
}

// formats: what -f accepts, the first being the default (`report` adds html and trace).
inline void add_output_flags(CLI::App& cmd, OutputArgs& o,
                             const std::vector<std::string>& formats = {"table", "json", "csv", "md"}) {
  std::string listed;
  for (size_t i = 0; i < formats.size(); ++i)
    listed += (i == 0 ? "" : i + 1 == formats.size() ? " or " : ", ") + formats[i];
  cmd.add_option("-f,--format", o.format, "Output format: " + listed)
      ->check(CLI::IsMember(formats))
      ->default_val(formats.empty() ? std::string("table") : formats.front());
  cmd.add_option("-o,--output", o.output, "Write the report to FILE instead of standard output");
  cmd.add_option("--top", o.top, "Number of hotspots (nodes with most FLOPs) to list; 0 for none")
      ->default_val(10)
      ->check(CLI::Range(0, 1000000));
  cmd.add_flag("--no-nodes", o.no_nodes, "Leave the per-layer rows out of table and Markdown output");
  cmd.add_option("--group-by", o.group_by, kGroupByHelp)->type_name("block|op|re:REGEX");
}

// A CLI11 transform of a duration with its unit ("10ms", "0.5s", "250us",
// "µs", "40ns") into seconds (fit_command.cc): fit's budgets, --slo.
CLI::Validator duration_seconds();

// Ceilings named on the command line: --ceilings FILE (read now, so a wrong
// file fails before any measurement), else --datasheet NAME; nullopt when
// neither was given. Throws Error(Usage) for a missing file or an unknown name.
std::optional<DeviceCeilings> explicit_ceilings(const std::string& ceilings_file, const std::string& datasheet);

// Why no saved ceilings serve a run: none saved at `path` (the device's default location).
std::string no_saved_ceilings(const std::string& path);

// The notice of a command that measured quick ceilings because `why` (e.g.
// no_saved_ceilings): said once, the same in report and fit. `what`: what they
// serve ("this report").
std::string quick_ceilings_notice(const std::string& why, const std::string& what);

// Seconds from measured ceilings' `date` (ISO 8601 UTC as `modelstat device`
// writes it, "2026-11-29T15:24:43Z") to `now`; nullopt for a datasheet,
// an absent date or one in another form.
std::optional<double> ceilings_age_seconds(const DeviceCeilings& c, std::time_t now);

// The notice of a forecast made on measured ceilings more than a day older
// than `now` (a machine's speed drifts: on the project VM the same models ran
// 8-12% slower two hours after a calibration, in the next session, and the
// forecasts on it fell from 28 to 14-18 of 35 models within +-10%); empty
// otherwise. `what`: what they priced ("this forecast").
std::string stale_ceilings_notice(const DeviceCeilings& c, std::time_t now, const std::string& what);

// Hands standard output (path empty or "-") or -o FILE to `write`; a file is
// written atomically (write_file_atomically: a failed write is Error(Runtime)
// naming the path, and leaves the older file as it was).
void write_output(const std::string& path, const std::function<void(std::ostream&, bool is_tty)>& write);

// Runs `body`; the one place errors become exit codes and one-line messages:
// modelstat::Error -> its code (2 usage/input, 1 runtime), out of memory -> 1,
// anything else -> 1 as an internal error.
int run_mapping_errors(const std::function<int()>& body);

// A command line CLI11 refused, in the same one-line form (`modelstat: error:
// modelstat profile: --max-time: ... (see 'modelstat profile --help')`), exit 2;
// --help and --version print as CLI11 does, exit 0.
int exit_for_parse_error(CLI::App& app, const CLI::ParseError& e);

// What a subcommand computed, rendered without writing anything: the document
// `-f json` writes and the table `-f table` prints, both from the one record.
// This is how the Python module (python/) runs a command: one schema, the
// JSON writers', and no command-line text parsed back.
struct Rendered {
  std::string json;   // the -f json document
  std::string table;  // the -f table text, no colour
  int exit_code = 0;  // what the command would exit with: fit 3 over a budget, compare 1 on a regression
};

// A subcommand: its parsed App, what running it does (returns the exit code)
// and, for commands that produce a record, what rendering it gives (empty for
// verify and device, which print as they go).
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
  std::function<Rendered()> render;
};

// `modelstat analyze` (tools/analyze_command.cc). exit_fast: after writing, leave
// with std::_Exit instead of tearing the model down (the binary's choice; the
// Python module's run never takes this path).
void add_analyze_command(CLI::App& app, std::vector<Command>& commands, bool exit_fast);

// profile / verify / report / device (tools/profile_commands.cc,
// tools/report_command.cc and tools/device_command.cc when LibTorch is built;
// tools/profile_commands_unavailable.cc otherwise).
void add_profiler_commands(CLI::App& app, std::vector<Command>& commands);
void add_report_command(CLI::App& app, std::vector<Command>& commands);   // report_command.cc
void add_device_command(CLI::App& app, std::vector<Command>& commands);   // device_command.cc
void add_pipeline_command(CLI::App& app, std::vector<Command>& commands);  // pipeline_command.cc

// Sets OMP_WAIT_POLICY=PASSIVE (and MODELSTAT_OMP_WAIT_POLICY=default, which
// the run context reports) when the user has not set OMP_WAIT_POLICY (nor
// MODELSTAT_OMP_WAIT_POLICY=libgomp, which keeps libgomp's default); returns
// true if it set it. libgomp reads the variable once, when it is loaded, so
// this must run before the process that loads LibTorch starts: `modelstat`
// calls it before it execs modelstat-profiler, modelstat-profiler re-execs
// itself when started without it. Why: libgomp's team threads spin after each
// parallel region; on a CPU shared with anything else (another process, the
// pipeline's stage threads) the spinning costs 4-20x (bench/RESULTS.md,
// "OpenMP wait policy"). Likewise OPENBLAS_THREAD_TIMEOUT=4 (MODELSTAT_
// OPENBLAS_THREAD_TIMEOUT=default): OpenBLAS's pthread workers spin 2^28
// cycles (~0.1 s) after each call by default, holding a CPU that the next
// op's OpenMP team needs (vit_b_16 at 2 threads: 295 -> 239 ms); 2^4 cycles
// lets them sleep at once. With PASSIVE it also chooses libgomp's spin count
// by the load at start (tools/cpu_load.hpp): GOMP_SPINCOUNT=3000 (~30 us)
// when the allowed CPUs were idle for 0.15 s, none otherwise, and leaves the
// measured load in MODELSTAT_CPU_BUSY_AT_START for the run context. Returns
// true if it set anything.
bool default_openmp_wait_policy();

// Subcommands of `modelstat` itself (no LibTorch).
// Quick ceilings of a device ("cpu" or "cuda") measured now, for `fit` when
// none are saved: `modelstat` runs `modelstat-profiler device --quick` (fit
// itself links no LibTorch). Empty where nothing can measure them (the Python
// module's fit): fit then asks for --ceilings or --datasheet.
using QuickCeilings = std::function<DeviceCeilings(const std::string& device)>;
void add_fit_command(CLI::App& app, std::vector<Command>& commands,
                     QuickCeilings quick = {});                           // fit_command.cc
void add_compare_command(CLI::App& app, std::vector<Command>& commands);  // compare_command.cc

// The subcommands `modelstat` hands to modelstat-profiler.
inline bool is_profiler_subcommand(const std::string& name) {
  return name == "profile" || name == "verify" || name == "report" || name == "device" || name == "pipeline";
}

}  // namespace modelstat::cli

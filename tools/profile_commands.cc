// `modelstat profile` and `modelstat verify`: the subcommands that need the
// LibTorch profiler. Built only when LibTorch is (MODELSTAT_WITH_TORCH).
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "modelstat/joined.hpp"
#include "modelstat/profile.hpp"
#include "profiler/verify.hpp"
#include "tools/cli_common.hpp"
#include "tools/generate_command.hpp"
#include "tools/profile_flags.hpp"
#include "tools/writers/writers.hpp"

namespace modelstat::cli {

namespace {

// Why a verify case did not run to a verdict ("" when it did): the ops or
// values without an executor, or the error that stopped it (which names its file).
std::string verify_error(const VerifyRecord& r) {
  if (!r.unsupported.empty()) {
    std::string what;
    for (const auto& op : r.unsupported) what += (what.empty() ? "" : ", ") + op;
    return r.case_dir + ": cannot run: " + what + " (no executor, or a non-tensor / string value)";
  }
  return r.error;
}

}  // namespace

// What `modelstat <command> --help` opens with.
const char* const kProfileHelp =
    "Run the ONNX graph node by node with LibTorch (ATen) and measure it the correct way: warm-up, a clean "
    "whole-model pass, a separate per-layer pass (layer sum shown next to the whole), copies timed apart, "
    "repeated until the median is stable, cold start reported apart.";

const char* const kVerifyHelp =
    "Run an ONNX backend test case (CASE_DIR/model.onnx + test_data_set_*/input_*.pb, output_*.pb) through "
    "the executor on the CPU and compare with the expected outputs. First, elementwise: |actual - expected| <= "
    "atol + rtol*|expected| (by default ONNX's tolerances, rtol 1e-3, atol 1e-7; for a model holding float16 / "
    "bfloat16 tensors 10 x that dtype's epsilon, 0.0098 / 0.078); each output's max abs diff, max rel diff and "
    "norm-wise relative error are printed too. A single-op case is judged by that alone. A whole model whose "
    "outputs differ is then judged against its own rounding sensitivity: the executor reruns it with its inputs "
    "one ulp apart, on other kernels (as written on ATen and BLAS, its transcendental functions' outputs one ulp of "
    "max(|y|, 1) apart as another runtime's approximations; fused on oneDNN) and, for a quantised model, with its "
    "requantisers' values a few ulps apart; an output no further from the reference than 10 x what those reruns move it differs as two "
    "correct implementations do (PASS (within the model's rounding sensitivity), or PASS (quantised model)), and "
    "integer/bool elements that differ are decision flips, passed when a rerun flips them too. "
    "Exit 0 when all match, 1 when an output differs, 2 when the case cannot run.";

void add_profiler_commands(CLI::App& app, std::vector<Command>& commands) {
  auto args = std::make_shared<ProfileArgs>();
  CLI::App* profile = app.add_subcommand("profile", kProfileHelp);
  add_profile_flags(*profile, *args);
  auto generation = std::make_shared<GenerationArgs>();  // --generate P:G hands over to generate_command.cc
  add_generation_flags(*profile, *generation);
  auto compute = [args] {
    const std::optional<GroupRule> group_rule = args->output.group_rule();
    ProfileResult result = profile_model(args->model.model, args->model.run_load_options(), args->options);
    if (group_rule) apply_grouping(result, *group_rule);
    result.notices.insert(result.notices.begin(), args->notices.begin(), args->notices.end());
    return result;
  };
  auto report_options = [args] {
    ReportOptions ro;
    ro.top = args->output.top;
    ro.show_all_nodes = !args->output.no_nodes;
    return ro;
  };
  auto run = [args, generation, compute, report_options] {
    args->finish();
    if (generation->requested()) return run_generation(*args, *generation, std::nullopt);
    const ProfileResult result = compute();
    auto writer = make_profile_writer(args->output.format);
    ReportOptions ro = report_options();
    write_output(args->output.output, [&](std::ostream& out, bool is_tty) {
      ro.color = args->output.format == "table" && is_tty;
      writer->write(result, ro, out);
    });
    return 0;
  };
  auto render = [args, generation, compute, report_options]() -> Rendered {
    args->finish();
    if (generation->requested()) return render_generation(*args, *generation, std::nullopt);
    const ProfileResult result = compute();
    const ReportOptions ro = report_options();
    std::ostringstream json, table;
    make_profile_writer("json")->write(result, ro, json);
    make_profile_writer("table")->write(result, ro, table);
    return {json.str(), table.str(), 0};
  };
  commands.push_back({profile, run, render});

  auto case_dir = std::make_shared<std::string>();
  auto verify_options = std::make_shared<profiler::VerifyOptions>();
  auto output = std::make_shared<OutputArgs>();
  CLI::App* verify = app.add_subcommand("verify", kVerifyHelp);
  verify->add_option("case_dir", *case_dir, "ONNX test-case folder")->required();
  const CLI::Validator non_negative(
      [](std::string& text) -> std::string {
        try {
          size_t used = 0;
          const double v = std::stod(text, &used);
          if (used == text.size() && std::isfinite(v) && v >= 0) return {};
        } catch (const std::exception&) {
        }
        return "must be a finite non-negative number, got '" + text + "'";
      },
      "NONNEGATIVE");
  // Unset: the model's default (profiler::default_tolerance).
  auto rtol = std::make_shared<double>(0), atol = std::make_shared<double>(0);
  CLI::Option* rtol_option =
      verify
          ->add_option("--rtol", *rtol,
                       "Relative tolerance (default 1e-3; float16 / bfloat16 models 0.0098 / 0.078)")
          ->check(non_negative);
  CLI::Option* atol_option =
      verify
          ->add_option("--atol", *atol,
                       "Absolute tolerance (default 1e-7; float16 / bfloat16 models 0.0098 / 0.078)")
          ->check(non_negative);
  verify->add_flag("--allow-custom-domains", verify_options->allow_custom_domains,
                   "Load a model whose nodes use a domain modelstat has no rules for (its nodes are unknown)");
  auto no_fuse = std::make_shared<bool>(false);
  auto fusion = std::make_shared<std::string>("on");
  verify
      ->add_option("--fusion", *fusion,
                   "on (default): run as profile does (CPU fp32 Conv and Gemm/MatMul groups, QDQ patterns as "
                   "int8 kernels); off: every node as written (see profile --fusion)")
      ->check(CLI::IsMember({"on", "off"}));
  verify->add_flag("--no-fuse", *no_fuse, "Same as --fusion off");
  std::map<std::string, GemmBackend> gemms;
  for (const auto& [name, value] : names_of<GemmBackend>()) gemms[name] = value;
  verify
      ->add_option("--gemm", verify_options->gemm,
                   "CPU fp32 Gemm/MatMul with constant weights: auto (default), onednn or blas (see profile --gemm)")
      ->transform(CLI::CheckedTransformer(gemms));
  const std::map<std::string, profiler::VerifyCriterion> criteria = {
      {"auto", profiler::VerifyCriterion::Auto},
      {"elementwise", profiler::VerifyCriterion::Elementwise},
      {"model", profiler::VerifyCriterion::Model}};
  verify
      ->add_option("--criterion", verify_options->criterion,
                   "auto (default): elementwise for a single-op case, then the model's rounding sensitivity for a "
                   "whole model; elementwise: ONNX's criterion alone; model: the rounding sensitivity for any case")
      ->transform(CLI::CheckedTransformer(criteria));
  verify->add_option("-f,--format", output->format, "Output format: table or json")
      ->check(CLI::IsMember({"table", "json"}));
  verify->add_option("-o,--output", output->output, "Write to FILE instead of stdout");
  commands.push_back({verify,
                      [case_dir, verify_options, output, rtol, atol, rtol_option, atol_option, no_fuse, fusion] {
                        verify_options->fuse = !*no_fuse && *fusion == "on";
                        if (rtol_option->count() > 0) verify_options->rtol = *rtol;
                        if (atol_option->count() > 0) verify_options->atol = *atol;
                        const VerifyRecord record = profiler::verify_case(*case_dir, *verify_options);
                        auto writer = make_verify_writer(output->format);
                        // A case that could not run (or stopped) is an error in the one form every command
                        // uses, on standard error; the JSON document still records it.
                        const std::string error = verify_error(record);
                        if (error.empty() || output->format == "json")
                          write_output(output->output, [&](std::ostream& out, bool) { writer->write(record, out); });
                        if (!error.empty()) std::fprintf(stderr, "modelstat: error: %s\n", error.c_str());
                        return record.exit_code;
                      },
                      {}});
}

}  // namespace modelstat::cli

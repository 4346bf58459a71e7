// `modelstat profile` and `modelstat verify`: the subcommands that need the
// LibTorch profiler. Built only when LibTorch is (MODELSTAT_WITH_TORCH).
#include <cmath>
#include <sstream>
#include <string>
#include <thread>

#include "modelstat/joined.hpp"
#include "modelstat/profile.hpp"
#include "profiler/verify.hpp"
#include "tools/cli_common.hpp"
#include "tools/profile_flags.hpp"
#include "tools/writers/writers.hpp"

namespace modelstat::cli {

void add_profiler_commands(CLI::App& app, std::vector<Command>& commands) {
  auto args = std::make_shared<ProfileArgs>();
  CLI::App* profile = app.add_subcommand(
      "profile",
      "Run the ONNX graph node by node with LibTorch (ATen) and measure it the correct way: warm-up, a clean "
      "whole-model pass, a separate per-layer pass (layer sum shown next to the whole), copies timed apart, "
      "repeated until the median is stable, cold start reported apart.");
  add_profile_flags(*profile, *args);
  auto compute = [args] {
    const std::optional<GroupRule> group_rule = args->output.group_rule();
    ProfileResult result = profile_model(args->model.model, args->model.run_load_options(), args->options);
    if (group_rule) apply_grouping(result, *group_rule);
    return result;
  };
  auto report_options = [args] {
    ReportOptions ro;
    ro.top = args->output.top;
    ro.show_all_nodes = !args->output.no_nodes;
    return ro;
  };
  auto run = [args, compute, report_options] {
    args->finish();
    const ProfileResult result = compute();
    auto writer = make_profile_writer(args->output.format);
    ReportOptions ro = report_options();
    write_output(args->output.output, [&](std::ostream& out, bool is_tty) {
      ro.color = args->output.format == "table" && is_tty;
      writer->write(result, ro, out);
    });
    return 0;
  };
  auto render = [args, compute, report_options]() -> Rendered {
    args->finish();
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
  CLI::App* verify = app.add_subcommand(
      "verify",
      "Run an ONNX backend test case (CASE_DIR/model.onnx + test_data_set_*/input_*.pb, output_*.pb) through "
      "the "
      "executor on the CPU and compare with the expected outputs. Pass criterion, elementwise: "
      "|actual - expected| <= atol + rtol*|expected| (by default ONNX's tolerances, rtol 1e-3, atol 1e-7; "
      "for a "
      "model holding float16 / bfloat16 tensors 10 x that dtype's epsilon, 0.0098 / 0.078); "
      "each output's max abs diff, max rel diff and norm-wise relative error are printed too. "
      "On a quantised model (QuantizeLinear, DynamicQuantizeLinear, QLinear*) whose outputs differ, verify also "
      "reports the share of elements one quantisation step off and reruns twice, with inputs one ulp apart and with "
      "the values each QuantizeLinear rounds a few ulps apart (relative 2^-21): differences no larger than those "
      "reruns make are what requantisation does to any two implementations (PASS (quantised model)). "
      "Exit 0 when all match, 1 when an output differs, 2 when the case cannot run.");
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
  verify
      ->add_option("--gemm", verify_options->gemm,
                   "CPU fp32 Gemm/MatMul with constant weights: auto (default), onednn or blas (see profile --gemm)")
      ->check(CLI::IsMember({"auto", "onednn", "blas"}));
  commands.push_back({verify, [case_dir, verify_options, rtol, atol, rtol_option, atol_option, no_fuse, fusion] {
                        verify_options->fuse = !*no_fuse && *fusion == "on";
                        if (rtol_option->count() > 0) verify_options->rtol = *rtol;
                        if (atol_option->count() > 0) verify_options->atol = *atol;
                        return profiler::verify_case(*case_dir, std::cout, *verify_options);
                      },
                      {}});  // prints as it runs: no render
}

}  // namespace modelstat::cli

// `modelstat profile` and `modelstat verify`: the subcommands that need the
// LibTorch profiler. Built only when LibTorch is (MODELSTAT_WITH_TORCH).
#include <cmath>
#include <string>
#include <thread>

#include "modelstat/profile.hpp"
#include "modelstat/profile_report.hpp"
#include "profiler/verify.hpp"
#include "tools/cli_common.hpp"

namespace modelstat::cli {

namespace {

struct ProfileArgs {
  ModelArgs model;
  OutputArgs output;
  ProfileOptions options;
  std::vector<int64_t> batches;
  bool no_layers = false;
};

std::vector<int64_t> parse_batches(const std::string& text) {
  std::vector<int64_t> out;
  if (text.empty()) return out;
  for (int64_t v : parse_shape_spec(text)) {
    if (v < 1) throw_usage("--batch-sweep values must be positive");
    out.push_back(v);
  }
  return out;
}

}  // namespace

void add_profiler_commands(CLI::App& app, std::vector<Command>& commands) {
  auto args = std::make_shared<ProfileArgs>();
  auto sweep = std::make_shared<std::string>();
  CLI::App* profile = app.add_subcommand(
      "profile",
      "Run the ONNX graph node by node with LibTorch (ATen) and measure it the correct way: warm-up, a clean "
      "whole-model pass, a separate per-layer pass (layer sum shown next to the whole), copies timed apart, "
      "repeated until the median is stable, cold start reported apart.");
  add_model_flags(*profile, args->model);
  add_output_flags(*profile, args->output);
  ProfileOptions& o = args->options;
  profile->add_option("--device", o.device, "Where to run: cpu or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->default_val("cpu");
  profile->add_option("--dtype", o.dtype, "Compute dtype: fp32; fp16 or bf16 on CUDA")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16"}))
      ->default_val("fp32");
  profile->add_option("--threads", o.threads, "CPU intra-op threads (default: all cores)")->check(CLI::Range(0, 4096));
  profile->add_option("--warmup", o.warmup_iterations, "Warm-up runs, at least")->default_val(5)->check(CLI::Range(0, 1000000));
  profile->add_option("--warmup-time", o.warmup_seconds, "Warm-up seconds, at least")->default_val(0.5)->check(CLI::Range(0.0, 3600.0));
  profile->add_option("--iters", o.min_iterations, "Measured runs, at least")->default_val(10)->check(CLI::Range(1, 100000000));
  profile->add_option("--max-iters", o.max_iterations, "Measured runs, at most")->default_val(1000000)->check(CLI::Range(1, 100000000));
  profile->add_option("--min-time", o.min_seconds, "Measured seconds per pass, at least")->default_val(1.0)->check(CLI::Range(0.0, 3600.0));
  profile->add_option("--max-time", o.max_seconds, "Seconds per pass at most (time-out of the stability rule)")
      ->default_val(10.0)
      ->check(CLI::Range(0.001, 36000.0));
  profile->add_option("--target-rel-ci", o.target_rel_ci,
                      "Stop once the 95% CI half-width of the median is below this fraction of it")
      ->default_val(0.01)
      ->check(CLI::Range(0.0001, 1.0));
  profile->add_option("--seed", o.seed, "Seed for inputs and absent weights")->default_val(0x5eed);
  profile->add_option("--input-sets", o.input_sets, "Random input sets rotated between runs")->default_val(2)->check(CLI::Range(1, 64));
  profile->add_flag("--end-to-end", o.end_to_end, "Whole-model samples include the H2D input and D2H output copies");
  profile->add_flag("--no-layers", args->no_layers, "Skip the instrumented per-layer pass");
  profile->add_option("--batch-sweep", *sweep, "Batch sizes to measure, e.g. 1,2,4,8,16 (latency and throughput each)");
  profile->add_flag("--max-batch", o.find_max_batch,
                    "Find the largest batch that fits: doubling, then binary search; out-of-memory is caught");
  profile->add_option("--max-batch-limit", o.max_batch_limit, "Upper bound of the max-batch search")
      ->default_val(4096)
      ->check(CLI::Range(1, 1 << 30));
  profile->add_option("--concurrency", o.concurrency,
                      "Independent requests in flight (CPU threads / CUDA streams); 0 = not measured")
      ->check(CLI::Range(0, 256));
  commands.push_back({profile, [args, sweep] {
                        args->options.per_layer = !args->no_layers;
                        args->options.batch_sweep = parse_batches(*sweep);
                        if (args->options.max_iterations < args->options.min_iterations)
                          throw_usage("--max-iters is below --iters");
                        const ProfileResult result =
                            profile_model(args->model.model, args->model.load_options(), args->options);
                        auto writer = make_profile_writer(args->output.format);
                        ReportOptions ro;
                        ro.top = args->output.top;
                        ro.show_all_nodes = !args->output.no_nodes;
                        write_output(args->output.output, [&](std::ostream& out, bool is_tty) {
                          ro.color = args->output.format == "table" && is_tty;
                          writer->write(result, ro, out);
                        });
                        return 0;
                      }});

  auto case_dir = std::make_shared<std::string>();
  auto verify_options = std::make_shared<profiler::VerifyOptions>();
  CLI::App* verify = app.add_subcommand(
      "verify",
      "Run an ONNX backend test case (CASE_DIR/model.onnx + test_data_set_*/input_*.pb, output_*.pb) through the "
      "executor on the CPU and compare with the expected outputs. Pass criterion, elementwise: "
      "|actual - expected| <= atol + rtol*|expected| (ONNX's tolerances by default: rtol 1e-3, atol 1e-7); "
      "each output's max abs diff, max rel diff and norm-wise relative error are printed too. "
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
  verify->add_option("--rtol", verify_options->rtol, "Relative tolerance")
      ->default_val(verify_options->rtol)
      ->check(non_negative);
  verify->add_option("--atol", verify_options->atol, "Absolute tolerance")
      ->default_val(verify_options->atol)
      ->check(non_negative);
  commands.push_back(
      {verify, [case_dir, verify_options] { return profiler::verify_case(*case_dir, std::cout, *verify_options); }});
}

}  // namespace modelstat::cli

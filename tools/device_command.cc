// `modelstat device`: measures this device's ceilings (machine peaks per ISA
// and dtype, bandwidth per memory level, copy bandwidth, matmul throughput per
// dtype, per-op overhead), prints them and saves them
// where `report` and `fit` look (modelstat/ceilings.hpp, docs/ceilings.md).
#include <chrono>
#include <cstdio>
#include <memory>

#include "modelstat/ceilings.hpp"
#include "profiler/ceilings_probe.hpp"
#include "tools/cli_common.hpp"
#include "tools/writers/ceilings_writer.hpp"

namespace modelstat::cli {

namespace {

struct DeviceArgs {
  profiler::CeilingsProbeOptions probe;
  std::string format = "table";
  std::string output;
  std::string save;
  bool no_save = false;
};

constexpr const char* kDescription =
    "Measure this device's ceilings, print them and save them for later runs.\n"
    "  memory bandwidth  a device-to-device copy (dst.copy_(src)) of a buffer well beyond the last-level cache\n"
    "                    (CPU: 256 MiB or 2x the cache, CUDA: 1 GiB); bytes = read + written = 2 x buffer\n"
    "  machine peak      CPU: FMA micro-kernels on registers per ISA and dtype the CPU has (fp32 AVX-512 and\n"
    "                    AVX2, bf16 AVX512_BF16, int8 AVX512_VNNI), at 1 thread and at every CPU, best sample;\n"
    "                    CUDA: theoretical, SMs x clock x FLOPs/cycle/SM of the architecture (unverified)\n"
    "  memory levels     CPU: read bandwidth over working sets from 4 KiB to 8x the last-level cache; L1, L2, L3\n"
    "                    and DRAM are the plateaus of that curve, named by the cache sizes sysfs reports; each\n"
    "                    level's roof is the faster of that read rate and an in-place update's (read + written)\n"
    "  matmul FLOP/s     at::mm_out on square n x n matrices, 2n^3 FLOPs each, over a range of n\n"
    "                    (CPU: fp32, n 64..2048; CUDA: fp32, tf32, fp16, bf16, n 256..8192); the curve and its best\n"
    "                    point: the achievable roof, drawn beside the machine's\n"
    "  op overhead       an add of two 1-element tensors: the fixed cost every node pays\n"
    "  op classes        one node of each class 'fit' prices (elementwise, pooling, normalisation, depthwise\n"
    "                    conv, ...) run by modelstat's executor at a tiny and a 3 MiB size: fixed cost + per byte\n"
    "  conv samples      CPU: fp32 Conv groups (1x1, 3x3, 3x3 stride 2, depthwise 3x3 and 5x5) on the executor's\n"
    "                    oneDNN kernel over a grid of channels and sizes, weights cold, and what a residual Add and\n"
    "                    a trailing SiLU add per byte; 'fit' prices a model's convs from the nearest samples\n"
    "Each figure is the median of repeated runs after a warm-up, sampled until its 95% confidence interval is\n"
    "narrow (or a time-out), timed with the device's own clock (CUDA events on the GPU).\n"
    "Saved to $MODELSTAT_CEILINGS_DIR, else $XDG_CACHE_HOME/modelstat, else ~/.cache/modelstat\n"
    "(ceilings-cpu.json / ceilings-cuda.json). 'modelstat report' draws each layer against them (roofline:\n"
    "compute- or memory-bound, % of peak) and 'modelstat fit' forecasts latency from FLOPs and bytes with them.\n"
    "See docs/ceilings.md.";

int run_device(const DeviceArgs& args) {
  const auto start = std::chrono::steady_clock::now();
  const DeviceCeilings ceilings = profiler::measure_ceilings(args.probe);
  report::CeilingsTableExtras extras;
  extras.probe_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // Save before printing, but print even when saving fails, so a measurement
  // is never lost; the save error then decides the exit code.
  std::unique_ptr<Error> save_error;
  if (!args.no_save) {
    const std::string path = args.save.empty() ? default_ceilings_path(ceilings.device_kind) : args.save;
    try {
      save_ceilings(ceilings, path);
      extras.saved_path = path;
    } catch (const Error& e) {
      save_error = std::make_unique<Error>(e);
    }
  }

  write_output(args.output, [&](std::ostream& out, bool) {
    if (args.format == "json")
      out << ceilings_to_json(ceilings);
    else
      report::write_ceilings_table(ceilings, extras, out);
  });
  // The JSON on standard output stays pure JSON; the table says it itself.
  if (!extras.saved_path.empty() && (args.format == "json" || !args.output.empty()))
    std::fprintf(stderr, "modelstat: ceilings saved to %s\n", extras.saved_path.c_str());
  if (save_error) throw *save_error;
  return 0;
}

}  // namespace

void add_device_command(CLI::App& app, std::vector<Command>& commands) {
  auto args = std::make_shared<DeviceArgs>();
  CLI::App* cmd = app.add_subcommand("device", kDescription);
  cmd->add_option("--device", args->probe.device, "Device to measure: cpu or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->default_val("cpu");
  cmd->add_option("--threads", args->probe.threads, "CPU intra-op threads (default: all cores); the figures hold for this count")
      ->check(CLI::Range(0, 4096));
  cmd->add_flag("--quick", args->probe.quick, "Fewer sizes and runs (seconds, not minutes); rougher figures");
  cmd->add_option("--dtype", args->probe.dtypes,
                  "Measure only this matmul dtype (repeatable): fp32; tf32, fp16, bf16 on CUDA (default: all the device has)")
      ->check(CLI::IsMember({"fp32", "tf32", "fp16", "bf16"}));
  cmd->add_option("-f,--format", args->format, "Output format: table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->default_val("table");
  cmd->add_option("-o,--output", args->output, "Write the output to FILE instead of standard output");
  CLI::Option* save = cmd->add_option("--save", args->save, "Save the ceilings to FILE instead of the default location");
  cmd->add_flag("--no-save", args->no_save, "Do not save the ceilings")->excludes(save);
  commands.push_back({cmd, [args] { return run_device(*args); }, {}});  // prints as it measures: no render
}

}  // namespace modelstat::cli

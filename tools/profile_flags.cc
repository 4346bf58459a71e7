// The flags of `modelstat profile`, shared with `modelstat report`.
#include "tools/profile_flags.hpp"

#include <map>

#include <fmt/format.h>

namespace modelstat::cli {

namespace {

// A typed flag: CLI11 checks the name against the enum's table
// (include/modelstat/run_config.hpp) and stores the value.
template <typename E>
CLI::Option* add_enum_option(CLI::App& cmd, const std::string& flag, E& value, const std::string& help) {
  std::map<std::string, E> choices;
  for (const auto& [name, v] : names_of<E>()) choices[name] = v;
  return cmd.add_option(flag, value, help)->transform(CLI::CheckedTransformer(choices))->default_str(name_of(value));
}

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

void ProfileArgs::finish() {
  options.per_layer = !no_layers;
  options.fuse = !no_fuse && fusion == "on";
  options.batch_sweep = parse_batches(batch_sweep);
  if (options.max_iterations < options.min_iterations) throw_usage("--max-iters is below --iters");
  notices.clear();
  lower_min_time_to_max_time(command, options, notices);
}

void lower_min_time_to_max_time(const CLI::App* cmd, ProfileOptions& o, std::vector<std::string>& notices) {
  if (o.min_seconds <= o.max_seconds) return;
  const bool min_given = cmd != nullptr && cmd->get_option("--min-time")->count() > 0;
  if (min_given)
    throw_usage(fmt::format("--min-time {:g} is above --max-time {:g}: a pass cannot last at least the one and at "
                            "most the other; lower --min-time or raise --max-time",
                            o.min_seconds, o.max_seconds));
  notices.push_back(fmt::format("--max-time {:g} s is below the default --min-time ({:g} s): each pass measures "
                                "for at most {:g} s (--min-time lowered to it)",
                                o.max_seconds, o.min_seconds, o.max_seconds));
  o.min_seconds = o.max_seconds;
}

void add_measurement_flags(CLI::App& cmd, ProfileOptions& o) {
  add_enum_option(cmd, "--device", o.device, "Where to run: cpu or cuda");
  add_enum_option(cmd, "--dtype", o.dtype,
                  "Compute dtype: own (default: the model's own dtypes, a float16 node without a kernel on the "
                  "device in fp32, said in a notice; on CUDA LibTorch's defaults: TF32 convolutions, fp32 matmuls); fp32 "
                  "(every float tensor in fp32, fp32 arithmetic: TF32 off in cuBLAS and cuDNN); tf32 (CUDA: fp32 "
                  "tensors, TF32 tensor-core math in cuBLAS and cuDNN); fp16 or bf16 on CUDA");
  cmd.add_option("--threads", o.threads, "CPU intra-op threads (default: all cores)")->check(CLI::Range(0, 4096));
  cmd.add_option("--warmup", o.warmup_iterations, "Warm-up runs, at least")->default_val(5)->check(CLI::Range(0, 1000000));
  cmd.add_option("--warmup-time", o.warmup_seconds, "Warm-up seconds, at least")->default_val(0.5)->check(CLI::Range(0.0, 3600.0));
  cmd.add_option("--iters", o.min_iterations, "Measured runs, at least")->default_val(10)->check(CLI::Range(1, 100000000));
  cmd.add_option("--max-iters", o.max_iterations, "Measured runs, at most")->default_val(1000000)->check(CLI::Range(1, 100000000));
  cmd.add_option("--min-time", o.min_seconds, "Measured seconds per pass, at least")->default_val(1.0)->check(CLI::Range(0.0, 3600.0));
  cmd.add_option("--max-time", o.max_seconds,
                 "Seconds per pass at most (time-out of the stability rule); below the default --min-time, "
                 "the minimum is lowered to it, with a notice")
      ->default_val(10.0)
      ->check(CLI::Range(0.001, 36000.0));
  cmd.add_option("--target-rel-ci", o.target_rel_ci,
                      "Stop once the 95% CI half-width of the median is below this fraction of it")
      ->default_val(0.01)
      ->check(CLI::Range(0.0001, 1.0));
  cmd.add_option("--seed", o.seed, "Seed for inputs and absent weights")->default_val(0x5eed);
  cmd.add_option("--input-sets", o.input_sets, "Random input sets rotated between runs")->default_val(2)->check(CLI::Range(1, 64));
  cmd.add_option("--value", o.input_values,
                 "Values for a small graph input instead of random data, NAME=V[,V...] (repeatable): as many values "
                 "as the input has elements, of its dtype (numbers; bools as true/false/1/0), in every input set. "
                 "An If reading it then runs the branch the value selects, e.g. --value sr=16000 for a voice model "
                 "that switches on its sample rate")
      ->type_name("NAME=V[,V...]");
  cmd.add_option("--inputs", o.inputs_dir,
                 "Feed the graph inputs from a test case's TensorProto files instead of random data: DIR/input_N.pb "
                 "(or DIR/test_data_set_0/input_N.pb, the ONNX backend test layout verify reads), each bound to the "
                 "input its TensorProto names, else to the N-th graph input; dtypes and dims must agree with the "
                 "binding, and bind the dims --input/--dim leave open")
      ->type_name("DIR");
}

void add_profile_flags(CLI::App& cmd, ProfileArgs& args, const std::vector<std::string>& formats) {
  args.command = &cmd;
  add_model_flags(cmd, args.model);
  add_output_flags(cmd, args.output, formats);
  ProfileOptions& o = args.options;
  add_measurement_flags(cmd, o);
  cmd.add_flag("--end-to-end", o.end_to_end, "Whole-model samples include the H2D input and D2H output copies");
  cmd.add_flag("--no-layers", args.no_layers,
               "Skip the instrumented per-layer passes (top-level nodes, and subgraph nodes)");
  cmd.add_option("--fusion", args.fusion,
                 "on (default): run as an inference runtime does: on the CPU in fp32, a Conv, the BatchNormalization "
                 "after it (folded), its activations and a residual Add as one oneDNN convolution with prepacked "
                 "weights; a Gemm/MatMul with constant weights, its bias Add, activation or GELU and residual Add "
                 "as one matmul (see --gemm); GELU and LayerNorm written out as one kernel each (one row per group, "
                 "naming its members); a Transpose of the last two axes read by one MatMul alone (an attention's "
                 "K^T) read in place by that MatMul; a Conv, MatMul or Gemm whose operands are "
                 "DequantizeLinear outputs as one int8 kernel. off: every ONNX node as written, one row each. "
                 "A training step always runs node by node")
      ->check(CLI::IsMember({"on", "off"}));
  cmd.add_flag("--no-fuse", args.no_fuse, "Same as --fusion off");
  add_enum_option(cmd, "--gemm", o.gemm,
                  "CPU fp32 Gemm/MatMul with constant weights: auto (default): oneDNN matmul (prepacked weights, bias "
                  "and the ops after it fused) or BLAS, whichever measures faster for each shape, measured once at "
                  "load and cached per machine in $MODELSTAT_CACHE_DIR (default ~/.cache/modelstat; none: no file); "
                  "onednn or blas to force one. Either way with --fusion on or off");
  cmd.add_option("--batch-sweep", args.batch_sweep, "Batch sizes to measure, e.g. 1,2,4,8,16 (latency and throughput each)");
  cmd.add_flag("--max-batch", o.find_max_batch,
                    "Find the largest batch that fits: doubling, then binary search; out-of-memory is caught");
  cmd.add_option("--max-batch-limit", o.max_batch_limit, "Upper bound of the max-batch search")
      ->default_val(4096)
      ->check(CLI::Range(1, 1 << 30));
  cmd.add_option("--concurrency", o.concurrency,
                      "Independent requests in flight (CPU threads / CUDA streams); 0 = not measured")
      ->check(CLI::Range(0, 256));
  cmd.add_flag("--memory", o.measure_memory,
               "Measure memory from the allocator: bytes live once the weights are placed, and the peak of one "
               "inference (weights + one input set + what the run allocates). CPU: a counting wrapper around "
               "LibTorch's CPU allocator; CUDA: the caching allocator's allocated-bytes statistics");
  CLI::Option* train = cmd.add_flag(
      "--train-step", o.train_step,
      "Measure a training step (fp32, or bf16 with --precision): forward with autograd, loss = sum over float outputs of mean(output^2), "
      "backward, optimizer update, gradients set to none; timed whole and by part under the same warm-up and "
      "stopping rule, with its peak memory. Float initializers are the parameters, except the constants an "
      "export carries (BatchNormalization running statistics, Clip bounds, Pow exponents, one-element "
      "arithmetic constants); weights change, so it runs after every other measurement");
  add_enum_option(cmd, "--optimizer", o.optimizer,
                  "Optimizer of --train-step, lr 1e-3: sgd; momentum (0.9); adam (default; betas 0.9, 0.999, eps "
                  "1e-8, bias-corrected)")
      ->needs(train);
  add_enum_option(cmd, "--precision", o.train_precision,
                  "Precision of --train-step: fp32 (default), or bf16 mixed precision on the CPU: the forward and "
                  "loss under LibTorch's CPU autocast to bfloat16 (matmul, Gemm, Conv in bf16, each weight's bf16 "
                  "copy cached for the forward), weights, gradients and optimizer state fp32, as PyTorch AMP; fp16 is "
                  "forecast by 'modelstat fit', not measured")
      ->needs(train);
}

}  // namespace modelstat::cli

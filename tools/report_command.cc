// `modelstat report model.onnx`: profile the model (every flag of `profile`),
// join each node's measured time with its static cost on the device's
// roofline (join_profile), and write the result in one format to stdout / -o
// and in others to files, all from the same run.
#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "modelstat/analysis.hpp"
#include "modelstat/ceilings.hpp"
#include "modelstat/fit.hpp"
#include "modelstat/joined.hpp"
#include "modelstat/profile.hpp"
#include "profiler/ceilings_probe.hpp"
#include "tools/cli_common.hpp"
#include "tools/generate_command.hpp"
#include "tools/profile_flags.hpp"
#include "tools/run_ceilings.hpp"

namespace modelstat::cli {

namespace {

const std::vector<std::string> kReportFormats = {"table", "json", "csv", "md", "html", "trace"};

struct ReportArgs {
  ProfileArgs profile;
  GenerationArgs generation;  // --generate P:G hands over to generate_command.cc
  bool scaling = false;                // --scaling: also at 1 thread, node by node
  std::string ceilings_file;           // --ceilings FILE
  std::string datasheet;               // --datasheet NAME
  std::map<std::string, std::string> extra_outputs;  // format -> FILE (--html FILE, --json FILE, ...)
};

// Ceilings given explicitly (--ceilings / --datasheet), read before anything
// runs so that a wrong file fails in a second rather than after the profile.
std::optional<DeviceCeilings> checked_explicit_ceilings(const ReportArgs& a) {
  const std::optional<DeviceCeilings> c = explicit_ceilings(a.ceilings_file, a.datasheet);
  const std::string device = name_of(a.profile.options.device);
  if (c && c->device_kind != device)
    throw_usage("the ceilings " + (a.ceilings_file.empty() ? "'" + a.datasheet + "'" : "in '" + a.ceilings_file + "'") +
                " are for a " + c->device_kind + " device, but --device is " + device);
  return c;
}

ReportOptions report_options(const ReportArgs& a) {
  ReportOptions ro;
  ro.top = a.profile.output.top;
  ro.show_all_nodes = !a.profile.output.no_nodes;
  return ro;
}

// Checks the flags, profiles and joins; the record every format is written from.
// fit's forecast of this run beside its measurement, node by node: the
// profile's own analysis (the model it bound, kept with it: the file is not
// read again), priced with the report's ceilings as `modelstat fit` would. A model fit cannot price (ceilings without the
// run's dtype, say) keeps its report, with the reason in forecast_note.
void add_forecast(JoinedReport& report, const ProfileArgs& p) {
  if (p.options.train_step) {
    report.forecast_note = "the report's forecast is of inference; --train-step runs are forecast by `modelstat fit --train`";
    return;
  }
  if (!p.options.fuse) {
    report.forecast_note = "no forecast: `fit` prices the fused executor's kernels, and this run had --fusion off";
    return;
  }
  try {
    FitOptions options;
    options.compute_dtype = report.profile.context.dtype.empty() ? "fp32" : report.profile.context.dtype;
    join_forecast(report, forecast_fit(report.profile.analysis, report.ceilings, options));
  } catch (const Error& e) {
    report.forecast_note = std::string("no forecast: ") + e.what();
  }
}

JoinedReport build_report(const ReportArgs& a) {
  const ProfileArgs& p = a.profile;
  if (p.no_layers)
    throw_usage("report joins each node's time with its cost, so it needs the per-layer pass: drop --no-layers "
                "(`modelstat profile --no-layers` gives the whole-model latency alone)");
  for (const auto& [format, path] : a.extra_outputs)
    if (path == p.output.output && !path.empty() && path != "-")
      throw_usage("--" + format + " and -o both write '" + path + "'");
  std::optional<DeviceCeilings> ceilings = checked_explicit_ceilings(a);
  // Fail on a bad format name now, not after the profile.
  make_joined_writer(p.output.format);
  const std::optional<GroupRule> group_rule = p.output.group_rule();

  std::optional<ProfileResult> one_thread;
  if (a.scaling) {
    if (p.options.device != DeviceKind::Cpu) throw_usage("--scaling compares CPU thread counts: it needs --device cpu");
    if (p.options.threads == 1) throw_usage("--scaling compares 1 thread with N: give --threads N > 1 (default: all cores)");
    if (group_rule) throw_usage("--scaling is per node: leave out --group-by");
    ProfileOptions single = p.options;
    single.threads = 1;
    one_thread = profile_model(p.model.model, p.model.run_load_options(), single);
  }
  ProfileResult profile = profile_model(p.model.model, p.model.run_load_options(), p.options);
  if (group_rule) apply_grouping(profile, *group_rule);
  std::vector<std::string> notices = p.notices;
  if (!ceilings) ceilings = saved_or_quick_ceilings(p.options, profile.context, notices);
  JoinedReport report = join_profile(std::move(profile), *ceilings);
  add_forecast(report, p);
  if (report.forecast_note.empty())
    if (std::string stale = stale_ceilings_notice(*ceilings, std::time(nullptr), "this report's forecast column");
        !stale.empty())
      notices.push_back(std::move(stale));
  if (one_thread) {
    join_scaling(report, *one_thread);
    notices.push_back("--scaling: the model was profiled at 1 thread, then at " +
                      std::to_string(report.profile.context.threads) +
                      " threads, in this process; the scaling rows compare the two runs' per-node medians");
  }
  report.notices.insert(report.notices.begin(), notices.begin(), notices.end());
  return report;
}

// --html FILE, --json FILE, ...: the formats written beside the main one.
void write_extra_outputs(const ReportArgs& a, const JoinedReport& report) {
  const ReportOptions ro = report_options(a);
  for (const auto& [format, path] : a.extra_outputs) {
    if (path.empty()) continue;
    const std::unique_ptr<JoinedWriter> writer = make_joined_writer(format);
    write_output(path, [&](std::ostream& out, bool) { writer->write(report, ro, out); });
  }
}

int run_report(const ReportArgs& a) {
  const ProfileArgs& p = a.profile;
  const JoinedReport report = build_report(a);
  const std::unique_ptr<JoinedWriter> main_writer = make_joined_writer(p.output.format);
  write_output(p.output.output, [&](std::ostream& out, bool is_tty) {
    ReportOptions o = report_options(a);
    o.color = p.output.format == "table" && is_tty && std::getenv("NO_COLOR") == nullptr;
    main_writer->write(report, o, out);
  });
  write_extra_outputs(a, report);
  return 0;
}

// The record as JSON and table; the files named by --html, --json, ... are written too.
Rendered render_report(const ReportArgs& a) {
  const JoinedReport report = build_report(a);
  write_extra_outputs(a, report);
  const ReportOptions ro = report_options(a);
  std::ostringstream json, table;
  make_joined_writer("json")->write(report, ro, json);
  make_joined_writer("table")->write(report, ro, table);
  return {json.str(), table.str(), 0};
}

}  // namespace

// What `modelstat <command> --help` opens with.
const char* const kReportHelp =
    "Profile a model (the measurement of `modelstat profile`, with every one of its flags) and join each "
    "node's measured median time with its static cost (MACs, FLOPs, bytes) on the device's roofline: share "
    "of time and of FLOPs, achieved GFLOP/s and GB/s, arithmetic intensity, whether the compute or the "
    "memory ceiling bounds the node, and its efficiency against that ceiling. Hotspots by time, every node, "
    "a summary by op type. Needs the per-layer pass (--no-layers is refused).";

void add_report_command(CLI::App& app, std::vector<Command>& commands) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand("report", kReportHelp);
  add_profile_flags(*cmd, args->profile, kReportFormats);
  add_generation_flags(*cmd, args->generation);
  cmd->add_flag("--scaling", args->scaling,
                "Also profile at 1 thread and show, per node, the time at 1 and at N threads (--threads N, default "
                "all cores), the speedup, the parallel efficiency and why a node does not scale (too small to "
                "split, at the memory roof, serial)");
  cmd->get_option("--top")->description("Hotspot nodes to list, by median time; 0 for none");
  cmd->get_option("--no-layers")->description("Refused: the report needs the per-layer pass");
  cmd->get_option("--no-nodes")->description("Leave the per-node rows out of table and Markdown (JSON and CSV keep them)");
  cmd->get_option("--group-by")
      ->description(std::string(kGroupByHelp) +
                    "; the HTML page adds a sortable group table; the Chrome trace stays per node");
  for (const char* format : {"html", "json", "csv", "md", "trace"}) {
    const std::string what = std::string(format) == "trace"
                                 ? "a Chrome trace (Perfetto, chrome://tracing) of the median instrumented iteration"
                                 : std::string("the ") + format + " report";
    cmd->add_option(std::string("--") + format, args->extra_outputs[format],
                    "Also write " + what + " to FILE, from the same run")
        ->type_name("FILE");
  }
  CLI::Option* file = cmd->add_option("--ceilings", args->ceilings_file,
                                      "Roofline ceilings from FILE (JSON written by `modelstat device`)")
                        ->type_name("FILE");
  CLI::Option* sheet = cmd->add_option("--datasheet", args->datasheet,
                                       "Roofline from a GPU's datasheet peaks instead of measured ones (labelled "
                                       "as such): " +
                                           [] {
                                             std::string names;
                                             for (const std::string& n : datasheet_names())
                                               names += (names.empty() ? "" : ", ") + n;
                                             return names;
                                           }())
                            ->type_name("NAME");
  file->excludes(sheet);
  cmd->footer(
      "Ceilings (the roofs each node is placed under), in this order:\n"
      "  1. --ceilings FILE, or --datasheet NAME (vendor peaks, a labelled fallback: efficiencies are then\n"
      "     against the datasheet, not against what this machine reaches);\n"
      "  2. the ceilings `modelstat device` saved for this device kind (" +
      default_ceilings_path("cpu") +
      ",\n"
      "     ceilings-cuda.json beside it), when they are of this device: same kind, same name and, on the CPU,\n"
      "     the same thread count;\n"
      "  3. otherwise quick ceilings measured now, in a few seconds; the report says so, and says why the saved\n"
      "     ones did not fit. Run `modelstat device` to measure and save accurate ceilings.\n"
      "Formats: -f table|json|csv|md|html|trace to stdout or -o FILE; --html/--json/--csv/--md/--trace FILE write\n"
      "more formats from the same run. JSON nests the complete profile document under \"profile\"\n"
      "(docs/report-json.md). The trace is Chrome Trace Event JSON of the instrumented iteration whose layer\n"
      "sum is the median, nodes back to back; open it in ui.perfetto.dev or chrome://tracing.\n"
      "Exit codes: 0 ok, 1 runtime failure, 2 bad usage or bad input.");
  // --generate: the generation report, with the ceilings named here (or the saved or quick ones).
  auto generation_report = [args] {
    return GenerationReport{checked_explicit_ceilings(*args), args->extra_outputs};
  };
  commands.push_back({cmd,
                      [args, generation_report] {
                        args->profile.finish();
                        if (args->generation.requested())
                          return run_generation(args->profile, args->generation, generation_report());
                        return run_report(*args);
                      },
                      [args, generation_report] {
                        args->profile.finish();
                        if (args->generation.requested())
                          return render_generation(args->profile, args->generation, generation_report());
                        return render_report(*args);
                      }});
}

}  // namespace modelstat::cli

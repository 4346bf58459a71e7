// `modelstat suite run|cell|slurm|collect`: a matrix of models x settings, one
// cell per process, results kept with their machine (docs/suites.md).
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "analyzer/measurements/atomic_file.hpp"
#include "analyzer/suite/cell_json.hpp"
#include "analyzer/suite/cell_runner.hpp"
#include "analyzer/suite/hash.hpp"
#include "analyzer/suite/machine.hpp"
#include "analyzer/suite/process.hpp"
#include "analyzer/suite/result_files.hpp"
#include "analyzer/suite/results_db.hpp"
#include "analyzer/suite/slurm.hpp"
#include "analyzer/suite/suite_spec.hpp"
#include "tools/suite_commands.hpp"
#include "tools/writers/units.hpp"

namespace modelstat::cli {

std::string default_results_db() { return suite::default_data_dir() + "/results.db"; }

namespace {

namespace fs = std::filesystem;
using namespace modelstat::suite;

const char* const kSuiteHelp =
    "Run a suite: models x batch x threads x dtype x fusion x mode x device x runtime, one cell per process with "
    "profile's protocol, each result kept with the machine, the software and the environment it ran under "
    "(docs/suites.md).";

const char* const kSuiteFooter =
    "The suite file (YAML, or JSON):\n"
    "  models:                        # each: path (relative to the suite file), name, bindings, inputs, task\n"
    "    - path: sample_models/custom_model.onnx\n"
    "    - path: sample_models/tiny_bert.onnx\n"
    "      bindings: {seq: 16}        # --dim seq=16\n"
    "  axes:                          # each a list; left out: batch 1, threads all, the rest the first shown\n"
    "    batch: [1, 2]                # --default-batch\n"
    "    threads: [1, 2]              # all | N\n"
    "    mode: [sync, async:4]        # async:N = N requests in flight (profile --concurrency N)\n"
    "    # dtype: [model, fp32, fp16, bf16]  fusion: [on, off]  device: [cpu, cuda]  runtime: [modelstat, NAME]\n"
    "  profile: {min_time: 0.2, max_time: 0.5}   # the stopping rule, as profile's flags; layers: false\n"
    "  fit: auto                      # off | {ceilings: FILE} | {datasheet: NAME}\n"
    "  runners:                       # external runtimes: an argument vector, never a shell string\n"
    "    ort: {command: [node, ort.mjs, \"{model}\", \"{batch}\", \"{threads}\"]}\n"
    "\n"
    "Examples:\n"
    "  modelstat suite run suite.yaml --dry-run              # the cells, without running them\n"
    "  modelstat suite run suite.yaml --results results.db   # run here; --resume after a kill runs the rest\n"
    "  modelstat suite slurm suite.yaml --results /shared/run1 --partition cpu --max-parallel 8\n"
    "  modelstat suite collect /shared/run1 --into results.db\n"
    "  modelstat results results.db -f html -o results.html";

std::string clock_text(double seconds) {
  const auto s = static_cast<int64_t>(seconds + 0.5);
  return s >= 3600 ? fmt::format("{}:{:02d}:{:02d}", s / 3600, (s / 60) % 60, s % 60)
                   : fmt::format("{}:{:02d}", s / 60, s % 60);
}

std::string new_run_id(const std::string& prefix, const Machine& m) {
  const auto now = std::chrono::system_clock::now().time_since_epoch().count();
  const std::string stamp = utc_now();  // 2026-11-27T10:00:00Z
  std::string compact;
  for (char c : stamp)
    if (c != '-' && c != ':') compact += c;
  return prefix + "-" + compact + "-" + hash_text(fmt::format("{}/{}/{}", m.id, getpid(), now)).substr(0, 8);
}

// "[3/8] tiny_bert b2 t1 sync: ok 4.12 ms (forecast +12%) | 0:12 elapsed, ETA 0:20"
std::string progress_line(int64_t done, int64_t total, const CellResult& r, double elapsed, int64_t run_here) {
  std::string what;
  if (r.status == "ok") {
    what = "ok, median " + human_seconds(r.measurement->latency.median);
    if (r.forecast.error) what += fmt::format(", forecast {:+.0f}%", *r.forecast.error * 100);
  } else {
    what = "FAILED (" + r.error_type + "): " + r.error.substr(0, r.error.find('\n'));
    if (what.size() > 160) what = what.substr(0, 157) + "...";
  }
  const double per_cell = run_here > 0 ? elapsed / static_cast<double>(run_here) : 0;
  return fmt::format("[{}/{}] {}: {} | {} elapsed, ETA {}", done, total, r.cell.label(), what, clock_text(elapsed),
                     clock_text(per_cell * static_cast<double>(total - done)));
}

CellRunSetup make_setup(const Machine& machine, const std::string& run_id) {
  CellRunSetup setup;
  setup.modelstat = self_binary();
  setup.machine = machine;
  setup.environment = probe_environment();
  setup.run_id = run_id;
  setup.ceilings_dir = default_data_dir() + "/suite-ceilings";
  setup.note = [](const std::string& text) { std::fprintf(stderr, "modelstat: %s\n", text.c_str()); };
  return setup;
}

// ------------------------------------------------------------------ suite run

struct RunArgs {
  std::string suite, results, machine, format = "table";
  bool resume = false, dry_run = false;
};

int list_cells(const SuiteSpec& spec, const std::vector<Cell>& cells, const std::set<std::string>& done,
               const std::string& format) {
  if (format == "json") {
    Json j = Json::array();
    for (const Cell& c : cells) {
      Json cell = c;
      cell["done"] = done.count(c.key) > 0;
      j.push_back(cell);
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("{}: {} cells ({} models), about {} each at most by the stopping rule{}\n", spec.file,
                           cells.size(), spec.models.size(), clock_text(cell_seconds_estimate(spec)),
                           done.empty() ? "" : fmt::format("; {} done, {} to run", done.size(), cells.size() - done.size()));
  std::cout << fmt::format("{:>5}  {:<16}  {:<24}  {:>5}  {:>7}  {:<8}  {:<6}  {:<6}  {:<6}  {:<10}  {}\n", "index", "key",
                           "model", "batch", "threads", "mode", "dtype", "fusion", "device", "runtime", "status");
  for (const Cell& c : cells)
    std::cout << fmt::format("{:>5}  {:<16}  {:<24}  {:>5}  {:>7}  {:<8}  {:<6}  {:<6}  {:<6}  {:<10}  {}\n", c.index,
                             c.key, c.model, c.batch, c.threads > 0 ? std::to_string(c.threads) : "all",
                             c.requests > 0 ? "async:" + std::to_string(c.requests) : "sync", c.dtype, c.fusion,
                             c.device, c.runtime, done.count(c.key) ? "done" : "to run");
  return 0;
}

int run_suite(const RunArgs& a) {
  const SuiteSpec spec = load_suite(a.suite);
  const std::vector<Cell> cells = expand_cells(spec);
  const Machine machine = probe_machine(a.machine);
  const std::string db_path = a.results.empty() ? default_results_db() : a.results;
  if (a.dry_run) {
    std::set<std::string> done;
    if (a.resume && fs::exists(db_path)) {
      ResultsDb db(db_path);
      if (const auto run = db.latest_run(spec.content_hash, machine.id); run && run->finished_at.empty())
        done = db.cells_done(run->run_id);
    }
    return list_cells(spec, cells, done, a.format);
  }
  install_stop_handlers();
  ResultsDb db(db_path);
  RunInfo run;
  if (a.resume) {
    if (const auto last = db.latest_run(spec.content_hash, machine.id)) {
      if (!last->finished_at.empty()) {
        std::fprintf(stderr, "modelstat: the latest run of %s on %s (%s) finished at %s: nothing to resume\n",
                     a.suite.c_str(), machine.name.c_str(), last->run_id.c_str(), last->finished_at.c_str());
        return 0;
      }
      run = *last;
    } else {
      std::fprintf(stderr, "modelstat: no run of this suite on %s in %s: starting one\n", machine.name.c_str(),
                   db_path.c_str());
    }
  }
  if (run.run_id.empty()) {
    run = RunInfo{new_run_id("run", machine), spec.name, spec.file, spec.content_hash, machine.id,
                  static_cast<int64_t>(cells.size()), utc_now(), ""};
    db.begin_run(run);
  }
  const std::set<std::string> done_before = db.cells_done(run.run_id);
  const CellRunSetup setup = make_setup(machine, run.run_id);
  std::fprintf(stderr, "modelstat: suite %s: %zu cells on %s (%s), run %s%s, results in %s\n", spec.name.c_str(),
               cells.size(), machine.name.c_str(), machine.id.c_str(), run.run_id.c_str(),
               done_before.empty() ? "" : fmt::format(" resumed with {} done", done_before.size()).c_str(),
               db_path.c_str());
  const auto start = std::chrono::steady_clock::now();
  int64_t done = static_cast<int64_t>(done_before.size()), run_here = 0, failed = 0;
  for (const Cell& c : cells) {
    if (done_before.count(c.key)) continue;
    if (stop_requested()) break;
    const std::optional<CellResult> r = run_cell(spec, c, setup);
    if (!r) break;  // stopped mid-cell: not recorded, runs again on --resume
    db.insert(*r);
    ++done;
    ++run_here;
    failed += r->status == "ok" ? 0 : 1;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "%s\n", progress_line(done, static_cast<int64_t>(cells.size()), *r, elapsed, run_here).c_str());
  }
  if (stop_requested()) {
    std::fprintf(stderr, "modelstat: stopped by signal %d after %lld of %zu cells; `modelstat suite run %s --resume` runs the %lld left\n",
                 stop_signal(), static_cast<long long>(done), cells.size(), a.suite.c_str(),
                 static_cast<long long>(static_cast<int64_t>(cells.size()) - done));
    return 128 + stop_signal();
  }
  db.finish_run(run.run_id);
  std::fprintf(stderr, "modelstat: %lld cells run here%s, %lld failed (recorded with their error); `modelstat results %s` shows them\n",
               static_cast<long long>(run_here),
               done_before.empty() ? "" : fmt::format(" ({} before)", done_before.size()).c_str(),
               static_cast<long long>(failed), db_path.c_str());
  return 0;
}

// ------------------------------------------------------------------ suite cell

struct CellArgs {
  std::string suite, results, machine, run_id;
  int64_t index = -1, cells_per_task = 1;
};

int run_task(const CellArgs& a) {
  const SuiteSpec spec = load_suite(a.suite);
  const std::vector<Cell> cells = expand_cells(spec);
  int64_t index = a.index;
  std::string from = "--index";
  for (const char* var : {"SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"}) {
    if (index >= 0) break;
    if (const char* v = std::getenv(var); v && *v) {
      char* end = nullptr;
      index = std::strtoll(v, &end, 10);
      if (*end != '\0' || index < 0) throw_usage(fmt::format("{}={} is not a task index", var, v));
      from = var;
    }
  }
  if (index < 0) throw_usage("which cells? give --index, or run under Slurm (SLURM_ARRAY_TASK_ID) or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX)");
  const int64_t n = static_cast<int64_t>(cells.size());
  const int64_t tasks = (n + a.cells_per_task - 1) / a.cells_per_task;
  if (index >= tasks)
    throw_usage(fmt::format("{} {} is past the last task: {} cells, {} per task, so tasks 0..{}", from, index, n,
                            a.cells_per_task, tasks - 1));
  const Machine machine = probe_machine(a.machine);
  // One folder, one run, whatever launched the tasks (unless --run-id says otherwise).
  const std::string run_id =
      a.run_id.empty() ? "dir-" + hash_text(spec.content_hash + "\n" + fs::absolute(a.results).lexically_normal().string())
                       : a.run_id;
  install_stop_handlers();
  const CellRunSetup setup = make_setup(machine, run_id);
  for (int64_t i = index * a.cells_per_task; i < std::min(n, (index + 1) * a.cells_per_task); ++i) {
    const Cell& c = cells[static_cast<size_t>(i)];
    CellResult probe;
    probe.cell = c;
    probe.machine = machine;
    if (fs::exists(fs::path(a.results) / result_file_name(probe))) {
      std::fprintf(stderr, "modelstat: cell %lld (%s) already has its result file here: skipped\n",
                   static_cast<long long>(i), c.label().c_str());
      continue;
    }
    const std::optional<CellResult> r = run_cell(spec, c, setup);
    if (!r) break;
    write_result_file(a.results, *r);
    std::fprintf(stderr, "modelstat: cell %lld (%s): %s\n", static_cast<long long>(i), c.label().c_str(),
                 r->status == "ok" ? ("ok, median " + human_seconds(r->measurement->latency.median)).c_str()
                                   : ("FAILED (" + r->error_type + "): " + r->error).c_str());
  }
  if (stop_requested()) return 128 + stop_signal();
  return 0;
}

// ------------------------------------------------------------------ suite slurm

struct SlurmArgs {
  std::string suite, results;
  SlurmOptions options;
  bool dry_run = false;
};

int run_slurm(const SlurmArgs& a) {
  const SuiteSpec spec = load_suite(a.suite);
  const std::vector<Cell> cells = expand_cells(spec);
  const Machine here = probe_machine("");
  const SlurmPlan plan = plan_slurm(spec, static_cast<int64_t>(cells.size()), a.options, a.results, self_binary(),
                                    new_run_id("slurm", here));
  std::error_code ec;
  fs::create_directories(fs::path(plan.script_path).parent_path(), ec);
  if (ec) throw Error(ErrorKind::Runtime, "cannot create the results folder: " + ec.message(), a.results);
  write_file_atomically(plan.script_path, [&](std::ostream& out) { out << plan.script; });
  std::string command;
  for (const std::string& w : plan.sbatch_argv) command += (command.empty() ? "" : " ") + shell_quote(w);
  std::printf("%lld cells in %lld array tasks of %lld (about %s of work each; MaxArraySize %lld, %s)\n",
              static_cast<long long>(plan.cells), static_cast<long long>(plan.tasks),
              static_cast<long long>(plan.cells_per_task),
              clock_text(plan.cell_seconds * static_cast<double>(plan.cells_per_task)).c_str(),
              static_cast<long long>(plan.max_array_size), plan.max_array_size_source.c_str());
  std::printf("script: %s\n", plan.script_path.c_str());
  if (a.dry_run) {
    std::printf("not submitted (--dry-run); submit with:\n  %s\n", command.c_str());
    return 0;
  }
  const auto start = std::chrono::steady_clock::now();
  const std::string job = submit_slurm(plan);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (a.options.wait)
    std::printf("job %s finished (%s after submission); merge with:\n", job.c_str(), clock_text(seconds).c_str());
  else
    std::printf("submitted job %s; when it has finished, merge with:\n", job.c_str());
  std::printf("  modelstat suite collect %s --into results.db\n", shell_quote(a.results).c_str());
  return 0;
}

// ------------------------------------------------------------------ suite collect

struct CollectArgs {
  std::string folder, into;
};

int run_collect(const CollectArgs& a) {
  ResultsDb db(a.into.empty() ? default_results_db() : a.into);
  const bool tty = isatty(STDERR_FILENO) != 0;
  const CollectReport r = collect_results(a.folder, db, [&](int64_t files) {
    if (tty) std::fprintf(stderr, "\r%lld files read", static_cast<long long>(files));
  });
  if (tty) std::fprintf(stderr, "\r");
  std::printf("%lld result files in %s: %lld added to %s, %lld already there\n", static_cast<long long>(r.files),
              a.folder.c_str(), static_cast<long long>(r.added), db.path().c_str(), static_cast<long long>(r.already));
  if (r.bulk)
    std::fprintf(stderr, "modelstat: merged as one bulk load: the indexes were built at the end (%.1f s with the commit)\n",
                 r.index_seconds);
  for (const std::string& link : r.links) std::fprintf(stderr, "modelstat: %s: a link, not followed\n", link.c_str());
  for (const std::string& why : r.refused) std::fprintf(stderr, "modelstat: error: not merged: %s\n", why.c_str());
  if (!r.refused.empty()) {
    std::fprintf(stderr, "modelstat: error: %zu result files refused (the others were merged)\n", r.refused.size());
    return 2;
  }
  return 0;
}

}  // namespace

void add_suite_command(CLI::App& app, std::vector<Command>& commands) {
  CLI::App* suite = app.add_subcommand("suite", kSuiteHelp);
  suite->footer(kSuiteFooter);
  suite->require_subcommand(1);

  auto run = std::make_shared<RunArgs>();
  CLI::App* r = suite->add_subcommand("run", "Run every cell here, one process each, into the results database");
  r->add_option("suite", run->suite, "Suite file (YAML or JSON)")->required();
  r->add_option("--results", run->results, "Results database (default " + default_results_db() + ")");
  r->add_option("--machine", run->machine, "Name this machine's results go under (default: the host name)");
  r->add_flag("--resume", run->resume,
              "Continue the latest unfinished run of this suite on this machine: only the cells it lacks run");
  r->add_flag("--dry-run", run->dry_run, "List the cells (with --resume: which are done) without running them");
  r->add_option("-f,--format", run->format, "--dry-run's listing: table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->default_val("table");
  commands.push_back({r, [run] { return run_suite(*run); }, {}});

  auto cell = std::make_shared<CellArgs>();
  CLI::App* c = suite->add_subcommand(
      "cell",
      "Run one task's cells and write one result file per cell into a results folder: the entry point of a Slurm array "
      "task, a Kubernetes Indexed Job pod or any launcher");
  c->add_option("suite", cell->suite, "Suite file (YAML or JSON)")->required();
  c->add_option("--results", cell->results, "Results folder (merge it with `suite collect`)")->required();
  c->add_option("--index", cell->index,
                "Task index (default: $SLURM_ARRAY_TASK_ID, else $JOB_COMPLETION_INDEX); runs cells index*P .. index*P+P-1")
      ->check(CLI::NonNegativeNumber);
  c->add_option("--cells-per-task", cell->cells_per_task, "P, cells per task (default 1)")->check(CLI::PositiveNumber);
  c->add_option("--machine", cell->machine, "Name this machine's results go under (default: the host name)");
  c->add_option("--run-id", cell->run_id, "Run the results belong to (default: one per suite and results folder)");
  commands.push_back({c, [cell] { return run_task(*cell); }, {}});

  auto slurm = std::make_shared<SlurmArgs>();
  CLI::App* s = suite->add_subcommand(
      "slurm",
      "Write and submit a Slurm job array (sbatch --array=0-K%N) whose tasks run `suite cell`, cells packed per task");
  s->add_option("suite", slurm->suite, "Suite file (YAML or JSON)")->required();
  s->add_option("--results", slurm->results, "Results folder, on a filesystem the compute nodes share")->required();
  s->add_option("--partition", slurm->options.partition, "Slurm partition (sbatch --partition)");
  s->add_option("--constraint", slurm->options.constraint, "Node features the cells need (sbatch --constraint)");
  s->add_option("--max-parallel", slurm->options.max_parallel, "Tasks running at once (the %N of --array)")
      ->check(CLI::PositiveNumber);
  s->add_option("--time", slurm->options.time_limit, "Time limit per task (sbatch --time, e.g. 30:00)");
  s->add_option("--account", slurm->options.account, "Slurm account (sbatch --account)");
  s->add_option("--cells-per-task", slurm->options.cells_per_task,
                "Cells per task (default: packed to about a minute of work per task, within MaxArraySize)")
      ->check(CLI::PositiveNumber);
  s->add_option("--max-array-size", slurm->options.max_array_size,
                "The cluster's MaxArraySize (default: asked with scontrol, else Slurm's default 1001)")
      ->check(CLI::PositiveNumber);
  s->add_option("--sbatch-arg", slurm->options.sbatch_args, "One more sbatch argument (repeatable)");
  s->add_flag("--wait", slurm->options.wait, "Return when the array has finished (sbatch --wait)");
  s->add_flag("--dry-run", slurm->dry_run, "Write the script and print the sbatch command without submitting");
  commands.push_back({s, [slurm] { return run_slurm(*slurm); }, {}});

  auto collect = std::make_shared<CollectArgs>();
  CLI::App* k = suite->add_subcommand(
      "collect", "Merge a results folder's result files into a results database (again: nothing is added twice)");
  k->add_option("folder", collect->folder, "Results folder written by `suite cell` tasks")->required();
  k->add_option("--into", collect->into, "Results database (default " + default_results_db() + ")");
  commands.push_back({k, [collect] { return run_collect(*collect); }, {}});
}

}  // namespace modelstat::cli

#include "analyzer/suite/slurm.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "analyzer/suite/process.hpp"
#include "analyzer/suite/suite_spec.hpp"
#include "modelstat/error.hpp"

namespace modelstat::suite {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kSlurmDefaultMaxArraySize = 1001;  // slurm.conf(5): MaxArraySize default

std::string temp_path(const char* what) {
  static int counter = 0;
  const char* tmp = std::getenv("TMPDIR");
  return fmt::format("{}/modelstat-{}-{}-{}", tmp && *tmp ? tmp : "/tmp", what, getpid(), ++counter);
}

}  // namespace

std::string shell_quote(const std::string& word) {
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

int64_t cluster_max_array_size() {
  const std::string out = temp_path("scontrol"), err = temp_path("scontrol-err");
  ProcessOptions o;
  o.timeout_seconds = 30;
  o.stdout_path = out;
  o.stderr_path = err;
  int64_t size = 0;
  try {
    if (run_process({"scontrol", "show", "config"}, o).ok()) {
      std::istringstream in(read_text(out));
      for (std::string line; std::getline(in, line);) {
        if (line.rfind("MaxArraySize", 0) != 0) continue;
        const auto eq = line.find('=');
        if (eq != std::string::npos) size = std::atoll(line.c_str() + eq + 1);
      }
    }
  } catch (const Error&) {
  }
  std::remove(out.c_str());
  std::remove(err.c_str());
  return size;
}

SlurmPlan plan_slurm(const SuiteSpec& spec, int64_t cells, const SlurmOptions& o, const std::string& results_dir,
                     const std::string& modelstat, const std::string& run_id) {
  if (cells < 1) throw_usage("the suite has no cells");
  if (o.max_parallel < 0) throw_usage("--max-parallel must be at least 1");
  SlurmPlan p;
  p.cells = cells;
  p.run_id = run_id;
  if (o.max_array_size > 0) {
    p.max_array_size = o.max_array_size;
    p.max_array_size_source = "--max-array-size";
  } else if (const int64_t asked = cluster_max_array_size(); asked > 0) {
    p.max_array_size = asked;
    p.max_array_size_source = "scontrol show config";
  } else {
    p.max_array_size = kSlurmDefaultMaxArraySize;
    p.max_array_size_source = "Slurm's default (scontrol did not answer)";
  }
  p.cell_seconds = cell_seconds_estimate(spec);
  // Task indices run 0 .. MaxArraySize - 1.
  const int64_t fit_array = (cells + p.max_array_size - 1) / p.max_array_size;
  if (o.cells_per_task > 0) {
    if (o.cells_per_task < fit_array)
      throw_usage(fmt::format("--cells-per-task {} makes {} tasks, more than the cluster's MaxArraySize {} ({}); use "
                              "--cells-per-task {} or more",
                              o.cells_per_task, (cells + o.cells_per_task - 1) / o.cells_per_task, p.max_array_size,
                              p.max_array_size_source, fit_array));
    p.cells_per_task = o.cells_per_task;
  } else {
    const auto by_time = static_cast<int64_t>(std::ceil(kMinTaskSeconds / p.cell_seconds));
    p.cells_per_task = std::min(cells, std::max<int64_t>({1, fit_array, by_time}));
  }
  p.tasks = (cells + p.cells_per_task - 1) / p.cells_per_task;
  // A task gets the cores its widest cell uses; `threads: all` takes the whole node.
  const bool all_cores = std::count(spec.threads.begin(), spec.threads.end(), 0) > 0;
  p.cpus_per_task = all_cores ? 0 : *std::max_element(spec.threads.begin(), spec.threads.end());

  const std::string dir = fs::absolute(results_dir).lexically_normal().string();
  const std::string suite_file = fs::absolute(spec.file).lexically_normal().string();
  p.script_path = dir + "/slurm/" + run_id + ".sbatch";
  std::string s = "#!/bin/bash\n";
  s += "# Written by `modelstat suite slurm` (docs/suites.md): task k of the array runs cells\n";
  s += fmt::format("# k*{0} .. k*{0}+{1} of {2} ({3} cells, {4} tasks; about {5:.0f} s per cell by the stopping rule).\n",
                   p.cells_per_task, p.cells_per_task - 1, suite_file, cells, p.tasks, p.cell_seconds);
  s += "#SBATCH --job-name=" + shell_quote("modelstat-" + spec.name) + "\n";
  s += fmt::format("#SBATCH --array=0-{}{}\n", p.tasks - 1, o.max_parallel > 0 ? fmt::format("%{}", o.max_parallel) : "");
  s += "#SBATCH --output=" + shell_quote(dir + "/slurm/%A_%a.out") + "\n";
  if (p.cpus_per_task > 0)
    s += fmt::format("#SBATCH --cpus-per-task={}\n", p.cpus_per_task);
  else
    s += "#SBATCH --exclusive\n";  // threads: all (every core of the node)
  if (!o.partition.empty()) s += "#SBATCH --partition=" + shell_quote(o.partition) + "\n";
  if (!o.constraint.empty()) s += "#SBATCH --constraint=" + shell_quote(o.constraint) + "\n";
  if (!o.time_limit.empty()) s += "#SBATCH --time=" + shell_quote(o.time_limit) + "\n";
  if (!o.account.empty()) s += "#SBATCH --account=" + shell_quote(o.account) + "\n";
  s += "set -eu\n";
  s += fmt::format("exec {} suite cell {} --index \"$SLURM_ARRAY_TASK_ID\" --cells-per-task {} --results {} --run-id {}\n",
                   shell_quote(modelstat), shell_quote(suite_file), p.cells_per_task, shell_quote(dir),
                   shell_quote(run_id));
  p.script = s;
  p.sbatch_argv = {"sbatch", "--parsable"};
  if (o.wait) p.sbatch_argv.push_back("--wait");
  p.sbatch_argv.insert(p.sbatch_argv.end(), o.sbatch_args.begin(), o.sbatch_args.end());
  p.sbatch_argv.push_back(p.script_path);
  return p;
}

std::string submit_slurm(const SlurmPlan& plan) {
  const std::string out = temp_path("sbatch"), err = temp_path("sbatch-err");
  ProcessOptions o;
  o.stdout_path = out;
  o.stderr_path = err;
  const ProcessResult r = run_process(plan.sbatch_argv, o);
  const std::string printed = read_text(out), complaint = tail_lines(err, 10);
  std::remove(out.c_str());
  std::remove(err.c_str());
  if (r.stopped) throw Error(ErrorKind::Runtime, "stopped while sbatch ran");
  if (!r.ok())
    throw Error(ErrorKind::Usage, fmt::format("sbatch failed ({}){}", r.describe(0),
                                              complaint.empty() ? std::string(" and printed nothing")
                                                                : ": " + complaint),
                plan.script_path);
  // --parsable: "jobid" or "jobid;cluster" on the first line.
  std::string id = printed.substr(0, printed.find_first_of(";\n"));
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
    throw Error(ErrorKind::Usage, "sbatch printed no job id: " + printed, plan.script_path);
  return id;
}

}  // namespace modelstat::suite

// Fanning a suite out on Slurm (docs/suites.md, "Slurm"): one job array whose
// task k runs `modelstat suite cell SUITE --index k --cells-per-task P
// --results DIR`, P cells packed per task so that each task carries about a
// minute of work (the scheduler is then hit a few times a minute, not once a
// second) and the array stays within the cluster's MaxArraySize. Machines are
// chosen by Slurm's partitions and constraints, never by a host list.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "modelstat/suite.hpp"

namespace modelstat::suite {

struct SlurmOptions {
  std::string partition, constraint, time_limit, account;
  int max_parallel = 0;           // %N of --array; 0: as many as Slurm starts
  int64_t cells_per_task = 0;     // 0: packed by the estimate (at least kMinTaskSeconds of work per task)
  int64_t max_array_size = 0;     // 0: the cluster's (scontrol show config), else Slurm's default 1001
  std::vector<std::string> sbatch_args;  // more sbatch options, each one argument
  bool wait = false;              // sbatch --wait: return when the array has finished
};

// Work a task should carry at least, seconds: with P tasks running, Slurm sees
// P task ends a minute at most.
constexpr double kMinTaskSeconds = 60;

struct SlurmPlan {
  int64_t cells = 0, tasks = 0, cells_per_task = 1, max_array_size = 1001;
  std::string max_array_size_source;  // "scontrol show config", "--max-array-size", "Slurm's default"
  double cell_seconds = 0;            // estimate per cell (cell_seconds_estimate)
  int cpus_per_task = 0;              // the suite's largest thread count; 0: --exclusive (threads: all)
  std::string run_id, script_path, script;
  std::vector<std::string> sbatch_argv;
};

// The array for `cells` cells of `spec`, its script (written by the caller)
// and the sbatch command. `modelstat` and `suite_file` are written into the
// script as absolute paths.
SlurmPlan plan_slurm(const SuiteSpec& spec, int64_t cells, const SlurmOptions& options, const std::string& results_dir,
                     const std::string& modelstat, const std::string& run_id);

// The cluster's MaxArraySize (scontrol show config), 0 when it cannot be asked.
int64_t cluster_max_array_size();

// Runs sbatch and returns the job id. Error(Usage) (exit 2) with what sbatch
// printed when it is missing or fails.
std::string submit_slurm(const SlurmPlan& plan);

// A word for a shell script: single-quoted, a quote inside written '\''.
std::string shell_quote(const std::string& word);

}  // namespace modelstat::suite

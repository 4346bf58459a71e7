// `suite run` and `suite cell` end to end: real cells through `modelstat
// profile` and `fit` checked against independent runs of `analyze` and `fit`;
// external runners (argument vectors, never a shell); failures recorded while
// the suite goes on; SIGTERM and SIGKILL then --resume, every cell exactly
// once; two suites writing one database at once; tasks by index (Slurm,
// Kubernetes). Timings are never asserted.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>
#include <thread>

#include "analyzer/suite/cell_json.hpp"
#include "analyzer/suite/results_db.hpp"
#include "analyzer/suite/suite_spec.hpp"
#include "suite_test_support.hpp"

namespace modelstat::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using suite::CellResult;
using suite::ResultsDb;

// A fake runtime (docs/suites.md, "Runtimes"): logs its arguments (one JSON
// line each call) and its pid, then per its first argument: "ok" prints three
// samples of 1 ms x batch, "slow" does so after 0.4 s, "crash" dies of SIGSEGV.
const char* const kFakeRunner = R"py(
import json, os, signal, sys, time
kind, log = sys.argv[1], sys.argv[2]
with open(os.path.join(log, "argv.jsonl"), "a") as f:
    f.write(json.dumps(sys.argv[3:]) + "\n")
with open(os.path.join(log, "pids"), "a") as f:
    f.write("%d\n" % os.getpid())
if kind == "crash":
    os.kill(os.getpid(), signal.SIGSEGV)
if kind == "slow":
    time.sleep(0.4)
batch = int(sys.argv[4])
print(json.dumps({"runtime": "fake", "version": "1.0", "samples_s": [0.001 * batch, 0.0011 * batch, 0.0009 * batch],
                  "notes": ["fake runner"]}))
)py";

// Starts `modelstat ARGS` with its own stdout/stderr files; returns its pid.
pid_t spawn_modelstat(const std::vector<std::string>& args, const std::string& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    freopen(log.c_str(), "w", stdout);
    freopen(log.c_str(), "w", stderr);
    std::vector<char*> argv{const_cast<char*>(MODELSTAT_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(MODELSTAT_BINARY, argv.data());
    _exit(127);
  }
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A process that exists and is not a zombie.
bool alive(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("State:", 0) == 0) return line.find('Z') == std::string::npos;
  return false;
}

class SuiteRunTest : public ScratchFolder {
 protected:
  void SetUp() override {
    ScratchFolder::SetUp();
    write_file(path("runner.py"), kFakeRunner);
    fs::create_directories(path("log"));
    // A PATH with `timeout` (which runs the CLI under test) and nothing else: no sbatch, no scontrol.
    fs::create_directories(path("bare"));
    fs::create_symlink("/usr/bin/timeout", path("bare/timeout"));
  }
  std::string bare_path() { return "PATH=" + path("bare"); }
  // `runners:` entries for the fake runner of each kind.
  std::string runners(const std::vector<std::string>& kinds) {
    std::string s = "runners:\n";
    for (const auto& k : kinds)
      s += "  " + k + ": [" + std::string(MODELSTAT_PYTHON) + ", " + path("runner.py") + ", " + k + ", " + path("log") +
           ", \"{model}\", \"{batch}\", \"{threads}\", \"{inputs}\"]\n";
    return s;
  }
  std::vector<json> logged_argv() {
    std::vector<json> out;
    for (const std::string& line : lines_of(read(path("log/argv.jsonl")))) out.push_back(json::parse(line));
    return out;
  }
  // Kills a suite halfway with `signal`, resumes it, and checks every cell ran exactly once.
  void kill_and_resume(const std::string& suite_file, const std::string& db, int signal) {
    constexpr size_t kCells = 8;
    const pid_t pid = spawn_modelstat({"suite", "run", suite_file, "--results", db}, path("run.log"));
    // Wait for three cells, then kill it while the fourth runs.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (std::chrono::steady_clock::now() < deadline) {
      if (fs::exists(db) && ResultsDb(db).count({}) >= 3) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    kill(pid, signal);
    const int code = wait_exit(pid);
    EXPECT_EQ(code, 128 + signal) << read(path("run.log"));
    const size_t before = results(db).size();
    EXPECT_GE(before, 3u);
    EXPECT_LT(before, kCells);
    // The runner of the cell it was running is gone too (ended by the suite, or by PR_SET_PDEATHSIG).
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const auto pids = lines_of(read(path("log/pids")));
    ASSERT_FALSE(pids.empty());
    EXPECT_FALSE(alive(std::stoi(pids.back()))) << "the cell's runner outlived the suite";

    const CliResult dry = run_modelstat_cli("suite run " + suite_file + " --results " + db + " --resume --dry-run");
    EXPECT_NE(dry.out.find(std::to_string(before) + " done, " + std::to_string(kCells - before) + " to run"),
              std::string::npos)
        << dry.out;
    const CliResult resumed = run_modelstat_cli("suite run " + suite_file + " --results " + db + " --resume", "", 300);
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    EXPECT_NE(resumed.err.find("resumed with " + std::to_string(before) + " done"), std::string::npos) << resumed.err;
    const std::vector<CellResult> rows = results(db);
    EXPECT_EQ(rows.size(), kCells);
    std::set<std::string> keys, runs;
    for (const CellResult& r : rows) {
      keys.insert(r.cell.key);
      runs.insert(r.run_id);
      EXPECT_EQ(r.status, "ok") << r.error;
    }
    EXPECT_EQ(keys.size(), kCells);  // every cell exactly once
    EXPECT_EQ(runs.size(), 1u);      // in the one run
    const CliResult again = run_modelstat_cli("suite run " + suite_file + " --results " + db + " --resume");
    EXPECT_EQ(again.exit_code, 0);
    EXPECT_NE(again.err.find("nothing to resume"), std::string::npos) << again.err;
    EXPECT_EQ(results(db).size(), kCells);
  }

  std::vector<CellResult> results(const std::string& db_path) {
    ResultsDb db(db_path);
    suite::ResultFilter all;
    all.latest_only = false;
    const auto rows = db.query(all);
    std::vector<CellResult> out;
    for (const std::string& r : db.records(rows)) out.push_back(suite::read_cell_result(r, "db"));
    return out;
  }
};

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

TEST_F(SuiteRunTest, ARunnerCommandIsAnArgumentVectorNeverAShellString) {
  const std::string hostile = path("a b 'c\" ; touch INJECTED $(touch INJECTED2).onnx");
  fs::copy_file(sample_model("tiny_cnn.onnx"), hostile);
  std::string escaped;  // for a JSON string
  for (char c : hostile) escaped += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  // The suite in JSON, its runner too.
  write_file(path("s.json"), "{\"models\": [{\"path\": \"" + escaped + "\"}], \"axes\": {\"runtime\": [\"ok\"]},\n" +
                                 "\"fit\": \"off\", \"runners\": {\"ok\": [\"" + MODELSTAT_PYTHON + "\", \"" +
                                 path("runner.py") + "\", \"ok\", \"" + path("log") +
                                 "\", \"{model}\", \"{batch}\", \"{threads}\", \"{inputs}\"]}}\n");
  const CliResult r = run_modelstat_cli("suite run " + path("s.json") + " --results " + path("r.db"), "", 120);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto argv = logged_argv();
  ASSERT_EQ(argv.size(), 1u);
  EXPECT_EQ(argv[0][0], hostile);  // one argument, exactly the path
  EXPECT_EQ(argv[0][1], "1");
  EXPECT_EQ(json::parse(argv[0][3].get<std::string>()),
            json::parse(R"([{"name": "input", "dtype": "float32", "dims": [1, 3, 32, 32]}])"));
  // Nothing ran the `touch`es: no file of theirs, here or where the suite ran.
  for (const auto& e : fs::recursive_directory_iterator(dir_)) {
    EXPECT_NE(e.path().filename(), "INJECTED") << e.path();
    EXPECT_NE(e.path().filename(), "INJECTED2") << e.path();
  }
  EXPECT_FALSE(fs::exists("INJECTED"));
  EXPECT_FALSE(fs::exists("INJECTED2"));
  const auto rows = results(path("r.db"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status, "ok");
  EXPECT_EQ(rows[0].runtime_version, "fake 1.0");
  EXPECT_EQ(rows[0].measurement->latency.samples, (std::vector<double>{0.001, 0.0011, 0.0009}));
  EXPECT_DOUBLE_EQ(rows[0].measurement->fps, 1 / 0.001);
}

TEST_F(SuiteRunTest, FailedCellsAreRecordedAndTheSuiteGoesOn) {
  // tiny_cnn fixes its batch at 1: batch 2 cannot run; the crash runner dies of SIGSEGV.
  write_file(path("s.yaml"), "models: [" + sample_model("tiny_cnn.onnx") +
                                 "]\naxes:\n  runtime: [crash, ok]\n  batch: [1, 2]\nfit: off\n" + runners({"crash", "ok"}));
  const CliResult r = run_modelstat_cli("suite run " + path("s.yaml") + " --results " + path("r.db"), "", 120);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("[4/4]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ETA"), std::string::npos) << r.err;
  const auto rows = results(path("r.db"));
  ASSERT_EQ(rows.size(), 4u);
  std::map<std::string, const CellResult*> by;
  for (const auto& x : rows) by[x.cell.runtime + std::to_string(x.cell.batch)] = &x;
  for (const char* crash : {"crash1", "crash2"}) {
    EXPECT_EQ(by[crash]->status, "failed");
    EXPECT_EQ(by[crash]->exit_code, 128 + SIGSEGV);
    EXPECT_NE(by[crash]->error_type.find("signal 11"), std::string::npos) << by[crash]->error_type;
    EXPECT_FALSE(by[crash]->measurement);
  }
  EXPECT_EQ(by["ok1"]->status, "ok");
  EXPECT_EQ(by["ok2"]->status, "failed");
  EXPECT_EQ(by["ok2"]->exit_code, 2);
  EXPECT_NE(by["ok2"]->error.find("fix the batch at 1"), std::string::npos) << by["ok2"]->error;
}

#if MODELSTAT_WITH_PROFILER
// Real cells: profile's and fit's JSON read back, checked against what analyze and fit say on their own.
TEST_F(SuiteRunTest, RealCellsCarryTheMeasurementTheStaticTotalsAndFitsForecast) {
  const std::string ceilings = std::string(MODELSTAT_SOURCE_DIR) + "/tests/data/suite/ceilings-cpu.json";
  write_file(path("s.yaml"),
             "models:\n  - path: " + sample_model("tiny_cnn.onnx") + "\n  - path: " + sample_model("tiny_bert.onnx") +
                 "\n    bindings: {seq: 8}\naxes:\n  batch: [1]\n  threads: [1, 2]\n"
                 "profile: {warmup: 1, warmup_time: 0.02, iters: 5, min_time: 0.05, max_time: 0.3}\n"
                 "fit: {ceilings: " + ceilings + "}\n");
  const CliResult r = run_modelstat_cli("suite run " + path("s.yaml") + " --results " + path("r.db"), "", 600);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = results(path("r.db"));
  ASSERT_EQ(rows.size(), 4u);
  for (const CellResult& x : rows) {
    SCOPED_TRACE(x.cell.label());
    ASSERT_EQ(x.status, "ok") << x.error;
    const auto& m = *x.measurement;
    EXPECT_GE(m.latency.samples.size(), 5u);
    EXPECT_DOUBLE_EQ(m.latency.median, median_of(m.latency.samples));
    EXPECT_DOUBLE_EQ(m.fps, 1.0 / m.latency.median);
    EXPECT_EQ(x.context->threads, x.cell.threads);
    EXPECT_EQ(x.context->batch, 1);
    const std::string dims = x.cell.model == "tiny_bert" ? " --dim seq=8" : "";
    const CliResult analysis = run_modelstat_cli(x.cell.model_path + dims + " --default-batch 1 -f json");
    ASSERT_EQ(analysis.exit_code, 0) << analysis.err;
    const json totals = json::parse(analysis.out)["totals"];
    EXPECT_EQ(*x.totals->macs, totals["macs"].get<int64_t>());
    EXPECT_EQ(*x.totals->params, totals["params"].get<int64_t>());
    const CliResult fit = run_modelstat_cli("fit " + x.cell.model_path + dims + " --batch 1 -f json --ceilings " + ceilings);
    ASSERT_EQ(fit.exit_code, 0) << fit.err;
    const double forecast = json::parse(fit.out)["latency"]["total_seconds"].get<double>();
    ASSERT_TRUE(x.forecast.latency_s) << x.forecast.note;
    EXPECT_DOUBLE_EQ(*x.forecast.latency_s, forecast);
    EXPECT_DOUBLE_EQ(*x.forecast.error, forecast / m.latency.median - 1);
    if (x.cell.model == "tiny_bert") {
      ASSERT_TRUE(m.tokens);
      EXPECT_EQ(*m.tokens, 8);  // input_ids [1, 8]
      EXPECT_DOUBLE_EQ(*m.latency_per_token_s, m.latency.median / 8);
    } else {
      EXPECT_FALSE(m.tokens);
    }
    bool torch = false;
    for (const auto& [name, version] : x.environment.libraries) torch = torch || name == "LibTorch";
    EXPECT_TRUE(torch);
    EXPECT_FALSE(x.environment.modelstat_commit.empty());
    EXPECT_EQ(x.machine.cores, static_cast<int64_t>(sysconf(_SC_NPROCESSORS_ONLN)));
  }
}

// An async cell: profile's concurrency block gives the batch FPS.
TEST_F(SuiteRunTest, AnAsyncCellHasItsBatchFps) {
  write_file(path("s.yaml"), "models: [" + sample_model("tiny_cnn.onnx") +
                                 "]\naxes: {mode: [async:2], threads: [2]}\nfit: off\n"
                                 "profile: {warmup: 1, warmup_time: 0.02, iters: 5, min_time: 0.05, max_time: 0.3}\n");
  const CliResult r = run_modelstat_cli("suite run " + path("s.yaml") + " --results " + path("r.db"), "", 300);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = results(path("r.db"));
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_EQ(rows[0].status, "ok") << rows[0].error;
  EXPECT_EQ(rows[0].cell.requests, 2);
  ASSERT_TRUE(rows[0].measurement->batch_fps);
  ASSERT_TRUE(rows[0].measurement->async_latency);
  EXPECT_GT(*rows[0].measurement->batch_fps, 0);
}
#endif

TEST_F(SuiteRunTest, KilledWithSigtermOrSigkillAndResumedEveryCellRunsExactlyOnce) {
  write_file(path("s.yaml"), "models:\n  - path: " + sample_model("tiny_bert.onnx") +
                                 "\n    bindings: {seq: 4}\naxes:\n  runtime: [slow]\n  batch: [1, 2, 3, 4, 5, 6, 7, 8]\n"
                                 "fit: off\n" + runners({"slow"}));
  kill_and_resume(path("s.yaml"), path("term.db"), SIGTERM);
  kill_and_resume(path("s.yaml"), path("kill.db"), SIGKILL);
}

TEST_F(SuiteRunTest, TwoSuitesWritingOneDatabaseAtOnceLoseNothing) {
  for (const char* name : {"a", "b"})
    write_file(path(std::string(name) + ".yaml"),
               "name: " + std::string(name) + "\nmodels:\n  - path: " + sample_model("tiny_bert.onnx") +
                   "\n    bindings: {seq: 4}\naxes:\n  runtime: [ok]\n  batch: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n"
                   "fit: off\n" + runners({"ok"}));
  const pid_t a = spawn_modelstat({"suite", "run", path("a.yaml"), "--results", path("r.db"), "--machine", "box-a"}, path("a.log"));
  const pid_t b = spawn_modelstat({"suite", "run", path("b.yaml"), "--results", path("r.db"), "--machine", "box-b"}, path("b.log"));
  EXPECT_EQ(wait_exit(a), 0) << read(path("a.log"));
  EXPECT_EQ(wait_exit(b), 0) << read(path("b.log"));
  EXPECT_EQ(results(path("r.db")).size(), 20u);
  EXPECT_EQ(ResultsDb(path("r.db")).count({}), 20);
}

TEST_F(SuiteRunTest, TasksByIndexFromTheFlagSlurmOrKubernetesWriteOneFilePerCell) {
  write_file(path("s.yaml"), "models:\n  - path: " + sample_model("tiny_bert.onnx") +
                                 "\n    bindings: {seq: 4}\naxes:\n  runtime: [ok]\n  batch: [1, 2, 3, 4, 5, 6, 7, 8]\n"
                                 "fit: off\n" + runners({"ok"}));
  const std::string cell = "suite cell " + path("s.yaml") + " --cells-per-task 3 --results " + path("out");
  EXPECT_EQ(run_modelstat_cli(cell + " --index 0").exit_code, 0);
  EXPECT_EQ(run_modelstat_cli(cell, "SLURM_ARRAY_TASK_ID=1").exit_code, 0);
  EXPECT_EQ(run_modelstat_cli(cell, "JOB_COMPLETION_INDEX=2").exit_code, 0);
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(path("out"))) files += e.path().filename().string().rfind("cell-", 0) == 0;
  EXPECT_EQ(files, 8u);  // 3 + 3 + 2
  const CliResult past = run_modelstat_cli(cell + " --index 3");
  EXPECT_EQ(past.exit_code, 2);
  EXPECT_NE(past.err.find("tasks 0..2"), std::string::npos) << past.err;
  EXPECT_EQ(run_modelstat_cli("suite cell " + path("s.yaml") + " --results " + path("out")).exit_code, 2);  // no index
  // A task run again (a requeued array task) skips the cells it already wrote.
  const CliResult again = run_modelstat_cli(cell + " --index 0");
  EXPECT_NE(again.err.find("already has its result file"), std::string::npos) << again.err;
  EXPECT_EQ(lines_of(read(path("log/argv.jsonl"))).size(), 8u);
  // Collected: the cells of the dry run, each once.
  ASSERT_EQ(run_modelstat_cli("suite collect " + path("out") + " --into " + path("r.db")).exit_code, 0);
  std::set<std::string> keys;
  for (const CellResult& r : results(path("r.db"))) keys.insert(r.cell.key);
  std::set<std::string> expected;
  for (const auto& c : suite::expand_cells(suite::load_suite(path("s.yaml")))) expected.insert(c.key);
  EXPECT_EQ(keys, expected);
}

// An array task killed while its cell runs leaves no result file for that cell, and nothing collect would refuse.
TEST_F(SuiteRunTest, ATaskKilledMidCellLeavesNoPartialResult) {
  write_file(path("s.yaml"), "models:\n  - path: " + sample_model("tiny_bert.onnx") +
                                 "\n    bindings: {seq: 4}\naxes:\n  runtime: [slow]\n  batch: [1, 2, 3]\n"
                                 "fit: off\n" + runners({"slow"}));
  const pid_t pid = spawn_modelstat({"suite", "cell", path("s.yaml"), "--index", "0", "--cells-per-task", "3", "--results",
                               path("out")},
                              path("cell.log"));
  // The first cell's file, then SIGKILL while the second cell's runner sleeps.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  const auto files = [&] {
    size_t n = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(path("out"), ec)) n += e.path().filename().string().rfind("cell-", 0) == 0;
    return n;
  };
  while (files() < 1 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  kill(pid, SIGKILL);
  EXPECT_EQ(wait_exit(pid), 128 + SIGKILL);
  EXPECT_EQ(files(), 1u);
  const CliResult collect = run_modelstat_cli("suite collect " + path("out") + " --into " + path("r.db"));
  EXPECT_EQ(collect.exit_code, 0) << collect.err;
  EXPECT_NE(collect.out.find("1 result files"), std::string::npos) << collect.out;
  // The task run again writes the two cells it lacks.
  EXPECT_EQ(run_modelstat_cli("suite cell " + path("s.yaml") + " --index 0 --cells-per-task 3 --results " + path("out"), "",
                              120)
                .exit_code,
            0);
  EXPECT_EQ(files(), 3u);
}

// --- Slurm, without a cluster: the array's plan and sbatch's failures ---

TEST_F(SuiteRunTest, TenThousandCellsArePackedWithinMaxArraySize) {
  // 100 batch sizes x 100 thread counts of one model.
  std::string batches, threads;
  for (int i = 1; i <= 100; ++i) batches += (i > 1 ? ", " : "") + std::to_string(i);
  for (int i = 1; i <= 100; ++i) threads += (i > 1 ? ", " : "") + std::to_string(i);
  write_file(path("big.yaml"), "models: [" + sample_model("tiny_cnn.onnx") + "]\naxes:\n  batch: [" + batches +
                                   "]\n  threads: [" + threads + "]\nprofile: {max_time: 0.5, warmup_time: 0.1}\n");
  const std::string base = "suite slurm " + path("big.yaml") + " --results " + path("out") + " --dry-run";
  for (const int max_array : {1001, 100}) {
    SCOPED_TRACE(max_array);
    const CliResult r = run_modelstat_cli(base + " --max-array-size " + std::to_string(max_array) + " --max-parallel 16",
                                          bare_path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string script_path = r.out.substr(r.out.find("script: ") + 8, r.out.find(".sbatch") + 7 - r.out.find("script: ") - 8);
    const std::string script = read(script_path);
    const auto at = script.find("#SBATCH --array=0-");
    ASSERT_NE(at, std::string::npos) << script;
    const int last = std::stoi(script.substr(at + 18));
    EXPECT_NE(script.find("%16\n", at), std::string::npos) << script;
    const auto per = script.find("--cells-per-task ");
    ASSERT_NE(per, std::string::npos);
    const int cells_per_task = std::stoi(script.substr(per + 17));
    EXPECT_LE(last + 1, max_array);                     // indices 0 .. MaxArraySize - 1
    EXPECT_GE((last + 1) * cells_per_task, 10000);      // every cell in a task
    EXPECT_LT(last * cells_per_task, 10000);            // and no task without one
    EXPECT_NE(script.find("#SBATCH --cpus-per-task=100"), std::string::npos);
    EXPECT_NE(script.find("--index \"$SLURM_ARRAY_TASK_ID\""), std::string::npos);
  }
  // Asking for fewer cells per task than MaxArraySize allows: refused, naming the least that fits.
  const CliResult small = run_modelstat_cli(base + " --max-array-size 1001 --cells-per-task 5");
  EXPECT_EQ(small.exit_code, 2);
  EXPECT_NE(small.err.find("--cells-per-task 10 or more"), std::string::npos) << small.err;
}

TEST_F(SuiteRunTest, SbatchMissingOrFailingExitsTwoWithWhatItPrinted) {
  write_file(path("s.yaml"), "models: [" + sample_model("tiny_cnn.onnx") + "]\n");
  const std::string cmd = "suite slurm " + path("s.yaml") + " --results " + path("out");
  const CliResult missing = run_modelstat_cli(cmd, bare_path());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("sbatch failed (exit 127)"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("cannot run sbatch"), std::string::npos) << missing.err;
  fs::create_directories(path("bin"));
  write_file(path("bin/sbatch"),
             "#!/bin/sh\necho 'sbatch: error: Batch job submission failed: Invalid partition name specified' >&2\nexit 1\n");
  fs::permissions(path("bin/sbatch"), fs::perms::owner_all);
  const CliResult failing = run_modelstat_cli(cmd + " --partition nosuch", "PATH=" + path("bin") + ":" + path("bare"));
  EXPECT_EQ(failing.exit_code, 2);
  EXPECT_NE(failing.err.find("sbatch failed (exit 1): sbatch: error: Batch job submission failed: Invalid partition name"),
            std::string::npos)
      << failing.err;
  bool partition = false;  // the script of the second try says it
  for (const auto& e : fs::directory_iterator(path("out/slurm")))
    partition = partition || read(e.path().string()).find("#SBATCH --partition='nosuch'") != std::string::npos;
  EXPECT_TRUE(partition);
}

}  // namespace
}  // namespace modelstat::test

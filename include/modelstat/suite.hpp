// Suites (issue 28): a matrix of models x settings run one cell per process,
// each cell's result kept with the machine and software it ran on, merged in a
// results database and compared across machines, commits and dates
// (docs/suites.md). Plain data, no LibTorch, no YAML or SQLite types: the suite
// file is read by analyzer/suite/suite_spec.cc, cells are run by
// analyzer/suite/cell_runner.cc (which spawns `modelstat profile` and
// `modelstat fit`), results are kept by analyzer/suite/results_db.cc and
// formatted by tools/writers/results_*.cc. Times are in seconds.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "modelstat/compare.hpp"
#include "modelstat/profile.hpp"

namespace modelstat::suite {

// ------------------------------------------------------------------ the suite file

struct SuiteModel {
  std::string name;          // label (default: the file's stem); cells and results are named by it
  std::string path;          // as resolved: relative paths are against the suite file's folder
  std::string path_written;  // as the suite file spells it
  std::string task;          // DLI's "task" column (free text, default "inference")
  std::vector<std::pair<std::string, int64_t>> bindings;  // `--dim NAME=VALUE`, in the file's order
  std::vector<std::string> inputs;                        // `--input NAME:DIMS`
  std::string content_hash;  // FNV-1a 64 of the .onnx file's bytes (identity, not security)
  int line = 0;              // where the entry starts in the suite file (1-based)
};

// An external runner (`runners:` in the suite file): an argument vector whose
// elements are templates ("{model}", "{batch}", ...); each element expands to
// exactly one argument, never through a shell (docs/suites.md, "Runtimes").
struct RunnerTemplate {
  std::string name;
  std::vector<std::string> command;
  int line = 0;
};

// How a cell's forecast is made: `fit: auto` (ceilings this machine saved for
// the cell's thread count, measured once with `modelstat device --quick` when
// there are none), `off`, `{ceilings: FILE}` or `{datasheet: NAME}`.
struct FitSetting {
  std::string mode = "auto";  // auto, off, ceilings, datasheet
  std::string value;          // the file (resolved) or the datasheet name
};

struct SuiteSpec {
  std::string name;          // `name:`, default the file's stem
  std::string file;          // the suite file as given
  std::string dir;           // its folder (relative model paths are against it)
  std::string content_hash;  // FNV-1a 64 of the canonical suite (models' hashes included)
  std::vector<SuiteModel> models;
  // The axes, in the file's value order; an axis left out has its default.
  std::vector<int64_t> batch{1};
  std::vector<int> threads{0};           // 0: every core (`all`)
  std::vector<std::string> dtype{"model"};  // model (the model's own), fp32, fp16, bf16
  std::vector<std::string> fusion{"on"};    // on, off
  std::vector<int> mode{0};                 // 0: sync; N > 0: async with N requests in flight
  std::vector<std::string> device{"cpu"};   // cpu, cuda
  std::vector<std::string> runtime{"modelstat"};  // modelstat, or a runner's name
  // The stopping rule, as `profile` flags: key (min_time, ...) -> value text, in the file's order.
  std::vector<std::pair<std::string, std::string>> profile;
  FitSetting fit;
  std::map<std::string, RunnerTemplate> runners;
  double cell_timeout_seconds = 1800;  // a cell still running after this is killed and recorded as failed
};

// One point of the matrix.
struct Cell {
  int64_t index = 0;  // position in the expansion order (docs/suites.md)
  std::string key;    // FNV-1a 64 of the canonical cell definition: equal keys, same work
  std::string model, model_path, model_hash, task;
  std::vector<std::pair<std::string, int64_t>> bindings;
  std::vector<std::string> inputs;
  int64_t batch = 1;
  int threads = 0;  // 0: every core
  std::string dtype = "model", fusion = "on";
  int requests = 0;  // 0: sync; N: async, N requests in flight
  std::string device = "cpu", runtime = "modelstat";
  std::string mode_name() const { return requests > 0 ? "async" : "sync"; }
  std::string label() const;    // "tiny_bert b2 t1 sync" for progress lines and messages
  std::string setting() const;  // the label without the model: "b2 t1 sync", "b1 t4 async4 fp32 ort"
};

// ------------------------------------------------------------------ a cell's result

// The machine (METHODOLOGY rule 17): what the hardware is. `id` is a hash of
// the name and every field but `host`; the software that ran (BLAS core,
// oneDNN ISA, versions) is in Environment.
struct Machine {
  std::string id;           // 16 hex digits
  std::string name;         // --machine, default the host name
  std::string cpu_model;    // /proc/cpuinfo "model name"
  int64_t cores = 0;        // online CPUs
  int64_t memory_bytes = 0; // MemTotal
  std::string gpu, gpu_driver;  // /proc/driver/nvidia; empty without one
  std::string host;
};

// The software and the settings that change timing: modelstat's version and
// commit, library versions (LibTorch, BLAS and its core, oneDNN and its ISA,
// an external runtime's), and the environment variables of docs/suites.md.
struct Environment {
  std::string id;  // 16 hex digits: a hash of everything below
  std::string modelstat_version, modelstat_commit;
  std::vector<std::pair<std::string, std::string>> libraries;  // name -> version / description
  std::vector<std::pair<std::string, std::string>> variables;  // set variables only, name order
  std::string cpu_affinity;                                    // "0-1": the CPUs the cell may run on
};

struct Measurement {
  TimingSummary latency;  // one request alone (sync) per batch: the whole-model pass, raw samples kept
  double fps = 0;         // batch / median latency
  double average_pass_s = 0;  // DLI's "average time of a single pass": sync: mean latency; async: requests / throughput
  // async only: N requests in flight
  std::optional<TimingSummary> async_latency;  // per request
  std::optional<double> batch_fps;             // batch x requests completed per second
  std::optional<int64_t> tokens;               // tokens per pass: elements of the token-id input
  std::optional<double> latency_per_token_s;   // median / tokens
};

struct StaticTotals {
  std::optional<int64_t> params, macs, flops, bytes;  // the analysis's totals (null: unknown)
  int64_t model_bytes = 0;
  std::vector<std::string> inputs;  // "input_ids: int64 1x16", as the analysis lists them
  std::string precision;            // the dtype that ran ("fp32", ...)
};

struct Forecast {
  std::optional<double> latency_s;  // fit's per-batch inference latency
  std::optional<double> error;      // forecast / measured median - 1 (+0.10: forecast 10% high)
  std::optional<int64_t> memory_bytes;
  std::string source;  // what priced it: the ceilings file or datasheet
  std::string note;    // why there is none, when there is none
};

struct CellResult {
  std::string suite_name, suite_file, suite_hash, run_id;
  Cell cell;
  Machine machine;
  Environment environment;
  std::string status = "ok";  // "ok" or "failed"
  int exit_code = 0;          // of the failed step; 128 + signal when it was killed
  std::string error_type;     // "exit 2", "signal 9 (Killed)", "timeout", "bad output", ...
  std::string error;          // its message (the last lines it printed)
  std::string started_at, finished_at;  // ISO 8601 UTC
  double wall_s = 0;                    // the cell's wall time: processes, model loads, writes
  std::optional<Measurement> measurement;
  std::optional<StaticTotals> totals;
  Forecast forecast;
  std::optional<RunContext> context;  // the profile's (modelstat runtime) or the runner's summary
  std::string runtime_version;        // "LibTorch 1.13.0", "onnxruntime 1.20.1"
  std::vector<std::string> notices;
};

}  // namespace modelstat::suite

namespace modelstat::suite {

// ------------------------------------------------------------------ the results database

// One row of `modelstat results`: a cell's result on a machine, flattened
// (analyzer/suite/results_db.hpp reads it from the database's columns; the
// full record stays in the database for -f json).
struct ResultRow {
  int64_t result_id = 0;
  std::string run_id, suite, cell_key;
  int64_t cell_index = 0;
  std::string model, task, bindings, inputs;  // bindings "seq=16"; inputs as the analysis lists them, "; "-joined
  int64_t batch = 1;
  int threads = 0;
  std::string dtype, fusion, mode;
  int requests = 0;
  std::string device, runtime, runtime_version;
  std::string machine_id, machine_name, cpu_model, gpu;
  int64_t cores = 0, memory_bytes = 0;
  std::string env_id, modelstat_version, modelstat_commit;
  std::string status, error_type, error;
  int exit_code = 0;
  std::string started_at, finished_at;
  double wall_s = 0;
  // Measured (absent for a failed cell).
  std::optional<double> median_s, mean_s, p90_s, p99_s, cv, fps, batch_fps, average_pass_s, latency_per_token_s;
  int64_t samples = 0;
  std::optional<int64_t> params, macs, flops, bytes;
  std::string precision;
  std::optional<double> forecast_s, forecast_error;
  std::optional<double> async_median_s;  // async cells: latency per request with the requests in flight
  Cell cell() const;  // the cell's settings as a Cell (for its label())
};

// What `modelstat results` selects. Patterns are globs (`*`, `?`, `[...]`);
// dates are ISO 8601 prefixes compared with the result's finish time.
struct ResultFilter {
  std::string model, machine, suite, run, commit, status, runtime, since, until;
  std::optional<int64_t> batch;
  std::optional<int> threads;
  bool latest_only = true;  // the latest result per cell and machine; false: every run (history)
  int64_t limit = 0;        // 0: no limit
  int64_t offset = 0;
};

}  // namespace modelstat::suite

namespace modelstat::suite {

// ------------------------------------------------------------------ results compare

// One side of `modelstat results compare`: machine=NAME, commit=PREFIX,
// date=YYYY-MM-DD (a prefix of the finish time) or run=ID.
struct ResultSelector {
  std::string key, value;
  std::string text() const { return key + "=" + value; }
};

// A cell measured on both sides, tested with compare's test (compare_runs on
// the cells' raw samples: modelstat/compare.hpp states it).
struct CellComparison {
  std::string cell_key, model, label;  // label: "tiny_bert b2 t1 sync"
  std::string base_machine, new_machine, base_run, new_run;
  SampleDelta whole;                   // NoData when a side failed
  std::string base_status, new_status;
  std::vector<std::string> warnings;   // compare's: context differences, too few or noisy samples
};

struct ResultsComparison {
  ResultSelector base, next;
  CompareOptions options;
  std::vector<CellComparison> cells;             // regressions first, then improvements, then the rest
  std::vector<std::string> only_base, only_new;  // labels of cells measured on one side only
  int64_t regressions = 0, improvements = 0, unchanged = 0, no_data = 0;
  bool gate_failed() const { return regressions > 0; }
};

}  // namespace modelstat::suite

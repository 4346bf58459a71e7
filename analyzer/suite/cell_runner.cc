#include "analyzer/suite/cell_runner.hpp"

#include <fmt/format.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "analyzer/measurements/json_input.hpp"
#include "analyzer/measurements/timing_summary.hpp"
#include "analyzer/suite/cell_json.hpp"
#include "analyzer/suite/machine.hpp"
#include "analyzer/suite/process.hpp"
#include "analyzer/suite/runner_template.hpp"
#include "analyzer/suite/suite_spec.hpp"
#include "modelstat/ceilings.hpp"

namespace modelstat::suite {

namespace fs = std::filesystem;

std::string self_binary() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("modelstat") : p.string();
}

std::string default_data_dir() {
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) return std::string(xdg) + "/modelstat";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.local/share/modelstat";
  return ".";
}

namespace {

// A private folder for one cell's documents, removed when the cell is done.
class WorkDir {
 public:
  WorkDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/modelstat-cell-XXXXXX";
    if (!mkdtemp(pattern.data())) throw Error(ErrorKind::Runtime, "cannot create a temporary folder", pattern);
    path_ = pattern;
  }
  ~WorkDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// What a step printed last: its `modelstat: error:` line when it wrote one, else its last lines.
std::string failure_message(const std::string& stderr_path) {
  const std::string tail = tail_lines(stderr_path, 40);
  const auto at = tail.rfind("modelstat: error: ");
  if (at != std::string::npos) {
    const auto end = tail.find('\n', at);
    return tail.substr(at + 18, end == std::string::npos ? std::string::npos : end - at - 18);
  }
  return tail_lines(stderr_path, 3);
}

struct Failure {
  std::string type, message;
  int exit_code = 1;
};

// A step's failure as the cell records it.
Failure step_failure(const std::string& step, const ProcessResult& p, double timeout, const std::string& stderr_path) {
  Failure f;
  f.exit_code = p.exit_code;
  f.type = step + ": " + p.describe(timeout);
  f.message = failure_message(stderr_path);
  if (f.message.empty()) f.message = step + " printed nothing";
  return f;
}

std::vector<std::string> binding_flags(const Cell& c) {
  std::vector<std::string> f;
  for (const auto& [name, value] : c.bindings) f.insert(f.end(), {"--dim", name + "=" + std::to_string(value)});
  for (const std::string& input : c.inputs) f.insert(f.end(), {"--input", input});
  return f;
}

int resolved_threads(const Cell& c, const Machine& m) { return c.threads > 0 ? c.threads : static_cast<int>(m.cores); }

// "input_ids: int64 1x16" -> name, dtype, dims (empty when a dim is not a number).
struct InputShape {
  std::string name, dtype;
  std::vector<int64_t> dims;
};
InputShape parse_input(const std::string& text) {
  InputShape s;
  const auto colon = text.rfind(": ");
  s.name = text.substr(0, colon);
  if (colon == std::string::npos) return s;
  std::string rest = text.substr(colon + 2);
  const auto space = rest.find(' ');
  s.dtype = rest.substr(0, space);
  if (space == std::string::npos) return s;
  const std::string dims = rest.substr(space + 1);
  size_t start = 0;
  for (;;) {
    const size_t x = dims.find('x', start);
    const std::string d = dims.substr(start, x == std::string::npos ? std::string::npos : x - start);
    if (d.empty() || d.find_first_not_of("0123456789") != std::string::npos) return {s.name, s.dtype, {}};
    s.dims.push_back(std::stoll(d));
    if (x == std::string::npos) break;
    start = x + 1;
  }
  return s;
}

// Tokens per pass: the element count of the token-id input (an integer input of
// rank >= 2, [batch, seq]); the largest when there are several (ids and mask).
std::optional<int64_t> tokens_of(const std::vector<std::string>& inputs) {
  std::optional<int64_t> tokens;
  for (const std::string& text : inputs) {
    const InputShape s = parse_input(text);
    if ((s.dtype != "int64" && s.dtype != "int32") || s.dims.size() < 2) continue;
    int64_t n = 1;
    for (int64_t d : s.dims) n *= d;
    if (!tokens || n > *tokens) tokens = n;
  }
  return tokens;
}

// A model input of an analysis document as "NAME: dtype AxB" (parse_input's
// form, the one result files keep): analysis 2.0 writes {"name", "dtype",
// "dims"} (a symbolic or unknown dim leaves the dims unparsed, as before);
// 1.x wrote that string itself.
std::string input_text(const Json& v) {
  if (v.is_string()) return json_string_value(v);
  std::string text = json_string(v, "name") + ": " + json_string(v, "dtype");
  const Json* dims = json_field_if(v, "dims");
  if (dims && dims->is_array()) {
    std::string shape;
    for (const Json& d : *dims)
      shape += (shape.empty() ? "" : "x") + (d.is_number_integer() ? std::to_string(d.get<int64_t>())
                                                                   : d.is_string() ? d.get<std::string>() : "?");
    text += " " + shape;
  }
  return text;
}

// The static totals of an analysis document (docs/json-schema.md).
StaticTotals totals_of(const Json& analysis) {
  StaticTotals t;
  const Json& totals = json_object(analysis, "totals");
  const auto count = [&](const char* key) -> std::optional<int64_t> {
    if (!json_field_if(totals, key)) return std::nullopt;
    return json_integer(totals, key, 0, std::numeric_limits<int64_t>::max());
  };
  t.params = count("params");
  t.macs = count("macs");
  t.flops = count("flops");
  const auto read = count("bytes_read"), written = count("bytes_written");
  if (read && written) t.bytes = *read + *written;
  t.model_bytes = count("weight_bytes").value_or(0);
  for (const Json& v : json_array(json_object(analysis, "model"), "inputs")) t.inputs.push_back(input_text(v));
  return t;
}

// Text up to the first ';' (the part of a context line that describes the library, not the settings).
std::string before_semicolon(const std::string& s) { return s.substr(0, s.find(';')); }

void add_libraries(const RunContext& c, Environment& e) {
  const auto add = [&](const char* name, const std::string& value) {
    if (!value.empty()) e.libraries.emplace_back(name, value);
  };
  add("LibTorch", c.torch_version);
  add("ATen", c.runtime_version);
  add("BLAS", before_semicolon(c.blas));
  add("oneDNN", before_semicolon(c.onednn_isa));
  add("OpenMP", c.openmp.substr(0, c.openmp.find(" (")));
  add("driver", c.driver_version);
}

// --- the steps ---------------------------------------------------------------------------

struct Step {
  std::vector<std::string> argv;
  std::string out, err;
};

ProcessResult run_step(const Step& s, double timeout) {
  ProcessOptions o;
  o.timeout_seconds = timeout;
  o.stdout_path = s.out;
  o.stderr_path = s.err;
  return run_process(s.argv, o);
}

// The ceilings `fit: auto` prices a cell with: the ones `modelstat device`
// saved when they hold for the cell's thread count, else ones measured once
// per machine, device and thread count with `modelstat device --quick`.
// "" (and a note) when none can be had.
std::string auto_ceilings(const Cell& c, const CellRunSetup& setup, std::string& note) {
  const int threads = c.device == "cpu" ? resolved_threads(c, setup.machine) : 0;
  if (const auto saved = load_ceilings(default_ceilings_path(c.device)); saved && saved->threads == threads)
    return default_ceilings_path(c.device);
  const std::string path = fmt::format("{}/ceilings-{}-t{}-{}.json", setup.ceilings_dir, c.device, threads, setup.machine.id);
  if (fs::exists(path)) return path;
  std::error_code ec;
  fs::create_directories(setup.ceilings_dir, ec);
  // Tasks of one array on one node measure once: the first holds the lock, the others then find its file.
  const int lock = ::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock >= 0) flock(lock, LOCK_EX);
  struct Unlock {
    int fd;
    ~Unlock() {
      if (fd >= 0) ::close(fd);
    }
  } unlock{lock};
  if (fs::exists(path)) return path;
  if (setup.note)
    setup.note(fmt::format("measuring this machine's ceilings for fit, once: modelstat device --device {} --threads {} "
                           "--quick (saved to {})",
                           c.device, threads, path));
  WorkDir w;
  Step s{{setup.modelstat, "device", "--device", c.device, "--quick", "--save", path, "-f", "json", "-o", w / "c.json"},
         w / "out",
         w / "err"};
  if (c.device == "cpu") s.argv.insert(s.argv.end(), {"--threads", std::to_string(threads)});
  const ProcessResult p = run_step(s, 1800);
  if (p.ok() && fs::exists(path)) return path;
  note = "no forecast: measuring the ceilings failed (" + p.describe(1800) + "): " + failure_message(s.err);
  return {};
}

void forecast_cell(const SuiteSpec& spec, const Cell& c, const CellRunSetup& setup, const WorkDir& w, CellResult& r) {
  Forecast& f = r.forecast;
  if (spec.fit.mode == "off") {
    f.note = "fit: off";
    return;
  }
  Step s{{setup.modelstat, "fit", c.model_path}, w / "fit.out", w / "fit.err"};
  const std::vector<std::string> bindings = binding_flags(c);
  s.argv.insert(s.argv.end(), bindings.begin(), bindings.end());
  s.argv.insert(s.argv.end(), {"--batch", std::to_string(c.batch), "-f", "json", "-o", w / "fit.json"});
  if (c.dtype == "fp16" || c.dtype == "bf16") s.argv.insert(s.argv.end(), {"--dtype", c.dtype});
  if (spec.fit.mode == "datasheet") {
    s.argv.insert(s.argv.end(), {"--datasheet", spec.fit.value});
  } else {
    const std::string ceilings = spec.fit.mode == "ceilings" ? spec.fit.value : auto_ceilings(c, setup, f.note);
    if (ceilings.empty()) return;
    s.argv.insert(s.argv.end(), {"--ceilings", ceilings});
  }
  const ProcessResult p = run_step(s, spec.cell_timeout_seconds);
  // fit exits 3 only over a budget, and the suite gives none.
  if (!p.ok()) {
    f.note = "no forecast: fit failed (" + p.describe(spec.cell_timeout_seconds) + "): " + failure_message(s.err);
    return;
  }
  try {
    const Json doc = read_json_file(w / "fit.json");
    read_json_record(doc, "fit's JSON", [&](const Json& d) {
      f.latency_s = json_number(json_object(d, "latency"), "total_seconds", JsonNumber::NonNegative);
      f.memory_bytes = json_integer(json_object(d, "memory"), "total_bytes", 0, std::numeric_limits<int64_t>::max());
      const Json& ceil = json_object(d, "ceilings");
      f.source = json_string_or(ceil, "source") + ": " + json_string_or(ceil, "device_name") +
                 fmt::format(" ({} threads)", json_integer_or(ceil, "threads", 0, 1 << 20, 0));
      return 0;
    });
  } catch (const Error& e) {
    f.note = std::string("no forecast: ") + e.what();
    return;
  }
  if (r.measurement && f.latency_s && r.measurement->latency.median > 0)
    f.error = *f.latency_s / r.measurement->latency.median - 1.0;
}

// Reads `modelstat profile -f json` (docs/profile-json.md) into the result.
void read_profile(const std::string& path, const Cell& c, CellResult& r, Json& analysis) {
  const Json doc = read_json_file(path);
  read_json_record(doc, "profile's JSON", [&](const Json& d) {
    RunContext context;
    from_json(json_object(d, "context"), context);
    Measurement m;
    from_json(json_object(d, "whole"), m.latency);
    if (m.latency.samples.empty()) json_expected(json_object(d, "whole"), "samples_s", "at least one sample");
    if (const Json* con = json_field_if(d, "concurrency")) {
      TimingSummary t;
      from_json(json_object(*con, "latency"), t);
      m.async_latency = t;
      m.batch_fps = json_number(*con, "throughput_samples_per_s", JsonNumber::NonNegative);
      const double requests_per_s = json_number(*con, "throughput_requests_per_s", JsonNumber::Positive);
      m.average_pass_s = c.requests / requests_per_s;
    } else {
      m.average_pass_s = m.latency.mean;
    }
    analysis = json_object(d, "analysis");
    r.context = context;
    r.measurement = m;
    return 0;
  });
}

// Reads the runner's JSON (docs/suites.md, "Runtimes").
void read_runner_output(const std::string& path, const std::string& origin, const Cell& c, CellResult& r) {
  const Json doc = read_json_file(path);
  read_json_record(doc, origin, [&](const Json& d) {
    Measurement m;
    std::vector<double> samples;
    for (const Json& v : json_array(d, "samples_s")) samples.push_back(json_number_value(v, JsonNumber::NonNegative));
    if (samples.empty()) json_expected(d, "samples_s", "at least one sample");
    m.latency = summarize_timing(samples, "the runner's own rule");
    m.average_pass_s = m.latency.mean;
    if (const Json* a = json_field_if(d, "async")) {
      std::vector<double> latency;
      for (const Json& v : json_array(*a, "latency_samples_s")) latency.push_back(json_number_value(v, JsonNumber::NonNegative));
      m.async_latency = summarize_timing(latency, "the runner's own rule");
      const double requests_per_s = json_number(*a, "throughput_requests_per_s", JsonNumber::Positive);
      m.batch_fps = requests_per_s * static_cast<double>(c.batch);
      m.average_pass_s = c.requests / requests_per_s;
    } else if (c.requests > 0) {
      json_expected(d, "async", "the async block (requests in flight) of an async cell");
    }
    r.runtime_version = json_string(d, "runtime") + " " + json_string_or(d, "version");
    for (const Json& n : json_array(d, "notes")) r.notices.push_back(json_string_value(n));
    r.measurement = m;
    return 0;
  });
}

std::map<std::string, std::string> template_values(const SuiteSpec& spec, const Cell& c, const CellRunSetup& setup,
                                                   const StaticTotals& totals) {
  std::map<std::string, std::string> v;
  v["model"] = fs::absolute(c.model_path).string();
  v["batch"] = std::to_string(c.batch);
  v["threads"] = std::to_string(resolved_threads(c, setup.machine));
  v["dtype"] = c.dtype;
  v["fusion"] = c.fusion;
  v["device"] = c.device;
  v["mode"] = c.mode_name();
  v["requests"] = std::to_string(c.requests > 0 ? c.requests : 1);
  std::string bindings;
  for (const auto& [name, value] : c.bindings) bindings += (bindings.empty() ? "" : ",") + name + "=" + std::to_string(value);
  v["bindings"] = bindings;
  Json inputs = Json::array();
  for (const std::string& text : totals.inputs) {
    const InputShape s = parse_input(text);
    inputs.push_back({{"name", s.name}, {"dtype", s.dtype}, {"dims", s.dims}});
  }
  v["inputs"] = inputs.dump();
  // profile's defaults where the suite gives none (ProfileOptions).
  v["warmup"] = "5";
  v["warmup_time"] = "0.5";
  v["iters"] = "10";
  v["min_time"] = "1";
  v["max_time"] = "10";
  for (const auto& [key, value] : spec.profile)
    if (v.count(key)) v[key] = value;
  v["suite_dir"] = fs::absolute(spec.dir).string();
  return v;
}

}  // namespace

std::optional<CellResult> run_cell(const SuiteSpec& spec, const Cell& c, const CellRunSetup& setup) {
  const auto start = std::chrono::steady_clock::now();
  CellResult r;
  r.suite_name = spec.name;
  r.suite_file = spec.file;
  r.suite_hash = spec.content_hash;
  r.run_id = setup.run_id;
  r.cell = c;
  r.machine = setup.machine;
  r.environment = setup.environment;
  r.started_at = utc_now();
  const double timeout = spec.cell_timeout_seconds;

  const auto finish = [&]() -> std::optional<CellResult> {
    r.finished_at = utc_now();
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    finish_environment(r.environment);
    if (stop_requested()) return std::nullopt;
    return r;
  };
  const auto fail = [&](const Failure& f) {
    r.status = "failed";
    r.exit_code = f.exit_code;
    r.error_type = f.type;
    r.error = f.message;
    r.measurement.reset();
    return finish();
  };

  WorkDir w;
  Json analysis;
  const std::vector<std::string> bindings = binding_flags(c);
  if (c.runtime == "modelstat") {
    Step s{{setup.modelstat, "profile", c.model_path}, w / "profile.out", w / "profile.err"};
    s.argv.insert(s.argv.end(), bindings.begin(), bindings.end());
    s.argv.insert(s.argv.end(), {"--default-batch", std::to_string(c.batch), "--device", c.device, "--fusion", c.fusion});
    if (c.threads > 0) s.argv.insert(s.argv.end(), {"--threads", std::to_string(c.threads)});
    if (c.dtype != "model") s.argv.insert(s.argv.end(), {"--dtype", c.dtype});
    if (c.requests > 0) s.argv.insert(s.argv.end(), {"--concurrency", std::to_string(c.requests)});
    const std::vector<std::string> rule = profile_rule_flags(spec);
    s.argv.insert(s.argv.end(), rule.begin(), rule.end());
    s.argv.insert(s.argv.end(), {"-f", "json", "-o", w / "profile.json"});
    const ProcessResult p = run_step(s, timeout);
    if (p.stopped) return std::nullopt;
    if (!p.ok()) return fail(step_failure("profile", p, timeout, s.err));
    try {
      read_profile(w / "profile.json", c, r, analysis);
    } catch (const Error& e) {
      return fail({"bad output", std::string("profile: ") + e.what(), 1});
    }
    add_libraries(*r.context, r.environment);
    r.runtime_version = "modelstat " + r.environment.modelstat_version + " (LibTorch " + r.context->torch_version + ")";
    r.totals = totals_of(analysis);
    if (r.context->batch != c.batch)
      return fail({"batch fixed by the model",
                   fmt::format("the model's inputs fix the batch at {}, so it cannot run at batch {}: export it with a "
                               "symbolic batch dim, or leave {} out of the batch axis",
                               r.context->batch, c.batch, c.batch),
                   2});
    r.totals->precision = r.context->dtype;
  } else {
    Step a{{setup.modelstat, "analyze", c.model_path}, w / "analyze.out", w / "analyze.err"};
    a.argv.insert(a.argv.end(), bindings.begin(), bindings.end());
    a.argv.insert(a.argv.end(), {"--default-batch", std::to_string(c.batch), "-f", "json", "-o", w / "analysis.json"});
    const ProcessResult pa = run_step(a, timeout);
    if (pa.stopped) return std::nullopt;
    if (!pa.ok()) return fail(step_failure("analyze", pa, timeout, a.err));
    try {
      analysis = read_json_file(w / "analysis.json");
      r.totals = read_json_record(analysis, "analyze's JSON", [](const Json& d) { return totals_of(d); });
    } catch (const Error& e) {
      return fail({"bad output", std::string("analyze: ") + e.what(), 1});
    }
    r.totals->precision = c.dtype == "model" ? "model" : c.dtype;
    const RunnerTemplate& runner = spec.runners.at(c.runtime);
    Step s{expand_command(runner, template_values(spec, c, setup, *r.totals), spec.file + ":" + std::to_string(runner.line)),
           w / "runner.out", w / "runner.err"};
    const ProcessResult p = run_step(s, timeout);
    if (p.stopped) return std::nullopt;
    if (!p.ok()) return fail(step_failure("runner '" + c.runtime + "'", p, timeout, s.err));
    try {
      read_runner_output(s.out, "runner '" + c.runtime + "' output", c, r);
    } catch (const Error& e) {
      return fail({"bad output", e.what(), 1});
    }
    const InputShape first = r.totals->inputs.empty() ? InputShape{} : parse_input(r.totals->inputs.front());
    if (!first.dims.empty() && first.dims.front() != c.batch)
      return fail({"batch fixed by the model",
                   fmt::format("the model's inputs fix the batch at {}, so it cannot run at batch {}", first.dims.front(),
                               c.batch),
                   2});
    RunContext context;
    context.device_kind = c.device;
    context.device_name = c.device == "cpu" ? setup.machine.cpu_model : setup.machine.gpu;
    context.runtime_version = r.runtime_version;
    context.threads = resolved_threads(c, setup.machine);
    context.dtype = r.totals->precision;
    context.batch = c.batch;
    context.date = r.started_at;
    context.host = setup.machine.host;
    context.timer = "the runner's own clock (runner '" + c.runtime + "')";
    r.context = context;
    r.environment.libraries.emplace_back(c.runtime, r.runtime_version);
  }
  Measurement& m = *r.measurement;
  m.fps = static_cast<double>(c.batch) / m.latency.median;
  m.tokens = tokens_of(r.totals->inputs);
  if (m.tokens && *m.tokens > 0) m.latency_per_token_s = m.latency.median / static_cast<double>(*m.tokens);
  forecast_cell(spec, c, setup, w, r);
  return finish();
}

}  // namespace modelstat::suite

#include "analyzer/suite/suite_spec.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "analyzer/measurements/record_json.hpp"
#include "analyzer/suite/hash.hpp"
#include "analyzer/suite/runner_template.hpp"
#include "modelstat/error.hpp"

namespace modelstat::suite {

namespace fs = std::filesystem;

std::string Cell::label() const { return model + " " + setting(); }

std::string Cell::setting() const {
  std::string s = "b" + std::to_string(batch) + " t" + (threads > 0 ? std::to_string(threads) : "all");
  s += requests > 0 ? " async" + std::to_string(requests) : " sync";
  if (dtype != "model") s += " " + dtype;
  if (fusion != "on") s += " fusion-" + fusion;
  if (device != "cpu") s += " " + device;
  if (runtime != "modelstat") s += " " + runtime;
  return s;
}

Cell ResultRow::cell() const {
  Cell c;
  c.index = cell_index;
  c.key = cell_key;
  c.model = model;
  c.task = task;
  c.batch = batch;
  c.threads = threads;
  c.requests = requests;
  c.dtype = dtype;
  c.fusion = fusion;
  c.device = device;
  c.runtime = runtime;
  return c;
}

namespace {

// The `profile:` keys, the `modelstat profile` flag each one becomes, and its type.
struct ProfileKey {
  const char* key;
  const char* flag;
  enum Type { Count, Seconds, Fraction, Flag, Gemm } type;
};
constexpr ProfileKey kProfileKeys[] = {
    {"warmup", "--warmup", ProfileKey::Count},          {"warmup_time", "--warmup-time", ProfileKey::Seconds},
    {"iters", "--iters", ProfileKey::Count},            {"min_time", "--min-time", ProfileKey::Seconds},
    {"max_time", "--max-time", ProfileKey::Seconds},    {"max_iters", "--max-iters", ProfileKey::Count},
    {"target_rel_ci", "--target-rel-ci", ProfileKey::Fraction},
    {"layers", "", ProfileKey::Flag},                   {"end_to_end", "--end-to-end", ProfileKey::Flag},
    {"gemm", "--gemm", ProfileKey::Gemm},
};

const ProfileKey* find_profile_key(const std::string& key) {
  for (const ProfileKey& k : kProfileKeys)
    if (key == k.key) return &k;
  return nullptr;
}

// The suite file being read: every error names it, the line and the key.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& key, const std::string& why) const {
    fail_line(line_of(at), key, why);
  }
  [[noreturn]] void fail_line(int line, const std::string& key, const std::string& why) const {
    throw Error(ErrorKind::Input, (key.empty() ? "" : "key '" + key + "': ") + why,
                line > 0 ? file_ + ":" + std::to_string(line) : file_);
  }
  // A value's line; a null value (`key:` and nothing) has no mark of its own: its key's line.
  int line_of(const YAML::Node& n) const {
    for (const auto& [node, line] : null_lines_)
      if (node.is(n)) return line;
    return n.Mark().is_null() ? 0 : n.Mark().line + 1;
  }

  // The map's entries, refusing keys outside `allowed` and keys given twice.
  std::vector<std::pair<YAML::Node, YAML::Node>> entries(const YAML::Node& map, const std::string& path,
                                                         const std::set<std::string>& allowed) const {
    if (!map.IsMap()) fail(map, path, "expected a mapping of keys (" + joined(allowed) + "), got " + kind(map));
    std::vector<std::pair<YAML::Node, YAML::Node>> out;
    std::map<std::string, int> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      if (!it->first.IsScalar()) fail(it->first, path, "a key must be a plain name");
      const std::string key = it->first.Scalar();
      const std::string full = path.empty() ? key : path + "." + key;
      if (!allowed.empty() && !allowed.count(key))
        fail(it->first, full, "unknown key (expected one of: " + joined(allowed) + ")");
      if (const auto s = seen.find(key); s != seen.end())
        fail(it->first, full, fmt::format("given twice (also at line {})", s->second));
      seen[key] = line_of(it->first);
      // A null value (`key:` and nothing) is marked where the next token starts: say its key's line.
      if (it->second.IsNull()) null_lines_.emplace_back(it->second, line_of(it->first));
      out.emplace_back(it->first, it->second);
    }
    return out;
  }

  std::string string(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(n, key, "expected a string, got " + kind(n));
    if (n.Scalar().empty()) fail(n, key, "expected a non-empty string");
    return n.Scalar();
  }

  int64_t integer(const YAML::Node& n, const std::string& key, int64_t min, int64_t max) const {
    const std::string what = fmt::format("an integer in [{}, {}]", min, max);
    if (!n.IsScalar() || n.Tag() == "!") fail(n, key, "expected " + what + ", got " + kind(n));
    const std::string& s = n.Scalar();
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE || v < min || v > max)
      fail(n, key, "expected " + what + ", got " + s);
    return v;
  }

  double number(const YAML::Node& n, const std::string& key, double min, bool min_inclusive, double max) const {
    const std::string what = fmt::format("a number {} {:g}{}", min_inclusive ? ">=" : ">", min,
                                         std::isfinite(max) ? fmt::format(" and < {:g}", max) : "");
    if (!n.IsScalar() || n.Tag() == "!") fail(n, key, "expected " + what + ", got " + kind(n));
    const std::string& s = n.Scalar();
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || (min_inclusive ? v < min : v <= min) ||
        !(v < max))
      fail(n, key, "expected " + what + ", got " + s);
    return v;
  }

  bool boolean(const YAML::Node& n, const std::string& key) const {
    if (n.IsScalar() && n.Tag() != "!") {
      const std::string& s = n.Scalar();
      if (s == "true" || s == "yes" || s == "on") return true;
      if (s == "false" || s == "no" || s == "off") return false;
    }
    fail(n, key, "expected true or false, got " + kind(n));
  }

  std::string one_of(const YAML::Node& n, const std::string& key, const std::set<std::string>& allowed) const {
    if (!n.IsScalar()) fail(n, key, "expected one of " + joined(allowed) + ", got " + kind(n));
    if (!allowed.count(n.Scalar())) fail(n, key, "expected one of " + joined(allowed) + ", got " + n.Scalar());
    return n.Scalar();
  }

  // A non-empty list; each value read by `read`, no value twice.
  template <typename T>
  std::vector<T> axis(const YAML::Node& n, const std::string& key,
                      const std::function<T(const YAML::Node&)>& read) const {
    if (n.IsNull()) fail(n, key, "an axis with no values: give at least one, or leave the axis out");
    if (!n.IsSequence()) {
      if (n.IsScalar() || n.IsMap()) return {read(n)};  // a single value
      fail(n, key, "expected a list of values, got " + kind(n));
    }
    if (n.size() == 0) fail(n, key, "an axis with no values: give at least one, or leave the axis out");
    std::vector<T> out;
    std::vector<int> lines;
    for (const YAML::Node& v : n) {
      T value = read(v);
      const auto same = std::find(out.begin(), out.end(), value);
      if (same != out.end())
        fail(v, key,
             fmt::format("duplicate value {} (also at line {}): each cell must be defined once", display(v),
                         lines[static_cast<size_t>(same - out.begin())]));
      out.push_back(std::move(value));
      lines.push_back(line_of(v));
    }
    return out;
  }

  static std::string kind(const YAML::Node& n) {
    if (n.IsNull()) return "nothing (null)";
    if (n.IsSequence()) return "a list";
    if (n.IsMap()) return "a mapping";
    if (n.IsScalar()) return (n.Tag() == "!" ? "the string \"" : "'") + n.Scalar() + (n.Tag() == "!" ? "\"" : "'");
    return "an undefined value";
  }
  static std::string display(const YAML::Node& n) {
    if (n.IsScalar()) return n.Scalar();
    YAML::Emitter e;
    e << YAML::Flow << n;
    return e.c_str();
  }
  static std::string joined(const std::set<std::string>& names) {
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
    return s;
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
  mutable std::vector<std::pair<YAML::Node, int>> null_lines_;
};

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t b = 0;
  while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  return s.substr(b);
}

// "async:4", "async: 4" or {async: 4} -> 4; "sync" -> 0.
int read_mode(const Reader& r, const YAML::Node& n) {
  const std::string key = "axes.mode";
  if (n.IsMap()) {
    const auto e = r.entries(n, key, {"async"});
    if (e.size() != 1) r.fail(n, key, "expected sync, async:N or {async: N}");
    return static_cast<int>(r.integer(e[0].second, key + ".async", 1, 1024));
  }
  if (!n.IsScalar()) r.fail(n, key, "expected sync, async:N or {async: N}, got " + Reader::kind(n));
  const std::string s = n.Scalar();
  if (s == "sync") return 0;
  if (s.rfind("async:", 0) == 0) {
    const std::string count = trim(s.substr(6));
    char* end = nullptr;
    const long v = std::strtol(count.c_str(), &end, 10);
    if (!count.empty() && end == count.c_str() + count.size() && v >= 1 && v <= 1024) return static_cast<int>(v);
  }
  r.fail(n, key, "expected sync, async:N or {async: N} with N requests in flight (1..1024), got " + s);
}

SuiteModel read_model(const Reader& r, const YAML::Node& n, const std::string& dir, size_t i) {
  const std::string key = fmt::format("models[{}]", i);
  SuiteModel m;
  m.line = r.line_of(n);
  YAML::Node path_node;
  bool has_path = n.IsScalar();
  if (n.IsScalar()) {
    path_node = n;
  } else {
    for (const auto& [k, v] : r.entries(n, key, {"path", "name", "bindings", "inputs", "task"})) {
      const std::string name = k.Scalar();
      const std::string full = key + "." + name;
      if (name == "path") path_node = v, has_path = true;
      if (name == "name") m.name = r.string(v, full);
      if (name == "task") m.task = r.string(v, full);
      if (name == "bindings")
        for (const auto& [dk, dv] : r.entries(v, full, {}))
          m.bindings.emplace_back(dk.Scalar(), r.integer(dv, full + "." + dk.Scalar(), 1, int64_t(1) << 40));
      if (name == "inputs") {
        // NAME: "1x3x224x224" or NAME: [1, 3, 224, 224]: `--input NAME:DIMS`.
        for (const auto& [ik, iv] : r.entries(v, full, {})) {
          const std::string ikey = full + "." + ik.Scalar();
          std::string dims;
          if (iv.IsSequence() && iv.size() > 0) {
            for (const YAML::Node& d : iv)
              dims += (dims.empty() ? "" : "x") + std::to_string(r.integer(d, ikey, 1, int64_t(1) << 40));
          } else {
            dims = r.string(iv, ikey);
          }
          m.inputs.push_back(ik.Scalar() + ":" + dims);
        }
      }
    }
    if (!has_path) r.fail(n, key + ".path", "missing: every model needs the path of its .onnx file");
  }
  m.path_written = r.string(path_node, key + ".path");
  const fs::path p = fs::path(m.path_written).is_absolute() ? fs::path(m.path_written) : fs::path(dir) / m.path_written;
  std::error_code ec;
  if (!fs::is_regular_file(p, ec))
    r.fail(path_node, key + ".path",
           fmt::format("no such model file: {}{}", p.string(),
                       fs::path(m.path_written).is_absolute() ? "" : " (relative paths are against the suite file's folder)"));
  m.path = p.lexically_normal().string();
  if (m.name.empty()) m.name = p.stem().string();
  if (m.task.empty()) m.task = "inference";
  m.content_hash = hash_file(m.path);
  return m;
}

void read_profile(const Reader& r, const YAML::Node& n, SuiteSpec& spec) {
  std::set<std::string> keys;
  for (const ProfileKey& k : kProfileKeys) keys.insert(k.key);
  double min_time = -1, max_time = -1;
  int max_time_line = 0;
  for (const auto& [k, v] : r.entries(n, "profile", keys)) {
    const ProfileKey& pk = *find_profile_key(k.Scalar());
    const std::string full = std::string("profile.") + pk.key;
    std::string value;
    switch (pk.type) {
      case ProfileKey::Count:
        value = std::to_string(r.integer(v, full, std::string(pk.key) == "warmup" ? 0 : 1, 100000000));
        break;
      case ProfileKey::Seconds: {
        const double s = r.number(v, full, 0, std::string(pk.key) != "max_time", 86400.0 * 7);
        value = fmt::format("{:g}", s);
        if (std::string(pk.key) == "min_time") min_time = s;
        if (std::string(pk.key) == "max_time") max_time = s, max_time_line = r.line_of(v);
        break;
      }
      case ProfileKey::Fraction:
        value = fmt::format("{:g}", r.number(v, full, 0, false, 1.0));
        break;
      case ProfileKey::Flag:
        value = r.boolean(v, full) ? "true" : "false";
        break;
      case ProfileKey::Gemm:
        value = r.one_of(v, full, {"auto", "onednn", "blas"});
        break;
    }
    spec.profile.emplace_back(pk.key, value);
  }
  if (min_time >= 0 && max_time >= 0 && max_time < min_time)
    r.fail_line(max_time_line, "profile.max_time",
                fmt::format("{:g} s is below min_time ({:g} s): the time-out must leave room for the minimum", max_time,
                            min_time));
}

void read_fit(const Reader& r, const YAML::Node& n, SuiteSpec& spec) {
  if (n.IsScalar()) {
    spec.fit.mode = r.one_of(n, "fit", {"auto", "off"});
    return;
  }
  const auto e = r.entries(n, "fit", {"ceilings", "datasheet"});
  if (e.size() != 1) r.fail(n, "fit", "expected auto, off, {ceilings: FILE} or {datasheet: NAME}");
  const std::string key = e[0].first.Scalar();
  spec.fit.mode = key;
  spec.fit.value = r.string(e[0].second, "fit." + key);
  if (key == "ceilings") {
    const fs::path p = fs::path(spec.fit.value).is_absolute() ? fs::path(spec.fit.value) : fs::path(spec.dir) / spec.fit.value;
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) r.fail(e[0].second, "fit.ceilings", "no such ceilings file: " + p.string());
    spec.fit.value = p.lexically_normal().string();
  }
}

void read_runners(const Reader& r, const YAML::Node& n, SuiteSpec& spec) {
  for (const auto& [k, v] : r.entries(n, "runners", {})) {
    RunnerTemplate t;
    t.name = k.Scalar();
    t.line = r.line_of(k);
    const std::string key = "runners." + t.name;
    if (t.name == "modelstat") r.fail(k, key, "'modelstat' is the built-in runtime; name the runner otherwise");
    const YAML::Node command = v.IsMap() ? YAML::Node() : v;
    YAML::Node cmd = command;
    if (v.IsMap())
      for (const auto& [ck, cv] : r.entries(v, key, {"command"})) cmd = cv;
    if (!cmd || !cmd.IsSequence() || cmd.size() == 0)
      r.fail(cmd ? cmd : v, key + ".command",
             "expected the command as a list of arguments, e.g. [node, runners/ort.mjs, \"{model}\"] (never a shell "
             "string)");
    for (const YAML::Node& a : cmd) t.command.push_back(r.string(a, key + ".command"));
    check_command(t, r.file() + ":" + std::to_string(r.line_of(cmd)));
    spec.runners[t.name] = t;
  }
}

Json canonical(const SuiteSpec& spec) {
  Json j;
  j["name"] = spec.name;
  for (const SuiteModel& m : spec.models)
    j["models"].push_back({{"name", m.name}, {"hash", m.content_hash}, {"bindings", m.bindings}, {"inputs", m.inputs}});
  j["batch"] = spec.batch;
  j["threads"] = spec.threads;
  j["dtype"] = spec.dtype;
  j["fusion"] = spec.fusion;
  j["mode"] = spec.mode;
  j["device"] = spec.device;
  j["runtime"] = spec.runtime;
  j["profile"] = spec.profile;
  j["fit"] = {spec.fit.mode, spec.fit.value};
  for (const auto& [name, t] : spec.runners) j["runners"][name] = t.command;
  return j;
}

}  // namespace

SuiteSpec load_suite(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw Error(ErrorKind::Input, "no such suite file (a YAML or JSON file)", path);
  Reader r(path);
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::ParserException& e) {
    r.fail_line(e.mark.line + 1, "", "not valid YAML or JSON: " + e.msg);
  } catch (const YAML::Exception& e) {
    throw Error(ErrorKind::Input, std::string("cannot read the suite file: ") + e.what(), path);
  }
  SuiteSpec spec;
  spec.file = path;
  spec.dir = fs::path(path).parent_path().string();
  if (spec.dir.empty()) spec.dir = ".";
  spec.name = fs::path(path).stem().string();
  if (!root.IsMap()) r.fail(root, "", "a suite file is a mapping with at least 'models' (docs/suites.md)");

  YAML::Node models, axes;
  bool has_models = false, has_axes = false;
  for (const auto& [k, v] : r.entries(root, "", {"name", "models", "axes", "profile", "fit", "runners", "cell_timeout"})) {
    const std::string key = k.Scalar();
    if (key == "name") spec.name = r.string(v, key);
    if (key == "models") models = v, has_models = true;
    if (key == "axes") axes = v, has_axes = true;
    if (key == "profile") read_profile(r, v, spec);
    if (key == "fit") read_fit(r, v, spec);
    if (key == "runners") read_runners(r, v, spec);
    if (key == "cell_timeout") spec.cell_timeout_seconds = r.number(v, key, 0, false, 86400.0 * 7);
  }
  if (!has_models) r.fail(root, "models", "missing: list the models to run, e.g. models: [{path: model.onnx}]");
  if (!models.IsSequence() || models.size() == 0)
    r.fail(models, "models", "expected a non-empty list of models, got " + Reader::kind(models));
  std::map<std::string, size_t> model_by_identity;
  for (size_t i = 0; i < models.size(); ++i) {
    SuiteModel m = read_model(r, models[i], spec.dir, i);
    Json id = {m.content_hash, m.bindings, m.inputs};
    if (const auto same = model_by_identity.find(id.dump()); same != model_by_identity.end())
      r.fail_line(m.line, fmt::format("models[{}]", i),
                  fmt::format("the same model file with the same bindings as models[{}] (line {}): its cells would be "
                              "defined twice",
                              same->second, spec.models[same->second].line));
    model_by_identity[id.dump()] = i;
    spec.models.push_back(std::move(m));
  }

  if (has_axes) {
    const std::set<std::string> axis_names = {"batch", "threads", "dtype", "fusion", "mode", "device", "runtime"};
    for (const auto& [k, v] : r.entries(axes, "axes", axis_names)) {
      const std::string name = k.Scalar();
      const std::string key = "axes." + name;
      if (name == "batch")
        spec.batch = r.axis<int64_t>(v, key, [&](const YAML::Node& x) { return r.integer(x, key, 1, 1 << 20); });
      if (name == "threads")
        spec.threads = r.axis<int>(v, key, [&](const YAML::Node& x) {
          if (x.IsScalar() && x.Scalar() == "all") return 0;
          return static_cast<int>(r.integer(x, key + " (or all)", 1, 4096));
        });
      if (name == "dtype")
        spec.dtype = r.axis<std::string>(v, key, [&](const YAML::Node& x) {
          return r.one_of(x, key, {"model", "fp32", "fp16", "bf16"});
        });
      if (name == "fusion")
        spec.fusion = r.axis<std::string>(v, key, [&](const YAML::Node& x) { return r.boolean(x, key) ? "on" : "off"; });
      if (name == "mode") spec.mode = r.axis<int>(v, key, [&](const YAML::Node& x) { return read_mode(r, x); });
      if (name == "device")
        spec.device = r.axis<std::string>(v, key, [&](const YAML::Node& x) { return r.one_of(x, key, {"cpu", "cuda"}); });
      if (name == "runtime")
        spec.runtime = r.axis<std::string>(v, key, [&](const YAML::Node& x) {
          const std::string s = r.string(x, key);
          if (s != "modelstat" && !spec.runners.count(s))
            r.fail(x, key,
                   "unknown runtime '" + s + "': 'modelstat', or a runner defined under 'runners:' (docs/suites.md)");
          return s;
        });
    }
  }
  spec.content_hash = hash_text(canonical(spec).dump());
  return spec;
}

std::vector<Cell> expand_cells(const SuiteSpec& spec) {
  std::vector<Cell> cells;
  std::set<std::string> keys;
  for (const SuiteModel& m : spec.models)
    for (const std::string& runtime : spec.runtime)
      for (const std::string& device : spec.device)
        for (const std::string& dtype : spec.dtype)
          for (const std::string& fusion : spec.fusion)
            for (int requests : spec.mode)
              for (int64_t batch : spec.batch)
                for (int threads : spec.threads) {
                  Cell c;
                  c.index = static_cast<int64_t>(cells.size());
                  c.model = m.name;
                  c.model_path = m.path;
                  c.model_hash = m.content_hash;
                  c.task = m.task;
                  c.bindings = m.bindings;
                  c.inputs = m.inputs;
                  c.batch = batch;
                  c.threads = threads;
                  c.dtype = dtype;
                  c.fusion = fusion;
                  c.requests = requests;
                  c.device = device;
                  c.runtime = runtime;
                  // The work, not its name or how long it is measured: the same model file with the
                  // same settings is the same cell on every machine and in every suite.
                  Json id = {{"model", m.content_hash}, {"bindings", m.bindings}, {"inputs", m.inputs},
                             {"batch", batch},          {"threads", threads},   {"dtype", dtype},
                             {"fusion", fusion},        {"requests", requests}, {"device", device},
                             {"runtime", runtime}};
                  if (const auto t = spec.runners.find(runtime); t != spec.runners.end()) id["runner"] = t->second.command;
                  c.key = hash_text(id.dump());
                  if (!keys.insert(c.key).second)
                    throw Error(ErrorKind::Input, "cell " + c.label() + " is defined twice", spec.file);
                  cells.push_back(std::move(c));
                }
  return cells;
}

std::vector<std::string> profile_rule_flags(const SuiteSpec& spec) {
  std::vector<std::string> flags;
  bool layers = false;
  for (const auto& [key, value] : spec.profile) {
    const ProfileKey& pk = *find_profile_key(key);
    if (pk.type == ProfileKey::Flag) {
      if (key == "layers") layers = value == "true";
      else if (value == "true") flags.push_back(pk.flag);
      continue;
    }
    flags.push_back(pk.flag);
    flags.push_back(value);
  }
  if (!layers) flags.push_back("--no-layers");
  return flags;
}

double cell_seconds_estimate(const SuiteSpec& spec) {
  // profile's defaults (ProfileOptions): warm-up 0.5 s, time-out 10 s.
  double warmup = 0.5, max_time = 10.0;
  bool layers = false;
  for (const auto& [key, value] : spec.profile) {
    if (key == "warmup_time") warmup = std::stod(value);
    if (key == "max_time") max_time = std::stod(value);
    if (key == "layers") layers = value == "true";
  }
  // A few seconds to start the processes and load the model, then at most the
  // warm-up and the time-out per pass (the per-layer pass is a second one).
  constexpr double kStartSeconds = 3.0;
  return kStartSeconds + (warmup + max_time) * (layers ? 2 : 1);
}

}  // namespace modelstat::suite

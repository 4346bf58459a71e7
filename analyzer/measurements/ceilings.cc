// Device ceilings: lookup, JSON round trip, the saved-file location and the
// labelled datasheet fallback. Measuring them is the profiler's job
// (profiler/ceilings_probe.cc); this file never measures.
#include "modelstat/ceilings.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "analyzer/measurements/record_json.hpp"
#include "modelstat/error.hpp"

namespace modelstat {

// 1.1: node overheads; 1.2: op_costs, optimizer_costs; 1.3: fresh allocation
// cost (each optional on read).
const char* const kCeilingsSchemaVersion = "1.3";

double DeviceCeilings::peak_flops(const std::string& dtype) const {
  for (const auto& m : matmul)
    if (m.dtype == dtype) return m.flops_per_second;
  return 0;
}

const OpCost* DeviceCeilings::op_cost(const std::string& key) const {
  for (const auto& c : op_costs)
    if (c.op == key) return &c;
  return nullptr;
}

const OptimizerUpdateCost* DeviceCeilings::optimizer_cost(const std::string& optimizer) const {
  for (const auto& c : optimizer_costs)
    if (c.optimizer == optimizer) return &c;
  return nullptr;
}

double DeviceCeilings::matmul_flops_at(const std::string& dtype, double n) const {
  for (const auto& m : matmul) {
    if (m.dtype != dtype) continue;
    if (m.curve.empty()) return m.flops_per_second;
    if (n <= double(m.curve.front().n)) return m.curve.front().flops_per_second;
    if (n >= double(m.curve.back().n)) return m.curve.back().flops_per_second;
    for (size_t i = 1; i < m.curve.size(); ++i) {
      const auto& a = m.curve[i - 1];
      const auto& b = m.curve[i];
      if (n > double(b.n)) continue;
      // Log-log interpolation: throughput grows roughly as a power of size
      // until it saturates, so straight lines on log axes fit the curve.
      const double t = (std::log(n) - std::log(double(a.n))) / (std::log(double(b.n)) - std::log(double(a.n)));
      return std::exp(std::log(a.flops_per_second) + t * (std::log(b.flops_per_second) - std::log(a.flops_per_second)));
    }
    return m.flops_per_second;
  }
  return 0;
}

// ------------------------------------------------------------ the records' JSON
// One key set (docs/ceilings.md) for the saved file, `modelstat device -f json`
// and every document that embeds ceilings (report JSON, fit JSON).

void to_json(Json& j, const MatmulCeiling& m) {
  Json curve = Json::array();
  for (const auto& p : m.curve) curve.push_back({{"n", p.n}, {"flops_per_second", p.flops_per_second}});
  j = Json{{"dtype", m.dtype}, {"flops_per_second", m.flops_per_second}, {"best_size", m.best_size},
           {"curve", std::move(curve)}};
}

void from_json(const Json& j, MatmulCeiling& m) {
  m.dtype = j.at("dtype").get<std::string>();
  m.flops_per_second = j.at("flops_per_second").get<double>();
  m.best_size = j.value("best_size", int64_t(0));
  m.curve.clear();
  if (j.contains("curve"))
    for (const auto& p : j.at("curve")) m.curve.push_back({p.at("n").get<int64_t>(), p.at("flops_per_second").get<double>()});
}

void to_json(Json& j, const OpCost& o) {
  j = Json{{"op", o.op},
           {"probe", o.probe},
           {"small_bytes", o.small_bytes},
           {"large_bytes", o.large_bytes},
           {"fixed_seconds", o.fixed_seconds},
           {"seconds_per_byte", o.seconds_per_byte},
           {"backward_fixed_seconds", o.backward_fixed_seconds},
           {"backward_seconds_per_byte", o.backward_seconds_per_byte},
           {"backward_ratio", o.backward_ratio}};
}

void from_json(const Json& j, OpCost& o) {
  o.op = j.at("op").get<std::string>();
  o.probe = j.value("probe", "");
  o.small_bytes = j.value("small_bytes", int64_t(0));
  o.large_bytes = j.value("large_bytes", int64_t(0));
  o.fixed_seconds = j.at("fixed_seconds").get<double>();
  o.seconds_per_byte = j.at("seconds_per_byte").get<double>();
  o.backward_fixed_seconds = j.value("backward_fixed_seconds", 0.0);
  o.backward_seconds_per_byte = j.value("backward_seconds_per_byte", 0.0);
  o.backward_ratio = j.value("backward_ratio", 0.0);
}

void to_json(Json& j, const OptimizerUpdateCost& o) {
  j = Json{{"optimizer", o.optimizer},
           {"probe", o.probe},
           {"per_tensor_seconds", o.per_tensor_seconds},
           {"seconds_per_element", o.seconds_per_element}};
}

void from_json(const Json& j, OptimizerUpdateCost& o) {
  o.optimizer = j.at("optimizer").get<std::string>();
  o.probe = j.value("probe", "");
  o.per_tensor_seconds = j.at("per_tensor_seconds").get<double>();
  o.seconds_per_element = j.at("seconds_per_element").get<double>();
}

void to_json(Json& j, const DeviceCeilings& c) {
  j = Json::object();
  j["device_kind"] = c.device_kind;
  j["device_name"] = c.device_name;
  j["threads"] = c.threads;
  j["source"] = c.source;
  j["date"] = c.date;
  j["host"] = c.host;
  j["torch_version"] = c.torch_version;
  j["memory_bandwidth_bytes_per_second"] = c.memory_bandwidth;
  j["copy_bytes"] = c.copy_bytes;
  j["op_overhead_seconds"] = c.op_overhead_seconds;
  j["node_overhead_seconds"] = c.node_overhead_seconds;
  j["train_node_overhead_seconds"] = c.train_node_overhead_seconds;
  j["fresh_allocation_threshold_bytes"] = c.fresh_allocation_threshold_bytes;
  j["fresh_allocation_seconds_per_byte"] = c.fresh_allocation_seconds_per_byte;
  j["matmul"] = c.matmul;
  j["op_costs"] = c.op_costs;
  j["optimizer_costs"] = c.optimizer_costs;
  j["notes"] = c.notes;
}

void from_json(const Json& j, DeviceCeilings& c) {
  c.device_kind = j.at("device_kind").get<std::string>();
  c.device_name = j.value("device_name", "");
  c.threads = j.value("threads", 0);
  c.source = j.at("source").get<std::string>();
  c.date = j.value("date", "");
  c.host = j.value("host", "");
  c.torch_version = j.value("torch_version", "");
  c.memory_bandwidth = j.at("memory_bandwidth_bytes_per_second").get<double>();
  c.copy_bytes = j.value("copy_bytes", int64_t(0));
  c.op_overhead_seconds = j.value("op_overhead_seconds", 0.0);
  c.node_overhead_seconds = j.value("node_overhead_seconds", 0.0);
  c.train_node_overhead_seconds = j.value("train_node_overhead_seconds", 0.0);
  c.fresh_allocation_threshold_bytes = j.value("fresh_allocation_threshold_bytes", int64_t(0));
  c.fresh_allocation_seconds_per_byte = j.value("fresh_allocation_seconds_per_byte", 0.0);
  c.matmul = j.at("matmul").get<std::vector<MatmulCeiling>>();
  c.op_costs = j.contains("op_costs") ? j.at("op_costs").get<std::vector<OpCost>>() : std::vector<OpCost>{};
  c.optimizer_costs = j.contains("optimizer_costs")
                          ? j.at("optimizer_costs").get<std::vector<OptimizerUpdateCost>>()
                          : std::vector<OptimizerUpdateCost>{};
  c.notes = j.contains("notes") ? j.at("notes").get<std::vector<std::string>>() : std::vector<std::string>{};
}

// ------------------------------------------------------------------ the file

std::string ceilings_to_json(const DeviceCeilings& c) {
  Json j;
  j["schema_version"] = kCeilingsSchemaVersion;
  const Json record = c;
  for (auto it = record.begin(); it != record.end(); ++it) j[it.key()] = it.value();
  return j.dump(2) + "\n";
}

DeviceCeilings ceilings_from_json(const std::string& text, const std::string& origin) {
  const std::string where = origin.empty() ? std::string("ceilings JSON") : origin;
  Json j;
  try {
    j = Json::parse(text);
  } catch (const std::exception& e) {
    throw Error(ErrorKind::Input, "not valid JSON: " + std::string(e.what()), origin);
  }
  try {
    const std::string version = j.at("schema_version").get<std::string>();
    if (version.substr(0, version.find('.')) != std::string(kCeilingsSchemaVersion).substr(0, 1))
      throw Error(ErrorKind::Input, "ceilings schema " + version + " is not supported (this modelstat reads " +
                                        kCeilingsSchemaVersion + ")",
                  origin);
    DeviceCeilings c = j.get<DeviceCeilings>();
    for (auto& m : c.matmul) {
      // Rates and sizes are logged by matmul_flops_at: a zero or negative one would
      // turn every forecast into NaN, so such a file is refused here, by name.
      if (!(m.flops_per_second > 0))
        throw Error(ErrorKind::Input, "matmul " + m.dtype + ": flops_per_second must be positive", origin);
      for (const auto& p : m.curve)
        if (p.n <= 0 || !(p.flops_per_second > 0))
          throw Error(ErrorKind::Input,
                      "matmul " + m.dtype + " curve: n and flops_per_second must be positive (n=" +
                          std::to_string(p.n) + ")",
                      origin);
      std::sort(m.curve.begin(), m.curve.end(), [](const auto& a, const auto& b) { return a.n < b.n; });
    }
    for (const OpCost& o : c.op_costs)
      for (double v : {o.fixed_seconds, o.seconds_per_byte, o.backward_fixed_seconds, o.backward_seconds_per_byte,
                       o.backward_ratio})
        if (!(v >= 0) || !std::isfinite(v))
          throw Error(ErrorKind::Input, "op_costs " + o.op + ": costs must be finite and not negative", origin);
    for (const OptimizerUpdateCost& o : c.optimizer_costs)
      if (!(o.per_tensor_seconds >= 0) || !(o.seconds_per_element >= 0) || !std::isfinite(o.per_tensor_seconds) ||
          !std::isfinite(o.seconds_per_element))
        throw Error(ErrorKind::Input, "optimizer_costs " + o.optimizer + ": costs must be finite and not negative",
                    origin);
    if (c.device_kind != "cpu" && c.device_kind != "cuda")
      throw Error(ErrorKind::Input, "device_kind must be cpu or cuda, got '" + c.device_kind + "'", origin);
    if (!(c.memory_bandwidth > 0)) throw Error(ErrorKind::Input, "memory bandwidth must be positive", origin);
    if (!(c.op_overhead_seconds >= 0)) throw Error(ErrorKind::Input, "op_overhead_seconds must not be negative", origin);
    if (!(c.node_overhead_seconds >= 0) || !(c.train_node_overhead_seconds >= 0))
      throw Error(ErrorKind::Input, "node overheads must not be negative", origin);
    if (c.fresh_allocation_threshold_bytes < 0 || !(c.fresh_allocation_seconds_per_byte >= 0) ||
        !std::isfinite(c.fresh_allocation_seconds_per_byte))
      throw Error(ErrorKind::Input, "fresh allocation threshold and cost must be finite and not negative", origin);
    return c;
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(ErrorKind::Input, where + ": missing or malformed field: " + e.what(), origin);
  }
}

std::string default_ceilings_path(const std::string& device_kind) {
  std::string dir;
  if (const char* d = std::getenv("MODELSTAT_CEILINGS_DIR"); d && *d) {
    dir = d;
  } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    dir = std::string(x) + "/modelstat";
  } else if (const char* h = std::getenv("HOME"); h && *h) {
    dir = std::string(h) + "/.cache/modelstat";
  } else {
    dir = ".modelstat";
  }
  return dir + "/ceilings-" + device_kind + ".json";
}

namespace {

void make_parents(const std::string& path) {
  for (size_t pos = path.find('/', 1); pos != std::string::npos; pos = path.find('/', pos + 1)) {
    const std::string dir = path.substr(0, pos);
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
      throw Error(ErrorKind::Runtime, "cannot create folder " + dir + ": " + std::strerror(errno));
  }
}

}  // namespace

void save_ceilings(const DeviceCeilings& c, const std::string& path) {
  make_parents(path);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(ErrorKind::Runtime, "cannot write " + tmp + ": " + std::strerror(errno));
    out << ceilings_to_json(c);
    if (!out) throw Error(ErrorKind::Runtime, "cannot write " + tmp);
  }
  // Rename: a reader never sees half a file.
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw Error(ErrorKind::Runtime, "cannot replace " + path + ": " + std::strerror(errno));
}

std::optional<DeviceCeilings> load_ceilings(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ceilings_from_json(ss.str(), path);
}

namespace {

struct Datasheet {
  const char* name;
  const char* device_name;
  double bandwidth;  // bytes/s
  double fp32, tf32, fp16, bf16;  // dense FLOP/s (no sparsity)
};

// Vendor datasheet dense peaks (boost clocks). Real kernels reach less; this is
// why measured ceilings are the default and these are only a labelled fallback.
constexpr Datasheet kDatasheets[] = {
    {"h100-sxm", "NVIDIA H100 SXM5 80GB", 3.35e12, 66.9e12, 494.7e12, 989.4e12, 989.4e12},
    {"h100-pcie", "NVIDIA H100 PCIe 80GB", 2.0e12, 51.2e12, 378.0e12, 756.0e12, 756.0e12},
    {"h200", "NVIDIA H200 141GB", 4.8e12, 66.9e12, 494.7e12, 989.4e12, 989.4e12},
    {"a100-sxm", "NVIDIA A100 SXM4 80GB", 2.039e12, 19.5e12, 156.0e12, 312.0e12, 312.0e12},
    {"l4", "NVIDIA L4", 0.3e12, 30.3e12, 60.0e12, 121.0e12, 121.0e12},
    {"t4", "NVIDIA T4", 0.32e12, 8.1e12, 8.1e12, 65.0e12, 0.0},
};

}  // namespace

std::vector<std::string> datasheet_names() {
  std::vector<std::string> names;
  for (const auto& d : kDatasheets) names.push_back(d.name);
  return names;
}

DeviceCeilings datasheet_ceilings(const std::string& name) {
  for (const auto& d : kDatasheets) {
    if (name != d.name) continue;
    DeviceCeilings c;
    c.device_kind = "cuda";
    c.device_name = d.device_name;
    c.source = std::string("datasheet: ") + d.name;
    c.memory_bandwidth = d.bandwidth;
    const std::pair<const char*, double> peaks[] = {{"fp32", d.fp32}, {"tf32", d.tf32}, {"fp16", d.fp16}, {"bf16", d.bf16}};
    for (const auto& [dtype, flops] : peaks) {
      if (flops <= 0) continue;
      MatmulCeiling m;
      m.dtype = dtype;
      m.flops_per_second = flops;
      c.matmul.push_back(m);
    }
    c.notes.push_back("vendor datasheet peaks, not measured: real kernels reach less; run 'modelstat device'");
    return c;
  }
  std::string known;
  for (const auto& n : datasheet_names()) known += (known.empty() ? "" : ", ") + n;
  throw_usage("unknown datasheet '" + name + "' (known: " + known + ")");
}

}  // namespace modelstat

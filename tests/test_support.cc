// Shared helpers for tests (see test_support.hpp).
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <utility>

namespace modelstat::test {

Shape make_shape(const std::vector<int64_t>& dims) {
  Shape s;
  s.rank_known = true;
  for (int64_t d : dims) {
    Dim dim;
    dim.value = d < 0 ? -1 : d;
    if (d < 0) dim.symbol = "unk";
    s.dims.push_back(dim);
  }
  return s;
}

NodeBuilder::NodeBuilder(std::string op_type, std::string domain) {
  node_.op_type = std::move(op_type);
  node_.domain = std::move(domain);
  node_.name = node_.op_type + "_0";
  graph_.name = "test_graph";
}

int NodeBuilder::add_tensor(Shape shape, DType dtype, TensorRole role) {
  Tensor t;
  t.name = "t" + std::to_string(graph_.tensors.size());
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.role = role;
  graph_.tensors.push_back(std::move(t));
  return int(graph_.tensors.size() - 1);
}

NodeBuilder& NodeBuilder::input(const std::vector<int64_t>& dims, DType dtype) {
  const int id = add_tensor(make_shape(dims), dtype, TensorRole::Input);
  graph_.inputs.push_back(id);
  node_.inputs.push_back(id);
  return *this;
}

NodeBuilder& NodeBuilder::weight(const std::vector<int64_t>& dims, DType dtype, std::vector<int64_t> int_values) {
  const int id = add_tensor(make_shape(dims), dtype, TensorRole::Initializer);
  Tensor& t = graph_.tensors[size_t(id)];
  t.data_location = DataLocation::Embedded;
  if (!int_values.empty()) {
    t.int_values = std::move(int_values);
    t.has_int_values = true;
  }
  graph_.initializers.push_back(id);
  node_.inputs.push_back(id);
  return *this;
}

NodeBuilder& NodeBuilder::unknown_rank_input(DType dtype) {
  const int id = add_tensor(Shape{}, dtype, TensorRole::Input);
  graph_.inputs.push_back(id);
  node_.inputs.push_back(id);
  return *this;
}

NodeBuilder& NodeBuilder::omitted_input() {
  node_.inputs.push_back(-1);
  return *this;
}

NodeBuilder& NodeBuilder::output(const std::vector<int64_t>& dims, DType dtype) {
  const int id = add_tensor(make_shape(dims), dtype, TensorRole::Activation);
  graph_.outputs.push_back(id);
  node_.outputs.push_back(id);
  return *this;
}

NodeBuilder& NodeBuilder::unknown_rank_output(DType dtype) {
  const int id = add_tensor(Shape{}, dtype, TensorRole::Activation);
  graph_.outputs.push_back(id);
  node_.outputs.push_back(id);
  return *this;
}

NodeBuilder& NodeBuilder::omitted_output() {
  node_.outputs.push_back(-1);
  return *this;
}

NodeBuilder& NodeBuilder::attr(const std::string& key, AttrValue value) {
  node_.attributes[key] = std::move(value);
  return *this;
}

Graph NodeBuilder::build() const {
  Graph g = graph_;
  for (int id : node_.inputs)
    if (id >= 0) g.tensors[size_t(id)].consumers.push_back(0);
  for (int id : node_.outputs)
    if (id >= 0) g.tensors[size_t(id)].producer = 0;
  g.nodes.push_back(node_);
  return g;
}

NodeReport cost_node(int index, std::string name, std::string op, CostStatus status, int64_t macs, int64_t flops,
                     int64_t bytes_read, int64_t bytes_written) {
  NodeReport n;
  n.index = index;
  n.name = std::move(name);
  n.op_type = std::move(op);
  n.output_dtype = "float32";
  n.cost.status = status;
  n.cost.macs = macs;
  n.cost.flops = flops;
  n.cost.bytes_read = bytes_read;
  n.cost.bytes_written = bytes_written;
  return n;
}

LayerTiming subgraph_layer(int index, std::string name, std::string op, int depth, double calls,
                           TimingSummary time) {
  LayerTiming l;
  l.index = index;
  l.name = std::move(name);
  l.op_type = std::move(op);
  l.depth = depth;
  l.calls_per_run = calls;
  l.median_per_call = time.median / calls;
  l.time = std::move(time);
  return l;
}

DeviceCeilings cpu_ceilings(double bandwidth, double peak, const std::string& source) {
  DeviceCeilings c;
  c.device_kind = "cpu";
  c.device_name = "Test CPU";
  c.threads = 4;
  c.source = source;
  c.memory_bandwidth = bandwidth;
  MatmulCeiling m;
  m.dtype = "fp32";
  m.flops_per_second = peak;
  c.matmul.push_back(m);
  return c;
}

ProfileOptions quick_profile_options(int min_iterations, double max_seconds) {
  ProfileOptions o;
  o.threads = 1;
  o.warmup_iterations = 1;
  o.warmup_seconds = 0;
  o.min_iterations = min_iterations;
  o.min_seconds = 0;
  o.max_seconds = max_seconds;
  o.per_layer = false;
  return o;
}

std::string write_test_cpu_ceilings(const std::string& path) {
  std::ofstream(path) << R"({"schema_version": "1.0", "device_kind": "cpu", "device_name": "test cpu",
    "threads": 1, "source": "measured", "date": "2024-05-01", "host": "test",
    "memory_bandwidth_bytes_per_second": 2e10, "copy_bytes": 268435456, "op_overhead_seconds": 2e-6,
    "matmul": [{"dtype": "fp32", "flops_per_second": 1e11, "best_size": 1024, "curve": []}], "notes": []})";
  return path;
}

cost::RuleResult run_cost_rule(const Graph& graph, int64_t opset) {
  const Node& node = graph.nodes.at(0);
  const cost::CostRule* rule = cost::find_rule(node.domain, node.op_type, opset);
  if (!rule) {
    ADD_FAILURE() << "no cost rule for " << node.op_type << " at opset " << opset;
    cost::RuleResult r;
    r.status = CostStatus::UnknownOp;
    return r;
  }
  return rule->fn(cost::CostContext(graph, node, opset));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::string normalise_volatile(std::string text, const std::vector<std::string>& volatile_values) {
  for (const std::string& v : volatile_values) {
    if (v.empty()) continue;
    for (size_t at = text.find(v); at != std::string::npos; at = text.find(v, at + 1))
      text.replace(at, v.size(), "<VOLATILE>");
  }
  static const std::regex date(R"(\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?)");
  return std::regex_replace(text, date, "<DATE>");
}

#ifdef MODELSTAT_SOURCE_DIR
namespace {

// "@@ -a,n +b,m @@" and the differing run of lines between the common head
// and the common tail, with up to three lines of context before it; each side
// shows at most 20 lines.
std::string first_difference(const std::vector<std::string>& expected, const std::vector<std::string>& actual) {
  size_t head = 0;
  while (head < expected.size() && head < actual.size() && expected[head] == actual[head]) ++head;
  size_t tail = 0;
  while (tail < expected.size() - head && tail < actual.size() - head &&
         expected[expected.size() - 1 - tail] == actual[actual.size() - 1 - tail])
    ++tail;
  const size_t context = std::min<size_t>(head, 3), kMost = 20;
  const size_t removed = expected.size() - head - tail, added = actual.size() - head - tail;
  std::ostringstream out;
  out << "@@ -" << head - context + 1 << "," << context + removed << " +" << head - context + 1 << ","
      << context + added << " @@\n";
  for (size_t i = head - context; i < head; ++i) out << " " << expected[i] << "\n";
  for (size_t i = 0; i < std::min(removed, kMost); ++i) out << "-" << expected[head + i] << "\n";
  if (removed > kMost) out << "-... " << removed - kMost << " more lines\n";
  for (size_t i = 0; i < std::min(added, kMost); ++i) out << "+" << actual[head + i] << "\n";
  if (added > kMost) out << "+... " << added - kMost << " more lines\n";
  return out.str();
}

}  // namespace

void expect_golden(const std::string& name, const std::string& actual, const std::vector<std::string>& volatile_values) {
  const std::string relative = "tests/data/golden/" + name;
  const std::string path = std::string(MODELSTAT_SOURCE_DIR) + "/" + relative;
  const std::string text = normalise_volatile(actual, volatile_values);
  const char* update = std::getenv("MODELSTAT_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << text;
    std::printf("modelstat: wrote %s\n", path.c_str());
    return;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in.good()) {
    ADD_FAILURE() << "no golden file " << relative << "; create it with\n  MODELSTAT_UPDATE_GOLDEN=1 ctest --test-dir build -R '"
                  << testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() << "'";
    return;
  }
  std::stringstream expected;
  expected << in.rdbuf();
  if (expected.str() == text) return;
  ADD_FAILURE() << relative << " differs from the writer's output (normalised):\n"
                << first_difference(lines_of(expected.str()), lines_of(text))
                << "If the change is intended, regenerate the file and review it with git diff:\n"
                << "  MODELSTAT_UPDATE_GOLDEN=1 ctest --test-dir build -R '"
                << testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() << "'";
}

void expect_golden_formats(const std::string& stem, const std::vector<std::string>& formats,
                           const std::function<std::string(const std::string& format)>& render,
                           const std::vector<std::string>& volatile_values) {
  static const std::map<std::string, std::string> kEnding = {{"table", ".txt"}, {"json", ".json"},
                                                             {"csv", ".csv"},   {"md", ".md"},
                                                             {"html", ".html"}, {"trace", ".trace.json"}};
  for (const std::string& format : formats) {
    SCOPED_TRACE(format);
    const auto ending = kEnding.find(format);
    ASSERT_NE(ending, kEnding.end()) << "no golden file ending for format " << format;
    expect_golden(stem + ending->second, render(format), volatile_values);
  }
}
#endif

CliResult run_shell_command(const std::string& command) {
  static std::atomic<int> calls{0};
  const std::string err_file = testing::TempDir() + "/modelstat_cli_stderr." + std::to_string(getpid()) + "." +
                               std::to_string(calls++) + ".txt";
  const std::string cmd = command + " 2>" + err_file;
  CliResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.err = read_file(err_file);
  std::remove(err_file.c_str());
  return r;
}

#ifdef MODELSTAT_BINARY
CliResult run_modelstat_cli(const std::string& args, const std::string& env, int timeout_seconds) {
  return run_shell_command((env.empty() ? "" : "env " + env + " ") + "timeout " +
                           std::to_string(timeout_seconds) + " " + std::string(MODELSTAT_BINARY) + " " +
                           args);
}
#endif

}  // namespace modelstat::test

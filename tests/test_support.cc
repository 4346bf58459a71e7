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

#include "analyzer/suite/hash.hpp"

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

MatmulCeiling flat_matmul_curve(const std::string& dtype, double rate) {
  MatmulCeiling m;
  m.dtype = dtype;
  m.flops_per_second = rate;
  m.best_size = 1024;
  m.curve = {{1024, rate}};
  return m;
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

void write_file(const std::string& path, const std::string& bytes) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string fresh_temp_dir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
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

// An HTML page's static parts, the body of each bare `<style>` and `<script>`
// block (the stylesheet and script a writer embeds in every page it writes),
// folded to one line that names their size and FNV-1a 64 hash: the golden
// still pins them byte for byte, without a copy of the writer's source in
// every page's golden file (a change to them reads in the writer's diff).
// Blocks with attributes (`<script id="data" ...>`, the page's data) stay.
std::string fold_static_blocks(const std::string& page) {
  std::string out;
  size_t at = 0;
  for (;;) {
    size_t open = std::string::npos;
    std::string close;
    for (const char* tag : {"style", "script"}) {
      const size_t found = page.find(std::string("<") + tag + ">\n", at);
      if (found < open) {
        open = found;
        close = std::string("</") + tag + ">";
      }
    }
    if (open == std::string::npos) break;
    const size_t body = page.find('\n', open) + 1;
    const size_t end = page.find(close, body);
    if (end == std::string::npos) break;
    const std::string block = page.substr(body, end - body);
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx",
                  static_cast<unsigned long long>(suite::fnv1a64(block.data(), block.size())));
    out += page.substr(at, body - at);
    out += "/* static: " + std::to_string(block.size()) + " bytes, FNV-1a 64 " + hash + " */\n";
    at = end;
  }
  return out + page.substr(at);
}

bool ends_with(const std::string& text, const std::string& ending) {
  return text.size() >= ending.size() && text.compare(text.size() - ending.size(), ending.size(), ending) == 0;
}

// Output as a golden file holds it: normalised, and a page's static blocks folded.
std::string golden_text(const std::string& name, const std::string& actual,
                        const std::vector<std::string>& volatile_values) {
  const std::string normalised = normalise_volatile(actual, volatile_values);
  return ends_with(name, ".html") ? fold_static_blocks(normalised) : normalised;
}

// The text split at each "\n", exactly: "a\nb\n" is {"a", "b", ""}.
std::vector<std::string> exact_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
    lines.push_back(text.substr(start, nl - start));
  lines.push_back(text.substr(start));
  return lines;
}

// The line diff from `a` to `b` along a longest common subsequence, as
// unified hunks with `context` lines around each change ("@@ -a,n +b,m @@",
// then ' ', '-', '+' lines); empty when they are the same.
std::string line_diff(const std::vector<std::string>& a, const std::vector<std::string>& b, size_t context) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<uint32_t>> lcs(n + 1, std::vector<uint32_t>(m + 1, 0));  // of a[i..] and b[j..]
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  struct Op {
    char kind;    // ' ' the same, '-' a[i] only, '+' b[j] only
    size_t i, j;  // where in a and b it stands
  };
  std::vector<Op> ops;
  for (size_t i = 0, j = 0; i < n || j < m;) {
    if (i < n && j < m && a[i] == b[j]) {
      ops.push_back({' ', i++, j++});
    } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      ops.push_back({'-', i++, j});
    } else {
      ops.push_back({'+', i, j++});
    }
  }
  std::ostringstream out;
  for (size_t k = 0; k < ops.size();) {
    if (ops[k].kind == ' ') {
      ++k;
      continue;
    }
    // A hunk: this change and the next ones fewer than 2 x context same lines apart.
    size_t last = k;
    for (size_t next = k + 1; next < ops.size() && next <= last + 2 * context + 1; ++next)
      if (ops[next].kind != ' ') last = next;
    const size_t first = k >= context ? k - context : 0, end = std::min(ops.size(), last + context + 1);
    size_t a_count = 0, b_count = 0;
    for (size_t x = first; x < end; ++x) {
      a_count += ops[x].kind != '+';
      b_count += ops[x].kind != '-';
    }
    out << "@@ -" << ops[first].i + 1 << "," << a_count << " +" << ops[first].j + 1 << "," << b_count << " @@\n";
    for (size_t x = first; x < end; ++x) out << ops[x].kind << (ops[x].kind == '+' ? b[ops[x].j] : a[ops[x].i]) << "\n";
    k = end;
  }
  return out.str();
}

void compare_with_golden(const std::string& name, const std::string& text) {
  const std::string relative = "tests/data/golden/" + name;
  const std::string path = std::string(MODELSTAT_SOURCE_DIR) + "/" + relative;
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

}  // namespace

void expect_golden(const std::string& name, const std::string& actual, const std::vector<std::string>& volatile_values) {
  compare_with_golden(name, golden_text(name, actual, volatile_values));
}

void expect_golden_variant(const std::string& name, const std::string& actual, const std::string& base,
                           const std::vector<std::string>& volatile_values) {
  const std::string page = ends_with(name, ".diff") ? name.substr(0, name.size() - 5) : name;
  compare_with_golden(name, line_diff(exact_lines(golden_text(page, base, volatile_values)),
                                      exact_lines(golden_text(page, actual, volatile_values)), 2));
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

void expect_one_line_usage_error(const CliResult& r) {
  ASSERT_LT(r.exit_code, 128) << "killed by signal " << r.exit_code - 128 << ": " << r.err;
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("modelstat: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line, no ATen backtrace:\n" << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

#ifdef MODELSTAT_BINARY
CliResult run_modelstat_cli(const std::string& args, const std::string& env, int timeout_seconds) {
  return run_shell_command((env.empty() ? "" : "env " + env + " ") + "timeout " +
                           std::to_string(timeout_seconds) + " " + std::string(MODELSTAT_BINARY) + " " +
                           args);
}
#endif

}  // namespace modelstat::test

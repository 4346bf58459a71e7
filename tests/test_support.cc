// Shared helpers for tests (see test_support.hpp).
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
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

cost::RuleResult run_cost_rule(const Graph& graph, int64_t opset) {
  const Node& node = graph.nodes.at(0);
  const cost::CostRule* rule = cost::find_rule(node.domain, node.op_type, opset);
  if (!rule) {
    ADD_FAILURE() << "no cost rule for " << node.op_type << " at opset " << opset;
    cost::RuleResult r;
    r.status = CostStatus::UnknownOp;
    return r;
  }
  return rule->fn(cost::CostContext(graph, node));
}

#ifdef MODELSTAT_BINARY
CliResult run_modelstat_cli(const std::string& args, const std::string& env, int timeout_seconds) {
  static std::atomic<int> calls{0};
  const std::string err_file = testing::TempDir() + "/modelstat_cli_stderr." + std::to_string(getpid()) + "." +
                               std::to_string(calls++) + ".txt";
  const std::string cmd = (env.empty() ? "" : "env " + env + " ") + "timeout " + std::to_string(timeout_seconds) + " " +
                          std::string(MODELSTAT_BINARY) + " " + args + " 2>" + err_file;
  CliResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (FILE* f = fopen(err_file.c_str(), "r")) {
    while ((n = fread(buf.data(), 1, buf.size(), f)) > 0) r.err.append(buf.data(), n);
    fclose(f);
  }
  std::remove(err_file.c_str());
  return r;
}
#endif

}  // namespace modelstat::test

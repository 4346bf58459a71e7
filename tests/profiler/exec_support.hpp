// Running one ONNX node through its registered executor (profiler/ops), for the
// executor tests: the node's inputs are the given tensors in order (an undefined
// tensor is an omitted optional input), its outputs follow them.
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "modelstat/graph.hpp"
#include "profiler/ops/exec_rule.hpp"

namespace modelstat::profiler::test {

using Attrs = std::map<std::string, AttrValue>;

// Runs `domain`.`op` at `opset` on `inputs`; float_dtype is the run's compute
// dtype (ExecOptions::float_dtype). Throws when no executor covers the opset.
inline std::vector<at::Tensor> run_node(const std::string& domain, const std::string& op, int64_t opset,
                                        std::vector<at::Tensor> inputs, Attrs attrs, int num_outputs,
                                        at::ScalarType float_dtype = at::kFloat) {
  Graph graph;
  Node node;
  node.name = op + "_0";
  node.op_type = op;
  node.domain = domain;
  for (size_t i = 0; i < inputs.size(); ++i) node.inputs.push_back(inputs[i].defined() ? int(i) : -1);
  for (int i = 0; i < num_outputs; ++i) node.outputs.push_back(int(inputs.size()) + i);
  node.attributes = std::move(attrs);
  const ExecRule* rule = find_executor(domain, op, opset);
  if (!rule)
    throw std::runtime_error("no executor for " + (domain.empty() ? "" : domain + ".") + op + " at opset " +
                             std::to_string(opset));
  ExecContext ctx(graph, node, opset, std::move(inputs), at::kCPU, float_dtype);
  rule->fn(ctx);
  return ctx.outputs;
}

}  // namespace modelstat::profiler::test

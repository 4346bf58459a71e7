// Small builders for tests: single-node IR graphs with given input/output
// shapes, dtypes and attributes, and a shortcut that runs the registered cost
// rule on such a node.
//
//   Graph g = NodeBuilder("Conv")
//                 .input({1, 3, 224, 224})
//                 .weight({64, 3, 7, 7})
//                 .output({1, 64, 112, 112})
//                 .attr("strides", std::vector<int64_t>{2, 2})
//                 .build();
//
// A dim of -1 is unknown (kUnknownDim); unknown_rank_input() gives a tensor of
// unknown rank; omitted_input() an omitted optional input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/cost/cost_rule.hpp"
#include "modelstat/graph.hpp"

namespace modelstat::test {

constexpr int64_t kUnknownDim = -1;

// A Shape from dims; -1 entries are unknown dims.
Shape make_shape(const std::vector<int64_t>& dims);

class NodeBuilder {
 public:
  explicit NodeBuilder(std::string op_type, std::string domain = {});

  // A graph input (activation) with the given dims.
  NodeBuilder& input(const std::vector<int64_t>& dims, DType dtype = DType::Float);
  // An initializer (weight), optionally with small integer values (shape constants).
  NodeBuilder& weight(const std::vector<int64_t>& dims, DType dtype = DType::Float,
                      std::vector<int64_t> int_values = {});
  NodeBuilder& unknown_rank_input(DType dtype = DType::Float);
  NodeBuilder& omitted_input();
  NodeBuilder& output(const std::vector<int64_t>& dims, DType dtype = DType::Float);
  NodeBuilder& unknown_rank_output(DType dtype = DType::Float);
  NodeBuilder& omitted_output();
  NodeBuilder& attr(const std::string& key, AttrValue value);

  Graph build() const;

 private:
  int add_tensor(Shape shape, DType dtype, TensorRole role);

  Graph graph_;
  Node node_;
};

// Runs the rule registered for the graph's first node at `opset` (default
// domain). Fails the calling test (ADD_FAILURE) and returns an UnknownOp result
// when no rule is registered.
cost::RuleResult run_cost_rule(const Graph& graph, int64_t opset = 17);

}  // namespace modelstat::test

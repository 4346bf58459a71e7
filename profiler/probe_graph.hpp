// A graph of known shapes built in memory for `modelstat device`'s probes
// (op_cost_probe.cc, conv_probe.cc): one float node at a time, weights
// without data (the executor's weight store fills them from its fixed seed).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "modelstat/graph.hpp"

namespace modelstat::profiler {

// Each node has one output, which becomes the graph's output (a probe with
// several outputs sets model.graph.outputs itself).
class ProbeGraph {
 public:
  using Dims = std::vector<int64_t>;
  ProbeGraph() { model.opsets = {{"", 17}}; }
  int input(const Dims& dims) { return add("x" + std::to_string(model.graph.inputs.size()), dims, DType::Float, TensorRole::Input, true); }
  int weight(const Dims& dims) { return add("w" + std::to_string(model.graph.initializers.size()), dims, DType::Float, TensorRole::Initializer, false); }
  // A float scalar initializer holding `value` (inline bytes, as a small
  // embedded constant of a model file): a Clip's bound, say.
  int scalar(float value) {
    const int t = weight({});
    Tensor& tensor = model.graph.tensors[size_t(t)];
    tensor.data_location = DataLocation::Embedded;
    ConstantBytes& bytes = tensor.mutable_storage().bytes;
    bytes.has_inline = true;
    bytes.inline_bytes.assign(reinterpret_cast<const char*>(&value), sizeof value);
    return t;
  }
  // Appends a node reading `inputs`; returns its output.
  int node(const std::string& op, const std::vector<int>& inputs, const Dims& out_dims,
           std::map<std::string, AttrValue> attributes = {}) {
    Graph& g = model.graph;
    const int index = int(g.nodes.size());
    Node n;
    n.op_type = op;
    n.name = op + "_" + std::to_string(index);
    n.inputs = inputs;
    n.attributes = std::move(attributes);
    for (int t : inputs) g.tensors[size_t(t)].consumers.push_back(index);
    const int y = add("y" + std::to_string(index), out_dims, DType::Float, TensorRole::Activation, false);
    g.tensors[size_t(y)].producer = index;
    n.outputs = {y};
    g.nodes.push_back(std::move(n));
    g.outputs = {y};
    return y;
  }
  Model model;

 private:
  int add(const std::string& name, const Dims& dims, DType dtype, TensorRole role, bool is_input) {
    Graph& g = model.graph;
    Tensor t;
    t.name = name;
    t.dtype = dtype;
    t.role = role;
    t.shape.rank_known = true;
    for (int64_t d : dims) t.shape.dims.push_back(Dim{d, {}});
    g.tensors.push_back(std::move(t));
    const int id = int(g.tensors.size()) - 1;
    if (is_input) g.inputs.push_back(id);
    if (role == TensorRole::Initializer) g.initializers.push_back(id);
    return id;
  }
};

}  // namespace modelstat::profiler

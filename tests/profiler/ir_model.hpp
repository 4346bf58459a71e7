// A one-graph IR model built by hand for profiler tests (tests/profiler/*):
// inputs, inline initializers, nodes with their producer/consumer links.
// (One node for a cost rule: test::NodeBuilder, tests/test_support.hpp; an
// ONNX protobuf model: tests/profiler/onnx_builder.hpp.)
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <string>
#include <vector>

#include "modelstat/graph.hpp"
#include "profiler/ops/exec_helpers.hpp"
#include "test_support.hpp"

namespace modelstat::profiler {

class IrModel {
 public:
  IrModel() { model.opsets = {{"", 17}}; }

  int input(const std::string& name, std::vector<int64_t> dims, DType dtype = DType::Float) {
    const int id = tensor(name, dims, dtype, TensorRole::Input);
    model.graph.inputs.push_back(id);
    return id;
  }
  // An initializer whose bytes are inline, as the loader keeps small constants.
  int weight(const std::string& name, const at::Tensor& value) {
    const at::Tensor v = value.contiguous();
    const int id = tensor(name, v.sizes().vec(), dtype_of(v.scalar_type()), TensorRole::Initializer);
    Tensor& t = model.graph.tensors[size_t(id)];
    t.data_location = DataLocation::Embedded;
    t.mutable_storage().bytes.has_inline = true;
    t.mutable_storage().bytes.inline_bytes.assign(static_cast<const char*>(v.data_ptr()), size_t(v.nbytes()));
    model.graph.initializers.push_back(id);
    return id;
  }
  // An int64 initializer with its values kept as the loader keeps small
  // integer constants (Tensor::int_values: a Slice's starts, a Reshape's shape).
  int int_weight(const std::string& name, const std::vector<int64_t>& values) {
    const int id = weight(name, at::tensor(values, at::kLong));
    model.graph.tensors[size_t(id)].int_values = values;
    model.graph.tensors[size_t(id)].has_int_values = true;
    return id;
  }
  std::vector<int> node(const std::string& op, const std::vector<int>& inputs, int outputs = 1,
                        std::map<std::string, AttrValue> attributes = {}) {
    Graph& g = model.graph;
    Node n;
    n.op_type = op;
    n.name = op + "_" + std::to_string(g.nodes.size());
    n.inputs = inputs;
    n.attributes = std::move(attributes);
    const int index = int(g.nodes.size());
    for (int t : inputs)
      if (t >= 0) g.tensors[size_t(t)].consumers.push_back(index);
    std::vector<int> out;
    for (int o = 0; o < outputs; ++o) {
      const int id = tensor(n.name + "_out" + std::to_string(o), {}, DType::Float, TensorRole::Activation);
      g.tensors[size_t(id)].producer = index;
      n.outputs.push_back(id);
      out.push_back(id);
    }
    g.nodes.push_back(std::move(n));
    return out;
  }
  void output(int id) { model.graph.outputs.push_back(id); }

  Model model;

 private:
  int tensor(const std::string& name, const std::vector<int64_t>& dims, DType dtype, TensorRole role) {
    Tensor t;
    t.name = name;
    t.dtype = dtype;
    t.role = role;
    t.shape = test::make_shape(dims);
    model.graph.tensors.push_back(std::move(t));
    return int(model.graph.tensors.size() - 1);
  }
};

}  // namespace modelstat::profiler

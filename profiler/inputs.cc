// Inputs the executor makes when the user gives none (Executor::make_inputs):
// random values from a fixed seed, never zeros, of a range that is valid for
// what reads them.
#include <ATen/CPUGeneratorImpl.h>

#include <limits>
#include <optional>

#include "modelstat/error.hpp"
#include "profiler/executor.hpp"
#include "profiler/ops/exec_helpers.hpp"

namespace modelstat::profiler {

namespace {

// Exclusive upper bound for an integer graph input: the vocabulary size when
// it indexes a constant table (Gather's indices, as token ids do), else 2.
int64_t integer_input_bound(const Graph& g, int input, const WeightStore& weights) {
  int64_t bound = std::numeric_limits<int64_t>::max();
  for (int consumer : g.tensors[size_t(input)].consumers) {
    const Node& node = g.nodes[size_t(consumer)];
    if (node.op_type != "Gather" || node.inputs.size() < 2 || node.inputs[1] != input || node.inputs[0] < 0) continue;
    const at::Tensor& table = weights.get(&g, node.inputs[0]);
    const Tensor& data = g.tensors[size_t(node.inputs[0])];
    const int64_t axis = node.attr_int("axis", 0);
    if (!data.is_constant() || !table.defined() || table.dim() == 0) continue;
    const int64_t a = axis < 0 ? axis + table.dim() : axis;
    if (a >= 0 && a < table.dim() && table.size(a) > 0) bound = std::min(bound, table.size(a));
  }
  return bound == std::numeric_limits<int64_t>::max() ? 2 : bound;
}

// The value an integer one-element graph input is compared with (Equal)
// against a one-element integer constant, as a mode switch is (Silero VAD's
// `sr == 16000` selects the If branch for 16 kHz input): the model then runs
// the branch it takes for that value rather than the one a random 0 or 1
// selects. nullopt when no reader does so.
std::optional<int64_t> compared_constant(const Graph& g, int input) {
  const Tensor& t = g.tensors[size_t(input)];
  if (t.shape.element_count().value_or(0) != 1) return std::nullopt;
  for (int consumer : t.consumers) {
    const Node& node = g.nodes[size_t(consumer)];
    if (node.op_type != "Equal" || !node.domain.empty() || node.inputs.size() != 2) continue;
    const int other = node.inputs[0] == input ? node.inputs[1] : node.inputs[1] == input ? node.inputs[0] : -1;
    if (other < 0) continue;
    const Tensor& c = g.tensors[size_t(other)];
    if (c.is_constant() && c.has_int_values && c.int_values.size() == 1) return c.int_values[0];
  }
  return std::nullopt;
}

}  // namespace

std::vector<at::Tensor> Executor::make_inputs(uint64_t seed) const {
  const Graph& g = model_.graph;
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  std::vector<at::Tensor> inputs;
  inputs.reserve(g.inputs.size());
  for (int id : g.inputs) {
    const Tensor& t = g.tensors[size_t(id)];
    if (!t.shape.fully_known())
      throw Error(ErrorKind::Input,
                  "input " + t.name + " has unknown dims (" + t.shape.to_string() + "): bind with --input/--dim");
    const auto dims = known_dims(t.shape, "input " + t.name);
    const at::ScalarType type = scalar_type_of(t.dtype);
    at::Tensor x;
    if (at::isFloatingType(type)) {
      // N(0,1): never all zeros, which some kernels would run faster on.
      const bool own_dtype = options_.float_dtype == at::ScalarType::Undefined;
      x = at::randn(dims, gen, at::TensorOptions().dtype(at::kFloat))
              .to(own_dtype ? type : options_.float_dtype);
    } else if (type == at::kBool) {
      x = at::randint(0, 2, dims, gen, at::TensorOptions().dtype(at::kLong)).to(at::kBool);
    } else if (const auto value = compared_constant(g, id)) {
      x = at::full(dims, *value, at::TensorOptions().dtype(at::kLong)).to(type);
    } else {
      x = at::randint(0, integer_input_bound(g, id, weights_), dims, gen, at::TensorOptions().dtype(at::kLong))
              .to(type);
    }
    inputs.push_back(x.to(options_.device));
  }
  return inputs;
}

}  // namespace modelstat::profiler

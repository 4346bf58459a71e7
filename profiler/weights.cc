// WeightStore: every constant of the model (initializers and Constant node
// outputs, in the main graph and in subgraphs) as a tensor on the device.
// Where the bytes come from, in order: inline bytes kept by the loader; the
// stripped payload's byte range in the memory-mapped model file; the external
// data file (memory-mapped); and when the data is absent (a skeleton model),
// random values from the fixed seed, announced by one notice.
#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <map>
#include <memory>
#include <unordered_map>

#include "modelstat/error.hpp"
#include "profiler/executor.hpp"
#include "profiler/ops/exec_helpers.hpp"

namespace modelstat::profiler {

namespace {

using TensorsByGraph = std::unordered_map<const Graph*, std::vector<at::Tensor>>;

class Loader {
 public:
  Loader(const Model& model, const ExecOptions& options)
      : model_(model), options_(options), generator_(at::make_generator<at::CPUGeneratorImpl>(options.seed)) {}

  void load_graph(const Graph& g, std::vector<at::Tensor>& out) {
    out.assign(g.tensors.size(), at::Tensor());
    for (int t : g.initializers) {
      at::Tensor value = load(g.tensors[size_t(t)]);
      if (value.defined()) out[size_t(t)] = place(value);
    }
    for (const Node& node : g.nodes) {
      if (node.op_type == "Constant" && node.domain.empty() && node.outputs.size() == 1 && node.outputs[0] >= 0) {
        const int t = node.outputs[0];
        at::Tensor value = constant_node_value(node, g.tensors[size_t(t)]);
        if (value.defined()) out[size_t(t)] = place(value);
      }
    }
  }

  int64_t bytes_loaded = 0, randomised = 0;

 private:
  // The constant's values as a CPU tensor of its own dtype; a bad payload's
  // error names the tensor.
  at::Tensor load(const Tensor& t) {
    try {
      return load_bytes(t);
    } catch (const Error& e) {
      if (e.message().find("'" + t.name + "'") != std::string::npos) throw;  // already named
      throw Error(e.kind(), "constant '" + t.name + "': " + e.message(), e.file(), e.node(), e.op());
    }
  }

  at::Tensor load_bytes(const Tensor& t) {
    // Strings have no ATen type: left to whatever consumes them (nothing the
    // executor runs does).
    if (t.dtype == DType::String || t.dtype == DType::Undefined) return {};
    const auto dims = known_dims(t.shape, "constant '" + t.name + "'");
    at::Tensor value;
    if (t.data_location == DataLocation::External) {
      value = from_external(t, dims);
    } else if (const ConstantBytes& bytes = t.storage().bytes;
               t.data_location != DataLocation::ExternalMissing && !bytes.payload_unlocatable) {
      value = tensor_from_constant_bytes(bytes, t.dtype, dims, bytes.payload.empty() ? nullptr : model_file());
      if (!value.defined() && t.data_location == DataLocation::None && product(dims) == 0) {
        // A declared constant with no data and no elements is an empty tensor.
        // One with elements but no data (dims only: a skeleton's weight, or a
        // graph built in memory) is filled from the seed below, never left as
        // uninitialised memory.
        value = at::empty(dims, at::TensorOptions().dtype(scalar_type_of(t.dtype)));
      }
    }
    if (value.defined()) {
      bytes_loaded += value.nbytes();
      return value;
    }
    return random_fill(t.dtype, dims);
  }

  // Constant node: `value` (tensor) is in the output tensor's bytes; the
  // scalar/list attributes (opset 12+) are built here. value_string(s) and
  // sparse_value are left to the Constant executor (undefined here).
  at::Tensor constant_node_value(const Node& node, const Tensor& out) {
    if (node.attr("value")) return load(out);
    if (const auto* v = node.attr("value_float")) return at::scalar_tensor(std::get<double>(*v), at::kFloat);
    if (const auto* v = node.attr("value_int")) return at::scalar_tensor(std::get<int64_t>(*v), at::kLong);
    if (node.attr("value_floats")) {
      const auto values = attr_floats(node, "value_floats");
      return at::tensor(std::vector<float>(values.begin(), values.end()), at::kFloat);
    }
    if (node.attr("value_ints")) return at::tensor(node.attr_ints("value_ints"), at::kLong);
    return {};
  }

  at::Tensor from_external(const Tensor& t, const std::vector<int64_t>& dims) {
    const TensorStorage& where = t.storage();
    auto it = external_files_.find(where.external_path);
    if (it == external_files_.end())
      it = external_files_.emplace(where.external_path, std::make_unique<MappedFile>(where.external_path)).first;
    const MappedFile& file = *it->second;
    const int64_t length = where.external_length >= 0 ? where.external_length : t.size_bytes().value_or(0);
    if (where.external_offset < 0 || length < 0 || where.external_offset > file.size() ||
        length > file.size() - where.external_offset)
      throw Error(ErrorKind::Input, "external data of '" + t.name + "' runs past the end of '" + file.path() + "'",
                  file.path());
    at::Tensor value = tensor_from_raw(file.data() + where.external_offset, length, t.dtype, dims);
    file.release(where.external_offset, length);
    return value;
  }

  // Absent data (skeleton model): normal with std = 1/sqrt(fan_in) for
  // matrices and kernels (fan_in = elements per output row/channel), 0.02 for
  // vectors and scalars, so activations keep a realistic scale layer after
  // layer. Integer and bool constants are zeros: always valid as indices.
  at::Tensor random_fill(DType dtype, const std::vector<int64_t>& dims) {
    ++randomised;
    const at::ScalarType type = scalar_type_of(dtype);
    if (!at::isFloatingType(type)) return at::zeros(dims, at::TensorOptions().dtype(type));
    const int64_t numel = product(dims);
    double std = 0.02;
    if (dims.size() >= 2 && dims[0] > 0 && numel / dims[0] > 0) std = 1.0 / std::sqrt(double(numel / dims[0]));
    return (at::randn(dims, generator_, at::TensorOptions().dtype(at::kFloat)) * std).to(type);
  }

  at::Tensor place(const at::Tensor& cpu) const {
    at::Tensor t = cpu;
    // A run in one float dtype casts every float constant to it; a run in
    // the model's own dtypes (Undefined) keeps each as stored.
    const at::ScalarType run_dtype = options_.float_dtype;
    if (run_dtype != at::ScalarType::Undefined && at::isFloatingType(t.scalar_type()) &&
        t.scalar_type() != run_dtype)
      t = t.to(run_dtype);
    return t.to(options_.device);
  }

  const MappedFile* model_file() {
    if (!model_file_ && !model_.path.empty()) model_file_ = std::make_unique<MappedFile>(model_.path);
    return model_file_.get();
  }

  const Model& model_;
  const ExecOptions& options_;
  at::Generator generator_;
  std::unique_ptr<MappedFile> model_file_;
  std::map<std::string, std::unique_ptr<MappedFile>> external_files_;
};

void load_recursive(Loader& loader, const Graph& g, TensorsByGraph& out) {
  loader.load_graph(g, out[&g]);
  for (const Node& node : g.nodes)
    for (const auto& sub : node.subgraphs()) load_recursive(loader, *sub, out);
}

}  // namespace

struct WeightStore::Impl {
  TensorsByGraph by_graph;
};

WeightStore::WeightStore(const Model& model, const ExecOptions& options) : impl_(std::make_shared<Impl>()) {
  Loader loader(model, options);
  load_recursive(loader, model.graph, impl_->by_graph);
  bytes_loaded_ = loader.bytes_loaded;
  tensors_randomised_ = loader.randomised;
  if (tensors_randomised_)
    notices_.push_back(std::to_string(tensors_randomised_) +
                       " weight tensors absent (skeleton model): filled from seed " + std::to_string(options.seed));
}

const at::Tensor& WeightStore::get(const Graph* g, int t) const {
  // Undefined for anything that is not a loaded constant (activations, and
  // Constant nodes whose value only the Constant executor can build).
  static const at::Tensor undefined;
  auto it = impl_->by_graph.find(g);
  if (it == impl_->by_graph.end() || t < 0 || size_t(t) >= it->second.size()) return undefined;
  return it->second[size_t(t)];
}

void WeightStore::release(const Graph* g, int t) {
  auto it = impl_->by_graph.find(g);
  if (it != impl_->by_graph.end() && t >= 0 && size_t(t) < it->second.size()) it->second[size_t(t)] = at::Tensor();
}

}  // namespace modelstat::profiler

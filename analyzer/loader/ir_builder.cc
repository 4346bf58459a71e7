// onnx::GraphProto -> modelstat::Graph (the structural checks that come
// before shape inference are in graph_order.cc).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "analyzer/loader/loader.hpp"
#include "analyzer/loader/name_map.hpp"
#include "analyzer/loader/onnx_ir.hpp"
#include "analyzer/loader/shape_values.hpp"
#include "analyzer/loader/tensor_bytes.hpp"
#include "modelstat/error.hpp"
#include "modelstat/op_key.hpp"

namespace fs = std::filesystem;

namespace modelstat::loader {

namespace {

constexpr size_t kMaxIntValues = 1024;  // integer constants kept for shape math

}  // namespace

Shape shape_from_proto(const onnx::TensorShapeProto& shape) {
  Shape s;
  s.rank_known = true;
  s.dims.reserve(size_t(shape.dim_size()));
  for (const auto& d : shape.dim()) {
    Dim dim;
    if (d.has_dim_value()) {
      dim.value = d.dim_value();
      if (dim.value < 0) {
        dim.value = -1;  // inference leaves -1 for unknown in a few ops; never a real size
      }
    } else if (d.has_dim_param()) {
      dim.symbol = d.dim_param();
    }
    s.dims.push_back(std::move(dim));
  }
  return s;
}

namespace {

void type_into(const onnx::TypeProto& type, Tensor& t) {
  if (!type.has_tensor_type()) return;  // sequences, maps, optionals: dtype/shape unknown
  const auto& tt = type.tensor_type();
  t.dtype = DType(tt.elem_type());
  if (tt.has_shape()) t.shape = shape_from_proto(tt.shape());
}

// Validates an external-data location: relative, inside the model folder
// (also after following symlinks). Returns the resolved path.
std::string resolve_external(const std::string& location, const std::string& tensor_name, ExternalDataPolicy& policy,
                             bool* exists) {
  *exists = false;
  const fs::path loc(location);
  if (location.empty()) throw Error(ErrorKind::Input, "initializer '" + tensor_name + "' has external data with no location");
  if (loc.is_absolute() || loc.has_root_name() || loc.has_root_directory())
    throw Error(ErrorKind::Input, "external data location '" + location + "' of '" + tensor_name +
                                      "' is an absolute path: it escapes the model folder");
  const fs::path normal = loc.lexically_normal();
  if (!normal.empty() && (*normal.begin() == ".."))
    throw Error(ErrorKind::Input, "external data location '" + location + "' of '" + tensor_name +
                                      "' escapes the model folder");
  if (policy.base_dir.empty()) return normal.string();
  const fs::path base(policy.base_dir);
  const fs::path full = base / normal;
  std::error_code ec;
  if (fs::exists(full, ec)) {
    const fs::path real_base = fs::weakly_canonical(base, ec);
    const fs::path real = fs::weakly_canonical(full, ec);
    const auto rel = real.lexically_relative(real_base);
    if (rel.empty() || *rel.begin() == "..")
      throw Error(ErrorKind::Input, "external data location '" + location + "' of '" + tensor_name +
                                        "' resolves (through a link) outside the model folder");
    if (!fs::is_regular_file(real, ec))
      throw Error(ErrorKind::Input, "external data location '" + location + "' of '" + tensor_name +
                                        "' is not a regular file");
    *exists = true;
  }
  return full.string();
}

template <typename T>
void read_le_ints(const std::string& raw, size_t count, std::vector<int64_t>& out) {
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    T v;
    std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
    out.push_back(int64_t(v));
  }
}

// Raw bytes of a small embedded tensor (tensor_bytes.hpp), kept when they
// are as many as its dtype and dims claim.
void inline_bytes(const onnx::TensorProto& p, Tensor& t) {
  ConstantBytes& bytes = t.mutable_storage().bytes;
  std::string& out = bytes.inline_bytes;
  if (!tensor_proto_bytes(p, t.dtype, out)) return;
  const auto size = t.size_bytes();
  bytes.has_inline = size && int64_t(out.size()) == *size;
  if (!bytes.has_inline) out.clear();
}

// Fills dtype, shape, data location and small integer values from a TensorProto.
void tensor_meta(const onnx::TensorProto& p, Tensor& t, ExternalDataPolicy& policy) {
  t.dtype = DType(p.data_type());
  t.shape = Shape{};
  t.shape.rank_known = true;
  for (int64_t d : p.dims()) {
    if (d < 0)
      throw Error(ErrorKind::Input, "tensor '" + p.name() + "' has negative dim " + std::to_string(d));
    Dim dim;
    dim.value = d;
    t.shape.dims.push_back(dim);
  }
  (void)t.shape.element_count();  // throws on overflow
  for (const auto& e : p.external_data())
    if (e.key().rfind("modelstat.", 0) == 0)
      throw Error(ErrorKind::Input, "tensor '" + p.name() + "' carries the external_data key '" + e.key() +
                                        "', which is modelstat's own: no ONNX writer produces it (a crafted file?)");
  const StrippedTensor* stripped_entry = nullptr;
  if (policy.payloads) {
    auto it = policy.payloads->find(&p);
    if (it != policy.payloads->end()) stripped_entry = it->second;
  }
  const bool stripped = stripped_entry != nullptr;
  if (stripped) {
    t.mutable_storage().bytes.payload = stripped_entry->payload;
    t.mutable_storage().bytes.payload_unlocatable = stripped_entry->unpacked;
  }
  if (p.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto& e : p.external_data()) {
      if (e.key() == "location") location = e.value();
      if (e.key() == "offset") offset = std::strtoll(e.value().c_str(), nullptr, 10);
      if (e.key() == "length") length = std::strtoll(e.value().c_str(), nullptr, 10);
    }
    TensorStorage& storage = t.mutable_storage();
    storage.external_length = length;
    if (offset < 0 || (length < -1))
      throw Error(ErrorKind::Input, "external data of '" + p.name() + "' has a negative offset or length");
    bool exists = false;
    storage.external_path = resolve_external(location, p.name(), policy, &exists);
    storage.external_offset = offset;
    if (exists) {
      // The file's size only (stat), never its bytes: a short file is a
      // truncated download, caught here rather than by whoever reads it.
      const auto expected = t.size_bytes();
      const int64_t needed = length >= 0 ? length : expected.value_or(0);
      std::error_code ec;
      const auto file_size = int64_t(fs::file_size(storage.external_path, ec));
      int64_t end = 0;
      if (!ec && (__builtin_add_overflow(offset, needed, &end) || end > file_size))
        throw Error(ErrorKind::Input, "external data of '" + p.name() + "' (offset " + std::to_string(offset) +
                                          ", " + std::to_string(needed) + " bytes) runs past the end of '" +
                                          location + "' (" + std::to_string(file_size) + " bytes): truncated file");
    }
    t.data_location = exists ? DataLocation::External : DataLocation::ExternalMissing;
    if (!exists && !policy.base_dir.empty() && policy.reported_missing.insert(location).second) {
      policy.missing_files++;
      if (policy.notices)
        policy.notices->push_back("external data file '" + location +
                                  "' is absent: skeleton model, counting from dims only");
    }
  } else if (stripped || !p.raw_data().empty() || p.float_data_size() || p.int32_data_size() ||
             p.int64_data_size() || p.double_data_size() || p.uint64_data_size() || p.string_data_size()) {
    t.data_location = DataLocation::Embedded;
  }
  if (!stripped && t.data_location == DataLocation::Embedded) inline_bytes(p, t);
  // Small integer constants keep their values (Reshape targets, axes, pads...).
  const auto n = t.shape.element_count();
  if (!stripped && n && size_t(*n) <= kMaxIntValues && t.data_location == DataLocation::Embedded) {
    const size_t count = size_t(*n);
    if (t.dtype == DType::Int64) {
      if (p.raw_data().size() == count * 8) read_le_ints<int64_t>(p.raw_data(), count, t.int_values);
      else if (size_t(p.int64_data_size()) == count) t.int_values.assign(p.int64_data().begin(), p.int64_data().end());
    } else if (t.dtype == DType::Int32) {
      if (p.raw_data().size() == count * 4) read_le_ints<int32_t>(p.raw_data(), count, t.int_values);
      else if (size_t(p.int32_data_size()) == count) t.int_values.assign(p.int32_data().begin(), p.int32_data().end());
    }
    t.has_int_values = t.int_values.size() == count;
  }
}

AttrTensor attr_tensor(const onnx::TensorProto& p, ExternalDataPolicy& policy) {
  Tensor t;
  tensor_meta(p, t, policy);
  AttrTensor a;
  a.dtype = t.dtype;
  a.shape = t.shape;
  a.int_values = std::move(t.int_values);
  a.bytes = std::move(t.mutable_storage().bytes);
  return a;
}

AttrValue convert_attribute(const onnx::AttributeProto& a, ExternalDataPolicy& policy, int depth, const Scope* scope) {
  using A = onnx::AttributeProto;
  switch (a.type()) {
    case A::FLOAT: return double(a.f());
    case A::INT: return int64_t(a.i());
    case A::STRING: return a.s();
    case A::TENSOR: return attr_tensor(a.t(), policy);
    case A::GRAPH: return std::make_shared<Graph>(build_graph(a.g(), policy, depth + 1, scope));
    case A::FLOATS: return std::vector<double>(a.floats().begin(), a.floats().end());
    case A::INTS: return std::vector<int64_t>(a.ints().begin(), a.ints().end());
    case A::STRINGS: return std::vector<std::string>(a.strings().begin(), a.strings().end());
    case A::GRAPHS: {
      std::vector<std::shared_ptr<Graph>> gs;
      for (const auto& g : a.graphs()) gs.push_back(std::make_shared<Graph>(build_graph(g, policy, depth + 1, scope)));
      return gs;
    }
    case A::SPARSE_TENSOR: return attr_tensor(a.sparse_tensor().values(), policy);
    default: break;
  }
  // Old files without a type: infer it from which field is set.
  if (a.has_f()) return double(a.f());
  if (a.has_i()) return int64_t(a.i());
  if (a.has_s()) return a.s();
  if (a.has_t()) return attr_tensor(a.t(), policy);
  if (a.has_g()) return std::make_shared<Graph>(build_graph(a.g(), policy, depth + 1, scope));
  if (a.ints_size()) return std::vector<int64_t>(a.ints().begin(), a.ints().end());
  if (a.floats_size()) return std::vector<double>(a.floats().begin(), a.floats().end());
  return std::string();
}

}  // namespace

const Tensor* Scope::find(const std::string& name) const {
  for (const Scope* s = this; s; s = s->parent) {
    if (const int* id = s->index->find(name)) return &s->graph->tensors[size_t(*id)];
  }
  return nullptr;
}

namespace {

// One step down the message tree; nullptr when the field or index does not
// exist. Field numbers as in wire_strip.cc.
template <typename T>
const T* element(const google::protobuf::RepeatedPtrField<T>& field, uint32_t index) {
  return index < uint32_t(field.size()) ? &field.Get(int(index)) : nullptr;
}

const onnx::TensorProto* find_tensor(const onnx::ModelProto& model, const std::vector<PathStep>& path) {
  const onnx::GraphProto* graph = nullptr;
  const onnx::NodeProto* node = nullptr;
  const onnx::AttributeProto* attr = nullptr;
  const onnx::FunctionProto* function = nullptr;
  const onnx::TrainingInfoProto* training = nullptr;
  const onnx::SparseTensorProto* sparse = nullptr;
  const onnx::TensorProto* tensor = nullptr;
  bool at_model = true;
  for (const PathStep& s : path) {
    if (tensor) return nullptr;  // a tensor has no tensors below it
    const bool singular_ok = s.index == 0;
    if (at_model) {
      at_model = false;
      if (s.field == 7 && singular_ok && model.has_graph()) graph = &model.graph();
      else if (s.field == 20) training = element(model.training_info(), s.index);
      else if (s.field == 25) function = element(model.functions(), s.index);
      if (!graph && !training && !function) return nullptr;
    } else if (training) {
      graph = !singular_ok ? nullptr
              : s.field == 1 && training->has_initialization() ? &training->initialization()
              : s.field == 2 && training->has_algorithm()      ? &training->algorithm()
                                                               : nullptr;
      training = nullptr;
      if (!graph) return nullptr;
    } else if (graph) {
      node = s.field == 1 ? element(graph->node(), s.index) : nullptr;
      tensor = s.field == 5 ? element(graph->initializer(), s.index) : nullptr;
      sparse = s.field == 15 ? element(graph->sparse_initializer(), s.index) : nullptr;
      graph = nullptr;
      if (!node && !tensor && !sparse) return nullptr;
    } else if (function) {
      node = s.field == 7 ? element(function->node(), s.index) : nullptr;
      function = nullptr;
      if (!node) return nullptr;
    } else if (node) {
      attr = s.field == 5 ? element(node->attribute(), s.index) : nullptr;
      node = nullptr;
      if (!attr) return nullptr;
    } else if (attr) {
      if (s.field == 5 && singular_ok && attr->has_t()) tensor = &attr->t();
      else if (s.field == 10) tensor = element(attr->tensors(), s.index);
      else if (s.field == 6 && singular_ok && attr->has_g()) graph = &attr->g();
      else if (s.field == 11) graph = element(attr->graphs(), s.index);
      else if (s.field == 22 && singular_ok && attr->has_sparse_tensor()) sparse = &attr->sparse_tensor();
      else if (s.field == 23) sparse = element(attr->sparse_tensors(), s.index);
      attr = nullptr;
      if (!tensor && !graph && !sparse) return nullptr;
    } else if (sparse) {
      tensor = !singular_ok ? nullptr
               : s.field == 1 && sparse->has_values()  ? &sparse->values()
               : s.field == 2 && sparse->has_indices() ? &sparse->indices()
                                                       : nullptr;
      sparse = nullptr;
      if (!tensor) return nullptr;
    } else {
      return nullptr;
    }
  }
  return tensor;
}

}  // namespace

PayloadTable bind_payload_table(const onnx::ModelProto& model, const std::vector<StrippedTensor>& tensors) {
  PayloadTable table;
  table.reserve(tensors.size());
  for (const auto& t : tensors) {
    const onnx::TensorProto* p = find_tensor(model, t.path);
    if (!p || !table.emplace(p, &t).second)
      throw Error(ErrorKind::Input, "not a valid ONNX file: a stripped tensor's position does not survive parsing");
  }
  return table;
}

namespace {

// A scalar integer/bool value evaluated at load time, if `name` has one.
std::optional<int64_t> scalar_value(const std::unordered_map<std::string, ConstValue>& values, const std::string& name) {
  auto it = values.find(name);
  if (name.empty() || it == values.end() || it->second.values.size() != 1 || is_real_type(it->second.elem_type))
    return std::nullopt;
  return it->second.values[0];
}

// What one run of an If / Loop executes, when it is known before running:
// what a run observed first (the count follows what ran), then the user's
// --branch / --trip-count, then a condition or count the loader can
// evaluate (a constant, or shape arithmetic on bound inputs).
void decide_control_flow(const onnx::NodeProto& np, const std::unordered_map<std::string, ConstValue>& values,
                         ExternalDataPolicy& policy, Node& node) {
  static const char* const kObserved = "observed at run time";
  if (np.op_type() == "If") {
    if (policy.observed_branches)
      if (auto it = policy.observed_branches->find(node.name); it != policy.observed_branches->end()) {
        if (policy.branches && policy.branches->count(node.name)) policy.control_names_used.insert(node.name);
        node.if_branch = it->second ? 0 : 1;
        node.control_source = kObserved;
        return;
      }
    if (policy.branches) {
      auto it = policy.branches->find(node.name);
      if (it != policy.branches->end()) {
        policy.control_names_used.insert(node.name);
        node.if_branch = it->second ? 0 : 1;
        node.control_source = "--branch";
        return;
      }
    }
    if (np.input_size() >= 1)
      if (auto cond = scalar_value(values, np.input(0))) {
        node.if_branch = *cond != 0 ? 0 : 1;
        node.control_source = "condition known before running";
      }
    return;
  }
  // Loop(M, cond, ...): M trips at most, fewer if cond turns false (only a
  // cond that is false before the first trip is known here: 0 trips).
  if (policy.observed_trip_counts)
    if (auto it = policy.observed_trip_counts->find(node.name); it != policy.observed_trip_counts->end()) {
      if (policy.trip_counts && policy.trip_counts->count(node.name)) policy.control_names_used.insert(node.name);
      node.trip_count = it->second;
      node.control_source = kObserved;
      return;
    }
  if (policy.trip_counts) {
    auto it = policy.trip_counts->find(node.name);
    if (it != policy.trip_counts->end()) {
      policy.control_names_used.insert(node.name);
      node.trip_count = it->second;
      node.control_source = "--trip-count";
      return;
    }
  }
  if (np.input_size() >= 2)
    if (auto cond = scalar_value(values, np.input(1)); cond && *cond == 0) {
      node.trip_count = 0;
      node.control_source = "condition false before the first trip";
      return;
    }
  if (np.input_size() >= 1)
    if (auto m = scalar_value(values, np.input(0)); m && *m >= 0) {
      node.trip_count = *m;
      node.control_source = "trip count known before running";
    }
}

}  // namespace

Graph build_graph(const onnx::GraphProto& gp, ExternalDataPolicy& policy, int depth, const Scope* outer,
                  const InferredTypes* inferred) {
  if (depth > kMaxGraphDepth) throw Error(ErrorKind::Input, "subgraphs nested more than 64 levels deep");
  Graph g;
  g.name = gp.name();
  size_t node_outputs = 0;
  for (const auto& np : gp.node()) node_outputs += size_t(np.output_size());
  g.tensors.reserve(size_t(gp.initializer_size() + gp.input_size()) + node_outputs);
  const size_t n_inferred = inferred ? inferred->size() : 0;
  // By view into the proto's strings, which outlive the build.
  NameMap<int> index(node_outputs + size_t(gp.input_size() + gp.initializer_size()));
  auto add = [&](const std::string& name) -> Tensor& {
    auto [id, inserted] = index.try_emplace(name, int(g.tensors.size()));
    if (inserted) {
      g.tensors.emplace_back();
      g.tensors.back().name = name;
    }
    return g.tensors[size_t(*id)];
  };
  // A name this graph does not define comes from an enclosing scope (checked
  // by check_and_order_graph): known dtype and shape, but not a constant of
  // this graph (its params are counted where it is defined).
  auto find_or_import = [&](const std::string& name, uint32_t h) -> int {
    if (const int* id = index.find(name, h)) return *id;
    const Tensor* source = outer ? outer->find(name) : nullptr;
    Tensor& t = add(name);
    t.role = TensorRole::Input;
    if (source) {
      t.dtype = source->dtype;
      t.shape = source->shape;
    }
    g.outer_scope_inputs.push_back(name);
    return *index.find(name, h);
  };

  for (const auto& init : gp.initializer()) {
    Tensor& t = add(init.name());
    t.role = TensorRole::Initializer;
    tensor_meta(init, t, policy);
    g.initializers.push_back(index[init.name()]);
  }
  for (const auto& sp : gp.sparse_initializer()) {
    Tensor& t = add(sp.values().name());
    t.role = TensorRole::Initializer;
    tensor_meta(sp.values(), t, policy);
    t.shape = Shape{true, {}};
    for (int64_t d : sp.dims()) t.shape.dims.push_back(Dim{d < 0 ? -1 : d, {}});
    g.initializers.push_back(index[sp.values().name()]);
  }
  for (const auto& in : gp.input()) {
    const bool is_init = index.contains(in.name());
    Tensor& t = add(in.name());
    if (is_init) continue;  // IR<4 style: initializers listed as inputs too
    t.role = TensorRole::Input;
    type_into(in.type(), t);
    g.inputs.push_back(index[in.name()]);
  }
  // Inferred (and declared) types of intermediate values and outputs: the
  // tensors are created here, their producers fill in the rest below. The
  // graph's own value_info first, then what inference kept beside it (in the
  // order it would have appended them to value_info).
  auto declare = [&](const std::string& name, const onnx::TypeProto& type) {
    auto [id, inserted] = index.try_emplace(name, int(g.tensors.size()));
    if (!inserted) return;
    g.tensors.emplace_back();
    g.tensors.back().name = name;
    type_into(type, g.tensors.back());
  };
  for (int k = 0; k < gp.value_info_size(); ++k) {
    if (k + kPrefetchAhead < gp.value_info_size()) index.prefetch(gp.value_info(k + kPrefetchAhead).name());
    declare(gp.value_info(k).name(), gp.value_info(k).type());
  }
  for (size_t k = 0; k < n_inferred; ++k) {
    if (k + kPrefetchAhead < n_inferred) index.prefetch(*(*inferred)[k + kPrefetchAhead].name);
    const InferredType& e = (*inferred)[k];
    if (e.type) {
      declare(*e.name, *e.type);
      continue;
    }
    // An own shape rule's type: what type_into reads from the TypeProto it
    // stands for (every dim known).
    auto [id, inserted] = index.try_emplace(*e.name, int(g.tensors.size()));
    if (!inserted) continue;
    Tensor& t = g.tensors.emplace_back();
    t.name = *e.name;
    t.dtype = DType(e.own[0]);
    t.shape.rank_known = true;
    t.shape.dims.resize(size_t(e.own[1]));
    for (size_t d = 0; d < t.shape.dims.size(); ++d) t.shape.dims[d].value = e.own[2 + d];
  }
  for (const auto& vi : gp.output()) {
    const int* id = index.find(vi.name());
    if (!id) {
      type_into(vi.type(), add(vi.name()));
    } else if (!g.tensors[size_t(*id)].shape.fully_known() && vi.type().has_tensor_type() &&
               vi.type().tensor_type().has_shape()) {
      // A value_info entry inference left stale while it sized the output itself.
      Tensor probe;
      type_into(vi.type(), probe);
      if (probe.shape.fully_known()) g.tensors[size_t(*id)].shape = probe.shape;
    }
  }

  // The integer values evaluable in this graph, for If conditions and Loop
  // trip counts (only when it has such a node: a 100k-node graph without
  // control flow pays nothing).
  // Subgraphs read this graph's values (and the enclosing graphs') by name:
  // `known` is what they see.
  std::unordered_map<std::string, ConstValue> values;
  ScopeValues known;
  const ScopeValues* outer_values = outer ? outer->values : nullptr;
  const ScopeValues* scope_values = outer_values;
  for (const auto& np : gp.node())
    if (const std::string_view op = np.op_type(); np.domain().empty() && (op == "If" || op == "Loop" || op == "Scan")) {
      values = evaluate_const_values(gp, outer_values, &known, inferred);
      scope_values = &known;
      break;
    }

  g.nodes.reserve(size_t(gp.node_size()));
  // The hashes of the inputs, then the outputs, of nodes i .. i + kPrefetchAhead.
  PrefetchedHashes ahead;
  auto push_names = [&](const onnx::NodeProto& n) {
    for (const auto& in : n.input()) ahead.push(index, in);
    for (const auto& out : n.output()) ahead.push(index, out);
  };
  for (int i = 0; i < std::min(gp.node_size(), kPrefetchAhead); ++i) push_names(gp.node(i));
  for (int i = 0; i < gp.node_size(); ++i) {
    const auto& np = gp.node(i);
    if (i + kPrefetchAhead < gp.node_size()) push_names(gp.node(i + kPrefetchAhead));
    // Built in place: a Node is 240 bytes, and a move of each into the
    // vector touched both copies.
    Node& node = g.nodes.emplace_back();
    node.name = node_label(np, i);
    // As string_views: a length check first, inline (a 100k-node graph makes these tests 100k times).
    if (const std::string_view op = np.op_type(); np.domain().empty() && (op == "If" || op == "Loop"))
      decide_control_flow(np, values, policy, node);
    node.op_type = np.op_type();
    node.domain = normalize_domain(np.domain());
    const bool is_constant = node.domain.empty() && std::string_view(node.op_type) == "Constant";
    node.inputs.reserve(size_t(np.input_size()));
    node.outputs.reserve(size_t(np.output_size()));
    for (const auto& in : np.input()) {
      const uint32_t h = ahead.pop();
      if (in.empty()) {
        node.inputs.push_back(-1);
        continue;
      }
      const int id = find_or_import(in, h);
      node.inputs.push_back(id);
      g.tensors[size_t(id)].consumers.push_back(i);  // 4 inline: no heap block below 5 readers
    }
    if (np.attribute_size()) {
      const Scope scope{&index, &g, outer, scope_values};
      for (const auto& a : np.attribute()) node.attributes[a.name()] = convert_attribute(a, policy, depth, &scope);
      // What the subgraphs read from outside is read by this node.
      for (const auto& sub : node.subgraphs()) {
        for (const auto& name : sub->outer_scope_inputs) {
          auto& consumers = g.tensors[size_t(find_or_import(name, NameMap<int>::hash_of(name)))].consumers;
          if (consumers.empty() || consumers.back() != i) consumers.push_back(i);
        }
      }
    }
    for (const auto& out : np.output()) {
      const uint32_t h = ahead.pop();
      if (out.empty()) {
        node.outputs.push_back(-1);
        continue;
      }
      auto [id, inserted] = index.try_emplace(out, h, int(g.tensors.size()));
      if (inserted) {
        g.tensors.emplace_back();
        g.tensors.back().name = out;
      }
      Tensor& t = g.tensors[size_t(*id)];
      t.producer = i;
      t.role = is_constant ? TensorRole::Constant : TensorRole::Activation;
      node.outputs.push_back(*id);
    }
    // A Constant's tensor: dtype, shape and data location come from its attribute.
    if (is_constant && np.output_size() == 1) {
      Tensor& t = g.tensors[size_t(node.outputs[0])];
      for (const auto& a : np.attribute()) {
        if (a.name() == "value" && a.has_t()) {
          const std::string keep_name = t.name;
          tensor_meta(a.t(), t, policy);
          t.name = keep_name;
        }
      }
    }
  }
  for (const auto& out : gp.output()) {
    const int* id = index.find(out.name());
    if (!id) throw Error(ErrorKind::Input, "graph output '" + out.name() + "' is never produced");
    g.outputs.push_back(*id);
  }
  return g;
}

}  // namespace modelstat::loader

// Reading an ONNX test case (verify_case_files.hpp): the model's declared
// values, the numbered test-data files, and each TensorProto checked against
// the bytes it carries before anything of its claimed size is allocated.
#include "profiler/verify_case_files.hpp"

#include <algorithm>
#include <set>
#include <fstream>
#include <sstream>

#include "analyzer/loader/tensor_bytes.hpp"
#include "modelstat/error.hpp"
#include "profiler/ops/exec_helpers.hpp"
#include "profiler/ops/exec_rule.hpp"

namespace modelstat::profiler {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::Input, "cannot read the file", path.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

onnx::ModelProto read_model(const fs::path& path) {
  const fs::path dir = path.parent_path();
  if (!fs::is_directory(dir))
    throw Error(ErrorKind::Input, "not a folder (an ONNX test case is a folder with model.onnx and test_data_set_N/)",
                dir.string());
  if (!fs::exists(path))
    throw Error(ErrorKind::Input, "missing (an ONNX test case folder holds model.onnx and test_data_set_N/)",
                path.string());
  onnx::ModelProto model;
  if (!model.ParseFromString(read_file(path)))
    throw Error(ErrorKind::Input, "not an ONNX model (the protobuf does not parse)", path.string());
  return model;
}

namespace {

int64_t opset_of(const onnx::ModelProto& model, const std::string& domain) {
  for (const auto& o : model.opset_import())
    if (normalize_domain(o.domain()) == domain) return o.version();
  return 0;
}

std::string dims_text(const std::vector<int64_t>& dims) {
  if (dims.empty()) return "scalar";
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s;
}

// The typed field a TensorProto of this dtype keeps its values in (onnx.proto:
// "For ... values must be stored in ..."), and the values per element.
struct TypedField {
  const char* name;
  int size;
  int per_element;
};
TypedField typed_field(const onnx::TensorProto& p, DType dtype) {
  switch (dtype) {
    case DType::Float: return {"float_data", p.float_data_size(), 1};
    case DType::Complex64: return {"float_data", p.float_data_size(), 2};
    case DType::Double: return {"double_data", p.double_data_size(), 1};
    case DType::Complex128: return {"double_data", p.double_data_size(), 2};
    case DType::Int64: return {"int64_data", p.int64_data_size(), 1};
    case DType::UInt32:
    case DType::UInt64: return {"uint64_data", p.uint64_data_size(), 1};
    default: return {"int32_data", p.int32_data_size(), 1};  // 8/16/32-bit ints, bool, float16, bfloat16
  }
}

// The header of a TensorProto checked against the bytes it carries, before
// anything of the claimed size is allocated: a known numeric dtype, dims >= 0
// whose element count and byte size fit in 64 bits (overflow-checked), and
// raw_data (or the typed field of the dtype) holding exactly that many.
// Throws Error(Input) naming `path`; returns the element count.
int64_t check_tensor_header(const onnx::TensorProto& p, const fs::path& path) {
  const std::string file = path.string();
  if (!onnx::TensorProto::DataType_IsValid(p.data_type()) || p.data_type() == onnx::TensorProto::UNDEFINED)
    throw Error(ErrorKind::Input, "unknown data_type " + std::to_string(p.data_type()), file);
  const DType dtype = DType(p.data_type());
  if (dtype == DType::String)
    throw Error(ErrorKind::CannotRun, "a string tensor: the executor runs numeric tensors only", file);
  const int64_t element = dtype_size_bytes(dtype);
  if (element == 0) throw Error(ErrorKind::Input, std::string("data type ") + dtype_name(dtype) + " is not supported", file);
  if (p.data_location() == onnx::TensorProto::EXTERNAL || p.external_data_size() > 0)
    throw Error(ErrorKind::Input, "external data in test data is not supported", file);
  if (p.has_segment()) throw Error(ErrorKind::Input, "segmented tensors are not supported", file);
  int64_t count = 1;
  for (int k = 0; k < p.dims_size(); ++k) {
    if (p.dims(k) < 0)
      throw Error(ErrorKind::Input, "dim " + std::to_string(k) + " is " + std::to_string(p.dims(k)) + " (dims are >= 0)",
                  file);
    if (__builtin_mul_overflow(count, p.dims(k), &count))
      throw Error(ErrorKind::Input, "dims " + dims_text({p.dims().begin(), p.dims().end()}) +
                                        " claim more than 2^63 elements", file);
  }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(count, element, &bytes))
    throw Error(ErrorKind::Input, "dims " + dims_text({p.dims().begin(), p.dims().end()}) + " of " +
                                      dtype_name(dtype) + " claim more than 2^63 bytes", file);
  const std::string claim = std::string(dtype_name(dtype)) + " " + dims_text({p.dims().begin(), p.dims().end()}) +
                            " (" + std::to_string(count) + " elements, " + std::to_string(bytes) + " bytes)";
  if (p.has_raw_data()) {
    if (int64_t(p.raw_data().size()) != bytes)
      throw Error(ErrorKind::Input,
                  "raw_data holds " + std::to_string(p.raw_data().size()) + " bytes; its header claims " + claim, file);
    return count;
  }
  const TypedField field = typed_field(p, dtype);
  const int others = p.float_data_size() + p.double_data_size() + p.int64_data_size() + p.uint64_data_size() +
                     p.int32_data_size() - field.size;
  if (others > 0)
    throw Error(ErrorKind::Input, std::string("values are not in ") + field.name + ", the field for " +
                                      dtype_name(dtype) + " (onnx.proto)", file);
  if (int64_t(field.size) != count * field.per_element)
    throw Error(ErrorKind::Input, std::string(field.name) + " holds " + std::to_string(field.size) +
                                      " values; its header claims " + claim, file);
  return count;
}

// A TensorProto (raw_data or any typed field) as a CPU tensor of its dtype,
// once check_tensor_header has found the bytes for it.
at::Tensor tensor_from_proto(const onnx::TensorProto& p) {
  const DType dtype = DType(p.data_type());
  std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  std::string raw;
  loader::tensor_proto_bytes(p, dtype, raw);  // empty for a tensor of no elements
  return tensor_from_raw(raw.data(), int64_t(raw.size()), dtype, dims);
}

// The dims a value declares, -1 for a symbolic or absent dim; nullopt when
// the rank is not declared.
std::optional<std::vector<int64_t>> declared_dims(const onnx::ValueInfoProto& v) {
  if (!v.type().tensor_type().has_shape()) return std::nullopt;
  std::vector<int64_t> dims;
  for (const auto& d : v.type().tensor_type().shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return dims;
}

}  // namespace

// A test-data file read as the tensor of graph value `v` ("input 'x'"):
// dtype and dims must be the ones the model declares (bfloat16 may come as
// uint16 bit patterns, as ONNX 1.12 writes them).
at::Tensor read_tensor(const fs::path& path, const onnx::ValueInfoProto& v, const std::string& what) {
  return read_case_tensor(read_file(path), path.string(), v, what);
}


at::Tensor read_case_tensor(const std::string& bytes, const std::string& file, const onnx::ValueInfoProto& v,
                            const std::string& what) {
  const fs::path path(file);
  onnx::TensorProto p;
  if (!p.ParseFromString(bytes))
    throw Error(ErrorKind::Input, "not a TensorProto (the protobuf does not parse)", path.string());
  check_tensor_header(p, path);
  const int declared = v.type().tensor_type().elem_type();
  const bool bfloat16_bits = declared == onnx::TensorProto::BFLOAT16 && p.data_type() == onnx::TensorProto::UINT16;
  if (declared != onnx::TensorProto::UNDEFINED && declared != p.data_type() && !bfloat16_bits)
    throw Error(ErrorKind::Input,
                std::string("holds ") + dtype_name(DType(p.data_type())) + ", the model's " + what + " is " +
                    (onnx::TensorProto::DataType_IsValid(declared) ? dtype_name(DType(declared)) : "of an unknown type"),
                path.string());
  const std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  if (const auto want = declared_dims(v)) {
    bool agree = want->size() == dims.size();
    for (size_t k = 0; agree && k < dims.size(); ++k) agree = (*want)[k] < 0 || (*want)[k] == dims[k];
    if (!agree) {
      std::string text;
      for (size_t k = 0; k < want->size(); ++k) text += (k ? "x" : "") + ((*want)[k] < 0 ? "?" : std::to_string((*want)[k]));
      throw Error(ErrorKind::Input,
                  "dims " + dims_text(dims) + " disagree with the model's " + what + " (" +
                      (want->empty() ? "scalar" : text) + ")",
                  path.string());
    }
  }
  return tensor_from_proto(p);
}

// The files input_0.pb .. input_{n-1}.pb (prefix "input") of a data set, in
// index order, each for one of the model's `values`: a missing index, an index
// with no value and a misnamed file ("input_01.pb", "input_x.pb") are errors
// naming the file.
std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix,
                               const std::vector<const onnx::ValueInfoProto*>& values) {
  auto names = [&] {
    std::string list;
    for (const auto* v : values) list += (list.empty() ? "" : ", ") + v->name();
    return std::to_string(values.size()) + " graph " + prefix + (values.size() == 1 ? "" : "s") +
           (values.empty() ? "" : " (" + list + ")");
  };
  std::vector<bool> present(values.size(), false);
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix + "_", 0) != 0 || e.path().extension() != ".pb") continue;
    const std::string index = name.substr(prefix.size() + 1, name.size() - prefix.size() - 4);
    const bool canonical = !index.empty() && index.size() < 10 && index.find_first_not_of("0123456789") == std::string::npos &&
                           std::to_string(std::stoll(index)) == index;
    if (!canonical)
      throw Error(ErrorKind::Input, "not a numbered " + prefix + " file (" + prefix + "_0.pb, " + prefix + "_1.pb, ...)",
                  e.path().string());
    const auto k = size_t(std::stoll(index));
    if (k >= values.size())
      throw Error(ErrorKind::Input, "has no graph " + prefix + " to feed: the model has " + names(), e.path().string());
    present[k] = true;
  }
  std::vector<fs::path> files;
  for (size_t k = 0; k < values.size(); ++k) {
    const fs::path f = dir / (prefix + "_" + std::to_string(k) + ".pb");
    if (!present[k]) throw Error(ErrorKind::Input, "missing: the model has " + names(), f.string());
    files.push_back(f);
  }
  return files;
}

std::vector<fs::path> data_sets(const fs::path& case_dir) {
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(case_dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  return sets;
}

// ONNX 1.12's test data stores bfloat16 values as uint16 bit patterns (its
// numpy has no bfloat16): reinterpret them when the model declares bfloat16.
at::Tensor as_declared(const at::Tensor& t, const onnx::ValueInfoProto& v) {
  if (v.type().tensor_type().elem_type() != onnx::TensorProto::BFLOAT16 || t.scalar_type() != at::kInt) return t;
  return t.to(at::kShort).view(at::kBFloat16);  // the low 16 bits are the pattern
}

bool is_tensor_value(const onnx::ValueInfoProto& v) {
  return !v.has_type() || v.type().value_case() == onnx::TypeProto::kTensorType;
}

namespace {

// Ops of `graph` and its subgraphs (If, Loop, Scan bodies) without an executor,
// and the non-tensor values its subgraphs pass (a Loop carrying a sequence).
void graph_unsupported(const onnx::ModelProto& model, const onnx::GraphProto& graph, bool subgraph,
                       std::set<std::string>& missing) {
  for (const auto& node : graph.node()) {
    for (const auto& a : node.attribute()) {
      if (a.has_g()) graph_unsupported(model, a.g(), true, missing);
      for (const auto& g : a.graphs()) graph_unsupported(model, g, true, missing);
    }
    const std::string domain = normalize_domain(node.domain());
    if (find_executor(domain, node.op_type(), opset_of(model, domain))) continue;
    // A Constant needs no executor when its value is a tensor or number the
    // weight store builds (value_string(s) and sparse_value are not).
    if (node.op_type() == "Constant" && domain.empty() && node.attribute_size() == 1) {
      const std::string& a = node.attribute(0).name();
      if (a == "value" || a == "value_float" || a == "value_floats" || a == "value_int" || a == "value_ints") continue;
    }
    missing.insert(domain.empty() ? node.op_type() : domain + "." + node.op_type());
  }
  // Values the executor cannot hold: sequences, optionals, maps, strings.
  std::vector<const onnx::ValueInfoProto*> values;
  for (const auto& v : graph.input()) values.push_back(&v);
  for (const auto& v : graph.output()) values.push_back(&v);
  for (const auto* v : values) {
    // A subgraph value often carries an empty TypeProto (no kind at all): its
    // type is left to inference, not declared as a sequence or optional.
    if (subgraph && v->type().value_case() == onnx::TypeProto::VALUE_NOT_SET) continue;
    const std::string where = subgraph ? " (subgraph '" + graph.name() + "')" : "";
    if (!is_tensor_value(*v)) missing.insert("non-tensor value '" + v->name() + "'" + where);
    else if (v->type().tensor_type().elem_type() == onnx::TensorProto::STRING)
      missing.insert("string value '" + v->name() + "'" + where);
  }
}

}  // namespace

std::vector<std::string> case_unsupported_ops(const std::string& case_dir) {
  return unsupported_in(read_model(fs::path(case_dir) / "model.onnx"));
}

std::vector<std::string> unsupported_in(const onnx::ModelProto& model) {
  std::set<std::string> missing;
  graph_unsupported(model, model.graph(), false, missing);
  return std::vector<std::string>(missing.begin(), missing.end());
}

}  // namespace modelstat::profiler

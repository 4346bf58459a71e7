#include "profiler/verify.hpp"

// The profiler target does not carry ONNX's CMake compile definitions (only
// the analyzer links ONNX directly); these are the values ONNX's package
// exports, so the generated protobuf classes match the library's.
#ifndef ONNX_NAMESPACE
#define ONNX_NAMESPACE onnx
#endif
#ifndef ONNX_ML
#define ONNX_ML 1
#endif
#include <onnx/onnx_pb.h>

#include <c10/util/Exception.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <new>
#include <optional>
#include <set>
#include <sstream>

#include "modelstat/analysis.hpp"
#include "modelstat/error.hpp"
#include "profiler/executor.hpp"
#include "profiler/ops/exec_helpers.hpp"
#include "profiler/ops/exec_rule.hpp"

namespace modelstat::profiler {

namespace fs = std::filesystem;

namespace {

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

int64_t opset_of(const onnx::ModelProto& model, const std::string& domain) {
  for (const auto& o : model.opset_import())
    if (normalize_domain(o.domain()) == domain) return o.version();
  return 0;
}

template <typename Field, typename T>
void append_as(std::string& out, const Field& values) {
  for (const auto& v : values) {
    const T x = static_cast<T>(v);
    out.append(reinterpret_cast<const char*>(&x), sizeof(T));
  }
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
  if (p.has_raw_data()) {
    raw = p.raw_data();
  } else if (p.float_data_size()) {
    append_as<decltype(p.float_data()), float>(raw, p.float_data());
  } else if (p.double_data_size()) {
    append_as<decltype(p.double_data()), double>(raw, p.double_data());
  } else if (p.int64_data_size()) {
    append_as<decltype(p.int64_data()), int64_t>(raw, p.int64_data());
  } else if (p.uint64_data_size()) {
    if (dtype == DType::UInt32) append_as<decltype(p.uint64_data()), uint32_t>(raw, p.uint64_data());
    else append_as<decltype(p.uint64_data()), uint64_t>(raw, p.uint64_data());
  } else if (p.int32_data_size()) {
    // 8/16-bit types, bool, float16 and bfloat16 travel as int32 values / bit patterns.
    switch (dtype_size_bytes(dtype)) {
      case 1: append_as<decltype(p.int32_data()), uint8_t>(raw, p.int32_data()); break;
      case 2: append_as<decltype(p.int32_data()), uint16_t>(raw, p.int32_data()); break;
      default: append_as<decltype(p.int32_data()), int32_t>(raw, p.int32_data()); break;
    }
  }
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

// A test-data file read as the tensor of graph value `v` ("input 'x'"):
// dtype and dims must be the ones the model declares (bfloat16 may come as
// uint16 bit patterns, as ONNX 1.12 writes them).
at::Tensor read_tensor(const fs::path& path, const onnx::ValueInfoProto& v, const std::string& what) {
  return read_case_tensor(read_file(path), path.string(), v, what);
}

}  // namespace

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

namespace {

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

// The floor of the relative difference's denominator (the smallest normal
// float): only matched NaN/inf elements, whose difference is 0, can reach it.
constexpr double kTiny = 1.17549435082228750797e-38;  // FLT_MIN

struct Comparison {
  int64_t mismatches = 0;  // elements outside the tolerance (all of them on a shape or type mismatch)
  double norm_rel = 0.0;   // ||actual - expected||_2 / ||expected||_2 (inf on a shape or type mismatch)
};

double norm_rel_error(const at::Tensor& actual, const at::Tensor& expected) {
  const at::Tensor a = actual.to(at::kCPU).to(at::kDouble), e = expected.to(at::kDouble);
  const at::Tensor d = at::nan_to_num(a - e, 0.0, 0.0, 0.0);
  const double norm_expected = at::nan_to_num(e, 0.0, 0.0, 0.0).norm().item<double>();
  return d.norm().item<double>() / std::max(norm_expected, 1.17549435082228750797e-38);
}

// Compares one output, writes one line for it (pass or not: its max abs diff,
// max rel diff, norm-wise relative error and the count outside the
// tolerance), and returns the number of mismatching elements.
Comparison compare(const at::Tensor& actual_in, const at::Tensor& expected, const std::string& what,
                   const Tolerance& options, std::ostream& report) {
  const at::Tensor actual = actual_in.to(at::kCPU);
  if (actual.sizes() != expected.sizes()) {
    report << what << ": MISMATCH: shape " << actual.sizes() << ", expected " << expected.sizes() << "\n";
    return {std::max<int64_t>(expected.numel(), 1), std::numeric_limits<double>::infinity()};
  }
  if (expected.numel() == 0) {
    report << what << ": pass (empty)\n";
    return {};
  }
  const bool exact = !at::isFloatingType(expected.scalar_type()) && !at::isComplexType(expected.scalar_type());
  if (exact) {
    if (at::isFloatingType(actual.scalar_type())) {
      report << what << ": MISMATCH: " << actual.scalar_type() << " output, expected " << expected.scalar_type()
             << "\n";
      return {expected.numel(), std::numeric_limits<double>::infinity()};
    }
    const at::Tensor differ = actual.to(at::kLong) != expected.to(at::kLong);
    const int64_t count = differ.sum().item<int64_t>();
    const at::Tensor diff = (actual.to(at::kDouble) - expected.to(at::kDouble)).abs();
    report << what << ": " << (count ? "MISMATCH" : "pass") << ": " << count << " of " << expected.numel()
           << " elements differ (exact comparison, " << expected.scalar_type() << "), max abs diff "
           << diff.max().item<double>() << "\n";
    return {count, norm_rel_error(actual, expected)};
  }
  const at::Tensor a = actual.to(at::kDouble), e = expected.to(at::kDouble);
  const at::Tensor both_nan = at::isnan(a) & at::isnan(e);
  const at::Tensor same_inf = at::isinf(e) & (a == e);
  const at::Tensor diff = (a - e).abs();
  // The pass criterion (numpy.testing.assert_allclose): elementwise.
  const at::Tensor close = (diff <= options.atol + options.rtol * e.abs()) | both_nan | same_inf;
  const int64_t count = (~close).sum().item<int64_t>();
  // Diagnostics: matching NaN / inf count as 0 difference, any other
  // non-finite difference (NaN against a number, inf against a number) as inf.
  const at::Tensor matched = both_nan | same_inf;
  at::Tensor d = at::where(matched, at::zeros_like(diff), diff);
  d = at::where(at::isnan(d), at::full_like(d, std::numeric_limits<double>::infinity()), d);
  // Relative difference where it means something: over elements whose
  // |expected| exceeds atol (at or below it, atol judges them; an expected 0
  // gave a ratio of 1e+29 that said nothing).
  const at::Tensor scale = at::where(matched, at::ones_like(e), e.abs()).clamp_min(kTiny);
  const at::Tensor relative = (e.abs() > options.atol) | matched;
  const at::Tensor rel = at::where(relative, d / scale, at::zeros_like(d));
  const bool any_relative = relative.any().item<bool>();
  const at::Tensor e_finite = at::where(at::isfinite(e), e, at::zeros_like(e));
  const double norm_diff = d.norm().item<double>();
  const double norm_expected = e_finite.norm().item<double>();
  const double norm_rel = norm_diff / std::max(norm_expected, kTiny);
  report << what << ": " << (count ? "MISMATCH" : "pass") << ": " << count << " of " << expected.numel()
         << " elements outside atol + rtol*|expected|; max abs diff " << d.max().item<double>() << ", max rel diff ";
  if (any_relative) report << rel.max().item<double>();
  else report << "n/a (every |expected| <= atol)";
  report << ", norm rel err " << norm_rel << "\n";
  return {count, norm_rel};
}

// ---- quantised models: is a difference one that requantisation explains? ----

// Ops that round activations to a quantisation grid: a value that sits on a
// rounding boundary moves by a whole step on the smallest difference upstream.
bool requantises(const Node& n) {
  static const std::set<std::string> ops = {"QuantizeLinear", "DynamicQuantizeLinear", "QLinearConv",
                                            "QLinearMatMul", "QLinearAdd", "QLinearMul", "QLinearSigmoid",
                                            "QLinearLeakyRelu", "QLinearAveragePool", "QLinearGlobalAveragePool",
                                            "QLinearConcat"};
  return ops.count(n.op_type) > 0;
}

int64_t count_requantisers(const Graph& g) {
  int64_t count = 0;
  for (const Node& n : g.nodes) {
    count += requantises(n);
    for (const auto& sub : n.subgraphs()) count += count_requantisers(*sub);
  }
  return count;
}

// The quantisation step of graph output `o`: 1 for an 8-bit integer output,
// the scale of the DequantizeLinear that produces a float output (a constant,
// per-tensor scale); 0 when the output has no step of its own.
double output_step(const Model& model, const Executor& executor, size_t o, const at::Tensor& value) {
  if (value.scalar_type() == at::kByte || value.scalar_type() == at::kChar) return 1.0;
  const Graph& g = model.graph;
  const int t = g.outputs[o];
  const int producer = g.tensors[size_t(t)].producer;
  if (producer < 0) return 0.0;
  const Node& n = g.nodes[size_t(producer)];
  if (n.op_type != "DequantizeLinear" || n.inputs.size() < 2 || n.inputs[1] < 0) return 0.0;
  if (!g.tensors[size_t(n.inputs[1])].is_constant()) return 0.0;
  const at::Tensor scale = executor.weights().get(&g, n.inputs[1]);
  if (!scale.defined() || scale.numel() != 1) return 0.0;
  return std::abs(scale.to(at::kCPU).to(at::kDouble).item<double>());
}

// For a model that requantises activations and whose outputs differ from the
// reference: writes, per differing output, the share of differing elements
// that are exactly one quantisation step off (when the output has a step),
// and how far the model's own output moves in two reruns, beside how far it
// is from the reference: its inputs one ulp apart, and the values each
// requantiser (QuantizeLinear, DynamicQuantizeLinear) rounds moved by a
// relative 2^-21 at most (a few ulps: what another summation order or a fused
// scale in the op before it changes; ExecOptions::nudge_requantisers).
// Returns true when every differing output is explained: all its differing
// elements one step off, or its distance from the reference (norm rel err) no
// larger than the larger distance those reruns make (the model's own rounding
// sensitivity: two implementations that round differently before a
// requantiser cannot be expected to agree more closely).
bool explained_by_requantisation(const Model& model, Executor& executor, int64_t requantisers,
                                 const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& outputs,
                                 const std::vector<at::Tensor>& expected, const std::vector<Comparison>& results,
                                 const onnx::GraphProto& graph, const Tolerance& options, std::ostream& report) {
  // Two reruns: the inputs one ulp apart, and every requantiser's values a
  // few ulps apart.
  std::vector<at::Tensor> moved_inputs;
  for (const at::Tensor& t : inputs) moved_inputs.push_back(one_ulp_apart(t, 0x51ab));
  const auto nudged = executor.run(moved_inputs);
  executor.set_nudge_requantisers(true);
  const auto requantised = executor.run(inputs);
  executor.set_nudge_requantisers(false);
  bool all = true;
  report << "quantised model: " << requantisers
         << " node(s) round activations to a quantisation grid, where a difference smaller than one step "
            "(float rounding in another op) can move a value to the next step and the layers after it carry that on\n";
  for (size_t o = 0; o < outputs.size(); ++o) {
    if (results[o].mismatches == 0) continue;
    const std::string name = o < size_t(graph.output_size()) ? graph.output(int(o)).name() : std::to_string(o);
    const at::Tensor a = outputs[o].to(at::kCPU).to(at::kDouble), e = expected[o].to(at::kDouble);
    if (a.sizes() != e.sizes()) {
      all = false;
      continue;
    }
    const at::Tensor diff = (a - e).abs();
    const at::Tensor differing = diff > (options.atol + options.rtol * e.abs());
    const int64_t n_differing = differing.sum().item<int64_t>();
    const double step = output_step(model, executor, o, outputs[o]);
    std::ostringstream line;
    line << "  output " << o << " '" << name << "': ";
    bool one_step_all = false;
    if (step > 0 && n_differing > 0) {
      const at::Tensor one_step = differing & ((diff - step).abs() <= 1e-3 * step);
      const int64_t n_one = one_step.sum().item<int64_t>();
      one_step_all = n_one == n_differing;
      line << n_one << " of " << n_differing << " differing elements (" << 100.0 * double(n_one) / double(n_differing)
           << "%) are exactly one quantisation step (" << step << ") off; ";
    } else {
      line << "no quantisation step of its own (a float output after further ops); ";
    }
    const double by_inputs = norm_rel_error(nudged[o], outputs[o]);
    const double by_requantisers = norm_rel_error(requantised[o], outputs[o]);
    const double own = std::max(by_inputs, by_requantisers);
    const bool within = results[o].norm_rel <= own;
    line << "inputs one ulp apart move it by norm rel err " << by_inputs
         << ", the values its requantisers round a few ulps apart (relative 2^-21) by " << by_requantisers
         << "; the reference is " << results[o].norm_rel << " away: ";
    if (one_step_all) line << "every difference is one step: values on a rounding boundary, explained";
    else if (within) line << "within the model's own rounding sensitivity, explained by requantisation";
    else line << "beyond the model's own rounding sensitivity: not explained by requantisation";
    report << line.str() << "\n";
    all = all && (one_step_all || within);
  }
  return all;
}

// Of two dtypes, the coarser reduced float one: bfloat16 (epsilon 2^-7) over
// float16 (2^-10); Undefined when neither is one.
DType coarser_reduced(DType a, DType b) {
  if (a == DType::BFloat16 || b == DType::BFloat16) return DType::BFloat16;
  if (a == DType::Float16 || b == DType::Float16) return DType::Float16;
  return DType::Undefined;
}

// The coarsest float16/bfloat16 dtype of g's tensors and its subgraphs'.
DType coarsest_reduced_dtype(const Graph& g) {
  DType coarsest = DType::Undefined;
  for (const Tensor& t : g.tensors) coarsest = coarser_reduced(coarsest, t.dtype);
  for (const Node& node : g.nodes)
    for (const auto& sub : node.subgraphs())
      coarsest = coarser_reduced(coarsest, coarsest_reduced_dtype(*sub));
  return coarsest;
}

}  // namespace

Tolerance default_tolerance(const Model& model) {
  const DType reduced = coarsest_reduced_dtype(model.graph);
  if (reduced == DType::Undefined) return {1e-3, 1e-7, "ONNX's runner's tolerances"};
  const bool bf16 = reduced == DType::BFloat16;
  const double eps = std::ldexp(1.0, bf16 ? -7 : -10);
  return {10 * eps, 10 * eps,
          std::string("the model computes in ") +
              (bf16 ? "bfloat16: 10 x its epsilon 2^-7" : "float16: 10 x its epsilon 2^-10")};
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
  const onnx::ModelProto model = read_model(fs::path(case_dir) / "model.onnx");
  std::set<std::string> missing;
  graph_unsupported(model, model.graph(), false, missing);
  return std::vector<std::string>(missing.begin(), missing.end());
}

int verify_case(const std::string& case_dir, std::ostream& report, const VerifyOptions& options) {
  const fs::path dir(case_dir);
  const fs::path model_path = dir / "model.onnx";
  try {
    const onnx::ModelProto proto = read_model(model_path);
    const auto unsupported = case_unsupported_ops(case_dir);
    if (!unsupported.empty()) {
      report << "cannot run (no executor, or a non-tensor / string value):";
      for (const auto& op : unsupported) report << " " << op;
      report << "\n";
      return int(VerifyStatus::CannotRun);
    }
    // User-fed graph inputs, in order (IR < 4 files list initializers as inputs too).
    std::set<std::string> initializers;
    for (const auto& init : proto.graph().initializer()) initializers.insert(init.name());
    std::vector<const onnx::ValueInfoProto*> graph_inputs, graph_outputs;
    std::vector<std::string> input_names;
    for (const auto& v : proto.graph().input())
      if (!initializers.count(v.name())) {
        graph_inputs.push_back(&v);
        input_names.push_back(v.name());
      }
    for (const auto& v : proto.graph().output()) graph_outputs.push_back(&v);

    const auto sets = data_sets(dir);
    if (sets.empty()) throw Error(ErrorKind::Input, "no test_data_set_N folder", dir.string());
    // Every file of every set is checked (names, headers, bytes, dims against
    // the model) before anything runs.
    std::vector<std::vector<at::Tensor>> set_inputs, set_outputs;
    for (const auto& set : sets) {
      std::vector<at::Tensor> ins, outs;
      const auto in_files = numbered(set, "input", graph_inputs);
      const auto out_files = numbered(set, "output", graph_outputs);
      for (size_t i = 0; i < in_files.size(); ++i)
        ins.push_back(as_declared(read_tensor(in_files[i], *graph_inputs[i], "input '" + graph_inputs[i]->name() + "'"),
                                  *graph_inputs[i]));
      for (size_t o = 0; o < out_files.size(); ++o)
        outs.push_back(as_declared(
            read_tensor(out_files[o], *graph_outputs[o], "output '" + graph_outputs[o]->name() + "'"),
            *graph_outputs[o]));
      set_inputs.push_back(std::move(ins));
      set_outputs.push_back(std::move(outs));
    }

    LoadOptions load;
    load.allow_custom_domains = options.allow_custom_domains;
    for (size_t i = 0; i < input_names.size(); ++i) {
      const auto sizes = set_inputs[0][i].sizes();
      load.input_shapes[input_names[i]] = std::vector<int64_t>(sizes.begin(), sizes.end());
    }
    const Model model = load_model(model_path.string(), load);
    // The model's own dtypes, as profile runs it by default: a float16 model
    // computes in float16 where ATen has the kernel, in fp32 where not.
    ExecOptions exec;
    exec.device = at::kCPU;
    exec.float_dtype = at::ScalarType::Undefined;
    exec.fuse_qdq = options.fuse;
    exec.fuse_cpu = options.fuse;
    exec.gemm = parse_as<GemmBackend>(options.gemm, "--gemm");
    Executor executor(model, exec);

    Tolerance tolerance = default_tolerance(model);
    if (options.rtol || options.atol) {
      tolerance.source = (options.rtol && options.atol ? "given" : "given; the other: " + tolerance.source);
      tolerance.rtol = options.rtol.value_or(tolerance.rtol);
      tolerance.atol = options.atol.value_or(tolerance.atol);
    }
    report << "criterion: elementwise allclose, |actual - expected| <= atol + rtol*|expected| with rtol "
           << tolerance.rtol << ", atol " << tolerance.atol << " (" << tolerance.source
           << "; NaN matches NaN; integer/bool outputs exact). Also shown, not judged: max abs diff, max rel "
              "diff "
              "|actual - expected| / |expected| over elements with |expected| > atol, norm rel err ||actual "
              "- expected||_2 / ||expected||_2\n";
    int64_t mismatches = 0, explained = 0;
    const int64_t requantisers = count_requantisers(model.graph);
    for (size_t s = 0; s < sets.size(); ++s) {
      const auto outputs = executor.run(set_inputs[s]);
      if (s == 0)
        for (const auto& notice : upcast_notices(executor.upcasts(), at::kCPU))
          report << "notice: " << notice << "\n";
      if (options.shapes && s == 0)
        for (size_t o = 0; o < outputs.size() && int(o) < proto.graph().output_size(); ++o)
          options.shapes->push_back({proto.graph().output(int(o)).name(), outputs[o].sizes().vec()});
      const auto& expected = set_outputs[s];
      if (outputs.size() != expected.size()) {
        report << sets[s].filename().string() << ": " << outputs.size() << " outputs, expected " << expected.size()
               << "\n";
        return int(VerifyStatus::Mismatch);
      }
      std::vector<Comparison> results;
      int64_t set_mismatches = 0;
      for (size_t o = 0; o < outputs.size(); ++o) {
        const std::string what = sets[s].filename().string() + " output " + std::to_string(o) + " '" +
                                 proto.graph().output(int(o)).name() + "'";
        results.push_back(compare(outputs[o], expected[o], what, tolerance, report));
        set_mismatches += results.back().mismatches;
      }
      if (set_mismatches > 0 && requantisers > 0 &&
          explained_by_requantisation(model, executor, requantisers, set_inputs[s], outputs, expected, results,
                                      proto.graph(), tolerance, report))
        explained += set_mismatches;
      mismatches += set_mismatches;
    }
    if (mismatches > 0 && explained == mismatches) {
      report << "PASS (quantised model): " << mismatches
             << " element(s) outside the elementwise tolerance, every differing output within what requantisation "
                "explains (above)\n";
      return int(VerifyStatus::Pass);
    }
    report << (mismatches ? "FAIL" : "PASS") << ": " << mismatches << " element(s) outside the tolerance\n";
    return int(mismatches ? VerifyStatus::Mismatch : VerifyStatus::Pass);
  } catch (const Error& e) {
    // One line: the file, the node and op where known, what is wrong.
    report << e.what() << "\n";
    return int(e.kind() == ErrorKind::Runtime ? VerifyStatus::Mismatch : VerifyStatus::CannotRun);
  } catch (const c10::Error& e) {
    const std::string what = e.what_without_backtrace();
    report << what.substr(0, what.find('\n')) << "\n";
    return int(VerifyStatus::Mismatch);
  } catch (const std::bad_alloc&) {
    report << "out of memory\n";
    return int(VerifyStatus::CannotRun);
  } catch (const fs::filesystem_error& e) {
    report << e.what() << "\n";
    return int(VerifyStatus::CannotRun);
  } catch (const std::exception& e) {
    report << e.what() << "\n";
    return int(VerifyStatus::Mismatch);
  }
}

}  // namespace modelstat::profiler

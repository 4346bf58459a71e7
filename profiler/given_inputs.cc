// --value and --inputs (given_inputs.hpp).
#include "profiler/given_inputs.hpp"

#include <cerrno>
#include <cstdint>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "modelstat/error.hpp"
#include "profiler/ops/exec_helpers.hpp"
#include "profiler/verify_case_files.hpp"

namespace modelstat::profiler {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void usage(const std::string& what) { throw Error(ErrorKind::Usage, what); }

std::string input_list(const Graph& g) {
  std::string list;
  for (int id : g.inputs) list += (list.empty() ? "" : ", ") + g.tensors[size_t(id)].name;
  return list.empty() ? "none" : list;
}

// Graph::inputs position of input `name`, or usage error naming `flag`.
size_t input_position(const Graph& g, const std::string& name, const std::string& flag) {
  for (size_t k = 0; k < g.inputs.size(); ++k)
    if (g.tensors[size_t(g.inputs[k])].name == name) return k;
  usage(flag + ": the model has no graph input '" + name + "' (its inputs: " + input_list(g) + ")");
}

// The folder holding input_N.pb: DIR itself, or a test case's first data set.
fs::path input_folder(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) usage("--inputs " + dir + ": not a folder (a test case's, with input_0.pb ...)");
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("input_", 0) == 0 && e.path().extension() == ".pb") return dir;
  const auto sets = data_sets(dir);
  if (!sets.empty()) return sets.front();
  usage("--inputs " + dir + ": no input_N.pb files in it, nor a test_data_set_* folder holding them");
}

// A graph input as the test-case reader checks a file against it.
onnx::ValueInfoProto value_info(const Tensor& t, bool with_dims) {
  onnx::ValueInfoProto v;
  v.set_name(t.name);
  auto* type = v.mutable_type()->mutable_tensor_type();
  type->set_elem_type(int(t.dtype));
  if (with_dims && t.shape.rank_known) {
    auto* shape = type->mutable_shape();
    for (const Dim& d : t.shape.dims) {
      if (d.known()) shape->add_dim()->set_dim_value(d.value);
      else shape->add_dim()->set_dim_param("?");
    }
  }
  return v;
}

struct InputFile {
  size_t position;
  fs::path path;
};

// Which file feeds which input: a file whose TensorProto names a graph input
// feeds it, else input_K.pb feeds the K-th graph input.
std::vector<InputFile> input_files(const Graph& g, const std::string& dir) {
  const fs::path folder = input_folder(dir);
  std::vector<onnx::ValueInfoProto> infos;
  for (int id : g.inputs) infos.push_back(value_info(g.tensors[size_t(id)], false));
  // input_0.pb .. input_{n-1}.pb, n the files there: the others may come from --value.
  size_t present = 0;
  for (const auto& e : fs::directory_iterator(folder))
    present += e.path().filename().string().rfind("input_", 0) == 0 && e.path().extension() == ".pb";
  std::vector<const onnx::ValueInfoProto*> values;
  for (size_t k = 0; k < infos.size() && k < present; ++k) values.push_back(&infos[k]);
  if (present > infos.size())
    usage("--inputs " + dir + ": " + std::to_string(present) + " input_N.pb files, the model has " +
          std::to_string(infos.size()) + " graph input(s) (" + input_list(g) + ")");
  std::vector<InputFile> files;
  const std::vector<fs::path> paths = numbered(folder, "input", values);
  for (size_t k = 0; k < paths.size(); ++k) {
    onnx::TensorProto p;
    size_t position = k;
    if (p.ParseFromString(read_file(paths[k])) && !p.name().empty())
      for (size_t i = 0; i < g.inputs.size(); ++i)
        if (g.tensors[size_t(g.inputs[i])].name == p.name()) position = i;
    for (const InputFile& f : files)
      if (f.position == position)
        usage("--inputs " + dir + ": " + paths[k].string() + " and " + f.path.string() + " both feed input '" +
              g.tensors[size_t(g.inputs[position])].name + "'");
    files.push_back({position, paths[k]});
  }
  return files;
}

// One value of --value NAME=... as the input's dtype; usage error otherwise.
double parse_value(const std::string& text, const Tensor& t, const std::string& flag) {
  const std::string dtype = dtype_name(t.dtype);
  if (t.dtype == DType::Bool) {
    if (text == "true" || text == "1") return 1;
    if (text == "false" || text == "0") return 0;
    usage(flag + ": '" + text + "' is not a bool (input '" + t.name + "' is bool: true, false, 1 or 0)");
  }
  const at::ScalarType type = scalar_type_of(t.dtype);
  errno = 0;
  char* end = nullptr;
  if (at::isFloatingType(type)) {
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || errno == ERANGE)
      usage(flag + ": '" + text + "' is not a number (input '" + t.name + "' is " + dtype + ")");
    return v;
  }
  if (at::isIntegralType(type, false)) {
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno == ERANGE)
      usage(flag + ": '" + text + "' is not an integer (input '" + t.name + "' is " + dtype + ")");
    const bool is_unsigned = type == at::kByte;
    if ((is_unsigned && v < 0) || (type == at::kByte && v > 255) || (type == at::kChar && (v < -128 || v > 127)) ||
        (type == at::kShort && (v < -32768 || v > 32767)) || (type == at::kInt && (v < INT32_MIN || v > INT32_MAX)))
      usage(flag + ": " + text + " does not fit input '" + t.name + "' (" + dtype + ")");
    return double(v);
  }
  usage(flag + ": input '" + t.name + "' is " + dtype + ": --value takes numbers and bools only; give a file with --inputs");
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  size_t pos = 0;
  while (true) {
    const size_t next = text.find(sep, pos);
    parts.push_back(text.substr(pos, next == std::string::npos ? std::string::npos : next - pos));
    if (next == std::string::npos) return parts;
    pos = next + 1;
  }
}

GivenInput describe(const Tensor& t, const at::Tensor& x, const std::string& source, const std::string& values) {
  return GivenInput{t.name, dtype_name(t.dtype), x.sizes().vec(), source, values};
}

}  // namespace

std::map<std::string, std::vector<int64_t>> given_input_shapes(const Graph& g, const ProfileOptions& o) {
  std::map<std::string, std::vector<int64_t>> shapes;
  if (o.inputs_dir.empty()) return shapes;
  for (const InputFile& f : input_files(g, o.inputs_dir)) {
    const Tensor& t = g.tensors[size_t(g.inputs[f.position])];
    if (t.shape.fully_known()) continue;  // checked against the binding when read
    onnx::TensorProto p;
    if (!p.ParseFromString(read_file(f.path)))
      throw Error(ErrorKind::Input, "not a TensorProto (the protobuf does not parse)", f.path.string());
    shapes[t.name] = std::vector<int64_t>(p.dims().begin(), p.dims().end());
  }
  return shapes;
}

GivenValues read_given_values(const Graph& g, const ProfileOptions& o) {
  GivenValues given;
  std::map<size_t, GivenInput> described;
  if (!o.inputs_dir.empty())
    for (const InputFile& f : input_files(g, o.inputs_dir)) {
      const Tensor& t = g.tensors[size_t(g.inputs[f.position])];
      at::Tensor x = read_tensor(f.path, value_info(t, true), "input '" + t.name + "'");
      x = as_declared(x, value_info(t, true));
      described[f.position] = describe(t, x, f.path.string(), "");
      given.tensors[f.position] = std::move(x);
    }
  for (const std::string& spec : o.input_values) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      usage("--value takes NAME=V[,V...] (a graph input and its values), got '" + spec + "'");
    const std::string name = spec.substr(0, eq), text = spec.substr(eq + 1);
    const std::string flag = "--value " + spec;
    const size_t position = input_position(g, name, flag);
    if (given.tensors.count(position))
      usage(flag + ": input '" + name + "' is given twice (" + described[position].source + " too)");
    const Tensor& t = g.tensors[size_t(g.inputs[position])];
    const std::vector<int64_t> dims = known_dims(t.shape, "input " + name);
    int64_t elements = 1;
    for (int64_t d : dims) elements *= d;
    const std::vector<std::string> parts = split(text, ',');
    if (int64_t(parts.size()) != elements)
      usage(flag + ": input '" + name + "' (" + dtype_name(t.dtype) + " " + t.shape.to_string() + ") has " +
            std::to_string(elements) + " element(s), " + std::to_string(parts.size()) + " value(s) given");
    std::vector<double> values;
    for (const std::string& p : parts) values.push_back(parse_value(p, t, flag));
    at::Tensor x = at::tensor(values, at::TensorOptions().dtype(at::kDouble)).reshape(dims).to(scalar_type_of(t.dtype));
    described[position] = describe(t, x, "--value", text);
    given.tensors[position] = std::move(x);
  }
  for (auto& [position, d] : described) given.described.push_back(std::move(d));
  return given;
}

std::vector<std::string> values_for(const Graph& g, const std::vector<std::string>& specs) {
  std::vector<std::string> mine;
  for (const std::string& spec : specs) {
    const std::string name = spec.substr(0, spec.find('='));
    for (int id : g.inputs)
      if (g.tensors[size_t(id)].name == name) mine.push_back(spec);
  }
  return mine;
}

void feed_given_values(const GivenValues& given, std::vector<at::Tensor>& inputs) {
  for (const auto& [position, x] : given.tensors) {
    at::Tensor& slot = inputs.at(position);
    slot = x.to(slot.device(), slot.scalar_type());
  }
}

}  // namespace modelstat::profiler

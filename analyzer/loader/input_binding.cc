// Load stage: --input / --dim / --default-batch applied to the graph inputs,
// and the hint naming what is left unbound (load_stages.hpp).
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <bitset>
#include <cctype>
#include <cstring>
#include <map>
#include <set>

#include "analyzer/loader/load_stages.hpp"
#include "analyzer/loader/name_map.hpp"
#include "modelstat/error.hpp"

namespace modelstat::loader {

namespace {

std::string dims_text(const onnx::TensorShapeProto& s) {
  std::string out;
  for (int i = 0; i < s.dim_size(); ++i) {
    if (i) out += 'x';
    const auto& d = s.dim(i);
    out += d.has_dim_value() ? std::to_string(d.dim_value()) : d.has_dim_param() ? d.dim_param() : "?";
  }
  return out.empty() ? "scalar" : out;
}

std::string join_shape(const std::vector<int64_t>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "x" : "") + std::to_string(v[i]);
  return out.empty() ? "scalar" : out;
}

// A command-line argument as a shell takes it: as it is when it holds only
// characters no shell treats specially, else in single quotes (a tf2onnx
// input is "input:0"; other exporters use spaces and brackets).
std::string shell_arg(const std::string& arg) {
  const bool plain = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("_./:=,+-@%", c) != nullptr;
  });
  if (plain) return arg;
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// What is left unbound once the inputs are bound: each input with an
// unknown dim as it stands ("'x' (batchx3)"), and the flags that bind them:
// for a named dim the --dim to give, for an input with unnamed (`?`) dims,
// which only --input can bind, the --input to give with the positions
// (`--input images:1x3xD2xD3`), for an input without a shape an --input.
struct Unbound {
  std::vector<std::string> inputs, flags;
};

Unbound unbound_inputs(const onnx::GraphProto& g, const std::set<std::string>& initializer_names,
                       const LoadOptions& options) {
  Unbound u;
  std::set<std::string> named;
  for (const auto& in : g.input()) {
    if (initializer_names.count(in.name()) || options.input_shapes.count(in.name())) continue;
    if (!in.type().has_tensor_type()) continue;
    if (!in.type().tensor_type().has_shape()) {
      u.inputs.push_back("'" + in.name() + "' (no shape)");
      u.flags.push_back("--input " + shell_arg(in.name() + ":DIMS"));
      continue;
    }
    const auto& shape = in.type().tensor_type().shape();
    std::vector<int> unnamed;
    std::string example;
    bool unknown = false;
    for (int i = 0; i < shape.dim_size(); ++i) {
      const auto& d = shape.dim(i);
      example += i ? "x" : "";
      if (d.has_dim_value()) {
        example += std::to_string(d.dim_value());
        continue;
      }
      unknown = true;
      if (d.has_dim_param() && !d.dim_param().empty()) {
        example += d.dim_param();
        if (named.insert(d.dim_param()).second) u.flags.push_back("--dim " + shell_arg(d.dim_param() + "=N"));
      } else {
        example += "D" + std::to_string(i);
        unnamed.push_back(i);
      }
    }
    if (unknown) u.inputs.push_back("'" + in.name() + "' (" + dims_text(shape) + ")");
    if (unnamed.empty()) continue;
    std::string positions;
    for (size_t k = 0; k < unnamed.size(); ++k)
      positions += (k == 0 ? "" : k + 1 == unnamed.size() ? " and " : ", ") + std::to_string(unnamed[k]);
    u.flags.push_back("--input " + shell_arg(in.name() + ":" + example) + " (dim" + (unnamed.size() > 1 ? "s " : " ") +
                      positions + " of input '" + in.name() + "' " + (unnamed.size() > 1 ? "have" : "has") +
                      " no name: only --input binds " + (unnamed.size() > 1 ? "them" : "it") + ")");
  }
  return u;
}

std::string joined(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (size_t k = 0; k < parts.size(); ++k) out += (k ? sep : "") + parts[k];
  return out;
}

}  // namespace

// Applies --input / --dim / default batch to the graph inputs. Clears
// value_info and output shapes so inference recomputes them for the bound
// dims instead of clashing with shapes recorded at export time.
void bind_inputs(onnx::GraphProto& g, const LoadOptions& options, std::vector<std::string>& notices,
                 const std::function<bool(const onnx::NodeProto&)>& has_inference) {
  std::set<std::string> initializer_names;
  for (const auto& t : g.initializer()) initializer_names.insert(t.name());
  std::set<std::string> input_names, used_dims;
  std::map<std::string, std::vector<std::string>> defaulted_batch;  // symbol -> inputs
  // A symbol that leads an input's dims and --dim leaves unbound is the batch:
  // --default-batch binds it wherever it occurs, in every input (a recurrent
  // state 2 x batch x 128 beside an input batch x 512).
  std::map<std::string, int64_t> batch_symbols;
  for (const auto& in : g.input()) {
    if (initializer_names.count(in.name()) || options.input_shapes.count(in.name())) continue;
    if (!in.type().has_tensor_type() || !in.type().tensor_type().has_shape()) continue;
    const auto& shape = in.type().tensor_type().shape();
    if (shape.dim_size() > 0 && shape.dim(0).has_dim_param() && !shape.dim(0).dim_param().empty() &&
        !options.dim_values.count(shape.dim(0).dim_param()))
      batch_symbols.emplace(shape.dim(0).dim_param(), options.default_batch);
  }
  for (auto& in : *g.mutable_input()) {
    if (initializer_names.count(in.name())) continue;
    input_names.insert(in.name());
    if (!in.type().has_tensor_type()) continue;
    auto* tt = in.mutable_type()->mutable_tensor_type();
    auto given = options.input_shapes.find(in.name());
    if (given != options.input_shapes.end()) {
      const auto& dims = given->second;
      if (tt->has_shape() && tt->shape().dim_size() != int(dims.size()))
        throw Error(ErrorKind::Input, "shape mismatch for input '" + in.name() + "': the model has rank " +
                                          std::to_string(tt->shape().dim_size()) + " (" + dims_text(tt->shape()) +
                                          "), --input gives " + join_shape(dims));
      if (tt->has_shape()) {
        for (int i = 0; i < tt->shape().dim_size(); ++i) {
          const auto& d = tt->shape().dim(i);
          if (d.has_dim_value() && d.dim_value() > 0 && d.dim_value() != dims[size_t(i)])
            throw Error(ErrorKind::Input, "shape mismatch for input '" + in.name() + "': the model fixes dim " +
                                              std::to_string(i) + " to " + std::to_string(d.dim_value()) +
                                              " (" + dims_text(tt->shape()) + "), --input gives " + join_shape(dims));
          if (d.has_dim_param()) used_dims.insert(d.dim_param());
        }
      }
      auto* shape = tt->mutable_shape();
      shape->clear_dim();
      for (int64_t v : dims) shape->add_dim()->set_dim_value(v);
      continue;
    }
    if (!tt->has_shape()) {
      notices.push_back("input '" + in.name() + "' has no shape in the model: pass --input " +
                        shell_arg(in.name() + ":DIMS") + " to count the nodes it feeds");
      continue;
    }
    for (int i = 0; i < tt->shape().dim_size(); ++i) {
      auto* d = tt->mutable_shape()->mutable_dim(i);
      if (d->has_dim_value()) {
        if (d->dim_value() < 0)
          throw Error(ErrorKind::Input, "input '" + in.name() + "' has negative dim " +
                                            std::to_string(d->dim_value()) + " (" + dims_text(tt->shape()) + ")");
        continue;
      }
      if (d->has_dim_param()) {
        auto bound = options.dim_values.find(d->dim_param());
        if (bound != options.dim_values.end()) {
          used_dims.insert(d->dim_param());
          d->set_dim_value(bound->second);
          continue;
        }
      }
      const bool batch = d->has_dim_param() && batch_symbols.count(d->dim_param());
      if (batch || i == 0) {
        auto& inputs = defaulted_batch[d->has_dim_param() ? d->dim_param() : std::string()];
        if (inputs.empty() || inputs.back() != in.name()) inputs.push_back(in.name());
        d->set_dim_value(options.default_batch);
      }
    }
  }
  // One notice per unbound batch symbol, not one per input (a decoder has a
  // cache input per layer and per key / value).
  for (const auto& [symbol, names] : defaulted_batch) {
    std::string which = "input '" + names.front() + "'";
    if (names.size() > 1) which = std::to_string(names.size()) + " inputs ('" + names.front() + "', ...)";
    notices.push_back("batch dim '" + (symbol.empty() ? std::string("?") : symbol) + "' of " + which +
                      " is unbound: using " + std::to_string(options.default_batch) +
                      (symbol.empty() ? std::string() : " (set it with --dim " + symbol + "=N)"));
  }
  const Unbound unbound = unbound_inputs(g, initializer_names, options);
  // Running the model (profile, report) needs every input dim: all of them
  // named at once, with the flags, before anything is loaded further.
  if (options.require_bound_inputs && !unbound.inputs.empty())
    throw Error(ErrorKind::Input,
                "graph input" + std::string(unbound.inputs.size() > 1 ? "s " : " ") + joined(unbound.inputs, ", ") +
                    (unbound.inputs.size() > 1 ? " have" : " has") +
                    " unknown dims, and running the model needs them all: bind them with " +
                    joined(unbound.flags, "; "));
  // Without a shape an input has its own notice (above).
  std::vector<std::string> flags;
  for (const auto& f : unbound.flags)
    if (f.rfind("--input ", 0) != 0 || f.find(":DIMS") == std::string::npos) flags.push_back(f);
  if (!flags.empty())
    notices.push_back("unbound input dims leave the nodes they feed uncounted: bind them with " + joined(flags, "; "));
  for (const auto& [name, shape] : options.input_shapes)
    if (!input_names.count(name)) {
      std::string list;
      for (const auto& n : input_names) list += (list.empty() ? "" : ", ") + n;
      throw Error(ErrorKind::Usage, "--input '" + name + "' names no graph input (inputs: " + list + ")");
    }
  for (const auto& [name, value] : options.dim_values)
    if (!used_dims.count(name)) notices.push_back("--dim " + name + " matches no symbolic dim of the graph inputs");
  // Declared shapes of what nothing can infer (the outputs of a node of a
  // domain modelstat has no records for, admitted by --allow-custom-domains)
  // are kept, their symbolic dims bound as the inputs' are, so that shapes
  // flow past such nodes; every other declared shape is recomputed.
  // Hashed, by view into the graph's strings: every node output is looked up.
  NameMap<bool> declared(size_t(g.value_info_size() + g.output_size()));
  // The declared names' lengths (mod 256): a node output of another length
  // is not looked up. A graph declares few names (its outputs; value_info is
  // often empty), so most outputs are told apart by the length their string
  // object holds, without hashing their characters (a 100k-node graph's
  // outputs are 100k trips to memory otherwise).
  std::bitset<256> declared_lengths;
  auto declare = [&](const std::string& name) {
    declared.try_emplace(name, true);
    declared_lengths.set(name.size() % 256);
  };
  for (const auto& vi : g.value_info()) declare(vi.name());
  for (const auto& vi : g.output()) declare(vi.name());
  std::set<std::string> uninferable;
  for (const auto& node : g.node()) {
    bool writes_declared = false;  // only those outputs' declared shapes could be kept
    for (const auto& out : node.output())
      writes_declared = writes_declared || (declared_lengths.test(out.size() % 256) && declared.contains(out));
    if (writes_declared && !has_inference(node))
      for (const auto& out : node.output()) uninferable.insert(out);
  }
  auto bind_declared = [&](onnx::ValueInfoProto& vi) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return;
    for (auto& d : *vi.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      if (!d.has_dim_param()) continue;
      if (auto bound = options.dim_values.find(d.dim_param()); bound != options.dim_values.end())
        d.set_dim_value(bound->second);
      else if (auto batch = batch_symbols.find(d.dim_param()); batch != batch_symbols.end())
        d.set_dim_value(batch->second);
    }
  };
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
  for (auto& vi : *g.mutable_value_info())
    if (uninferable.count(vi.name())) {
      bind_declared(vi);
      *kept.Add() = vi;
    }
  g.clear_value_info();
  for (auto& vi : kept) *g.add_value_info() = vi;
  for (auto& out : *g.mutable_output()) {
    if (!out.type().has_tensor_type()) continue;
    if (uninferable.count(out.name())) bind_declared(out);
    else out.mutable_type()->mutable_tensor_type()->clear_shape();
  }
}

}  // namespace modelstat::loader

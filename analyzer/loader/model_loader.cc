// Loading: map the file, strip weight payloads, parse, validate opsets and
// domains, order the graph, bind input dims, run ONNX shape inference, and
// convert to modelstat's IR.
#include <fcntl.h>
#include <onnx/defs/schema.h>
#include <google/protobuf/arena.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <set>

#include "analyzer/cost/cost_rule.hpp"
#include "analyzer/loader/legacy_inference.hpp"
#include "analyzer/loader/loader.hpp"
#include "analyzer/loader/onnx_ir.hpp"
#include "analyzer/loader/shape_values.hpp"
#include "modelstat/error.hpp"
#include "modelstat/op_key.hpp"

namespace modelstat::loader {

namespace {

// Payloads up to this size stay in the parsed model: shape inference needs
// the values of shape constants, scales and axes. Weights are far larger.
constexpr size_t kKeepPayloadBytes = 4096;

// The newest default-domain opset a model may import (validate_opsets).
constexpr int64_t kNewestDefaultOpset = 23;

// Inference and shape-value folding rounds (see infer_shapes).
constexpr int kMaxShapeRounds = 256;

// Domains whose nodes have cost rules or are at least known to ONNX.
bool is_known_domain(const std::string& d) {
  if (d.empty() || d == "ai.onnx") return true;
  const auto& map = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  return map.count(d) > 0;
}

int max_known_version(const std::string& d) {
  const auto& map = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = map.find(normalize_domain(d));
  return it == map.end() ? 0 : it->second.second;
}

// MODELSTAT_TIMING=1 prints how long each loading stage took (stderr).
class StageTimer {
 public:
  StageTimer() : enabled_(std::getenv("MODELSTAT_TIMING") != nullptr), last_(std::chrono::steady_clock::now()) {}
  void lap(const char* stage) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    std::fprintf(stderr, "modelstat: timing: %-24s %8.1f ms\n", stage,
                 std::chrono::duration<double, std::milli>(now - last_).count());
    last_ = now;
  }

 private:
  bool enabled_;
  std::chrono::steady_clock::time_point last_;
};

class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
      throw Error(ErrorKind::Input, std::string("cannot open model: ") + std::strerror(errno), path);
    if (S_ISDIR(st.st_mode)) throw Error(ErrorKind::Input, "is a directory, not an ONNX model file", path);
    if (!S_ISREG(st.st_mode)) throw Error(ErrorKind::Input, "is not a regular file", path);
    if (st.st_size == 0) throw Error(ErrorKind::Input, "empty file: not a valid ONNX model", path);
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw Error(ErrorKind::Input, std::string("cannot open model: ") + std::strerror(errno), path);
    size_ = size_t(st.st_size);
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
    if (p == MAP_FAILED) {
      ::close(fd_);
      throw Error(ErrorKind::Runtime, std::string("cannot map model: ") + std::strerror(errno), path);
    }
    data_ = static_cast<const uint8_t*>(p);
  }
  ~MappedFile() {
    ::munmap(const_cast<uint8_t*>(data_), size_);
    ::close(fd_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  int fd_ = -1;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

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

// The first node (main graph, subgraphs, then model-local functions) of each
// domain a node uses: what decides whether an unknown imported domain matters.
void collect_used_domains(const onnx::GraphProto& g, std::map<std::string, const onnx::NodeProto*>& used) {
  for (const auto& n : g.node()) {
    used.emplace(normalize_domain(n.domain()), &n);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) collect_used_domains(a.g(), used);
      for (const auto& sub : a.graphs()) collect_used_domains(sub, used);
    }
  }
}

void validate_opsets(const onnx::ModelProto& m, const LoadOptions& options, std::vector<std::string>& notices) {
  std::map<std::string, const onnx::NodeProto*> used;
  collect_used_domains(m.graph(), used);
  for (const auto& f : m.functions())
    for (const auto& n : f.node()) used.emplace(normalize_domain(n.domain()), &n);
  std::set<std::string> imported, record_domains;
  for (const auto& o : m.opset_import()) {
    const std::string d = normalize_domain(o.domain());
    imported.insert(d);
    if (o.version() < 1)
      throw Error(ErrorKind::Input, "opset import of domain '" + o.domain() + "' has invalid version " +
                                        std::to_string(o.version()));
    if (is_known_domain(d)) {
      const int max_v = max_known_version(d);
      // ai.onnx.ml 4 and 5 (ONNX 1.13, 1.15: LabelEncoder, TreeEnsemble,
      // ...) post-date ONNX 1.12's schemas: loaded, each node counted by a
      // rule where one exists, else listed as unknown, and said so.
      if (d == "ai.onnx.ml" && o.version() > max_v && o.version() <= 5) {
        notices.push_back("ai.onnx.ml opset " + std::to_string(o.version()) + " is newer than this build's schemas (" +
                          std::to_string(max_v) + "): its nodes are checked against opset " + std::to_string(max_v) +
                          " and listed as unknown where modelstat has no rule");
        continue;
      }
      // Default-domain opsets 18-23 (ONNX 1.13-1.18): loaded on ONNX 1.12's
      // schemas where an op only widened its types, modelstat's records for
      // ops added since (Gelu 20, RMSNormalization / RotaryEmbedding /
      // Attention 23, ...), ReduceSum-13's signature for the reductions whose
      // axes became an input in 18, and a node error where an op gained a
      // feature these schemas would misread (Pad axes, AveragePool
      // dilations, ...). Ops added since without a record are unknown.
      if (d.empty() && o.version() > max_v && o.version() <= kNewestDefaultOpset) {
        notices.push_back("opset " + std::to_string(o.version()) + " is newer than this build's ONNX schemas (" +
                          std::to_string(max_v) +
                          "): ops added since count where modelstat has a record; ops changed since are read as "
                          "their opset-" + std::to_string(o.version()) + " meaning (docs/COST_MODEL.md, Opset ranges)");
        continue;
      }
      if (o.version() > max_v)
        throw Error(ErrorKind::Input, "opset " + std::to_string(o.version()) + " of domain '" +
                                          (d.empty() ? "ai.onnx" : d) + "' is newer than this build knows (up to " +
                                          std::to_string(max_v) + ")");
    } else if (cost::domain_has_records(d)) {
      // A contrib domain modelstat has op records for (com.microsoft): its
      // nodes are checked one by one below.
      record_domains.insert(d);
    } else if (!used.count(d)) {
      // Imported and never used (ONNX Runtime's tools import
      // com.ms.internal.nhwc and the like): nothing to count, nothing refused.
      notices.push_back("domain '" + o.domain() + "' is imported but no node uses it");
    } else if (!options.allow_custom_domains) {
      bool local_function = false;
      for (const auto& f : m.functions())
        if (f.domain() == o.domain()) local_function = true;
      const onnx::NodeProto& n = *used.at(d);
      if (!local_function)
        throw Error(ErrorKind::Input,
                    "uses domain '" + o.domain() +
                        "', which modelstat has no rules for (pass --allow-custom-domains to list its nodes as "
                        "unknown)",
                    {}, n.name(), n.op_type());
    }
  }
  if (!imported.count(""))
    throw Error(ErrorKind::Input, "model imports no default-domain (ai.onnx) opset");
  // Nodes must use a domain the model imports.
  for (const auto& n : m.graph().node()) {
    if (!imported.count(normalize_domain(n.domain())))
      throw Error(ErrorKind::Input, "uses domain '" + n.domain() + "' which the model does not import", {},
                  n.name(), n.op_type());
    // In a contrib domain, only ops with a record are known; the others are
    // refused as an unknown domain's are.
    const std::string d = normalize_domain(n.domain());
    if (!options.allow_custom_domains && record_domains.count(d) && !cost::find_op(d, n.op_type()))
      throw Error(ErrorKind::Input, "unknown op '" + n.op_type() + "' of domain '" + n.domain() +
                                        "' (pass --allow-custom-domains to list its nodes as unknown)",
                  {}, n.name(), n.op_type());
  }
  if (options.allow_custom_domains)
    for (const auto& d : imported)
      if (!is_known_domain(d) && !cost::domain_has_records(d) && used.count(d)) notices.push_back("domain '" + d + "' has no cost rules: its nodes are listed as unknown");
}

// One line naming what is left unbound once the inputs are bound: for a
// named dim the --dim to give, for an input with unnamed (`?`) dims, which
// only --input can bind, the input, the positions and the --input to give
// (`--input images:1x3xD2xD3`). Nothing when every input dim is known.
void unbound_dims_hint(const onnx::GraphProto& g, const std::set<std::string>& initializer_names,
                       const LoadOptions& options, std::vector<std::string>& notices) {
  std::vector<std::string> parts;
  std::set<std::string> named;
  for (const auto& in : g.input()) {
    if (initializer_names.count(in.name()) || options.input_shapes.count(in.name())) continue;
    if (!in.type().has_tensor_type() || !in.type().tensor_type().has_shape()) continue;
    const auto& shape = in.type().tensor_type().shape();
    std::vector<int> unnamed;
    std::string example;
    for (int i = 0; i < shape.dim_size(); ++i) {
      const auto& d = shape.dim(i);
      example += i ? "x" : "";
      if (d.has_dim_value()) {
        example += std::to_string(d.dim_value());
      } else if (d.has_dim_param() && !d.dim_param().empty()) {
        example += d.dim_param();
        if (named.insert(d.dim_param()).second) parts.push_back("--dim " + d.dim_param() + "=N");
      } else {
        example += "D" + std::to_string(i);
        unnamed.push_back(i);
      }
    }
    if (unnamed.empty()) continue;
    std::string positions;
    for (size_t k = 0; k < unnamed.size(); ++k)
      positions += (k == 0 ? "" : k + 1 == unnamed.size() ? " and " : ", ") + std::to_string(unnamed[k]);
    parts.push_back("--input " + in.name() + ":" + example + " (dim" + (unnamed.size() > 1 ? "s " : " ") +
                    positions + " of input '" + in.name() + "' " + (unnamed.size() > 1 ? "have" : "has") +
                    " no name: only --input binds " + (unnamed.size() > 1 ? "them" : "it") + ")");
  }
  if (parts.empty()) return;
  std::string line = "unbound input dims leave the nodes they feed uncounted: bind them with ";
  for (size_t k = 0; k < parts.size(); ++k) line += (k ? "; " : "") + parts[k];
  notices.push_back(line);
}

// Applies --input / --dim / default batch to the graph inputs. Clears
// value_info and output shapes so inference recomputes them for the bound
// dims instead of clashing with shapes recorded at export time.
void bind_inputs(onnx::GraphProto& g, const LoadOptions& options, std::vector<std::string>& notices,
                 const std::function<bool(const onnx::NodeProto&)>& has_inference) {
  std::set<std::string> initializer_names;
  for (const auto& t : g.initializer()) initializer_names.insert(t.name());
  std::set<std::string> input_names, used_dims;
  std::map<std::string, std::vector<std::string>> defaulted_batch;  // symbol -> inputs
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
      notices.push_back("input '" + in.name() + "' has no shape in the model: pass --input " + in.name() +
                        ":DIMS to count the nodes it feeds");
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
      if (i == 0) {
        defaulted_batch[d->has_dim_param() ? d->dim_param() : std::string()].push_back(in.name());
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
  unbound_dims_hint(g, initializer_names, options, notices);
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
  std::set<std::string> uninferable;
  for (const auto& node : g.node())
    if (!has_inference(node))
      for (const auto& out : node.output()) uninferable.insert(out);
  auto bind_declared = [&](onnx::ValueInfoProto& vi) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return;
    for (auto& d : *vi.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      if (!d.has_dim_param()) continue;
      auto bound = options.dim_values.find(d.dim_param());
      if (bound != options.dim_values.end()) d.set_dim_value(bound->second);
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

// Integer value of a scalar (or 1-element) tensor when it is known statically:
// an initializer, a Constant node, or a value ONNX's data propagation computed.
std::optional<int64_t> known_int_scalar(const std::string& name, const onnx::GraphProto& g,
                                        const std::unordered_map<std::string, onnx::TensorShapeProto>& data) {
  auto from_tensor = [](const onnx::TensorProto& t) -> std::optional<int64_t> {
    int64_t count = 1;
    for (int64_t d : t.dims()) count *= d;
    if (count != 1) return std::nullopt;
    if (t.data_type() == onnx::TensorProto::INT64) {
      if (t.int64_data_size() == 1) return t.int64_data(0);
      if (t.raw_data().size() == 8) {
        int64_t v;
        std::memcpy(&v, t.raw_data().data(), 8);
        return v;
      }
    } else if (t.data_type() == onnx::TensorProto::INT32) {
      if (t.int32_data_size() == 1) return t.int32_data(0);
      if (t.raw_data().size() == 4) {
        int32_t v;
        std::memcpy(&v, t.raw_data().data(), 4);
        return v;
      }
    }
    return std::nullopt;
  };
  auto it = data.find(name);
  if (it != data.end() && it->second.dim_size() <= 1) {
    if (it->second.dim_size() == 1 && it->second.dim(0).has_dim_value()) return it->second.dim(0).dim_value();
  }
  for (const auto& t : g.initializer())
    if (t.name() == name) return from_tensor(t);
  for (const auto& n : g.node())
    if (n.op_type() == "Constant" && n.output_size() == 1 && n.output(0) == name)
      for (const auto& a : n.attribute())
        if (a.name() == "value" && a.has_t()) return from_tensor(a.t());
  return std::nullopt;
}

bool has_known_shape(const onnx::GraphProto& g, const std::string& name) {
  for (const auto& vi : g.value_info())
    if (vi.name() == name && vi.type().tensor_type().has_shape()) {
      for (const auto& d : vi.type().tensor_type().shape().dim())
        if (!d.has_dim_value()) return false;
      return true;
    }
  return false;
}

// ONNX 1.12's data propagation does not cover Range, which every
// position-id computation (arange(seq)) goes through. Size Range outputs whose
// start/limit/delta are known, so inference can carry on past them.
int size_range_outputs(onnx::GraphProto& g, const std::unordered_map<std::string, onnx::TensorShapeProto>& data) {
  int fixed = 0;
  for (const auto& n : g.node()) {
    if (n.op_type() != "Range" || n.input_size() != 3 || n.output_size() != 1) continue;
    if (has_known_shape(g, n.output(0))) continue;
    auto start = known_int_scalar(n.input(0), g, data);
    auto limit = known_int_scalar(n.input(1), g, data);
    auto delta = known_int_scalar(n.input(2), g, data);
    if (!start || !limit || !delta || *delta == 0) continue;
    const int64_t span = *limit - *start;
    const int64_t count = std::max<int64_t>(0, (span + *delta + (*delta > 0 ? -1 : 1)) / *delta);
    onnx::ValueInfoProto* vi = nullptr;
    for (auto& v : *g.mutable_value_info())
      if (v.name() == n.output(0)) vi = &v;
    if (!vi) {
      vi = g.add_value_info();
      vi->set_name(n.output(0));
    }
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    if (!tt->has_elem_type()) tt->set_elem_type(onnx::TensorProto::INT64);
    tt->mutable_shape()->clear_dim();
    tt->mutable_shape()->add_dim()->set_dim_value(count);
    ++fixed;
  }
  return fixed;
}

// ONNX 1.12's per-op inference functions assume well-formed input: a Conv
// whose weight has no known type dereferences a null pointer (found by
// fuzzing). This registry hands out copies of the schemas whose inference
// first checks that every required input has a type, and fails that node
// cleanly (an inference error, reported as a notice) otherwise.
const onnx::TensorShapeProto* known_shape(onnx::InferenceContext& ctx, size_t i) {
  if (i >= ctx.getNumInputs()) return nullptr;
  const onnx::TypeProto* t = ctx.getInputType(i);
  if (!t || !t->has_tensor_type() || !t->tensor_type().has_shape()) return nullptr;
  return &t->tensor_type().shape();
}

size_t ints_size(onnx::InferenceContext& ctx, const char* name, size_t fallback) {
  const onnx::AttributeProto* a = ctx.getAttribute(name);
  return a ? size_t(a->ints_size()) : fallback;
}

// ONNX's convPoolShapeInference indexes dims by attribute lengths and the
// weight's rank without checking them against each other, and divides by the
// strides (a stride of 0 was a SIGFPE, found by tools/fuzz.sh analyze).
void check_conv_pool(onnx::InferenceContext& ctx, int weight_index) {
  const auto* x = known_shape(ctx, 0);
  const auto* w = weight_index >= 0 ? known_shape(ctx, size_t(weight_index)) : nullptr;
  for (const char* name : {"kernel_shape", "strides", "dilations"})
    if (const onnx::AttributeProto* a = ctx.getAttribute(name))
      for (int64_t v : a->ints())
        if (v < 1) fail_shape_inference(name, " holds ", v, " (each must be >= 1)");
  if (const onnx::AttributeProto* g = ctx.getAttribute("group"))
    if (g->i() < 1) fail_shape_inference("group is ", g->i(), " (must be >= 1)");
  if (w && w->dim_size() < 3) fail_shape_inference("weight rank ", w->dim_size(), " is below 3");
  if (!x) return;
  const int rank = x->dim_size();
  if (rank < 3) fail_shape_inference("input rank ", rank, " is below 3");
  const size_t spatial = size_t(rank - 2);
  if (w && w->dim_size() != rank) fail_shape_inference("weight rank differs from input rank");
  if (ints_size(ctx, "kernel_shape", spatial) != spatial || ints_size(ctx, "strides", spatial) != spatial ||
      ints_size(ctx, "dilations", spatial) != spatial || ints_size(ctx, "pads", 2 * spatial) != 2 * spatial ||
      ints_size(ctx, "output_padding", spatial) != spatial || ints_size(ctx, "output_shape", spatial) != spatial)
    fail_shape_inference("kernel_shape/strides/dilations/pads do not match the input rank");
}

// The conv/pool weight input from the op's record (-1: a pool, no weight;
// OpTraits::kNotConvPool: not a conv/pool op).
int conv_pool_weight_index(const std::string& op, const std::string& domain) {
  const cost::OpRecord* record = cost::find_op(domain, op);
  return record ? record->traits.conv_pool_weight_input : cost::OpTraits::kNotConvPool;
}

// The newest default-domain opset ONNX 1.12's schemas define; models up to
// kNewestDefaultOpset load (validate_opsets), ONNX 1.12's newest schema of
// each op standing for the op's later versions where those only widened its
// types (Cast 19/21, Reshape 19/21, ... opset 22's bfloat16 everywhere).
constexpr int kOnnx112DefaultOpset = 17;

// Reduce ops whose axes moved from an attribute to input 1 in opset 18
// (ReduceSum did in 13): ReduceSum-13's inference has their signature.
bool reduce_with_axes_input_from_18(const std::string& op) {
  static const std::set<std::string> kOps = {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
                                             "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSumSquare"};
  return kOps.count(op) > 0;
}

// What ONNX 1.12's inference of an op would get wrong on a node of a later
// opset: the node fails inference (a notice; its shapes stay unknown)
// instead of getting shapes of the op's older meaning.
void refuse_newer_features(onnx::InferenceContext& ctx, const std::string& op) {
  auto attr_ints_not_all = [&](const char* name, int64_t value) {
    const onnx::AttributeProto* a = ctx.getAttribute(name);
    if (!a) return false;
    for (int64_t v : a->ints())
      if (v != value) return true;
    return false;
  };
  auto attr_int_not = [&](const char* name, int64_t value) {
    const onnx::AttributeProto* a = ctx.getAttribute(name);
    return a && a->i() != value;
  };
  const bool has_input_3 = ctx.getNumInputs() > 3 && ctx.getInputType(3) != nullptr;
  if (op == "AveragePool" && attr_ints_not_all("dilations", 1))
    fail_shape_inference("AveragePool dilations (opset 19) are newer than this build's schemas");
  if (op == "LpPool" && attr_int_not("ceil_mode", 0))
    fail_shape_inference("LpPool ceil_mode (opset 18) is newer than this build's schemas");
  if (op == "Pad" && has_input_3) fail_shape_inference("Pad's axes input (opset 18) is newer than this build's schemas");
  if (op == "Resize" && (ctx.getAttribute("axes") || ctx.getAttribute("keep_aspect_ratio_policy")))
    fail_shape_inference("Resize axes / keep_aspect_ratio_policy (opset 18) are newer than this build's schemas");
  if (op == "DFT" && ctx.getNumInputs() > 2 && ctx.getInputType(2) != nullptr)
    fail_shape_inference("DFT's axis input (opset 20) is newer than this build's schemas");
  if (op == "Split" && ctx.getAttribute("num_outputs") && ctx.getNumInputs() > 1 && ctx.getInputType(1) != nullptr)
    fail_shape_inference("Split with both num_outputs and split");
}

class GuardedSchemaRegistry final : public onnx::ISchemaRegistry {
 public:
  const onnx::OpSchema* GetSchema(const std::string& key, const int max_version,
                                  const std::string& domain) const override {
    // A default-domain opset newer than ONNX 1.12's (18-23): ONNX 1.12's
    // newest schema of the op stands for it, except where the op changed
    // (newer_opset_schema below).
    const bool newer = normalize_domain(domain).empty() && max_version > kOnnx112DefaultOpset;
    const bool axes_input = newer && reduce_with_axes_input_from_18(key);
    const onnx::OpSchema* base = axes_input ? onnx::OpSchemaRegistry::Schema("ReduceSum", 13, "")
                                            : onnx::OpSchemaRegistry::Schema(key, max_version, domain);
    if (!base) return record_schema(key, max_version, domain);
    const std::string newer_key = newer ? key + "@" + std::to_string(max_version) : std::string();
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = cache_.find({base, newer_key});
    if (it != cache_.end()) return it->second.get();
    auto copy = std::make_unique<onnx::OpSchema>(*base);
    // Only a schema with an inference function of its own gets the guarded
    // one: GetTypeAndShapeInferenceFunction() returns a do-nothing function
    // for the others, and wrapping it hid the function body ONNX infers
    // function ops (GreaterOrEqual, LessOrEqual, MeanVarianceNormalization)
    // through, leaving their outputs untyped.
    // An old schema ONNX leaves without inference (Relu-1, Concat-1, ...)
    // gets modelstat's (legacy_inference.hpp), guarded the same way.
    // An old schema whose own function stops short of what it defines
    // (Slice-1's negative starts, ...) is completed after it.
    std::optional<onnx::InferenceFunction> own;
    if (base->has_type_and_shape_inference_function()) own = base->GetTypeAndShapeInferenceFunction();
    else own = legacy_inference(*base);
    if (own) {
      onnx::InferenceFunction fn = *own;
      if (auto completion = legacy_completion(*base))
        fn = [first = *own, then = *completion](onnx::InferenceContext& ctx) {
          first(ctx);
          then(ctx);
        };
      std::vector<bool> required;
      for (const auto& p : base->inputs()) required.push_back(p.GetOption() != onnx::OpSchema::Optional);
      const int weight_index = conv_pool_weight_index(key, domain);
      copy->TypeAndShapeInferenceFunction([fn, required, weight_index, newer, key](onnx::InferenceContext& ctx) {
        if (weight_index > -2) check_conv_pool(ctx, weight_index);
        if (newer) refuse_newer_features(ctx, key);
        const size_t n = ctx.getNumInputs();
        for (size_t i = 0; i < n; ++i) {
          const bool is_required = i < required.size() ? required[i] : (!required.empty() && required.back());
          const onnx::TypeProto* type = ctx.getInputType(i);
          if (is_required && (type == nullptr || type->value_case() == onnx::TypeProto::VALUE_NOT_SET))
            fail_shape_inference("input ", i, " has no known type");
        }
        fn(ctx);
      });
    }
    const onnx::OpSchema* result = copy.get();
    cache_.emplace(std::make_pair(base, newer_key), std::move(copy));
    return result;
  }

 private:
  // ONNX 1.12 has no schema for contrib ops (com.microsoft) nor for the
  // standard ops of later opsets: one whose record has a shape rule, or says
  // its output has input 0's type and shape, gets a schema of any number of
  // inputs and outputs whose inference is that rule, so that shape inference
  // carries shapes through it.
  const onnx::OpSchema* record_schema(const std::string& key, int max_version, const std::string& domain) const {
    const cost::OpRecord* record = cost::find_rule(domain, key, max_version);
    if (!record || (!record->traits.same_shape_as_input && !record->traits.shape_rule)) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    auto& schema = record_schemas_[record];
    if (!schema) {
      schema = std::make_unique<onnx::OpSchema>(key, __FILE__, __LINE__);
      const cost::ShapeFn rule = record->traits.shape_rule;
      const int weight_index = record->traits.conv_pool_weight_input;
      schema->SetDomain(domain)
          .SinceVersion(int(record->key.since_version))
          .Input(0, "inputs", "", "T", onnx::OpSchema::Variadic, false, 0)
          .Output(0, "outputs", "", "T", onnx::OpSchema::Variadic, false, 0)
          .TypeConstraint("T", onnx::OpSchema::all_tensor_types(), "")
          .TypeAndShapeInferenceFunction([rule, weight_index](onnx::InferenceContext& ctx) {
            if (weight_index > -2) check_conv_pool(ctx, weight_index);  // FusedConv, as Conv
            if (rule) rule(ctx);
            else onnx::propagateShapeAndTypeFromFirstInput(ctx);
          });
    }
    return schema.get();
  }

  mutable std::mutex mutex_;
  // Keyed by the schema and, for a newer default-domain opset, "Op@version".
  mutable std::map<std::pair<const onnx::OpSchema*, std::string>, std::unique_ptr<onnx::OpSchema>> cache_;
  mutable std::unordered_map<const cost::OpRecord*, std::unique_ptr<onnx::OpSchema>> record_schemas_;
};

const onnx::ISchemaRegistry* guarded_registry() {
  static const GuardedSchemaRegistry registry;
  return &registry;
}

void run_inference(onnx::ModelProto& m, std::unordered_map<std::string, onnx::TensorShapeProto>* data,
                   std::vector<std::string>& errors) {
  // check_type off (exporters disagree on types more often than on shapes),
  // error_mode 1 so node errors are reported (after the pass, which still
  // annotates every node it could), data propagation on for Shape->Reshape chains.
  onnx::ShapeInferenceOptions opts(false, 1, true);
  errors.clear();
  try {
    onnx::shape_inference::InferShapes(m, guarded_registry(), opts, data);
  } catch (const std::exception& e) {
    std::string msg = e.what();
    size_t pos = 0;
    while (pos < msg.size() && errors.size() < 5) {
      size_t nl = msg.find('\n', pos);
      std::string line = msg.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      if (!line.empty()) errors.push_back("shape inference: " + line);
      if (nl == std::string::npos) break;
      pos = nl + 1;
    }
  }
}

bool fully_known(const onnx::TypeProto& type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return false;
  for (const auto& d : type.tensor_type().shape().dim())
    if (!d.has_dim_value()) return false;
  return true;
}

// Sized values and node outputs of a graph and, recursively, its subgraphs
// (If branches, Loop and Scan bodies): the rounds below stop when they meet.
int64_t count_known(const onnx::GraphProto& g) {
  int64_t n = 0;
  for (const auto& vi : g.value_info()) n += fully_known(vi.type());
  for (const auto& vi : g.output()) n += fully_known(vi.type());
  for (const auto& node : g.node())
    for (const auto& a : node.attribute()) {
      if (a.has_g()) n += count_known(a.g());
      for (const auto& sub : a.graphs()) n += count_known(sub);
    }
  return n;
}

int64_t count_node_outputs(const onnx::GraphProto& g) {
  int64_t n = 0;
  for (const auto& node : g.node()) {
    for (const auto& o : node.output()) n += !o.empty();
    for (const auto& a : node.attribute()) {
      if (a.has_g()) n += count_node_outputs(a.g());
      for (const auto& sub : a.graphs()) n += count_node_outputs(sub);
    }
  }
  return n;
}

// Where a subgraph sits below the model's graph: (node, attribute, entry of
// `graphs` or -1 for `g`) at each level.
struct SubgraphStep {
  int node, attribute, entry;
};
using SubgraphPath = std::vector<SubgraphStep>;

onnx::GraphProto* graph_at(onnx::GraphProto* g, const SubgraphPath& path) {
  for (const auto& step : path) {
    auto* a = g->mutable_node(step.node)->mutable_attribute(step.attribute);
    g = step.entry < 0 ? a->mutable_g() : a->mutable_graphs(step.entry);
  }
  return g;
}

class ShapeValueFolder {
 public:
  explicit ShapeValueFolder(const onnx::ModelProto& m) : m_(m) {}

  // Rewires, in a copy of the model, the unsized nodes of `g` (at `path`)
  // that read an integer value evaluated here to read it as an initializer;
  // then the same in every subgraph (their shape chains: Silero VAD's Pad
  // amounts inside an If branch).
  void rewire(const onnx::GraphProto& g, SubgraphPath& path, const ScopeValues* outer = nullptr) {
    std::unordered_map<std::string, const onnx::TypeProto*> types;
    for (const auto& vi : g.value_info()) types[vi.name()] = &vi.type();
    for (const auto& vi : g.output()) types[vi.name()] = &vi.type();
    auto unsized = [&](const onnx::NodeProto& node) {
      for (const auto& out : node.output()) {
        auto it = types.find(out);
        if (!out.empty() && (it == types.end() || !fully_known(*it->second))) return true;
      }
      return false;
    };
    bool any_unsized = false, any_subgraph = false;
    for (const auto& node : g.node()) {
      any_unsized = any_unsized || unsized(node);
      for (const auto& a : node.attribute()) any_subgraph = any_subgraph || a.has_g() || a.graphs_size() > 0;
    }
    // What this graph knows (its enclosing graphs' values included), for its
    // subgraphs: Silero VAD's branches read the shape of the graph's input.
    ScopeValues known;
    const ScopeValues* scope = outer;
    if (any_unsized || any_subgraph) {
      const auto values = evaluate_int_values(g, outer, &known);
      scope = &known;
      if (any_unsized) rewire_nodes(g, path, unsized, values);
    }
    for (int i = 0; i < g.node_size(); ++i)
      for (int k = 0; k < g.node(i).attribute_size(); ++k) {
        const auto& a = g.node(i).attribute(k);
        if (a.has_g()) {
          path.push_back({i, k, -1});
          rewire(a.g(), path, scope);
          path.pop_back();
        }
        for (int e = 0; e < a.graphs_size(); ++e) {
          path.push_back({i, k, e});
          rewire(a.graphs(e), path, scope);
          path.pop_back();
        }
      }
  }

  bool rewired() const { return copy_ != nullptr; }
  onnx::ModelProto& copy() { return *copy_; }

 private:
  template <typename Unsized>
  void rewire_nodes(const onnx::GraphProto& g, const SubgraphPath& path, const Unsized& unsized,
                    const std::unordered_map<std::string, IntValue>& values) {
    if (values.empty()) return;
    std::unordered_set<std::string> initializer_names;
    for (const auto& t : g.initializer()) initializer_names.insert(t.name());
    std::unordered_map<std::string, std::string> folded_name;
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& node = g.node(i);
      if (!unsized(node)) continue;
      for (int k = 0; k < node.input_size(); ++k) {
        const std::string& in = node.input(k);
        if (in.empty() || initializer_names.count(in)) continue;
        auto v = values.find(in);
        if (v == values.end()) continue;
        if (!copy_) copy_ = std::make_unique<onnx::ModelProto>(m_);
        onnx::GraphProto* target = graph_at(copy_->mutable_graph(), path);
        auto [fn, inserted] = folded_name.emplace(in, "__modelstat_folded_" + std::to_string(counter_));
        if (inserted) {
          ++counter_;
          auto* t = target->add_initializer();
          t->set_name(fn->second);
          t->set_data_type(v->second.elem_type);
          for (int64_t d : v->second.dims) t->add_dims(d);
          for (int64_t x : v->second.values) {
            if (v->second.elem_type == onnx::TensorProto::INT64) t->add_int64_data(x);
            else t->add_int32_data(int32_t(x));  // int32/int16/int8/uint8/uint16/bool are stored as int32_data
          }
          if (v->second.elem_type == onnx::TensorProto::UINT32) {
            t->clear_int32_data();
            for (int64_t x : v->second.values) t->add_uint64_data(uint64_t(x));
          }
        }
        target->mutable_node(i)->set_input(k, fn->second);
      }
    }
  }

  const onnx::ModelProto& m_;
  std::unique_ptr<onnx::ModelProto> copy_;
  int64_t counter_ = 0;
};

// Takes into `g` every shape `inferred` (the same graph in the rewired copy)
// knows better; recurses into subgraphs. Returns whether any changed.
bool take_shapes(onnx::GraphProto& g, const onnx::GraphProto& inferred) {
  std::unordered_map<std::string, const onnx::TypeProto*> found;
  for (const auto& vi : inferred.value_info()) found[vi.name()] = &vi.type();
  for (const auto& vi : inferred.output()) found[vi.name()] = &vi.type();
  std::unordered_set<std::string> known_names, updated;
  for (const auto& vi : g.value_info()) known_names.insert(vi.name());
  for (const auto& vi : g.output()) known_names.insert(vi.name());
  for (const auto& t : g.initializer()) known_names.insert(t.name());
  auto better = [&](onnx::ValueInfoProto& vi) {
    auto it = found.find(vi.name());
    if (it != found.end() && fully_known(*it->second) && !fully_known(vi.type())) {
      *vi.mutable_type() = *it->second;
      updated.insert(vi.name());
    }
  };
  for (auto& vi : *g.mutable_value_info()) better(vi);
  for (auto& vi : *g.mutable_output()) better(vi);
  for (const auto& [name, type] : found) {
    if (updated.count(name) || name.rfind("__modelstat_folded_", 0) == 0 || !fully_known(*type)) continue;
    if (known_names.count(name)) continue;
    auto* vi = g.add_value_info();
    vi->set_name(name);
    *vi->mutable_type() = *type;
    updated.insert(name);
  }
  bool changed = !updated.empty();
  for (int i = 0; i < g.node_size() && i < inferred.node_size(); ++i)
    for (int k = 0; k < g.node(i).attribute_size() && k < inferred.node(i).attribute_size(); ++k) {
      auto* a = g.mutable_node(i)->mutable_attribute(k);
      const auto& b = inferred.node(i).attribute(k);
      if (a->has_g() && b.has_g()) changed = take_shapes(*a->mutable_g(), b.g()) || changed;
      for (int e = 0; e < a->graphs_size() && e < b.graphs_size(); ++e)
        changed = take_shapes(*a->mutable_graphs(e), b.graphs(e)) || changed;
    }
  return changed;
}

// Shape subgraphs (Shape -> Gather -> Concat -> Where -> Expand, Slice bounds
// from Div/Mul chains, ...) are constants once the inputs are bound, but ONNX
// 1.12's data propagation covers only a few of their ops. Evaluate their
// integer values ourselves, then re-run inference on a copy in which the
// nodes that are still unsized read those values as initializers, and take
// the shapes it finds. The model itself keeps its structure.
bool fold_shape_values(onnx::ModelProto& m, std::vector<std::string>& errors) {
  ShapeValueFolder folder(m);
  SubgraphPath path;
  folder.rewire(m.graph(), path);
  if (!folder.rewired()) return false;
  std::unordered_map<std::string, onnx::TensorShapeProto> data;
  run_inference(folder.copy(), &data, errors);
  return take_shapes(*m.mutable_graph(), folder.copy().graph());
}

// An If whose condition is known before running (a constant, or folded from
// shape values in its graph) or chosen with --branch produces what that
// branch produces. ONNX's If inference merges both branches, and a rank or
// dim that differs between them leaves the output unknown (Silero VAD's
// decoder squeezes in one branch only), so the selected branch's output
// types are taken for the If's outputs that are not fully known yet, in
// every graph and subgraph. Returns whether any changed.
bool take_selected_branch_shapes(onnx::GraphProto& g, const LoadOptions& options, const ScopeValues* outer = nullptr) {
  bool changed = false;
  bool any_subgraph = false;
  for (const auto& node : g.node())
    for (const auto& a : node.attribute()) any_subgraph = any_subgraph || a.has_g() || a.graphs_size() > 0;
  ScopeValues known;
  const ScopeValues* scope = outer;
  if (any_subgraph) {
    const auto values = evaluate_int_values(g, outer, &known);
    scope = &known;
    std::unordered_map<std::string, onnx::ValueInfoProto*> infos;
    for (auto& vi : *g.mutable_value_info()) infos[vi.name()] = &vi;
    for (auto& vi : *g.mutable_output()) infos[vi.name()] = &vi;
    for (const auto& node : g.node()) {
      if (!node.domain().empty() || node.op_type() != "If" || node.input_size() < 1) continue;
      std::optional<bool> then_branch;
      if (auto it = options.branches.find(node.name()); !node.name().empty() && it != options.branches.end())
        then_branch = it->second;
      else if (auto v = values.find(node.input(0)); v != values.end() && v->second.values.size() == 1)
        then_branch = v->second.values[0] != 0;
      if (!then_branch) continue;
      const onnx::GraphProto* branch = nullptr;
      for (const auto& a : node.attribute())
        if (a.name() == (*then_branch ? "then_branch" : "else_branch") && a.has_g()) branch = &a.g();
      if (!branch) continue;
      // A branch output's type: on the output itself, or (an output declared
      // without a type) where inference put it, in the branch's value_info.
      auto branch_type = [branch](int k) -> const onnx::TypeProto* {
        const auto& o = branch->output(k);
        if (o.has_type() && fully_known(o.type())) return &o.type();
        for (const auto& vi : branch->value_info())
          if (vi.name() == o.name() && fully_known(vi.type())) return &vi.type();
        return nullptr;
      };
      for (int k = 0; k < node.output_size() && k < branch->output_size(); ++k) {
        const std::string& out = node.output(k);
        const onnx::TypeProto* found = branch_type(k);
        if (out.empty() || !found) continue;
        const onnx::TypeProto& type = *found;
        auto it = infos.find(out);
        if (it != infos.end() && fully_known(it->second->type())) continue;
        onnx::ValueInfoProto* vi = it != infos.end() ? it->second : g.add_value_info();
        vi->set_name(out);
        *vi->mutable_type() = type;
        infos[out] = vi;
        changed = true;
      }
    }
  }
  for (auto& node : *g.mutable_node())
    for (auto& a : *node.mutable_attribute()) {
      if (a.has_g()) changed = take_selected_branch_shapes(*a.mutable_g(), options, scope) || changed;
      for (auto& sub : *a.mutable_graphs()) changed = take_selected_branch_shapes(sub, options, scope) || changed;
    }
  return changed;
}

void infer_shapes(onnx::ModelProto& m, const LoadOptions& options, std::vector<std::string>& notices) {
  std::unordered_map<std::string, onnx::TensorShapeProto> data;
  std::vector<std::string> errors;
  run_inference(m, &data, errors);
  // A selected branch's shapes reach its If's outputs, then (inference again)
  // what reads them, which may be a branch output one level up: once per
  // nesting level, a few levels at most.
  auto settle_branches = [&] {
    for (int level = 0; level < 8 && take_selected_branch_shapes(*m.mutable_graph(), options); ++level) {
      data.clear();
      run_inference(m, &data, errors);
    }
  };
  settle_branches();
  // Each round can reveal values the next one needs: a chain of Shape ->
  // arithmetic -> Slice per transformer layer (GPT-2's causal-mask slice)
  // takes a round per layer. Rounds stop when one reveals nothing.
  const int64_t node_outputs = count_node_outputs(m.graph());
  for (int round = 0; round < kMaxShapeRounds; ++round) {
    const int64_t before = count_known(m.graph());
    if (before >= node_outputs) break;  // every node output is sized: nothing to fold
    if (size_range_outputs(*m.mutable_graph(), data) > 0) {
      data.clear();
      run_inference(m, &data, errors);
    }
    std::vector<std::string> fold_errors;
    if (fold_shape_values(m, fold_errors)) {
      // Propagate what the fold found through the real graph.
      data.clear();
      run_inference(m, &data, errors);
    }
    settle_branches();
    if (count_known(m.graph()) == before) break;
  }
  notices.insert(notices.end(), errors.begin(), errors.end());
}

}  // namespace

namespace {

std::atomic<int64_t> g_sources_read{0};

}  // namespace

std::shared_ptr<const ModelSource> read_model_bytes(const uint8_t* data, size_t size, const std::string& base_dir,
                                                    const std::string& display_path) {
  try {
    if (size == 0) throw Error(ErrorKind::Input, "empty file: not a valid ONNX model");
    auto source = std::make_shared<ModelSource>();
    source->stripped = strip_tensor_payloads(data, size, kKeepPayloadBytes);
    source->file_size = int64_t(size);
    source->base_dir = base_dir;
    source->display_path = display_path;
    ++g_sources_read;
    return source;
  } catch (Error& e) {
    if (e.file().empty() && !display_path.empty())
      throw Error(e.kind(), e.message(), display_path, e.node(), e.op());
    throw;
  }
}

int64_t model_sources_read() { return g_sources_read.load(); }

Model bind_model_source(const ModelSource& source, const LoadOptions& options) {
  const std::string& display_path = source.display_path;
  try {
    StageTimer timer;
    const std::string& stripped = source.stripped.bytes;
    // On an arena: a 100k-node graph is 100k small messages, allocated and
    // freed in bulk instead of one by one.
    google::protobuf::Arena arena;
    onnx::ModelProto& proto = *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
    if (stripped.size() > size_t(INT32_MAX) || !proto.ParseFromArray(stripped.data(), int(stripped.size())))
      throw Error(ErrorKind::Input, "not a valid ONNX file: protobuf parsing failed (truncated or not a model)");
    if (!proto.has_graph())
      throw Error(ErrorKind::Input, "not a valid ONNX file: no graph (is this an ONNX model?)");
    if (proto.ir_version() <= 0)
      throw Error(ErrorKind::Input, "not a valid ONNX file: missing or invalid ir_version");
    // Bound before anything reorders nodes; keyed by address from here on.
    const PayloadTable payloads = bind_payload_table(proto, source.stripped.tensors);

    Model model;
    model.path = display_path;
    model.file_size_bytes = source.file_size;
    model.ir_version = proto.ir_version();
    model.producer_name = proto.producer_name();
    model.producer_version = proto.producer_version();
    for (const auto& o : proto.opset_import()) model.opsets.push_back({normalize_domain(o.domain()), o.version()});

    timer.lap("parse protobuf");
    validate_opsets(proto, options, model.notices);
    check_and_order_graph(*proto.mutable_graph(), {}, 0);
    timer.lap("validate + order");
    // A node has inference when the registry shape inference asks hands out a
    // schema for it (ONNX's, or one made from a record's shape rule).
    bind_inputs(*proto.mutable_graph(), options, model.notices, [&model](const onnx::NodeProto& n) {
      const std::string domain = normalize_domain(n.domain());
      int version = 0;
      for (const auto& o : model.opsets)
        if (o.domain == domain) version = int(o.version);
      return guarded_registry()->GetSchema(n.op_type(), version, domain) != nullptr;
    });
    infer_shapes(proto, options, model.notices);
    timer.lap("bind + shape inference");

    ExternalDataPolicy policy;
    policy.base_dir = source.base_dir;
    policy.notices = &model.notices;
    policy.payloads = &payloads;
    policy.branches = &options.branches;
    policy.trip_counts = &options.trip_counts;
    model.graph = build_graph(proto.graph(), policy, 0);
    for (const auto& [name, then] : options.branches)
      if (!policy.control_names_used.count(name))
        model.notices.push_back("--branch " + name + " matches no If node");
    for (const auto& [name, trips] : options.trip_counts)
      if (!policy.control_names_used.count(name))
        model.notices.push_back("--trip-count " + name + " matches no Loop node");
    timer.lap("build IR");
    return model;
  } catch (Error& e) {
    if (e.file().empty() && !display_path.empty())
      throw Error(e.kind(), e.message(), display_path, e.node(), e.op());
    throw;
  }
}

Model load_model_bytes(const uint8_t* data, size_t size, const LoadOptions& options, const std::string& base_dir,
                       const std::string& display_path) {
  StageTimer timer;
  const std::shared_ptr<const ModelSource> source = read_model_bytes(data, size, base_dir, display_path);
  timer.lap("strip payloads");
  return bind_model_source(*source, options);
}

std::shared_ptr<const ModelSource> read_model_file(const std::string& path) {
  MappedFile file(path);
  std::error_code ec;
  std::string base = std::filesystem::absolute(std::filesystem::path(path), ec).parent_path().string();
  if (base.empty()) base = ".";
  return read_model_bytes(file.data(), file.size(), base, path);
}

Model load_model_file(const std::string& path, const LoadOptions& options) {
  return bind_model_source(*read_model_file(path), options);
}

}  // namespace modelstat::loader

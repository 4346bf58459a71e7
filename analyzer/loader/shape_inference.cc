// Load stage: shape inference to a fixed point (load_stages.hpp,
// infer_shapes): ONNX's inference, Range sizes, the selected If branch's
// shapes and folded shape values (value_rewire.cc), round after round.
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "analyzer/loader/load_stages.hpp"
#include "analyzer/loader/shape_values.hpp"

namespace modelstat::loader {

namespace {

// Inference and shape-value folding rounds (see infer_shapes).
constexpr int kMaxShapeRounds = 256;

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
    const auto values = evaluate_const_values(g, outer, &known);
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

}  // namespace

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

}  // namespace modelstat::loader

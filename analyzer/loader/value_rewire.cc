// Load stage: integer shape values folded by shape_values.hpp fed back to
// ONNX's shape inference (load_stages.hpp, fold_shape_values).
#include <onnx/onnx_pb.h>

#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "analyzer/loader/load_stages.hpp"
#include "analyzer/loader/shape_values.hpp"

namespace modelstat::loader {

namespace {

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
      const auto values = evaluate_const_values(g, outer, &known);
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
                    const std::unordered_map<std::string, ConstValue>& values) {
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
          *target->add_initializer() = to_tensor_proto(v->second, fn->second);
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

}  // namespace

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

}  // namespace modelstat::loader

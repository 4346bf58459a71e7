// Load stage: the structural checks that must pass before shape inference
// (onnx_ir.hpp, check_and_order_graph): every input defined, no name
// defined twice, no cycle; nodes put in topological order.
#include <algorithm>
#include <queue>
#include <string_view>

#include "analyzer/loader/name_map.hpp"
#include "analyzer/loader/onnx_ir.hpp"
#include "modelstat/error.hpp"

namespace modelstat::loader {

namespace {

// Names by view into the parsed model's own strings: nodes are reordered by
// swapping pointers, so the strings stay where they are.
using NameSet = NameMap<bool>;
using Producers = NameMap<int>;

// What a subgraph may read from the graphs around it, innermost first.
struct OuterScope {
  const NameSet* defined;       // inputs and initializers
  const Producers* produced;    // node outputs
  const OuterScope* parent;
  bool contains(std::string_view name) const {
    for (const OuterScope* s = this; s; s = s->parent)
      if (s->defined->contains(name) || s->produced->contains(name)) return true;
    return false;
  }
};

[[noreturn]] void node_error(const onnx::NodeProto& n, int index, const std::string& message) {
  throw Error(ErrorKind::Input, message, {}, node_label(n, index), n.op_type());
}

// Puts the nodes in `order` by swapping element pointers: every NodeProto
// (and the TensorProtos inside it, which the payload table knows by address)
// stays where it is in memory.
void permute(onnx::GraphProto& graph, const std::vector<int>& order) {
  const int n = graph.node_size();
  std::vector<int> position(size_t(n), 0), at(size_t(n), 0);  // node -> slot, slot -> node
  for (int i = 0; i < n; ++i) position[size_t(i)] = at[size_t(i)] = i;
  for (int k = 0; k < n; ++k) {
    const int want = order[size_t(k)];
    const int from = position[size_t(want)];
    if (from == k) continue;
    graph.mutable_node()->SwapElements(k, from);
    const int displaced = at[size_t(k)];
    at[size_t(from)] = displaced;
    position[size_t(displaced)] = from;
    at[size_t(k)] = want;
    position[size_t(want)] = k;
  }
}

// `hashes`: filled for this graph (the top level), else null.
void check_and_order(onnx::GraphProto& graph, const OuterScope* outer, int depth, NameHashes* hashes) {
  if (depth > kMaxGraphDepth) throw Error(ErrorKind::Input, "subgraphs nested more than 64 levels deep");
  NameSet defined(size_t(graph.input_size() + graph.initializer_size()));
  for (const auto& i : graph.input()) defined.try_emplace(i.name(), true);
  for (const auto& t : graph.initializer()) defined.try_emplace(t.name(), true);
  for (const auto& t : graph.sparse_initializer()) defined.try_emplace(t.values().name(), true);
  auto available = [&](std::string_view name) { return defined.contains(name) || (outer && outer->contains(name)); };

  const int n = graph.node_size();
  size_t outputs = 0;
  for (const auto& node : graph.node()) outputs += size_t(node.output_size());
  Producers producer(outputs);
  // Each name hashed once, here, for this stage and the later ones.
  NameHashes local;
  NameHashes& h_of = hashes ? *hashes : local;
  h_of.layout(graph);
  for (int i = 0; i < std::min(n, kPrefetchAhead); ++i) h_of.set_node(graph.node(i), i);
  for (int i = 0; i < n; ++i) {
    if (i + kPrefetchAhead < n) {
      const auto& ahead = graph.node(i + kPrefetchAhead);
      h_of.set_node(ahead, i + kPrefetchAhead);
      const uint32_t* oh = h_of.outputs(ahead, i + kPrefetchAhead);
      for (int k = 0; k < ahead.output_size(); ++k) producer.prefetch_hash(oh[k]);
    }
    const auto& node_i = graph.node(i);
    const uint32_t* out_hashes = h_of.outputs(node_i, i);
    for (int k = 0; k < node_i.output_size(); ++k) {
      const std::string& o = node_i.output(k);
      if (o.empty()) continue;
      const uint32_t h = out_hashes[k];  // one hash for both tables
      // A subgraph may reuse an enclosing graph's name; not its own input's.
      if (defined.contains(o, h) && !(outer && outer->contains(o)))
        node_error(graph.node(i), i, "output '" + o + "' redefines a graph input or initializer");
      auto [first, inserted] = producer.try_emplace(o, h, i);
      if (!inserted)
        node_error(graph.node(i), i, "output '" + o + "' is also produced by node '" +
                                         node_label(graph.node(*first), *first) + "'");
    }
  }

  // Every input defined; most files are in order already (each node reads
  // only earlier nodes' outputs), and then nothing moves.
  bool sorted = true;
  for (int i = 0; i < n; ++i) {
    const auto& node = graph.node(i);
    if (i + kPrefetchAhead < n) {
      const uint32_t* ih = h_of.inputs(i + kPrefetchAhead);
      for (int k = 0; k < graph.node(i + kPrefetchAhead).input_size(); ++k) producer.prefetch_hash(ih[k]);
    }
    const uint32_t* in_hashes = h_of.inputs(i);
    for (int k = 0; k < node.input_size(); ++k) {
      const std::string& in = node.input(k);
      if (in.empty()) continue;  // omitted optional input
      if (const int* p = producer.find(in, in_hashes[k])) {
        if (*p == i) node_error(node, i, "graph has a cycle: node reads its own output '" + in + "'");
        sorted = sorted && *p < i;
      } else if (!available(in)) {
        node_error(node, i, "reads undefined tensor '" + in + "' (no graph input, initializer or node produces it)");
      }
    }
  }
  if (!sorted) {
    // Kahn's algorithm, stable: among ready nodes, the one earliest in the file first.
    std::vector<int> pending(size_t(n), 0);
    std::vector<std::vector<int>> users(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
      for (const auto& in : graph.node(i).input()) {
        if (in.empty()) continue;
        if (const int* p = producer.find(in)) {
          users[size_t(*p)].push_back(i);
          pending[size_t(i)]++;
        }
      }
    std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
    for (int i = 0; i < n; ++i)
      if (pending[size_t(i)] == 0) ready.push(i);
    std::vector<int> order;
    order.reserve(size_t(n));
    while (!ready.empty()) {
      const int i = ready.top();
      ready.pop();
      order.push_back(i);
      for (int u : users[size_t(i)])
        if (--pending[size_t(u)] == 0) ready.push(u);
    }
    if (int(order.size()) != n)
      for (int i = 0; i < n; ++i)
        if (pending[size_t(i)] > 0) node_error(graph.node(i), i, "graph has a cycle through this node");
    permute(graph, order);
    if (hashes) hashes->compute(graph);  // laid out by the new order
  }

  // Subgraphs see everything defined in this scope and the enclosing ones.
  const OuterScope scope{&defined, &producer, outer};
  for (auto& node : *graph.mutable_node())
    for (auto& a : *node.mutable_attribute()) {
      if (a.has_g()) check_and_order(*a.mutable_g(), &scope, depth + 1, nullptr);
      for (auto& g : *a.mutable_graphs()) check_and_order(g, &scope, depth + 1, nullptr);
    }
}

}  // namespace

std::string node_label(const onnx::NodeProto& n, int index) {
  return n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name();
}

void check_and_order_graph(onnx::GraphProto& graph, NameHashes* hashes) { check_and_order(graph, nullptr, 0, hashes); }

void NameHashes::layout(const onnx::GraphProto& g) {
  first_.resize(size_t(g.node_size()) + 1);
  uint32_t at = 0;
  for (int i = 0; i < g.node_size(); ++i) {
    first_[size_t(i)] = at;
    at += uint32_t(g.node(i).input_size() + g.node(i).output_size());
  }
  first_[size_t(g.node_size())] = at;
  hashes_.assign(at, 0);
}

void NameHashes::set_node(const onnx::NodeProto& n, int i) {
  uint32_t* h = hashes_.data() + first_[size_t(i)];
  for (const auto& in : n.input()) *h++ = NameMap<int>::hash_of(in);
  for (const auto& out : n.output()) *h++ = NameMap<int>::hash_of(out);
}

void NameHashes::compute(const onnx::GraphProto& g) {
  layout(g);
  for (int i = 0; i < g.node_size(); ++i) set_node(g.node(i), i);
}

}  // namespace modelstat::loader

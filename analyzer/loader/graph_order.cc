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

void check_and_order(onnx::GraphProto& graph, const OuterScope* outer, int depth) {
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
  PrefetchedHashes ahead;  // of the names of nodes i .. i + kPrefetchAhead, in order
  for (int i = 0; i < std::min(n, kPrefetchAhead); ++i)
    for (const auto& o : graph.node(i).output()) ahead.push(producer, o);
  for (int i = 0; i < n; ++i) {
    if (i + kPrefetchAhead < n)
      for (const auto& o : graph.node(i + kPrefetchAhead).output()) ahead.push(producer, o);
    for (const auto& o : graph.node(i).output()) {
      const uint32_t h = ahead.pop();  // one hash for both tables
      if (o.empty()) continue;
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
  for (int i = 0; i < std::min(n, kPrefetchAhead); ++i)
    for (const auto& in : graph.node(i).input()) ahead.push(producer, in);
  for (int i = 0; i < n; ++i) {
    const auto& node = graph.node(i);
    if (i + kPrefetchAhead < n)
      for (const auto& in : graph.node(i + kPrefetchAhead).input()) ahead.push(producer, in);
    for (const auto& in : node.input()) {
      const uint32_t h = ahead.pop();
      if (in.empty()) continue;  // omitted optional input
      if (const int* p = producer.find(in, h)) {
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
  }

  // Subgraphs see everything defined in this scope and the enclosing ones.
  const OuterScope scope{&defined, &producer, outer};
  for (auto& node : *graph.mutable_node())
    for (auto& a : *node.mutable_attribute()) {
      if (a.has_g()) check_and_order(*a.mutable_g(), &scope, depth + 1);
      for (auto& g : *a.mutable_graphs()) check_and_order(g, &scope, depth + 1);
    }
}

}  // namespace

std::string node_label(const onnx::NodeProto& n, int index) {
  return n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name();
}

void check_and_order_graph(onnx::GraphProto& graph) { check_and_order(graph, nullptr, 0); }

}  // namespace modelstat::loader

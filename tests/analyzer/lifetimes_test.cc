// The one lifetime analysis (include/modelstat/lifetimes.hpp): release points, buffer
// sharing by rule, and the live peak, on a hand-built graph whose figures are
// worked out in the comments.
#include "modelstat/lifetimes.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace modelstat {
namespace {

// A graph built by hand: float tensors of a given element count, nodes that
// record their producers and consumers.
struct GraphBuilder {
  Graph g;
  int tensor(const std::string& name, int64_t floats, TensorRole role) {
    Tensor t;
    t.name = name;
    t.dtype = DType::Float;
    t.shape.rank_known = true;
    t.shape.dims.push_back(Dim{floats, {}});
    t.role = role;
    g.tensors.push_back(t);
    return int(g.tensors.size() - 1);
  }
  void node(const std::string& name, const std::string& op, std::vector<int> in, std::vector<int> out) {
    Node n;
    n.name = name;
    n.op_type = op;
    n.inputs = in;
    n.outputs = out;
    const int idx = int(g.nodes.size());
    for (int i : in) g.tensors[size_t(i)].consumers.push_back(idx);
    for (int o : out) g.tensors[size_t(o)].producer = idx;
    g.nodes.push_back(n);
  }
};

// x (input, 400 B) -> Relu -> a (400 B) -> Reshape -> b (400 B, a view of a)
//   -> Mul(b, x) -> c (400 B) -> MatMul(c, w) -> y (40 B, graph output)
//   and Relu(x) -> d (400 B, never read)
// w is a weight (not an activation).
struct Chain : GraphBuilder {
  int x, a, b, c, w, y, d;
  Chain() {
    x = tensor("x", 100, TensorRole::Input);
    a = tensor("a", 100, TensorRole::Activation);
    b = tensor("b", 100, TensorRole::Activation);
    c = tensor("c", 100, TensorRole::Activation);
    w = tensor("w", 10, TensorRole::Initializer);
    y = tensor("y", 10, TensorRole::Activation);
    d = tensor("d", 100, TensorRole::Activation);
    node("relu", "Relu", {x}, {a});
    node("reshape", "Reshape", {a}, {b});
    node("mul", "Mul", {b, x}, {c});
    node("matmul", "MatMul", {c, w}, {y});
    node("dead", "Relu", {x}, {d});
    g.inputs = {x};
    g.outputs = {y};
    g.initializers = {w};
  }
};

// x(1000 B) -> n0 -> a(2000 B) -> n1 -> b(500 B); n2 reads x and b -> y(4 B, graph output).
//   n0: live = x + a = 3000
//   n1: live = x + a + b = 3500 (peak), then a is freed -> 1500
//   n2: live = x + b + y = 1504, then x, b freed -> 4
TEST(Lifetimes, PeakOverExecutionOrder) {
  GraphBuilder gb;
  Graph& g = gb.g;
  const int x = gb.tensor("x", 250, TensorRole::Input);
  const int a = gb.tensor("a", 500, TensorRole::Activation);
  const int b = gb.tensor("b", 125, TensorRole::Activation);
  const int y = gb.tensor("y", 1, TensorRole::Activation);
  gb.node("n0", "Op", {x}, {a});
  gb.node("n1", "Op", {a}, {b});
  gb.node("n2", "Op", {x, b}, {y});
  g.inputs = {x};
  g.outputs = {y};
  const PeakMemory peak = peak_activation_memory(g);
  EXPECT_EQ(peak.peak_bytes, 3500);
  EXPECT_EQ(peak.peak_node, 1);
  EXPECT_FALSE(peak.lower_bound);
  EXPECT_EQ(peak.input_bytes, 1000);
  EXPECT_EQ(peak.output_bytes, 4);
}

TEST(Lifetimes, ReleasePointsPerNode) {
  const Chain ch;
  const TensorLifetimes l = tensor_lifetimes(ch.g);
  EXPECT_EQ(l.last_use[size_t(ch.x)], 4);  // read last by "dead"
  EXPECT_EQ(l.last_use[size_t(ch.d)], 4);  // unread: released after its producer
  EXPECT_TRUE(l.kept[size_t(ch.y)]);
  EXPECT_EQ(l.release_after[0], std::vector<int>{});
  EXPECT_EQ(l.release_after[1], std::vector<int>{ch.a});
  EXPECT_EQ(l.release_after[2], std::vector<int>{ch.b});
  EXPECT_EQ(l.release_after[3], (std::vector<int>{ch.c, ch.w}));  // the weight's reference too; y is kept
  EXPECT_EQ(l.release_after[4], (std::vector<int>{ch.x, ch.d}));
}

// No sharing, inputs freed (the analysis' rule):
//   relu: x + a = 800; reshape: + b = 1200, a freed -> 800; mul: + c = 1200, b freed -> 800
//   matmul: + y = 840, c freed -> 440; dead: + d = 840, x and d freed -> 40.
// Peak 1200 at reshape (the first node to reach it).
TEST(Lifetimes, NoSharingIsTheAnalysisPeak) {
  const Chain ch;
  const PeakMemory p = peak_activation_memory(ch.g);
  EXPECT_EQ(p.peak_bytes, 1200);
  EXPECT_EQ(p.peak_node, 1);
  EXPECT_EQ(p.input_bytes, 400);
  EXPECT_EQ(p.output_bytes, 40);
  EXPECT_FALSE(p.lower_bound);
}

TEST(Lifetimes, ViewsShareTheirInputsBuffer) {
  const Chain ch;
  const Buffers none = map_buffers(ch.g, BufferSharing::None, false);
  EXPECT_EQ(none.bytes.size(), 6u);  // x a b c y d
  const Buffers views = map_buffers(ch.g, BufferSharing::Views, true);
  EXPECT_EQ(views.bytes.size(), 5u);
  EXPECT_EQ(views.of_tensor[size_t(ch.b)], views.of_tensor[size_t(ch.a)]);
  EXPECT_EQ(views.last_use[size_t(views.of_tensor[size_t(ch.a)])], 2);  // the view's reader keeps a's buffer
  EXPECT_EQ(views.of_tensor[size_t(ch.w)], -1);
  // relu: x + a = 800; reshape: 800; mul: + c = 1200, a/b freed -> 800; matmul: 840 -> 440;
  // dead: + d = 840, d freed; x is kept. Peak 1200 at mul.
  const LivePeak p = forward_peak(views, ch.g.nodes.size());
  EXPECT_EQ(p.activation_bytes, 1200);
  EXPECT_EQ(p.node, 2);
}

TEST(Lifetimes, InPlaceReusesAnInputThatDiesWithTheNode) {
  const Chain ch;
  const Buffers m = map_buffers(ch.g, BufferSharing::ViewsAndInPlace, true);
  // Relu(x) may not overwrite x (a graph input, read again); Mul(b, x) overwrites b, which dies there.
  EXPECT_NE(m.of_tensor[size_t(ch.a)], m.of_tensor[size_t(ch.x)]);
  EXPECT_EQ(m.of_tensor[size_t(ch.c)], m.of_tensor[size_t(ch.a)]);
  // relu: 800; reshape: 800; mul: 800; matmul: + y = 840, a/b/c freed -> 440; dead: 840.
  // Peak 840 at matmul, with a node's workspace added while it runs: 1000 bytes at reshape wins.
  const LivePeak p = forward_peak(m, ch.g.nodes.size());
  EXPECT_EQ(p.activation_bytes, 840);
  EXPECT_EQ(p.node, 3);
  const LivePeak w = forward_peak(m, ch.g.nodes.size(), {0, 1000, 0, 0, 0});
  EXPECT_EQ(w.activation_bytes, 800);
  EXPECT_EQ(w.workspace_bytes, 1000);
  EXPECT_EQ(w.node, 1);
}

// Squeeze-excite: x (400 B) -> ReduceMean -> s (8 B) -> Mul(s, x) -> y (400 B) -> Relu -> z.
// Mul's input 0 is the small scale, so the result goes into x's buffer (input
// 1, which dies there), as the executor does; Sub(s, x) may not.
TEST(Lifetimes, AddAndMulReuseInputOneWhenInputZeroIsBroadcast) {
  for (const char* op : {"Mul", "Sub"}) {
    GraphBuilder gb;
    const int x = gb.tensor("x", 100, TensorRole::Input);
    const int a = gb.tensor("a", 100, TensorRole::Activation);
    const int s = gb.tensor("s", 2, TensorRole::Activation);
    const int y = gb.tensor("y", 100, TensorRole::Activation);
    const int z = gb.tensor("z", 100, TensorRole::Activation);
    gb.node("relu", "Relu", {x}, {a});
    gb.node("mean", "ReduceMean", {a}, {s});
    gb.node("scale", op, {s, a}, {y});
    gb.node("out", "Relu", {y}, {z});
    gb.g.inputs = {x};
    gb.g.outputs = {z};
    const Buffers m = map_buffers(gb.g, BufferSharing::ViewsAndInPlace, true);
    if (std::string(op) == "Mul")
      EXPECT_EQ(m.of_tensor[size_t(y)], m.of_tensor[size_t(a)]);
    else
      EXPECT_NE(m.of_tensor[size_t(y)], m.of_tensor[size_t(a)]);
  }
}

TEST(Lifetimes, UnknownSizesMakeALowerBound) {
  Chain ch;
  ch.g.tensors[size_t(ch.c)].shape.dims[0] = Dim{-1, "n"};
  EXPECT_TRUE(map_buffers(ch.g, BufferSharing::None, false).lower_bound);
  EXPECT_TRUE(peak_activation_memory(ch.g).lower_bound);
}

}  // namespace
}  // namespace modelstat

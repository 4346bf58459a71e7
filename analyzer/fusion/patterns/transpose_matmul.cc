// Pattern "transpose_matmul": a Transpose that swaps the last two axes of a
// MatMul operand (and keeps the others in order), read by that MatMul alone,
//   MatMul(A, Transpose(B; perm = [0, .., r-3, r-1, r-2]))   (or of A),
// runs as com.microsoft FusedMatMul with transB (transA) at the MatMul: the
// product reads the operand through its strides, as ONNX Runtime's
// MatMul-Transpose fusion does, instead of copying it first. An attention's
// K^T is one: a decoder's 1 x 12 x 1024 x 64 key took 0.52 ms to copy on the
// ninth session's VM (12 GB/s; bench/RESULTS.md), twelve times a step. A
// Transpose of another permutation, or one read by anything else, runs as
// written, and so does one of a constant (a weight: the executor transposes
// it once and keeps the result).
#include "analyzer/fusion/pattern.hpp"

namespace modelstat::fusion {

namespace {

// The input of the Transpose producing `t` when it swaps the last two axes
// of a known-rank float tensor and nothing but `reader` reads `t`; else -1.
int swapped_source(const PatternContext& ctx, int t, int reader, int& transpose) {
  const Graph& g = ctx.g;
  if (t < 0) return -1;
  const int p = g.tensors[size_t(t)].producer;
  if (p < 0 || ctx.taken(p) || only_reader(ctx, t) != reader) return -1;
  const Node& n = g.nodes[size_t(p)];
  if (!is_op(n, "Transpose", 1) || n.inputs[0] < 0 || !is_float(g, n.inputs[0])) return -1;
  // A transposed weight is the same every run: the executor transposes it once and keeps it.
  if (constant_source(g, n.inputs[0]) >= 0) return -1;
  // The rank is perm's length (ONNX requires one per axis), known even where
  // shape inference lost the input's shape; without perm every axis is
  // reversed, a swap of the last two only at a known rank 2.
  const Shape& s = g.tensors[size_t(n.inputs[0])].shape;
  std::vector<int64_t> perm = n.attr_ints("perm");
  if (perm.empty() && s.rank_known && s.dims.size() == 2) perm = {1, 0};
  const int64_t r = int64_t(perm.size());
  if (r < 2 || (s.rank_known && int64_t(s.dims.size()) != r)) return -1;
  for (int64_t d = 0; d + 2 < r; ++d)
    if (perm[size_t(d)] != d) return -1;
  if (perm[size_t(r - 2)] != r - 1 || perm[size_t(r - 1)] != r - 2) return -1;
  transpose = p;
  return n.inputs[0];
}

}  // namespace

std::optional<FusedGroup> match_transpose_matmul(const PatternContext& ctx, int i) {
  const Graph& g = ctx.g;
  const Node& mm = g.nodes[size_t(i)];
  if (!is_op(mm, "MatMul", 2) || mm.inputs[0] < 0 || mm.inputs[1] < 0 || mm.inputs[0] == mm.inputs[1]) return std::nullopt;
  int ta = -1, tb = -1;
  const int a = swapped_source(ctx, mm.inputs[0], i, ta);
  const int b = swapped_source(ctx, mm.inputs[1], i, tb);
  if (a < 0 && b < 0) return std::nullopt;
  // Both operands as the kernel reads them are float (a transposed one's
  // dtype is its source's, which the analysis keeps where a shape is lost).
  if (!is_float(g, a >= 0 ? a : mm.inputs[0]) || !is_float(g, b >= 0 ? b : mm.inputs[1])) return std::nullopt;
  FusedGroup group;
  group.head = i;
  RewriteSpec spec{"FusedMatMul", "com.microsoft", 1, {}};
  // Members in graph order.
  if (ta >= 0) group.members.push_back(ta);
  if (tb >= 0) group.members.push_back(tb);
  if (group.members.size() == 2 && group.members[0] > group.members[1]) std::swap(group.members[0], group.members[1]);
  if (a >= 0) spec.attributes["transA"] = AttrValue(int64_t(1));
  if (b >= 0) spec.attributes["transB"] = AttrValue(int64_t(1));
  group.inputs = {a >= 0 ? a : mm.inputs[0], b >= 0 ? b : mm.inputs[1]};
  group.output = mm.outputs[0];
  group.spec = std::move(spec);
  return group;
}

}  // namespace modelstat::fusion

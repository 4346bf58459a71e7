// Pattern "matmul_group": a Gemm or MatMul with a constant 2-D float weight
// (directly or through Identity nodes), run on the fp32 Gemm kernel
// (profiler/ops/fp32_matmul.hpp: oneDNN or BLAS, whichever is faster for the
// shape), and the ops after it that the kernel applies to the output tile:
//
//   (MatMul | Gemm) -> [Add of a constant bias of N values] ->
//       ( Relu | LeakyRelu | Clip | HardSigmoid | HardSwish | Sigmoid | Tanh |
//         Sigmoid+Mul (SiLU) | Gelu | GELU written out | Add of a residual )*
//
// under the Conv groups' rules (conv_group.cc). Gemm qualifies with transA = 0
// (opset >= 7) and C absent or a constant of N values ([N] or [1, N]); alpha
// and beta fold into the weight and bias. With fusion off (options.cpu_groups
// false, matmul_kernels true) the head runs alone, Gemm's C still its bias.
#include "analyzer/fusion/pattern.hpp"

namespace modelstat::fusion {

std::optional<FusedGroup> match_matmul_group(const PatternContext& ctx, int i) {
  const Graph& g = ctx.g;
  const Node& node = g.nodes[size_t(i)];
  const bool gemm = node.op_type == "Gemm";
  if (!node.domain.empty() || (!gemm && node.op_type != "MatMul")) return std::nullopt;
  if (node.inputs.size() < 2 || node.outputs.size() != 1 || node.outputs[0] < 0) return std::nullopt;
  const int a = node.inputs[0], y = node.outputs[0];
  if (a < 0 || !is_float(g, a) || !is_float(g, y)) return std::nullopt;
  MatMulKernelSpec spec;
  spec.weight = node.inputs[1] < 0 ? -1 : constant_source(g, node.inputs[1]);
  if (spec.weight < 0 || g.tensors[size_t(spec.weight)].dtype != DType::Float) return std::nullopt;
  const Shape& ws = g.tensors[size_t(spec.weight)].shape;
  if (!ws.fully_known() || ws.dims.size() != 2) return std::nullopt;
  const Shape& as = g.tensors[size_t(a)].shape;
  if (as.rank_known && as.dims.size() < 2) return std::nullopt;
  int64_t n = ws.dims[1].value;
  if (gemm) {
    if (ctx.opset < 7 || node.attr_int("transA", 0) != 0 || (as.rank_known && as.dims.size() != 2)) return std::nullopt;
    spec.transposed = node.attr_int("transB", 0) != 0;
    spec.alpha = node.attr_float("alpha", 1.0);
    n = ws.dims[spec.transposed ? 0 : 1].value;
    if (node.inputs.size() > 2 && node.inputs[2] >= 0 && node.attr_float("beta", 1.0) != 0.0) {
      spec.bias = bias_constant(g, node.inputs[2], n, 2);
      if (spec.bias < 0) return std::nullopt;
      spec.beta = node.attr_float("beta", 1.0);
    }
  }
  FusedGroup group;
  group.kind = FusedKind::MatMul;
  group.head = i;
  const bool fuse = ctx.options.cpu_groups;
  int t = y, residual = -1;
  // Add of a constant bias: the MatMul's, or the Gemm's when it has no C.
  const Shape& ys = g.tensors[size_t(y)].shape;
  if (fuse && spec.bias < 0 && ys.rank_known) {
    const int r = only_reader(ctx, t);
    if (r >= 0 && !ctx.taken(r) && is_op(g.nodes[size_t(r)], "Add", 2) && is_float(g, g.nodes[size_t(r)].outputs[0])) {
      const Node& add = g.nodes[size_t(r)];
      const int c = bias_constant(g, other_operand(add, t), n, ys.dims.size());
      if (c >= 0) {
        spec.bias = c;
        spec.bias_add = r;
        group.members.push_back(r);
        t = add.outputs[0];
      }
    }
  }
  while (fuse && take_post_op(ctx, i, true, t, residual, spec.post_ops, group.members)) {
  }
  group.packed_constants = {spec.weight};
  if (spec.bias >= 0) group.packed_constants.push_back(spec.bias);
  group.inputs = {a, residual};
  group.output = t;
  group.spec = std::move(spec);
  return group;
}

}  // namespace modelstat::fusion

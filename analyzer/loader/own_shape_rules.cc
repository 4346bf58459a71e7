// modelstat's own shape rules (own_shape_rules.hpp): ONNX 1.12's results,
// on fully known dims, for the ops they cover.
#include "analyzer/loader/own_shape_rules.hpp"

#include <algorithm>

namespace modelstat::loader::own_rules {

Rule rule_for(std::string_view op, int since) {
  // ONNX 1.12's functions for these versions are propagateShapeAndTypeFromFirstInput
  // (version 6 on: the versions before carry consumed_inputs, and some of them
  // had no inference function at all; legacy_inference.cc gives theirs).
  static constexpr std::string_view kUnary[] = {"Relu", "Sigmoid", "Tanh", "Exp",   "Log",  "Sqrt",
                                                "Neg",  "Abs",     "Reciprocal", "Floor", "Ceil"};
  if (since >= 6)
    for (std::string_view u : kUnary)
      if (op == u) return Rule::Unary;
  if (since >= 7 && (op == "Add" || op == "Sub" || op == "Mul" || op == "Div")) return Rule::Broadcast;
  if (since >= 9 && op == "MatMul") return Rule::MatMul;  // the same function in versions 9 and 13
  if (since >= 5 && op == "Reshape") return Rule::Reshape;
  return Rule::None;
}

// ONNX's bidirectional broadcast on known values is numpy's.
bool broadcast_into(const int64_t* a, size_t na, const int64_t* b, size_t nb, int64_t* out) {
  const size_t n = std::max(na, nb);
  for (size_t k = 0; k < n; ++k) {
    const int64_t x = k < n - na ? 1 : a[k - (n - na)];
    const int64_t y = k < n - nb ? 1 : b[k - (n - nb)];
    if (x == 1) out[k] = y;
    else if (y == 1 || y == x) out[k] = x;
    else return false;  // ONNX: "Incompatible dimensions"
  }
  return true;
}

bool broadcast(const Dims& a, const Dims& b, Dims& out) {
  out.rank = std::max(a.rank, b.rank);
  return broadcast_into(a.d, size_t(a.rank), b.d, size_t(b.rank), out.d);
}

bool matmul(const Dims& a, const Dims& b, Dims& out) {
  // ONNX fails rank 0; a 1-D operand is promoted (a: [1, k], b: [k, 1]) and
  // the promoted dim dropped from the result.
  if (a.rank < 1 || b.rank < 1) return false;
  int64_t l[kMaxRank + 1], r[kMaxRank + 1];
  int nl = 0, nr = 0;
  if (a.rank == 1) l[nl++] = 1;
  for (int k = 0; k < a.rank; ++k) l[nl++] = a.d[k];
  for (int k = 0; k < b.rank; ++k) r[nr++] = b.d[k];
  if (b.rank == 1) r[nr++] = 1;
  if (l[nl - 1] != r[nr - 2]) return false;  // ONNX: "Incompatible dimensions for matrix multiplication"
  const int batch = std::max(nl, nr) - 2;
  if (batch + 2 > kMaxRank) return false;
  if (!broadcast_into(l, size_t(nl - 2), r, size_t(nr - 2), out.d)) return false;
  out.rank = batch;
  if (a.rank != 1) out.d[out.rank++] = l[nl - 2];
  if (b.rank != 1) out.d[out.rank++] = r[nr - 1];
  return true;
}

bool reshape(const Dims& in, const int64_t* target, size_t n, bool allowzero, Dims& out) {
  if (n > size_t(kMaxRank)) return false;
  int64_t total = 1;
  for (int k = 0; k < in.rank; ++k)
    if (in.d[k] <= 0 || __builtin_mul_overflow(total, in.d[k], &total)) return false;  // empty tensors: ONNX's edge cases
  int infer = -1;
  int64_t product = 1;
  out.rank = int(n);
  for (size_t k = 0; k < n; ++k) {
    int64_t v = target[k];
    if (v == 0) {
      // 0 copies the input's dim (allowzero = 0); a literal 0 is an empty tensor: declined.
      if (allowzero || int(k) >= in.rank) return false;
      v = in.d[k];
    } else if (v == -1) {
      if (infer >= 0) return false;  // ONNX: "Target shape may not have multiple -1 dimensions"
      infer = int(k);
      continue;
    } else if (v < 0) {
      return false;  // ONNX: "Invalid dimension value"
    }
    if (__builtin_mul_overflow(product, v, &product)) return false;
    out.d[k] = v;
  }
  if (infer >= 0) {
    if (total % product != 0) return false;  // ONNX: "Dimension could not be inferred: incompatible shapes"
    out.d[infer] = total / product;
    return true;
  }
  return product == total;  // a mismatch is the model's error: ONNX's function decides what it reports
}

}  // namespace modelstat::loader::own_rules

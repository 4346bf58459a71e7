// Private: modelstat's own shape rules for the ops a large graph is mostly
// made of (elementwise math, activations, MatMul, Reshape), on fully known
// dims. Shape inference (shape_inference.cc) applies one where it covers the
// node and falls back to ONNX's inference function otherwise: each rule
// answers only where ONNX 1.12's function gives the same dims without an
// error, and declines (false) everywhere else (a dim it cannot know, a
// mismatch ONNX reports, an opset whose meaning differs), so that no model
// gets a different shape or message. What it saves: a TypeProto tree per
// value (~330 bytes on the arena) and ONNX's broadcasting and merging code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace modelstat::loader::own_rules {

enum class Rule : uint8_t {
  None,       // not covered: ONNX's function runs
  Unary,      // output = input 0 (Relu, Sigmoid, Tanh, Exp, ...): propagateShapeAndTypeFromFirstInput
  Broadcast,  // Add/Sub/Mul/Div from opset 7: multidirectional (numpy) broadcasting of inputs 0 and 1
  MatMul,     // numpy matmul: 1-D operands promoted, batch dims broadcast
  Reshape,    // from opset 5: target shape from input 1's values (0 copies, one -1 inferred)
};

// The rule for an op of the default domain whose schema is `since_version`
// (the schema's own version, not the model's opset).
Rule rule_for(std::string_view op_type, int since_version);

// Rank up to kMaxRank; a higher one declines.
constexpr int kMaxRank = 8;
struct Dims {
  int rank = 0;
  int64_t d[kMaxRank] = {};
};

// Numpy broadcasting of dims a[0, na) and b[0, nb), aligned from the right,
// into out[0, max(na, nb)): a 1 takes the other's size, two other sizes must
// agree (false otherwise). The one place the loader broadcasts known dims
// (the folder's broadcast_dims calls it too).
bool broadcast_into(const int64_t* a, size_t na, const int64_t* b, size_t nb, int64_t* out);

// Each returns false where it declines; `out` is then unspecified.
bool broadcast(const Dims& a, const Dims& b, Dims& out);
bool matmul(const Dims& a, const Dims& b, Dims& out);
// `target`: input 1's values (n of them); `allowzero`: Reshape-14's attribute.
bool reshape(const Dims& in, const int64_t* target, size_t n, bool allowzero, Dims& out);

}  // namespace modelstat::loader::own_rules

// Private to analyzer/loader: the pieces of integer shape-value folding
// (shape_values.hpp). shape_values.cc holds the evaluator, which walks the
// graph and asks each node's op record (analyzer/cost/cost_rule.hpp, field
// `fold`) how to fold it; the fold functions themselves live by kind in
// shape_fold_movement.cc (Shape, Gather, Slice, Reshape, Concat, ... : values
// moved, not computed) and shape_fold_arith.cc (arithmetic, comparison, logic,
// reductions, Where). A new op folds by naming one of these in its record.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/loader/shape_values.hpp"

namespace modelstat::loader {

using Dims = std::vector<int64_t>;
using Opt = std::optional<IntValue>;

// Bounds, checked arithmetic, broadcasting and attribute reading shared by the
// fold functions (defined in shape_values.cc).
namespace shape_math {

constexpr int64_t kMaxElems = kMaxIntValueElements;
constexpr size_t kMaxRank = 64;
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int32_t kInt64 = onnx::TensorProto::INT64;
constexpr int32_t kBool = onnx::TensorProto::BOOL;

bool is_int_type(int32_t t);
// v converted to type t the way a C cast (and ONNX Cast) does: wrap modulo 2^bits.
int64_t wrap_to(int32_t t, int64_t v);
// Element count of dims, or nullopt when a dim is negative, the rank is absurd
// or the count exceeds kMaxElems. Zero dims count as 1 for the bound, so every
// partial product of accepted dims is <= kMaxElems too.
std::optional<int64_t> numel(const Dims& dims);
int64_t prod(const Dims& dims, size_t from, size_t to);
Dims strides_of(const Dims& dims);
// Calls f(flat, index) for every multi-index of dims in row-major order.
// dims must have passed numel().
void for_each_index(const Dims& dims, const std::function<void(int64_t, const Dims&)>& f);
// Normalizes an axis against rank r (negatives count from the back).
std::optional<int64_t> norm_axis(int64_t axis, int64_t r);

std::optional<int64_t> checked_add(int64_t a, int64_t b);
std::optional<int64_t> checked_sub(int64_t a, int64_t b);
std::optional<int64_t> checked_mul(int64_t a, int64_t b);
// Integer Div truncates toward zero.
std::optional<int64_t> int_div(int64_t a, int64_t b);
// fmod = false: result takes the divisor's sign (Python %); true: the dividend's (C fmod).
std::optional<int64_t> int_mod(int64_t a, int64_t b, bool fmod);

std::optional<Dims> broadcast_dims(const Dims& a, const Dims& b);
// For every element of out_dims (row-major), the flat index of the input
// element with in_dims that broadcasts onto it.
std::vector<int64_t> broadcast_index(const Dims& in_dims, const Dims& out_dims);

Opt read_tensor(const onnx::TensorProto& t);
std::optional<Dims> known_dims(const onnx::TypeProto& type);
const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const char* name);
int64_t attr_int(const onnx::NodeProto& n, const char* name, int64_t dflt);
std::optional<Dims> attr_ints(const onnx::NodeProto& n, const char* name);

IntValue scalar(int64_t x, int32_t type = kInt64);
IntValue vec(Dims xs, int32_t type = kInt64);
// A well-formed value: consistent size, bounded, values representable.
bool valid(const IntValue& v);

}  // namespace shape_math

// What a fold function sees: the values evaluated so far and the known shapes
// of tensors whose values are unknown.
class FoldContext {
 public:
  std::unordered_map<std::string, IntValue> values;
  std::unordered_map<std::string, Dims> shapes;

  // Input i when present and evaluated, else nullptr.
  const IntValue* in(const onnx::NodeProto& n, int i) const;
  static bool present(const onnx::NodeProto& n, int i) { return i < n.input_size() && !n.input(i).empty(); }
  std::optional<Dims> shape_of(const onnx::NodeProto& n, int i) const;
  // Records the dims of output 0 when its values stay unknown.
  void note_shape(const onnx::NodeProto& n, const Dims& dims);
  // An "axes"-like list from attribute `name` or, failing that, input `idx`.
  // nullopt = unknown/ill-formed; an empty Dims with *given=false = absent.
  std::optional<Dims> axes_of(const onnx::NodeProto& n, const char* name, int idx, bool* given) const;
};

// The fold functions op records name (one per op semantics).
namespace fold {

// shape_fold_movement.cc
Opt constant(FoldContext& c, const onnx::NodeProto& n);
Opt identity(FoldContext& c, const onnx::NodeProto& n);
Opt shape(FoldContext& c, const onnx::NodeProto& n);
Opt size(FoldContext& c, const onnx::NodeProto& n);
Opt gather(FoldContext& c, const onnx::NodeProto& n);
Opt unsqueeze(FoldContext& c, const onnx::NodeProto& n);
Opt squeeze(FoldContext& c, const onnx::NodeProto& n);
Opt concat(FoldContext& c, const onnx::NodeProto& n);
Opt slice(FoldContext& c, const onnx::NodeProto& n);
Opt cast(FoldContext& c, const onnx::NodeProto& n);
Opt reshape(FoldContext& c, const onnx::NodeProto& n);
Opt flatten(FoldContext& c, const onnx::NodeProto& n);
Opt transpose(FoldContext& c, const onnx::NodeProto& n);
Opt constant_of_shape(FoldContext& c, const onnx::NodeProto& n);
Opt range(FoldContext& c, const onnx::NodeProto& n);
Opt expand(FoldContext& c, const onnx::NodeProto& n);
Opt tile(FoldContext& c, const onnx::NodeProto& n);

// shape_fold_arith.cc
Opt integer_noop(FoldContext& c, const onnx::NodeProto& n);  // Floor, Ceil, Round on integers
Opt where(FoldContext& c, const onnx::NodeProto& n);
Opt reduce_sum(FoldContext& c, const onnx::NodeProto& n);
Opt reduce_prod(FoldContext& c, const onnx::NodeProto& n);
Opt reduce_max(FoldContext& c, const onnx::NodeProto& n);
Opt reduce_min(FoldContext& c, const onnx::NodeProto& n);
Opt abs(FoldContext& c, const onnx::NodeProto& n);
Opt neg(FoldContext& c, const onnx::NodeProto& n);
Opt sign(FoldContext& c, const onnx::NodeProto& n);
Opt logical_not(FoldContext& c, const onnx::NodeProto& n);
Opt max(FoldContext& c, const onnx::NodeProto& n);
Opt min(FoldContext& c, const onnx::NodeProto& n);
Opt sum(FoldContext& c, const onnx::NodeProto& n);
Opt add(FoldContext& c, const onnx::NodeProto& n);
Opt sub(FoldContext& c, const onnx::NodeProto& n);
Opt mul(FoldContext& c, const onnx::NodeProto& n);
Opt div(FoldContext& c, const onnx::NodeProto& n);
Opt mod(FoldContext& c, const onnx::NodeProto& n);
Opt equal(FoldContext& c, const onnx::NodeProto& n);
Opt less(FoldContext& c, const onnx::NodeProto& n);
Opt less_or_equal(FoldContext& c, const onnx::NodeProto& n);
Opt greater(FoldContext& c, const onnx::NodeProto& n);
Opt greater_or_equal(FoldContext& c, const onnx::NodeProto& n);
Opt logical_and(FoldContext& c, const onnx::NodeProto& n);
Opt logical_or(FoldContext& c, const onnx::NodeProto& n);
Opt logical_xor(FoldContext& c, const onnx::NodeProto& n);

}  // namespace fold

}  // namespace modelstat::loader

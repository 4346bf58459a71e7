// Private to analyzer/loader: the pieces of constant folding (shape_values.hpp).
// shape_values.cc holds the evaluator, which walks the graph and asks each
// node's op record (analyzer/cost/cost_rule.hpp, field `fold`) how to fold it;
// the fold functions themselves live by kind in shape_fold_movement.cc (Shape,
// Gather, Slice, Split, Reshape, Concat, ... : values moved, not computed; any
// element type) and shape_fold_arith.cc (arithmetic, comparison, logic,
// rounding, reductions, Cast: integer and float). A new op folds by naming one
// of these in its record.
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
using Opt = std::optional<ConstValue>;

// What a fold function gives: the value of each output it could evaluate
// (outputs[k] for node output k; missing or empty entries stay unknown).
struct Folded {
  std::vector<Opt> outputs;
  Folded() = default;
  Folded(std::nullopt_t) {}  // NOLINT: a fold that found nothing
  Folded(Opt v) { outputs.push_back(std::move(v)); }  // NOLINT: output 0
  Folded(ConstValue v) { outputs.emplace_back(std::move(v)); }  // NOLINT: output 0
};

// Bounds, checked arithmetic, broadcasting and attribute reading shared by the
// fold functions (defined in shape_values.cc).
namespace shape_math {

constexpr int64_t kMaxElems = kMaxConstValueElements;
constexpr size_t kMaxRank = 64;
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int32_t kInt64 = onnx::TensorProto::INT64;
constexpr int32_t kBool = onnx::TensorProto::BOOL;

bool is_int_type(int32_t t);  // integer types and BOOL
// v converted to integer type t the way a C cast (and ONNX Cast) does: wrap modulo 2^bits.
int64_t wrap_to(int32_t t, int64_t v);
// x rounded to float type t (FLOAT: to the nearest float, FLOAT16 / BFLOAT16:
// to the nearest half / bfloat16, ties to even; DOUBLE: unchanged).
double round_to(int32_t t, double x);
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

ConstValue scalar(int64_t x, int32_t type = kInt64);
ConstValue vec(Dims xs, int32_t type = kInt64);
ConstValue real_scalar(double x, int32_t type);
// A well-formed value: consistent size, bounded, values representable.
bool valid(const ConstValue& v);

}  // namespace shape_math

// What a fold function sees: the values evaluated so far and the known shapes
// of tensors whose values are unknown.
class FoldContext {
 public:
  std::unordered_map<std::string, ConstValue> values;
  std::unordered_map<std::string, Dims> shapes;
  // Dims of a tensor not in `shapes` (the inference driver's types); may be empty.
  std::function<std::optional<Dims>(const std::string&)> dims_of;
  // The enclosing graph's context (a subgraph reads its values by name), or null.
  const FoldContext* outer = nullptr;

  // The value of tensor `name` here or in an enclosing graph, or nullptr.
  const ConstValue* value(const std::string& name) const;

  // Input i when present, evaluated and of an integer or bool type, else
  // nullptr: what an op reads as indices, axes, shapes or integer operands.
  const ConstValue* in(const onnx::NodeProto& n, int i) const;
  // Input i when present and evaluated, of any type: the data an op moves.
  const ConstValue* in_any(const onnx::NodeProto& n, int i) const;
  static bool present(const onnx::NodeProto& n, int i) { return i < n.input_size() && !n.input(i).empty(); }
  std::optional<Dims> shape_of(const onnx::NodeProto& n, int i) const;
  // Records the dims of output 0 when its values stay unknown.
  void note_shape(const onnx::NodeProto& n, const Dims& dims);
  // An "axes"-like list from attribute `name` or, failing that, input `idx`.
  // nullopt = unknown/ill-formed; an empty Dims with *given=false = absent.
  std::optional<Dims> axes_of(const onnx::NodeProto& n, const char* name, int idx, bool* given) const;
};

// Folds one node through its op record (default-domain ops whose record
// names a fold function): sets or erases the values of its outputs in c.
// Never throws.
void fold_node(FoldContext& c, const onnx::NodeProto& n) noexcept;

// The fold functions op records name (one per op semantics).
namespace fold {

// shape_fold_movement.cc
Folded constant(FoldContext& c, const onnx::NodeProto& n);
Folded identity(FoldContext& c, const onnx::NodeProto& n);
Folded shape(FoldContext& c, const onnx::NodeProto& n);
Folded size(FoldContext& c, const onnx::NodeProto& n);
Folded gather(FoldContext& c, const onnx::NodeProto& n);
Folded unsqueeze(FoldContext& c, const onnx::NodeProto& n);
Folded squeeze(FoldContext& c, const onnx::NodeProto& n);
Folded concat(FoldContext& c, const onnx::NodeProto& n);
Folded slice(FoldContext& c, const onnx::NodeProto& n);
Folded reshape(FoldContext& c, const onnx::NodeProto& n);
Folded flatten(FoldContext& c, const onnx::NodeProto& n);
Folded transpose(FoldContext& c, const onnx::NodeProto& n);
Folded constant_of_shape(FoldContext& c, const onnx::NodeProto& n);
Folded range(FoldContext& c, const onnx::NodeProto& n);
Folded expand(FoldContext& c, const onnx::NodeProto& n);
Folded tile(FoldContext& c, const onnx::NodeProto& n);
Folded split(FoldContext& c, const onnx::NodeProto& n);

// shape_fold_arith.cc
Folded cast(FoldContext& c, const onnx::NodeProto& n);
Folded floor(FoldContext& c, const onnx::NodeProto& n);
Folded ceil(FoldContext& c, const onnx::NodeProto& n);
Folded round(FoldContext& c, const onnx::NodeProto& n);
Folded sqrt(FoldContext& c, const onnx::NodeProto& n);
Folded reciprocal(FoldContext& c, const onnx::NodeProto& n);
Folded pow(FoldContext& c, const onnx::NodeProto& n);
Folded where(FoldContext& c, const onnx::NodeProto& n);
Folded reduce_sum(FoldContext& c, const onnx::NodeProto& n);
Folded reduce_prod(FoldContext& c, const onnx::NodeProto& n);
Folded reduce_max(FoldContext& c, const onnx::NodeProto& n);
Folded reduce_min(FoldContext& c, const onnx::NodeProto& n);
Folded abs(FoldContext& c, const onnx::NodeProto& n);
Folded neg(FoldContext& c, const onnx::NodeProto& n);
Folded sign(FoldContext& c, const onnx::NodeProto& n);
Folded logical_not(FoldContext& c, const onnx::NodeProto& n);
Folded max(FoldContext& c, const onnx::NodeProto& n);
Folded min(FoldContext& c, const onnx::NodeProto& n);
Folded sum(FoldContext& c, const onnx::NodeProto& n);
Folded add(FoldContext& c, const onnx::NodeProto& n);
Folded sub(FoldContext& c, const onnx::NodeProto& n);
Folded mul(FoldContext& c, const onnx::NodeProto& n);
Folded div(FoldContext& c, const onnx::NodeProto& n);
Folded mod(FoldContext& c, const onnx::NodeProto& n);
Folded equal(FoldContext& c, const onnx::NodeProto& n);
Folded less(FoldContext& c, const onnx::NodeProto& n);
Folded less_or_equal(FoldContext& c, const onnx::NodeProto& n);
Folded greater(FoldContext& c, const onnx::NodeProto& n);
Folded greater_or_equal(FoldContext& c, const onnx::NodeProto& n);
Folded logical_and(FoldContext& c, const onnx::NodeProto& n);
Folded logical_or(FoldContext& c, const onnx::NodeProto& n);
Folded logical_xor(FoldContext& c, const onnx::NodeProto& n);

}  // namespace fold

}  // namespace modelstat::loader

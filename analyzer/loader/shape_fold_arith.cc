// Folding of integer arithmetic, comparison, logic, reductions and Where.
// Each op's record (analyzer/cost/elementwise.cc, reduction.cc) names its
// function here.
#include <algorithm>

#include "analyzer/loader/shape_fold.hpp"

namespace modelstat::loader::fold {

using namespace shape_math;

namespace {

// Reduction `kind` over the node's axes (attribute, or input 1 from opset 13/18).
enum class Reduction { Sum, Prod, Max, Min };

Opt reduce(FoldContext& c, const onnx::NodeProto& n, Reduction kind) {
  const IntValue* x = c.in(n, 0);
  bool given = false;
  auto axes = c.axes_of(n, "axes", 1, &given);
  if (!x || !axes || x->elem_type == kBool) return std::nullopt;
  const bool keepdims = attr_int(n, "keepdims", 1) != 0;
  if (axes->empty() && attr_int(n, "noop_with_empty_axes", 0) != 0) return *x;
  const auto r = int64_t(x->dims.size());
  std::vector<bool> red(size_t(r), axes->empty());
  for (int64_t a : *axes) {
    const auto na = norm_axis(a, r);
    if (!na || red[size_t(*na)]) return std::nullopt;
    red[size_t(*na)] = true;
  }
  IntValue out;
  out.elem_type = x->elem_type;
  Dims full;  // output dims with reduced axes kept as 1
  for (int64_t i = 0; i < r; ++i) {
    const int64_t d = red[size_t(i)] ? 1 : x->dims[size_t(i)];
    full.push_back(d);
    if (!red[size_t(i)] || keepdims) out.dims.push_back(d);
  }
  const auto m = size_t(prod(full, 0, full.size()));
  const bool is_minmax = kind == Reduction::Max || kind == Reduction::Min;
  if (is_minmax && x->values.empty()) return std::nullopt;
  std::vector<std::optional<int64_t>> acc(m);
  if (!is_minmax)
    for (auto& a : acc) a = kind == Reduction::Prod ? 1 : 0;
  const Dims out_strides = strides_of(full);
  bool ok = true;
  for_each_index(x->dims, [&](int64_t flat, const Dims& idx) {
    if (!ok) return;
    int64_t o = 0;
    for (size_t a = 0; a < idx.size(); ++a)
      if (!red[a]) o += idx[a] * out_strides[a];
    auto& cur = acc[size_t(o)];
    const int64_t v = x->values[size_t(flat)];
    switch (kind) {
      case Reduction::Sum: cur = checked_add(*cur, v); break;
      case Reduction::Prod: cur = checked_mul(*cur, v); break;
      case Reduction::Max: cur = cur ? std::max(*cur, v) : v; break;
      case Reduction::Min: cur = cur ? std::min(*cur, v) : v; break;
    }
    if (!cur) ok = false;
  });
  if (!ok) return std::nullopt;
  for (const auto& a : acc) {
    if (!a) return std::nullopt;
    out.values.push_back(*a);
  }
  return out;
}

// Elementwise map of a non-bool integer value; nullopt when f fails on an element.
template <typename F>
Opt map_ints(FoldContext& c, const onnx::NodeProto& n, F f) {
  const IntValue* x = c.in(n, 0);
  if (!x || x->elem_type == kBool) return std::nullopt;
  IntValue out = *x;
  for (int64_t& v : out.values) {
    const std::optional<int64_t> r = f(v);
    if (!r) return std::nullopt;
    v = *r;
  }
  return out;
}

using BinFn = std::function<std::optional<int64_t>(int64_t, int64_t)>;

Opt apply(const IntValue& a, const IntValue& b, int32_t out_type, const BinFn& f) {
  const auto dims = broadcast_dims(a.dims, b.dims);
  if (!dims || !numel(*dims)) return std::nullopt;
  const auto ia = broadcast_index(a.dims, *dims);
  const auto ib = broadcast_index(b.dims, *dims);
  IntValue out;
  out.elem_type = out_type;
  out.dims = *dims;
  for (size_t i = 0; i < ia.size(); ++i) {
    const auto r = f(a.values[size_t(ia[i])], b.values[size_t(ib[i])]);
    if (!r) return std::nullopt;
    out.values.push_back(*r);
  }
  return out;
}

// Max/Min/Sum of n same-typed non-bool inputs.
Opt variadic(FoldContext& c, const onnx::NodeProto& n, const BinFn& f) {
  if (n.input_size() == 0) return std::nullopt;
  const IntValue* first = c.in(n, 0);
  if (!first || first->elem_type == kBool) return std::nullopt;
  IntValue acc = *first;
  for (int i = 1; i < n.input_size(); ++i) {
    const IntValue* x = c.in(n, i);
    if (!x || x->elem_type != acc.elem_type) return std::nullopt;
    Opt next = apply(acc, *x, acc.elem_type, f);
    if (!next) return std::nullopt;
    acc = std::move(*next);
  }
  return acc;
}

// What a binary op takes and gives: arithmetic (non-bool in, same type out),
// comparison (non-bool in, bool out; Equal also takes bools), logic (bool in and out).
enum class Binary { Arithmetic, Compare, CompareAnyType, Logic };

// Before opset 7 a binary op carries `broadcast` (the attribute exists in no
// later opset, so its presence marks the old rule): 0 or absent, A and B have
// the same shape; 1, B's dims align with A's from `axis` (default: A's
// trailing dims) and the result has A's shape. Returns B with its dims padded
// with 1s to broadcast numpy-style that way, nullopt where the old rule does
// not allow the pair.
std::optional<IntValue> legacy_operand(const onnx::NodeProto& n, const IntValue& a, const IntValue& b) {
  if (!find_attr(n, "broadcast")) return b;
  if (attr_int(n, "broadcast", 0) == 0) return a.dims == b.dims ? std::optional<IntValue>(b) : std::nullopt;
  const auto ra = int64_t(a.dims.size()), rb = int64_t(b.dims.size());
  if (rb > ra) return std::nullopt;
  int64_t axis = ra - rb;
  if (find_attr(n, "axis")) {
    const auto na = norm_axis(attr_int(n, "axis", 0), ra);
    if (!na) return std::nullopt;
    axis = *na;
  }
  if (axis + rb > ra) return std::nullopt;
  IntValue out = b;
  out.dims.assign(size_t(axis), 1);
  out.dims.insert(out.dims.end(), b.dims.begin(), b.dims.end());
  out.dims.resize(size_t(ra), 1);
  for (int64_t d = 0; d < ra; ++d)
    if (out.dims[size_t(d)] != 1 && out.dims[size_t(d)] != a.dims[size_t(d)]) return std::nullopt;
  return out;
}

Opt binary(FoldContext& c, const onnx::NodeProto& n, Binary kind, const BinFn& f) {
  if (n.input_size() != 2) return std::nullopt;
  const IntValue* a = c.in(n, 0);
  const IntValue* b = c.in(n, 1);
  if (!a || !b || a->elem_type != b->elem_type) return std::nullopt;
  const bool logical = kind == Binary::Logic;
  if (logical != (a->elem_type == kBool) && kind != Binary::CompareAnyType) return std::nullopt;
  const std::optional<IntValue> rhs = legacy_operand(n, *a, *b);
  if (!rhs) return std::nullopt;
  return apply(*a, *rhs, kind == Binary::Arithmetic ? a->elem_type : kBool, f);
}

std::optional<int64_t> truth(bool v) { return int64_t(v); }

}  // namespace

Opt integer_noop(FoldContext& c, const onnx::NodeProto& n) {
  return map_ints(c, n, [](int64_t v) -> std::optional<int64_t> { return v; });
}

Opt where(FoldContext& c, const onnx::NodeProto& n) {
  const IntValue* cond = c.in(n, 0);
  const IntValue* x = c.in(n, 1);
  const IntValue* y = c.in(n, 2);
  if (!cond || !x || !y || x->elem_type != y->elem_type) return std::nullopt;
  auto dims = broadcast_dims(cond->dims, x->dims);
  if (dims) dims = broadcast_dims(*dims, y->dims);
  if (!dims || !numel(*dims)) return std::nullopt;
  const auto ic = broadcast_index(cond->dims, *dims);
  const auto ix = broadcast_index(x->dims, *dims);
  const auto iy = broadcast_index(y->dims, *dims);
  IntValue out;
  out.elem_type = x->elem_type;
  out.dims = *dims;
  for (size_t i = 0; i < ic.size(); ++i)
    out.values.push_back(cond->values[size_t(ic[i])] != 0 ? x->values[size_t(ix[i])] : y->values[size_t(iy[i])]);
  return out;
}

Opt reduce_sum(FoldContext& c, const onnx::NodeProto& n) { return reduce(c, n, Reduction::Sum); }
Opt reduce_prod(FoldContext& c, const onnx::NodeProto& n) { return reduce(c, n, Reduction::Prod); }
Opt reduce_max(FoldContext& c, const onnx::NodeProto& n) { return reduce(c, n, Reduction::Max); }
Opt reduce_min(FoldContext& c, const onnx::NodeProto& n) { return reduce(c, n, Reduction::Min); }

Opt abs(FoldContext& c, const onnx::NodeProto& n) {
  return map_ints(c, n, [](int64_t v) -> std::optional<int64_t> {
    if (v == kI64Min) return std::nullopt;
    return v < 0 ? -v : v;
  });
}

Opt neg(FoldContext& c, const onnx::NodeProto& n) {
  return map_ints(c, n, [](int64_t v) -> std::optional<int64_t> {
    if (v == kI64Min) return std::nullopt;
    return -v;
  });
}

Opt sign(FoldContext& c, const onnx::NodeProto& n) {
  return map_ints(c, n, [](int64_t v) -> std::optional<int64_t> { return v > 0 ? 1 : (v < 0 ? -1 : 0); });
}

Opt logical_not(FoldContext& c, const onnx::NodeProto& n) {
  const IntValue* x = c.in(n, 0);
  if (!x || x->elem_type != kBool) return std::nullopt;
  IntValue out = *x;
  for (int64_t& v : out.values) v = v == 0 ? 1 : 0;
  return out;
}

Opt max(FoldContext& c, const onnx::NodeProto& n) {
  return variadic(c, n, [](int64_t a, int64_t b) -> std::optional<int64_t> { return std::max(a, b); });
}
Opt min(FoldContext& c, const onnx::NodeProto& n) {
  return variadic(c, n, [](int64_t a, int64_t b) -> std::optional<int64_t> { return std::min(a, b); });
}
Opt sum(FoldContext& c, const onnx::NodeProto& n) { return variadic(c, n, checked_add); }

Opt add(FoldContext& c, const onnx::NodeProto& n) { return binary(c, n, Binary::Arithmetic, checked_add); }
Opt sub(FoldContext& c, const onnx::NodeProto& n) { return binary(c, n, Binary::Arithmetic, checked_sub); }
Opt mul(FoldContext& c, const onnx::NodeProto& n) { return binary(c, n, Binary::Arithmetic, checked_mul); }
Opt div(FoldContext& c, const onnx::NodeProto& n) { return binary(c, n, Binary::Arithmetic, int_div); }
Opt mod(FoldContext& c, const onnx::NodeProto& n) {
  const bool fm = attr_int(n, "fmod", 0) != 0;
  return binary(c, n, Binary::Arithmetic, [fm](int64_t a, int64_t b) { return int_mod(a, b, fm); });
}

Opt equal(FoldContext& c, const onnx::NodeProto& n) {
  return binary(c, n, Binary::CompareAnyType, [](int64_t a, int64_t b) { return truth(a == b); });
}
Opt less(FoldContext& c, const onnx::NodeProto& n) {
  return binary(c, n, Binary::Compare, [](int64_t a, int64_t b) { return truth(a < b); });
}
Opt less_or_equal(FoldContext& c, const onnx::NodeProto& n) {
  return binary(c, n, Binary::Compare, [](int64_t a, int64_t b) { return truth(a <= b); });
}
Opt greater(FoldContext& c, const onnx::NodeProto& n) {
  return binary(c, n, Binary::Compare, [](int64_t a, int64_t b) { return truth(a > b); });
}
Opt greater_or_equal(FoldContext& c, const onnx::NodeProto& n) {
  return binary(c, n, Binary::Compare, [](int64_t a, int64_t b) { return truth(a >= b); });
}

Opt logical_and(FoldContext& c, const onnx::NodeProto& n) {
  return binary(c, n, Binary::Logic, [](int64_t a, int64_t b) { return truth(a != 0 && b != 0); });
}
Opt logical_or(FoldContext& c, const onnx::NodeProto& n) {
  return binary(c, n, Binary::Logic, [](int64_t a, int64_t b) { return truth(a != 0 || b != 0); });
}
Opt logical_xor(FoldContext& c, const onnx::NodeProto& n) {
  return binary(c, n, Binary::Logic, [](int64_t a, int64_t b) { return truth((a != 0) != (b != 0)); });
}

}  // namespace modelstat::loader::fold

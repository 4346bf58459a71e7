// Folding of ops that compute values: arithmetic, comparison, logic,
// rounding, reductions, Where and Cast, on integer and float values. Integer
// arithmetic is checked (an overflow leaves the value unknown) and wraps only
// where ONNX says so (Cast); float arithmetic runs in double and rounds each
// result to the element type (double has more than twice float's precision,
// so one rounding gives float32's own result for +, -, *, /, sqrt). Each op's
// record (analyzer/cost/elementwise.cc, reduction.cc, shape_ops.cc) names its
// function here.
#include <algorithm>
#include <cmath>

#include "analyzer/loader/shape_fold.hpp"

namespace modelstat::loader::fold {

using namespace shape_math;

namespace {

using IntFn = std::function<std::optional<int64_t>(int64_t)>;
using RealFn = std::function<double(double)>;
using BinFn = std::function<std::optional<int64_t>(int64_t, int64_t)>;
using RealBinFn = std::function<double(double, double)>;

bool is_real(const ConstValue& v) { return is_real_type(v.elem_type); }

// Reduction `kind` over the node's axes (attribute, or input 1 from opset 13/18).
enum class Reduction { Sum, Prod, Max, Min };

Opt reduce(FoldContext& c, const onnx::NodeProto& n, Reduction kind) {
  const ConstValue* x = c.in_any(n, 0);
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
  ConstValue out;
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
  const bool real = is_real(*x);
  std::vector<std::optional<int64_t>> acc(m);
  std::vector<std::optional<double>> real_acc(m);
  if (!is_minmax) {
    for (auto& a : acc) a = kind == Reduction::Prod ? 1 : 0;
    for (auto& a : real_acc) a = kind == Reduction::Prod ? 1.0 : 0.0;
  }
  const Dims out_strides = strides_of(full);
  bool ok = true;
  for_each_index(x->dims, [&](int64_t flat, const Dims& idx) {
    if (!ok) return;
    int64_t o = 0;
    for (size_t a = 0; a < idx.size(); ++a)
      if (!red[a]) o += idx[a] * out_strides[a];
    if (real) {
      auto& cur = real_acc[size_t(o)];
      const double v = real_value(x->values[size_t(flat)]);
      switch (kind) {
        case Reduction::Sum: cur = *cur + v; break;
        case Reduction::Prod: cur = *cur * v; break;
        case Reduction::Max: cur = cur ? std::max(*cur, v) : v; break;
        case Reduction::Min: cur = cur ? std::min(*cur, v) : v; break;
      }
      return;
    }
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
  for (size_t i = 0; i < m; ++i) {
    if (real) {
      out.values.push_back(real_bits(round_to(out.elem_type, *real_acc[i])));
      continue;
    }
    if (!acc[i]) return std::nullopt;
    out.values.push_back(*acc[i]);
  }
  return out;
}

// Elementwise map of a non-bool value: f on integers (nullopt when it fails
// on an element, or when f is empty), g on floats (rounded to the type; when
// g is empty, floats stay unknown).
Opt unary(FoldContext& c, const onnx::NodeProto& n, const IntFn& f, const RealFn& g) {
  const ConstValue* x = c.in_any(n, 0);
  if (!x || x->elem_type == kBool) return std::nullopt;
  ConstValue out = *x;
  if (is_real(*x)) {
    if (!g) return std::nullopt;
    for (int64_t& v : out.values) v = real_bits(round_to(x->elem_type, g(real_value(v))));
    return out;
  }
  if (!f) return std::nullopt;
  for (int64_t& v : out.values) {
    const std::optional<int64_t> r = f(v);
    if (!r) return std::nullopt;
    v = *r;
  }
  return out;
}

// out[i] = f(a[i], b[i]) over the broadcast of a and b, values as stored
// (integers, or float bits: the callers pass functions that decode them).
Opt apply(const ConstValue& a, const ConstValue& b, int32_t out_type, const BinFn& f) {
  const auto dims = broadcast_dims(a.dims, b.dims);
  if (!dims || !numel(*dims)) return std::nullopt;
  const auto ia = broadcast_index(a.dims, *dims);
  const auto ib = broadcast_index(b.dims, *dims);
  ConstValue out;
  out.elem_type = out_type;
  out.dims = *dims;
  for (size_t i = 0; i < ia.size(); ++i) {
    const auto r = f(a.values[size_t(ia[i])], b.values[size_t(ib[i])]);
    if (!r) return std::nullopt;
    out.values.push_back(*r);
  }
  return out;
}

// A float operation on stored bits, its result rounded to `type`.
BinFn on_reals(int32_t type, const RealBinFn& g) {
  return [type, g](int64_t a, int64_t b) -> std::optional<int64_t> {
    return real_bits(round_to(type, g(real_value(a), real_value(b))));
  };
}

// Max/Min/Sum of n same-typed non-bool inputs.
Opt variadic(FoldContext& c, const onnx::NodeProto& n, const BinFn& f, const RealBinFn& g) {
  if (n.input_size() == 0) return std::nullopt;
  const ConstValue* first = c.in_any(n, 0);
  if (!first || first->elem_type == kBool) return std::nullopt;
  ConstValue acc = *first;
  const BinFn op = is_real(acc) ? on_reals(acc.elem_type, g) : f;
  for (int i = 1; i < n.input_size(); ++i) {
    const ConstValue* x = c.in_any(n, i);
    if (!x || x->elem_type != acc.elem_type) return std::nullopt;
    Opt next = apply(acc, *x, acc.elem_type, op);
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
std::optional<ConstValue> legacy_operand(const onnx::NodeProto& n, const ConstValue& a, const ConstValue& b) {
  if (!find_attr(n, "broadcast")) return b;
  if (attr_int(n, "broadcast", 0) == 0) return a.dims == b.dims ? std::optional<ConstValue>(b) : std::nullopt;
  const auto ra = int64_t(a.dims.size()), rb = int64_t(b.dims.size());
  if (rb > ra) return std::nullopt;
  int64_t axis = ra - rb;
  if (find_attr(n, "axis")) {
    const auto na = norm_axis(attr_int(n, "axis", 0), ra);
    if (!na) return std::nullopt;
    axis = *na;
  }
  if (axis + rb > ra) return std::nullopt;
  ConstValue out = b;
  out.dims.assign(size_t(axis), 1);
  out.dims.insert(out.dims.end(), b.dims.begin(), b.dims.end());
  out.dims.resize(size_t(ra), 1);
  for (int64_t d = 0; d < ra; ++d)
    if (out.dims[size_t(d)] != 1 && out.dims[size_t(d)] != a.dims[size_t(d)]) return std::nullopt;
  return out;
}

// f on integer operands; g on float operands (empty: floats stay unknown).
// For comparisons g returns 1 or 0.
Opt binary(FoldContext& c, const onnx::NodeProto& n, Binary kind, const BinFn& f, const RealBinFn& g) {
  if (n.input_size() != 2) return std::nullopt;
  const ConstValue* a = c.in_any(n, 0);
  const ConstValue* b = c.in_any(n, 1);
  if (!a || !b || a->elem_type != b->elem_type) return std::nullopt;
  const bool logical = kind == Binary::Logic;
  if (logical != (a->elem_type == kBool) && kind != Binary::CompareAnyType) return std::nullopt;
  const std::optional<ConstValue> rhs = legacy_operand(n, *a, *b);
  if (!rhs) return std::nullopt;
  const int32_t out_type = kind == Binary::Arithmetic ? a->elem_type : kBool;
  if (!is_real(*a)) return apply(*a, *rhs, out_type, f);
  if (!g) return std::nullopt;
  if (kind == Binary::Arithmetic) return apply(*a, *rhs, out_type, on_reals(out_type, g));
  return apply(*a, *rhs, out_type, [g](int64_t x, int64_t y) -> std::optional<int64_t> {
    return g(real_value(x), real_value(y)) != 0 ? 1 : 0;
  });
}

std::optional<int64_t> truth(bool v) { return int64_t(v); }

// Integer power by repeated checked multiplication; negative exponents unknown.
std::optional<int64_t> int_pow(int64_t base, int64_t exp) {
  if (exp < 0) return std::nullopt;
  std::optional<int64_t> r = 1;
  for (int64_t i = 0; i < exp && r; ++i) {
    r = checked_mul(*r, base);
    if (*r == 0 || *r == 1) break;  // stays there (base 0 or 1)
  }
  return r;
}

// The element type Cast converts to: `to` as an int (opset 6+) or a type name (opset 1).
int32_t cast_target(const onnx::NodeProto& n) {
  const auto* a = find_attr(n, "to");
  if (!a) return 0;
  if (a->type() == onnx::AttributeProto::INT) return int32_t(a->i());
  onnx::TensorProto_DataType t;
  if (a->type() == onnx::AttributeProto::STRING && onnx::TensorProto_DataType_Parse(a->s(), &t)) return t;
  return 0;
}

// A float converted to integer type t as C truncation does; nullopt where C
// leaves it undefined (NaN, out of t's range).
std::optional<int64_t> real_to_int(double x, int32_t t) {
  if (t == kBool) return x != 0 ? 1 : 0;
  if (!std::isfinite(x)) return std::nullopt;
  const double r = std::trunc(x);
  if (r < -9.2233720368547758e18 || r >= 9.2233720368547758e18) return std::nullopt;
  const auto v = int64_t(r);
  if (wrap_to(t, v) != v) return std::nullopt;
  return v;
}

}  // namespace

Folded cast(FoldContext& c, const onnx::NodeProto& n) {
  const ConstValue* x = c.in_any(n, 0);
  const int32_t to = cast_target(n);
  if (!x || !(is_int_type(to) || is_real_type(to))) return std::nullopt;
  ConstValue out = *x;
  out.elem_type = to;
  for (int64_t& v : out.values) {
    if (is_real(*x) && is_real_type(to)) {
      v = real_bits(round_to(to, real_value(v)));
    } else if (is_real(*x)) {
      const auto i = real_to_int(real_value(v), to);
      if (!i) return std::nullopt;
      v = *i;
    } else if (is_real_type(to)) {
      v = real_bits(round_to(to, double(v)));
    } else {
      v = wrap_to(to, v);
    }
  }
  return out;
}

Folded floor(FoldContext& c, const onnx::NodeProto& n) {
  return unary(c, n, [](int64_t v) -> std::optional<int64_t> { return v; }, [](double v) { return std::floor(v); });
}
Folded ceil(FoldContext& c, const onnx::NodeProto& n) {
  return unary(c, n, [](int64_t v) -> std::optional<int64_t> { return v; }, [](double v) { return std::ceil(v); });
}
// Round: halves to even (std::nearbyint in the default rounding mode).
Folded round(FoldContext& c, const onnx::NodeProto& n) {
  return unary(c, n, [](int64_t v) -> std::optional<int64_t> { return v; }, [](double v) { return std::nearbyint(v); });
}
Folded sqrt(FoldContext& c, const onnx::NodeProto& n) {
  return unary(c, n, {}, [](double v) { return std::sqrt(v); });
}
Folded reciprocal(FoldContext& c, const onnx::NodeProto& n) {
  return unary(c, n, {}, [](double v) { return 1.0 / v; });
}

// Pow: the base's type; an integer base with an integer exponent by checked
// multiplication, a float base by std::pow.
Folded pow(FoldContext& c, const onnx::NodeProto& n) {
  const ConstValue* a = c.in_any(n, 0);
  const ConstValue* b = c.in_any(n, 1);
  if (!a || !b || a->elem_type == kBool || b->elem_type == kBool) return std::nullopt;
  const int32_t t = a->elem_type;
  if (!is_real(*a)) {
    if (is_real(*b)) return std::nullopt;
    return apply(*a, *b, t, [t](int64_t x, int64_t y) -> std::optional<int64_t> {
      const auto r = int_pow(x, y);
      return r && wrap_to(t, *r) == *r ? r : std::nullopt;
    });
  }
  return apply(*a, *b, t, [t, real_exp = is_real(*b)](int64_t x, int64_t y) -> std::optional<int64_t> {
    return real_bits(round_to(t, std::pow(real_value(x), real_exp ? real_value(y) : double(y))));
  });
}

Folded where(FoldContext& c, const onnx::NodeProto& n) {
  const ConstValue* cond = c.in(n, 0);
  const ConstValue* x = c.in_any(n, 1);
  const ConstValue* y = c.in_any(n, 2);
  if (!cond || !x || !y || x->elem_type != y->elem_type) return std::nullopt;
  auto dims = broadcast_dims(cond->dims, x->dims);
  if (dims) dims = broadcast_dims(*dims, y->dims);
  if (!dims || !numel(*dims)) return std::nullopt;
  const auto ic = broadcast_index(cond->dims, *dims);
  const auto ix = broadcast_index(x->dims, *dims);
  const auto iy = broadcast_index(y->dims, *dims);
  ConstValue out;
  out.elem_type = x->elem_type;
  out.dims = *dims;
  for (size_t i = 0; i < ic.size(); ++i)
    out.values.push_back(cond->values[size_t(ic[i])] != 0 ? x->values[size_t(ix[i])] : y->values[size_t(iy[i])]);
  return out;
}

Folded reduce_sum(FoldContext& c, const onnx::NodeProto& n) { return reduce(c, n, Reduction::Sum); }
Folded reduce_prod(FoldContext& c, const onnx::NodeProto& n) { return reduce(c, n, Reduction::Prod); }
Folded reduce_max(FoldContext& c, const onnx::NodeProto& n) { return reduce(c, n, Reduction::Max); }
Folded reduce_min(FoldContext& c, const onnx::NodeProto& n) { return reduce(c, n, Reduction::Min); }

Folded abs(FoldContext& c, const onnx::NodeProto& n) {
  return unary(
      c, n,
      [](int64_t v) -> std::optional<int64_t> {
        if (v == kI64Min) return std::nullopt;
        return v < 0 ? -v : v;
      },
      [](double v) { return std::fabs(v); });
}

Folded neg(FoldContext& c, const onnx::NodeProto& n) {
  return unary(
      c, n,
      [](int64_t v) -> std::optional<int64_t> {
        if (v == kI64Min) return std::nullopt;
        return -v;
      },
      [](double v) { return -v; });
}

Folded sign(FoldContext& c, const onnx::NodeProto& n) {
  return unary(
      c, n, [](int64_t v) -> std::optional<int64_t> { return v > 0 ? 1 : (v < 0 ? -1 : 0); },
      [](double v) { return v > 0 ? 1.0 : v < 0 ? -1.0 : v; });  // 0, -0 and NaN as they are
}

Folded logical_not(FoldContext& c, const onnx::NodeProto& n) {
  const ConstValue* x = c.in(n, 0);
  if (!x || x->elem_type != kBool) return std::nullopt;
  ConstValue out = *x;
  for (int64_t& v : out.values) v = v == 0 ? 1 : 0;
  return out;
}

// ONNX Max/Min propagate NaN (as std::fmax/fmin would not).
Folded max(FoldContext& c, const onnx::NodeProto& n) {
  return variadic(
      c, n, [](int64_t a, int64_t b) -> std::optional<int64_t> { return std::max(a, b); },
      [](double a, double b) { return std::isnan(a) || std::isnan(b) ? a + b : std::max(a, b); });
}
Folded min(FoldContext& c, const onnx::NodeProto& n) {
  return variadic(
      c, n, [](int64_t a, int64_t b) -> std::optional<int64_t> { return std::min(a, b); },
      [](double a, double b) { return std::isnan(a) || std::isnan(b) ? a + b : std::min(a, b); });
}
Folded sum(FoldContext& c, const onnx::NodeProto& n) {
  return variadic(c, n, checked_add, [](double a, double b) { return a + b; });
}

Folded add(FoldContext& c, const onnx::NodeProto& n) {
  return binary(c, n, Binary::Arithmetic, checked_add, [](double a, double b) { return a + b; });
}
Folded sub(FoldContext& c, const onnx::NodeProto& n) {
  return binary(c, n, Binary::Arithmetic, checked_sub, [](double a, double b) { return a - b; });
}
Folded mul(FoldContext& c, const onnx::NodeProto& n) {
  return binary(c, n, Binary::Arithmetic, checked_mul, [](double a, double b) { return a * b; });
}
// Float division is IEEE's (x / 0 is an infinity or NaN, as at run time).
Folded div(FoldContext& c, const onnx::NodeProto& n) {
  return binary(c, n, Binary::Arithmetic, int_div, [](double a, double b) { return a / b; });
}
// Float Mod requires fmod = 1 (ONNX): C's fmod.
Folded mod(FoldContext& c, const onnx::NodeProto& n) {
  const bool fm = attr_int(n, "fmod", 0) != 0;
  RealBinFn g;
  if (fm) g = [](double a, double b) { return std::fmod(a, b); };
  return binary(c, n, Binary::Arithmetic, [fm](int64_t a, int64_t b) { return int_mod(a, b, fm); }, g);
}

Folded equal(FoldContext& c, const onnx::NodeProto& n) {
  return binary(c, n, Binary::CompareAnyType, [](int64_t a, int64_t b) { return truth(a == b); },
                [](double a, double b) { return double(a == b); });
}
Folded less(FoldContext& c, const onnx::NodeProto& n) {
  return binary(c, n, Binary::Compare, [](int64_t a, int64_t b) { return truth(a < b); },
                [](double a, double b) { return double(a < b); });
}
Folded less_or_equal(FoldContext& c, const onnx::NodeProto& n) {
  return binary(c, n, Binary::Compare, [](int64_t a, int64_t b) { return truth(a <= b); },
                [](double a, double b) { return double(a <= b); });
}
Folded greater(FoldContext& c, const onnx::NodeProto& n) {
  return binary(c, n, Binary::Compare, [](int64_t a, int64_t b) { return truth(a > b); },
                [](double a, double b) { return double(a > b); });
}
Folded greater_or_equal(FoldContext& c, const onnx::NodeProto& n) {
  return binary(c, n, Binary::Compare, [](int64_t a, int64_t b) { return truth(a >= b); },
                [](double a, double b) { return double(a >= b); });
}

Folded logical_and(FoldContext& c, const onnx::NodeProto& n) {
  return binary(c, n, Binary::Logic, [](int64_t a, int64_t b) { return truth(a != 0 && b != 0); }, {});
}
Folded logical_or(FoldContext& c, const onnx::NodeProto& n) {
  return binary(c, n, Binary::Logic, [](int64_t a, int64_t b) { return truth(a != 0 || b != 0); }, {});
}
Folded logical_xor(FoldContext& c, const onnx::NodeProto& n) {
  return binary(c, n, Binary::Logic, [](int64_t a, int64_t b) { return truth((a != 0) != (b != 0)); }, {});
}

}  // namespace modelstat::loader::fold

// Integer constant folding for shape computations; see shape_values.hpp.
#include "analyzer/loader/shape_values.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <utility>

namespace modelstat::loader {

namespace {

using onnx::TensorProto;
using onnx::TensorProto_DataType;
using Dims = std::vector<int64_t>;
using Opt = std::optional<IntValue>;

constexpr int64_t kMaxElems = kMaxIntValueElements;
constexpr size_t kMaxRank = 64;
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();

constexpr int32_t kInt64 = TensorProto::INT64;
constexpr int32_t kBool = TensorProto::BOOL;

bool is_int_type(int32_t t) {
  switch (t) {
    case TensorProto::INT64:
    case TensorProto::INT32:
    case TensorProto::INT16:
    case TensorProto::INT8:
    case TensorProto::UINT8:
    case TensorProto::UINT16:
    case TensorProto::UINT32:
    case TensorProto::BOOL:
      return true;
    default:
      return false;
  }
}

size_t elem_size(int32_t t) {
  switch (t) {
    case TensorProto::INT64: return 8;
    case TensorProto::INT32:
    case TensorProto::UINT32: return 4;
    case TensorProto::INT16:
    case TensorProto::UINT16: return 2;
    default: return 1;
  }
}

// v converted to type t the way a C cast (and ONNX Cast) does: wrap modulo 2^bits.
int64_t wrap_to(int32_t t, int64_t v) {
  const auto u = static_cast<uint64_t>(v);
  switch (t) {
    case TensorProto::INT32: return static_cast<int32_t>(static_cast<uint32_t>(u));
    case TensorProto::INT16: return static_cast<int16_t>(static_cast<uint16_t>(u));
    case TensorProto::INT8: return static_cast<int8_t>(static_cast<uint8_t>(u));
    case TensorProto::UINT32: return static_cast<uint32_t>(u);
    case TensorProto::UINT16: return static_cast<uint16_t>(u);
    case TensorProto::UINT8: return static_cast<uint8_t>(u);
    case TensorProto::BOOL: return v != 0 ? 1 : 0;
    default: return v;
  }
}

// Element count of dims, or nullopt when a dim is negative, the rank is absurd
// or the count exceeds kMaxElems. Zero dims count as 1 for the bound, so every
// partial product of accepted dims is <= kMaxElems too.
std::optional<int64_t> numel(const Dims& dims) {
  if (dims.size() > kMaxRank) return std::nullopt;
  int64_t bound = 1;
  bool empty = false;
  for (int64_t d : dims) {
    if (d < 0 || d > kMaxElems) return std::nullopt;
    if (d == 0) empty = true;
    bound *= std::max<int64_t>(d, 1);
    if (bound > kMaxElems) return std::nullopt;
  }
  return empty ? 0 : bound;
}

int64_t prod(const Dims& dims, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t i = from; i < to; ++i) n *= dims[i];
  return n;
}

Dims strides_of(const Dims& dims) {
  Dims s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

// Calls f(flat, index) for every multi-index of dims in row-major order.
// dims must have passed numel(). (Not a template: GCC 12 inlines it and then
// reports a bogus -Wfree-nonheap-object on the index vector.)
void for_each_index(const Dims& dims, const std::function<void(int64_t, const Dims&)>& f) {
  const int64_t n = prod(dims, 0, dims.size());
  Dims idx(dims.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    f(i, idx);
    for (size_t k = dims.size(); k-- > 0;) {
      if (++idx[k] < dims[k]) break;
      idx[k] = 0;
    }
  }
}

// Normalizes an axis against rank r (negatives count from the back).
std::optional<int64_t> norm_axis(int64_t axis, int64_t r) {
  if (axis < -r || axis >= r) return std::nullopt;
  return axis < 0 ? axis + r : axis;
}

// ---- checked arithmetic ---------------------------------------------------

std::optional<int64_t> add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
std::optional<int64_t> sub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}
std::optional<int64_t> mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
// Integer Div truncates toward zero.
std::optional<int64_t> int_div(int64_t a, int64_t b) {
  if (b == 0 || (a == kI64Min && b == -1)) return std::nullopt;
  return a / b;
}
// fmod = false: result takes the divisor's sign (Python %); true: the dividend's (C fmod).
std::optional<int64_t> int_mod(int64_t a, int64_t b, bool fmod) {
  if (b == 0) return std::nullopt;
  if (b == -1) return 0;
  int64_t r = a % b;
  if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// ---- broadcasting -----------------------------------------------------------

std::optional<Dims> broadcast_dims(const Dims& a, const Dims& b) {
  const size_t r = std::max(a.size(), b.size());
  Dims out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da == db || db == 1) out[i] = da;
    else if (da == 1) out[i] = db;
    else return std::nullopt;
  }
  return out;
}

// For every element of out_dims (row-major), the flat index of the input
// element with in_dims that broadcasts onto it.
std::vector<int64_t> broadcast_index(const Dims& in_dims, const Dims& out_dims) {
  const Dims in_strides = strides_of(in_dims);
  const size_t off = out_dims.size() - in_dims.size();
  std::vector<int64_t> map;
  map.reserve(size_t(prod(out_dims, 0, out_dims.size())));
  for_each_index(out_dims, [&](int64_t, const Dims& idx) {
    int64_t flat = 0;
    for (size_t k = 0; k < in_dims.size(); ++k)
      if (in_dims[k] != 1) flat += idx[k + off] * in_strides[k];
    map.push_back(flat);
  });
  return map;
}

// ---- tensors and attributes ---------------------------------------------------

Opt read_tensor(const TensorProto& t) {
  const int32_t type = t.data_type();
  if (!is_int_type(type)) return std::nullopt;
  if (t.data_location() == TensorProto::EXTERNAL || t.external_data_size() > 0 || t.has_segment())
    return std::nullopt;
  IntValue v;
  v.elem_type = type;
  v.dims.assign(t.dims().begin(), t.dims().end());
  const auto n = numel(v.dims);
  if (!n) return std::nullopt;
  const auto count = size_t(*n);
  const std::string& raw = t.raw_data();
  v.values.reserve(count);
  if (!raw.empty()) {
    const size_t es = elem_size(type);
    if (raw.size() != count * es) return std::nullopt;
    for (size_t i = 0; i < count; ++i) {
      uint64_t u = 0;
      for (size_t b = 0; b < es; ++b) u |= uint64_t(static_cast<uint8_t>(raw[i * es + b])) << (8 * b);
      v.values.push_back(wrap_to(type, static_cast<int64_t>(u)));
    }
  } else if (type == TensorProto::INT64) {
    if (size_t(t.int64_data_size()) != count) return std::nullopt;
    v.values.assign(t.int64_data().begin(), t.int64_data().end());
  } else if (type == TensorProto::UINT32) {
    if (size_t(t.uint64_data_size()) != count) return std::nullopt;
    for (uint64_t u : t.uint64_data()) v.values.push_back(wrap_to(type, static_cast<int64_t>(u)));
  } else {
    if (size_t(t.int32_data_size()) != count) return std::nullopt;
    for (int32_t x : t.int32_data()) v.values.push_back(wrap_to(type, x));
  }
  return v;
}

std::optional<Dims> known_dims(const onnx::TypeProto& type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return std::nullopt;
  Dims dims;
  for (const auto& d : type.tensor_type().shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0) return std::nullopt;
    dims.push_back(d.dim_value());
  }
  if (dims.size() > kMaxRank) return std::nullopt;
  return dims;
}

const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t attr_int(const onnx::NodeProto& n, const char* name, int64_t dflt) {
  const auto* a = find_attr(n, name);
  return a && a->type() == onnx::AttributeProto::INT ? a->i() : dflt;
}

std::optional<Dims> attr_ints(const onnx::NodeProto& n, const char* name) {
  const auto* a = find_attr(n, name);
  if (!a || a->type() != onnx::AttributeProto::INTS || a->ints_size() > kMaxElems) return std::nullopt;
  return Dims(a->ints().begin(), a->ints().end());
}

IntValue scalar(int64_t x, int32_t type = kInt64) { return IntValue{{}, {x}, type}; }
IntValue vec(Dims xs, int32_t type = kInt64) {
  IntValue v;
  v.dims = {int64_t(xs.size())};
  v.values = std::move(xs);
  v.elem_type = type;
  return v;
}

// A well-formed value: consistent size, bounded, values representable.
bool valid(const IntValue& v) {
  const auto n = numel(v.dims);
  if (!n || size_t(*n) != v.values.size() || !is_int_type(v.elem_type)) return false;
  for (int64_t x : v.values)
    if (wrap_to(v.elem_type, x) != x) return false;
  return true;
}

// ---- the evaluator --------------------------------------------------------------

class Evaluator {
 public:
  std::unordered_map<std::string, IntValue> values;
  std::unordered_map<std::string, Dims> shapes;

  void run(const onnx::NodeProto& n) {
    for (const auto& o : n.output()) values.erase(o);
    if (n.output_size() == 0 || n.output(0).empty()) return;
    if (!n.domain().empty() && n.domain() != "ai.onnx") return;
    Opt out = eval(n);
    if (out && valid(*out)) values[n.output(0)] = std::move(*out);
  }

 private:
  // Input i when present and evaluated, else nullptr.
  const IntValue* in(const onnx::NodeProto& n, int i) const {
    if (i >= n.input_size() || n.input(i).empty()) return nullptr;
    auto it = values.find(n.input(i));
    return it == values.end() ? nullptr : &it->second;
  }
  static bool present(const onnx::NodeProto& n, int i) { return i < n.input_size() && !n.input(i).empty(); }

  std::optional<Dims> shape_of(const onnx::NodeProto& n, int i) const {
    if (!present(n, i)) return std::nullopt;
    if (auto it = values.find(n.input(i)); it != values.end()) return it->second.dims;
    if (auto it = shapes.find(n.input(i)); it != shapes.end()) return it->second;
    return std::nullopt;
  }

  // Records the dims of output 0 when its values stay unknown.
  void note_shape(const onnx::NodeProto& n, const Dims& dims) {
    if (dims.size() <= kMaxRank) shapes[n.output(0)] = dims;
  }

  // An "axes"-like list from attribute `name` or, failing that, input `idx`.
  // nullopt = unknown/ill-formed; an empty Dims with *given=false = absent.
  std::optional<Dims> axes_of(const onnx::NodeProto& n, const char* name, int idx, bool* given) const {
    *given = true;
    if (find_attr(n, name)) return attr_ints(n, name);
    if (present(n, idx)) {
      const IntValue* a = in(n, idx);
      if (!a || a->dims.size() > 1) return std::nullopt;
      return a->values;
    }
    *given = false;
    return Dims{};
  }

  Opt eval(const onnx::NodeProto& n) {
    const std::string& op = n.op_type();
    if (op == "Constant") return constant(n);
    if (op == "Identity") {
      if (const IntValue* x = in(n, 0)) return *x;
      return std::nullopt;
    }
    if (op == "Floor" || op == "Ceil" || op == "Round") {  // no-ops on integers
      if (const IntValue* x = in(n, 0); x && x->elem_type != kBool) return *x;
      return std::nullopt;
    }
    if (op == "Shape") return shape(n);
    if (op == "Size") {
      const auto d = shape_of(n, 0);
      if (!d) return std::nullopt;
      int64_t p = 1;
      for (int64_t x : *d) {
        auto r = mul(p, x);
        if (!r) return std::nullopt;
        p = *r;
      }
      return scalar(p);
    }
    if (op == "Gather") return gather(n);
    if (op == "Unsqueeze") return unsqueeze(n);
    if (op == "Squeeze") return squeeze(n);
    if (op == "Concat") return concat(n);
    if (op == "Slice") return slice(n);
    if (op == "Cast") return cast(n);
    if (op == "Reshape") return reshape(n);
    if (op == "Flatten") return flatten(n);
    if (op == "Transpose") return transpose(n);
    if (op == "ConstantOfShape") return constant_of_shape(n);
    if (op == "Range") return range(n);
    if (op == "Expand") return expand(n);
    if (op == "Tile") return tile(n);
    if (op == "Where") return where(n);
    if (op == "ReduceSum" || op == "ReduceProd" || op == "ReduceMax" || op == "ReduceMin") return reduce(n);
    if (op == "Abs" || op == "Neg" || op == "Sign" || op == "Not") return unary(n);
    if (op == "Max" || op == "Min" || op == "Sum") return variadic(n);
    return binary(n);
  }

  Opt constant(const onnx::NodeProto& n) {
    if (n.attribute_size() != 1) return std::nullopt;
    const auto& a = n.attribute(0);
    if (a.name() == "value" && a.type() == onnx::AttributeProto::TENSOR) return read_tensor(a.t());
    if (a.name() == "value_int" && a.type() == onnx::AttributeProto::INT) return scalar(a.i());
    if (a.name() == "value_ints" && a.type() == onnx::AttributeProto::INTS && a.ints_size() <= kMaxElems)
      return vec(Dims(a.ints().begin(), a.ints().end()));
    return std::nullopt;
  }

  Opt shape(const onnx::NodeProto& n) {
    const auto d = shape_of(n, 0);
    if (!d) return std::nullopt;
    const auto r = int64_t(d->size());
    auto clampi = [r](int64_t x) {
      if (x < 0) x = x < -r ? 0 : x + r;
      return std::min(x, r);
    };
    const int64_t start = clampi(attr_int(n, "start", 0));
    const int64_t end = clampi(attr_int(n, "end", r));
    if (start >= end) return vec({});
    return vec(Dims(d->begin() + start, d->begin() + end));
  }

  Opt gather(const onnx::NodeProto& n) {
    const IntValue* data = in(n, 0);
    const IntValue* idx = in(n, 1);
    if (!data || !idx || data->dims.empty() || idx->elem_type == kBool) return std::nullopt;
    const auto r = int64_t(data->dims.size());
    const auto axis = norm_axis(attr_int(n, "axis", 0), r);
    if (!axis) return std::nullopt;
    const auto ax = size_t(*axis);
    const int64_t len = data->dims[ax];
    IntValue out;
    out.elem_type = data->elem_type;
    out.dims.assign(data->dims.begin(), data->dims.begin() + *axis);
    out.dims.insert(out.dims.end(), idx->dims.begin(), idx->dims.end());
    out.dims.insert(out.dims.end(), data->dims.begin() + *axis + 1, data->dims.end());
    if (!numel(out.dims)) return std::nullopt;
    const int64_t outer = prod(data->dims, 0, ax);
    const int64_t inner = prod(data->dims, ax + 1, data->dims.size());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k : idx->values) {
        if (k < -len || k >= len) return std::nullopt;
        if (k < 0) k += len;
        for (int64_t i = 0; i < inner; ++i) out.values.push_back(data->values[size_t((o * len + k) * inner + i)]);
      }
    return out;
  }

  Opt unsqueeze(const onnx::NodeProto& n) {
    const IntValue* x = in(n, 0);
    bool given = false;
    auto axes = axes_of(n, "axes", 1, &given);
    if (!x || !axes || !given || axes->empty()) return std::nullopt;
    const auto r = int64_t(x->dims.size() + axes->size());
    if (size_t(r) > kMaxRank) return std::nullopt;
    std::vector<bool> is_new(size_t(r), false);
    for (int64_t a : *axes) {
      const auto na = norm_axis(a, r);
      if (!na || is_new[size_t(*na)]) return std::nullopt;
      is_new[size_t(*na)] = true;
    }
    IntValue out = *x;
    out.dims.clear();
    size_t next = 0;
    for (int64_t i = 0; i < r; ++i) out.dims.push_back(is_new[size_t(i)] ? 1 : x->dims[next++]);
    return out;
  }

  Opt squeeze(const onnx::NodeProto& n) {
    const IntValue* x = in(n, 0);
    bool given = false;
    auto axes = axes_of(n, "axes", 1, &given);
    if (!x || !axes) return std::nullopt;
    const auto r = int64_t(x->dims.size());
    std::vector<bool> drop(size_t(r), false);
    if (!given || axes->empty()) {
      for (int64_t i = 0; i < r; ++i) drop[size_t(i)] = x->dims[size_t(i)] == 1;
    } else {
      for (int64_t a : *axes) {
        const auto na = norm_axis(a, r);
        if (!na || drop[size_t(*na)] || x->dims[size_t(*na)] != 1) return std::nullopt;
        drop[size_t(*na)] = true;
      }
    }
    IntValue out = *x;
    out.dims.clear();
    for (int64_t i = 0; i < r; ++i)
      if (!drop[size_t(i)]) out.dims.push_back(x->dims[size_t(i)]);
    return out;
  }

  Opt concat(const onnx::NodeProto& n) {
    if (n.input_size() == 0 || !find_attr(n, "axis")) return std::nullopt;
    std::vector<const IntValue*> xs;
    for (int i = 0; i < n.input_size(); ++i) {
      const IntValue* x = in(n, i);
      if (!x) return std::nullopt;
      xs.push_back(x);
    }
    const Dims& d0 = xs[0]->dims;
    const auto axis = norm_axis(attr_int(n, "axis", 0), int64_t(d0.size()));
    if (!axis) return std::nullopt;
    const auto ax = size_t(*axis);
    IntValue out;
    out.elem_type = xs[0]->elem_type;
    out.dims = d0;
    out.dims[ax] = 0;
    for (const IntValue* x : xs) {
      if (x->dims.size() != d0.size() || x->elem_type != out.elem_type) return std::nullopt;
      for (size_t k = 0; k < d0.size(); ++k)
        if (k != ax && x->dims[k] != d0[k]) return std::nullopt;
      out.dims[ax] += x->dims[ax];
    }
    if (!numel(out.dims)) return std::nullopt;
    const int64_t outer = prod(d0, 0, ax);
    for (int64_t o = 0; o < outer; ++o)
      for (const IntValue* x : xs) {
        const int64_t chunk = prod(x->dims, ax, x->dims.size());
        const auto begin = x->values.begin() + o * chunk;
        out.values.insert(out.values.end(), begin, begin + chunk);
      }
    return out;
  }

  Opt slice(const onnx::NodeProto& n) {
    const IntValue* x = in(n, 0);
    if (!x) return std::nullopt;
    std::optional<Dims> starts, ends, axes, steps;
    if (find_attr(n, "starts") || find_attr(n, "ends")) {  // opset 1-9
      starts = attr_ints(n, "starts");
      ends = attr_ints(n, "ends");
      if (find_attr(n, "axes")) {
        axes = attr_ints(n, "axes");
        if (!axes) return std::nullopt;
      }
    } else {  // opset 10+
      auto vals = [&](int i) -> std::optional<Dims> {
        const IntValue* v = in(n, i);
        if (!v || v->dims.size() != 1 || v->elem_type == kBool) return std::nullopt;
        return v->values;
      };
      starts = vals(1);
      ends = vals(2);
      if (present(n, 3) && !(axes = vals(3))) return std::nullopt;
      if (present(n, 4) && !(steps = vals(4))) return std::nullopt;
    }
    if (!starts || !ends || starts->size() != ends->size()) return std::nullopt;
    const size_t k = starts->size();
    const auto r = int64_t(x->dims.size());
    if (!axes) {
      if (int64_t(k) > r) return std::nullopt;
      axes = Dims(k);
      for (size_t i = 0; i < k; ++i) (*axes)[i] = int64_t(i);
    }
    if (!steps) steps = Dims(k, 1);
    if (axes->size() != k || steps->size() != k) return std::nullopt;

    Dims first(size_t(r), 0), step(size_t(r), 1), count = x->dims;
    std::vector<bool> seen(size_t(r), false);
    for (size_t i = 0; i < k; ++i) {
      const auto na = norm_axis((*axes)[i], r);
      if (!na || seen[size_t(*na)]) return std::nullopt;
      const auto a = size_t(*na);
      seen[a] = true;
      const int64_t dim = x->dims[a];
      // Steps beyond +-2^40 behave like +-2^40 on dims <= 4096, and avoid negating INT64_MIN.
      const int64_t st = std::clamp<int64_t>((*steps)[i], -(int64_t(1) << 40), int64_t(1) << 40);
      if (st == 0) return std::nullopt;
      int64_t s = (*starts)[i], e = (*ends)[i];
      if (s < 0) s += dim;  // cannot overflow: dim >= 0
      if (e < 0) e += dim;
      int64_t c;
      if (st > 0) {
        s = std::clamp<int64_t>(s, 0, dim);
        e = std::clamp<int64_t>(e, 0, dim);
        c = e > s ? (e - s + st - 1) / st : 0;
      } else {
        s = std::clamp<int64_t>(s, 0, dim - 1);
        e = std::clamp<int64_t>(e, -1, dim - 1);
        c = s > e ? (s - e + (-st) - 1) / (-st) : 0;
      }
      first[a] = s;
      step[a] = st;
      count[a] = c;
    }
    IntValue out;
    out.elem_type = x->elem_type;
    out.dims = count;
    if (!numel(out.dims)) return std::nullopt;
    const Dims in_strides = strides_of(x->dims);
    for_each_index(out.dims, [&](int64_t, const Dims& idx) {
      int64_t flat = 0;
      for (size_t a = 0; a < idx.size(); ++a) flat += (first[a] + idx[a] * step[a]) * in_strides[a];
      out.values.push_back(x->values[size_t(flat)]);
    });
    return out;
  }

  Opt cast(const onnx::NodeProto& n) {
    const IntValue* x = in(n, 0);
    const auto to = int32_t(attr_int(n, "to", 0));
    if (!x || !is_int_type(to)) return std::nullopt;
    IntValue out = *x;
    out.elem_type = to;
    for (int64_t& v : out.values) v = wrap_to(to, v);
    return out;
  }

  Opt reshape(const onnx::NodeProto& n) {
    const IntValue* x = in(n, 0);
    const IntValue* s = in(n, 1);
    if (!x || !s || s->dims.size() != 1 || s->values.size() > kMaxRank) return std::nullopt;
    const bool allowzero = attr_int(n, "allowzero", 0) != 0;
    IntValue out = *x;
    out.dims = s->values;
    int64_t infer = -1, known = 1;
    for (size_t i = 0; i < out.dims.size(); ++i) {
      int64_t& d = out.dims[i];
      if (d == 0 && !allowzero) {
        if (i >= x->dims.size()) return std::nullopt;
        d = x->dims[i];
      }
      if (d == -1) {
        if (infer >= 0) return std::nullopt;
        infer = int64_t(i);
        continue;
      }
      if (d < 0 || d > kMaxElems) return std::nullopt;
      known *= d;
      if (known > kMaxElems) return std::nullopt;
    }
    const auto total = int64_t(x->values.size());
    if (infer >= 0) {
      if (known == 0 || total % known != 0) return std::nullopt;
      out.dims[size_t(infer)] = total / known;
    }
    const auto m = numel(out.dims);
    if (!m || *m != total) return std::nullopt;
    return out;
  }

  Opt flatten(const onnx::NodeProto& n) {
    const IntValue* x = in(n, 0);
    if (!x) return std::nullopt;
    const auto r = int64_t(x->dims.size());
    int64_t axis = attr_int(n, "axis", 1);
    if (axis < -r || axis > r) return std::nullopt;
    if (axis < 0) axis += r;
    IntValue out = *x;
    out.dims = {prod(x->dims, 0, size_t(axis)), prod(x->dims, size_t(axis), x->dims.size())};
    return out;
  }

  Opt transpose(const onnx::NodeProto& n) {
    const IntValue* x = in(n, 0);
    if (!x) return std::nullopt;
    const size_t r = x->dims.size();
    Dims perm(r);
    if (find_attr(n, "perm")) {
      auto p = attr_ints(n, "perm");
      if (!p || p->size() != r) return std::nullopt;
      perm = *p;
    } else {
      for (size_t i = 0; i < r; ++i) perm[i] = int64_t(r - 1 - i);
    }
    std::vector<bool> seen(r, false);
    for (int64_t p : perm) {
      if (p < 0 || size_t(p) >= r || seen[size_t(p)]) return std::nullopt;
      seen[size_t(p)] = true;
    }
    IntValue out;
    out.elem_type = x->elem_type;
    for (int64_t p : perm) out.dims.push_back(x->dims[size_t(p)]);
    const Dims in_strides = strides_of(x->dims);
    for_each_index(out.dims, [&](int64_t, const Dims& idx) {
      int64_t flat = 0;
      for (size_t a = 0; a < r; ++a) flat += idx[a] * in_strides[size_t(perm[a])];
      out.values.push_back(x->values[size_t(flat)]);
    });
    return out;
  }

  Opt constant_of_shape(const onnx::NodeProto& n) {
    const IntValue* s = in(n, 0);
    if (!s || s->dims.size() != 1 || s->elem_type == kBool || s->values.size() > kMaxRank) return std::nullopt;
    for (int64_t d : s->values)
      if (d < 0) return std::nullopt;
    const Dims& dims = s->values;
    const auto count = numel(dims);
    IntValue fill = scalar(0, TensorProto::FLOAT);  // the default value is float 0
    if (const auto* a = find_attr(n, "value")) {
      if (a->type() != onnx::AttributeProto::TENSOR) return std::nullopt;
      Opt t = read_tensor(a->t());
      if (t && t->values.size() == 1) fill = *t;
      else if (t || is_int_type(a->t().data_type())) return std::nullopt;
    }
    if (!count || !is_int_type(fill.elem_type)) {
      note_shape(n, dims);
      return std::nullopt;
    }
    IntValue out;
    out.elem_type = fill.elem_type;
    out.dims = dims;
    out.values.assign(size_t(*count), fill.values[0]);
    return out;
  }

  Opt range(const onnx::NodeProto& n) {
    const IntValue* start = in(n, 0);
    const IntValue* limit = in(n, 1);
    const IntValue* delta = in(n, 2);
    if (!start || !limit || !delta) return std::nullopt;
    for (const IntValue* v : {start, limit, delta})
      if (v->values.size() != 1 || v->dims.size() > 1 || v->elem_type == kBool) return std::nullopt;
    const int64_t s = start->values[0], l = limit->values[0], d = delta->values[0];
    if (d == 0) return std::nullopt;
    const auto diff = sub(l, s);
    if (!diff) return std::nullopt;
    int64_t q = *diff / d;  // d != 0; diff / -1 cannot overflow unless diff == INT64_MIN
    if (*diff == kI64Min && d == -1) return std::nullopt;
    if (*diff % d != 0 && ((*diff > 0) == (d > 0))) ++q;
    const int64_t count = std::max<int64_t>(q, 0);
    if (count > kMaxElems) return std::nullopt;
    IntValue out;
    out.elem_type = start->elem_type;
    out.dims = {count};
    int64_t v = s;
    for (int64_t i = 0; i < count; ++i) {
      out.values.push_back(v);
      if (i + 1 < count) {
        auto next = add(v, d);
        if (!next) return std::nullopt;
        v = *next;
      }
    }
    return out;
  }

  Opt expand(const onnx::NodeProto& n) {
    const IntValue* x = in(n, 0);
    const IntValue* s = in(n, 1);
    if (!x || !s || s->dims.size() != 1 || s->elem_type == kBool || s->values.size() > kMaxRank) return std::nullopt;
    const auto dims = broadcast_dims(x->dims, s->values);
    if (!dims) return std::nullopt;
    for (int64_t d : *dims)
      if (d < 0) return std::nullopt;
    if (!numel(*dims)) {
      note_shape(n, *dims);
      return std::nullopt;
    }
    IntValue out;
    out.elem_type = x->elem_type;
    out.dims = *dims;
    for (int64_t i : broadcast_index(x->dims, *dims)) out.values.push_back(x->values[size_t(i)]);
    return out;
  }

  Opt tile(const onnx::NodeProto& n) {
    const IntValue* x = in(n, 0);
    const IntValue* reps = in(n, 1);
    if (!x || !reps || reps->dims.size() != 1 || reps->values.size() != x->dims.size()) return std::nullopt;
    IntValue out;
    out.elem_type = x->elem_type;
    for (size_t i = 0; i < x->dims.size(); ++i) {
      const int64_t rep = reps->values[i];
      if (rep < 0 || rep > kMaxElems) return std::nullopt;
      out.dims.push_back(x->dims[i] * rep);  // both <= 4096
    }
    if (!numel(out.dims)) return std::nullopt;
    const Dims in_strides = strides_of(x->dims);
    for_each_index(out.dims, [&](int64_t, const Dims& idx) {
      int64_t flat = 0;
      for (size_t a = 0; a < idx.size(); ++a) flat += (idx[a] % x->dims[a]) * in_strides[a];
      out.values.push_back(x->values[size_t(flat)]);
    });
    return out;
  }

  Opt where(const onnx::NodeProto& n) {
    const IntValue* c = in(n, 0);
    const IntValue* x = in(n, 1);
    const IntValue* y = in(n, 2);
    if (!c || !x || !y || x->elem_type != y->elem_type) return std::nullopt;
    auto dims = broadcast_dims(c->dims, x->dims);
    if (dims) dims = broadcast_dims(*dims, y->dims);
    if (!dims || !numel(*dims)) return std::nullopt;
    const auto ic = broadcast_index(c->dims, *dims);
    const auto ix = broadcast_index(x->dims, *dims);
    const auto iy = broadcast_index(y->dims, *dims);
    IntValue out;
    out.elem_type = x->elem_type;
    out.dims = *dims;
    for (size_t i = 0; i < ic.size(); ++i)
      out.values.push_back(c->values[size_t(ic[i])] != 0 ? x->values[size_t(ix[i])] : y->values[size_t(iy[i])]);
    return out;
  }

  Opt reduce(const onnx::NodeProto& n) {
    const IntValue* x = in(n, 0);
    bool given = false;
    auto axes = axes_of(n, "axes", 1, &given);
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
    const std::string& op = n.op_type();
    const auto m = size_t(prod(full, 0, full.size()));
    const bool is_minmax = op == "ReduceMax" || op == "ReduceMin";
    if (is_minmax && x->values.empty()) return std::nullopt;
    std::vector<std::optional<int64_t>> acc(m);
    if (!is_minmax)
      for (auto& a : acc) a = op == "ReduceProd" ? 1 : 0;
    const Dims out_strides = strides_of(full);
    bool ok = true;
    for_each_index(x->dims, [&](int64_t flat, const Dims& idx) {
      if (!ok) return;
      int64_t o = 0;
      for (size_t a = 0; a < idx.size(); ++a)
        if (!red[a]) o += idx[a] * out_strides[a];
      auto& cur = acc[size_t(o)];
      const int64_t v = x->values[size_t(flat)];
      if (op == "ReduceSum") cur = add(*cur, v);
      else if (op == "ReduceProd") cur = mul(*cur, v);
      else if (op == "ReduceMax") cur = cur ? std::max(*cur, v) : v;
      else cur = cur ? std::min(*cur, v) : v;
      if (!cur) ok = false;
    });
    if (!ok) return std::nullopt;
    for (const auto& a : acc) {
      if (!a) return std::nullopt;
      out.values.push_back(*a);
    }
    return out;
  }

  Opt unary(const onnx::NodeProto& n) {
    const IntValue* x = in(n, 0);
    if (!x) return std::nullopt;
    const std::string& op = n.op_type();
    IntValue out = *x;
    if (op == "Not") {
      if (x->elem_type != kBool) return std::nullopt;
      for (int64_t& v : out.values) v = v == 0 ? 1 : 0;
      return out;
    }
    if (x->elem_type == kBool) return std::nullopt;
    for (int64_t& v : out.values) {
      if (op == "Sign") {
        v = v > 0 ? 1 : (v < 0 ? -1 : 0);
        continue;
      }
      if (v == kI64Min) return std::nullopt;
      if (op == "Neg" || (op == "Abs" && v < 0)) v = -v;
    }
    return out;
  }

  using BinFn = std::function<std::optional<int64_t>(int64_t, int64_t)>;

  static Opt apply(const IntValue& a, const IntValue& b, int32_t out_type, const BinFn& f) {
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

  Opt variadic(const onnx::NodeProto& n) {
    if (n.input_size() == 0) return std::nullopt;
    const std::string& op = n.op_type();
    BinFn f;
    if (op == "Max") f = [](int64_t a, int64_t b) -> std::optional<int64_t> { return std::max(a, b); };
    else if (op == "Min") f = [](int64_t a, int64_t b) -> std::optional<int64_t> { return std::min(a, b); };
    else f = add;
    const IntValue* first = in(n, 0);
    if (!first || first->elem_type == kBool) return std::nullopt;
    IntValue acc = *first;
    for (int i = 1; i < n.input_size(); ++i) {
      const IntValue* x = in(n, i);
      if (!x || x->elem_type != acc.elem_type) return std::nullopt;
      Opt next = apply(acc, *x, acc.elem_type, f);
      if (!next) return std::nullopt;
      acc = std::move(*next);
    }
    return acc;
  }

  Opt binary(const onnx::NodeProto& n) {
    const std::string& op = n.op_type();
    BinFn f;
    bool logical = false, compare = false;
    if (op == "Add") f = add;
    else if (op == "Sub") f = sub;
    else if (op == "Mul") f = mul;
    else if (op == "Div") f = int_div;
    else if (op == "Mod") {
      const bool fm = attr_int(n, "fmod", 0) != 0;
      f = [fm](int64_t a, int64_t b) { return int_mod(a, b, fm); };
    } else if (op == "Equal") {
      compare = true;
      f = [](int64_t a, int64_t b) -> std::optional<int64_t> { return a == b; };
    } else if (op == "Less") {
      compare = true;
      f = [](int64_t a, int64_t b) -> std::optional<int64_t> { return a < b; };
    } else if (op == "LessOrEqual") {
      compare = true;
      f = [](int64_t a, int64_t b) -> std::optional<int64_t> { return a <= b; };
    } else if (op == "Greater") {
      compare = true;
      f = [](int64_t a, int64_t b) -> std::optional<int64_t> { return a > b; };
    } else if (op == "GreaterOrEqual") {
      compare = true;
      f = [](int64_t a, int64_t b) -> std::optional<int64_t> { return a >= b; };
    } else if (op == "And") {
      logical = true;
      f = [](int64_t a, int64_t b) -> std::optional<int64_t> { return a != 0 && b != 0; };
    } else if (op == "Or") {
      logical = true;
      f = [](int64_t a, int64_t b) -> std::optional<int64_t> { return a != 0 || b != 0; };
    } else if (op == "Xor") {
      logical = true;
      f = [](int64_t a, int64_t b) -> std::optional<int64_t> { return (a != 0) != (b != 0); };
    } else {
      return std::nullopt;
    }
    if (n.input_size() != 2) return std::nullopt;
    const IntValue* a = in(n, 0);
    const IntValue* b = in(n, 1);
    if (!a || !b || a->elem_type != b->elem_type) return std::nullopt;
    if (logical != (a->elem_type == kBool) && !(compare && op == "Equal")) return std::nullopt;
    return apply(*a, *b, (logical || compare) ? kBool : a->elem_type, f);
  }
};

}  // namespace

std::unordered_map<std::string, IntValue> evaluate_int_values(const onnx::GraphProto& graph) noexcept {
  Evaluator ev;
  try {
    auto note = [&](const onnx::ValueInfoProto& vi) {
      if (vi.name().empty() || !vi.has_type()) return;
      if (auto d = known_dims(vi.type())) ev.shapes[vi.name()] = std::move(*d);
    };
    for (const auto& vi : graph.input()) note(vi);
    for (const auto& vi : graph.value_info()) note(vi);
    for (const auto& vi : graph.output()) note(vi);
    for (const auto& t : graph.initializer()) {
      if (t.name().empty()) continue;
      Dims dims(t.dims().begin(), t.dims().end());
      if (dims.size() <= kMaxRank && std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d >= 0; }))
        ev.shapes[t.name()] = dims;
      if (Opt v = read_tensor(t)) ev.values[t.name()] = std::move(*v);
    }
  } catch (...) {
    return {};
  }
  for (const auto& node : graph.node()) {
    try {
      ev.run(node);
    } catch (...) {
      // bad_alloc or the like: this node stays unknown.
      for (const auto& o : node.output()) ev.values.erase(o);
    }
  }
  return std::move(ev.values);
}

}  // namespace modelstat::loader

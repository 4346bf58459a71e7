// Constant folding of small tensors; see shape_values.hpp. This file holds
// the evaluator, the element types (integer wrapping, float rounding, reading
// and writing TensorProto data) and the shared arithmetic (shape_fold.hpp);
// which ops fold, and how, comes from each op's record
// (analyzer/cost/cost_rule.hpp, field `fold`), whose fold functions live in
// shape_fold_movement.cc and shape_fold_arith.cc.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "analyzer/cost/cost_rule.hpp"
#include "analyzer/loader/own_shape_rules.hpp"
#include "analyzer/loader/shape_fold.hpp"

namespace modelstat::loader {

namespace shape_math {

using onnx::TensorProto;

namespace {

size_t elem_size(int32_t t) {
  switch (t) {
    case TensorProto::INT64:
    case TensorProto::DOUBLE: return 8;
    case TensorProto::INT32:
    case TensorProto::UINT32:
    case TensorProto::FLOAT: return 4;
    case TensorProto::INT16:
    case TensorProto::UINT16:
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16: return 2;
    default: return 1;
  }
}

// x rounded to a binary float format with `fraction` fraction bits and normal
// exponents [emin, emax] (subnormals below), ties to even; beyond the largest
// finite value: infinity. IEEE half: 10, -14, 15; bfloat16: 7, -126, 127.
double round_binary(double x, int fraction, int emin, int emax) {
  if (!std::isfinite(x) || x == 0) return x;
  int e = 0;
  std::frexp(x, &e);  // |x| = m * 2^e, m in [0.5, 1)
  const int quantum = std::max(e - 1, emin) - fraction;
  const double r = std::ldexp(std::nearbyint(std::ldexp(x, -quantum)), quantum);
  const double largest = std::ldexp(2.0 - std::ldexp(1.0, -fraction), emax);
  return std::fabs(r) > largest ? std::copysign(std::numeric_limits<double>::infinity(), x) : r;
}

double half_value(uint16_t h) {
  const int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v = exp == 0    ? std::ldexp(mant, -24)
             : exp == 31 ? (mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity())
                         : std::ldexp(1024 + mant, exp - 25);
  return (h & 0x8000) ? -v : v;
}

// Bits of a value already rounded to half (round_to).
uint16_t half_bits(double r) {
  const uint16_t sign = std::signbit(r) ? 0x8000 : 0;
  const double a = std::fabs(r);
  if (std::isnan(r)) return sign | 0x7e00;
  if (std::isinf(r)) return sign | 0x7c00;
  if (a < std::ldexp(1.0, -14)) return sign | uint16_t(a * std::ldexp(1.0, 24));  // subnormal (or 0)
  int e = 0;
  std::frexp(a, &e);
  return sign | uint16_t((e - 1 + 15) << 10) | uint16_t((std::ldexp(a, -(e - 1)) - 1.0) * 1024);
}

double bfloat16_value(uint16_t h) {
  const uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t bfloat16_bits(double r) {  // r already rounded to bfloat16: its float's upper half
  const float f = float(r);
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return uint16_t(u >> 16);
}

// The value of one element stored little-endian in `bytes` as type t.
int64_t element_from_bytes(int32_t t, const uint8_t* bytes) {
  uint64_t u = 0;
  for (size_t b = 0; b < elem_size(t); ++b) u |= uint64_t(bytes[b]) << (8 * b);
  switch (t) {
    case TensorProto::FLOAT: {
      float f;
      const auto u32 = uint32_t(u);
      std::memcpy(&f, &u32, 4);
      return real_bits(f);
    }
    case TensorProto::DOUBLE: {
      double d;
      std::memcpy(&d, &u, 8);
      return real_bits(d);
    }
    case TensorProto::FLOAT16: return real_bits(half_value(uint16_t(u)));
    case TensorProto::BFLOAT16: return real_bits(bfloat16_value(uint16_t(u)));
    default: return wrap_to(t, static_cast<int64_t>(u));
  }
}

}  // namespace

double round_to(int32_t t, double x) {
  switch (t) {
    case TensorProto::FLOAT: return double(float(x));
    case TensorProto::FLOAT16: return round_binary(x, 10, -14, 15);
    case TensorProto::BFLOAT16: return round_binary(x, 7, -126, 127);
    default: return x;
  }
}

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

std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
std::optional<int64_t> checked_sub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}
std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
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
  Dims out(std::max(a.size(), b.size()));
  if (!own_rules::broadcast_into(a.data(), a.size(), b.data(), b.size(), out.data())) return std::nullopt;
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

Opt read_tensor(const onnx::TensorProto& t) {
  const int32_t type = t.data_type();
  if (!is_int_type(type) && !is_real_type(type)) return std::nullopt;
  if (t.data_location() == TensorProto::EXTERNAL || t.external_data_size() > 0 || t.has_segment())
    return std::nullopt;
  ConstValue v;
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
    const auto* bytes = reinterpret_cast<const uint8_t*>(raw.data());
    for (size_t i = 0; i < count; ++i) v.values.push_back(element_from_bytes(type, bytes + i * es));
  } else if (type == TensorProto::FLOAT) {
    if (size_t(t.float_data_size()) != count) return std::nullopt;
    for (float x : t.float_data()) v.values.push_back(real_bits(x));
  } else if (type == TensorProto::DOUBLE) {
    if (size_t(t.double_data_size()) != count) return std::nullopt;
    for (double x : t.double_data()) v.values.push_back(real_bits(x));
  } else if (type == TensorProto::FLOAT16 || type == TensorProto::BFLOAT16) {  // bits in int32_data
    if (size_t(t.int32_data_size()) != count) return std::nullopt;
    for (int32_t x : t.int32_data())
      v.values.push_back(real_bits(type == TensorProto::FLOAT16 ? half_value(uint16_t(x)) : bfloat16_value(uint16_t(x))));
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

ConstValue scalar(int64_t x, int32_t type) { return ConstValue{{}, {x}, type}; }
ConstValue vec(Dims xs, int32_t type) {
  ConstValue v;
  v.dims = {int64_t(xs.size())};
  v.values = std::move(xs);
  v.elem_type = type;
  return v;
}
ConstValue real_scalar(double x, int32_t type) { return ConstValue{{}, {real_bits(round_to(type, x))}, type}; }

// A well-formed value: consistent size, bounded, values representable.
bool valid(const ConstValue& v) {
  const auto n = numel(v.dims);
  if (!n || size_t(*n) != v.values.size()) return false;
  if (is_real_type(v.elem_type)) return true;
  if (!is_int_type(v.elem_type)) return false;
  for (int64_t x : v.values)
    if (wrap_to(v.elem_type, x) != x) return false;
  return true;
}
}  // namespace shape_math

using namespace shape_math;

bool is_real_type(int32_t t) {
  return t == TensorProto::FLOAT || t == TensorProto::DOUBLE || t == TensorProto::FLOAT16 ||
         t == TensorProto::BFLOAT16;
}

double real_value(int64_t bits) {
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

int64_t real_bits(double x) {
  int64_t bits;
  std::memcpy(&bits, &x, 8);
  return bits;
}

onnx::TensorProto to_tensor_proto(const ConstValue& v, const std::string& name) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(v.elem_type);
  for (int64_t d : v.dims) t.add_dims(d);
  for (int64_t x : v.values) {
    switch (v.elem_type) {
      case TensorProto::INT64: t.add_int64_data(x); break;
      case TensorProto::UINT32: t.add_uint64_data(uint64_t(x)); break;
      case TensorProto::FLOAT: t.add_float_data(float(real_value(x))); break;
      case TensorProto::DOUBLE: t.add_double_data(real_value(x)); break;
      case TensorProto::FLOAT16: t.add_int32_data(half_bits(real_value(x))); break;
      case TensorProto::BFLOAT16: t.add_int32_data(bfloat16_bits(real_value(x))); break;
      default: t.add_int32_data(int32_t(x));  // int32/int16/int8/uint8/uint16/bool are stored as int32_data
    }
  }
  return t;
}

const ConstValue* FoldContext::value(const std::string& name) const {
  for (const FoldContext* c = this; c; c = c->outer)
    if (auto it = c->values.find(name); it != c->values.end()) return &it->second;
  return nullptr;
}

const ConstValue* FoldContext::in_any(const onnx::NodeProto& n, int i) const {
  if (i >= n.input_size() || n.input(i).empty()) return nullptr;
  return value(n.input(i));
}

const ConstValue* FoldContext::in(const onnx::NodeProto& n, int i) const {
  const ConstValue* v = in_any(n, i);
  return v && is_int_type(v->elem_type) ? v : nullptr;
}

std::optional<Dims> FoldContext::shape_of(const onnx::NodeProto& n, int i) const {
  if (!present(n, i)) return std::nullopt;
  if (const ConstValue* v = value(n.input(i))) return v->dims;
  if (auto it = shapes.find(n.input(i)); it != shapes.end()) return it->second;
  if (dims_of) return dims_of(n.input(i));
  return std::nullopt;
}

void FoldContext::note_shape(const onnx::NodeProto& n, const Dims& dims) {
  if (dims.size() <= kMaxRank) shapes[n.output(0)] = dims;
}

std::optional<Dims> FoldContext::axes_of(const onnx::NodeProto& n, const char* name, int idx, bool* given) const {
  *given = true;
  if (find_attr(n, name)) return attr_ints(n, name);
  if (present(n, idx)) {
    const ConstValue* a = in(n, idx);
    if (!a || a->dims.size() > 1) return std::nullopt;
    return a->values;
  }
  *given = false;
  return Dims{};
}

void fold_node(FoldContext& c, const onnx::NodeProto& n) noexcept {
  try {
    for (const auto& o : n.output()) c.values.erase(o);
    if (n.output_size() == 0) return;
    if (!n.domain().empty() && n.domain() != "ai.onnx") return;
    // Every fold computes from the values of all the inputs the node gives,
    // but Shape and Size, which read dims instead: a node with an input of
    // unknown value (most nodes: they read activations) is not folded.
    if (n.op_type() != "Shape" && n.op_type() != "Size")
      for (int i = 0; i < n.input_size(); ++i)
        if (!n.input(i).empty() && !c.value(n.input(i))) return;
    const cost::OpRecord* record = cost::find_op("", n.op_type());
    if (!record || !record->fold) return;
    Folded out = record->fold(c, n);
    for (size_t k = 0; k < out.outputs.size() && int(k) < n.output_size(); ++k)
      if (out.outputs[k] && !n.output(int(k)).empty() && valid(*out.outputs[k]))
        c.values[n.output(int(k))] = std::move(*out.outputs[k]);
  } catch (...) {
    // bad_alloc or the like: this node stays unknown.
    for (const auto& o : n.output()) c.values.erase(o);
  }
}

std::unordered_map<std::string, ConstValue> evaluate_const_values(const onnx::GraphProto& graph,
                                                                  const ScopeValues* outer,
                                                                  ScopeValues* scope,
                                                                  const InferredTypes* inferred) noexcept {
  FoldContext ev;
  try {
    if (outer) {
      ev.shapes = outer->shapes;
      ev.values = outer->values;
      // The subgraph's own names shadow the enclosing scope's.
      auto shadow = [&ev](const std::string& name) {
        ev.shapes.erase(name);
        ev.values.erase(name);
      };
      for (const auto& vi : graph.input()) shadow(vi.name());
      for (const auto& t : graph.initializer()) shadow(t.name());
      for (const auto& node : graph.node())
        for (const auto& o : node.output()) shadow(o);
    }
    auto note_type = [&](const std::string& name, const onnx::TypeProto& type) {
      if (auto d = known_dims(type)) ev.shapes[name] = std::move(*d);
    };
    auto note = [&](const onnx::ValueInfoProto& vi) {
      if (vi.name().empty() || !vi.has_type()) return;
      note_type(vi.name(), vi.type());
    };
    for (const auto& vi : graph.input()) note(vi);
    for (const auto& vi : graph.value_info()) note(vi);
    if (inferred) {
      for (const auto& e : *inferred) {
        if (e.name->empty()) continue;
        if (e.type) note_type(*e.name, *e.type);
        else if (e.own[1] <= int64_t(kMaxRank)) ev.shapes[*e.name] = Dims(e.own + 2, e.own + 2 + e.own[1]);
      }
    }
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
  for (const auto& node : graph.node()) fold_node(ev, node);
  if (scope) {
    try {
      scope->shapes = ev.shapes;
      scope->values = ev.values;
    } catch (...) {
      scope->shapes.clear();
      scope->values.clear();
    }
  }
  return std::move(ev.values);
}

}  // namespace modelstat::loader

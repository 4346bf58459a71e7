// Folding of ops that move values without computing new ones: Constant,
// Identity, Shape, Size, Gather, Unsqueeze, Squeeze, Concat, Split, Slice,
// Reshape, Flatten, Transpose, ConstantOfShape, Range, Expand, Tile. The data
// they move may be of any type (FoldContext::in_any); what they read as
// indices, axes or shapes is integer (FoldContext::in). Each op's record
// (analyzer/cost/shape_ops.cc) names its function here.
#include <algorithm>
#include <cmath>

#include "analyzer/loader/shape_fold.hpp"

namespace modelstat::loader::fold {

using namespace shape_math;

Folded constant(FoldContext& c, const onnx::NodeProto& n) {
  if (n.attribute_size() != 1) return std::nullopt;
  const auto& a = n.attribute(0);
  if (a.name() == "value" && a.type() == onnx::AttributeProto::TENSOR) return read_tensor(a.t());
  if (a.name() == "value_int" && a.type() == onnx::AttributeProto::INT) return scalar(a.i());
  if (a.name() == "value_ints" && a.type() == onnx::AttributeProto::INTS && a.ints_size() <= kMaxElems)
    return vec(Dims(a.ints().begin(), a.ints().end()));
  if (a.name() == "value_float" && a.type() == onnx::AttributeProto::FLOAT)
    return real_scalar(a.f(), onnx::TensorProto::FLOAT);
  if (a.name() == "value_floats" && a.type() == onnx::AttributeProto::FLOATS && a.floats_size() <= kMaxElems) {
    Dims bits;
    for (float f : a.floats()) bits.push_back(real_bits(f));
    return vec(std::move(bits), onnx::TensorProto::FLOAT);
  }
  return std::nullopt;
}

Folded identity(FoldContext& c, const onnx::NodeProto& n) {
  if (const ConstValue* x = c.in_any(n, 0)) return *x;
  return std::nullopt;
}

Folded shape(FoldContext& c, const onnx::NodeProto& n) {
  const auto d = c.shape_of(n, 0);
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

Folded size(FoldContext& c, const onnx::NodeProto& n) {
  const auto d = c.shape_of(n, 0);
  if (!d) return std::nullopt;
  int64_t p = 1;
  for (int64_t x : *d) {
    auto r = checked_mul(p, x);
    if (!r) return std::nullopt;
    p = *r;
  }
  return scalar(p);
}

Folded gather(FoldContext& c, const onnx::NodeProto& n) {
  const ConstValue* data = c.in_any(n, 0);
  const ConstValue* idx = c.in(n, 1);
  if (!data || !idx || data->dims.empty() || idx->elem_type == kBool) return std::nullopt;
  const auto r = int64_t(data->dims.size());
  const auto axis = norm_axis(attr_int(n, "axis", 0), r);
  if (!axis) return std::nullopt;
  const auto ax = size_t(*axis);
  const int64_t len = data->dims[ax];
  ConstValue out;
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

Folded unsqueeze(FoldContext& c, const onnx::NodeProto& n) {
  const ConstValue* x = c.in_any(n, 0);
  bool given = false;
  auto axes = c.axes_of(n, "axes", 1, &given);
  if (!x || !axes || !given || axes->empty()) return std::nullopt;
  const auto r = int64_t(x->dims.size() + axes->size());
  if (size_t(r) > kMaxRank) return std::nullopt;
  std::vector<bool> is_new(size_t(r), false);
  for (int64_t a : *axes) {
    const auto na = norm_axis(a, r);
    if (!na || is_new[size_t(*na)]) return std::nullopt;
    is_new[size_t(*na)] = true;
  }
  ConstValue out = *x;
  out.dims.clear();
  size_t next = 0;
  for (int64_t i = 0; i < r; ++i) out.dims.push_back(is_new[size_t(i)] ? 1 : x->dims[next++]);
  return out;
}

Folded squeeze(FoldContext& c, const onnx::NodeProto& n) {
  const ConstValue* x = c.in_any(n, 0);
  bool given = false;
  auto axes = c.axes_of(n, "axes", 1, &given);
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
  ConstValue out = *x;
  out.dims.clear();
  for (int64_t i = 0; i < r; ++i)
    if (!drop[size_t(i)]) out.dims.push_back(x->dims[size_t(i)]);
  return out;
}

Folded concat(FoldContext& c, const onnx::NodeProto& n) {
  if (n.input_size() == 0 || !find_attr(n, "axis")) return std::nullopt;
  std::vector<const ConstValue*> xs;
  for (int i = 0; i < n.input_size(); ++i) {
    const ConstValue* x = c.in_any(n, i);
    if (!x) return std::nullopt;
    xs.push_back(x);
  }
  const Dims& d0 = xs[0]->dims;
  const auto axis = norm_axis(attr_int(n, "axis", 0), int64_t(d0.size()));
  if (!axis) return std::nullopt;
  const auto ax = size_t(*axis);
  ConstValue out;
  out.elem_type = xs[0]->elem_type;
  out.dims = d0;
  out.dims[ax] = 0;
  for (const ConstValue* x : xs) {
    if (x->dims.size() != d0.size() || x->elem_type != out.elem_type) return std::nullopt;
    for (size_t k = 0; k < d0.size(); ++k)
      if (k != ax && x->dims[k] != d0[k]) return std::nullopt;
    out.dims[ax] += x->dims[ax];
  }
  if (!numel(out.dims)) return std::nullopt;
  const int64_t outer = prod(d0, 0, ax);
  for (int64_t o = 0; o < outer; ++o)
    for (const ConstValue* x : xs) {
      const int64_t chunk = prod(x->dims, ax, x->dims.size());
      const auto begin = x->values.begin() + o * chunk;
      out.values.insert(out.values.end(), begin, begin + chunk);
    }
  return out;
}

Folded slice(FoldContext& c, const onnx::NodeProto& n) {
  const ConstValue* x = c.in_any(n, 0);
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
      const ConstValue* v = c.in(n, i);
      if (!v || v->dims.size() != 1 || v->elem_type == kBool) return std::nullopt;
      return v->values;
    };
    starts = vals(1);
    ends = vals(2);
    if (FoldContext::present(n, 3) && !(axes = vals(3))) return std::nullopt;
    if (FoldContext::present(n, 4) && !(steps = vals(4))) return std::nullopt;
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
  ConstValue out;
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

Folded reshape(FoldContext& c, const onnx::NodeProto& n) {
  const ConstValue* x = c.in_any(n, 0);
  if (!x) return std::nullopt;
  std::optional<Dims> shape;
  if (FoldContext::present(n, 1)) {  // opset 5+: the shape input
    const ConstValue* s = c.in(n, 1);
    if (s && s->dims.size() == 1) shape = s->values;
  } else {  // opsets 1-4: the shape attribute
    shape = attr_ints(n, "shape");
  }
  if (!shape || shape->size() > kMaxRank) return std::nullopt;
  const bool allowzero = attr_int(n, "allowzero", 0) != 0;
  ConstValue out = *x;
  out.dims = *shape;
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

Folded flatten(FoldContext& c, const onnx::NodeProto& n) {
  const ConstValue* x = c.in_any(n, 0);
  if (!x) return std::nullopt;
  const auto r = int64_t(x->dims.size());
  int64_t axis = attr_int(n, "axis", 1);
  if (axis < -r || axis > r) return std::nullopt;
  if (axis < 0) axis += r;
  ConstValue out = *x;
  out.dims = {prod(x->dims, 0, size_t(axis)), prod(x->dims, size_t(axis), x->dims.size())};
  return out;
}

Folded transpose(FoldContext& c, const onnx::NodeProto& n) {
  const ConstValue* x = c.in_any(n, 0);
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
  ConstValue out;
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

Folded constant_of_shape(FoldContext& c, const onnx::NodeProto& n) {
  const ConstValue* s = c.in(n, 0);
  if (!s || s->dims.size() != 1 || s->elem_type == kBool || s->values.size() > kMaxRank) return std::nullopt;
  for (int64_t d : s->values)
    if (d < 0) return std::nullopt;
  const Dims& dims = s->values;
  const auto count = numel(dims);
  ConstValue fill = real_scalar(0, onnx::TensorProto::FLOAT);  // the default value is float 0
  if (const auto* a = find_attr(n, "value")) {
    if (a->type() != onnx::AttributeProto::TENSOR) return std::nullopt;
    Opt t = read_tensor(a->t());
    if (t && t->values.size() != 1) return std::nullopt;  // ill-formed
    if (!t) {  // a type the folder does not hold (string) or a stripped payload: the shape only
      c.note_shape(n, dims);
      return std::nullopt;
    }
    fill = *t;
  }
  if (!count) {
    c.note_shape(n, dims);
    return std::nullopt;
  }
  ConstValue out;
  out.elem_type = fill.elem_type;
  out.dims = dims;
  out.values.assign(size_t(*count), fill.values[0]);
  return out;
}

namespace {

// Range over a float type: ceil((limit - start) / delta) elements, each the
// previous plus delta in the type (ONNX's function body and ONNX Runtime
// accumulate; they do not multiply).
Folded real_range(const ConstValue& start, const ConstValue& limit, const ConstValue& delta) {
  const int32_t t = start.elem_type;
  const double s = real_value(start.values[0]), d = real_value(delta.values[0]);
  const double span = round_to(t, real_value(limit.values[0]) - s);
  if (d == 0 || !std::isfinite(s) || !std::isfinite(d) || !std::isfinite(span)) return std::nullopt;
  const double q = std::ceil(span / d);
  if (q > double(kMaxElems)) return std::nullopt;
  const auto count = std::max<int64_t>(int64_t(q), 0);
  ConstValue out;
  out.elem_type = t;
  out.dims = {count};
  double v = s;
  for (int64_t i = 0; i < count; ++i, v = round_to(t, v + d)) out.values.push_back(real_bits(v));
  return out;
}

}  // namespace

Folded range(FoldContext& c, const onnx::NodeProto& n) {
  const ConstValue* start = c.in_any(n, 0);
  const ConstValue* limit = c.in_any(n, 1);
  const ConstValue* delta = c.in_any(n, 2);
  if (!start || !limit || !delta) return std::nullopt;
  for (const ConstValue* v : {start, limit, delta})
    if (v->values.size() != 1 || v->dims.size() > 1 || v->elem_type == kBool || v->elem_type != start->elem_type)
      return std::nullopt;
  if (is_real_type(start->elem_type)) return real_range(*start, *limit, *delta);
  const int64_t s = start->values[0], l = limit->values[0], d = delta->values[0];
  if (d == 0) return std::nullopt;
  const auto diff = checked_sub(l, s);
  if (!diff) return std::nullopt;
  int64_t q = *diff / d;  // d != 0; diff / -1 cannot overflow unless diff == INT64_MIN
  if (*diff == kI64Min && d == -1) return std::nullopt;
  if (*diff % d != 0 && ((*diff > 0) == (d > 0))) ++q;
  const int64_t count = std::max<int64_t>(q, 0);
  if (count > kMaxElems) return std::nullopt;
  ConstValue out;
  out.elem_type = start->elem_type;
  out.dims = {count};
  int64_t v = s;
  for (int64_t i = 0; i < count; ++i) {
    out.values.push_back(v);
    if (i + 1 < count) {
      auto next = checked_add(v, d);
      if (!next) return std::nullopt;
      v = *next;
    }
  }
  return out;
}

Folded expand(FoldContext& c, const onnx::NodeProto& n) {
  const ConstValue* x = c.in_any(n, 0);
  const ConstValue* s = c.in(n, 1);
  if (!x || !s || s->dims.size() != 1 || s->elem_type == kBool || s->values.size() > kMaxRank) return std::nullopt;
  const auto dims = broadcast_dims(x->dims, s->values);
  if (!dims) return std::nullopt;
  for (int64_t d : *dims)
    if (d < 0) return std::nullopt;
  if (!numel(*dims)) {
    c.note_shape(n, *dims);
    return std::nullopt;
  }
  ConstValue out;
  out.elem_type = x->elem_type;
  out.dims = *dims;
  for (int64_t i : broadcast_index(x->dims, *dims)) out.values.push_back(x->values[size_t(i)]);
  return out;
}

Folded tile(FoldContext& c, const onnx::NodeProto& n) {
  const ConstValue* x = c.in_any(n, 0);
  const ConstValue* reps = c.in(n, 1);
  if (!x || !reps || reps->dims.size() != 1 || reps->values.size() != x->dims.size()) return std::nullopt;
  ConstValue out;
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

// Split into the outputs' sizes along `axis`: from input 1 (opset 13+; also
// opset 1's optional input), the `split` attribute (2-12), `num_outputs` (18+:
// ceil(len / n) each, the last one what remains), or equal parts.
Folded split(FoldContext& c, const onnx::NodeProto& n) {
  const ConstValue* x = c.in_any(n, 0);
  const int outputs = n.output_size();
  if (!x || x->dims.empty() || outputs < 1) return std::nullopt;
  const auto axis = norm_axis(attr_int(n, "axis", 0), int64_t(x->dims.size()));
  if (!axis) return std::nullopt;
  const auto ax = size_t(*axis);
  const int64_t len = x->dims[ax];
  Dims sizes;
  if (FoldContext::present(n, 1)) {
    const ConstValue* s = c.in(n, 1);
    if (!s || s->dims.size() != 1 || s->elem_type == kBool) return std::nullopt;
    sizes = s->values;
  } else if (find_attr(n, "split")) {
    auto a = attr_ints(n, "split");
    if (!a) return std::nullopt;
    sizes = *a;
  } else if (find_attr(n, "num_outputs")) {
    if (attr_int(n, "num_outputs", 0) != outputs) return std::nullopt;
    const int64_t chunk = (len + outputs - 1) / outputs;
    sizes.assign(size_t(outputs), chunk);
    sizes.back() = len - chunk * (outputs - 1);
  } else {
    if (len % outputs != 0) return std::nullopt;
    sizes.assign(size_t(outputs), len / outputs);
  }
  if (sizes.size() != size_t(outputs)) return std::nullopt;
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0 || s > len) return std::nullopt;
    total += s;
  }
  if (total != len) return std::nullopt;
  const int64_t outer = prod(x->dims, 0, ax);
  const int64_t inner = prod(x->dims, ax + 1, x->dims.size());
  Folded out;
  int64_t offset = 0;
  for (int64_t s : sizes) {
    ConstValue part;
    part.elem_type = x->elem_type;
    part.dims = x->dims;
    part.dims[ax] = s;
    for (int64_t o = 0; o < outer; ++o) {
      const auto begin = x->values.begin() + (o * len + offset) * inner;
      part.values.insert(part.values.end(), begin, begin + s * inner);
    }
    offset += s;
    out.outputs.emplace_back(std::move(part));
  }
  return out;
}

}  // namespace modelstat::loader::fold

// Folding of ops that move integer values without computing new ones:
// Constant, Identity, Shape, Size, Gather, Unsqueeze, Squeeze, Concat, Slice,
// Cast, Reshape, Flatten, Transpose, ConstantOfShape, Range, Expand, Tile.
// Each op's record (analyzer/cost/shape_ops.cc) names its function here.
#include <algorithm>

#include "analyzer/loader/shape_fold.hpp"

namespace modelstat::loader::fold {

using namespace shape_math;

Opt constant(FoldContext& c, const onnx::NodeProto& n) {
  if (n.attribute_size() != 1) return std::nullopt;
  const auto& a = n.attribute(0);
  if (a.name() == "value" && a.type() == onnx::AttributeProto::TENSOR) return read_tensor(a.t());
  if (a.name() == "value_int" && a.type() == onnx::AttributeProto::INT) return scalar(a.i());
  if (a.name() == "value_ints" && a.type() == onnx::AttributeProto::INTS && a.ints_size() <= kMaxElems)
    return vec(Dims(a.ints().begin(), a.ints().end()));
  return std::nullopt;
}

Opt identity(FoldContext& c, const onnx::NodeProto& n) {
  if (const IntValue* x = c.in(n, 0)) return *x;
  return std::nullopt;
}

Opt shape(FoldContext& c, const onnx::NodeProto& n) {
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

Opt size(FoldContext& c, const onnx::NodeProto& n) {
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

Opt gather(FoldContext& c, const onnx::NodeProto& n) {
  const IntValue* data = c.in(n, 0);
  const IntValue* idx = c.in(n, 1);
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

Opt unsqueeze(FoldContext& c, const onnx::NodeProto& n) {
  const IntValue* x = c.in(n, 0);
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
  IntValue out = *x;
  out.dims.clear();
  size_t next = 0;
  for (int64_t i = 0; i < r; ++i) out.dims.push_back(is_new[size_t(i)] ? 1 : x->dims[next++]);
  return out;
}

Opt squeeze(FoldContext& c, const onnx::NodeProto& n) {
  const IntValue* x = c.in(n, 0);
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
  IntValue out = *x;
  out.dims.clear();
  for (int64_t i = 0; i < r; ++i)
    if (!drop[size_t(i)]) out.dims.push_back(x->dims[size_t(i)]);
  return out;
}

Opt concat(FoldContext& c, const onnx::NodeProto& n) {
  if (n.input_size() == 0 || !find_attr(n, "axis")) return std::nullopt;
  std::vector<const IntValue*> xs;
  for (int i = 0; i < n.input_size(); ++i) {
    const IntValue* x = c.in(n, i);
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

Opt slice(FoldContext& c, const onnx::NodeProto& n) {
  const IntValue* x = c.in(n, 0);
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
      const IntValue* v = c.in(n, i);
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

Opt cast(FoldContext& c, const onnx::NodeProto& n) {
  const IntValue* x = c.in(n, 0);
  const auto to = int32_t(attr_int(n, "to", 0));
  if (!x || !is_int_type(to)) return std::nullopt;
  IntValue out = *x;
  out.elem_type = to;
  for (int64_t& v : out.values) v = wrap_to(to, v);
  return out;
}

Opt reshape(FoldContext& c, const onnx::NodeProto& n) {
  const IntValue* x = c.in(n, 0);
  if (!x) return std::nullopt;
  std::optional<Dims> shape;
  if (FoldContext::present(n, 1)) {  // opset 5+: the shape input
    const IntValue* s = c.in(n, 1);
    if (s && s->dims.size() == 1) shape = s->values;
  } else {  // opsets 1-4: the shape attribute
    shape = attr_ints(n, "shape");
  }
  if (!shape || shape->size() > kMaxRank) return std::nullopt;
  const bool allowzero = attr_int(n, "allowzero", 0) != 0;
  IntValue out = *x;
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

Opt flatten(FoldContext& c, const onnx::NodeProto& n) {
  const IntValue* x = c.in(n, 0);
  if (!x) return std::nullopt;
  const auto r = int64_t(x->dims.size());
  int64_t axis = attr_int(n, "axis", 1);
  if (axis < -r || axis > r) return std::nullopt;
  if (axis < 0) axis += r;
  IntValue out = *x;
  out.dims = {prod(x->dims, 0, size_t(axis)), prod(x->dims, size_t(axis), x->dims.size())};
  return out;
}

Opt transpose(FoldContext& c, const onnx::NodeProto& n) {
  const IntValue* x = c.in(n, 0);
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

Opt constant_of_shape(FoldContext& c, const onnx::NodeProto& n) {
  const IntValue* s = c.in(n, 0);
  if (!s || s->dims.size() != 1 || s->elem_type == kBool || s->values.size() > kMaxRank) return std::nullopt;
  for (int64_t d : s->values)
    if (d < 0) return std::nullopt;
  const Dims& dims = s->values;
  const auto count = numel(dims);
  IntValue fill = scalar(0, onnx::TensorProto::FLOAT);  // the default value is float 0
  if (const auto* a = find_attr(n, "value")) {
    if (a->type() != onnx::AttributeProto::TENSOR) return std::nullopt;
    Opt t = read_tensor(a->t());
    if (t && t->values.size() == 1) fill = *t;
    else if (t || is_int_type(a->t().data_type())) return std::nullopt;
  }
  if (!count || !is_int_type(fill.elem_type)) {
    c.note_shape(n, dims);
    return std::nullopt;
  }
  IntValue out;
  out.elem_type = fill.elem_type;
  out.dims = dims;
  out.values.assign(size_t(*count), fill.values[0]);
  return out;
}

Opt range(FoldContext& c, const onnx::NodeProto& n) {
  const IntValue* start = c.in(n, 0);
  const IntValue* limit = c.in(n, 1);
  const IntValue* delta = c.in(n, 2);
  if (!start || !limit || !delta) return std::nullopt;
  for (const IntValue* v : {start, limit, delta})
    if (v->values.size() != 1 || v->dims.size() > 1 || v->elem_type == kBool) return std::nullopt;
  const int64_t s = start->values[0], l = limit->values[0], d = delta->values[0];
  if (d == 0) return std::nullopt;
  const auto diff = checked_sub(l, s);
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
      auto next = checked_add(v, d);
      if (!next) return std::nullopt;
      v = *next;
    }
  }
  return out;
}

Opt expand(FoldContext& c, const onnx::NodeProto& n) {
  const IntValue* x = c.in(n, 0);
  const IntValue* s = c.in(n, 1);
  if (!x || !s || s->dims.size() != 1 || s->elem_type == kBool || s->values.size() > kMaxRank) return std::nullopt;
  const auto dims = broadcast_dims(x->dims, s->values);
  if (!dims) return std::nullopt;
  for (int64_t d : *dims)
    if (d < 0) return std::nullopt;
  if (!numel(*dims)) {
    c.note_shape(n, *dims);
    return std::nullopt;
  }
  IntValue out;
  out.elem_type = x->elem_type;
  out.dims = *dims;
  for (int64_t i : broadcast_index(x->dims, *dims)) out.values.push_back(x->values[size_t(i)]);
  return out;
}

Opt tile(FoldContext& c, const onnx::NodeProto& n) {
  const IntValue* x = c.in(n, 0);
  const IntValue* reps = c.in(n, 1);
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

}  // namespace modelstat::loader::fold

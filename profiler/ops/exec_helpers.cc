#include "profiler/ops/exec_helpers.hpp"

#include "profiler/torch_compat.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <limits>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "modelstat/error.hpp"

namespace modelstat::profiler {

void add_executor(std::vector<ExecRule>& rules, const char* op, ExecFn fn, int64_t since, const char* domain) {
  rules.push_back(ExecRule{OpKey{domain, op, since}, fn});
}

void fail_input(const ExecContext& ctx, const std::string& message) {
  throw Error(ErrorKind::Input, message, {}, ctx.node().name, ctx.node().op_type);
}

at::Tensor run_activation(const ExecContext& ctx, const std::string& op,
                          std::map<std::string, AttrValue> attrs, const at::Tensor& y) {
  const int64_t opset = op == "Clip" ? 6 : 17;
  const ExecRule* rule = find_executor("", op, opset);
  if (!rule) fail_input(ctx, "unsupported activation '" + op + "'");
  Graph graph;
  Node node;
  node.name = ctx.node().name + "/" + op;
  node.op_type = op;
  node.inputs = {0};
  node.outputs = {1};
  node.attributes = std::move(attrs);
  ExecContext inner(graph, node, opset, {y}, ctx.device(), ctx.float_dtype());
  rule->fn(inner);
  return inner.outputs.at(0);
}

const at::Tensor& need_input(const ExecContext& ctx, size_t i) {
  if (!ctx.has_input(i)) fail_input(ctx, "input " + std::to_string(i) + " is required");
  return ctx.input(i);
}

at::Scalar input_scalar_value(const ExecContext& ctx, size_t i) {
  const at::Tensor& t = need_input(ctx, i);
  if (t.numel() != 1) fail_input(ctx, "input " + std::to_string(i) + " must hold one value");
  return t.reshape({}).cpu().item();
}

bool has_attr(const ExecContext& ctx, const std::string& key) { return ctx.node().attr(key) != nullptr; }

std::optional<std::vector<int64_t>> ints_attr_or_input(const ExecContext& ctx, const std::string& attr,
                                                       size_t input_index, int64_t input_since) {
  if (ctx.opset() >= input_since) {
    if (!ctx.has_input(input_index)) return std::nullopt;
    return ctx.input_ints(input_index);
  }
  if (!has_attr(ctx, attr)) return std::nullopt;
  return ctx.node().attr_ints(attr);
}

std::vector<int64_t> attr_ints_or(const Node& node, const std::string& key, std::vector<int64_t> fallback) {
  if (!node.attr(key)) return fallback;
  return node.attr_ints(key);
}

std::vector<double> attr_floats(const Node& node, const std::string& key) {
  if (const auto* v = node.attr(key)) {
    if (const auto* f = std::get_if<std::vector<double>>(v)) return *f;
    if (const auto* one = std::get_if<double>(v)) return {*one};
  }
  return {};
}

std::vector<std::string> attr_strings(const Node& node, const std::string& key) {
  if (const auto* v = node.attr(key)) {
    if (const auto* s = std::get_if<std::vector<std::string>>(v)) return *s;
    if (const auto* one = std::get_if<std::string>(v)) return {*one};
  }
  return {};
}

int64_t normalize_axis(const ExecContext& ctx, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    fail_input(ctx, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> normalize_axes(const ExecContext& ctx, std::vector<int64_t> axes, int64_t rank) {
  for (auto& a : axes) a = normalize_axis(ctx, a, rank);
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) fail_input(ctx, "repeated axis");
  return axes;
}

namespace {

std::optional<at::ScalarType> maybe_scalar_type(DType dtype) {
  switch (dtype) {
    case DType::Float: return at::kFloat;
    case DType::Double: return at::kDouble;
    case DType::Float16: return at::kHalf;
    case DType::BFloat16: return at::kBFloat16;
    case DType::UInt8: return at::kByte;
    case DType::Int8: return at::kChar;
    case DType::Int16: return at::kShort;
    case DType::UInt16: return at::kInt;   // widened: no uint16 in LibTorch 1.13
    case DType::Int32: return at::kInt;
    case DType::UInt32: return at::kLong;  // widened
    case DType::Int64: return at::kLong;
    case DType::UInt64: return at::kLong;  // same bits; values >= 2^63 wrap
    case DType::Bool: return at::kBool;
    case DType::Complex64: return at::kComplexFloat;
    case DType::Complex128: return at::kComplexDouble;
    default: break;
  }
  return std::nullopt;
}

}  // namespace

at::ScalarType scalar_type_of(DType dtype) {
  if (const auto type = maybe_scalar_type(dtype)) return *type;
  throw Error(ErrorKind::Input, std::string("tensors of type ") + dtype_name(dtype) + " cannot be executed");
}

at::ScalarType scalar_type_of(const ExecContext& ctx, int64_t onnx_type) {
  if (const auto type = maybe_scalar_type(DType(onnx_type))) return *type;
  fail_input(ctx, "unsupported element type " + std::string(dtype_name(DType(onnx_type))) + " (" +
                      std::to_string(onnx_type) + ")");
}

DType dtype_of(at::ScalarType type) {
  switch (type) {
    case at::kFloat: return DType::Float;
    case at::kDouble: return DType::Double;
    case at::kHalf: return DType::Float16;
    case at::kBFloat16: return DType::BFloat16;
    case at::kByte: return DType::UInt8;
    case at::kChar: return DType::Int8;
    case at::kShort: return DType::Int16;
    case at::kInt: return DType::Int32;
    case at::kLong: return DType::Int64;
    case at::kBool: return DType::Bool;
    case at::kComplexFloat: return DType::Complex64;
    case at::kComplexDouble: return DType::Complex128;
    default: return DType::Undefined;
  }
}

bool is_floating(at::ScalarType type) { return at::isFloatingType(type); }

bool is_reduced_float(at::ScalarType type) {
  return type == at::kHalf || type == at::kBFloat16;
}

at::ScalarType compute_type(const ExecContext& ctx, at::ScalarType type) {
  const at::ScalarType compute = ctx.float_dtype();
  if (is_reduced_float(compute)) return at::isFloatingType(type) ? compute : type;
  if (compute == at::kFloat) return is_reduced_float(type) ? at::kFloat : type;
  return type;  // Undefined: the model's own dtypes
}

namespace {

// Copies `count` elements of type From into a new tensor of type To (the
// widened unsigned types).
template <typename From, typename To>
at::Tensor widen(const void* data, int64_t count, at::ScalarType type, const std::vector<int64_t>& dims) {
  at::Tensor t = at::empty(dims, at::TensorOptions().dtype(type));
  To* out = t.data_ptr<To>();
  for (int64_t i = 0; i < count; ++i) {
    From v;
    std::memcpy(&v, static_cast<const uint8_t*>(data) + i * int64_t(sizeof(From)), sizeof(From));
    out[i] = static_cast<To>(v);
  }
  return t;
}

}  // namespace

at::Tensor tensor_from_raw(const void* data, int64_t nbytes, DType dtype, const std::vector<int64_t>& dims) {
  const int64_t count = product(dims);
  const int64_t element = dtype_size_bytes(dtype);
  int64_t expected = 0;
  if (element == 0 || count < 0 || __builtin_mul_overflow(count, element, &expected) || nbytes != expected)
    throw Error(ErrorKind::Input, std::string(dtype_name(dtype)) + " payload holds " +
                                      std::to_string(nbytes) + " bytes, expected " + std::to_string(count) +
                                      " elements of " + std::to_string(element) + " bytes");
  const at::ScalarType type = scalar_type_of(dtype);
  switch (dtype) {
    case DType::UInt16: return widen<uint16_t, int32_t>(data, count, type, dims);
    case DType::UInt32: return widen<uint32_t, int64_t>(data, count, type, dims);
    default: break;
  }
  at::Tensor t = at::empty(dims, at::TensorOptions().dtype(type));
  if (nbytes) std::memcpy(t.data_ptr(), data, size_t(nbytes));
  return t;
}

at::Tensor tensor_from_varints(const uint8_t* data, int64_t nbytes, DType dtype, const std::vector<int64_t>& dims) {
  // Each value keeps its low bytes: int32 negatives are sign-extended 64-bit
  // varints, 8/16-bit types and float16 bit patterns sit in the low bits.
  const int64_t element = dtype_size_bytes(dtype);
  std::string raw;
  // Each value takes at least one byte: the claimed dims never size the
  // buffer beyond what the bytes can hold (tensor_from_raw checks the count).
  raw.reserve(size_t(std::min(product(dims), nbytes)) * size_t(element));
  const uint8_t* p = data;
  const uint8_t* end = data + nbytes;
  while (p < end) {
    uint64_t value = 0;
    int shift = 0;
    for (;;) {
      if (p >= end || shift > 63) throw Error(ErrorKind::Input, "malformed packed varint payload");
      const uint8_t byte = *p++;
      value |= uint64_t(byte & 0x7f) << shift;
      shift += 7;
      if (!(byte & 0x80)) break;
    }
    for (int64_t b = 0; b < element; ++b) raw.push_back(char((value >> (8 * b)) & 0xff));
  }
  return tensor_from_raw(raw.data(), int64_t(raw.size()), dtype, dims);
}

MappedFile::MappedFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(ErrorKind::Input, "cannot open '" + path + "' to read constants", path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw Error(ErrorKind::Input, "cannot stat '" + path + "'", path);
  }
  size_ = int64_t(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_t(size_), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      throw Error(ErrorKind::Input, "cannot map '" + path + "'", path);
    }
    data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);  // the mapping stays valid
}

void MappedFile::release(int64_t offset, int64_t length) const {
  if (!data_ || offset < 0 || length <= 0 || offset > size_ || length > size_ - offset) return;
  const int64_t page = int64_t(::sysconf(_SC_PAGESIZE));
  const int64_t begin = (offset + page - 1) / page * page;
  const int64_t end = (offset + length) / page * page;
  if (end > begin) ::madvise(const_cast<uint8_t*>(data_) + begin, size_t(end - begin), MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_t(size_));
}

at::Tensor tensor_from_constant_bytes(const ConstantBytes& bytes, DType dtype, const std::vector<int64_t>& dims,
                                      const MappedFile* model_file) {
  if (bytes.has_inline)
    return tensor_from_raw(bytes.inline_bytes.data(), int64_t(bytes.inline_bytes.size()), dtype, dims);
  if (bytes.payload.empty() || bytes.payload_unlocatable || !model_file) return {};
  // Normally one range, read in place; several ranges of one field (a
  // repeated field split across the wire) are concatenated first. The ranges
  // come from the loader's own walk of this file, but the file may have
  // changed since: each is checked against the mapped size again.
  const int32_t field = bytes.payload.front().field;
  for (const auto& ref : bytes.payload) {
    if (ref.field != field)
      throw Error(ErrorKind::Input, "constant payload split over TensorProto fields " + std::to_string(field) +
                                        " and " + std::to_string(ref.field) + ": ambiguous, not loaded");
    if (ref.offset < 0 || ref.length < 0 || ref.offset > model_file->size() ||
        ref.length > model_file->size() - ref.offset)
      throw Error(ErrorKind::Input, "constant payload range lies outside '" + model_file->path() +
                                        "' (did the file change since it was loaded?)", model_file->path());
  }
  std::string joined;
  const uint8_t* data = model_file->data() + bytes.payload.front().offset;
  int64_t nbytes = bytes.payload.front().length;
  if (bytes.payload.size() > 1) {
    for (const auto& ref : bytes.payload)
      joined.append(reinterpret_cast<const char*>(model_file->data() + ref.offset), size_t(ref.length));
    data = reinterpret_cast<const uint8_t*>(joined.data());
    nbytes = int64_t(joined.size());
  }
  at::Tensor t;
  switch (field) {
    case 9:   // raw_data
    case 4:   // float_data: packed fixed32, i.e. raw little-endian floats (also complex64 pairs)
    case 10:  // double_data: packed fixed64
      t = tensor_from_raw(data, nbytes, dtype, dims);
      break;
    case 5:   // int32_data
    case 7:   // int64_data
    case 11:  // uint64_data
      t = tensor_from_varints(data, nbytes, dtype, dims);
      break;
    default:
      throw Error(ErrorKind::Input, "constant payload in unknown TensorProto field " + std::to_string(field));
  }
  for (const auto& ref : bytes.payload) model_file->release(ref.offset, ref.length);
  return t;
}

int64_t product(at::IntArrayRef dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < std::min(end, dims.size()); ++i) p *= dims[i];
  return p;
}

std::vector<int64_t> known_dims(const Shape& shape, const std::string& what) {
  if (!shape.fully_known()) throw Error(ErrorKind::Input, what + " has unknown dims (" + shape.to_string() + ")");
  std::vector<int64_t> dims;
  dims.reserve(shape.dims.size());
  for (const auto& d : shape.dims) dims.push_back(d.value);
  return dims;
}

at::Tensor tensor_from_attr(const AttrTensor& attr, const std::string& model_path) {
  const auto dims = known_dims(attr.shape, "tensor attribute");
  at::Tensor t = tensor_from_constant_bytes(attr.bytes, attr.dtype, dims, nullptr);
  if (!t.defined() && !attr.bytes.payload.empty() && !model_path.empty()) {
    const MappedFile file(model_path);
    t = tensor_from_constant_bytes(attr.bytes, attr.dtype, dims, &file);
  }
  if (!t.defined() && int64_t(attr.int_values.size()) == product(dims))
    t = at::tensor(attr.int_values, at::TensorOptions().dtype(at::kLong)).reshape(dims).to(scalar_type_of(attr.dtype));
  if (t.defined()) return t;
  if (!attr.bytes.payload.empty() || attr.bytes.payload_unlocatable)
    throw Error(ErrorKind::Input, "large Constant not loaded: the tensor attribute's bytes were stripped from the model" +
                                      std::string(model_path.empty() ? " and no model file is given" : ""));
  throw Error(ErrorKind::Input, "tensor attribute has no data");
}

at::Tensor tensor_from_attr(const ExecContext& ctx, const AttrTensor& attr) {
  try {
    return tensor_from_attr(attr);
  } catch (const Error& e) {
    fail_input(ctx, e.message());
  }
}

std::vector<int64_t> spatial_dims(const at::Tensor& t) {
  const auto sizes = t.sizes();
  return std::vector<int64_t>(sizes.begin() + std::min<int64_t>(2, t.dim()), sizes.end());
}

void check_window_values(const ExecContext& ctx, const std::vector<int64_t>& kernel,
                         const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations) {
  const std::pair<const char*, const std::vector<int64_t>*> lists[] = {
      {"kernel_shape", &kernel}, {"strides", &strides}, {"dilations", &dilations}};
  for (const auto& [name, values] : lists)
    for (int64_t v : *values)
      if (v < 1) fail_input(ctx, std::string(name) + " holds " + std::to_string(v) + " (each must be >= 1)");
  const int64_t group = ctx.node().attr_int("group", 1);
  if (group < 1) fail_input(ctx, "group is " + std::to_string(group) + " (must be >= 1)");
}

Window resolve_window(const ExecContext& ctx, std::vector<int64_t> kernel, const std::vector<int64_t>& input_spatial) {
  const Node& node = ctx.node();
  const size_t n = kernel.size();
  Window w;
  w.kernel = std::move(kernel);
  w.strides = attr_ints_or(node, "strides", std::vector<int64_t>(n, 1));
  w.dilations = attr_ints_or(node, "dilations", std::vector<int64_t>(n, 1));
  if (w.strides.size() != n || w.dilations.size() != n || input_spatial.size() != n)
    fail_input(ctx, "kernel, strides, dilations and input spatial rank disagree");
  check_window_values(ctx, w.kernel, w.strides, w.dilations);
  w.pads_begin.assign(n, 0);
  w.pads_end.assign(n, 0);
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < n; ++i) {
      const int64_t out = (input_spatial[i] + w.strides[i] - 1) / w.strides[i];
      const int64_t effective_kernel = (w.kernel[i] - 1) * w.dilations[i] + 1;
      const int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[i] + effective_kernel - input_spatial[i]);
      const int64_t small = total / 2, large = total - total / 2;
      w.pads_begin[i] = auto_pad == "SAME_UPPER" ? small : large;
      w.pads_end[i] = auto_pad == "SAME_UPPER" ? large : small;
    }
  } else if (auto_pad == "NOTSET") {
    const auto pads = node.attr_ints("pads");
    if (!pads.empty()) {
      if (pads.size() != 2 * n) fail_input(ctx, "pads must have 2 entries per spatial dim");
      for (size_t i = 0; i < n; ++i) {
        w.pads_begin[i] = pads[i];
        w.pads_end[i] = pads[i + n];
      }
    }
  } else if (auto_pad != "VALID") {
    fail_input(ctx, "unknown auto_pad '" + auto_pad + "'");
  }
  return w;
}

at::Tensor pad_spatial(const at::Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                       double value) {
  // constant_pad_nd lists (begin, end) pairs from the last dim backwards.
  std::vector<int64_t> pads;
  for (size_t i = begin.size(); i-- > 0;) {
    pads.push_back(begin[i]);
    pads.push_back(end[i]);
  }
  return at::constant_pad_nd(x, pads, value);
}

at::Tensor pads_for_aten(const at::Tensor& x, const Window& w, double value, bool pooling_limit,
                         std::vector<int64_t>& native) {
  bool fits = w.symmetric();
  for (size_t i = 0; fits && i < w.pads_begin.size(); ++i)
    if (w.pads_begin[i] < 0 || (pooling_limit && w.pads_begin[i] > w.kernel[i] / 2)) fits = false;
  if (fits) {
    native = w.pads_begin;
    return x;
  }
  native.assign(w.pads_begin.size(), 0);
  return pad_spatial(x, w.pads_begin, w.pads_end, value);
}

at::Tensor along_axis(const at::Tensor& v, int64_t axis, int64_t rank) {
  if (v.numel() <= 1) return v.reshape({});
  std::vector<int64_t> shape(size_t(rank), 1);
  shape[size_t(axis)] = v.numel();
  return v.reshape(shape);
}

bool input_is_constant(const ExecContext& ctx, size_t i) {
  const int t = i < ctx.node().inputs.size() ? ctx.node().inputs[i] : -1;
  return t >= 0 && ctx.graph().tensors[size_t(t)].is_constant();
}

at::Tensor subtract_zero_point(const at::Tensor& q, const at::Tensor& zero_point, int64_t axis) {
  at::Tensor x = q.to(at::kDouble);
  if (!zero_point.defined()) return x;
  return x - along_axis(zero_point.to(at::kDouble), axis, q.dim());
}

at::Tensor one_ulp_apart(const at::Tensor& x, uint64_t seed) {
  if (!at::isFloatingType(x.scalar_type())) return x;
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const at::Tensor up = at::randint(0, 2, x.sizes(), gen, at::TensorOptions().dtype(at::kBool)).to(x.device());
  const double inf = std::numeric_limits<double>::infinity();
  return at::nextafter(x, at::where(up, at::full_like(x, inf), at::full_like(x, -inf)));
}

at::Tensor dequantize_along(const at::Tensor& q, const at::Tensor& scale, const at::Tensor& zero_point, int64_t axis) {
  at::Tensor v = q.to(at::kInt);
  if (zero_point.defined()) v = v - along_axis(zero_point.to(at::kInt), axis, q.dim());
  return v.to(at::kFloat) * along_axis(scale.to(at::kFloat), axis, q.dim());
}

at::Tensor dequantize_accumulator(const at::Tensor& acc, const at::Tensor& x_scale, const at::Tensor& w_scale,
                                  const at::Tensor& bias, int64_t axis) {
  // On the CPU, with the channels innermost in memory (the int8 kernels'
  // layout): one pass that turns the int32 accumulator into the float result
  // in its own storage. A second full-size tensor would cost fresh pages for
  // a large activation (the allocator maps those anew each time).
  if (acc.device().is_cpu() && acc.scalar_type() == at::kInt && acc.dim() > 0 && acc.is_non_overlapping_and_dense() &&
      (acc.size(axis) == 1 || acc.stride(axis) == 1) && acc.numel() > 0) {
    const int64_t channels = acc.size(axis);
    const at::Tensor scale = (x_scale.to(at::kFloat).reshape({-1}) * w_scale.to(at::kFloat).reshape({-1}))
                                 .expand({channels}).contiguous();
    const at::Tensor shift = bias.defined() ? bias.to(at::kFloat).reshape({-1}).expand({channels}).contiguous()
                                            : at::zeros({channels}, at::TensorOptions().dtype(at::kFloat));
    const float* s = scale.data_ptr<float>();
    const float* b = shift.data_ptr<float>();
    int32_t* data = acc.data_ptr<int32_t>();
    at::parallel_for(0, acc.numel() / channels, std::max<int64_t>(1, (1 << 16) / channels), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        int32_t* row = data + r * channels;
        for (int64_t c = 0; c < channels; ++c) {
          const float v = float(row[c]) * s[c] + b[c];
          std::memcpy(&row[c], &v, sizeof v);  // the float's bits where the int was
        }
      }
    });
    return acc.view(at::kFloat);
  }
  const at::Tensor scale = along_axis(x_scale.to(at::kFloat).reshape({-1}) * w_scale.to(at::kFloat).reshape({-1}), axis,
                                      acc.dim());
  at::Tensor y = acc.to(at::kFloat);  // keeps acc's layout (channels-last from the int8 convolution)
  if (bias.defined()) return at::addcmul(along_axis(bias.to(at::kFloat), axis, acc.dim()), y, scale);
  return y.mul_(scale);
}

at::Tensor requantize(const at::Tensor& acc, const at::Tensor& scale, const at::Tensor& zero_point) {
  const at::ScalarType type = zero_point.defined() ? zero_point.scalar_type() : at::kByte;
  // at::round rounds half to even, as ONNX requires.
  at::Tensor y = at::round(acc.to(at::kDouble) * scale.to(at::kDouble));
  if (zero_point.defined()) y = y + zero_point.to(at::kDouble);
  const double lo = type == at::kByte ? 0.0 : type == at::kChar ? -128.0 : -2147483648.0;
  const double hi = type == at::kByte ? 255.0 : type == at::kChar ? 127.0 : 2147483647.0;
  return at::clamp(y, lo, hi).to(type);
}

}  // namespace modelstat::profiler

namespace modelstat::profiler {

at::Tensor as_autocast_input(const at::Tensor& t) {
  if (!t.defined() || !torch_compat::cpu_autocast_enabled() || !at::autocast::is_eligible(t, c10::DeviceType::CPU)) return t;
  return at::autocast::cached_cast(torch_compat::cpu_autocast_dtype(), t, c10::DeviceType::CPU);
}

}  // namespace modelstat::profiler

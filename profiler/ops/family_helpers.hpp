// Private helpers shared by the elementwise, reduction and shape-op executor
// families: errors naming the node, axis normalisation, numpy broadcasting,
// ONNX dtype -> ATen dtype, tensor attributes -> at::Tensor, and reading the
// "attribute before opset N, input from opset N" forms of axes and friends.
#pragma once

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "modelstat/error.hpp"
#include "modelstat/graph.hpp"
#include "profiler/ops/exec_rule.hpp"

namespace modelstat::profiler::family {

// Error(Input) naming the node.
[[noreturn]] inline void fail(const ExecContext& ctx, const std::string& message) {
  throw Error(ErrorKind::Input, message, {}, ctx.node().name, ctx.node().op_type);
}

inline bool has_attr(const ExecContext& ctx, const std::string& key) { return ctx.node().attr(key) != nullptr; }

// The required input i (throws when absent).
inline const at::Tensor& need(const ExecContext& ctx, size_t i) {
  if (!ctx.has_input(i)) fail(ctx, "input " + std::to_string(i) + " is required");
  return ctx.input(i);
}

// Axis in [-rank, rank) -> [0, rank).
inline int64_t norm_axis(const ExecContext& ctx, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    fail(ctx, "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

// Normalised, sorted, de-duplicated axes (throws on out-of-range or repeated axes).
inline std::vector<int64_t> norm_axes(const ExecContext& ctx, std::vector<int64_t> axes, int64_t rank) {
  for (auto& a : axes) {
    if (a < -rank || a >= rank)
      fail(ctx, "axis " + std::to_string(a) + " out of range for rank " + std::to_string(rank));
    if (a < 0) a += rank;
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) fail(ctx, "repeated axis");
  return axes;
}

// Numpy (multidirectional) broadcast of two shapes.
inline std::vector<int64_t> broadcast_shapes(const ExecContext& ctx, at::IntArrayRef a, at::IntArrayRef b) {
  const size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      fail(ctx, "shapes " + c10::str(a) + " and " + c10::str(b) + " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// ONNX TensorProto.DataType -> ATen dtype. LibTorch 1.13 has no uint16/32/64:
// they are widened to the next signed type (uint64 values above 2^63 wrap).
inline std::optional<at::ScalarType> to_scalar_type(int64_t onnx_dtype) {
  switch (DType(onnx_dtype)) {
    case DType::Float: return at::kFloat;
    case DType::UInt8: return at::kByte;
    case DType::Int8: return at::kChar;
    case DType::UInt16: return at::kInt;
    case DType::Int16: return at::kShort;
    case DType::Int32: return at::kInt;
    case DType::Int64: return at::kLong;
    case DType::Bool: return at::kBool;
    case DType::Float16: return at::kHalf;
    case DType::Double: return at::kDouble;
    case DType::UInt32: return at::kLong;
    case DType::UInt64: return at::kLong;
    case DType::Complex64: return at::kComplexFloat;
    case DType::Complex128: return at::kComplexDouble;
    case DType::BFloat16: return at::kBFloat16;
    default: return std::nullopt;
  }
}

inline at::ScalarType scalar_type_or_fail(const ExecContext& ctx, int64_t onnx_dtype) {
  auto t = to_scalar_type(onnx_dtype);
  if (!t) fail(ctx, "unsupported element type " + std::string(dtype_name(DType(onnx_dtype))) + " (" +
                        std::to_string(onnx_dtype) + ")");
  return *t;
}

// Device for tensors an op creates: that of its first input (CPU when it has none).
inline at::Device out_device(const ExecContext& ctx) {
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i)) return ctx.input(i).device();
  return at::kCPU;
}

inline std::vector<int64_t> shape_of(const Shape& s) {
  std::vector<int64_t> dims;
  for (const Dim& d : s.dims) dims.push_back(d.value);
  return dims;
}

// A tensor attribute (Constant's value, ConstantOfShape's value) as a tensor,
// from its inline little-endian bytes (or its small integer values).
inline at::Tensor attr_tensor_value(const ExecContext& ctx, const AttrTensor& a, at::Device device) {
  const std::vector<int64_t> dims = shape_of(a.shape);
  for (int64_t d : dims)
    if (d < 0) fail(ctx, "tensor attribute has an unknown dim");
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  const at::ScalarType st = scalar_type_or_fail(ctx, int64_t(a.dtype));
  if (n == 0) return at::empty(dims, at::TensorOptions().dtype(st).device(device));
  auto from_raw = [&](const std::string& raw) -> at::Tensor {
    // Read the ONNX element type as stored, then convert to the ATen type.
    at::ScalarType stored = st;
    switch (a.dtype) {
      case DType::UInt16: stored = at::kShort; break;  // bit pattern; fixed below
      case DType::UInt32: stored = at::kInt; break;
      default: break;
    }
    const int64_t elem = int64_t(c10::elementSize(stored));
    if (int64_t(raw.size()) != n * elem) fail(ctx, "tensor attribute bytes do not match its shape");
    at::Tensor t = at::empty(dims, at::TensorOptions().dtype(stored));
    std::memcpy(t.data_ptr(), raw.data(), raw.size());
    if (a.dtype == DType::UInt16) t = t.to(at::kInt).bitwise_and(0xFFFF);
    if (a.dtype == DType::UInt32) t = t.to(at::kLong).bitwise_and(int64_t(0xFFFFFFFFLL));
    return t.to(device);
  };
  if (a.bytes.has_inline) return from_raw(a.bytes.inline_bytes);
  if (int64_t(a.int_values.size()) == n)
    return at::tensor(a.int_values, at::TensorOptions().dtype(at::kLong)).reshape(dims).to(st).to(device);
  if (!a.bytes.payload.empty() || a.bytes.payload_unlocatable) fail(ctx, "large Constant not loaded");
  fail(ctx, "tensor attribute has no data");
}

// A (small) integer list given as an attribute before `input_since` and as
// input `input_index` from then on. nullopt when absent.
inline std::optional<std::vector<int64_t>> ints_attr_or_input(const ExecContext& ctx, const std::string& attr,
                                                              size_t input_index, int64_t input_since) {
  if (ctx.opset() >= input_since) {
    if (!ctx.has_input(input_index)) return std::nullopt;
    return ctx.input_ints(input_index);
  }
  if (!has_attr(ctx, attr)) return std::nullopt;
  return ctx.node().attr_ints(attr);
}

// A scalar input's value as an at::Scalar of its own type (int stays int).
inline at::Scalar scalar_of(const ExecContext& ctx, size_t i) {
  const at::Tensor& t = need(ctx, i);
  if (t.numel() != 1) fail(ctx, "input " + std::to_string(i) + " must hold one value");
  return t.reshape({}).cpu().item();
}

}  // namespace modelstat::profiler::family

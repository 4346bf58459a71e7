#include "analyzer/cost/shape_rule_helpers.hpp"

#include <onnx/defs/schema.h>

namespace modelstat::cost::shape {

bool has_input(onnx::InferenceContext& ctx, size_t i) {
  return i < ctx.getNumInputs() && ctx.getInputType(i) != nullptr;
}

const onnx::TensorShapeProto* input_shape(onnx::InferenceContext& ctx, size_t i) {
  if (!has_input(ctx, i)) return nullptr;
  const onnx::TypeProto* t = ctx.getInputType(i);
  if (!t->has_tensor_type() || !t->tensor_type().has_shape()) return nullptr;
  return &t->tensor_type().shape();
}

const onnx::TensorShapeProto* input_shape_of_rank(onnx::InferenceContext& ctx, size_t i, int rank) {
  const auto* s = input_shape(ctx, i);
  if (s && s->dim_size() != rank) fail_shape_inference("input ", i, " has rank ", s->dim_size(), ", expected ", rank);
  return s;
}

Dim known(int64_t v) {
  Dim d;
  d.set_dim_value(v);
  return d;
}

Dim unknown() { return Dim{}; }

std::optional<int64_t> value(const Dim& d) {
  if (d.has_dim_value()) return d.dim_value();
  return std::nullopt;
}

Dim add(const Dim& a, const Dim& b) {
  auto x = value(a), y = value(b);
  if (x && y) return known(*x + *y);
  if (x && *x == 0) return b;
  if (y && *y == 0) return a;
  return unknown();
}

Dim mul(const Dim& a, const Dim& b) {
  auto x = value(a), y = value(b);
  if (x && y) return known(*x * *y);
  if (x && *x == 1) return b;
  if (y && *y == 1) return a;
  return unknown();
}

Dim div_exact(const Dim& a, int64_t b) {
  auto x = value(a);
  if (!x || b <= 0) return unknown();
  if (*x % b != 0) fail_shape_inference("dim ", *x, " is not divisible by ", b);
  return known(*x / b);
}

void set_output_type(onnx::InferenceContext& ctx, size_t out, int32_t elem_type, const std::vector<Dim>& dims) {
  if (out >= ctx.getNumOutputs()) return;
  onnx::TypeProto_Tensor* t = ctx.getOutputType(out)->mutable_tensor_type();
  t->set_elem_type(elem_type);
  onnx::TensorShapeProto* s = t->mutable_shape();
  s->clear_dim();
  for (const auto& d : dims) *s->add_dim() = d;
}

void set_output(onnx::InferenceContext& ctx, size_t out, size_t type_from, const std::vector<Dim>& dims) {
  if (!has_input(ctx, type_from) || !ctx.getInputType(type_from)->has_tensor_type()) return;
  set_output_type(ctx, out, ctx.getInputType(type_from)->tensor_type().elem_type(), dims);
}

void same_as_input(onnx::InferenceContext& ctx, size_t out, size_t from) {
  if (out >= ctx.getNumOutputs() || !has_input(ctx, from)) return;
  onnx::propagateElemTypeFromInputToOutput(ctx, from, out);
  if (onnx::hasInputShape(ctx, from)) onnx::propagateShapeFromInputToOutput(ctx, from, out);
}

void broadcast_inputs(onnx::InferenceContext& ctx) {
  if (!has_input(ctx, 0)) return;
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const auto* a = input_shape(ctx, 0);
  const auto* b = input_shape(ctx, 1);
  if (!a || !b) return;
  onnx::bidirectionalBroadcastShapeInference(*a, *b, *ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape());
}

int64_t attr_int(onnx::InferenceContext& ctx, const char* name, int64_t fallback) {
  const onnx::AttributeProto* a = ctx.getAttribute(name);
  return a && a->has_i() ? a->i() : fallback;
}

std::optional<std::vector<Dim>> stat_dims(onnx::InferenceContext& ctx, size_t from, int64_t axis) {
  const auto* s = input_shape(ctx, from);
  if (!s) return std::nullopt;
  const int64_t rank = s->dim_size();
  if (axis < -rank || axis >= rank) fail_shape_inference("axis ", axis, " is out of range for rank ", rank);
  if (axis < 0) axis += rank;
  std::vector<Dim> dims;
  for (int64_t d = 0; d < rank; ++d) dims.push_back(d < axis ? s->dim(int(d)) : known(1));
  return dims;
}

void infer_as(onnx::InferenceContext& ctx, const char* op, int opset) {
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(op, opset, "");
  if (!schema || !schema->has_type_and_shape_inference_function())
    fail_shape_inference("no ONNX inference for ", op, "-", opset);
  schema->GetTypeAndShapeInferenceFunction()(ctx);
}

}  // namespace modelstat::cost::shape

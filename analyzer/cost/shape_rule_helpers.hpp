// Helpers for the shape rules of ops ONNX 1.12 has no schema for (contrib ops,
// later opsets' ops): OpTraits::shape() functions run inside ONNX's shape
// inference and read and write its InferenceContext. Private to
// analyzer/cost; one place for the dim arithmetic every such rule needs.
#pragma once

#include <onnx/defs/shape_inference.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace modelstat::cost::shape {

using Dim = onnx::TensorShapeProto_Dimension;

// Input i's shape when its rank is known; nullptr when the input is absent or
// has no shape.
const onnx::TensorShapeProto* input_shape(onnx::InferenceContext& ctx, size_t i);
// Whether input i is present (an omitted optional input has an empty name).
bool has_input(onnx::InferenceContext& ctx, size_t i);
// Input i's rank-checked shape: fails the node's inference when the rank is
// known and differs; nullptr when unknown.
const onnx::TensorShapeProto* input_shape_of_rank(onnx::InferenceContext& ctx, size_t i, int rank);

Dim known(int64_t v);
Dim unknown();
std::optional<int64_t> value(const Dim& d);
// a + b, a * b, a / b (exact), known when both are; a symbolic dim added to a
// known 0 stays itself.
Dim add(const Dim& a, const Dim& b);
Dim mul(const Dim& a, const Dim& b);
Dim div_exact(const Dim& a, int64_t b);

// Output `out` gets input `from`'s element type and the given dims.
void set_output(onnx::InferenceContext& ctx, size_t out, size_t type_from, const std::vector<Dim>& dims);
// Output `out` gets the given element type and dims.
void set_output_type(onnx::InferenceContext& ctx, size_t out, int32_t elem_type, const std::vector<Dim>& dims);
// Output `out` is input `from` (type and shape) when it exists.
void same_as_input(onnx::InferenceContext& ctx, size_t out, size_t from);

// Output 0: input 0's type, the numpy broadcast of inputs 0 and 1's shapes.
void broadcast_inputs(onnx::InferenceContext& ctx);

// Integer attribute, or `fallback`.
int64_t attr_int(onnx::InferenceContext& ctx, const char* name, int64_t fallback);

// Input `from`'s dims with dims [axis, rank) set to 1 (the per-row statistics
// of a normalisation over the trailing dims); empty when its shape is unknown.
std::optional<std::vector<Dim>> stat_dims(onnx::InferenceContext& ctx, size_t from, int64_t axis);

// Runs the inference of the standard op `op` at `opset` (ONNX 1.12's schema)
// on this node: for a contrib op whose outputs follow a standard op's
// (FusedConv as Conv, FusedGemm as Gemm).
void infer_as(onnx::InferenceContext& ctx, const char* op, int opset);

}  // namespace modelstat::cost::shape

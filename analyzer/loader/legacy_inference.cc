// Shape inference for the old schemas ONNX 1.12 leaves without one. Two
// kinds:
// - ops whose next version differs only in what shapes never see (the
//   `consumed_inputs` optimisation hint, types, is_test...): the next
//   version's function, found in ONNX's own registry;
// - ops whose opset-1 form names things differently (Concat's default axis,
//   Reshape's shape attribute, Pad's `paddings`, Split's optional split input,
//   Cast's type name, Upsample's height/width scales): written here, after
//   each schema's own documentation.
// Anything the inputs leave open (an unknown dim, a split given by a value
// that is not a constant) stays unknown; what the schema forbids fails the
// node's inference (a notice), as ONNX's own functions do.
#include "analyzer/loader/legacy_inference.hpp"

#include <onnx/defs/shape_inference.h>
#include <onnx/defs/tensor_proto_util.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

namespace modelstat::loader {

namespace {

using onnx::InferenceContext;
using onnx::TensorShapeProto;

// Ops whose schema without inference has the same output shapes as the next
// version of the op for the same node (the attributes that version reads
// exist, with the same meaning, in the older one).
const std::set<std::string>& same_shapes_as_next_version() {
  static const std::set<std::string> ops = {
      // Unary and activations (opset 1 adds only consumed_inputs).
      "Abs", "Ceil", "Exp", "Floor", "Log", "Neg", "Reciprocal", "Relu", "Sigmoid", "Sqrt", "Tanh", "Elu",
      "HardSigmoid", "LeakyRelu", "Selu", "PRelu", "Clip",
      // Binary arithmetic: opset 1 and 6 both give the result A's shape (B broadcasts onto A).
      "Add", "Sub", "Mul", "Div",
      // Variadic: no broadcasting before opset 8, every input has the output's shape.
      "Sum", "Max", "Min", "Mean",
      // Output 0 has X's shape in both versions.
      "BatchNormalization", "InstanceNormalization", "Dropout",
      // Gemm 1 and 6: (M, N) from A, B, transA, transB. LpPool 1 and 2 differ in p's type only;
      // GRU 1 and 3 in linear_before_reset only.
      "Gemm", "GlobalLpPool", "LpPool", "GRU"};
  return ops;
}

std::optional<onnx::InferenceFunction> next_version_inference(const onnx::OpSchema& schema) {
  const int since = schema.since_version();
  for (int v = since + 1; v <= since + 32; ++v) {
    const onnx::OpSchema* next = onnx::OpSchemaRegistry::Schema(schema.Name(), v, schema.domain());
    if (next && next->since_version() > since) {
      if (!next->has_type_and_shape_inference_function()) return std::nullopt;
      return next->GetTypeAndShapeInferenceFunction();
    }
  }
  return std::nullopt;
}

// Dims of input i when its shape is known (each dim: value, or -1 unknown).
std::optional<std::vector<int64_t>> input_dims(InferenceContext& ctx, size_t i) {
  if (i >= ctx.getNumInputs() || !onnx::hasInputShape(ctx, i)) return std::nullopt;
  std::vector<int64_t> dims;
  for (const auto& d : onnx::getInputShape(ctx, i).dim())
    dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return dims;
}

void set_output_dims(InferenceContext& ctx, size_t o, const std::vector<int64_t>& dims) {
  TensorShapeProto shape;
  for (int64_t d : dims) {
    auto* dim = shape.add_dim();
    if (d >= 0) dim->set_dim_value(d);
  }
  onnx::updateOutputShape(ctx, o, shape);
}

// Concat-1: `axis` is optional and defaults to 1 (required from opset 4).
void concat_v1(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  std::vector<std::vector<int64_t>> inputs;
  for (size_t i = 0; i < ctx.getNumInputs(); ++i) {
    auto dims = input_dims(ctx, i);
    if (!dims) return;
    inputs.push_back(*dims);
  }
  if (inputs.empty()) return;
  const auto rank = int64_t(inputs[0].size());
  const int64_t axis = onnx::getAttribute(ctx, "axis", 1);
  if (axis < 0 || axis >= rank) fail_shape_inference("Concat-1 axis ", axis, " is outside [0, ", rank, ")");
  std::vector<int64_t> out = inputs[0];
  out[size_t(axis)] = 0;
  for (const auto& dims : inputs) {
    if (int64_t(dims.size()) != rank) fail_shape_inference("Concat-1 inputs differ in rank");
    for (int64_t d = 0; d < rank; ++d) {
      int64_t& o = out[size_t(d)];
      if (d == axis)
        o = o < 0 || dims[size_t(d)] < 0 ? -1 : o + dims[size_t(d)];
      else if (o < 0)
        o = dims[size_t(d)];
    }
  }
  set_output_dims(ctx, 0, out);
}

// Reshape-1: the target shape is the `shape` attribute (an input from opset
// 5); 0 copies the input's dim, one -1 takes the remaining elements.
void reshape_v1(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  std::vector<int64_t> shape;
  if (!onnx::getRepeatedAttribute(ctx, "shape", shape)) return;
  const auto in = input_dims(ctx, 0);
  int64_t infer = -1, known = 1;
  bool all_known = true;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t& d = shape[i];
    if (d == 0) {
      if (in && i >= in->size())
        fail_shape_inference("Reshape-1 shape 0 copies a dim the input does not have");
      d = in ? (*in)[i] : -1;
    } else if (d == -1) {
      if (infer >= 0) fail_shape_inference("Reshape-1 shape has more than one -1");
      infer = int64_t(i);
      continue;
    } else if (d < -1) {
      fail_shape_inference("Reshape-1 shape holds ", d);
    }
    if (d < 0)
      all_known = false;
    else
      known *= d;
  }
  if (infer >= 0) {
    int64_t total = in ? 1 : -1;
    if (in)
      for (int64_t d : *in) total = total < 0 || d < 0 ? -1 : total * d;
    shape[size_t(infer)] = all_known && total >= 0 && known > 0 && total % known == 0 ? total / known : -1;
  }
  set_output_dims(ctx, 0, shape);
}

// Pad-1: the pads are the `paddings` attribute, [x1_begin, x2_begin, ...,
// x1_end, x2_end, ...] (renamed `pads` in opset 2).
void pad_v1(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  std::vector<int64_t> pads;
  if (!onnx::getRepeatedAttribute(ctx, "paddings", pads))
    fail_shape_inference("Pad-1 needs the paddings attribute");
  const auto in = input_dims(ctx, 0);
  if (!in) return;
  const size_t rank = in->size();
  if (pads.size() != 2 * rank)
    fail_shape_inference("Pad-1 paddings hold ", pads.size(), " values for rank ", rank);
  std::vector<int64_t> out(rank);
  for (size_t d = 0; d < rank; ++d) out[d] = (*in)[d] < 0 ? -1 : (*in)[d] + pads[d] + pads[d + rank];
  set_output_dims(ctx, 0, out);
}

// Split-1: lengths from the optional second input (a constant here) or the
// `split` attribute, else equal parts, one per output.
void split_v1(InferenceContext& ctx) {
  for (size_t o = 0; o < ctx.getNumOutputs(); ++o) onnx::propagateElemTypeFromInputToOutput(ctx, 0, o);
  const auto in = input_dims(ctx, 0);
  if (!in) return;
  const auto rank = int64_t(in->size());
  const int64_t axis = onnx::getAttribute(ctx, "axis", 0);
  if (axis < 0 || axis >= rank) fail_shape_inference("Split-1 axis ", axis, " is outside [0, ", rank, ")");
  const int64_t dim = (*in)[size_t(axis)];
  std::vector<int64_t> lengths;
  if (ctx.getNumInputs() > 1 && ctx.getInputType(1)) {
    const onnx::TensorProto* split = ctx.getInputData(1);
    if (!split) return;  // lengths known only when running
    if (split->data_type() == onnx::TensorProto::FLOAT)
      for (float v : onnx::ParseData<float>(split)) lengths.push_back(int64_t(v));
    else if (split->data_type() == onnx::TensorProto::DOUBLE)
      for (double v : onnx::ParseData<double>(split)) lengths.push_back(int64_t(v));
    else
      return;
  } else {
    onnx::getRepeatedAttribute(ctx, "split", lengths);
  }
  const auto n = int64_t(ctx.getNumOutputs());
  if (lengths.empty()) {
    if (dim < 0) return;
    if (n < 1 || dim % n != 0)
      fail_shape_inference("Split-1: dim ", dim, " does not split into ", n, " equal parts");
    lengths.assign(size_t(n), dim / n);
  }
  if (int64_t(lengths.size()) != n)
    fail_shape_inference("Split-1 has ", lengths.size(), " lengths for ", n, " outputs");
  int64_t total = 0;
  for (int64_t l : lengths) {
    if (l < 0) fail_shape_inference("Split-1 length ", l, " is negative");
    total += l;
  }
  if (dim >= 0 && total != dim) fail_shape_inference("Split-1 lengths add up to ", total, ", not ", dim);
  for (size_t o = 0; o < lengths.size(); ++o) {
    std::vector<int64_t> out = *in;
    out[size_t(axis)] = lengths[o];
    set_output_dims(ctx, o, out);
  }
}

// Cast-1: `to` names the type ("FLOAT", "INT32", ...: TensorProto's names),
// a number from opset 6.
void cast_v1(InferenceContext& ctx) {
  const onnx::AttributeProto* to = ctx.getAttribute("to");
  if (!to || to->type() != onnx::AttributeProto::STRING) fail_shape_inference("Cast-1 needs a string 'to'");
  onnx::TensorProto::DataType type = onnx::TensorProto::UNDEFINED;
  if (!onnx::TensorProto::DataType_Parse(to->s(), &type) || type == onnx::TensorProto::UNDEFINED)
    fail_shape_inference("Cast-1 'to' names no type: '", to->s(), "'");
  onnx::updateOutputElemType(ctx, 0, int32_t(type));
  if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

// Upsample-1: a 4-D [N, C, H, W] input; H and W times the height_scale and
// width_scale attributes, floored.
void upsample_v1(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const onnx::AttributeProto* h = ctx.getAttribute("height_scale");
  const onnx::AttributeProto* w = ctx.getAttribute("width_scale");
  if (!h || !w) fail_shape_inference("Upsample-1 needs height_scale and width_scale");
  const auto in = input_dims(ctx, 0);
  if (!in) return;
  if (in->size() != 4) fail_shape_inference("Upsample-1 needs a 4-D input, got rank ", in->size());
  std::vector<int64_t> out = *in;
  const double scales[2] = {h->f(), w->f()};
  for (size_t k = 0; k < 2; ++k) {
    int64_t& d = out[2 + k];
    if (d >= 0) d = int64_t(std::floor(double(d) * scales[k]));
  }
  set_output_dims(ctx, 0, out);
}

// ---- completions: after the schema's own (or the function above) ----------

// Output o gets `dims` (-1: unknown) where inference left it open: no shape
// yet, or dims without a value; a rank that disagrees fails the node. The
// element type too, when none is set.
void complete_output(InferenceContext& ctx, size_t o, const std::vector<int64_t>& dims, int32_t elem_type) {
  if (o >= ctx.getNumOutputs()) return;
  onnx::TypeProto* type = ctx.getOutputType(o);
  if (!type) return;
  auto* tensor = type->mutable_tensor_type();
  if (elem_type != 0 && tensor->elem_type() == 0) tensor->set_elem_type(elem_type);
  if (!tensor->has_shape()) {
    set_output_dims(ctx, o, dims);
    return;
  }
  auto* shape = tensor->mutable_shape();
  if (shape->dim_size() != int(dims.size()))
    fail_shape_inference("output ", o, " has rank ", shape->dim_size(), ", the op's definition gives ",
                         dims.size());
  for (int i = 0; i < shape->dim_size(); ++i)
    if (!shape->dim(i).has_dim_value() && dims[size_t(i)] >= 0)
      shape->mutable_dim(i)->set_dim_value(dims[size_t(i)]);
}

int32_t input_elem_type(InferenceContext& ctx, size_t i) {
  const onnx::TypeProto* t = i < ctx.getNumInputs() ? ctx.getInputType(i) : nullptr;
  return t && t->has_tensor_type() ? t->tensor_type().elem_type() : 0;
}

// Slice 1-9: starts/ends/axes attributes; negative starts and ends count from
// the end of the dim (ONNX 1.12's function gives only the rank for them),
// values past the dim clamp.
void slice_v1_completion(InferenceContext& ctx) {
  const auto in = input_dims(ctx, 0);
  std::vector<int64_t> starts, ends, axes;
  if (!in || !onnx::getRepeatedAttribute(ctx, "starts", starts) ||
      !onnx::getRepeatedAttribute(ctx, "ends", ends) || starts.size() != ends.size())
    return;
  const auto rank = int64_t(in->size());
  if (!onnx::getRepeatedAttribute(ctx, "axes", axes))
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
  if (axes.size() != starts.size()) return;
  std::vector<int64_t> out = *in;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank) fail_shape_inference("Slice axis ", axes[i], " is outside the rank ", rank);
    const int64_t dim = (*in)[size_t(axis)];
    if (dim < 0) continue;
    int64_t start = starts[i], end = ends[i];
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    out[size_t(axis)] = std::max<int64_t>(0, end - start);
  }
  complete_output(ctx, 0, out, 0);
}

// Squeeze before 13 without axes: every dim of size 1 goes (known only when
// every dim is).
void squeeze_completion(InferenceContext& ctx) {
  std::vector<int64_t> axes;
  if (onnx::getRepeatedAttribute(ctx, "axes", axes)) return;
  const auto in = input_dims(ctx, 0);
  if (!in) return;
  std::vector<int64_t> out;
  for (int64_t d : *in) {
    if (d < 0) return;
    if (d != 1) out.push_back(d);
  }
  complete_output(ctx, 0, out, 0);
}

// A one-value constant input (float, double or integer) as an integer.
std::optional<int64_t> constant_scalar(InferenceContext& ctx, size_t i) {
  const onnx::TensorProto* t = i < ctx.getNumInputs() ? ctx.getInputData(i) : nullptr;
  if (!t) return std::nullopt;
  switch (t->data_type()) {
    case onnx::TensorProto::FLOAT: {
      const auto v = onnx::ParseData<float>(t);
      return v.size() == 1 ? std::optional<int64_t>(int64_t(v[0])) : std::nullopt;
    }
    case onnx::TensorProto::DOUBLE: {
      const auto v = onnx::ParseData<double>(t);
      return v.size() == 1 ? std::optional<int64_t>(int64_t(v[0])) : std::nullopt;
    }
    case onnx::TensorProto::INT64: {
      const auto v = onnx::ParseData<int64_t>(t);
      return v.size() == 1 ? std::optional<int64_t>(v[0]) : std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

// Tile-1: inputs `tiles` (copies) and `axis`, one value each.
void tile_v1_completion(InferenceContext& ctx) {
  const auto in = input_dims(ctx, 0);
  const auto tiles = constant_scalar(ctx, 1), axis = constant_scalar(ctx, 2);
  if (!in || !tiles || !axis) return;
  const auto rank = int64_t(in->size());
  if (*axis < 0 || *axis >= rank) fail_shape_inference("Tile-1 axis ", *axis, " is outside the rank ", rank);
  if (*tiles < 0) fail_shape_inference("Tile-1 tiles ", *tiles, " is negative");
  std::vector<int64_t> out = *in;
  int64_t& d = out[size_t(*axis)];
  if (d >= 0) d *= *tiles;
  complete_output(ctx, 0, out, input_elem_type(ctx, 0));
}

// Dropout before 10: the mask has X's shape and type.
void dropout_mask_completion(InferenceContext& ctx) {
  if (const auto in = input_dims(ctx, 0)) complete_output(ctx, 1, *in, input_elem_type(ctx, 0));
}

// BatchNormalization before 14: mean, var, saved_mean and saved_var (outputs
// 1-4, training) have the shape of scale: [C], or [C, D1, ...] with spatial=0.
void batch_norm_completion(InferenceContext& ctx) {
  const auto scale = input_dims(ctx, 1);
  if (!scale) return;
  for (size_t o = 1; o < 5; ++o) complete_output(ctx, o, *scale, input_elem_type(ctx, 0));
}

// RNN, GRU, LSTM before 7: Y [seq, dirs, batch, hidden], Y_h (and LSTM's Y_c)
// [dirs, batch, hidden] at their fixed places whatever output_sequence says
// (it only makes Y optional; ONNX 1.12's function leaves every output open
// when it is 0, its default).
void rnn_v1_completion(InferenceContext& ctx) {
  const auto x = input_dims(ctx, 0);
  if (!x || x->size() != 3) return;
  const std::string direction = onnx::getAttribute(ctx, "direction", "forward");
  const int64_t dirs = direction == "bidirectional"                       ? 2
                       : direction == "forward" || direction == "reverse" ? 1
                                                                          : -1;
  int64_t hidden = onnx::getAttribute(ctx, "hidden_size", -1);
  if (hidden <= 0) {
    const auto r = input_dims(ctx, 2);
    hidden = r && r->size() == 3 ? (*r)[2] : -1;
  }
  const int32_t type = input_elem_type(ctx, 0);
  complete_output(ctx, 0, {(*x)[0], dirs, (*x)[1], hidden}, type);
  for (size_t o = 1; o < 3; ++o) complete_output(ctx, o, {dirs, (*x)[1], hidden}, type);
}

}  // namespace

std::optional<onnx::InferenceFunction> legacy_completion(const onnx::OpSchema& schema) {
  if (!schema.domain().empty()) return std::nullopt;
  const std::string& op = schema.Name();
  const int since = schema.since_version();
  if (op == "Slice" && since == 1) return slice_v1_completion;
  if (op == "Squeeze" && since < 13) return squeeze_completion;
  if (op == "Tile" && since == 1) return tile_v1_completion;
  if (op == "Dropout" && since < 10) return dropout_mask_completion;
  if (op == "BatchNormalization" && since < 14) return batch_norm_completion;
  if ((op == "RNN" || op == "GRU" || op == "LSTM") && since < 7) return rnn_v1_completion;
  return std::nullopt;
}

std::optional<onnx::InferenceFunction> legacy_inference(const onnx::OpSchema& schema) {
  if (schema.has_type_and_shape_inference_function() || !schema.domain().empty()) return std::nullopt;
  const std::string& op = schema.Name();
  if (schema.since_version() == 1) {
    if (op == "Concat") return concat_v1;
    if (op == "Reshape") return reshape_v1;
    if (op == "Pad") return pad_v1;
    if (op == "Split") return split_v1;
    if (op == "Cast") return cast_v1;
    if (op == "Upsample") return upsample_v1;
  }
  if (same_shapes_as_next_version().count(op)) return next_version_inference(schema);
  return std::nullopt;
}

}  // namespace modelstat::loader

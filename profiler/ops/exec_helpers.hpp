// Helpers shared by the executor families (profiler/ops/*.cc), the executor
// and the weight store: registration, errors that name the node, required
// inputs, attribute access with ONNX defaults, axis normalisation, dtype
// mapping (and the reduced-precision rule for float-producing ops), constant
// bytes -> tensors, and the spatial window arithmetic (kernel, strides,
// dilations, pads, auto_pad) that Conv, ConvTranspose and every pooling op
// share. One copy, so the families agree.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "modelstat/graph.hpp"
#include "profiler/ops/exec_rule.hpp"

namespace modelstat::profiler {

// ---- registration -----------------------------------------------------------

// Registers `fn` for the op `op` of `domain` ("" = ai.onnx) from opset `since`
// on: the same key as the op's record (analyzer/cost/cost_rule.hpp), which
// tests/profiler/exec_registry_test.cc checks.
void add_executor(std::vector<ExecRule>& rules, const char* op, ExecFn fn, int64_t since = 1,
                  const char* domain = "");

// ---- errors and inputs --------------------------------------------------------

// Error(Input) naming the node and its op: the model asks for something the
// executor does not do (an unsupported mode, a malformed attribute).
[[noreturn]] void fail_input(const ExecContext& ctx, const std::string& message);

// The required input i; Error(Input) naming the node when it is absent.
const at::Tensor& need_input(const ExecContext& ctx, size_t i);

// A one-element input's value as an at::Scalar of its own type (ints stay
// ints); Error(Input) when absent or not one element.
at::Scalar input_scalar_value(const ExecContext& ctx, size_t i);

// ---- attributes -------------------------------------------------------------

bool has_attr(const ExecContext& ctx, const std::string& key);

// The ints attribute, or `fallback` when absent (Node::attr_ints returns empty).
std::vector<int64_t> attr_ints_or(const Node& node, const std::string& key, std::vector<int64_t> fallback);
// Floats attribute; empty when absent.
std::vector<double> attr_floats(const Node& node, const std::string& key);
// Strings attribute; empty when absent.
std::vector<std::string> attr_strings(const Node& node, const std::string& key);

// A (small) integer list given as attribute `attr` before opset `input_since`
// and as input `input_index` from then on (Reduce* axes, Squeeze/Unsqueeze
// axes...). nullopt when absent.
std::optional<std::vector<int64_t>> ints_attr_or_input(const ExecContext& ctx, const std::string& attr,
                                                       size_t input_index, int64_t input_since);

// ONNX axes are in [-rank, rank-1] (a scalar takes axis 0); returns the axis
// in [0, rank), Error(Input) outside.
int64_t normalize_axis(const ExecContext& ctx, int64_t axis, int64_t rank);
// Each axis normalised, then sorted; Error(Input) on a repeated axis.
std::vector<int64_t> normalize_axes(const ExecContext& ctx, std::vector<int64_t> axes, int64_t rank);

// ---- dtypes -----------------------------------------------------------------

// The ATen type a tensor of this ONNX type lives in. LibTorch 1.13 has no
// uint16/32/64: they widen to the next signed type (uint64 values above 2^63
// wrap). String and undefined types throw Error(Input).
at::ScalarType scalar_type_of(DType dtype);
// The same for a type number an attribute gives (Cast's 'to', EyeLike's
// 'dtype'...): Error(Input) naming the node for an unknown or unsupported one.
at::ScalarType scalar_type_of(const ExecContext& ctx, int64_t onnx_type);
// The ONNX type an ATen tensor reports (the inverse, widened types included).
DType dtype_of(at::ScalarType type);
bool is_floating(at::ScalarType type);
// float16 or bfloat16.
bool is_reduced_float(at::ScalarType type);

// What LibTorch's CPU autocast does to the arguments of an op on its
// lower-precision list (a bf16 training step, profiler/train_step.hpp): t
// cast to the autocast dtype (a weight's cast cached for the region), when
// CPU autocast is on and t is a CPU float tensor; otherwise t. For the
// executor's ATen calls that autocast does not see: at::convolution (Conv,
// ConvTranspose) is not on LibTorch 1.13's list, conv2d and
// conv_transpose2d, which torch.nn calls, are.
at::Tensor as_autocast_input(const at::Tensor& t);

// The dtype a float-producing op (Constant, ConstantOfShape, Range, EyeLike,
// the windows, Cast/CastLike) creates for the ONNX type `type`, by the run's
// float dtype (ExecOptions::float_dtype; integer types always untouched):
// - fp16 / bf16: every float type becomes it, so a half-precision graph stays
//   half instead of promoting back to fp32 at every Cast or Constant;
// - fp32: fp16 and bf16 become fp32 (a float16 model computes in fp32; a
//   Cast to float16 would otherwise bring half precision back), double stays;
// - Undefined (the model's own dtypes): `type` as the model says, as ONNX
//   specifies.
at::ScalarType compute_type(const ExecContext& ctx, at::ScalarType type);

// ---- constants --------------------------------------------------------------

// A CPU tensor from `count` raw little-endian elements of ONNX type `dtype`
// (as TensorProto.raw_data stores them). Copies the bytes.
at::Tensor tensor_from_raw(const void* data, int64_t nbytes, DType dtype, const std::vector<int64_t>& dims);
// A CPU tensor from the values of a packed-varint payload (TensorProto fields
// 5 int32_data, 7 int64_data, 11 uint64_data): 8/16-bit types, float16 and
// bfloat16 come as their bit patterns in int32_data.
at::Tensor tensor_from_varints(const uint8_t* data, int64_t nbytes, DType dtype, const std::vector<int64_t>& dims);

// Read-only memory map of a whole file (the model, an external data file):
// the kernel pages in only what a constant's byte range touches.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path);  // Error(Input) when it cannot be opened
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const uint8_t* data() const { return data_; }
  int64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Hands the pages wholly inside [offset, offset + length) back to the
  // kernel once their bytes are copied: the mapping's resident pages would
  // otherwise count the weights a second time in the process's RSS.
  void release(int64_t offset, int64_t length) const;

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  int64_t size_ = 0;
};

// A constant from what the loader kept of it: the inline bytes, else the
// stripped payload ranges in `model_file` (nullptr: not available). Returns an
// undefined tensor when neither holds the data. CPU, the constant's own dtype.
at::Tensor tensor_from_constant_bytes(const ConstantBytes& bytes, DType dtype, const std::vector<int64_t>& dims,
                                      const MappedFile* model_file);

// A tensor attribute (ConstantOfShape's value, Constant's value...) as a CPU
// tensor of its own dtype. Small attributes are inline (or kept as integer
// values); a stripped payload is read back from `model_path` (Model::path).
// Error(Input) when none of these holds the data.
at::Tensor tensor_from_attr(const AttrTensor& attr, const std::string& model_path = {});
// The same, the error naming the node.
at::Tensor tensor_from_attr(const ExecContext& ctx, const AttrTensor& attr);

// Known dims of a shape; Error(Input) naming `what` when a dim is unknown.
std::vector<int64_t> known_dims(const Shape& shape, const std::string& what);

// Product of dims[begin, end) (1 when empty): element counts, flattened sizes.
int64_t product(at::IntArrayRef dims, size_t begin = 0, size_t end = std::numeric_limits<size_t>::max());

// ---- spatial windows (Conv, ConvTranspose, pooling) ---------------------------

// One N-d window over the spatial dims (all vectors have one entry per
// spatial dim). pads are split in begin/end because ONNX allows asymmetric
// padding, which ATen's conv/pool kernels do not.
struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads_begin, pads_end;
  bool symmetric() const { return pads_begin == pads_end; }
  int64_t spatial_rank() const { return int64_t(kernel.size()); }
};

// kernel given by the caller (kernel_shape, or the weight's dims for Conv);
// strides, dilations default to 1; pads from `pads` ([b1..bn, e1..en]) or
// from auto_pad (SAME_UPPER / SAME_LOWER: output = ceil(input / stride), the
// odd pixel at the end for UPPER and at the start for LOWER; VALID: none).
// `input_spatial` are the input's spatial dims.
Window resolve_window(const ExecContext& ctx, std::vector<int64_t> kernel, const std::vector<int64_t>& input_spatial);
// Refuses (fail_input) a kernel_shape, strides or dilations value below 1 and
// a group below 1: the pad arithmetic divides by the strides (a stride of 0
// was a SIGFPE) and ATen's own refusal is not the project's error.
void check_window_values(const ExecContext& ctx, const std::vector<int64_t>& kernel,
                         const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations);

// The spatial dims of an N, C, spatial... tensor (input or weight).
std::vector<int64_t> spatial_dims(const at::Tensor& t);

// Pads the spatial (trailing) dims of x with `value`; begin/end per spatial dim.
at::Tensor pad_spatial(const at::Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                       double value);

// ATen's conv and pool kernels take one symmetric pad per dim (pooling also
// requires pad <= kernel/2). When the window fits, returns x and sets `native`
// to the pads to pass to ATen; otherwise pads x explicitly with `value` and
// sets `native` to zeros. max_pad_per_kernel_half: true for pooling.
at::Tensor pads_for_aten(const at::Tensor& x, const Window& w, double value, bool pooling_limit,
                         std::vector<int64_t>& native);

// ---- fused activations (ONNX Runtime's FusedConv, FusedGemm) ------------------

// y through the ONNX-domain activation `op` (Relu, LeakyRelu, Sigmoid, Tanh,
// HardSigmoid, Clip, Elu, ...) run by that op's own executor, `attrs` its
// attributes (Clip's min and max as attributes: it runs at opset 6);
// Error(Input) naming ctx's node when no executor runs `op`.
at::Tensor run_activation(const ExecContext& ctx, const std::string& op,
                          std::map<std::string, AttrValue> attrs, const at::Tensor& y);

// ---- quantized ops (ConvInteger, QLinearConv, MatMulInteger, QLinearMatMul) ----

// Whether input i of the node is a graph constant (an initializer or a
// Constant's output): the int8 kernels cache what they build from it.
bool input_is_constant(const ExecContext& ctx, size_t i);

// A per-channel vector reshaped to broadcast along `axis` of a rank-`rank`
// tensor; scalars and 1-element tensors are returned as they are.
at::Tensor along_axis(const at::Tensor& v, int64_t axis, int64_t rank);
// q - zero_point in double: exact for 8-bit data and 32-bit accumulators, and
// every ATen conv/matmul kernel accepts it (none takes integers on CPU).
// zero_point: undefined (0), a scalar, or per-slice along `axis` of q.
at::Tensor subtract_zero_point(const at::Tensor& q, const at::Tensor& zero_point, int64_t axis);

// x with each float value moved by one ulp, up or down at random (the
// generator's seed fixes which); non-float tensors as they are.
at::Tensor one_ulp_apart(const at::Tensor& x, uint64_t seed);

// ---- QDQ fusion (analyzer/fusion/patterns/qdq.cc) ----------------------------------------------

// DequantizeLinear in float: (q - zero_point) * scale, scale and zero point
// one element or one per index of `axis`.
at::Tensor dequantize_along(const at::Tensor& q, const at::Tensor& scale, const at::Tensor& zero_point, int64_t axis);
// What a float Conv / MatMul / Gemm of two dequantized operands computes,
// from the exact integer accumulator: acc * (x_scale * w_scale) + bias, in
// float, with w_scale and bias one element or one per index of `axis` of acc.
at::Tensor dequantize_accumulator(const at::Tensor& acc, const at::Tensor& x_scale, const at::Tensor& w_scale,
                                  const at::Tensor& bias, int64_t axis);
// ONNX requantisation: saturate(round_half_to_even(acc * scale) + zero_point)
// in zero_point's type (uint8 when it is absent). `scale` broadcasts to acc.
at::Tensor requantize(const at::Tensor& acc, const at::Tensor& scale, const at::Tensor& zero_point);

}  // namespace modelstat::profiler

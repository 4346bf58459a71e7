// Constant folding of small tensors ("shape values") over an ONNX graph:
// integer, bool and float tensors of at most kMaxConstValueElements, computed
// from initializers, Constant nodes and known shapes, wherever a node's inputs
// are all known and its op record names a fold function. ONNX 1.12's data
// propagation misses common exporter patterns (torch's expand(n,-1,-1), Slice
// bounds computed from Shape/Div/Mul chains, Range for position ids, Resize
// sizes through float Cast/Mul/Floor, tf2onnx's Pad amounts reordered by
// Split/Concat); the loader hands these values to shape inference as the
// inputs' data.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/loader/onnx_ir.hpp"

namespace modelstat::loader {

// A constant tensor's values. Integer and bool types hold their values;
// float types (FLOAT, DOUBLE, FLOAT16, BFLOAT16) hold each value as a double
// whose 64 bits are stored in `values` (real_value / real_bits below), so an
// op that only moves elements (Gather, Concat, Slice, Reshape, ...) treats
// every type alike and an op that computes reads the type first.
struct ConstValue {
  std::vector<int64_t> dims;    // empty = scalar
  std::vector<int64_t> values;  // row-major, product(dims) entries; bools are 0/1
  // onnx::TensorProto_DataType: INT64, INT32, INT16, INT8, UINT8, UINT16,
  // UINT32, BOOL, FLOAT, DOUBLE, FLOAT16 or BFLOAT16. Integer values always
  // fit this type; float values are rounded to it.
  int32_t elem_type = onnx::TensorProto_DataType_INT64;
};

// Whether elem_type is one of the float types a ConstValue holds.
bool is_real_type(int32_t elem_type);
// The double stored in a float ConstValue's element, and the bits to store.
double real_value(int64_t bits);
int64_t real_bits(double x);

// Most elements a folded tensor may have; larger ones are left unknown.
constexpr int64_t kMaxConstValueElements = 4096;

// The value as a TensorProto (int64_data / int32_data / uint64_data /
// float_data / double_data as ONNX stores that type), for shape inference
// functions that read an input's data.
onnx::TensorProto to_tensor_proto(const ConstValue& v, const std::string& name);

// Evaluates, in node order, the values computable from initializers and
// Constant nodes with embedded data (stripped or external payloads are
// unknown), and from the fully known shapes of graph.input / graph.value_info
// / graph.output entries, initializer dims and already evaluated tensors (for
// Shape/Size). Default-domain nodes whose op record names a fold function
// (analyzer/cost/cost_rule.hpp) only; subgraphs are not entered. Returns name
// -> value for every tensor it could evaluate, initializers included. Never
// throws: anything unknown, ill-formed or larger than kMaxConstValueElements
// is simply absent from the map.
//
// Structure decides between opset forms (Slice attrs vs inputs, Unsqueeze /
// Squeeze / Reduce* axes attr vs input, Reshape's shape attr vs input, the
// `broadcast` attribute of binary ops before opset 7), so no opset version is
// needed.
//
// A subgraph (If branch, Loop/Scan body) reads values of its enclosing graphs
// by name: `outer` gives what is known there (shapes and values), seeded
// before the subgraph's own entries, which shadow it. When `scope` is given,
// it receives everything known at the end of this graph (outer included): the
// `outer` of this graph's own subgraphs. `inferred`: the types infer_shapes
// kept beside the graph (onnx_ir.hpp), read after its value_info.
struct ScopeValues {
  std::unordered_map<std::string, std::vector<int64_t>> shapes;
  std::unordered_map<std::string, ConstValue> values;
};
std::unordered_map<std::string, ConstValue> evaluate_const_values(const onnx::GraphProto& graph,
                                                                  const ScopeValues* outer = nullptr,
                                                                  ScopeValues* scope = nullptr,
                                                                  const InferredTypes* inferred = nullptr) noexcept;

}  // namespace modelstat::loader

// Constant folding of small integer tensors ("shape values") over an ONNX
// graph. ONNX 1.12's data propagation misses common exporter patterns (torch's
// expand(n,-1,-1), Slice bounds computed from Shape/Div/Mul chains, Range for
// position ids); the loader uses these values to pin such inputs down before
// re-running shape inference.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace modelstat::loader {

struct IntValue {
  std::vector<int64_t> dims;    // empty = scalar
  std::vector<int64_t> values;  // row-major, product(dims) entries; bools are 0/1
  // onnx::TensorProto_DataType of the tensor: INT64, INT32, INT16, INT8,
  // UINT8, UINT16, UINT32 or BOOL. Values always fit this type.
  int32_t elem_type = onnx::TensorProto_DataType_INT64;
};

// Most elements an evaluated tensor may have; larger ones are left unknown.
constexpr int64_t kMaxIntValueElements = 4096;

// Evaluates, in node order, the integer values computable from integer
// initializers and Constant nodes with embedded data (stripped or external
// payloads are unknown), and from the fully known shapes of graph.input /
// graph.value_info / graph.output entries, initializer dims and already
// evaluated tensors (for Shape/Size). Default-domain nodes whose op record
// names a fold function (analyzer/cost/cost_rule.hpp) only; subgraphs are
// not entered. Returns name -> value for every tensor it could evaluate,
// initializers included. Never throws: anything unknown, ill-formed or larger
// than kMaxIntValueElements is simply absent from the map.
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
// `outer` of this graph's own subgraphs.
struct ScopeValues {
  std::unordered_map<std::string, std::vector<int64_t>> shapes;
  std::unordered_map<std::string, IntValue> values;
};
std::unordered_map<std::string, IntValue> evaluate_int_values(const onnx::GraphProto& graph,
                                                              const ScopeValues* outer = nullptr,
                                                              ScopeValues* scope = nullptr) noexcept;

}  // namespace modelstat::loader

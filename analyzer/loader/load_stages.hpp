// Private to analyzer/loader: the stages of a load, one file each, in the
// order model_loader.cc runs them:
//   opset_validation.cc  opsets and domains the model imports and uses
//   graph_order.cc       check_and_order_graph: every input defined, nodes in order
//   input_binding.cc     --input / --dim / --default-batch on the graph inputs
//   guarded_schemas.cc   the schema registry ONNX's shape inference asks
//   shape_inference.cc   one pass in node order: each op's shape inference
//                        (ONNX's functions, called as ONNX's driver calls them)
//                        and constant folding (shape_values.hpp), the selected
//                        If branch's shapes
//   unknown_cause.cc     the first node left unsized, and why
//   (ir_builder.cc)      build_graph: the inferred proto as modelstat's IR
#pragma once

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/loader/onnx_ir.hpp"
#include "modelstat/analysis.hpp"

namespace modelstat::loader {

// Refuses an opset newer than this build reads, an unknown domain a node uses
// (unless options.allow_custom_domains), a node of a domain the model does
// not import; notices for what loads with a caveat. Throws Error(Input).
void validate_opsets(const onnx::ModelProto& m, const LoadOptions& options, std::vector<std::string>& notices);

// Applies --input / --dim / default batch to the graph inputs. Clears
// value_info and output shapes so inference recomputes them for the bound
// dims instead of clashing with shapes recorded at export time (except the
// outputs of nodes `has_inference` says nothing can infer).
void bind_inputs(onnx::GraphProto& g, const LoadOptions& options, std::vector<std::string>& notices,
                 const std::function<bool(const onnx::NodeProto&)>& has_inference);

// The registry shape inference asks: ONNX's schemas guarded against
// ill-formed nodes, ONNX 1.12's schemas standing for later opsets, and
// schemas made from op records for ops ONNX 1.12 does not define.
const onnx::ISchemaRegistry* guarded_registry();

// Shape inference and constant folding in one pass (shape_inference.cc).
// Node errors become notices; the first node left unsized and why goes to
// unknown_shape_cause (Model::unknown_shape_cause). With `inferred`, the types
// of top-level values without a value_info entry go there (onnx_ir.hpp), not
// into new value_info entries.
void infer_shapes(onnx::ModelProto& m, const LoadOptions& options, std::vector<std::string>& notices,
                  std::string& unknown_shape_cause, InferredTypes* inferred = nullptr);

// A tensor type whose every dim has a value.
bool fully_known(const onnx::TypeProto& type);

class FoldContext;  // shape_fold.hpp
// When a node output of g has no full shape after inference: one notice
// naming the first node whose inputs are all sized but whose output is not,
// and why (the input it reads as data whose value is unknown, and where the
// chain computing that value stops: an op not folded, a graph input, an
// initializer not read). nullopt when every node output is sized or every
// unknown stems from the graph's own unbound inputs.
std::optional<std::string> first_unknown_notice(
    const onnx::GraphProto& g, const std::function<const onnx::TypeProto*(const std::string&)>& type_of,
    const FoldContext& values);

}  // namespace modelstat::loader
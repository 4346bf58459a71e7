// Private to analyzer/loader: the stages of a load, one file each, in the
// order model_loader.cc runs them:
//   opset_validation.cc  opsets and domains the model imports and uses
//   (ir_builder.cc)      check_and_order_graph: every input defined, nodes in order
//   input_binding.cc     --input / --dim / --default-batch on the graph inputs
//   guarded_schemas.cc   the schema registry ONNX's shape inference asks
//   shape_inference.cc   inference rounds: ONNX's inference, Range sizes, the
//                        selected If branch's shapes, folded shape values
//   value_rewire.cc      shape values folded (shape_values.hpp) fed back to inference
//   (ir_builder.cc)      build_graph: the inferred proto as modelstat's IR
#pragma once

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

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

// Shape inference to a fixed point: ONNX's inference, then rounds of Range
// sizing, selected-branch shapes and shape-value folding until a round
// reveals nothing. Node errors become notices.
void infer_shapes(onnx::ModelProto& m, const LoadOptions& options, std::vector<std::string>& notices);

// One pass of ONNX's shape inference over m (through guarded_registry, data
// propagation on); node errors land in `errors` (at most 5 lines).
void run_inference(onnx::ModelProto& m, std::unordered_map<std::string, onnx::TensorShapeProto>* data,
                   std::vector<std::string>& errors);

// A tensor type whose every dim has a value.
bool fully_known(const onnx::TypeProto& type);

// Evaluates integer shape values (shape_values.hpp), re-runs inference on a
// copy in which still-unsized nodes read them as initializers, and takes the
// shapes it finds into m. Returns whether any shape became known.
bool fold_shape_values(onnx::ModelProto& m, std::vector<std::string>& errors);

}  // namespace modelstat::loader
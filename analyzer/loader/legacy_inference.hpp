// Private to analyzer/loader: shape inference for the old default-domain
// schemas ONNX 1.12 defines without one (most opset-1 forms: Relu-1, Add-1,
// Concat-1, Reshape-1, ...), so that a model importing opset 1 to 5 is
// sized past its first node, and the completion of old schemas whose own
// function stops short. Each follows the semantics of the opset it stands
// for, not of the op's later versions.
#pragma once

#include <onnx/defs/schema.h>

#include <optional>

namespace modelstat::loader {

// The inference function for `schema` when ONNX gives it none and modelstat
// knows its shapes; nullopt otherwise (a schema with its own function, an op
// not listed in legacy_inference.cc).
std::optional<onnx::InferenceFunction> legacy_inference(const onnx::OpSchema& schema);

// What modelstat adds after the inference of an old schema whose function
// leaves outputs open that the schema defines (Slice-1 with negative starts,
// Squeeze before 13 without axes, Tile-1, the mask of Dropout before 10,
// BatchNormalization's running-stat outputs before 14, RNN/GRU/LSTM before
// 7): it fills only what that inference left unknown. nullopt for other
// schemas.
std::optional<onnx::InferenceFunction> legacy_completion(const onnx::OpSchema& schema);

}  // namespace modelstat::loader

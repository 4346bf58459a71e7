// Private loader interface: file -> stripped protobuf -> validated,
// shape-bound, shape-inferred ONNX ModelProto -> modelstat IR.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "modelstat/analysis.hpp"
#include "modelstat/graph.hpp"

namespace modelstat::loader {

// Name of the marker entry the stripper appends to TensorProto.external_data
// when it drops an embedded payload; its value is the payload size in bytes.
extern const char* const kStrippedMarkerKey;
// Entries the stripper adds after it, one per dropped payload field:
// "FIELD:OFFSET:LENGTH" (TensorProto field number; byte offset and length of
// the packed payload in the original buffer), or "unpacked" for legacy
// unpacked repeated fields (not locatable).
extern const char* const kPayloadLocationKey;

struct StripStats {
  int64_t tensors_stripped = 0;
  int64_t bytes_stripped = 0;
};

// Copies a serialized ModelProto, dropping every TensorProto payload
// (raw_data, float_data, int64_data, ...) larger than keep_payload_bytes, in
// initializers, Constant attributes and subgraphs alike. Reads only the
// protobuf framing: a skipped payload's pages are never touched, so a
// memory-mapped 500 MB model costs a few MB. Throws Error(Input) on malformed
// or truncated wire data and on nesting deeper than 64 levels.
std::string strip_tensor_payloads(const uint8_t* data, size_t size, size_t keep_payload_bytes,
                                  StripStats* stats);

// The whole load. `display_path` names the model in messages; `base_dir` is
// where external data is resolved ("" = external data is never opened, only
// its location is validated).
Model load_model_bytes(const uint8_t* data, size_t size, const LoadOptions& options,
                       const std::string& base_dir, const std::string& display_path);
Model load_model_file(const std::string& path, const LoadOptions& options);

}  // namespace modelstat::loader

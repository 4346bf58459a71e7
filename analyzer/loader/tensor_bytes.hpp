// The element bytes a TensorProto carries, whichever of its fields holds
// them: one rule for the loader's embedded constants and verify's test-data
// files. Includes the ONNX protobuf: private to analyzer/ and profiler/.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "modelstat/graph.hpp"

namespace modelstat::loader {

// Raw little-endian element bytes of `p` read as `dtype` into `out`:
// raw_data as stored, or the typed field converted element by element
// (int32_data also carries 8/16-bit types, bool, float16 and bfloat16 as
// their bit patterns; uint64_data carries uint32 and uint64). Returns false,
// `out` empty, when no field holds a value. Checks no sizes: callers compare
// out.size() with the bytes the header claims.
bool tensor_proto_bytes(const onnx::TensorProto& p, DType dtype, std::string& out);

}  // namespace modelstat::loader

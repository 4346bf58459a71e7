// Private loader interface: file -> stripped protobuf -> validated,
// shape-bound, shape-inferred ONNX ModelProto -> modelstat IR.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "modelstat/analysis.hpp"
#include "modelstat/graph.hpp"

namespace modelstat::loader {

// How deep subgraphs (If/Loop/Scan bodies) may nest: deeper is refused as malformed, so that
// no file can exhaust the stack of the recursive walks (stripper, ordering, IR builder).
constexpr int kMaxGraphDepth = 64;

// One tensor whose payload the stripper dropped, described out of band: the
// table travels beside the stripped bytes, so nothing a file contains can
// create an entry or change where one points.
struct PathStep {
  uint32_t field = 0;  // field number in the parent message
  uint32_t index = 0;  // which occurrence of that field (0 for a singular field)
};
struct StrippedTensor {
  // From the ModelProto down to the TensorProto, e.g. graph(7,0) node(1,12)
  // attribute(5,0) t(5,0). Occurrence indices are the repeated fields'
  // indices after parsing (the stripper refuses a duplicated singular
  // message field on such a path: parsing would merge the duplicates).
  std::vector<PathStep> path;
  int64_t payload_bytes = 0;          // what was dropped
  std::vector<PayloadRef> payload;    // packed/bytes payload ranges in the file, in wire order
  bool unpacked = false;              // some payload was unpacked repeated scalars: not locatable
};
struct StrippedModel {
  std::string bytes;                     // the ModelProto without the dropped payloads
  std::vector<StrippedTensor> tensors;   // in wire order
  int64_t bytes_stripped = 0;
};

// Copies a serialized ModelProto, dropping every TensorProto payload
// (raw_data, float_data, int64_data, ...) larger than keep_payload_bytes, in
// initializers, Constant attributes and subgraphs alike. Reads only the
// protobuf framing: a skipped payload's pages are never touched, so a
// memory-mapped 500 MB model costs a few MB. Throws Error(Input) on malformed
// or truncated wire data and on nesting deeper than 64 levels.
StrippedModel strip_tensor_payloads(const uint8_t* data, size_t size, size_t keep_payload_bytes);

// Reading, once per model: the file's bytes with the weight payloads
// stripped (what binding parses), and where the payloads were.
struct ModelSource {
  StrippedModel stripped;
  int64_t file_size = 0;
  std::string base_dir;      // where external data is resolved ("" = never opened, only validated)
  std::string display_path;  // names the model in messages
};
std::shared_ptr<const ModelSource> read_model_bytes(const uint8_t* data, size_t size, const std::string& base_dir,
                                                    const std::string& display_path);
std::shared_ptr<const ModelSource> read_model_file(const std::string& path);
// How many sources this process has read (a batch sweep reads its model once: tests count).
int64_t model_sources_read();
// Binding, once per set of dims: parse, validate, order, bind the inputs,
// infer shapes, build the IR; the source is not read again.
Model bind_model_source(const ModelSource& source, const LoadOptions& options);

// The whole load (read + bind). `display_path` names the model in messages;
// `base_dir` is where external data is resolved ("" = external data is never
// opened, only its location is validated).
Model load_model_bytes(const uint8_t* data, size_t size, const LoadOptions& options,
                       const std::string& base_dir, const std::string& display_path);
Model load_model_file(const std::string& path, const LoadOptions& options);

}  // namespace modelstat::loader

// A protobuf wire-format walker that copies an ONNX ModelProto without the
// large tensor payloads. Why not parse with protobuf and clear the fields?
// Because parsing copies every payload into memory first (a 550 MB VGG-16
// would cost 550 MB of RSS and the time to copy it); walking the framing
// ourselves reads only tags and lengths.
//
// Field numbers are from onnx/onnx.proto (ONNX 1.12); only the messages that
// can contain tensors are descended into, everything else is copied verbatim.
//
// Where each dropped payload lies goes into a table returned beside the
// bytes, keyed by the tensor's position in the message tree; nothing is added
// to the message. (Why not google::protobuf::io::CodedInputStream for the
// framing? Its reads are int-sized: a model over 2 GiB needs offsets it cannot
// give. Every read below compares lengths against what is left, never adds
// them to a position first.)
#include <algorithm>
#include <string>
#include <vector>

#include "analyzer/loader/loader.hpp"
#include "modelstat/error.hpp"

namespace modelstat::loader {

namespace {

enum class Msg { Model, Graph, Node, Attribute, Tensor, SparseTensor, Function, TrainingInfo, Other };

// Which field of message `m` holds which sub-message (length-delimited fields only).
inline Msg child_kind(Msg m, uint32_t field) {
  switch (m) {
    case Msg::Model:  // graph=7, training_info=20, functions=25
      return field == 7 ? Msg::Graph : field == 20 ? Msg::TrainingInfo : field == 25 ? Msg::Function : Msg::Other;
    case Msg::TrainingInfo:  // initialization=1, algorithm=2
      return field == 1 || field == 2 ? Msg::Graph : Msg::Other;
    case Msg::Graph:  // node=1, initializer=5, sparse_initializer=15
      return field == 1 ? Msg::Node : field == 5 ? Msg::Tensor : field == 15 ? Msg::SparseTensor : Msg::Other;
    case Msg::Node:  // attribute=5
      return field == 5 ? Msg::Attribute : Msg::Other;
    case Msg::Attribute:  // t=5, g=6, tensors=10, graphs=11, sparse_tensor=22, sparse_tensors=23
      if (field == 5 || field == 10) return Msg::Tensor;
      if (field == 6 || field == 11) return Msg::Graph;
      if (field == 22 || field == 23) return Msg::SparseTensor;
      return Msg::Other;
    case Msg::Function:  // node=7
      return field == 7 ? Msg::Node : Msg::Other;
    case Msg::SparseTensor:  // values=1, indices=2
      return field == 1 || field == 2 ? Msg::Tensor : Msg::Other;
    default:
      return Msg::Other;
  }
}

// Sub-message fields that are not repeated: protobuf merges duplicates when it
// parses, which would shift the positions the table records below them.
bool is_singular(Msg m, uint32_t field) {
  switch (m) {
    case Msg::Model: return field == 7;
    case Msg::TrainingInfo: return field == 1 || field == 2;
    case Msg::Attribute: return field == 5 || field == 6 || field == 22;
    case Msg::SparseTensor: return field == 1 || field == 2;
    default: return false;
  }
}

// TensorProto payload fields: float_data=4, int32_data=5, string_data=6,
// int64_data=7, raw_data=9, double_data=10, uint64_data=11.
bool is_payload_field(uint32_t field) {
  return field == 4 || field == 5 || field == 6 || field == 7 || field == 9 || field == 10 || field == 11;
}

[[noreturn]] void malformed(const std::string& what, size_t offset) {
  throw Error(ErrorKind::Input, "not a valid ONNX file: " + what + " at byte " + std::to_string(offset));
}

class Walker {
 public:
  Walker(const uint8_t* base, size_t keep, StrippedModel& result) : base_(base), keep_(keep), result_(result) {}

  void copy_message(Msg kind, size_t begin, size_t end, int depth, std::string& out) {
    if (depth > kMaxGraphDepth) malformed("graphs nested more than 64 levels deep", begin);
    if (kind == Msg::Tensor) {
      copy_tensor(begin, end, out);
      return;
    }
    // Occurrences of each sub-message field so far (child_kind knows only
    // fields below 32), and whether one of them had something dropped.
    uint32_t seen[32] = {};
    bool rewritten[32] = {};
    for (size_t pos = begin; pos < end;) {
      const Field f = read_field(pos, end);
      const Msg child = f.wire == 2 ? child_kind(kind, f.number) : Msg::Other;
      // Most sub-messages (plain nodes, small tensors) hold nothing to
      // drop: a scan without allocation decides, then they are copied whole.
      const bool rewrite = child != Msg::Other && needs_rewrite(child, f.data, f.end, depth + 1);
      if (child != Msg::Other) {
        const uint32_t index = seen[f.number]++;
        if (index > 0 && is_singular(kind, f.number) && (rewrite || rewritten[f.number]))
          malformed("field " + std::to_string(f.number) + " of a message that holds it once appears twice", f.start);
        rewritten[f.number] = rewritten[f.number] || rewrite;
        if (rewrite) {
          path_.push_back({f.number, index});
          // Written in place, its length put in front afterwards: the
          // length's varint is known only then, and moving the bytes up by
          // its 1-10 bytes within `out` costs less than a copy of the
          // sub-message in a string of its own (a 100k-node graph: 11 MB
          // allocated, touched and copied once more).
          append_varint(out, f.tag);
          const size_t at = out.size();
          copy_message(child, f.data, f.end, depth + 1, out);
          path_.pop_back();
          std::string length;
          append_varint(length, out.size() - at);
          out.insert(at, length);
          continue;
        }
      }
      out.append(reinterpret_cast<const char*>(base_ + f.start), f.end - f.start);
    }
  }

 private:
  // One field of a message: its tag, where it starts, where a
  // length-delimited field's bytes start (`data`), and where it ends.
  struct Field {
    uint64_t tag = 0;
    uint32_t number = 0, wire = 0;
    size_t start = 0, data = 0, end = 0;
    // Bytes a payload field holds: a packed/bytes field's data, or a whole
    // unpacked scalar.
    uint64_t payload_size() const { return wire == 2 ? end - data : end - start; }
  };

  // Reads (and checks) the field at pos; pos moves past it.
  Field read_field(size_t& pos, size_t end) const {
    Field f;
    f.start = pos;
    f.tag = read_varint(pos, end);
    f.number = uint32_t(f.tag >> 3);
    f.wire = uint32_t(f.tag & 7);
    if (f.number == 0) malformed("field number 0", f.start);
    if (f.wire == 2) {
      const uint64_t len = read_varint(pos, end);
      if (len > end - pos) malformed("truncated: a field runs past the end of its message", f.start);
      f.data = pos;
      pos += len;
    } else {
      skip_scalar(f.wire, pos, end, f.start);
      f.data = pos;
    }
    f.end = pos;
    return f;
  }

  // Sum of a TensorProto's payload field sizes.
  uint64_t tensor_payload(size_t begin, size_t end) const {
    uint64_t payload = 0;
    for (size_t pos = begin; pos < end;) {
      const Field f = read_field(pos, end);
      if (is_payload_field(f.number)) payload += f.payload_size();
    }
    return payload;
  }

  // Whether a message (recursively) holds a tensor payload above the limit.
  bool needs_rewrite(Msg kind, size_t begin, size_t end, int depth) const {
    if (depth > kMaxGraphDepth) malformed("graphs nested more than 64 levels deep", begin);
    if (kind == Msg::Tensor) return tensor_payload(begin, end) > keep_;
    for (size_t pos = begin; pos < end;) {
      const Field f = read_field(pos, end);
      if (f.wire != 2) continue;
      const Msg child = child_kind(kind, f.number);
      if (child != Msg::Other && needs_rewrite(child, f.data, f.end, depth + 1)) return true;
    }
    return false;
  }

  // A tensor is copied whole when its payload is small (shape constants,
  // scales: shape inference needs their values); otherwise without payload,
  // and the table records where the payload lies.
  void copy_tensor(size_t begin, size_t end, std::string& out) {
    const uint64_t payload = tensor_payload(begin, end);
    if (payload <= keep_) {
      out.append(reinterpret_cast<const char*>(base_ + begin), end - begin);
      return;
    }
    StrippedTensor entry;
    entry.path = path_;
    entry.payload_bytes = int64_t(payload);
    for (size_t pos = begin; pos < end;) {
      const Field f = read_field(pos, end);
      if (!is_payload_field(f.number)) {
        out.append(reinterpret_cast<const char*>(base_ + f.start), f.end - f.start);
      } else if (f.wire == 2) {
        // raw_data is a bytes field: the parse keeps its last occurrence.
        // The repeated fields concatenate.
        if (f.number == 9)
          entry.payload.erase(std::remove_if(entry.payload.begin(), entry.payload.end(),
                                             [](const PayloadRef& r) { return r.field == 9; }),
                              entry.payload.end());
        entry.payload.push_back({int32_t(f.number), int64_t(f.data), int64_t(f.end - f.data)});
      } else {
        entry.unpacked = true;
      }
    }
    result_.bytes_stripped += entry.payload_bytes;
    result_.tensors.push_back(std::move(entry));
  }

  uint64_t read_varint(size_t& pos, size_t end) const {
    // Most varints of a graph (tags, the lengths of names and nodes) are one
    // byte: read inline; the loop below reads the others.
    if (pos < end && !(base_[pos] & 0x80)) return base_[pos++];
    return read_long_varint(pos, end);
  }
  uint64_t read_long_varint(size_t& pos, size_t end) const {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= end) malformed("truncated: the file ends inside a field", pos);
      const uint8_t byte = base_[pos++];
      value |= uint64_t(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return value;
    }
    malformed("varint longer than 10 bytes", pos);
  }

  void skip_scalar(uint32_t wire, size_t& pos, size_t end, size_t field_start) const {
    switch (wire) {
      case 0: read_varint(pos, end); return;
      case 1:
        if (end - pos < 8) malformed("truncated: the file ends inside a 64-bit field", field_start);
        pos += 8;
        return;
      case 5:
        if (end - pos < 4) malformed("truncated: the file ends inside a 32-bit field", field_start);
        pos += 4;
        return;
      default: malformed("invalid protobuf wire type " + std::to_string(wire), field_start);
    }
  }

  static void append_varint(std::string& out, uint64_t v) {
    while (v >= 0x80) {
      out.push_back(char(uint8_t(v) | 0x80));
      v >>= 7;
    }
    out.push_back(char(v));
  }

  const uint8_t* base_;
  size_t keep_;
  StrippedModel& result_;
  std::vector<PathStep> path_;  // of the message being copied
};

}  // namespace

StrippedModel strip_tensor_payloads(const uint8_t* data, size_t size, size_t keep_payload_bytes) {
  StrippedModel result;
  Walker walker(data, keep_payload_bytes, result);
  // At most the original's size: reserved (address space, touched only as
  // written) so that a graph of 100k nodes is not copied again at every
  // doubling of the string.
  result.bytes.reserve(size);
  walker.copy_message(Msg::Model, 0, size, 0, result.bytes);
  // A model of weights (vgg16: 553 MB, 2 KB without them) gives back the rest.
  if (result.bytes.capacity() > 2 * result.bytes.size() + 4096) result.bytes.shrink_to_fit();
  return result;
}

}  // namespace modelstat::loader

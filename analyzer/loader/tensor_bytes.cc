// tensor_bytes.hpp: a TensorProto's element bytes from whichever field holds them.
#include "analyzer/loader/tensor_bytes.hpp"

namespace modelstat::loader {

namespace {

template <typename To, typename Field>
void append_elements_as(std::string& out, const Field& values) {
  for (const auto& v : values) {
    const To x = static_cast<To>(v);
    out.append(reinterpret_cast<const char*>(&x), sizeof(To));
  }
}

}  // namespace

bool tensor_proto_bytes(const onnx::TensorProto& p, DType dtype, std::string& out) {
  out.clear();
  if (!p.raw_data().empty()) {
    out = p.raw_data();
  } else if (p.float_data_size()) {
    append_elements_as<float>(out, p.float_data());
  } else if (p.double_data_size()) {
    append_elements_as<double>(out, p.double_data());
  } else if (p.int64_data_size()) {
    append_elements_as<int64_t>(out, p.int64_data());
  } else if (p.uint64_data_size()) {
    if (dtype == DType::UInt32) append_elements_as<uint32_t>(out, p.uint64_data());
    else append_elements_as<uint64_t>(out, p.uint64_data());
  } else if (p.int32_data_size()) {
    switch (dtype_size_bytes(dtype)) {
      case 1: append_elements_as<uint8_t>(out, p.int32_data()); break;
      case 2: append_elements_as<uint16_t>(out, p.int32_data()); break;
      default: append_elements_as<int32_t>(out, p.int32_data()); break;
    }
  } else {
    return false;
  }
  return true;
}

}  // namespace modelstat::loader

// Reading an ONNX backend test case (a folder with model.onnx and
// test_data_set_N/{input,output}_K.pb), for verify.cc: the model's declared
// values, the numbered test-data files of a data set, and each TensorProto
// checked against the bytes it carries before anything of its claimed size
// is allocated. Every error names the file (Error(Input); a string tensor
// Error(CannotRun)).
#pragma once

#include <ATen/ATen.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string>
#include <vector>

#include "profiler/verify.hpp"

namespace modelstat::profiler {

std::string read_file(const std::filesystem::path& path);
// model.onnx parsed (its folder must exist); Error(Input) naming what is wrong.
onnx::ModelProto read_model(const std::filesystem::path& path);
// A test-data file read as the tensor of graph value `v` (`what`: "input 'x'").
at::Tensor read_tensor(const std::filesystem::path& path, const onnx::ValueInfoProto& v, const std::string& what);
// The files prefix_0.pb .. prefix_{n-1}.pb of a data set, one per value, in
// index order: a missing index, an index with no value and a misnamed file
// ("input_01.pb", "input_x.pb") are errors naming the file.
std::vector<std::filesystem::path> numbered(const std::filesystem::path& dir, const std::string& prefix,
                                            const std::vector<const onnx::ValueInfoProto*>& values);
// The test_data_set_* folders, sorted.
std::vector<std::filesystem::path> data_sets(const std::filesystem::path& case_dir);
// ONNX 1.12's test data stores bfloat16 values as uint16 bit patterns (its
// numpy has no bfloat16): reinterpreted when the model declares bfloat16.
at::Tensor as_declared(const at::Tensor& t, const onnx::ValueInfoProto& v);
// What keeps `model` from running (case_unsupported_ops, from a parsed model).
std::vector<std::string> unsupported_in(const onnx::ModelProto& model);

}  // namespace modelstat::profiler

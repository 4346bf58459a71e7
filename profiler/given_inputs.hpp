// Values the user gives for graph inputs in place of random data: `--value
// NAME=V[,V...]` for small inputs (a sample rate, a mode flag, a short int
// vector) and `--inputs DIR`, a test case's input_N.pb TensorProtos (the
// ONNX backend test layout `verify` reads, verify_case_files.hpp). What ran
// is then what the user meant to run: an If reading such an input takes the
// branch its value selects.
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <string>
#include <vector>

#include "modelstat/graph.hpp"
#include "modelstat/profile.hpp"

namespace modelstat::profiler {

struct GivenValues {
  // By position in Graph::inputs: the tensor (on the CPU) fed there.
  std::map<size_t, at::Tensor> tensors;
  std::vector<GivenInput> described;  // RunContext::given_inputs, in graph input order
  bool empty() const { return tensors.empty(); }
};

// The dims of the --inputs files, by graph input name, for the inputs whose
// dims `graph` (the model bound without them) leaves unknown: what binds
// them (LoadOptions::input_shapes). Empty without --inputs. Error(Usage /
// Input) naming the flag or the file.
std::map<std::string, std::vector<int64_t>> given_input_shapes(const Graph& graph, const ProfileOptions& o);

// --value and --inputs read and checked against the bound graph: every name
// a graph input (not an initializer), each value of the input's dtype, as
// many values as it has elements, a file's dtype and dims the input's.
// Error(Usage) naming the flag and the input.
GivenValues read_given_values(const Graph& graph, const ProfileOptions& o);

// The --value specs whose NAME is a graph input of `graph` (a pipeline
// stage's share of them).
std::vector<std::string> values_for(const Graph& graph, const std::vector<std::string>& specs);

// inputs[k] := the given tensor, on the device and in the dtype inputs[k] has.
void feed_given_values(const GivenValues& given, std::vector<at::Tensor>& inputs);

}  // namespace modelstat::profiler

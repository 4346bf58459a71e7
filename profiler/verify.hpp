// Checks the executor against ONNX's own backend test cases
// (onnx/backend/test/data/node/<case>/{model.onnx, test_data_set_N/{input,output}_K.pb}):
// runs each data set on the CPU in the model's own dtypes (as `profile` does
// by default: a float16 node without a CPU kernel in fp32) and compares every
// output with the tolerances ONNX's runner uses, or, for a model that
// computes in float16 / bfloat16, with tolerances of that dtype.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "modelstat/graph.hpp"
#include "modelstat/run_config.hpp"
#include "modelstat/verification.hpp"

namespace onnx {
class ValueInfoProto;
}

namespace modelstat::profiler {

enum class VerifyStatus {
  Pass = 0,       // every output of every data set matches
  Mismatch = 1,   // an output differs (or the executor failed while running)
  CannotRun = 2,  // unsupported op or mode, non-tensor values, unreadable case
};

// One graph output of a case's first data set and the shape the executor
// produced for it (the analyzer's shapes are compared with these in
// tests/profiler/onnx_node_tests_test.cc).
struct OutputShapes {
  std::string name;
  std::vector<int64_t> produced;
};

// The pass criterion of a float output: |actual - expected| <= atol + rtol *
// |expected| elementwise (numpy.testing.assert_allclose); NaN matches NaN.
// Integer and bool outputs: exact.
struct Tolerance {
  double rtol = 1e-3, atol = 1e-7;
  std::string source;  // why these values, printed with the criterion
};

// The default tolerance of a model: ONNX's runner's (rtol 1e-3, atol 1e-7,
// onnx/backend/test/runner), unless the model holds float16 or bfloat16
// tensors (any graph, initializers and values alike): its outputs then carry
// the roundings of that dtype through every layer, so rtol = atol = 10 x the
// coarsest such dtype's machine epsilon (float16 2^-10: 0.0098; bfloat16
// 2^-7: 0.078). bench/RESULTS.md, "Float16 models on the CPU", measures why.
Tolerance default_tolerance(const Model& model);

// Which criterion judges the outputs (include/modelstat/verification.hpp):
// auto takes the elementwise one for a single-op case and adds the
// rounding-sensitivity judgement for a whole model.
enum class VerifyCriterion { Auto, Elementwise, Model };

struct VerifyOptions {
  // Given tolerances (--rtol / --atol); each one left unset takes
  // default_tolerance()'s value.
  std::optional<double> rtol, atol;
  // When set, filled with every graph output's OutputShapes once the first
  // data set has run (left empty when the case cannot run).
  std::vector<OutputShapes>* shapes = nullptr;
  // As `modelstat --allow-custom-domains`: a domain nothing can count loads,
  // its nodes unknown (the case then runs only if the executor has them).
  bool allow_custom_domains = false;
  // As profile's --no-fuse when false: every node as written, no QDQ fusion.
  bool fuse = true;
  // As profile's --gemm.
  GemmBackend gemm = GemmBackend::Auto;
  VerifyCriterion criterion = VerifyCriterion::Auto;
};

// What keeps the case's model from running: ops of nodes (those of If, Loop
// and Scan subgraphs included) without an executor ("op_type",
// domain-qualified outside the default domain), and graph (and subgraph)
// inputs/outputs that are not numeric tensors ("non-tensor value 'x'"
// for sequences/optionals/maps, "string value 'x'"). Empty when it can run:
// the node-test sweep calls such a case "claimed". Throws modelstat::Error(Input) when model.onnx cannot be read.
std::vector<std::string> case_unsupported_ops(const std::string& case_dir);

// The bytes of a test-data file (`file` names it in errors) read as the
// tensor of graph value `v` (`what`: "input 'x'"): the header is checked
// against the bytes it carries before anything of the claimed size is
// allocated (a known numeric dtype, dims >= 0 whose product fits in 64 bits,
// exactly that many values present), then dtype and dims against what `v`
// declares. Throws Error(Input), or Error(CannotRun) for a string tensor.
at::Tensor read_case_tensor(const std::string& bytes, const std::string& file, const onnx::ValueInfoProto& v,
                            const std::string& what);

// Runs one case on the CPU in the model's own dtypes and judges every output
// of every data set (include/modelstat/verification.hpp has the criterion):
// the record, never an exception (a case that cannot run says why in it).
VerifyRecord verify_case(const std::string& case_dir, const VerifyOptions& options = {});

}  // namespace modelstat::profiler

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
#include <ostream>
#include <string>
#include <vector>

#include "modelstat/graph.hpp"

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
  // As profile's --gemm: "auto", "onednn" or "blas".
  std::string gemm = "auto";
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

// Runs one case; writes to `report` a line stating the pass criterion (and
// where its tolerances come from), a notice naming the ops that ran upcast
// to fp32 for want of a float16/bfloat16 CPU kernel (if any), then
// one line per output of each data set ("pass" or "MISMATCH", the number of
// elements outside the tolerance, max abs diff, max rel diff
// |a - e| / |e| over elements with |e| > atol, norm rel err ||a - e||_2 / ||e||_2; only the
// elementwise count decides), then "PASS" / "FAIL"; or why it cannot run.
// A model that requantises activations (QuantizeLinear, DynamicQuantizeLinear,
// QLinear*) gets one more judgement when outputs differ: per differing output,
// the share of its differing elements exactly one quantisation step off (1 for
// an 8-bit output, the scale of the DequantizeLinear that makes a float
// output), and how far the output moves when the inputs move by one ulp (a
// second run). When every differing output is all one-step differences or no
// further from the reference than one-ulp inputs move it, the differences are
// what requantisation does to any two implementations that round differently
// anywhere, and the case passes as "PASS (quantised model)", in those words.
// Returns the status as int (0, 1, 2; see VerifyStatus).
int verify_case(const std::string& case_dir, std::ostream& report, const VerifyOptions& options = {});

}  // namespace modelstat::profiler

// What `modelstat verify` found for one ONNX test case (a folder with
// model.onnx and test_data_set_N/{input,output}_K.pb): plain data, built by
// profiler/verify.cc, formatted by tools/writers/verify_writers.cc.
//
// The criterion has two levels (docs/verify.md):
//   - elementwise, ONNX's backend runner's: |actual - expected| <= atol +
//     rtol * |expected| per element (NaN matches NaN; integer and bool
//     outputs exact). A single-op case is judged by it alone.
//   - a whole model (more than one op) whose outputs fail it is judged
//     against its own rounding sensitivity: the executor reruns the model
//     with its inputs one ulp apart, on other kernels (as written on ATen
//     and BLAS, its transcendental functions' outputs one ulp of max(|y|, 1)
//     apart as another runtime's approximations; fused on oneDNN: other
//     summation orders), and, for a quantised model, with the values
//     its requantisers round a few ulps apart. An output whose distance from
//     the reference (norm-wise relative error) is within kSensitivityFactor
//     times the largest distance those reruns move it differs as two correct
//     implementations do; one beyond it is an error. Integer and bool
//     elements that differ are decision flips (a comparison or an argmax
//     turned over): explained when a rerun flips them too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace modelstat {

// How far beyond its own rounding sensitivity a whole model's output may be
// from the reference and still pass: another runtime's kernels (Winograd
// convolutions, vectorised exp/erf approximations) round more than
// modelstat's two summation orders do, but a wrong kernel (a GELU's tanh
// form for its erf form, a softmax temperature off by 0.1%) is orders of
// magnitude further (bench/RESULTS.md, "verify").
inline constexpr double kSensitivityFactor = 10.0;

struct OutputCheck {
  std::string data_set;  // "test_data_set_0"
  int index = 0;
  std::string name;
  // Why it could not be compared (shape or dtype differs); empty when compared.
  std::string problem;
  bool exact = false;    // an integer / bool output, compared exactly
  std::string dtype;     // the expected tensor's (exact outputs)
  int64_t elements = 0;
  int64_t outside = 0;   // elements outside the elementwise criterion (all of them on a problem)
  double max_abs_diff = 0;
  std::optional<double> max_rel_diff;  // over |expected| > atol; nullopt when there is none
  double norm_rel_err = 0;             // ||actual - expected||_2 / ||expected||_2

  // The whole-model judgement, made for an output with elements outside.
  bool judged = false;
  // The largest norm-wise relative distance the reruns move this output from
  // the executor's own result (its rounding sensitivity).
  std::optional<double> sensitivity;
  // Quantised model: the output's quantisation step, and how many of its
  // differing elements are exactly one step off.
  std::optional<double> quant_step;
  int64_t one_step_off = 0;
  // Exact outputs: decision flips (elements that differ), and how many of
  // them a rerun flips too.
  int64_t decision_flips = 0, flips_reproduced = 0;
  bool explained = false;  // within the criterion's second level
  std::string why;         // one line: what explained it, or what did not
};

struct VerifyRecord {
  std::string case_dir;
  // "elementwise" (a single op: ONNX's criterion alone) or "model" (the
  // rounding-sensitivity judgement after it).
  std::string mode;
  double rtol = 0, atol = 0;
  std::string tolerance_source;  // why these values
  std::vector<std::string> notices;
  // What the sensitivity reruns were (empty when no output needed them).
  std::vector<std::string> reruns;
  bool quantised = false;        // the model requantises activations
  int64_t requantisers = 0;
  std::vector<OutputCheck> outputs;
  int64_t outside = 0;    // elements outside the elementwise criterion, every output
  int64_t explained = 0;  // of which in outputs the second level explains
  // "pass", "pass (quantised model)", "pass (rounding sensitivity)", "fail", "cannot run".
  std::string verdict;
  // Why it cannot run or failed to run (one line: file, node, op where known).
  std::string error;
  std::vector<std::string> unsupported;  // ops / values without an executor
  int exit_code = 0;                     // 0 pass, 1 fail, 2 cannot run
};

}  // namespace modelstat

// ONNX's own backend node tests (Debian's libonnx-testdata) as the executor's
// reference: every case whose ops all have executors ("claimed") must match
// ONNX's expected outputs (rtol 1e-3, atol 1e-7), unless it is a documented
// known failure below (mirrored in docs/node-tests.md). And a differential
// test of ONNX shape semantics: on the same cases, the output shapes the
// analyzer infers (the loaded model, as `modelstat` reports it) equal the
// shapes the executor produces, but for the expected differences listed in
// docs/node-tests.md.
// ONNX_NAMESPACE and ONNX_ML come with the onnx_proto target this binary links.
#include <onnx/onnx_pb.h>

#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "modelstat/analysis.hpp"
#include "modelstat/error.hpp"
#include "profiler/ops/exec_rule.hpp"
#include "profiler/verify.hpp"
#include "tests/profiler/verify_summary.hpp"

namespace modelstat::profiler {
namespace {

namespace fs = std::filesystem;

// Claimed cases that do not pass, each with the reason. Keep in sync with
// docs/node-tests.md. A listed case that starts passing fails the test too
// (so the list never goes stale).
const std::map<std::string, std::string>& known_failures() {
  static const char* const kLikeShape =
      "test data feeds input 'like' as shape [1] where the model declares 3x4: the loader rejects the binding";
  static const char* const kRandom = "training-mode Dropout draws a random mask; the expected output is numpy's draw";
  static const std::map<std::string, std::string> cases = {
      {"test_cast_FLOAT_to_BFLOAT16",
       "ONNX 1.12's expected bfloat16 values are truncated float32 bits; ATen rounds to nearest even (last-bit "
       "differences, up to 2^-8 relative)"},
      {"test_castlike_BFLOAT16_to_FLOAT", kLikeShape},
      {"test_castlike_BFLOAT16_to_FLOAT_expanded", kLikeShape},
      {"test_castlike_FLOAT_to_BFLOAT16", kLikeShape},
      {"test_castlike_FLOAT_to_BFLOAT16_expanded", kLikeShape},
      {"test_training_dropout", kRandom},
      {"test_training_dropout_default", kRandom},
      {"test_training_dropout_default_mask", kRandom},
      {"test_training_dropout_mask", kRandom},
  };
  return cases;
}

struct Sweep {
  int found = 0, claimed = 0, passed = 0, known = 0;
  std::vector<std::string> failures;       // claimed, failing, not known
  std::vector<std::string> known_passing;  // listed as known failures but passing
};

// Every case folder of the node tests, sorted; fails the calling test when
// the data is not installed.
std::vector<fs::path> node_test_cases() {
  const fs::path root(MODELSTAT_ONNX_NODE_TESTS);
  EXPECT_TRUE(fs::is_directory(root)) << root << " not found (install Debian's libonnx-testdata)";
  std::vector<fs::path> cases;
  if (!fs::is_directory(root)) return cases;
  for (const auto& e : fs::directory_iterator(root))
    if (e.is_directory() && fs::exists(e.path() / "model.onnx")) cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  return cases;
}

// True when every top-level node of the case has an executor (and its values
// are numeric tensors): the case is "claimed".
bool claimed(const fs::path& dir) {
  try {
    return case_unsupported_ops(dir.string()).empty();
  } catch (const Error&) {
    return false;  // unreadable model: not claimed
  }
}

TEST(OnnxNodeTests, ClaimedCasesMatchOnnxReference) {
  const fs::path root(MODELSTAT_ONNX_NODE_TESTS);
  at::set_num_threads(1);
  const std::vector<fs::path> cases = node_test_cases();
  ASSERT_FALSE(cases.empty());

  const auto start = std::chrono::steady_clock::now();
  Sweep s;
  for (const auto& dir : cases) {
    ++s.found;
    const std::string name = dir.filename().string();
    if (!claimed(dir)) continue;
    ++s.claimed;
    // ONNX's runner's tolerances and criterion for every case, float16 and
    // bfloat16 ones included (verify's default for those is 10 x their
    // epsilon): one op rounds once.
    VerifyOptions onnx_runner;
    onnx_runner.rtol = 1e-3;
    onnx_runner.atol = 1e-7;
    onnx_runner.criterion = VerifyCriterion::Elementwise;
    const VerifyRecord record = verify_case(dir.string(), onnx_runner);
    const int status = record.exit_code;
    const bool known = known_failures().count(name) > 0;
    // MODELSTAT_NODE_TESTS_VERBOSE=1 lists every claimed case with its status.
    if (std::getenv("MODELSTAT_NODE_TESTS_VERBOSE")) std::cout << name << " " << status << "\n";
    if (status == 0) {
      ++s.passed;
      if (known) s.known_passing.push_back(name);
    } else if (known) {
      ++s.known;
    } else {
      s.failures.push_back(name + " (status " + std::to_string(status) + "): " + summary(record));
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::cout << "| ONNX node tests (" << root.string() << ") | count |\n|---|---|\n"
            << "| ops with an executor | " << [] {
                 std::set<std::string> ops;
                 for (const auto& r : all_executors()) ops.insert(r.key.op_type);
                 return ops.size();
               }() << " |\n"
            << "| cases found | " << s.found << " |\n"
            << "| cases claimed (every node has an executor) | " << s.claimed << " |\n"
            << "| cases run | " << s.claimed << " |\n"
            << "| passed | " << s.passed << " |\n"
            << "| known failures | " << s.known << " |\n"
            << "| unexpected failures | " << s.failures.size() << " |\n"
            << "sweep took " << std::fixed << std::setprecision(1) << seconds << " s\n";
  for (const auto& f : s.failures) ADD_FAILURE() << "claimed case fails: " << f;
  for (const auto& k : s.known_passing)
    ADD_FAILURE() << k << " is listed as a known failure but passes: remove it from the list and docs/node-tests.md";
}

// ------------------------------------------------------ shape differential

// "2x?x3": a dim the analyzer left unknown is '?', an unknown rank "?" alone,
// a scalar "scalar".
std::string shape_text(const Shape& s) {
  if (!s.rank_known) return "?";
  if (s.dims.empty()) return "scalar";
  std::string text;
  for (const Dim& d : s.dims) text += (text.empty() ? "" : "x") + (d.known() ? std::to_string(d.value) : "?");
  return text;
}

std::string shape_text(const std::vector<int64_t>& dims) {
  if (dims.empty()) return "scalar";
  std::string text;
  for (int64_t d : dims) text += (text.empty() ? "" : "x") + std::to_string(d);
  return text;
}

// The expected differences: the table under "## Expected shape differences"
// in docs/node-tests.md, case -> the difference as the test words it.
std::map<std::string, std::string> expected_shape_differences() {
  const std::string path = std::string(MODELSTAT_SOURCE_DIR) + "/docs/node-tests.md";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::map<std::string, std::string> expected;
  bool in_section = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## Expected shape differences";
    if (!in_section || line.rfind("| test_", 0) != 0) continue;
    // | case | difference | reason |
    const size_t a = line.find(" | ", 2), b = line.find(" | ", a + 3);
    if (a == std::string::npos || b == std::string::npos) {
      ADD_FAILURE() << "malformed row in " << path << ": " << line;
      continue;
    }
    expected[line.substr(2, a - 2)] = line.substr(a + 3, b - a - 3);
  }
  return expected;
}

template <typename Proto>
bool parse_file(const fs::path& path, Proto& proto) {
  std::ifstream in(path, std::ios::binary);
  return in.good() && proto.ParseFromIstream(&in);
}

// The graph outputs' shapes as the analyzer infers them when the case's small
// inputs (16 elements or fewer: the shapes, axes, pads, scales, sizes and
// counts that ops read as values) are initializers holding the first data
// set's values, as an exported model carries them; the other inputs are bound
// to that data set's shapes. Without this, every value-dependent shape (Reshape,
// Slice, Pad, Expand, Tile, Resize...) would be unknown to the analyzer by
// construction, and its shape rules never compared. Throws on a model the
// analyzer rejects.
std::vector<Shape> inferred_with_small_inputs_constant(const fs::path& dir) {
  onnx::ModelProto model;
  if (!parse_file(dir / "model.onnx", model)) throw std::runtime_error("cannot read model.onnx");
  std::set<std::string> initializers;
  for (const auto& init : model.graph().initializer()) initializers.insert(init.name());
  LoadOptions load;
  std::vector<onnx::ValueInfoProto> kept;
  int k = 0;
  for (const auto& v : model.graph().input()) {
    if (initializers.count(v.name())) {
      kept.push_back(v);
      continue;
    }
    onnx::TensorProto t;
    if (!parse_file(dir / "test_data_set_0" / ("input_" + std::to_string(k++) + ".pb"), t))
      throw std::runtime_error("cannot read the input of '" + v.name() + "'");
    int64_t count = 1;
    for (int64_t d : t.dims()) count *= d;
    if (count <= 16 && t.data_type() == v.type().tensor_type().elem_type()) {
      t.set_name(v.name());
      *model.mutable_graph()->add_initializer() = t;
      if (model.ir_version() < 4) kept.push_back(v);  // before IR 4 every initializer is also a graph input
    } else {
      kept.push_back(v);
      load.input_shapes[v.name()] = std::vector<int64_t>(t.dims().begin(), t.dims().end());
    }
  }
  model.mutable_graph()->clear_input();
  for (const auto& v : kept) *model.mutable_graph()->add_input() = v;
  const fs::path file = fs::path(testing::TempDir()) / ("node_test_constant." + std::to_string(getpid()) + ".onnx");
  {
    std::ofstream out(file, std::ios::binary);
    model.SerializeToOstream(&out);
  }
  const Model loaded = load_model(file.string(), load);
  fs::remove(file);
  std::vector<Shape> shapes;
  for (int id : loaded.graph.outputs) shapes.push_back(loaded.graph.tensors[size_t(id)].shape);
  return shapes;
}

TEST(OnnxNodeTests, AnalyzerShapesMatchExecutorShapes) {
  at::set_num_threads(1);
  const std::vector<fs::path> cases = node_test_cases();
  ASSERT_FALSE(cases.empty());
  const std::map<std::string, std::string> expected = expected_shape_differences();
  std::set<std::string> seen;
  int compared = 0, agreeing = 0;
  for (const auto& dir : cases) {
    if (!claimed(dir)) continue;
    const std::string name = dir.filename().string();
    std::vector<OutputShapes> shapes;
    VerifyOptions options;
    options.shapes = &shapes;
    verify_case(dir.string(), options);
    if (shapes.empty()) continue;  // did not run: ClaimedCasesMatchOnnxReference says why
    ++compared;
    // Every output whose inferred shape is not exactly what ran.
    std::string difference;
    try {
      const std::vector<Shape> inferred = inferred_with_small_inputs_constant(dir);
      for (size_t o = 0; o < shapes.size(); ++o) {
        const std::string analyzer = o < inferred.size() ? shape_text(inferred[o]) : "none",
                          executor = shape_text(shapes[o].produced);
        if (analyzer != executor)
          difference += (difference.empty() ? "" : "; ") +
                        ("'" + shapes[o].name + "' analyzer " + analyzer + ", executor " + executor);
      }
    } catch (const std::exception& e) {
      difference = std::string("analyzer error: ") + e.what();
    }
    const auto listed = expected.find(name);
    if (listed != expected.end()) seen.insert(name);
    if (difference.empty()) {
      ++agreeing;
      if (listed != expected.end())
        ADD_FAILURE() << name << " is listed in docs/node-tests.md as an expected shape difference but agrees now: "
                      << "remove it from the list";
    } else if (listed == expected.end()) {
      ADD_FAILURE() << name << ": " << difference << " (not an expected difference in docs/node-tests.md)";
    } else if (listed->second != difference) {
      ADD_FAILURE() << name << " differs otherwise than docs/node-tests.md says:\n  listed:   " << listed->second
                    << "\n  observed: " << difference;
    }
  }
  for (const auto& [name, difference] : expected)
    if (!seen.count(name)) ADD_FAILURE() << name << " is listed in docs/node-tests.md but is not a case that ran";
  std::cout << compared << " claimed cases compared, " << agreeing << " agree, " << compared - agreeing
            << " expected differences\n";
  EXPECT_GT(compared, 0);
}

}  // namespace
}  // namespace modelstat::profiler

// End-to-end: the modelstat binary on every case of the bad-input corpus
// (tests/data/bad/MANIFEST.tsv, written by tools/gen_bad_inputs.py) must
// exit with the expected code and a one-line error naming the problem: never
// a crash, a hang or a stack trace.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;

struct RunResult {
  int exit_code = -1;
  std::string output;  // standard output, then standard error
};

RunResult run_modelstat(const std::string& args) {
  const modelstat::test::CliResult r = modelstat::test::run_modelstat_cli(args, {}, /*timeout_seconds=*/60);
  return {r.exit_code, r.out + r.err};
}

std::string lower(std::string s) {
  for (auto& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

struct BadCase {
  std::string file;
  int expected_exit = 2;
  std::string keyword;
};

std::vector<BadCase> load_manifest() {
  std::vector<BadCase> cases;
  std::ifstream in(std::string(MODELSTAT_SOURCE_DIR) + "/tests/data/bad/MANIFEST.tsv");
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      if (line.rfind("file", 0) == 0) continue;
    }
    std::istringstream fields(line);
    BadCase c;
    std::string code;
    std::getline(fields, c.file, '\t');
    std::getline(fields, code, '\t');
    std::getline(fields, c.keyword, '\t');
    if (!code.empty()) c.expected_exit = std::stoi(code);
    cases.push_back(c);
  }
  return cases;
}

void expect_clean_error(const RunResult& r, int expected_exit, const std::string& keyword, const std::string& what) {
  EXPECT_EQ(r.exit_code, expected_exit) << what << "\n" << r.output;
  EXPECT_NE(lower(r.output).find(lower(keyword)), std::string::npos)
      << what << ": message lacks '" << keyword << "'\n"
      << r.output;
  // One line: "modelstat: error: ...\n".
  EXPECT_EQ(r.output.rfind("modelstat: error: ", 0), 0u) << what << "\n" << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << what << "\n" << r.output;
}

TEST(CliBadInput, ManifestIsPresentAndNonTrivial) {
  const auto cases = load_manifest();
  EXPECT_GE(cases.size(), 10u) << "tests/data/bad/MANIFEST.tsv missing or short: run tools/gen_bad_inputs.py";
}

TEST(CliBadInput, EveryCorpusCaseFailsCleanly) {
  for (const auto& c : load_manifest()) {
    const std::string path = std::string(MODELSTAT_SOURCE_DIR) + "/tests/data/bad/" + c.file;
    SCOPED_TRACE(c.file);
    expect_clean_error(run_modelstat("'" + path + "'"), c.expected_exit, c.keyword, c.file);
  }
}

// Inputs that once crashed (found by tools/fuzz.sh): each must now end in an
// orderly way, analysed (0) or refused (2), never by a signal.
TEST(CliBadInput, FuzzRegressionsEndCleanly) {
  const fs::path dir = fs::path(MODELSTAT_SOURCE_DIR) / "tests/data/fuzz_regressions";
  int seen = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    ++seen;
    const RunResult r = run_modelstat("'" + entry.path().string() + "' -f json -o /dev/null");
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 2) << entry.path() << " exit " << r.exit_code << "\n" << r.output;
  }
  EXPECT_GT(seen, 0);
}

TEST(CliBadInput, MissingPath) {
  expect_clean_error(run_modelstat("/nonexistent/model.onnx"), 2, "no such file", "missing path");
}

TEST(CliBadInput, Directory) {
  const fs::path dir = fs::temp_directory_path() / "modelstat_dir_case.onnx";
  fs::create_directories(dir);
  expect_clean_error(run_modelstat(dir.string()), 2, "directory", "directory");
  fs::remove(dir);
}

TEST(CliBadInput, BadFlagsAreUsageErrors) {
  const std::string model = std::string(MODELSTAT_SOURCE_DIR) + "/sample_models/tiny_cnn.onnx";
  RunResult r = run_modelstat(model + " --input nosuchinput:1x3x32x32");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("names no graph input"), std::string::npos) << r.output;
  r = run_modelstat(model + " --input input:1x-3");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run_modelstat(model + " --dim batch=99999999999999999999");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run_modelstat(model + " --format xml");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

TEST(CliBadInput, ShapeMismatchBetweenBindingAndModel) {
  const std::string model = std::string(MODELSTAT_SOURCE_DIR) + "/sample_models/tiny_cnn.onnx";
  // tiny_cnn has a fixed 1x3x32x32 input: rank and fixed dims are checked.
  RunResult r = run_modelstat(model + " --input input:1x3x32");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("shape mismatch"), std::string::npos) << r.output;
}

}  // namespace

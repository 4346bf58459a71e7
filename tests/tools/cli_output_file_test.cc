// End-to-end: -o FILE is written atomically (tools/cli_common.cc write_output ->
// write_file_atomically). A failed write exits 1 naming the path, the older
// good file survives, and no temporary is left in the folder.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "scratch_folder.hpp"
#include "test_support.hpp"

namespace modelstat::test {
namespace {

using CliOutputFile = ScratchFolder;

std::string model() { return std::string(MODELSTAT_SOURCE_DIR) + "/sample_models/tiny_bert.onnx"; }

void expect_write_failure(const CliResult& r, const std::string& p) {
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("modelstat: error: cannot write '" + p + "': ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST_F(CliOutputFile, ReplacesAnOlderReportAndLeavesNoTemporary) {
  const std::string p = path("analysis.json");
  std::ofstream(p) << "older report";
  const CliResult r = run_modelstat_cli(model() + " -f json -o " + p);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read(p).rfind("{", 0), 0u);
  EXPECT_EQ(entries(), 1u);
}

TEST_F(CliOutputFile, AMissingFolderIsExitOneNamingThePath) {
  const std::string p = path("missing/analysis.json");
  const CliResult r = run_modelstat_cli(model() + " -f json -o " + p);
  expect_write_failure(r, p);
  EXPECT_TRUE(contains(r.err, "No such file or directory")) << r.err;
  EXPECT_EQ(entries(), 0u);
}

TEST_F(CliOutputFile, AFolderNobodyMayWriteIsExitOneNamingThePath) {
  expect_write_failure(run_modelstat_cli(model() + " -o /sys/modelstat_analysis.txt"), "/sys/modelstat_analysis.txt");
}

TEST_F(CliOutputFile, AWriteTheKernelRefusesKeepsTheOlderReport) {
  // ulimit -f: writes past 1 KiB fail with EFBIG (SIGXFSZ ignored), as a full
  // disk's would with ENOSPC. The JSON analysis of tiny_bert is far larger.
  const std::string p = path("analysis.json");
  std::ofstream(p) << "older good report";
  const std::string err = path("stderr.txt");
  const std::string cmd = "bash -c \"trap '' XFSZ; ulimit -f 1; exec " + std::string(MODELSTAT_BINARY) + " " +
                          model() + " -f json -o " + p + "\" 2>" + err;
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << status;
  CliResult r;
  r.exit_code = WEXITSTATUS(status);
  r.err = read(err);
  std::filesystem::remove(err);
  expect_write_failure(r, p);
  EXPECT_TRUE(contains(r.err, "File too large (the file there before is unchanged)")) << r.err;
  EXPECT_EQ(read(p), "older good report");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(CliOutputFile, CompareAndFitWriteThroughTheSameWriter) {
  // The other commands' -o: the same failure, the same message.
  const std::string ceilings = path("ceilings.json");
  std::ofstream(ceilings) << R"({"schema_version": "1.3", "device_kind": "cpu", "source": "measured",
    "memory_bandwidth_bytes_per_second": 1e10, "matmul": [{"dtype": "fp32", "flops_per_second": 1e11}]})";
  const std::string p = path("missing/fit.txt");
  expect_write_failure(run_modelstat_cli("fit " + model() + " --ceilings " + ceilings + " -o " + p), p);
  const std::string profile = path("profile.json");
  std::ofstream(profile) << R"({"schema_version": "1.2.0", "kind": "profile", "context": {},
    "whole": {"samples_s": [0.001, 0.002, 0.001]}, "layers": []})";
  const std::string q = path("missing/compare.md");
  expect_write_failure(run_modelstat_cli("compare " + profile + " " + profile + " -f md -o " + q), q);
}

}  // namespace
}  // namespace modelstat::test

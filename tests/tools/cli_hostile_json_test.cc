// End-to-end: every reader of a saved JSON record, through the modelstat
// binary, on every hostile variant of tests/tools/hostile_json_cases.hpp
// (truncated, wrong or missing schema version, wrong types, NaN / Infinity /
// 1e999, negative or absurd counts, sizes and times, an array beyond the limit,
// 100000 nested '[', empty, blank, binary, a folder, an unreadable path): exit 2
// and one line naming the file and the field. `report --ceilings` runs the same
// table in tests/profiler/cli_report_hostile_test.cc.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "test_support.hpp"
#include "tools/hostile_json_cases.hpp"

namespace modelstat::test {
namespace {

namespace fs = std::filesystem;

std::string model() { return std::string(MODELSTAT_SOURCE_DIR) + "/sample_models/tiny_cnn.onnx"; }

// Exit 2, nothing on standard output, one line "modelstat: error: FILE: ..." holding `says`.
void expect_refused(const CliResult& r, const std::string& file, const std::string& says, const std::string& what) {
  EXPECT_EQ(r.exit_code, 2) << what << "\n" << r.err;
  EXPECT_EQ(r.err.rfind("modelstat: error: " + file + ": ", 0), 0u) << what << ": the file is not named first\n"
                                                                     << r.err;
  EXPECT_TRUE(contains(r.err, says)) << what << ": message lacks '" << says << "'\n" << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << what << ": not one line\n" << r.err;
  EXPECT_TRUE(r.out.empty()) << what << ": printed a report\n" << r.out;
}

// Each variant of `cases` written to a file, then `command_with(path)` run on it.
template <typename Command>
void run_table(const std::string& kind, const std::vector<HostileJson>& cases, Command command_with) {
  const fs::path dir = hostile_scratch(kind);
  const std::vector<std::string> paths = write_hostile(dir, kind, cases);
  for (size_t i = 0; i < cases.size(); ++i)
    expect_refused(run_modelstat_cli(command_with(paths[i])), paths[i], cases[i].says, kind + " " + cases[i].name);
  for (const HostilePath& p : hostile_paths(dir))
    expect_refused(run_modelstat_cli(command_with(p.path)), p.path, p.says, kind + " " + p.name);
  fs::remove_all(dir);
}

TEST(CliHostileJson, TheValidDocumentsOfTheTableAreAccepted) {
  // Each variant changes one thing in these: they must be good as they are.
  const std::vector<std::string> paths =
      write_hostile(hostile_scratch("valid"), "valid",
                    {{"ceilings", valid_ceilings_text(), ""},
                     {"profile", valid_profile_text(), ""},
                     {"report", valid_report_text(), ""}});
  CliResult r = run_modelstat_cli("fit " + model() + " --ceilings " + paths[0]);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run_modelstat_cli("compare " + paths[1] + " " + paths[2]);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "PASS")) << r.out;
  fs::remove_all(hostile_scratch("valid"));
}

TEST(CliHostileJson, FitRefusesEachHostileCeilingsFileByFileAndField) {
  run_table("ceilings", hostile_ceilings(),
            [](const std::string& path) { return "fit " + model() + " --ceilings " + path; });
}

TEST(CliHostileJson, CompareRefusesEachHostileProfileByFileAndField) {
  const std::string base = write_hostile(hostile_scratch("base_p"), "base", {{"profile", valid_profile_text(), ""}})[0];
  // The hostile file as the new run and, for the first few, as the baseline.
  run_table("profile", hostile_profiles(), [&](const std::string& path) { return "compare " + base + " " + path; });
  run_table("profile_as_base", file_level_cases(valid_profile_text()),
            [&](const std::string& path) { return "compare " + path + " " + base; });
  fs::remove_all(hostile_scratch("base_p"));
}

TEST(CliHostileJson, CompareRefusesEachHostileReportByFileAndField) {
  const std::string base = write_hostile(hostile_scratch("base_r"), "base", {{"report", valid_report_text(), ""}})[0];
  run_table("report", hostile_reports(), [&](const std::string& path) { return "compare " + base + " " + path; });
  fs::remove_all(hostile_scratch("base_r"));
}

TEST(CliHostileJson, AMissingCeilingsFileIsNamed) {
  const std::string path = (hostile_scratch("missing") / "absent.json").string();
  const CliResult r = run_modelstat_cli("fit " + model() + " --ceilings " + path);
  expect_refused(r, path, "cannot read ceilings file: no such file", "missing ceilings");
}

}  // namespace
}  // namespace modelstat::test

// End-to-end: `modelstat report --ceilings FILE` on every hostile ceilings file
// of tests/tools/hostile_json_cases.hpp exits 2 with one line naming the file
// and the field, before anything is measured; a report file that cannot be
// written (--html, -o) exits 1 naming the path.
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

const char* const kQuick = " --threads 1 --warmup 1 --warmup-time 0 --iters 3 --min-time 0 --max-time 0.3";

void expect_one_line(const CliResult& r, int exit_code, const std::string& starts, const std::string& says,
                     const std::string& what) {
  EXPECT_EQ(r.exit_code, exit_code) << what << "\n" << r.err;
  EXPECT_EQ(r.err.rfind(starts, 0), 0u) << what << "\n" << r.err;
  EXPECT_TRUE(contains(r.err, says)) << what << ": message lacks '" << says << "'\n" << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << what << "\n" << r.err;
}

TEST(CliReportHostile, RefusesEachHostileCeilingsFileByFileAndField) {
  const fs::path dir = hostile_scratch("report_ceilings");
  const std::vector<HostileJson> cases = hostile_ceilings();
  const std::vector<std::string> paths = write_hostile(dir, "ceilings", cases);
  for (size_t i = 0; i < cases.size(); ++i) {
    const CliResult r = run_modelstat_cli("report " + model() + kQuick + " --ceilings " + paths[i]);
    expect_one_line(r, 2, "modelstat: error: " + paths[i] + ": ", cases[i].says, cases[i].name);
    EXPECT_TRUE(r.out.empty()) << cases[i].name << ": nothing may be reported";
  }
  for (const HostilePath& p : hostile_paths(dir)) {
    const CliResult r = run_modelstat_cli("report " + model() + kQuick + " --ceilings " + p.path);
    expect_one_line(r, 2, "modelstat: error: " + p.path + ": ", p.says, p.name);
  }
  fs::remove_all(dir);
}

TEST(CliReportHostile, AReportFileThatCannotBeWrittenIsExitOneNamingThePath) {
  const fs::path dir = hostile_scratch("report_outputs");
  fs::create_directories(dir);
  const std::string ceilings = write_hostile(dir, "good", {{"ceilings", valid_ceilings_text(), ""}})[0];
  for (const char* option : {" --html ", " --trace ", " -o "}) {
    const std::string target = (dir / "missing" / "report.out").string();
    const CliResult r = run_modelstat_cli("report " + model() + kQuick + " --ceilings " + ceilings + option + target);
    expect_one_line(r, 1, "modelstat: error: cannot write '" + target + "': ", "No such file or directory", option);
  }
  // Nothing but the ceilings file: no temporary left anywhere.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), {}), 1);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace modelstat::test

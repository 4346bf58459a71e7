// The suite file: the issue's 8-cell form in YAML and in JSON, the expansion
// order, the stopping rule's flags; and every malformed file refused with exit 2
// naming the file, the line and the key, through the library and the CLI.
#include <gtest/gtest.h>

#include "analyzer/suite/suite_spec.hpp"
#include "modelstat/error.hpp"
#include "suite_test_support.hpp"

namespace modelstat::test {
namespace {

using suite::Cell;
using suite::SuiteSpec;

class SuiteSpecTest : public ScratchFolder {
 protected:
  // A suite file in the scratch folder whose models are the repository's sample models.
  std::string suite_file(const std::string& name, const std::string& text) {
    const std::string models = std::string(MODELSTAT_SOURCE_DIR) + "/sample_models";
    std::string t = text;
    for (size_t at = t.find("@M@"); at != std::string::npos; at = t.find("@M@")) t.replace(at, 3, models);
    write_file(path(name), t);
    return path(name);
  }
};

const char* const kIssueSuite =
    "models:\n"
    "  - path: @M@/custom_model.onnx\n"
    "  - path: @M@/tiny_bert.onnx\n"
    "    bindings: {seq: 16}\n"
    "axes:\n"
    "  batch: [1, 2]\n"
    "  threads: [1, 2]\n"
    "profile: {min_time: 0.2, max_time: 0.5}\n";

TEST_F(SuiteSpecTest, TheIssuesEightCellsInExpansionOrder) {
  const SuiteSpec spec = suite::load_suite(suite_file("s.yaml", kIssueSuite));
  const std::vector<Cell> cells = suite::expand_cells(spec);
  ASSERT_EQ(cells.size(), 8u);
  // models outer, threads fastest: (custom b1 t1), (custom b1 t2), (custom b2 t1), ...
  const int64_t batch[] = {1, 1, 2, 2, 1, 1, 2, 2};
  const int threads[] = {1, 2, 1, 2, 1, 2, 1, 2};
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(cells[i].index, static_cast<int64_t>(i));
    EXPECT_EQ(cells[i].model, i < 4 ? "custom_model" : "tiny_bert");
    EXPECT_EQ(cells[i].batch, batch[i]);
    EXPECT_EQ(cells[i].threads, threads[i]);
    EXPECT_EQ(cells[i].requests, 0);
    EXPECT_EQ(cells[i].runtime, "modelstat");
    EXPECT_EQ(cells[i].key.size(), 16u);
  }
  EXPECT_TRUE(cells[0].bindings.empty());
  ASSERT_EQ(cells[4].bindings.size(), 1u);
  EXPECT_EQ(cells[4].bindings[0], std::make_pair(std::string("seq"), int64_t(16)));
  std::set<std::string> keys;
  for (const Cell& c : cells) keys.insert(c.key);
  EXPECT_EQ(keys.size(), 8u);
  // The stopping rule as profile's flags, and no per-layer pass unless asked.
  EXPECT_EQ(suite::profile_rule_flags(spec),
            (std::vector<std::string>{"--min-time", "0.2", "--max-time", "0.5", "--no-layers"}));
  EXPECT_EQ(spec.name, "s");
  EXPECT_EQ(spec.fit.mode, "auto");
}

TEST_F(SuiteSpecTest, JsonIsReadLikeYamlAndGivesTheSameCells) {
  const std::string json =
      "{\n\t\"models\": [{\"path\": \"@M@/custom_model.onnx\"},\n"
      "\t           {\"path\": \"@M@/tiny_bert.onnx\", \"bindings\": {\"seq\": 16}}],\n"
      "\t\"axes\": {\"batch\": [1, 2], \"threads\": [1, 2]},\n"
      "\t\"profile\": {\"min_time\": 0.2, \"max_time\": 0.5}\n}\n";
  const auto yaml_cells = suite::expand_cells(suite::load_suite(suite_file("s.yaml", kIssueSuite)));
  const auto json_cells = suite::expand_cells(suite::load_suite(suite_file("s.json", json)));
  ASSERT_EQ(json_cells.size(), yaml_cells.size());
  for (size_t i = 0; i < json_cells.size(); ++i) EXPECT_EQ(json_cells[i].key, yaml_cells[i].key) << i;
}

TEST_F(SuiteSpecTest, TheCellKeyIsTheWorkNotItsNameOrStoppingRule) {
  const auto a = suite::expand_cells(suite::load_suite(suite_file("a.yaml", kIssueSuite)));
  const auto b = suite::expand_cells(suite::load_suite(suite_file(
      "b.yaml",
      "name: other\nmodels:\n  - {path: @M@/custom_model.onnx, name: renamed}\n  - path: @M@/tiny_bert.onnx\n"
      "    bindings: {seq: 16}\naxes: {batch: [1, 2], threads: [1, 2]}\nprofile: {max_time: 3}\n")));
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].key, b[i].key);
  const auto c = suite::expand_cells(suite::load_suite(suite_file(
      "c.yaml", "models:\n  - path: @M@/tiny_bert.onnx\n    bindings: {seq: 32}\naxes: {batch: [1]}\n")));
  EXPECT_NE(c[0].key, a[4].key);  // another binding is other work
}

TEST_F(SuiteSpecTest, EveryAxisAndItsValues) {
  const SuiteSpec spec = suite::load_suite(suite_file(
      "axes.yaml",
      "models: [@M@/tiny_cnn.onnx]\n"
      "axes:\n  batch: 1\n  threads: [all, 2]\n  dtype: [model, fp32]\n  fusion: [on, off]\n"
      "  mode: [sync, async:4, {async: 2}]\n  device: [cpu]\n  runtime: [modelstat, ort]\n"
      "runners:\n  ort: [node, r.mjs, \"{model}\", \"--threads={threads}\"]\n"
      "fit: {datasheet: h100-sxm}\ncell_timeout: 60\n"));
  EXPECT_EQ(spec.threads, (std::vector<int>{0, 2}));
  EXPECT_EQ(spec.mode, (std::vector<int>{0, 4, 2}));
  EXPECT_EQ(spec.fusion, (std::vector<std::string>{"on", "off"}));
  EXPECT_EQ(spec.fit.mode, "datasheet");
  EXPECT_EQ(spec.cell_timeout_seconds, 60);
  EXPECT_EQ(suite::expand_cells(spec).size(), size_t(1 * 2 * 2 * 2 * 3 * 1 * 2));
  EXPECT_EQ(spec.runners.at("ort").command.size(), 4u);
}

// A malformed suite file: the line and key the error must name.
struct BadSuite {
  const char* name;
  const char* text;
  int line;
  const char* key;  // substring of the message naming the key ("" for YAML syntax errors)
};

const BadSuite kBadSuites[] = {
    {"unknown_top_key", "models: [@M@/tiny_cnn.onnx]\nmodel: x\n", 2, "key 'model': unknown key"},
    {"unknown_model_key", "models:\n  - path: @M@/tiny_cnn.onnx\n    bindngs: {seq: 1}\n", 3,
     "key 'models[0].bindngs': unknown key"},
    {"unknown_axis", "models: [@M@/tiny_cnn.onnx]\naxes:\n  batches: [1]\n", 3, "key 'axes.batches': unknown key"},
    {"unknown_profile_key", "models: [@M@/tiny_cnn.onnx]\nprofile: {min_tme: 1}\n", 2,
     "key 'profile.min_tme': unknown key"},
    {"batch_not_integer", "models: [@M@/tiny_cnn.onnx]\naxes:\n  batch: [1, 2.5]\n", 3,
     "key 'axes.batch': expected an integer"},
    {"threads_as_string", "models: [@M@/tiny_cnn.onnx]\naxes:\n  threads: [\"2\"]\n", 3, "key 'axes.threads (or all)'"},
    {"min_time_text", "models: [@M@/tiny_cnn.onnx]\nprofile:\n  min_time: soon\n", 3,
     "key 'profile.min_time': expected a number"},
    {"bindings_not_a_map", "models:\n  - path: @M@/tiny_bert.onnx\n    bindings: [16]\n", 3,
     "key 'models[0].bindings': expected a mapping"},
    {"axis_empty_list", "models: [@M@/tiny_cnn.onnx]\naxes:\n  batch: []\n", 3, "key 'axes.batch': an axis with no values"},
    {"axis_null", "models: [@M@/tiny_cnn.onnx]\naxes:\n  threads:\n  batch: [1]\n", 3,
     "key 'axes.threads': an axis with no values"},
    {"model_missing", "models:\n  - path: no/such/model.onnx\n", 2, "key 'models[0].path': no such model file"},
    {"model_without_path", "models:\n  - name: x\n", 2, "key 'models[0].path': missing"},
    {"no_models", "axes: {batch: [1]}\n", 1, "key 'models': missing"},
    {"models_empty", "models: []\n", 1, "key 'models': expected a non-empty list"},
    {"duplicate_axis_value", "models: [@M@/tiny_cnn.onnx]\naxes:\n  batch:\n    - 1\n    - 2\n    - 1\n", 6,
     "key 'axes.batch': duplicate value 1 (also at line 4)"},
    {"duplicate_model", "models:\n  - path: @M@/tiny_cnn.onnx\n  - path: @M@/tiny_cnn.onnx\n    name: again\n", 3,
     "key 'models[1]': the same model file with the same bindings as models[0] (line 2)"},
    {"duplicate_key", "models: [@M@/tiny_cnn.onnx]\naxes:\n  batch: [1]\n  batch: [2]\n", 4,
     "key 'axes.batch': given twice (also at line 3)"},
    {"duplicate_mode", "models: [@M@/tiny_cnn.onnx]\naxes:\n  mode: [async:2, {async: 2}]\n", 3,
     "key 'axes.mode': duplicate value"},
    {"bad_mode", "models: [@M@/tiny_cnn.onnx]\naxes:\n  mode: [sync, async]\n", 3, "key 'axes.mode': expected sync, async:N"},
    {"bad_dtype", "models: [@M@/tiny_cnn.onnx]\naxes:\n  dtype: [int8]\n", 3, "key 'axes.dtype': expected one of"},
    {"unknown_runtime", "models: [@M@/tiny_cnn.onnx]\naxes:\n  runtime: [modelstat, ort]\n", 3,
     "key 'axes.runtime': unknown runtime 'ort'"},
    {"runner_shell_string", "models: [@M@/tiny_cnn.onnx]\nrunners:\n  ort: \"node r.mjs {model}\"\n", 3,
     "key 'runners.ort.command': expected the command as a list of arguments"},
    {"runner_unknown_placeholder", "models: [@M@/tiny_cnn.onnx]\nrunners:\n  ort: [node, \"{modle}\"]\n", 3,
     "key 'runners.ort.command[1]' (\"{modle}\"): unknown placeholder {modle}"},
    {"max_below_min", "models: [@M@/tiny_cnn.onnx]\nprofile:\n  min_time: 2\n  max_time: 1\n", 4,
     "key 'profile.max_time': 1 s is below min_time"},
    {"fit_unknown", "models: [@M@/tiny_cnn.onnx]\nfit: maybe\n", 2, "key 'fit': expected one of auto, off"},
    {"fit_ceilings_missing", "models: [@M@/tiny_cnn.onnx]\nfit: {ceilings: nowhere.json}\n", 2,
     "key 'fit.ceilings': no such ceilings file"},
    {"not_yaml", "models: [@M@/tiny_cnn.onnx\naxes: {batch: [1]}\n", 2, "not valid YAML or JSON"},
    {"not_a_mapping", "- a\n- b\n", 1, "a suite file is a mapping"},
    {"json_string_for_a_number", "{\"models\": [{\"path\": \"@M@/tiny_cnn.onnx\"}],\n \"axes\": {\"batch\": [\"1\"]}}\n", 2,
     "key 'axes.batch': expected an integer in [1, 1048576], got the string \"1\""},
};

TEST_F(SuiteSpecTest, EveryMalformedFileIsRefusedNamingFileLineAndKey) {
  for (const BadSuite& b : kBadSuites) {
    SCOPED_TRACE(b.name);
    const std::string file = suite_file(std::string(b.name) + ".yaml", b.text);
    try {
      suite::load_suite(file);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), 2);
      EXPECT_EQ(e.file(), file + ":" + std::to_string(b.line)) << e.what();
      EXPECT_NE(e.message().find(b.key), std::string::npos) << e.what();
    }
  }
}

// The same files through the binary: exit 2 and one line "modelstat: error: FILE:LINE: key '...': ...".
TEST_F(SuiteSpecTest, EveryMalformedFileExitsTwoFromTheCommandLine) {
  for (const BadSuite& b : kBadSuites) {
    SCOPED_TRACE(b.name);
    const std::string file = suite_file(std::string(b.name) + ".yaml", b.text);
    for (const std::string sub : {"run", "slurm"}) {
      const CliResult r = run_modelstat_cli("suite " + sub + " " + file + (sub == "run" ? " --dry-run" : " --dry-run --results " + path("out")));
      EXPECT_EQ(r.exit_code, 2) << r.err;
      EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
      EXPECT_NE(r.err.find("modelstat: error: " + file + ":" + std::to_string(b.line) + ": "), std::string::npos) << r.err;
      EXPECT_NE(r.err.find(b.key), std::string::npos) << r.err;
    }
  }
}

TEST_F(SuiteSpecTest, AMissingSuiteFileIsRefused) {
  const CliResult r = run_modelstat_cli("suite run " + path("nope.yaml") + " --dry-run");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no such suite file"), std::string::npos) << r.err;
}

TEST_F(SuiteSpecTest, DryRunListsTheCellsWithoutRunningThem) {
  const std::string file = suite_file("s.yaml", kIssueSuite);
  const CliResult r = run_modelstat_cli("suite run " + file + " --dry-run -f json --results " + path("r.db"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json cells = nlohmann::json::parse(r.out);
  const auto expected = suite::expand_cells(suite::load_suite(file));
  ASSERT_EQ(cells.size(), expected.size());
  for (size_t i = 0; i < cells.size(); ++i) {
    EXPECT_EQ(cells[i]["key"], expected[i].key);
    EXPECT_EQ(cells[i]["done"], false);
  }
  EXPECT_FALSE(std::filesystem::exists(path("r.db")));  // nothing run, nothing written
  const CliResult table = run_modelstat_cli("suite run " + file + " --dry-run");
  EXPECT_NE(table.out.find("8 cells (2 models)"), std::string::npos) << table.out;
}

}  // namespace
}  // namespace modelstat::test

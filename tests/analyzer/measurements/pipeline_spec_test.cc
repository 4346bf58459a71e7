// The pipeline description (docs/pipeline.md): what a good one resolves to
// (links by name and by position, shapes following the link), and every bad
// description refused as Error(Input) whose message names the stage. The
// models are the committed samples: seed 001's part0 (x [batch,3,224,224] ->
// y [batch,1024,56,56]) and part1 (x [batch,1024,56,56] -> y [batch,1]),
// tiny_cnn (input [1,3,32,32] float -> logits [1,10]) and tiny_bert
// (input_ids int64).
#include <gtest/gtest.h>

#include <string>

#include "modelstat/error.hpp"
#include "modelstat/pipeline.hpp"
#include "test_support.hpp"

namespace modelstat {
namespace {

const std::string kModels = std::string(MODELSTAT_SOURCE_DIR) + "/sample_models";

PipelineSpec parse(const std::string& text) { return parse_pipeline_text(text, "pipe.json", kModels); }

// The Error(Input) a bad description raises; fails the test if none or another kind.
std::string refusal(const std::string& text) {
  try {
    parse(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input) << e.message();
    EXPECT_EQ(e.file(), "pipe.json");
    return e.message();
  }
  ADD_FAILURE() << "accepted: " << text;
  return {};
}

const char* const kSeedPipeline = R"({
  "version": 1,
  "stages": [
    {"name": "part0", "model": "custom_model_part0.onnx", "dims": {"batch": 2}},
    {"name": "numpy", "host": {"busy_ms": 2.0}},
    {"name": "part1", "model": "custom_model_part1.onnx", "inputs": {"x": "part0.y"}}
  ]
})";

TEST(PipelineSpec, SeedPipelineResolvesLinksAndShapesFollowTheLink) {
  const PipelineSpec spec = parse(kSeedPipeline);
  ASSERT_EQ(spec.stages.size(), 3u);
  EXPECT_EQ(spec.stages[0].kind, StageKind::Model);
  EXPECT_EQ(spec.stages[0].model, kModels + "/custom_model_part0.onnx");
  EXPECT_EQ(spec.stages[0].device, "cpu");
  ASSERT_EQ(spec.stages[0].inputs.size(), 1u);
  EXPECT_EQ(spec.stages[0].inputs[0].from_stage, -1);  // its own random input
  EXPECT_EQ(spec.stages[0].output_shapes, std::vector<std::string>{"2x1024x56x56"});
  EXPECT_EQ(spec.stages[1].kind, StageKind::HostBusy);
  EXPECT_DOUBLE_EQ(spec.stages[1].busy_seconds, 0.002);
  EXPECT_TRUE(spec.stages[1].on_host());
  const PipelineStage& part1 = spec.stages[2];
  ASSERT_EQ(part1.inputs.size(), 1u);
  EXPECT_EQ(part1.inputs[0].input, "x");
  EXPECT_EQ(part1.inputs[0].from_stage, 0);
  EXPECT_EQ(part1.inputs[0].from_output, 0);
  EXPECT_EQ(part1.inputs[0].output_name, "y");
  // part1 was given no dims: its batch is bound by the link, 2, not the default 1.
  EXPECT_EQ(part1.load.input_shapes.at("x"), (std::vector<int64_t>{2, 1024, 56, 56}));
  EXPECT_EQ(part1.output_shapes, std::vector<std::string>{"2x1"});
}

TEST(PipelineSpec, PositionalLinkSkipsHostStagesToThePreviousModel) {
  const PipelineSpec spec = parse(R"({"stages": [
    {"model": "custom_model_part0.onnx"}, {"host": {"busy_ms": 0.5}}, {"model": "custom_model_part1.onnx"}]})");
  ASSERT_EQ(spec.stages.size(), 3u);
  EXPECT_EQ(spec.stages[0].name, "custom_model_part0");  // default: the file's stem
  EXPECT_EQ(spec.stages[2].inputs[0].from_stage, 0);
  EXPECT_EQ(spec.stages[2].inputs[0].output_name, "y");
  EXPECT_EQ(spec.stages[2].output_shapes, std::vector<std::string>{"1x1"});
}

TEST(PipelineSpec, NullLinkKeepsARandomInputAndHostModelRunsOnTheCpu) {
  const PipelineSpec spec = parse(R"({"device": "cpu", "stages": [
    {"name": "a", "model": "tiny_cnn.onnx"},
    {"name": "b", "host": {"model": "custom_model_part1.onnx"}, "dims": {"batch": 3}, "inputs": {"x": null}}]})");
  EXPECT_EQ(spec.stages[1].kind, StageKind::HostModel);
  EXPECT_EQ(spec.stages[1].device, "cpu");
  EXPECT_EQ(spec.stages[1].inputs[0].from_stage, -1);
  EXPECT_EQ(spec.stages[1].output_shapes, std::vector<std::string>{"3x1"});
}

TEST(PipelineSpec, ChainBindsEveryModelAndInsertsHostStages) {
  LoadOptions bindings;
  bindings.dim_values["batch"] = 8;
  const PipelineSpec spec = chain_pipeline({kModels + "/custom_model_part0.onnx", kModels + "/custom_model_part1.onnx"},
                                           bindings, "cpu", 0.002);
  ASSERT_EQ(spec.stages.size(), 3u);
  EXPECT_EQ(spec.stages[1].kind, StageKind::HostBusy);
  EXPECT_EQ(spec.stages[2].inputs[0].from_stage, 0);
  EXPECT_EQ(spec.stages[0].output_shapes, std::vector<std::string>{"8x1024x56x56"});
  EXPECT_EQ(spec.stages[2].output_shapes, std::vector<std::string>{"8x1"});
  // part1 -> part0 by position: [1,1] cannot feed [1,3,224,224].
  test::expect_error(
      [] { chain_pipeline({kModels + "/custom_model_part1.onnx", kModels + "/custom_model_part0.onnx"}, {}, "cpu", 0); },
      ErrorKind::Input, {"stage 'custom_model_part0'", "incompatible shapes"});
}

struct BadCase {
  const char* what;
  const char* text;
  const char* expected;  // substrings of the message, '|' separated
};

// Every refusal names the stage (or, for a document-level key, the description).
const BadCase kBad[] = {
    {"not an object", "[1, 2]", "is an object"},
    {"unknown top-level key", R"({"stages": [], "sattges": 1})", "unknown key 'sattges'"},
    {"no stages", R"({"stages": []})", "at least one stage"},
    {"bad version", R"({"version": 2, "stages": [{"model": "tiny_cnn.onnx"}]})", "\"version\" must be 1"},
    {"unknown stage key", R"({"stages": [{"name": "a", "model": "tiny_cnn.onnx", "batch": 4}]})",
     "stage 'a'|unknown key 'batch'"},
    {"unknown host key", R"({"stages": [{"name": "h", "host": {"busy_ms": 1, "sleep": true}}]})",
     "stage 'h'|unknown key 'sleep'"},
    {"host with both", R"({"stages": [{"name": "h", "host": {"busy_ms": 1, "model": "tiny_cnn.onnx"}}]})",
     "stage 'h'|exactly one"},
    {"negative busy", R"({"stages": [{"name": "h", "host": {"busy_ms": -1}}]})", "stage 'h'|busy_ms"},
    {"model and host", R"({"stages": [{"name": "m", "model": "tiny_cnn.onnx", "host": {"busy_ms": 1}}]})",
     "stage 'm'|not both"},
    {"neither model nor host", R"({"stages": [{"name": "m"}]})", "stage 'm'|needs \"model\""},
    {"bad device", R"({"stages": [{"name": "m", "model": "tiny_cnn.onnx", "device": "tpu"}]})", "stage 'm'|device"},
    {"duplicate names", R"({"stages": [{"name": "m", "model": "tiny_cnn.onnx"}, {"name": "m", "model": "tiny_cnn.onnx"}]})",
     "stage 'm' (stages[1])|unique"},
    {"dot in name", R"({"stages": [{"name": "m.1", "model": "tiny_cnn.onnx"}]})", "stage 'm.1'|'.'"},
    {"missing model file", R"({"stages": [{"name": "m", "model": "no_such_model.onnx"}]})",
     "stage 'm'|no_such_model.onnx"},
    {"link to a missing stage", R"({"stages": [{"name": "a", "model": "custom_model_part0.onnx"},
      {"name": "b", "model": "custom_model_part1.onnx", "inputs": {"x": "part0.y"}}]})",
     "stage 'b'|stage 'part0', which does not exist"},
    {"link to a missing output", R"({"stages": [{"name": "a", "model": "custom_model_part0.onnx"},
      {"name": "b", "model": "custom_model_part1.onnx", "inputs": {"x": "a.logits"}}]})",
     "stage 'b'|output 'logits' of stage 'a'|its outputs: y"},
    {"link from a missing input", R"({"stages": [{"name": "a", "model": "custom_model_part0.onnx"},
      {"name": "b", "model": "custom_model_part1.onnx", "inputs": {"pixels": "a.y"}}]})",
     "stage 'b'|'pixels', which is not a graph input"},
    {"link to a busy host stage", R"({"stages": [{"name": "h", "host": {"busy_ms": 1}},
      {"name": "b", "model": "custom_model_part1.onnx", "inputs": {"x": "h"}}]})",
     "stage 'b'|busy host stage"},
    {"incompatible shapes by name", R"({"stages": [{"name": "a", "model": "tiny_cnn.onnx"},
      {"name": "b", "model": "custom_model_part1.onnx", "inputs": {"x": "a.logits"}}]})",
     "stage 'b'|incompatible shapes"},
    {"incompatible shapes by position", R"({"stages": [{"name": "a", "model": "custom_model_part1.onnx"},
      {"name": "b", "model": "custom_model_part0.onnx"}]})",
     "stage 'b'|incompatible shapes|by position"},
    {"a shape given that differs", R"({"stages": [{"name": "a", "model": "custom_model_part0.onnx", "dims": {"batch": 2}},
      {"name": "b", "model": "custom_model_part1.onnx", "shapes": {"x": [4, 1024, 56, 56]}, "inputs": {"x": "a.y"}}]})",
     "stage 'b'|incompatible shapes|2x1024x56x56|4x1024x56x56"},
    {"incompatible dtypes", R"({"stages": [{"name": "a", "model": "tiny_cnn.onnx"},
      {"name": "b", "model": "tiny_bert.onnx"}]})",
     "stage 'b'|incompatible dtypes|float32|int64"},
    {"a cycle", R"({"stages": [{"name": "a", "model": "custom_model_part1.onnx", "inputs": {"x": "b.y"}},
      {"name": "b", "model": "custom_model_part0.onnx", "inputs": {"x": "a.y"}}]})",
     "stage '|cycle|a <- b <- a"},
    {"a stage reading itself", R"({"stages": [{"name": "a", "model": "custom_model_part1.onnx", "inputs": {"x": "a.y"}}]})",
     "stage 'a'|cycle"},
    {"a stage reading a later one", R"({"stages": [{"name": "a", "model": "custom_model_part1.onnx", "inputs": {"x": "b.y"}},
      {"name": "b", "model": "custom_model_part0.onnx"}]})",
     "stage 'a'|runs after it"},
    {"a link that is not a string", R"({"stages": [{"name": "a", "model": "custom_model_part0.onnx"},
      {"name": "b", "model": "custom_model_part1.onnx", "inputs": {"x": 3}}]})",
     "stage 'b'|must link"},
    {"a bad dim", R"({"stages": [{"name": "a", "model": "custom_model_part0.onnx", "dims": {"batch": 0}}]})",
     "stage 'a'|positive integer"},
    {"not JSON", R"({"stages": [)", "not valid JSON"},
};

TEST(PipelineSpec, EveryBadDescriptionIsRefusedNamingTheStage) {
  for (const BadCase& c : kBad) {
    SCOPED_TRACE(c.what);
    const std::string message = refusal(c.text);
    std::string expected = c.expected;
    size_t start = 0;
    while (start <= expected.size()) {
      const size_t bar = expected.find('|', start);
      const std::string part = expected.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
      EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
      if (bar == std::string::npos) break;
      start = bar + 1;
    }
  }
}

TEST(PipelineSpec, ReadingAMissingFileNamesIt) {
  test::expect_error([] { read_pipeline_file("/nonexistent/pipe.json"); }, ErrorKind::Input, {"/nonexistent/pipe.json"});
}

}  // namespace
}  // namespace modelstat

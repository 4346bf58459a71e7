// Old opsets (issue 12): for every op whose meaning changed between opsets, a
// model importing the old opset (tests/data/opset_cases/<case>, written by
// tools/gen_opset_cases.py: expected outputs computed with numpy from the op's
// documentation at that opset, those of opset 7 and later also checked
// against ONNX Runtime). Each case runs
//  (a) through the analyzer: every graph output's inferred shape and type
//      equal the expected output's (the model declares none of the dims), the
//      MACs and FLOPs equal the hand counts below, and every node is counted;
//  (b) through the executor (verify_case): every output equals numpy's.
// bench/RESULTS.md, "Old opsets (issue 12)", lists the ops and their cases.
// ONNX_NAMESPACE and ONNX_ML come with the onnx_proto target this binary links.
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "modelstat/analysis.hpp"
#include "profiler/verify.hpp"
#include "tests/profiler/verify_summary.hpp"

namespace modelstat::profiler {
namespace {

namespace fs = std::filesystem;

struct OpsetCase {
  const char* name;
  int64_t macs;
  int64_t flops;
  const char* count;  // how the figures were counted by hand (docs/COST_MODEL.md's rules)
};
void PrintTo(const OpsetCase& c, std::ostream* os) {
  *os << c.name;
}

const OpsetCase kCases[] = {
    // Binary ops before opset 7: the result has A's shape, 1 FLOP per element.
    {"add_opset6_axis", 0, 120, "A 2x3x4x5"},
    {"sub_opset6_axis0", 0, 24, "A 2x3x4"},
    {"mul_opset1_suffix", 0, 24, "A 2x3x4"},
    {"pow_opset1_axis0", 0, 6, "A 2x3"},
    {"greater_opset1_axis", 0, 24, "A 2x3x4"},
    {"xor_opset1_axis0", 0, 6, "A 3x2"},
    {"equal_opset1_suffix", 0, 6, "A 2x3"},
    // Gemm: M=2, N=4, K=3: 24 MACs; 2*24 + C 8 (+ alpha 8 + beta 8 when not 1).
    {"gemm_opset6_broadcast", 24, 72, "48 + C 8 + alpha 8 + beta 8"},
    {"gemm_opset1", 24, 56, "48 + C 8"},
    // Variadic: (n-1) per element, Mean n; 2x3 inputs.
    {"sum_opset6", 0, 12, "3 inputs: 2 x 6"},
    {"max_opset1", 0, 6, "2 inputs: 1 x 6"},
    {"mean_opset6", 0, 12, "2 inputs: 2 x 6"},
    {"relu_sigmoid_opset1", 0, 30, "Relu 6 + Sigmoid 4 x 6"},
    // Data movement and views: 0 FLOPs.
    {"reshape_opset4_attr", 0, 0, "view"},
    {"slice_opset9_attrs", 0, 0, "data movement"},
    {"slice_opset10_steps", 0, 0, "data movement"},
    {"pad_opset2_reflect", 0, 0, "data movement"},
    {"pad_opset1_paddings", 0, 0, "data movement"},
    {"split_opset2_attr", 0, 0, "data movement"},
    {"split_opset1_input", 0, 0, "data movement"},
    {"split_opset11_equal", 0, 0, "data movement"},
    {"squeeze_opset11_negaxis", 0, 0, "view"},
    {"squeeze_opset1_all", 0, 0, "view"},
    {"unsqueeze_opset1", 0, 0, "view"},
    {"unsqueeze_opset11_negaxis", 0, 0, "view"},
    // Reductions: 1 per input element (2x3x4), ReduceMean + 1 per output element.
    {"reducesum_opset11_attr", 0, 24, "24 inputs"},
    {"reducemean_opset1_all", 0, 25, "24 inputs + 1 output"},
    {"clip_opset6_min", 0, 12, "2 x 6"},
    {"clip_opset1_both", 0, 12, "2 x 6"},
    {"topk_opset1", 0, 12, "12 inputs x max(1, ceil(log2(k=2)))"},
    // Resampling: nearest moves data; linear 2 * 2^k per output element, k resized axes.
    {"upsample_opset7_nearest", 0, 0, "nearest"},
    {"upsample_opset7_linear", 0, 192, "1x1x4x6 = 24 outputs x 2*4"},
    {"upsample_opset9_input", 0, 0, "nearest"},
    {"upsample_opset1_attrs", 0, 0, "nearest"},
    {"resize_opset10_down_nearest", 0, 0, "nearest"},
    {"resize_opset10_down_linear", 0, 16, "1x1x1x2 = 2 outputs x 2*4 (H and W resized)"},
    {"resize_opset10_up_linear", 0, 96, "1x1x4x3 = 12 outputs x 2*4"},
    // Softmax family: 5 per element (Hardmax 1), 2x3x4.
    {"softmax_opset11_axis1", 0, 120, "5 x 24"},
    {"logsoftmax_opset1_default", 0, 120, "5 x 24"},
    {"hardmax_opset11_axis0", 0, 24, "1 x 24"},
    {"dropout_opset6_is_test", 0, 0, "is_test=1: view"},
    {"dropout_opset7_mask", 0, 0, "inference: view"},
    {"dropout_opset10_mask", 0, 0, "inference: view"},
    // BatchNormalization, 2x3x2x2 = 24 elements: 2 per element in inference, 6 in training.
    {"batchnorm_opset6_is_test", 0, 48, "is_test=1: 2 x 24"},
    {"batchnorm_opset6_training", 0, 144, "is_test=0 (default): 6 x 24"},
    {"batchnorm_opset9_training", 0, 144, "running-stat outputs: 6 x 24"},
    {"batchnorm_opset7_spatial0", 0, 24, "2 x 12"},
    {"concat_opset1_default_axis", 0, 0, "data movement"},
    {"cast_opset1_string", 0, 0, "data movement"},
    {"flatten_opset1_axis0", 0, 0, "view"},
    {"flatten_opset11_negaxis", 0, 0, "view"},
    {"argmax_opset1_ties", 0, 6, "1 x 6 inputs"},
    {"argmin_opset12_last", 0, 6, "1 x 6 inputs"},
    // Pools: 2x2 outputs x (4 adds + 1 divide); LpPool 2 outputs x (2*2 + 1); GlobalLpPool 2*8 + N*C 2.
    {"averagepool_opset1_pads", 0, 20, "4 x 5"},
    {"averagepool_opset7_include_pad", 0, 20, "4 x 5"},
    {"lppool_opset1_p3", 0, 10, "2 x 5"},
    {"globallppool_opset1_p1", 0, 18, "16 + 2"},
    // GRU, one direction, seq 2, batch 1, hidden 2, input 3, with B:
    // MACs 2*1*3*2*(3+2) = 60; FLOPs 2*60 + 2*1*2*(15 + 6) = 204.
    {"gru_opset3_linear_before_reset", 60, 204, "see above"},
    {"gru_opset7_linear_before_reset", 60, 204, "see above"},
    {"gru_opset1", 60, 204, "see above"},
    // Scan opset 8: the body (Add of 2 elements: 2 FLOPs) runs per batch row (2) and step (3).
    {"scan_opset8_batch2", 0, 12, "2 x 2 x 3"},
    {"tile_opset1_inputs", 0, 0, "data movement"},
    {"prelu_opset6_shared", 0, 24, "2 x 12"},
};

fs::path cases_root() {
  return fs::path(MODELSTAT_SOURCE_DIR) / "tests" / "data" / "opset_cases";
}

onnx::TensorProto read_tensor(const fs::path& file) {
  onnx::TensorProto t;
  std::ifstream in(file, std::ios::binary);
  EXPECT_TRUE(in.good() && t.ParseFromIstream(&in)) << "cannot read " << file;
  return t;
}

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? "," : "") + std::to_string(dims[i]);
  return text + "]";
}

std::string shape_text(const Shape& s) {
  if (!s.rank_known) return "?";
  std::string text = "[";
  for (size_t i = 0; i < s.dims.size(); ++i)
    text += (i ? "," : "") + (s.dims[i].known() ? std::to_string(s.dims[i].value) : std::string("?"));
  return text + "]";
}

class OpsetCases : public testing::TestWithParam<OpsetCase> {};

TEST_P(OpsetCases, AnalyzerAndExecutorFollowTheImportedOpset) {
  const OpsetCase& c = GetParam();
  const fs::path dir = cases_root() / c.name;
  ASSERT_TRUE(fs::exists(dir / "model.onnx")) << dir << " missing (run tools/gen_opset_cases.py)";

  // (a) The analyzer: shapes and types of every graph output, and the counts.
  const AnalysisResult r = analyze_file((dir / "model.onnx").string(), LoadOptions{});
  ASSERT_TRUE(r.model);
  const Graph& g = r.model->graph;
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    const onnx::TensorProto want =
        read_tensor(dir / "test_data_set_0" / ("output_" + std::to_string(k) + ".pb"));
    const Tensor& got = g.tensors[size_t(g.outputs[k])];
    const std::vector<int64_t> want_dims(want.dims().begin(), want.dims().end());
    EXPECT_EQ(shape_text(got.shape), dims_text(want_dims)) << "output '" << got.name << "'";
    EXPECT_EQ(int(got.dtype), want.data_type()) << "output '" << got.name << "'";
  }
  EXPECT_EQ(r.totals.nodes_exact, r.totals.nodes) << "some node is not counted";
  for (const auto* rows : {&r.nodes, &r.subgraph_nodes})
    for (const NodeReport& n : *rows)
      EXPECT_EQ(n.cost.status, CostStatus::Exact) << n.name << " (" << n.op_type << "): " << n.cost.note;
  EXPECT_EQ(r.totals.macs, c.macs) << c.count;
  EXPECT_EQ(r.totals.flops, c.flops) << c.count;

  // (b) The executor, against numpy's outputs.
  at::set_num_threads(1);
  const VerifyRecord record = verify_case(dir.string());
  EXPECT_EQ(record.exit_code, 0) << summary(record);
}

INSTANTIATE_TEST_SUITE_P(Old, OpsetCases, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<OpsetCase>& info) {
                           return std::string(info.param.name);
                         });

// Every case folder has a row above, and every row a folder.
TEST(OpsetCasesTable, MatchesTheCaseFolders) {
  std::set<std::string> folders, rows;
  for (const auto& e : fs::directory_iterator(cases_root()))
    if (e.is_directory()) folders.insert(e.path().filename().string());
  for (const OpsetCase& c : kCases) EXPECT_TRUE(rows.insert(c.name).second) << "duplicate row " << c.name;
  EXPECT_EQ(folders, rows);
}

}  // namespace
}  // namespace modelstat::profiler

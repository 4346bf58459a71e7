// Constant folding seen from the whole analysis: exporter patterns in which a
// shape-deciding input (Pad's pads, Resize's sizes or scales) is computed by
// ops ONNX's own data propagation does not evaluate. Each model is counted at
// 100% coverage with MACs equal to a hand count; a model whose shape depends
// on a value known only at run time says which node is the first unknown and
// why. Models are built with the profiler tests' ONNX builder.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <string>

#include "modelstat/analysis.hpp"
#include "profiler/onnx_builder.hpp"

namespace modelstat {
namespace {

using test::add_node;
using test::float_init;
using test::int64_init;
using test::int_attr;
using test::ints_attr;
using test::value_info;

AnalysisResult analyze(const onnx::ModelProto& m, const LoadOptions& options = {}) {
  const std::string bytes = m.SerializeAsString();
  return analyze_buffer(bytes.data(), bytes.size(), options);
}

// A Conv of 4 output channels over a 3-channel input, 3x3 kernel, no padding:
// MACs = 4 * out_h * out_w * 3 * 3 * 3.
void conv4(onnx::GraphProto* g, const std::string& in, const std::string& out) {
  float_init(g, out + "_w", {4, 3, 3, 3}, std::vector<float>(108, 0.5f));
  add_node(g, "Conv", {in, out + "_w"}, {out});
}

std::string notices(const AnalysisResult& r) {
  std::string all;
  for (const auto& n : r.notices) all += n + "\n";
  return all;
}

// tf2onnx's Pad: the pads come in TensorFlow's order (per dim begin/end,
// NHWC) as one initializer, which the exporter splits into scalars and
// concatenates again in ONNX's order (all begins, then all ends, NCHW).
TEST(FoldingCoverage, Tf2onnxPadThroughSplitAndConcat) {
  onnx::ModelProto m = test::new_model(11);
  onnx::GraphProto* g = m.mutable_graph();
  value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 3, 8, 8});
  // NHWC pairs (begin, end): N (0,0), H (2,0), W (0,1), C (0,0).
  int64_init(g, "tf_pads", {8}, {0, 0, 2, 0, 0, 1, 0, 0});
  onnx::NodeProto* split = add_node(g, "Split", {"tf_pads"}, {"n0", "n1", "h0", "h1", "w0", "w1", "c0", "c1"});
  ints_attr(split, "split", {1, 1, 1, 1, 1, 1, 1, 1});
  int_attr(split, "axis", 0);
  // ONNX order: [N begin, C begin, H begin, W begin, N end, C end, H end, W end].
  int_attr(add_node(g, "Concat", {"n0", "c0", "h0", "w0", "n1", "c1", "h1", "w1"}, {"pads"}), "axis", 0);
  add_node(g, "Pad", {"x", "pads"}, {"padded"});  // [1, 3, 8+2, 8+1]
  conv4(g, "padded", "y");                        // [1, 4, 8, 7]
  value_info(g->add_output(), "y", onnx::TensorProto::FLOAT, {});

  const AnalysisResult r = analyze(m);
  EXPECT_EQ(r.totals.nodes_exact, r.totals.nodes) << notices(r);
  EXPECT_EQ(r.totals.nodes, 4);
  EXPECT_EQ(r.totals.macs, 4 * 8 * 7 * 27);
  ASSERT_EQ(r.nodes.size(), 4u);
  EXPECT_EQ(r.nodes[2].output_shapes.at(0), "1x3x10x9");
}

// torch's interpolate(scale_factor=1.5) as older exporters write it: the
// output size computed in float from the input's shape, floored, cast back.
TEST(FoldingCoverage, ResizeSizesComputedInFloat) {
  onnx::ModelProto m = test::new_model(13);
  onnx::GraphProto* g = m.mutable_graph();
  value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 3, 7, 10});
  int64_init(g, "starts", {1}, {2});
  int64_init(g, "ends", {1}, {4});
  float_init(g, "scale", {}, {1.5f});
  int64_init(g, "nc", {2}, {1, 3});
  add_node(g, "Shape", {"x"}, {"shape"});
  add_node(g, "Slice", {"shape", "starts", "ends"}, {"hw"});
  int_attr(add_node(g, "Cast", {"hw"}, {"hw_f"}), "to", onnx::TensorProto::FLOAT);
  add_node(g, "Mul", {"hw_f", "scale"}, {"hw_scaled"});  // [10.5, 15]
  add_node(g, "Floor", {"hw_scaled"}, {"hw_floor"});     // [10, 15]
  int_attr(add_node(g, "Cast", {"hw_floor"}, {"hw_i"}), "to", onnx::TensorProto::INT64);
  int_attr(add_node(g, "Concat", {"nc", "hw_i"}, {"sizes"}), "axis", 0);
  add_node(g, "Resize", {"x", "", "", "sizes"}, {"up"});  // [1, 3, 10, 15]
  conv4(g, "up", "y");                                    // [1, 4, 8, 13]
  value_info(g->add_output(), "y", onnx::TensorProto::FLOAT, {});

  const AnalysisResult r = analyze(m);
  EXPECT_EQ(r.totals.nodes_exact, r.totals.nodes) << notices(r);
  EXPECT_EQ(r.totals.macs, 4 * 8 * 13 * 27);
}

// Resize by scales computed as float target / float current size, with the
// batch and channel scales 1 concatenated in front.
TEST(FoldingCoverage, ResizeScalesComputedInFloat) {
  onnx::ModelProto m = test::new_model(13);
  onnx::GraphProto* g = m.mutable_graph();
  value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 3, 5, 8});
  int64_init(g, "starts", {1}, {2});
  int64_init(g, "ends", {1}, {4});
  float_init(g, "target", {2}, {20.0f, 16.0f});
  float_init(g, "ones", {2}, {1.0f, 1.0f});
  add_node(g, "Shape", {"x"}, {"shape"});
  add_node(g, "Slice", {"shape", "starts", "ends"}, {"hw"});
  int_attr(add_node(g, "Cast", {"hw"}, {"hw_f"}), "to", onnx::TensorProto::FLOAT);
  add_node(g, "Div", {"target", "hw_f"}, {"hw_scales"});  // [4, 2]
  int_attr(add_node(g, "Concat", {"ones", "hw_scales"}, {"scales"}), "axis", 0);
  add_node(g, "Resize", {"x", "", "scales"}, {"up"});  // [1, 3, 20, 16]
  conv4(g, "up", "y");                                 // [1, 4, 18, 14]
  value_info(g->add_output(), "y", onnx::TensorProto::FLOAT, {});

  const AnalysisResult r = analyze(m);
  EXPECT_EQ(r.totals.nodes_exact, r.totals.nodes) << notices(r);
  EXPECT_EQ(r.totals.macs, 4 * 18 * 14 * 27);
}

// Coverage below 100%: one notice names the first node left unsized and the
// chain behind the value it lacks, ending at an op the folder does not
// evaluate (CumSum) or at a graph input (data known only at run time).
TEST(FoldingCoverage, FirstUnknownNodeAndWhy) {
  enum Source { kCumSum, kGraphInput, kIdentity };
  auto model = [](Source source) {
    onnx::ModelProto m = test::new_model(13);
    onnx::GraphProto* g = m.mutable_graph();
    value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 3, 8, 8});
    if (source == kGraphInput) {
      value_info(g->add_input(), "target", onnx::TensorProto::INT64, {4});
    } else if (source == kCumSum) {
      int64_init(g, "steps", {4}, {1, 2, 5, 0});  // cumulative sums 1, 3, 8, 8
      int64_init(g, "axis", {}, {0});
      add_node(g, "CumSum", {"steps", "axis"}, {"target"});
    } else {
      int64_init(g, "steps", {4}, {1, 3, 8, 8});
      add_node(g, "Identity", {"steps"}, {"target"});
    }
    add_node(g, "Abs", {"target"}, {"shape"});
    add_node(g, "Reshape", {"x", "shape"}, {"reshaped"});
    conv4(g, "reshaped", "y");
    value_info(g->add_output(), "y", onnx::TensorProto::FLOAT, {});
    return m;
  };
  const AnalysisResult by_op = analyze(model(kCumSum));
  EXPECT_LT(by_op.totals.nodes_exact, by_op.totals.nodes);
  const std::string op_notices = notices(by_op);
  EXPECT_NE(op_notices.find("first unknown shape: node 2 'Reshape_3' (Reshape) has every input sized, but its "
                            "output 'reshaped' is not: it reads input 1 'shape' as data"),
            std::string::npos)
      << op_notices;
  EXPECT_NE(op_notices.find("the chain that computes it (node 1 'Abs_2' (Abs)) stops at node 0 'CumSum_1' "
                            "(CumSum), an op modelstat does not evaluate before running"),
            std::string::npos)
      << op_notices;

  const AnalysisResult by_input = analyze(model(kGraphInput));
  const std::string input_notices = notices(by_input);
  EXPECT_NE(input_notices.find("stops at graph input 'target': its value is known only at run time"),
            std::string::npos)
      << input_notices;
  EXPECT_EQ(input_notices.find("unbound input dims"), std::string::npos);  // every input dim is known

  // Folded: full coverage, 4 * 6 * 6 * 27 MACs, and no such notice.
  const AnalysisResult counted = analyze(model(kIdentity));
  EXPECT_EQ(counted.totals.nodes_exact, counted.totals.nodes) << notices(counted);
  EXPECT_EQ(counted.totals.macs, 4 * 6 * 6 * 27);
  EXPECT_EQ(notices(counted).find("first unknown"), std::string::npos) << notices(counted);
}

}  // namespace
}  // namespace modelstat
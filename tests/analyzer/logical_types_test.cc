// Binding: what a user who leaves input dims unbound is told (one line).
// Shape inference gives every comparison and logical op its ONNX output type
// and shape, over ONNX's own backend node tests: the model is loaded as
// `modelstat` loads it; what is expected comes from the case's output_0.pb
// (the data type and dims ONNX's reference implementation wrote), not from
// modelstat. GreaterOrEqual and LessOrEqual are function ops that ONNX
// 1.12's C++ inference leaves untyped; the rest have inference functions.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "modelstat/analysis.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path kNodeTests = "/usr/share/libonnx-testdata/data/node";  // Debian's libonnx-testdata

onnx::TensorProto read_tensor(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  onnx::TensorProto t;
  EXPECT_TRUE(t.ParseFromString(bytes.str())) << path;
  return t;
}

class LogicalOpTypes : public ::testing::TestWithParam<const char*> {};

TEST_P(LogicalOpTypes, OutputTypeAndShapeAreOnnxs) {
  const fs::path dir = kNodeTests / GetParam();
  ASSERT_TRUE(fs::is_directory(dir)) << dir << " (libonnx-testdata, installed by tools/dev.sh)";
  const onnx::TensorProto expected = read_tensor(dir / "test_data_set_0" / "output_0.pb");
  ASSERT_EQ(expected.data_type(), onnx::TensorProto::BOOL) << "every comparison/logical op returns bool";

  const modelstat::Model model = modelstat::load_model((dir / "model.onnx").string(), {});
  ASSERT_EQ(model.graph.outputs.size(), 1u);
  const modelstat::Tensor& out = model.graph.tensors[size_t(model.graph.outputs[0])];
  EXPECT_EQ(out.dtype, modelstat::DType::Bool) << GetParam();
  std::string dims;
  for (int k = 0; k < expected.dims_size(); ++k) dims += (k ? "x" : "") + std::to_string(expected.dims(k));
  EXPECT_EQ(out.shape.to_string(), dims.empty() ? "scalar" : dims) << GetParam();
  // The op's own node carries the same (what every row of the report shows).
  const modelstat::AnalysisResult r = modelstat::analyze_model(model);
  ASSERT_FALSE(r.nodes.empty());
  EXPECT_EQ(r.nodes.back().output_dtype, "bool") << GetParam();
}

INSTANTIATE_TEST_SUITE_P(NodeTests, LogicalOpTypes,
                         ::testing::Values("test_equal", "test_equal_bcast", "test_greater", "test_greater_bcast",
                                           "test_less", "test_less_bcast", "test_greater_equal",
                                           "test_greater_equal_bcast", "test_less_equal", "test_less_equal_bcast",
                                           "test_and2d", "test_and_bcast4v3d", "test_or2d", "test_or_bcast4v3d",
                                           "test_xor2d", "test_xor_bcast4v3d", "test_not_2d", "test_isnan",
                                           "test_isinf"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

// A detector-like input with unnamed spatial dims and a named sequence dim:
// one notice says which flag binds each, naming the unnamed dims by input
// and position; binding them all removes it.
onnx::ModelProto two_input_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("hint");
  auto input = [&](const char* name, std::initializer_list<const char*> dims) {
    onnx::ValueInfoProto* v = g->add_input();
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (const char* d : dims) {
      auto* dim = tt->mutable_shape()->add_dim();
      if (std::string(d) == "?") continue;  // neither value nor name
      if (std::isdigit(static_cast<unsigned char>(d[0]))) dim->set_dim_value(std::stoll(d));
      else dim->set_dim_param(d);
    }
  };
  input("images", {"1", "3", "?", "?"});
  input("tokens", {"1", "seq"});
  for (const char* name : {"images", "tokens"}) {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type("Relu");
    n->add_input(name);
    n->add_output(std::string(name) + "_out");
    g->add_output()->set_name(std::string(name) + "_out");
  }
  return m;
}

std::string hint_of(const modelstat::LoadOptions& options) {
  const std::string bytes = two_input_model().SerializeAsString();
  const modelstat::AnalysisResult r = modelstat::analyze_buffer(bytes.data(), bytes.size(), options, "");
  std::string found;
  for (const auto& n : r.notices)
    if (n.find("unbound input dims") != std::string::npos) found += n + "\n";
  return found;
}

TEST(UnboundDimsHint, NamesTheFlagForEachUnboundDim) {
  const std::string hint = hint_of({});
  EXPECT_EQ(std::count(hint.begin(), hint.end(), '\n'), 1) << hint;
  EXPECT_NE(hint.find("--input images:1x3xD2xD3"), std::string::npos) << hint;
  EXPECT_NE(hint.find("dims 2 and 3 of input 'images' have no name"), std::string::npos) << hint;
  EXPECT_NE(hint.find("--dim seq=N"), std::string::npos) << hint;
}

TEST(UnboundDimsHint, GoneOnceEverythingIsBound) {
  modelstat::LoadOptions options;
  options.input_shapes["images"] = {1, 3, 64, 64};
  EXPECT_EQ(hint_of(options).find("images"), std::string::npos) << hint_of(options);
  options.dim_values["seq"] = 16;
  EXPECT_EQ(hint_of(options), "");
}

}  // namespace

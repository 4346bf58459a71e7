// Export styles of models from the wild, each as a small synthetic model of
// its own (issue 32), run through the binary: what the analysis counts, what
// `profile` runs and what `verify` judges. Reference outputs are computed
// here in double precision by plain loops, independently of ATen and oneDNN.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "profiler/onnx_builder.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;
using modelstat::test::add_node;
using modelstat::test::value_info;

void write_file(const fs::path& path, const std::string& bytes) { modelstat::test::write_file(path.string(), bytes); }

// A fresh, empty folder under the test's temporary directory.
fs::path fresh_dir(const std::string& name) { return modelstat::test::fresh_temp_dir("modelstat_export_styles_" + name); }

onnx::TensorProto float_tensor(const std::string& name, const std::vector<int64_t>& dims,
                               const std::vector<float>& values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  // raw_data, as exporters write large tensors (the loader strips it above 4 KiB).
  t.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  return t;
}

// A Constant node holding `values` as its `value` tensor attribute, as
// paddle2onnx and older tf2onnx/keras2onnx write weights.
void constant_node(onnx::GraphProto* g, const std::string& output, const std::vector<int64_t>& dims,
                   const std::vector<float>& values) {
  onnx::NodeProto* n = add_node(g, "Constant", {}, {output});
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = float_tensor(output, dims, values);
}

std::vector<float> wave(size_t n, double step, double scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float(std::sin(step * double(i) + 0.3) * scale);
  return v;
}

// x [1,3,8,8] -> Conv (64x3x3x3, pad 1, bias) -> Relu -> GlobalAveragePool
// -> Flatten -> MatMul (64x100) -> Add (100) -> y [1,100]; every weight a
// Constant node larger than the loader keeps inline, and each read only by a
// group the fused executor packs (Conv+Relu, MatMul+Add).
struct ConstantWeightsNet {
  static constexpr int C = 3, H = 8, W = 8, K = 64, N = 100;
  std::vector<float> conv_w = wave(size_t(K) * C * 9, 0.37, 0.2), conv_b = wave(K, 0.91, 0.1),
                     fc_w = wave(size_t(K) * N, 0.13, 0.3), fc_b = wave(N, 0.71, 0.05),
                     x = wave(size_t(C) * H * W, 0.11, 1.0);

  onnx::ModelProto model() const {
    onnx::ModelProto proto = modelstat::test::new_model(11);
    proto.set_producer_name("paddle2onnx-style synthetic");
    onnx::GraphProto* g = proto.mutable_graph();
    value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, C, H, W});
    constant_node(g, "conv_w", {K, C, 3, 3}, conv_w);
    constant_node(g, "conv_b", {K}, conv_b);
    constant_node(g, "fc_w", {K, N}, fc_w);
    constant_node(g, "fc_b", {N}, fc_b);
    modelstat::test::ints_attr(add_node(g, "Conv", {"x", "conv_w", "conv_b"}, {"c"}), "pads", {1, 1, 1, 1});
    add_node(g, "Relu", {"c"}, {"r"});
    add_node(g, "GlobalAveragePool", {"r"}, {"p"});
    add_node(g, "Flatten", {"p"}, {"f"});
    add_node(g, "MatMul", {"f", "fc_w"}, {"m"});
    add_node(g, "Add", {"m", "fc_b"}, {"y"});
    value_info(g->add_output(), "y", onnx::TensorProto::FLOAT, {1, N});
    return proto;
  }

  // The same arithmetic in double, by definition of each op.
  std::vector<float> expected() const {
    std::vector<double> pooled(K, 0.0);
    for (int k = 0; k < K; ++k)
      for (int i = 0; i < H; ++i)
        for (int j = 0; j < W; ++j) {
          double acc = conv_b[size_t(k)];
          for (int c = 0; c < C; ++c)
            for (int di = -1; di <= 1; ++di)
              for (int dj = -1; dj <= 1; ++dj) {
                const int ii = i + di, jj = j + dj;
                if (ii < 0 || ii >= H || jj < 0 || jj >= W) continue;
                acc += double(x[size_t((c * H + ii) * W + jj)]) *
                       double(conv_w[size_t(((k * C + c) * 3 + di + 1) * 3 + dj + 1)]);
              }
          pooled[size_t(k)] += std::max(acc, 0.0) / double(H * W);
        }
    std::vector<float> y(N);
    for (int n = 0; n < N; ++n) {
      double acc = fc_b[size_t(n)];
      for (int k = 0; k < K; ++k) acc += pooled[size_t(k)] * double(fc_w[size_t(k * N + n)]);
      y[size_t(n)] = float(acc);
    }
    return y;
  }
};

// Issue 32 item 1 (a regression): weights stored as Constant nodes profile
// and verify in both fusion modes.
TEST(ExportStyles, ConstantNodeWeightsProfileAndVerify) {
  const ConstantWeightsNet net;
  const fs::path dir = fresh_dir("constant_weights");
  modelstat::test::save_model(net.model(), (dir / "model.onnx").string());
  write_file(dir / "test_data_set_0" / "input_0.pb",
                              float_tensor("x", {1, 3, 8, 8}, net.x).SerializeAsString());
  write_file(dir / "test_data_set_0" / "output_0.pb",
                              float_tensor("y", {1, 100}, net.expected()).SerializeAsString());
  for (const char* fusion : {"on", "off"}) {
    SCOPED_TRACE(fusion);
    const auto verify = modelstat::test::run_modelstat_cli("verify " + dir.string() + " --fusion " + fusion);
    EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
    EXPECT_NE(verify.out.find("PASS"), std::string::npos) << verify.out;
    const auto profile = modelstat::test::run_modelstat_cli(
        "profile " + (dir / "model.onnx").string() + " --fusion " + std::string(fusion) +
        " --threads 1 --warmup 1 --warmup-time 0 --iters 3 --min-time 0 --max-time 0.5 -f json");
    ASSERT_EQ(profile.exit_code, 0) << profile.err;
    const auto doc = nlohmann::json::parse(profile.out);
    EXPECT_GT(doc["whole"]["median_s"].get<double>(), 0.0);
    EXPECT_EQ(doc["layers"].size(), doc["analysis"]["nodes"].size());
  }
}

}  // namespace

// TrainStep against hand computations: one SGD step of Y = X.W + B with the
// gradients worked out on paper, the second step of momentum and Adam from a
// plain-loop reference, the loss falling on tiny_cnn, the parameter set, the
// executor left as it was found, and the errors that name a node.
#include "profiler/train_step.hpp"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "analyzer/loader/loader.hpp"
#include "modelstat/error.hpp"
#include "profiler/ops/exec_helpers.hpp"
#include "profiler/ir_model.hpp"

namespace modelstat::profiler {
namespace {

// A training step runs the graph as written (TrainStep refuses CPU Conv groups).
ExecOptions training_options() {
  ExecOptions o;
  o.fuse_cpu = false;
  o.gemm = GemmBackend::Blas;
  return o;
}


const std::string kSamples = std::string(MODELSTAT_SOURCE_DIR) + "/sample_models/";

// IrModel (ir_model.hpp) with the shapes this file uses: inputs of unknown
// rank bound at run time, single-output nodes.
class SmallGraph : public IrModel {
 public:
  int input(const std::string& name, DType dtype = DType::Float) { return IrModel::input(name, {}, dtype); }
  int node(const std::string& op, const std::vector<int>& inputs, std::map<std::string, AttrValue> attributes = {}) {
    return IrModel::node(op, inputs, 1, std::move(attributes))[0];
  }
};

using Mat = std::vector<std::vector<double>>;

// The affine model of these tests: X (2x3), W (3x2), B (2).
const Mat kX = {{1, 2, 3}, {-1, 0.5, 2}};
const Mat kW = {{0.1, -0.2}, {0.3, 0.4}, {-0.5, 0.6}};
const std::vector<double> kB = {0.05, -0.1};

at::Tensor to_tensor(const Mat& m) {
  at::Tensor t = at::empty({int64_t(m.size()), int64_t(m[0].size())}, at::kFloat);
  for (size_t i = 0; i < m.size(); ++i)
    for (size_t j = 0; j < m[i].size(); ++j) t[int64_t(i)][int64_t(j)] = m[i][j];
  return t;
}

at::Tensor to_tensor(const std::vector<double>& v) {
  return at::tensor(std::vector<float>(v.begin(), v.end()), at::kFloat);
}

struct Affine {
  SmallGraph graph;
  int w = -1, b = -1;
};

// Y = MatMul(X, W) + B, the only output.
Affine affine_model() {
  Affine a;
  const int x = a.graph.input("X");
  a.w = a.graph.weight("W", to_tensor(kW));
  a.b = a.graph.weight("B", to_tensor(kB));
  a.graph.output(a.graph.node("Add", {a.graph.node("MatMul", {x, a.w}), a.b}));
  return a;
}

// Reference in plain loops, independent of ATen: loss = mean(Y^2) over the 4
// elements, dL/dY = Y / 2, dW = X^T dL/dY, dB = column sums of dL/dY.
struct Grad {
  double loss = 0;
  Mat dw;
  std::vector<double> db;
};
Grad reference_grad(const Mat& w, const std::vector<double>& b) {
  Grad g;
  g.dw.assign(3, std::vector<double>(2, 0.0));
  g.db.assign(2, 0.0);
  for (size_t i = 0; i < 2; ++i)
    for (size_t j = 0; j < 2; ++j) {
      double y = b[j];
      for (size_t k = 0; k < 3; ++k) y += kX[i][k] * w[k][j];
      g.loss += y * y / 4;
      const double dy = y / 2;
      g.db[j] += dy;
      for (size_t k = 0; k < 3; ++k) g.dw[k][j] += kX[i][k] * dy;
    }
  return g;
}

void expect_weights(const Executor& exec, const Affine& a, const Mat& w, const std::vector<double>& b,
                    double tolerance, const std::string& what) {
  const Graph& g = exec.model().graph;
  const at::Tensor tw = exec.weights().get(&g, a.w), tb = exec.weights().get(&g, a.b);
  for (int64_t k = 0; k < 3; ++k)
    for (int64_t j = 0; j < 2; ++j)
      EXPECT_NEAR(tw[k][j].item<double>(), w[size_t(k)][size_t(j)], tolerance)
          << what << " W[" << k << "][" << j << "]";
  for (int64_t j = 0; j < 2; ++j)
    EXPECT_NEAR(tb[j].item<double>(), b[size_t(j)], tolerance) << what << " B[" << j << "]";
}

TEST(TrainStepTest, OneSgdStepMatchesTheHandComputation) {
  Affine a = affine_model();
  Executor exec(a.graph.model, training_options());
  OptimizerConfig config;
  config.kind = Optimizer::Sgd;
  config.learning_rate = 0.1;
  TrainStep train(exec, config);
  EXPECT_EQ(train.trainable_params(), 8);
  const at::Tensor loss = train.step({to_tensor(kX)});
  // On paper: Y = [[-0.75, 2.3], [-0.9, 1.5]], loss = (0.5625 + 5.29 + 0.81 + 2.25) / 4.
  EXPECT_NEAR(loss.item<double>(), 2.228125, 1e-6);
  // dY = Y / 2 = [[-0.375, 1.15], [-0.45, 0.75]]; dB = [-0.825, 1.9];
  // dW = X^T dY = [[0.075, 0.4], [-0.975, 2.675], [-2.025, 4.95]]; W -= 0.1 dW.
  expect_weights(exec, a, {{0.0925, -0.24}, {0.3975, 0.1325}, {-0.2975, 0.105}}, {0.1325, -0.29}, 1e-6,
                 "after one SGD step");
  // The reference agrees with the paper.
  const Grad g = reference_grad(kW, kB);
  EXPECT_NEAR(g.loss, 2.228125, 1e-12);
  EXPECT_NEAR(g.dw[2][1], 4.95, 1e-12);
}

TEST(TrainStepTest, MomentumSecondStepMatchesTheReference) {
  Affine a = affine_model();
  Executor exec(a.graph.model, training_options());
  OptimizerConfig config;
  config.kind = Optimizer::Momentum;
  config.learning_rate = 0.05;
  TrainStep train(exec, config);
  train.step({to_tensor(kX)});
  const at::Tensor second_loss = train.step({to_tensor(kX)});

  // b1 = g1, p1 = p0 - lr b1; b2 = 0.9 b1 + g2, p2 = p1 - lr b2.
  const double lr = 0.05, m = 0.9;
  Mat w = kW, bw(3, std::vector<double>(2));
  std::vector<double> b = kB, bb(2);
  const Grad g1 = reference_grad(w, b);
  for (size_t k = 0; k < 3; ++k)
    for (size_t j = 0; j < 2; ++j) w[k][j] -= lr * (bw[k][j] = g1.dw[k][j]);
  for (size_t j = 0; j < 2; ++j) b[j] -= lr * (bb[j] = g1.db[j]);
  const Grad g2 = reference_grad(w, b);
  for (size_t k = 0; k < 3; ++k)
    for (size_t j = 0; j < 2; ++j) w[k][j] -= lr * (bw[k][j] = m * bw[k][j] + g2.dw[k][j]);
  for (size_t j = 0; j < 2; ++j) b[j] -= lr * (bb[j] = m * bb[j] + g2.db[j]);
  EXPECT_NEAR(second_loss.item<double>(), g2.loss, 1e-5);
  expect_weights(exec, a, w, b, 1e-5, "after two momentum steps");
}

TEST(TrainStepTest, AdamSecondStepMatchesTheReference) {
  Affine a = affine_model();
  Executor exec(a.graph.model, training_options());
  OptimizerConfig config;  // Adam, lr 1e-3, betas 0.9 / 0.999, eps 1e-8
  config.learning_rate = 0.01;
  TrainStep train(exec, config);
  train.step({to_tensor(kX)});
  // Step 1: m = 0.1 g, v = 0.001 g^2, bias-corrected m^ = g, v^ = g^2, so
  // every weight moves by lr * g / (|g| + eps): lr against the sign of g.
  {
    const Grad g1 = reference_grad(kW, kB);
    Mat w = kW;
    std::vector<double> b = kB;
    for (size_t k = 0; k < 3; ++k)
      for (size_t j = 0; j < 2; ++j) w[k][j] -= 0.01 * (g1.dw[k][j] > 0 ? 1 : -1);
    for (size_t j = 0; j < 2; ++j) b[j] -= 0.01 * (g1.db[j] > 0 ? 1 : -1);
    expect_weights(exec, a, w, b, 1e-6, "after one Adam step");
  }
  train.step({to_tensor(kX)});

  const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  Mat w = kW, mw(3, std::vector<double>(2, 0.0)), vw = mw;
  std::vector<double> b = kB, mb(2, 0.0), vb(2, 0.0);
  auto adam = [&](double& p, double& m, double& v, double g, int t) {
    m = b1 * m + (1 - b1) * g;
    v = b2 * v + (1 - b2) * g * g;
    const double m_hat = m / (1 - std::pow(b1, t)), v_hat = v / (1 - std::pow(b2, t));
    p -= lr * m_hat / (std::sqrt(v_hat) + eps);
  };
  for (int t = 1; t <= 2; ++t) {
    const Grad g = reference_grad(w, b);
    for (size_t k = 0; k < 3; ++k)
      for (size_t j = 0; j < 2; ++j) adam(w[k][j], mw[k][j], vw[k][j], g.dw[k][j], t);
    for (size_t j = 0; j < 2; ++j) adam(b[j], mb[j], vb[j], g.db[j], t);
  }
  expect_weights(exec, a, w, b, 1e-6, "after two Adam steps");
}

TEST(TrainStepTest, ExecutorIsRestoredAfterTraining) {
  Affine a = affine_model();
  Executor exec(a.graph.model, training_options());
  ASSERT_TRUE(exec.options().in_place);
  {
    TrainStep train(exec, OptimizerConfig{});
    EXPECT_FALSE(exec.options().in_place) << "in-place reuse would overwrite what backward needs";
    train.step({to_tensor(kX)});
    EXPECT_FALSE(exec.weights().get(&exec.model().graph, a.w).grad().defined()) << "grads set to none";
  }
  EXPECT_TRUE(exec.options().in_place);
  const at::Tensor w = exec.weights().get(&exec.model().graph, a.w);
  EXPECT_FALSE(w.requires_grad());
  EXPECT_FALSE(exec.run({to_tensor(kX)})[0].requires_grad()) << "inference no longer records gradients";
}

TEST(TrainStepTest, SgdLowersTheLossOfTinyCnn) {
  Model model = loader::load_model_file(kSamples + "tiny_cnn.onnx", LoadOptions{});
  Executor exec(model, training_options());
  const auto inputs = exec.make_inputs(7);
  OptimizerConfig config;
  config.kind = Optimizer::Sgd;
  config.learning_rate = 1e-3;
  TrainStep train(exec, config);
  // Hand count from the graph: convs 16*3*3*3+16, 16*1*3*3+16, 16*16+16,
  // 32*16*3*3+32; BatchNormalization scale and bias 2*16 (not its running
  // statistics); Gemm 10*32+10: 448 + 160 + 272 + 4640 + 32 + 330.
  EXPECT_EQ(train.trainable_params(), 5882);
  const double first = train.step(inputs).item<double>();
  double last = first;
  for (int i = 0; i < 5; ++i) last = train.step(inputs).item<double>();
  EXPECT_TRUE(std::isfinite(last));
  EXPECT_LT(last, first) << "five more SGD steps on the same batch lower the loss";
  bool said_batch_norm = false;
  for (const auto& n : train.notices())
    said_batch_norm = said_batch_norm || n.find("BatchNormalization") != n.npos;
  EXPECT_TRUE(said_batch_norm);
}

TEST(TrainStepTest, AWeightInASlotAtenCannotDifferentiateNamesTheNode) {
  // NegativeLogLikelihoodLoss(MatMul(X, W), target, class weights): ATen
  // refuses gradients for the class weights.
  SmallGraph graph;
  const int x = graph.input("X");
  const int target = graph.input("target", DType::Int64);
  const int w = graph.weight("W", at::ones({3, 3}, at::kFloat));
  const int class_weights = graph.weight("class_weights", at::ones({3}, at::kFloat));
  graph.output(
      graph.node("NegativeLogLikelihoodLoss", {graph.node("MatMul", {x, w}), target, class_weights}));
  Executor exec(graph.model, training_options());
  TrainStep train(exec, OptimizerConfig{});
  try {
    train.step({at::randn({4, 3}), at::tensor(std::vector<int64_t>{0, 1, 2, 0})});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.node(), "NegativeLogLikelihoodLoss_1");
    EXPECT_EQ(e.op(), "NegativeLogLikelihoodLoss");
    EXPECT_NE(std::string(e.what()).find("cannot train through this node"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("weight"), std::string::npos) << e.what();
  }
}

TEST(TrainStepTest, BackwardFailureIsTracedToItsSegment) {
  // Three segments; the middle one uses an op whose derivative LibTorch does
  // not implement (scatter with a multiply reduction).
  const at::Tensor w = at::rand({3}).requires_grad_(true);
  BackwardFailureLocator locator;
  locator.begin(3);
  const at::Tensor a = w * 2;
  locator.end_segment(0);
  const at::Tensor b = at::zeros({3}).scatter(0, at::arange(3), a, "multiply");
  locator.end_segment(1);
  const at::Tensor c = b.exp();
  locator.end_segment(2);
  int segment = -2;
  std::string message;
  EXPECT_ANY_THROW(locator.backward(c.sum(), [&](int s, const std::string& m) {
    segment = s;
    message = m;
  }));
  EXPECT_EQ(segment, 1);
  EXPECT_NE(message.find("not implemented"), std::string::npos) << message;
}

TEST(TrainStepTest, ModelsWithNothingToTrainAreInputErrors) {
  SmallGraph graph;
  graph.output(graph.node("Relu", {graph.input("X")}));
  Executor exec(graph.model, training_options());
  try {
    TrainStep train(exec, OptimizerConfig{});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find("no float weights"), std::string::npos) << e.what();
  }
}

TEST(TrainStepTest, OptimizerNames) {
  EXPECT_EQ(parse_as<Optimizer>("sgd", "--optimizer"), Optimizer::Sgd);
  EXPECT_STREQ(name_of(parse_as<Optimizer>("momentum", "--optimizer")), "momentum");
  EXPECT_STREQ(name_of(parse_as<Optimizer>("adam", "--optimizer")), "adam");
  EXPECT_THROW(parse_as<Optimizer>("lamb", "--optimizer"), Error);
}

}  // namespace
}  // namespace modelstat::profiler

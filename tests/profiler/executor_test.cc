// Executor and WeightStore: hand-built IR models checked against direct ATen
// calls, the sample models end to end, skeleton weights, constant payloads
// read back from the model file, and the errors.
#include "profiler/executor.hpp"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

#include "analyzer/loader/loader.hpp"
#include "modelstat/error.hpp"
#include "profiler/ir_model.hpp"
#include "profiler/ops/exec_helpers.hpp"
#include "profiler/ops/exec_rule.hpp"

namespace modelstat::profiler {
namespace {

const std::string kSamples = std::string(MODELSTAT_SOURCE_DIR) + "/sample_models/";


void expect_close(const at::Tensor& actual, const at::Tensor& expected, double tol = 1e-5) {
  ASSERT_EQ(actual.sizes(), expected.sizes());
  EXPECT_TRUE(at::allclose(actual, expected, tol, tol)) << "max abs diff "
                                                        << (actual - expected).abs().max().item<double>();
}

// The ops of a model (Constant apart: the loader folds it) that have no
// executor; a sample-model test asserts this is empty, so a missing executor
// fails the test instead of skipping it.
std::vector<std::string> ops_without_executor(const Model& model) {
  std::vector<std::string> missing;
  for (const Node& n : model.graph.nodes)
    if (n.op_type != "Constant" && !find_executor(n.domain, n.op_type, model.opset_version(n.domain)))
      missing.push_back(n.op_type);
  return missing;
}

#define ASSERT_EXECUTABLE(model) \
  ASSERT_EQ(ops_without_executor(model), std::vector<std::string>{}) << "ops without an executor"

class ExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override { at::set_num_threads(1); }
};

TEST_F(ExecutorTest, ConvWithAsymmetricPadsMatchesAten) {
  IrModel m;
  const at::Tensor w = at::randn({4, 3, 3, 3}), b = at::randn({4});
  const int x = m.input("x", {1, 3, 9, 9});
  const auto y = m.node("Conv", {x, m.weight("w", w), m.weight("b", b)}, 1,
                        {{"pads", std::vector<int64_t>{1, 0, 2, 1}}, {"strides", std::vector<int64_t>{2, 2}}});
  m.output(y[0]);
  const Executor ex(m.model, {});
  const auto inputs = ex.make_inputs(1);
  const auto out = ex.run(inputs);
  // ONNX pads [h_begin, w_begin, h_end, w_end]; constant_pad_nd lists w first.
  const at::Tensor ref = at::conv2d(at::constant_pad_nd(inputs[0], {0, 1, 1, 2}), w, b, {2, 2});
  expect_close(out[0], ref);
}

TEST_F(ExecutorTest, GemmAttributesMatchAten) {
  IrModel m;
  const at::Tensor bt = at::randn({5, 4}), c = at::randn({5});
  const int a = m.input("a", {3, 4});
  const auto y = m.node("Gemm", {a, m.weight("b", bt), m.weight("c", c)}, 1,
                        {{"transB", int64_t(1)}, {"alpha", 0.5}, {"beta", 2.0}});
  m.output(y[0]);
  const Executor ex(m.model, {});
  const auto inputs = ex.make_inputs(2);
  expect_close(ex.run(inputs)[0], 0.5 * at::mm(inputs[0], bt.t()) + 2.0 * c);
}

TEST_F(ExecutorTest, PoolingAndNormalizationChainMatchesAten) {
  IrModel m;
  const at::Tensor scale = at::rand({6}) + 0.5, bias = at::randn({6}), mean = at::randn({6}), var = at::rand({6}) + 0.1;
  const int x = m.input("x", {2, 6, 7, 7});
  const auto bn = m.node("BatchNormalization",
                         {x, m.weight("s", scale), m.weight("bb", bias), m.weight("m", mean), m.weight("v", var)});
  const auto pool = m.node("MaxPool", {bn[0]}, 1,
                           {{"kernel_shape", std::vector<int64_t>{3, 3}},
                            {"strides", std::vector<int64_t>{2, 2}},
                            {"auto_pad", std::string("SAME_UPPER")}});
  const auto gap = m.node("GlobalAveragePool", {pool[0]});
  m.output(gap[0]);
  const Executor ex(m.model, {});
  const auto inputs = ex.make_inputs(3);
  const at::Tensor normed = at::batch_norm(inputs[0], scale, bias, mean, var, false, 0.0, 1e-5, false);
  // SAME_UPPER with input 7, stride 2, kernel 3: output 4, total pad 2 -> 1 at each end.
  const at::Tensor pooled = at::max_pool2d(normed, {3, 3}, {2, 2}, {1, 1});
  expect_close(ex.run(inputs)[0], pooled.mean({2, 3}, true));
}

TEST_F(ExecutorTest, HookBracketsEveryNode) {
  IrModel m;
  const int x = m.input("x", {2, 3});
  const auto y = m.node("MatMul", {x, m.weight("w", at::randn({3, 4}))});
  const auto z = m.node("MatMul", {y[0], m.weight("w2", at::randn({4, 2}))});
  m.output(z[0]);
  const Executor ex(m.model, {});
  std::vector<std::pair<int, bool>> calls;
  ex.run(ex.make_inputs(0), [&](int node, bool after) { calls.emplace_back(node, after); });
  const std::vector<std::pair<int, bool>> expected{{0, false}, {0, true}, {1, false}, {1, true}};
  EXPECT_EQ(calls, expected);
}

TEST_F(ExecutorTest, UnsupportedOpIsAnInputErrorBeforeAnythingRuns) {
  IrModel m;
  const int x = m.input("x", {2, 3});
  const auto a = m.node("MatMul", {x, m.weight("w", at::randn({3, 3}))});
  const auto b = m.node("NoSuchOp", {a[0]});
  const auto c = m.node("AlsoMissing", {b[0]});
  m.output(c[0]);
  try {
    const Executor ex(m.model, {});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_EQ(e.op(), "NoSuchOp");
    EXPECT_EQ(e.node(), "NoSuchOp_1");
    EXPECT_NE(e.message().find("AlsoMissing"), std::string::npos) << e.message();
  }
}

TEST_F(ExecutorTest, UnknownInputDimsAreAnInputError) {
  IrModel m;
  const int x = m.input("x", {-1, 3});
  m.output(m.node("MatMul", {x, m.weight("w", at::randn({3, 3}))})[0]);
  const Executor ex(m.model, {});
  try {
    ex.make_inputs(0);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(e.message().find("--input"), std::string::npos) << e.message();
  }
}

// The error running `m` on its random inputs throws (a failure of the calling test when none).
Error error_running(const IrModel& m) {
  const Executor ex(m.model, {});
  try {
    ex.run(ex.make_inputs(0));
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected an error";
  return Error(ErrorKind::Runtime, "no error");
}

TEST_F(ExecutorTest, AtenErrorsBecomeRuntimeErrorsNamingTheNode) {
  IrModel m;
  const int x = m.input("x", {2, 3});
  m.output(m.node("MatMul", {x, m.weight("w", at::randn({4, 4}))})[0]);  // 3 vs 4: ATen throws
  const Error e = error_running(m);
  EXPECT_EQ(e.kind(), ErrorKind::Runtime);
  EXPECT_EQ(e.node(), "MatMul_0");
}

// An ATen kernel without a version for a dtype (LibTorch has no int8
// max_pool2d on the CPU; the executor itself widens int8 pooling, so ATen is
// called directly): the model is valid, this executor cannot run it.
// CannotRun (exit 2), naming the node, the dtype and what to do, not
// LibTorch's message alone. (A missing fp16/bf16 kernel is not an error: the
// node runs upcast, below.)
TEST_F(ExecutorTest, OpWithoutKernelForItsDtypeCannotRun) {
  Node node;
  node.name = "pool0";
  node.op_type = "MaxPool";
  try {
    at::max_pool2d(at::ones({1, 1, 4, 4}, at::kChar), {2, 2});
    FAIL() << "this LibTorch has an int8 max_pool2d: pick another kernel it lacks";
  } catch (const c10::Error& aten) {
    const Error e = aten_error(aten, node, at::kCPU);
    EXPECT_EQ(e.kind(), ErrorKind::CannotRun);
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_EQ(e.node(), "pool0");
    EXPECT_NE(e.message().find("int8"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("float32"), std::string::npos) << e.message();
  }
}

// Whether ATen itself has a kernel for `call`'s dtype on the CPU: its
// dispatch throws '"kernel" not implemented for 'Half'' when not. The tests
// below derive which nodes must run upcast from this, not from the executor.
bool aten_lacks_kernel(const std::function<void()>& call) {
  try {
    call();
    return false;
  } catch (const c10::Error& e) {
    return std::string(e.what_without_backtrace()).find("not implemented for") != std::string::npos;
  }
}

// An fp16 (or bf16) model, stored and declared in that dtype, run in its own
// dtypes on the CPU: x -> Conv(w) -> MaxPool 2x2 -> MatMul(m) -> Add(b) -> y.
// Each node whose ATen kernel lacks the dtype runs in fp32 (inputs cast up,
// outputs back), the others natively; the output keeps the model's dtype and
// matches an all-fp32 run within that dtype's rounding; the upcast list names
// exactly the ops ATen has no kernel for.
TEST_F(ExecutorTest, ReducedPrecisionModelRunsInItsDtypeUpcastingOpsWithoutKernel) {
  for (const at::ScalarType type : {at::kHalf, at::kBFloat16}) {
    SCOPED_TRACE(c10::toString(type));
    const DType dtype = dtype_of(type);
    const at::Tensor w = at::randn({4, 3, 3, 3}).to(type), mm = at::randn({4, 5}).to(type),
                     b = at::randn({5}).to(type);
    IrModel m;
    const int x = m.input("x", {1, 3, 10, 10}, dtype);
    const int conv = m.node("Conv", {x, m.weight("w", w)})[0];
    const int pool =
        m.node("MaxPool", {conv}, 1,
               {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}})[0];
    const int prod = m.node("MatMul", {pool, m.weight("mm", mm)})[0];
    const int y = m.node("Add", {prod, m.weight("b", b)})[0];
    m.output(y);
    // What the loader's type inference declares: each output in the model's dtype.
    for (int t : {conv, pool, prod, y}) m.model.graph.tensors[size_t(t)].dtype = dtype;

    const at::Tensor input = at::randn({1, 3, 10, 10}).to(type);
    std::set<std::string> expected;
    const at::Tensor c = at::conv2d(input.to(at::kFloat), w.to(at::kFloat)).to(type);  // 1x4x8x8
    const at::Tensor p = at::max_pool2d(c.to(at::kFloat), {2, 2}).to(type);            // 1x4x4x4
    const at::Tensor q = at::matmul(p.to(at::kFloat), mm.to(at::kFloat)).to(type);     // 1x4x4x5
    if (aten_lacks_kernel([&] { at::conv2d(input, w); })) expected.insert("Conv");
    if (aten_lacks_kernel([&] { at::max_pool2d(c, {2, 2}); })) expected.insert("MaxPool");
    if (aten_lacks_kernel([&] { at::matmul(p, mm); })) expected.insert("MatMul");
    if (aten_lacks_kernel([&] { at::add(q, b); })) expected.insert("Add");

    ExecOptions own;
    own.float_dtype = at::ScalarType::Undefined;
    const Executor ex(m.model, own);
    const at::Tensor out = ex.run({input})[0];
    EXPECT_EQ(out.scalar_type(), type);
    ASSERT_EQ(out.sizes(), (std::vector<int64_t>{1, 4, 4, 5}));

    const Upcasts up = ex.upcasts();
    std::set<std::string> upcast_ops;
    int64_t upcast_nodes = 0;
    for (const auto& [dt, ops] : up.nodes_by_dtype) {
      EXPECT_EQ(dt, type == at::kHalf ? "fp16" : "bf16");
      for (const auto& [op, count] : ops) {
        upcast_ops.insert(op);
        upcast_nodes += count;
      }
    }
    EXPECT_EQ(upcast_ops, expected);
    EXPECT_EQ(upcast_nodes, int64_t(expected.size()));
    ASSERT_EQ(up.top_level.size(), 4u);
    const std::vector<std::string> ops = {"Conv", "MaxPool", "MatMul", "Add"};
    for (size_t i = 0; i < ops.size(); ++i) EXPECT_EQ(up.top_level[i], expected.count(ops[i]) == 1) << ops[i];

    // The same model all in fp32 (--dtype fp32): the fp16/bf16 weights widen
    // exactly, so the two runs differ by the reduced dtype's roundings of the
    // intermediate results only: a few units of its epsilon, relative to the
    // output's scale.
    const Executor fp32(m.model, {});
    const at::Tensor ref = fp32.run({input.to(at::kFloat)})[0];
    EXPECT_EQ(ref.scalar_type(), at::kFloat);
    EXPECT_TRUE(fp32.upcasts().empty());
    const double eps = type == at::kHalf ? std::ldexp(1.0, -10) : std::ldexp(1.0, -7);
    const double scale = ref.abs().max().item<double>();
    const double max_diff = (out.to(at::kFloat) - ref).abs().max().item<double>();
    EXPECT_LE(max_diff, 8 * eps * scale) << "scale " << scale;

    // Later runs take the learnt path directly, with the same result.
    EXPECT_TRUE(at::equal(ex.run({input})[0], out));
    EXPECT_EQ(ex.upcasts().nodes_by_dtype, up.nodes_by_dtype);
  }
}

// The hook brackets an upcast node's casts: the first run (native attempt,
// throw, upcast rerun) and later runs call it once before and once after
// each node, as for any node.
TEST_F(ExecutorTest, HookBracketsUpcastNodes) {
  IrModel m;
  const int x = m.input("x", {2, 3}, DType::Float16);
  const int r = m.node("Relu", {x})[0];
  m.model.graph.tensors[size_t(r)].dtype = DType::Float16;
  m.output(r);
  ExecOptions own;
  own.float_dtype = at::ScalarType::Undefined;
  const Executor ex(m.model, own);
  const at::Tensor in = at::randn({2, 3}).to(at::kHalf);
  for (int run = 0; run < 2; ++run) {
    std::vector<std::pair<int, bool>> calls;
    const at::Tensor out = ex.run({in}, [&](int node, bool after) { calls.emplace_back(node, after); })[0];
    EXPECT_EQ(calls, (std::vector<std::pair<int, bool>>{{0, false}, {0, true}}));
    EXPECT_EQ(out.scalar_type(), at::kHalf);
    EXPECT_TRUE(at::equal(out, in.to(at::kFloat).clamp_min(0).to(at::kHalf)));
  }
}

TEST(UpcastNotices, OneLinePerDtypeOpsByCountNamingTheDevice) {
  Upcasts u;
  u.nodes_by_dtype["fp16"] = {{"MaxPool", 33}, {"Conv", 119}, {"Resize", 39}};
  const std::vector<std::string> cpu = upcast_notices(u, at::kCPU);
  ASSERT_EQ(cpu.size(), 1u);
  EXPECT_EQ(cpu[0],
            "ran in fp32 (no fp16 CPU kernel in this LibTorch; inputs cast from fp16 and outputs back, "
            "inside each node's time): Conv x119, Resize x39, MaxPool x33");
  EXPECT_TRUE(upcast_notices(Upcasts{}, at::kCPU).empty());
}

TEST_F(ExecutorTest, MakeInputsIsDeterministicAndNeverZeros) {
  IrModel m;
  const int x = m.input("x", {4, 8});
  const int ids = m.input("ids", {3, 5}, DType::Int64);
  const int mask = m.input("mask", {3, 5}, DType::Bool);
  const auto emb = m.node("Gather", {m.weight("table", at::randn({1000, 8})), ids});
  (void)emb;
  m.output(m.node("MatMul", {x, m.weight("w", at::randn({8, 2}))})[0]);
  (void)mask;
  // Only make_inputs is exercised; the constructor checks every node has an
  // executor, Gather included.
  ASSERT_NE(find_executor("", "Gather", 17), nullptr) << "no Gather executor";
  const Executor ex(m.model, {});
  const auto a = ex.make_inputs(42), b = ex.make_inputs(42), c = ex.make_inputs(43);
  ASSERT_EQ(a.size(), 3u);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(at::equal(a[i], b[i])) << "input " << i;
  EXPECT_FALSE(at::equal(a[0], c[0]));
  EXPECT_GT(a[0].abs().sum().item<double>(), 0.0);
  EXPECT_EQ(a[1].scalar_type(), at::kLong);
  EXPECT_GE(a[1].min().item<int64_t>(), 0);
  EXPECT_LT(a[1].max().item<int64_t>(), 1000);
  EXPECT_GT(a[1].max().item<int64_t>(), 1) << "token ids span the vocabulary, not [0, 2)";
  EXPECT_EQ(a[2].scalar_type(), at::kBool);
}

// A bf16 run: graph inputs, Constant outputs (from the weight store) and
// every float tensor an op creates (Range, ConstantOfShape, EyeLike, windows,
// Cast to any float type) are bf16 on the run's device; integer outputs keep
// their types. bf16 runs on CPU in ATen; CUDA is checked too where present.
TEST_F(ExecutorTest, ReducedPrecisionGraphStaysInFloatDtypeOnTheDevice) {
  IrModel m;
  const int x = m.input("x", {2, 3});
  auto constant = [&](const std::string& key, AttrValue value) {
    return m.node("Constant", {}, 1, {{key, std::move(value)}})[0];
  };
  const int added = m.node("Add", {x, constant("value_float", 2.0)})[0];
  const int range =
      m.node("Range", {constant("value_float", 0.5), constant("value_float", 3.0), constant("value_float", 1.0)})[0];
  const int zeros = m.node("ConstantOfShape", {constant("value_ints", std::vector<int64_t>{2, 2})})[0];
  const int cast_float = m.node("Cast", {x}, 1, {{"to", int64_t(DType::Float)}})[0];
  const int cast_double = m.node("Cast", {added}, 1, {{"to", int64_t(DType::Double)}})[0];
  const int cast_int = m.node("Cast", {range}, 1, {{"to", int64_t(DType::Int64)}})[0];
  const int eye = m.node("EyeLike", {added}, 1, {{"dtype", int64_t(DType::Float)}})[0];
  const int window = m.node("HannWindow", {constant("value_int", int64_t(4))})[0];
  for (int t : {added, range, zeros, cast_float, cast_double, cast_int, eye, window}) m.output(t);

  std::vector<at::Device> devices{at::kCPU};
  if (at::hasCUDA()) devices.emplace_back(at::kCUDA, 0);
  for (const at::Device device : devices) {
    SCOPED_TRACE(device.str());
    ExecOptions options;
    options.device = device;
    options.float_dtype = at::kBFloat16;
    const Executor exec(m.model, options);
    const auto inputs = exec.make_inputs(7);
    const auto out = exec.run(inputs);
    ASSERT_EQ(out.size(), 8u);
    for (size_t i = 0; i < out.size(); ++i) {
      EXPECT_EQ(out[i].device(), device) << "output " << i;
      if (i != 5) {
        EXPECT_EQ(out[i].scalar_type(), at::kBFloat16) << "output " << i;
      }
    }
    EXPECT_EQ(out[5].scalar_type(), at::kLong) << "integer Cast targets are untouched";
    const at::Tensor x_cpu = inputs[0].cpu();
    EXPECT_EQ(x_cpu.scalar_type(), at::kBFloat16);
    EXPECT_TRUE(at::equal(out[0].cpu(), x_cpu + 2));
    EXPECT_TRUE(at::equal(out[1].cpu(), at::tensor({0.5, 1.5, 2.5}).to(at::kBFloat16)));
    EXPECT_TRUE(at::equal(out[2].cpu(), at::zeros({2, 2}, at::kBFloat16)));
    EXPECT_TRUE(at::equal(out[3].cpu(), x_cpu));
    EXPECT_TRUE(at::equal(out[5].cpu(), at::arange(3, at::kLong)));
    EXPECT_TRUE(at::equal(out[6].cpu(), at::eye(2, 3).to(at::kBFloat16)));
    EXPECT_EQ(out[7].numel(), 4);
  }
}

TEST_F(ExecutorTest, TinyCnnRunsWithLoadedWeights) {
  const Model model = loader::load_model_file(kSamples + "tiny_cnn.onnx", {});
  ASSERT_EXECUTABLE(model);
  const Executor ex(model, {});
  EXPECT_EQ(ex.weights().tensors_randomised(), 0);
  EXPECT_GT(ex.weights().bytes_loaded(), 0);
  const auto out = ex.run(ex.make_inputs(7));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dim(), 2);
  EXPECT_TRUE(at::isfinite(out[0]).all().item<bool>());
  EXPECT_TRUE(at::equal(out[0], ex.run(ex.make_inputs(7))[0])) << "same seed, same result";
}

TEST_F(ExecutorTest, ExternalDataIsReadFromTheDataFile) {
  const Model model = loader::load_model_file(kSamples + "external_data.onnx", {});
  ASSERT_EXECUTABLE(model);
  const Executor ex(model, {});
  EXPECT_EQ(ex.weights().tensors_randomised(), 0);
  EXPECT_TRUE(ex.weights().notices().empty());
  // W1, b1, W2 live in the .data file: 64*? floats at least.
  EXPECT_GT(ex.weights().bytes_loaded(), 4096);
  const auto out = ex.run(ex.make_inputs(1));
  EXPECT_TRUE(at::isfinite(out[0]).all().item<bool>());
}

TEST_F(ExecutorTest, SkeletonModelRunsOnSeededWeightsWithOneNotice) {
  // Symbolic batch bound to 1 by default; 224x224 input (about 15 GMACs).
  const Model model = loader::load_model_file(kSamples + "custom_model.onnx", {});
  ASSERT_EXECUTABLE(model);
  ExecOptions exec;
  exec.seed = 99;
  const Executor ex(model, exec);
  EXPECT_GT(ex.weights().tensors_randomised(), 0);
  ASSERT_EQ(ex.weights().notices().size(), 1u);
  EXPECT_NE(ex.weights().notices()[0].find("filled from seed 99"), std::string::npos) << ex.weights().notices()[0];
  const auto out = ex.run(ex.make_inputs(1));
  EXPECT_TRUE(at::isfinite(out[0]).all().item<bool>());
  EXPECT_GT(out[0].abs().sum().item<double>(), 0.0);
  // Same seed, same weights; std = 1/sqrt(fan_in) for a conv kernel.
  const WeightStore again(model, exec);
  const Graph& g = model.graph;
  for (int t : g.initializers) {
    // A Conv group's weights live on packed in its kernel only (the store drops them).
    if (!ex.weights().get(&g, t).defined()) continue;
    EXPECT_TRUE(at::equal(ex.weights().get(&g, t), again.get(&g, t))) << g.tensors[size_t(t)].name;
  }
  for (int t : g.initializers) {
    const at::Tensor& w = again.get(&g, t);
    if (w.dim() != 4) continue;
    const double expected_std = 1.0 / std::sqrt(double(w.numel() / w.size(0)));
    EXPECT_NEAR(w.std().item<double>(), expected_std, 0.1 * expected_std) << g.tensors[size_t(t)].name;
  }
}

// An initializer that declares dims but carries no data at all (no payload,
// no external file: a dims-only skeleton) is filled from the seed and counted,
// never left as uninitialised memory; one with zero elements stays empty.
TEST_F(ExecutorTest, DataLessInitializerIsFilledFromTheSeed) {
  onnx::ModelProto proto;
  proto.set_ir_version(8);
  proto.add_opset_import()->set_version(17);
  onnx::GraphProto* g = proto.mutable_graph();
  g->set_name("dims only");
  onnx::TensorProto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(256);
  w->add_dims(64);
  onnx::TensorProto* e = g->add_initializer();
  e->set_name("e");
  e->set_data_type(onnx::TensorProto::FLOAT);
  e->add_dims(0);
  auto value_info = [](onnx::ValueInfoProto* v, const std::string& name, std::vector<int64_t> dims) {
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) v->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  };
  value_info(g->add_input(), "x", {1, 256});
  value_info(g->add_output(), "y", {1, 64});
  value_info(g->add_output(), "e_out", {0});
  onnx::NodeProto* mm = g->add_node();
  mm->set_op_type("MatMul");
  mm->add_input("x");
  mm->add_input("w");
  mm->add_output("y");
  onnx::NodeProto* id = g->add_node();
  id->set_op_type("Identity");
  id->add_input("e");
  id->add_output("e_out");
  const auto path = std::filesystem::temp_directory_path() / "modelstat_dims_only_test.onnx";
  {
    std::ofstream out(path, std::ios::binary);
    ASSERT_TRUE(proto.SerializeToOstream(&out));
  }
  const Model model = loader::load_model_file(path.string(), {});
  ExecOptions exec;
  exec.seed = 5;
  const WeightStore store(model, exec);
  EXPECT_EQ(store.tensors_randomised(), 1) << "w only: e has no elements";
  ASSERT_EQ(store.notices().size(), 1u);
  EXPECT_NE(store.notices()[0].find("filled from seed 5"), std::string::npos) << store.notices()[0];
  const at::Tensor& wt = store.get(&model.graph, model.graph.find_tensor("w"));
  ASSERT_EQ(wt.sizes(), (std::vector<int64_t>{256, 64}));
  // std = 1/sqrt(fan_in) with fan_in = 64 elements per leading row, as every seeded weight.
  EXPECT_NEAR(wt.std().item<double>(), 1.0 / 8.0, 0.1 / 8.0);
  EXPECT_TRUE(at::equal(wt, WeightStore(model, exec).get(&model.graph, model.graph.find_tensor("w"))))
      << "same seed, same weight";
  EXPECT_EQ(store.get(&model.graph, model.graph.find_tensor("e")).numel(), 0);
  std::filesystem::remove(path);
}

// Writes a model whose initializers are large enough to be stripped by the
// loader (> 4 KiB), one per TensorProto payload encoding, and checks that the
// weight store reads each back from the model file.
TEST_F(ExecutorTest, StrippedPayloadsOfEveryEncodingAreReadBack) {
  onnx::ModelProto proto;
  proto.set_ir_version(8);
  proto.add_opset_import()->set_version(17);
  onnx::GraphProto* g = proto.mutable_graph();
  g->set_name("payloads");
  const int64_t n = 5000;
  std::vector<std::string> names;
  auto add = [&](const std::string& name, int type) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    t->add_dims(n);
    names.push_back(name);
    onnx::NodeProto* node = g->add_node();
    node->set_op_type("Identity");
    node->add_input(name);
    node->add_output(name + "_out");
    onnx::ValueInfoProto* out = g->add_output();
    out->set_name(name + "_out");
    out->mutable_type()->mutable_tensor_type()->set_elem_type(type);
    out->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(n);
    return t;
  };
  onnx::TensorProto* f = add("floats", onnx::TensorProto::FLOAT);
  onnx::TensorProto* raw = add("raw", onnx::TensorProto::FLOAT);
  onnx::TensorProto* d = add("doubles", onnx::TensorProto::DOUBLE);
  onnx::TensorProto* i64 = add("int64s", onnx::TensorProto::INT64);
  onnx::TensorProto* i32 = add("int32s", onnx::TensorProto::INT32);
  onnx::TensorProto* h = add("halves", onnx::TensorProto::FLOAT16);
  onnx::TensorProto* u8 = add("bytes", onnx::TensorProto::UINT8);
  const at::Tensor ref = at::randn({n});
  const at::Tensor ref_half = ref.to(at::kHalf);
  std::string raw_bytes(size_t(n) * 4, '\0');
  std::memcpy(raw_bytes.data(), ref.data_ptr<float>(), raw_bytes.size());
  raw->set_raw_data(raw_bytes);
  for (int64_t i = 0; i < n; ++i) {
    f->add_float_data(ref[i].item<float>());
    d->add_double_data(double(ref[i].item<float>()));
    i64->add_int64_data(i * 1000003 - int64_t(2500000000LL));
    i32->add_int32_data(int32_t(i) - 2500);  // negatives: 10-byte varints
    uint16_t bits;
    const at::Half hv = ref_half[i].item<at::Half>();
    std::memcpy(&bits, &hv, 2);
    h->add_int32_data(bits);
    u8->add_int32_data(int32_t(i % 256));
  }
  const auto path = std::filesystem::temp_directory_path() / "modelstat_payloads_test.onnx";
  {
    std::ofstream out(path, std::ios::binary);
    ASSERT_TRUE(proto.SerializeToOstream(&out));
  }
  const Model model = loader::load_model_file(path.string(), {});
  const WeightStore store(model, {});
  auto get = [&](const std::string& name) { return store.get(&model.graph, model.graph.find_tensor(name)); };
  for (const auto& name : names) {
    const Tensor& t = model.graph.tensors[size_t(model.graph.find_tensor(name))];
    EXPECT_FALSE(t.storage().bytes.has_inline) << name << " should have been stripped (test premise)";
    EXPECT_FALSE(t.storage().bytes.payload.empty()) << name;
  }
  EXPECT_TRUE(at::equal(get("floats"), ref));
  EXPECT_TRUE(at::equal(get("raw"), ref));
  EXPECT_EQ(get("doubles").scalar_type(), at::kFloat) << "float types are cast to float_dtype";
  EXPECT_TRUE(at::equal(get("doubles"), ref));
  const at::Tensor idx = at::arange(n, at::kLong);
  EXPECT_TRUE(at::equal(get("int64s"), idx * int64_t(1000003) - int64_t(2500000000LL)));
  EXPECT_TRUE(at::equal(get("int32s"), (idx - 2500).to(at::kInt)));
  EXPECT_TRUE(at::equal(get("halves"), ref_half.to(at::kFloat)));
  EXPECT_TRUE(at::equal(get("bytes"), (idx % 256).to(at::kByte)));
  EXPECT_EQ(store.tensors_randomised(), 0);
  EXPECT_EQ(store.bytes_loaded(), n * (4 + 4 + 8 + 8 + 4 + 2 + 1));
  std::filesystem::remove(path);
}

TEST_F(ExecutorTest, ScalarConstantsAndAttributeTensors) {
  IrModel m;
  const int s = m.weight("scalar", at::scalar_tensor(2.5, at::kFloat));
  m.output(s);
  const WeightStore store(m.model, {});
  const at::Tensor& t = store.get(&m.model.graph, s);
  EXPECT_EQ(t.dim(), 0);
  EXPECT_FLOAT_EQ(t.item<float>(), 2.5f);

  AttrTensor attr;
  attr.dtype = DType::Int64;
  attr.shape.rank_known = true;
  attr.shape.dims = {Dim{1, {}}};
  const int64_t value = 7;
  attr.bytes.has_inline = true;
  attr.bytes.inline_bytes.assign(reinterpret_cast<const char*>(&value), 8);
  const at::Tensor a = tensor_from_attr(attr);
  EXPECT_EQ(a.scalar_type(), at::kLong);
  EXPECT_EQ(a.item<int64_t>(), 7);
}

}  // namespace
}  // namespace modelstat::profiler

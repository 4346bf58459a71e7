// `modelstat verify` and `modelstat profile` on what the executor must refuse:
// hostile ONNX test-case folders (missing, extra or misnamed input_*.pb,
// missing outputs, headers claiming more elements than the file holds, dims
// or dtypes the model does not declare, garbage), and models it cannot run
// (a string input). Each ends with exit 2 and one line naming the file or the
// node, before anything of the claimed size is allocated. Also a float16 Conv,
// which has no CPU kernel and runs upcast to fp32 instead. Cases are built
// here as protobufs.
// ONNX_NAMESPACE and ONNX_ML come with the onnx_proto target this binary links.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "profiler/onnx_builder.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;
using RunResult = modelstat::test::CliResult;

using modelstat::test::value_info;

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& name, const std::string& op,
                          const std::vector<std::string>& inputs, const std::string& output) {
  onnx::NodeProto* n = g->add_node();
  n->set_name(name);
  n->set_op_type(op);
  for (const auto& i : inputs) n->add_input(i);
  n->add_output(output);
  return n;
}

// An empty opset-13 model named `name`.
onnx::ModelProto opset13_model(const std::string& name) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  m.mutable_graph()->set_name(name);
  return m;
}

// z = x + y, float 2x3.
onnx::ModelProto add_model() {
  onnx::ModelProto m = opset13_model("add");
  onnx::GraphProto* g = m.mutable_graph();
  value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
  value_info(g->add_input(), "y", onnx::TensorProto::FLOAT, {2, 3});
  value_info(g->add_output(), "z", onnx::TensorProto::FLOAT, {2, 3});
  add_node(g, "add0", "Add", {"x", "y"}, "z");
  return m;
}

// x (float 1x2x5x5) -> Cast to float16 -> Conv with a float16 3x2x3x3 weight
// of ones -> y (float16 1x3x3x3): ATen has no float16 convolution on the CPU.
onnx::ModelProto half_conv_model() {
  onnx::ModelProto m = opset13_model("half conv");
  onnx::GraphProto* g = m.mutable_graph();
  value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 2, 5, 5});
  value_info(g->add_output(), "y", onnx::TensorProto::FLOAT16, {1, 3, 3, 3});
  onnx::TensorProto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT16);
  for (int64_t d : {3, 2, 3, 3}) w->add_dims(d);
  for (int i = 0; i < 3 * 2 * 3 * 3; ++i) w->add_int32_data(0x3c00);  // 1.0 in float16
  onnx::AttributeProto* to = add_node(g, "cast0", "Cast", {"x"}, "xh")->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::FLOAT16);
  add_node(g, "conv0", "Conv", {"xh", "w"}, "y");
  return m;
}

onnx::TensorProto float_tensor(const std::vector<int64_t>& dims, float value) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) {
    t.add_dims(d);
    n *= d;
  }
  for (int64_t i = 0; i < n; ++i) t.add_float_data(value);
  return t;
}

void write(const fs::path& path, const std::string& bytes) { modelstat::test::write_file(path.string(), bytes); }

// A fresh, empty case folder under the test's temporary directory.
fs::path fresh_case(const std::string& name) { return modelstat::test::fresh_temp_dir("modelstat_verify_" + name); }

// The Add case with 1 + 2 = 3 everywhere: passes as written; each test then breaks one thing.
fs::path add_case(const std::string& name) {
  const fs::path dir = fresh_case(name);
  write(dir / "model.onnx", add_model().SerializeAsString());
  write(dir / "test_data_set_0" / "input_0.pb", float_tensor({2, 3}, 1).SerializeAsString());
  write(dir / "test_data_set_0" / "input_1.pb", float_tensor({2, 3}, 2).SerializeAsString());
  write(dir / "test_data_set_0" / "output_0.pb", float_tensor({2, 3}, 3).SerializeAsString());
  return dir;
}

RunResult verify(const fs::path& dir) { return modelstat::test::run_modelstat_cli("verify " + dir.string()); }

// Exit 2, one error line on standard error in every command's form
// (`modelstat: error: ...`), naming `file` and saying `what`; nothing on stdout.
void expect_cannot_run(const RunResult& r, const std::string& file, const std::string& what) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.out, "") << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("modelstat: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(file), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
}

TEST(CliVerify, WellFormedCasePassesAndAWrongOutputFails) {
  const fs::path dir = add_case("ok");
  RunResult r = verify(dir);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("PASS"), std::string::npos) << r.out;
  write(dir / "test_data_set_0" / "output_0.pb", float_tensor({2, 3}, 4).SerializeAsString());
  r = verify(dir);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("FAIL"), std::string::npos) << r.out;
}

// y = Relu(x @ W + b), W and b constants: a MatMul group (bias Add and Relu
// fused, on oneDNN or BLAS). With x = 2, W = 0.5 (3 rows), b = 1: y = 4.
// Every fusion mode and Gemm backend computes it.
TEST(CliVerify, MatMulGroupPassesInEveryFusionModeAndGemmBackend) {
  const fs::path dir = fresh_case("matmul_group");
  onnx::ModelProto m = opset13_model("matmul group");
  onnx::GraphProto* g = m.mutable_graph();
  value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
  value_info(g->add_output(), "y", onnx::TensorProto::FLOAT, {2, 4});
  *g->add_initializer() = float_tensor({3, 4}, 0.5f);
  g->mutable_initializer(0)->set_name("W");
  *g->add_initializer() = float_tensor({4}, 1.f);
  g->mutable_initializer(1)->set_name("b");
  add_node(g, "mm", "MatMul", {"x", "W"}, "p");
  add_node(g, "bias", "Add", {"p", "b"}, "q");
  add_node(g, "relu", "Relu", {"q"}, "y");
  write(dir / "model.onnx", m.SerializeAsString());
  write(dir / "test_data_set_0" / "input_0.pb", float_tensor({2, 3}, 2).SerializeAsString());
  write(dir / "test_data_set_0" / "output_0.pb", float_tensor({2, 4}, 4).SerializeAsString());
  for (const char* flags : {"", " --fusion off", " --no-fuse", " --gemm onednn", " --gemm blas",
                            " --fusion off --gemm onednn"}) {
    const RunResult r = modelstat::test::run_modelstat_cli("verify " + dir.string() + flags);
    EXPECT_EQ(r.exit_code, 0) << flags << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("PASS"), std::string::npos) << flags << "\n" << r.out;
  }
  const RunResult bad = modelstat::test::run_modelstat_cli("verify " + dir.string() + " --fusion maybe");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE((bad.out + bad.err).find("--fusion"), std::string::npos) << bad.out << bad.err;
}

TEST(CliVerify, MissingFolderModelOrDataSetIsNamed) {
  const fs::path dir = fresh_case("empty");
  expect_cannot_run(verify(dir), (dir / "model.onnx").string(), "missing");
  expect_cannot_run(verify(dir / "absent"), (dir / "absent").string(), "not a folder");
  write(dir / "model.onnx", "\xff\xff\xff\xff garbage");
  expect_cannot_run(verify(dir), (dir / "model.onnx").string(), "not an ONNX model");
  write(dir / "model.onnx", add_model().SerializeAsString());
  expect_cannot_run(verify(dir), dir.string(), "no test_data_set_N folder");
}

TEST(CliVerify, MissingExtraAndMisnamedInputFilesAreNamed) {
  const fs::path dir = add_case("inputs");
  const fs::path set = dir / "test_data_set_0";
  fs::remove(set / "input_1.pb");
  expect_cannot_run(verify(dir), (set / "input_1.pb").string(), "missing: the model has 2 graph inputs (x, y)");
  // A gap: input_0 and input_2 (no graph input for it), input_1 absent.
  fs::copy_file(set / "input_0.pb", set / "input_2.pb");
  expect_cannot_run(verify(dir), (set / "input_2.pb").string(), "has no graph input to feed");
  fs::rename(set / "input_2.pb", set / "input_01.pb");
  expect_cannot_run(verify(dir), (set / "input_01.pb").string(), "not a numbered input file");
}

TEST(CliVerify, MissingAndExtraOutputFilesAreNamedBeforeRunning) {
  const fs::path dir = add_case("outputs");
  const fs::path set = dir / "test_data_set_0";
  fs::rename(set / "output_0.pb", set / "output_1.pb");
  expect_cannot_run(verify(dir), (set / "output_1.pb").string(), "has no graph output to feed");
  fs::remove(set / "output_1.pb");
  const RunResult r = verify(dir);
  expect_cannot_run(r, (set / "output_0.pb").string(), "missing");
  EXPECT_EQ(r.out.find("criterion"), std::string::npos) << "nothing may run: " << r.out;
}

TEST(CliVerify, DimsOrDtypeTheModelDoesNotDeclareAreNamed) {
  const fs::path dir = add_case("dims");
  const fs::path in = dir / "test_data_set_0" / "input_0.pb";
  write(in, float_tensor({3, 2}, 1).SerializeAsString());
  expect_cannot_run(verify(dir), in.string(), "dims 3x2 disagree with the model's input 'x' (2x3)");
  onnx::TensorProto longs;
  longs.set_data_type(onnx::TensorProto::INT64);
  longs.add_dims(2);
  longs.add_dims(3);
  for (int i = 0; i < 6; ++i) longs.add_int64_data(1);
  write(in, longs.SerializeAsString());
  expect_cannot_run(verify(dir), in.string(), "holds int64, the model's input 'x' is float32");
}

// Headers that claim what the bytes do not hold: refused from the header,
// before a tensor of the claimed size exists (2^40 float elements would be 4 TiB).
TEST(CliVerify, HeaderClaimsBeyondTheBytesAreRefusedBeforeAllocating) {
  const fs::path dir = add_case("claims");
  const fs::path in = dir / "test_data_set_0" / "input_0.pb";
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(int64_t(1) << 20);
  t.add_dims(int64_t(1) << 20);
  t.set_raw_data(std::string(24, '\0'));
  write(in, t.SerializeAsString());
  expect_cannot_run(verify(dir), in.string(), "raw_data holds 24 bytes; its header claims float32 1048576x1048576");

  t.clear_dims();
  t.add_dims(int64_t(1) << 62);
  t.add_dims(8);  // 2^65 elements: the product overflows int64
  write(in, t.SerializeAsString());
  expect_cannot_run(verify(dir), in.string(), "claim more than 2^63 elements");

  t.clear_dims();
  t.add_dims(-2);
  t.add_dims(-3);  // the product, 6, matches 24 bytes: each dim is checked
  write(in, t.SerializeAsString());
  expect_cannot_run(verify(dir), in.string(), "dim 0 is -2");

  t.clear_dims();
  t.add_dims(2);
  t.add_dims(3);
  t.set_raw_data(std::string(20, '\0'));  // 5 floats for 6
  write(in, t.SerializeAsString());
  expect_cannot_run(verify(dir), in.string(), "raw_data holds 20 bytes; its header claims float32 2x3 (6 elements, 24 bytes)");

  onnx::TensorProto typed = float_tensor({2, 3}, 1);
  typed.clear_float_data();
  for (int i = 0; i < 6; ++i) typed.add_int32_data(1);  // float values in int32_data
  write(in, typed.SerializeAsString());
  expect_cannot_run(verify(dir), in.string(), "values are not in float_data");
}

TEST(CliVerify, GarbageAndNonNumericTensorFilesAreNamed) {
  const fs::path dir = add_case("garbage");
  const fs::path in = dir / "test_data_set_0" / "input_0.pb";
  write(in, std::string("\x0a\xff\xff\xff\xff\x0f", 6));  // a length-delimited field longer than the file
  expect_cannot_run(verify(dir), in.string(), "not a TensorProto");
  write(in, std::string());  // parses as an empty TensorProto: no data type
  expect_cannot_run(verify(dir), in.string(), "unknown data_type 0");
  onnx::TensorProto s;
  s.set_data_type(onnx::TensorProto::STRING);
  s.add_string_data("hello");
  write(in, s.SerializeAsString());
  expect_cannot_run(verify(dir), in.string(), "a string tensor");
}

// A case of half_conv_model: input ones [1, 2, 5, 5]; expected output
// [1, 3, 3, 3], every element the float16 of bit pattern `expected_bits`.
fs::path half_conv_case(const std::string& name, int expected_bits) {
  const fs::path dir = fresh_case(name);
  write(dir / "model.onnx", half_conv_model().SerializeAsString());
  write(dir / "test_data_set_0" / "input_0.pb", float_tensor({1, 2, 5, 5}, 1).SerializeAsString());
  onnx::TensorProto y;
  y.set_data_type(onnx::TensorProto::FLOAT16);
  for (int64_t d : {1, 3, 3, 3}) y.add_dims(d);
  for (int i = 0; i < 27; ++i) y.add_int32_data(expected_bits);
  write(dir / "test_data_set_0" / "output_0.pb", y.SerializeAsString());
  return dir;
}

// A float16 Conv on the CPU: LibTorch 1.13 has no kernel ("slow_conv2d_cpu"
// not implemented for 'Half'), so the node runs in fp32, its inputs cast up and
// its output back to float16: verify passes (3x3x2 ones = 18, exact in
// float16) and says which op ran upcast; profile runs it in the model's own
// dtype, flags the row and says so once; with --dtype fp32 everything is fp32
// and nothing is upcast.
TEST(CliVerify, Float16ConvWithoutCpuKernelRunsUpcastAndSaysSo) {
  const fs::path dir = half_conv_case("half_conv", 0x4c80);  // 18.0 in float16
  const RunResult r = verify(dir);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("notice: ran in fp32 (no fp16 CPU kernel"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("): Conv x1\n"), std::string::npos) << r.out;

  const std::string quick =
      " --threads 1 --warmup 0 --warmup-time 0 --iters 2 --min-time 0 --max-time 0.5 -f json";
  const RunResult p = modelstat::test::run_modelstat_cli("profile " + (dir / "model.onnx").string() + quick);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const auto doc = nlohmann::json::parse(p.out);
  EXPECT_EQ(doc["context"]["dtype"], "fp16");
  ASSERT_EQ(doc["layers"].size(), 2u);
  EXPECT_FALSE(doc["layers"][0]["upcast_to_fp32"].get<bool>()) << "Cast has a float16 kernel";
  EXPECT_TRUE(doc["layers"][1]["upcast_to_fp32"].get<bool>()) << "Conv";
  int upcast_notices = 0;
  for (const auto& n : doc["notices"])
    if (n.get<std::string>().rfind("ran in fp32", 0) == 0) {
      ++upcast_notices;
      EXPECT_NE(n.get<std::string>().find("): Conv x1"), std::string::npos) << n;
    }
  EXPECT_EQ(upcast_notices, 1) << doc["notices"];

  const RunResult f = modelstat::test::run_modelstat_cli("profile " + (dir / "model.onnx").string() + quick +
                                                         " --dtype fp32");
  ASSERT_EQ(f.exit_code, 0) << f.err;
  const auto fp32 = nlohmann::json::parse(f.out);
  EXPECT_EQ(fp32["context"]["dtype"], "fp32");
  for (const auto& layer : fp32["layers"])
    EXPECT_FALSE(layer["upcast_to_fp32"].get<bool>()) << layer["op_type"];
  for (const auto& n : fp32["notices"])
    EXPECT_EQ(n.get<std::string>().find("ran in fp32"), std::string::npos) << n;
}

// A model holding float16 tensors is judged with float16's tolerance, 10 x
// its epsilon 2^-10 (rtol = atol = 0.009765625), not ONNX's 1e-3 / 1e-7: an
// expected 18.125 (0x4c88) against the exact 18 is within 0.0098 + 0.0098 *
// 18.125 = 0.187, outside 1e-7 + 1e-3 * 18.125 = 0.018. --rtol / --atol
// still rule when given. A float32 model keeps ONNX's tolerances.
TEST(CliVerify, Float16ModelIsJudgedWithFloat16Tolerances) {
  const fs::path dir = half_conv_case("half_conv_tolerance", 0x4c88);  // 18.125 in float16
  RunResult r = verify(dir);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("with rtol 0.00976562, atol 0.00976562 (the model computes in float16"),
            std::string::npos)
      << r.out;
  r = modelstat::test::run_modelstat_cli("verify " + dir.string() + " --rtol 1e-3 --atol 1e-7");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("with rtol 0.001, atol 1e-07 (given;"), std::string::npos) << r.out;

  const fs::path fp32 = fresh_case("add_tolerance");
  write(fp32 / "model.onnx", add_model().SerializeAsString());
  write(fp32 / "test_data_set_0" / "input_0.pb", float_tensor({2, 3}, 1).SerializeAsString());
  write(fp32 / "test_data_set_0" / "input_1.pb", float_tensor({2, 3}, 2).SerializeAsString());
  write(fp32 / "test_data_set_0" / "output_0.pb", float_tensor({2, 3}, 3).SerializeAsString());
  r = verify(fp32);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("with rtol 0.001, atol 1e-07 (ONNX's runner's tolerances"), std::string::npos)
      << r.out;
}

// A graph fed strings (Identity on a string input): neither verify nor
// profile can run it, and both say so with exit 2 and the value named.
TEST(CliVerify, StringInputCannotRun) {
  onnx::ModelProto m = opset13_model("text");
  onnx::GraphProto* g = m.mutable_graph();
  value_info(g->add_input(), "text", onnx::TensorProto::STRING, {2});
  value_info(g->add_output(), "same", onnx::TensorProto::STRING, {2});
  add_node(g, "id0", "Identity", {"text"}, "same");
  const fs::path dir = fresh_case("string_input");
  write(dir / "model.onnx", m.SerializeAsString());
  onnx::TensorProto s;
  s.set_data_type(onnx::TensorProto::STRING);
  s.add_dims(2);
  s.add_string_data("a");
  s.add_string_data("b");
  write(dir / "test_data_set_0" / "input_0.pb", s.SerializeAsString());
  write(dir / "test_data_set_0" / "output_0.pb", s.SerializeAsString());
  expect_cannot_run(verify(dir), "string value 'text'", "cannot run");

  const RunResult p = modelstat::test::run_modelstat_cli("profile " + (dir / "model.onnx").string() +
                                                         " --threads 1 --warmup 0 --iters 1 --min-time 0");
  EXPECT_EQ(p.exit_code, 2) << p.err;
  EXPECT_EQ(std::count(p.err.begin(), p.err.end(), '\n'), 1) << p.err;
  for (const char* part : {"node 'id0' (Identity)", "graph input 'text' is a string tensor", "tokenizer"})
    EXPECT_NE(p.err.find(part), std::string::npos) << part << " in " << p.err;
}

}  // namespace

namespace {

onnx::TensorProto float_values(const std::vector<float>& values) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(int64_t(values.size()));
  for (float v : values) t.add_float_data(v);
  return t;
}

}  // namespace

// The max rel diff skips elements whose expected value is within atol of 0:
// an expected 0 met by 5e-8 passes on atol, and dividing by it gave a "max
// rel diff" of 4e+30 that said nothing. The element at 2 (expected 2.001,
// got 2) is the real relative difference: 0.001 / 2.001.
TEST(CliVerify, MaxRelDiffIgnoresExpectedZeros) {
  onnx::ModelProto m = opset13_model("identity");
  value_info(m.mutable_graph()->add_input(), "x", onnx::TensorProto::FLOAT, {3});
  value_info(m.mutable_graph()->add_output(), "y", onnx::TensorProto::FLOAT, {3});
  add_node(m.mutable_graph(), "id0", "Identity", {"x"}, "y");
  const fs::path dir = fresh_case("rel_diff_zero");
  write(dir / "model.onnx", m.SerializeAsString());
  write(dir / "test_data_set_0" / "input_0.pb", float_values({5e-8f, 1.0f, 2.0f}).SerializeAsString());
  write(dir / "test_data_set_0" / "output_0.pb", float_values({0.0f, 1.0f, 2.001f}).SerializeAsString());
  const RunResult r = verify(dir);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;  // within rtol 1e-3 and atol 1e-7
  const size_t at = r.out.find("max rel diff ", r.out.find("output 0 'y'"));  // the output's line, not the legend
  ASSERT_NE(at, std::string::npos) << r.out;
  const double rel = std::stod(r.out.substr(at + 13));
  EXPECT_NEAR(rel, 0.001 / 2.001, 1e-6) << r.out;
}

// ---- quantised models: differences requantisation explains ----

// x (float [n]) -> QuantizeLinear(scale 0.5, zero point 0, uint8) ->
// DequantizeLinear -> y; with `scaled`, y = that * 1 (a float output with no
// quantisation step of its own).
onnx::ModelProto quant_dequant_model(int64_t n, bool scaled) {
  onnx::ModelProto m = opset13_model("qdq");
  onnx::GraphProto* g = m.mutable_graph();
  value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {n});
  value_info(g->add_output(), "y", onnx::TensorProto::FLOAT, {n});
  modelstat::test::float_init(g, "s", {}, {0.5f});
  modelstat::test::int32_data_init(g, "zp", onnx::TensorProto::UINT8, {}, {0});
  add_node(g, "q", "QuantizeLinear", {"x", "s", "zp"}, "xq");
  if (!scaled) {
    add_node(g, "dq", "DequantizeLinear", {"xq", "s", "zp"}, "y");
    return m;
  }
  modelstat::test::float_init(g, "one", {}, {1.0f});
  add_node(g, "dq", "DequantizeLinear", {"xq", "s", "zp"}, "xd");
  add_node(g, "mul", "Mul", {"xd", "one"}, "y");
  return m;
}

fs::path quant_case(const std::string& name, bool scaled, const std::vector<float>& x, const std::vector<float>& y) {
  const fs::path dir = fresh_case(name);
  write(dir / "model.onnx", quant_dequant_model(int64_t(x.size()), scaled).SerializeAsString());
  write(dir / "test_data_set_0" / "input_0.pb", float_values(x).SerializeAsString());
  write(dir / "test_data_set_0" / "output_0.pb", float_values(y).SerializeAsString());
  return dir;
}

// x/0.5 = 0.5, 1.5, 2.5, ...: every value on a rounding boundary. ONNX rounds
// half to even (0, 2, 2, 4, ...); the reference here rounds the first 8 half
// away from zero instead, as another runtime's slightly different arithmetic
// could: those elements are one step (0.5) off.
TEST(CliVerifyQuantised, OneStepDifferencesAtRoundingBoundariesAreExplained) {
  std::vector<float> x, y;
  for (int i = 0; i < 32; ++i) {
    x.push_back(0.25f + 0.5f * float(i));             // x / 0.5 = i + 0.5
    const int even = (i % 2 == 0) ? i : i + 1;         // half to even
    y.push_back(0.5f * float(i < 8 ? i + 1 : even));  // half away from zero for the first 8
  }
  const RunResult r = verify(quant_case("quant_one_step", false, x, y));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("MISMATCH: 4 of 32"), std::string::npos) << r.out;  // i = 0, 2, 4, 6 differ
  EXPECT_NE(r.out.find("4 of 4 differing elements (100%) are exactly one quantisation step (0.5) off"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("PASS (quantised model)"), std::string::npos) << r.out;
}

// The same boundary inputs through a float Mul (no step of its own): judged by
// the model's own rounding sensitivity. Inputs one ulp apart flip about half
// of the 32 elements by a step; the reference differs on 4: explained.
TEST(CliVerifyQuantised, DifferencesWithinTheModelsRoundingSensitivityAreExplained) {
  std::vector<float> x, y;
  for (int i = 0; i < 32; ++i) {
    x.push_back(0.25f + 0.5f * float(i));
    const int even = (i % 2 == 0) ? i : i + 1;
    y.push_back(0.5f * float(i < 8 ? i + 1 : even));
  }
  const RunResult r = verify(quant_case("quant_sensitivity", true, x, y));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("no quantisation step of its own"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("within the model's own rounding sensitivity"), std::string::npos) << r.out;
}

// Values far from any rounding boundary (x/0.5 = i + 0.2): one ulp moves
// nothing, so a reference that differs is not explained and verify fails.
TEST(CliVerifyQuantised, DifferencesAwayFromBoundariesAreNotExplained) {
  std::vector<float> x, y;
  for (int i = 0; i < 32; ++i) {
    x.push_back(0.1f + 0.5f * float(i));
    y.push_back(0.5f * float(i) + (i == 5 ? 1.5f : 0.0f));  // element 5 three steps off
  }
  const RunResult r = verify(quant_case("quant_unexplained", true, x, y));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("not explained by requantisation"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL: 1 element"), std::string::npos) << r.out;
}

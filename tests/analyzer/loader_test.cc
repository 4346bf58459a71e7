// Loader internals: the payload stripper and the
// --input / --dim parsers.
#include "analyzer/loader/loader.hpp"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "modelstat/analysis.hpp"
#include "modelstat/error.hpp"
#include "profiler/onnx_builder.hpp"

namespace {

using modelstat::Error;

onnx::ModelProto model_with_initializers() {
  onnx::ModelProto m = modelstat::test::new_model(13);
  auto* g = m.mutable_graph();
  auto* big = g->add_initializer();
  big->set_name("big");
  big->set_data_type(onnx::TensorProto::FLOAT);
  big->add_dims(100);
  big->add_dims(100);
  big->set_raw_data(std::string(100 * 100 * 4, '\x01'));
  auto* small = g->add_initializer();
  small->set_name("shape");
  small->set_data_type(onnx::TensorProto::INT64);
  small->add_dims(2);
  small->add_int64_data(1);
  small->add_int64_data(-1);
  // A Constant node holding a large tensor: stripped too.
  auto* n = g->add_node();
  n->set_op_type("Constant");
  n->add_output("c");
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  a->mutable_t()->add_dims(5000);
  for (int i = 0; i < 5000; ++i) a->mutable_t()->add_float_data(1.0f);
  return m;
}

TEST(WireStrip, DropsLargePayloadsKeepsSmallOnesAndStructure) {
  const std::string bytes = model_with_initializers().SerializeAsString();
  const auto stripped =
      modelstat::loader::strip_tensor_payloads(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), 4096);
  ASSERT_EQ(stripped.tensors.size(), 2u);
  EXPECT_EQ(stripped.bytes_stripped, 100 * 100 * 4 + 5000 * 4);
  EXPECT_LT(stripped.bytes.size(), 1000u);  // 40 KB + 20 KB of payload gone
  onnx::ModelProto parsed;
  ASSERT_TRUE(parsed.ParseFromString(stripped.bytes));
  ASSERT_EQ(parsed.graph().initializer_size(), 2);
  const auto& big = parsed.graph().initializer(0);
  EXPECT_EQ(big.name(), "big");
  EXPECT_EQ(big.dims_size(), 2);
  EXPECT_TRUE(big.raw_data().empty());
  EXPECT_EQ(big.external_data_size(), 0);  // nothing is added to the message
  // The table, in wire order (protobuf writes nodes, field 1, before
  // initializers, field 5): graph (field 7) -> initializer #0 (field 5), its
  // raw_data (field 9) at the payload's bytes in the original buffer.
  const auto& entry = stripped.tensors[1];
  ASSERT_EQ(entry.path.size(), 2u);
  EXPECT_EQ(entry.path[0].field, 7u);
  EXPECT_EQ(entry.path[1].field, 5u);
  EXPECT_EQ(entry.path[1].index, 0u);
  ASSERT_EQ(entry.payload.size(), 1u);
  EXPECT_EQ(entry.payload[0].field, 9);
  EXPECT_EQ(entry.payload[0].length, 100 * 100 * 4);
  EXPECT_EQ(bytes.substr(size_t(entry.payload[0].offset), size_t(entry.payload[0].length)),
            std::string(100 * 100 * 4, '\x01'));
  const auto& small = parsed.graph().initializer(1);
  ASSERT_EQ(small.int64_data_size(), 2);  // shape constants keep their values
  EXPECT_EQ(small.int64_data(1), -1);
  const auto& t = parsed.graph().node(0).attribute(0).t();
  EXPECT_EQ(t.float_data_size(), 0);
  EXPECT_EQ(t.dims(0), 5000);
  // The Constant's tensor: graph -> node #0 (field 1) -> attribute #0 (field 5) -> t (field 5).
  const auto& constant = stripped.tensors[0];
  ASSERT_EQ(constant.path.size(), 4u);
  EXPECT_EQ(constant.path[1].field, 1u);
  EXPECT_EQ(constant.path[2].field, 5u);
  EXPECT_EQ(constant.path[3].field, 5u);
  ASSERT_EQ(constant.payload.size(), 1u);
  EXPECT_EQ(constant.payload[0].field, 4);  // packed float_data
  EXPECT_EQ(constant.payload[0].length, 5000 * 4);
}

// Appends a varint / a tag to hand-made wire bytes.
void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(char(uint8_t(v) | 0x80));
    v >>= 7;
  }
  out.push_back(char(v));
}
void put_bytes_field(std::string& out, uint32_t field, const std::string& bytes) {
  put_varint(out, (uint64_t(field) << 3) | 2);
  put_varint(out, bytes.size());
  out += bytes;
}

TEST(WireStrip, UnpackedRepeatedPayloadIsOneFlagPerTensor) {
  // A tensor whose 3000 floats are written unpacked (one tag per element:
  // legal protobuf, written by old exporters).
  onnx::TensorProto header;
  header.set_name("w");
  header.set_data_type(onnx::TensorProto::FLOAT);
  header.add_dims(3000);
  std::string tensor = header.SerializeAsString();
  for (int i = 0; i < 3000; ++i) {
    put_varint(tensor, (4 << 3) | 5);  // float_data, fixed32
    tensor.append("\0\0\x80\x3f", 4);
  }
  std::string graph;
  put_bytes_field(graph, 5, tensor);
  std::string model;
  put_varint(model, (1 << 3) | 0);  // ir_version 8
  put_varint(model, 8);
  put_bytes_field(model, 7, graph);
  const auto stripped =
      modelstat::loader::strip_tensor_payloads(reinterpret_cast<const uint8_t*>(model.data()), model.size(), 4096);
  ASSERT_EQ(stripped.tensors.size(), 1u);
  EXPECT_TRUE(stripped.tensors[0].unpacked);
  EXPECT_TRUE(stripped.tensors[0].payload.empty());
  EXPECT_EQ(stripped.bytes_stripped, 3000 * 5);
  EXPECT_LT(stripped.bytes.size(), 100u);  // not one entry per element
}

TEST(WireStrip, DuplicatedSingularFieldAboveAStrippedTensorIsRefused) {
  // Two `graph` fields: protobuf would merge them, shifting the second one's
  // initializers behind the first one's.
  const std::string once = model_with_initializers().SerializeAsString();
  onnx::ModelProto graph_only;
  *graph_only.mutable_graph() = model_with_initializers().graph();
  const std::string twice = once + graph_only.SerializeAsString();
  try {
    modelstat::loader::strip_tensor_payloads(reinterpret_cast<const uint8_t*>(twice.data()), twice.size(), 4096);
    FAIL() << "accepted a duplicated graph field";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("appears twice"), std::string::npos) << e.what();
  }
  // Without anything stripped below it, the duplicate is the parser's business.
  EXPECT_NO_THROW(modelstat::loader::strip_tensor_payloads(reinterpret_cast<const uint8_t*>(twice.data()),
                                                           twice.size(), size_t(1) << 30));
}

// The out-of-band table must reach the right tensor wherever it sits: nodes
// the loader reorders (listed out of topological order), a Constant inside
// an If branch, an initializer of that branch. Each payload has its own byte
// value so a mix-up shows.
TEST(WireStrip, PayloadTableFollowsReorderedNodesAndSubgraphs) {
  auto big_tensor = [](onnx::TensorProto* t, const std::string& name, char fill) {
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(2048);
    t->set_raw_data(std::string(2048 * 4, fill));
  };
  auto constant = [&](onnx::GraphProto* g, const std::string& out, char fill) {
    auto* n = g->add_node();
    n->set_op_type("Constant");
    n->add_output(out);
    auto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    big_tensor(a->mutable_t(), "", fill);
  };
  onnx::ModelProto m = modelstat::test::new_model(13);
  auto* g = m.mutable_graph();
  auto* cond = g->add_input();
  cond->set_name("cond");
  cond->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
  cond->mutable_type()->mutable_tensor_type()->mutable_shape();
  // Listed consumer first: the loader must move the producers ahead of it.
  auto* add = g->add_node();
  add->set_op_type("Add");
  add->add_input("c1");
  add->add_input("c2");
  add->add_output("sum");
  auto* iff = g->add_node();
  iff->set_op_type("If");
  iff->add_input("cond");
  iff->add_output("branch");
  for (const char* name : {"then_branch", "else_branch"}) {
    auto* a = iff->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* sub = a->mutable_g();
    sub->set_name(name);
    const bool then = std::string(name) == "then_branch";
    big_tensor(sub->add_initializer(), then ? "then_w" : "else_w", then ? '\x05' : '\x06');
    constant(sub, then ? "then_c" : "else_c", then ? '\x07' : '\x08');
    auto* n = sub->add_node();
    n->set_op_type("Add");
    n->add_input(then ? "then_w" : "else_w");
    n->add_input(then ? "then_c" : "else_c");
    n->add_output(then ? "then_out" : "else_out");
    auto* o = sub->add_output();
    o->set_name(then ? "then_out" : "else_out");
    o->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  constant(g, "c2", '\x02');
  constant(g, "c1", '\x01');
  big_tensor(g->add_initializer(), "w", '\x09');
  for (const char* out : {"sum", "branch"}) {
    auto* o = g->add_output();
    o->set_name(out);
    o->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  const std::string bytes = m.SerializeAsString();
  modelstat::LoadOptions options;
  const modelstat::Model model =
      modelstat::loader::load_model_bytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), options, "", "");
  ASSERT_EQ(model.graph.nodes.back().op_type, "Add");  // reordered: moved behind its producers
  // Each stripped tensor's range holds its own fill byte.
  auto fill_of = [&](const modelstat::Tensor& t) -> int {
    if (t.storage().bytes.payload.size() != 1 || t.storage().bytes.payload[0].length != 2048 * 4) return -1;
    const std::string range = bytes.substr(size_t(t.storage().bytes.payload[0].offset), size_t(t.storage().bytes.payload[0].length));
    return range == std::string(range.size(), range[0]) ? int(range[0]) : -2;
  };
  auto tensor = [](const modelstat::Graph& graph, const std::string& name) -> const modelstat::Tensor& {
    for (const auto& t : graph.tensors)
      if (t.name == name) return t;
    throw std::runtime_error("no tensor " + name);
  };
  EXPECT_EQ(fill_of(tensor(model.graph, "c1")), 1);
  EXPECT_EQ(fill_of(tensor(model.graph, "c2")), 2);
  EXPECT_EQ(fill_of(tensor(model.graph, "w")), 9);
  const modelstat::Node* if_node = nullptr;
  for (const auto& n : model.graph.nodes)
    if (n.op_type == "If") if_node = &n;
  ASSERT_NE(if_node, nullptr);
  const auto subs = if_node->subgraphs();
  ASSERT_EQ(subs.size(), 2u);
  for (const auto& sub : subs) {
    const bool then = sub->name == "then_branch";
    EXPECT_EQ(fill_of(tensor(*sub, then ? "then_w" : "else_w")), then ? 5 : 6) << sub->name;
    EXPECT_EQ(fill_of(tensor(*sub, then ? "then_c" : "else_c")), then ? 7 : 8) << sub->name;
  }
}

TEST(WireStrip, TruncatedInputIsAnInputError) {
  const std::string bytes = model_with_initializers().SerializeAsString();
  for (size_t cut : {size_t(1), size_t(7), bytes.size() / 2, bytes.size() - 1}) {
    try {
      modelstat::loader::strip_tensor_payloads(reinterpret_cast<const uint8_t*>(bytes.data()), cut, 4096);
      // Some cuts land on a field boundary and are valid wire data; the
      // protobuf parse after stripping then decides. Nothing may crash.
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), modelstat::ErrorKind::Input);
      EXPECT_NE(std::string(e.what()).find("not a valid ONNX file"), std::string::npos);
    }
  }
}

TEST(WireStrip, DeepNestingIsRefused) {
  onnx::GraphProto inner;
  inner.set_name("leaf");
  for (int depth = 0; depth < 80; ++depth) {
    onnx::GraphProto outer;
    auto* n = outer.add_node();
    n->set_op_type("If");
    auto* a = n->add_attribute();
    a->set_name("then_branch");
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = inner;
    inner = outer;
  }
  onnx::ModelProto m;
  m.set_ir_version(8);
  *m.mutable_graph() = inner;
  const std::string bytes = m.SerializeAsString();
  EXPECT_THROW(modelstat::loader::strip_tensor_payloads(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                                                        4096),
               Error);
}

TEST(ShapeSpec, ParsesInputsAndDims) {
  modelstat::LoadOptions o;
  modelstat::parse_input_spec("pixel_values:8x3x224x224", o);
  modelstat::parse_input_spec("ns::ids:2,128", o);  // the last ':' splits name and dims
  modelstat::parse_dim_spec("batch=8", o);
  EXPECT_EQ(o.input_shapes["pixel_values"], (std::vector<int64_t>{8, 3, 224, 224}));
  EXPECT_EQ(o.input_shapes["ns::ids"], (std::vector<int64_t>{2, 128}));
  EXPECT_EQ(o.dim_values["batch"], 8);
}

TEST(ShapeSpec, RejectsBadValues) {
  modelstat::LoadOptions o;
  for (const char* bad : {"x", ":1x2", "x:1x-2", "x:1xx2", "x:abc", "x:99999999999999999999999"})
    EXPECT_THROW(modelstat::parse_input_spec(bad, o), Error) << bad;
  for (const char* bad : {"batch", "=3", "batch=-1", "batch=1e3", "batch=2000000000000000"})
    EXPECT_THROW(modelstat::parse_dim_spec(bad, o), Error) << bad;
}

// A float input NAME of DIMS (symbolic_value_info's text), read by a Relu
// whose output is a graph output.
void relu_of_input(onnx::GraphProto* g, const std::string& name, std::initializer_list<const char*> dims) {
  modelstat::test::symbolic_value_info(g->add_input(), name, onnx::TensorProto::FLOAT, dims);
  modelstat::test::add_node(g, "Relu", {name}, {name + "_out"});
  g->add_output()->set_name(name + "_out");
}

// --default-batch binds the symbol that leads an input's dims wherever it
// occurs: x is batch x 4, a recurrent state 2 x batch x 8 (batch not
// leading) and a mask seq x batch, whose leading seq is a batch symbol of
// its own. Each input is named once in the notice.
TEST(InputBinding, DefaultBatchBindsTheSymbolInEveryInput) {
  onnx::ModelProto m = modelstat::test::new_model(13);
  onnx::GraphProto* g = m.mutable_graph();
  relu_of_input(g, "x", {"batch", "4"});
  relu_of_input(g, "state", {"2", "batch", "8"});
  relu_of_input(g, "mask", {"seq", "batch"});
  const std::string bytes = m.SerializeAsString();
  modelstat::LoadOptions options;
  options.default_batch = 3;
  const modelstat::AnalysisResult r = modelstat::analyze_buffer(bytes.data(), bytes.size(), options);
  ASSERT_EQ(r.nodes.size(), 3u);
  EXPECT_EQ(r.nodes[0].output_shapes.at(0), "3x4");
  EXPECT_EQ(r.nodes[1].output_shapes.at(0), "2x3x8");
  EXPECT_EQ(r.nodes[2].output_shapes.at(0), "3x3");  // seq leads mask: a batch symbol too
  EXPECT_EQ(r.totals.nodes_exact, 3);
  std::string notices;
  for (const auto& n : r.notices) notices += n + "\n";
  EXPECT_NE(notices.find("batch dim 'batch' of 3 inputs ('x', ...) is unbound: using 3 (set it with --dim batch=N)"),
            std::string::npos)
      << notices;
  EXPECT_NE(notices.find("batch dim 'seq' of input 'mask' is unbound: using 3"), std::string::npos) << notices;

  // --dim binds one symbol; the other still defaults.
  options.dim_values["batch"] = 5;
  const modelstat::AnalysisResult bound = modelstat::analyze_buffer(bytes.data(), bytes.size(), options);
  EXPECT_EQ(bound.nodes[1].output_shapes.at(0), "2x5x8");
  EXPECT_EQ(bound.nodes[2].output_shapes.at(0), "3x5");
}

// Params count Constant tensors of rank 1 and up, a one-element [1] bias
// included; a scalar (rank 0) Constant is a literal, not a weight. Here:
// [1] (1) + [3] (3) = 4 params; the scalar 0.5 adds none.
TEST(Params, OneElementConstantTensorIsAWeightAScalarIsNot) {
  onnx::ModelProto m = modelstat::test::new_model(13);
  auto* g = m.mutable_graph();
  auto* x = g->add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(3);
  auto constant = [g](const char* name, std::vector<int64_t> dims, std::vector<float> values) {
    auto* n = g->add_node();
    n->set_op_type("Constant");
    n->add_output(name);
    auto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) a->mutable_t()->add_dims(d);
    for (float v : values) a->mutable_t()->add_float_data(v);
  };
  constant("one", {1}, {2.0f});
  constant("three", {3}, {1.0f, 2.0f, 3.0f});
  constant("half", {}, {0.5f});
  const char* prev = "x";
  int k = 0;
  for (const char* c : {"one", "three", "half"}) {
    auto* n = g->add_node();
    n->set_op_type("Mul");
    n->add_input(prev);
    n->add_input(c);
    n->add_output("y" + std::to_string(k));
    prev = n->output(0).c_str();
    ++k;
  }
  g->add_output()->set_name("y2");
  const std::string bytes = m.SerializeAsString();
  const modelstat::AnalysisResult r = modelstat::analyze_buffer(bytes.data(), bytes.size(), {});
  EXPECT_EQ(r.totals.params, 4);
}

// Running a model needs every input dim: a command that runs it (profile,
// report: require_bound_inputs) refuses the model once, naming every input
// left unknown and the flags that bind them, shell-quoted where a name needs
// it. The analysis counts around them and says so in a notice.
TEST(InputBinding, RunningNeedsEveryInputDimAndNamesThemAllAtOnce) {
  onnx::ModelProto m = modelstat::test::new_model(13);
  onnx::GraphProto* g = m.mutable_graph();
  relu_of_input(g, "x", {"1", "seq"});
  relu_of_input(g, "image in", {"1", "?"});
  const std::string bytes = m.SerializeAsString();
  modelstat::LoadOptions options;
  const modelstat::AnalysisResult r = modelstat::analyze_buffer(bytes.data(), bytes.size(), options);
  std::string notices;
  for (const auto& n : r.notices) notices += n + "\n";
  EXPECT_NE(notices.find("bind them with --dim seq=N; --input 'image in:1xD1' (dim 1 of input 'image in' has no name"),
            std::string::npos)
      << notices;

  options.require_bound_inputs = true;
  try {
    modelstat::analyze_buffer(bytes.data(), bytes.size(), options);
    ADD_FAILURE() << "an input dim left unknown must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), modelstat::ErrorKind::Input);
    EXPECT_EQ(std::string(e.message()),
              "graph inputs 'x' (1xseq), 'image in' (1x?) have unknown dims, and running the model needs them all: "
              "bind them with --dim seq=N; --input 'image in:1xD1' (dim 1 of input 'image in' has no name: only "
              "--input binds it)");
  }
  options.dim_values["seq"] = 7;
  options.input_shapes["image in"] = {1, 5};
  EXPECT_NO_THROW(modelstat::analyze_buffer(bytes.data(), bytes.size(), options));
}

}  // namespace

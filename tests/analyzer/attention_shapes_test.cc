// Output shapes of the attention records' shape rules (analyzer/cost/attention.cc):
// ONNX 1.12 has no schema for these ops, so the output and KV-cache shapes
// (present, present_key, present_value) come from the records alone. The
// com.microsoft ops are checked through the analyzer on one-node models; the
// opset-23 ONNX ops (Attention, RotaryEmbedding), whose opset the loader does
// not load yet, by running the record's shape rule on an ONNX inference context.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "analyzer/cost/cost_rule.hpp"
#include "modelstat/analysis.hpp"
#include "profiler/onnx_builder.hpp"

namespace modelstat {
namespace {

// A dim: a number, or a symbol (dim_param).
using D = std::variant<int64_t, const char*>;

void set_type(onnx::TypeProto* type, int32_t elem_type, const std::vector<D>& dims) {
  auto* tt = type->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  auto* shape = tt->mutable_shape();
  for (const D& d : dims) {
    if (std::holds_alternative<int64_t>(d))
      shape->add_dim()->set_dim_value(std::get<int64_t>(d));
    else
      shape->add_dim()->set_dim_param(std::get<const char*>(d));
  }
}

struct Input {
  std::string name;  // "" for an omitted optional input
  std::vector<D> dims;
  int32_t elem_type = onnx::TensorProto::FLOAT;
};

// One node of `domain`.`op` reading `inputs` (graph inputs) and writing `outputs`.
onnx::ModelProto one_node(const char* domain, const char* op, const std::vector<Input>& inputs,
                          const std::vector<std::string>& outputs,
                          const std::vector<std::pair<const char*, int64_t>>& attrs) {
  onnx::ModelProto m = test::new_model(17, domain);
  onnx::GraphProto* g = m.mutable_graph();
  onnx::NodeProto* n = test::add_node(g, op, {}, {});
  n->set_domain(domain);
  for (const Input& in : inputs) {
    n->add_input(in.name);
    if (in.name.empty()) continue;
    auto* v = g->add_input();
    v->set_name(in.name);
    set_type(v->mutable_type(), in.elem_type, in.dims);
  }
  for (const auto& out : outputs) {
    n->add_output(out);
    g->add_output()->set_name(out);
  }
  for (const auto& [name, v] : attrs) test::int_attr(n, name, v);
  return m;
}

std::shared_ptr<const Model> load(const onnx::ModelProto& m) {
  const std::string bytes = m.SerializeAsString();
  return analyze_buffer(bytes.data(), bytes.size(), LoadOptions{}).model;
}

std::string shape_of(const Model& model, const std::string& tensor) {
  const int t = model.graph.find_tensor(tensor);
  return t < 0 ? "absent" : model.graph.tensors[size_t(t)].shape.to_string();
}

constexpr int32_t kInt32 = onnx::TensorProto::INT32;

TEST(AttentionShapes, ContribAttentionPresentAppendsToPast) {
  // GPT-2 step: 5 new tokens after 3 past ones, 2 heads of 4: present [2, B, N, 3 + 5, 4].
  const auto model =
      load(one_node("com.microsoft", "Attention",
                    {{"x", {2, 5, 8}}, {"w", {8, 24}}, {"b", {24}}, {"", {}}, {"past", {2, 2, 2, 3, 4}}},
                    {"y", "present"}, {{"num_heads", 2}, {"unidirectional", 1}}));
  EXPECT_EQ(shape_of(*model, "y"), "2x5x8");
  EXPECT_EQ(shape_of(*model, "present"), "2x2x2x8x4");
}

TEST(AttentionShapes, ContribAttentionKeepsSymbolicDims) {
  // No past: present's sequence dim is the input's symbolic one; v_hidden from qkv_hidden_sizes.
  auto m = one_node("com.microsoft", "Attention", {{"x", {1, "seq", 8}}, {"w", {8, 28}}}, {"y", "present"},
                    {{"num_heads", 2}});
  auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("qkv_hidden_sizes");
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : {8, 8, 12}) a->add_ints(v);
  const auto model = load(m);
  EXPECT_EQ(shape_of(*model, "y"), "1xseqx12");
  EXPECT_EQ(shape_of(*model, "present"), "2x1x2xseqx4");
}

TEST(AttentionShapes, MultiHeadAttentionPresentKeyAndValue) {
  // 3 new keys after 4 past ones; value heads of 6.
  const auto model = load(one_node("com.microsoft", "MultiHeadAttention",
                                   {{"q", {1, 3, 8}},
                                    {"k", {1, 3, 8}},
                                    {"v", {1, 3, 12}},
                                    {"", {}},
                                    {"", {}},
                                    {"", {}},
                                    {"past_k", {1, 2, 4, 4}},
                                    {"past_v", {1, 2, 4, 6}}},
                                   {"y", "present_k", "present_v"}, {{"num_heads", 2}}));
  EXPECT_EQ(shape_of(*model, "y"), "1x3x12");
  EXPECT_EQ(shape_of(*model, "present_k"), "1x2x7x4");
  EXPECT_EQ(shape_of(*model, "present_v"), "1x2x7x6");
}

TEST(AttentionShapes, MultiHeadAttentionCrossAttentionWithBnshKeys) {
  // Key/value already [B, N, L, H] (encoder output cached): used as they are.
  const auto model = load(one_node("com.microsoft", "MultiHeadAttention",
                                   {{"q", {1, "s", 8}}, {"k", {1, 2, 10, 4}}, {"v", {1, 2, 10, 4}}}, {"y"},
                                   {{"num_heads", 2}}));
  EXPECT_EQ(shape_of(*model, "y"), "1xsx8");
}

TEST(AttentionShapes, GroupQueryAttentionPresentIsPastPlusNew) {
  // 4 query heads and 2 KV heads of 8: 2 new tokens after 5 past ones.
  const auto model = load(one_node("com.microsoft", "GroupQueryAttention",
                                   {{"q", {1, 2, 32}},
                                    {"k", {1, 2, 16}},
                                    {"v", {1, 2, 16}},
                                    {"past_k", {1, 2, 5, 8}},
                                    {"past_v", {1, 2, 5, 8}},
                                    {"seqlens_k", {1}, kInt32},
                                    {"total", {}, kInt32}},
                                   {"y", "present_k", "present_v"}, {{"num_heads", 4}, {"kv_num_heads", 2}}));
  EXPECT_EQ(shape_of(*model, "y"), "1x2x32");
  EXPECT_EQ(shape_of(*model, "present_k"), "1x2x7x8");
  EXPECT_EQ(shape_of(*model, "present_v"), "1x2x7x8");
}

TEST(AttentionShapes, GroupQueryAttentionSharedBufferKeepsItsRows) {
  // A past buffer of 16 rows (max_sequence_length) and a constant
  // total_sequence_length 7: present keeps max(16, 7) = 16 rows. Packed QKV:
  // (4 + 2*2) heads of 8 = 64 columns.
  auto m = one_node("com.microsoft", "GroupQueryAttention",
                    {{"qkv", {1, 1, 64}},
                     {"", {}},
                     {"", {}},
                     {"past_k", {1, 2, 16, 8}},
                     {"past_v", {1, 2, 16, 8}},
                     {"seqlens_k", {1}, kInt32},
                     {"total", {}, kInt32}},
                    {"y", "present_k", "present_v"}, {{"num_heads", 4}, {"kv_num_heads", 2}});
  auto* g = m.mutable_graph();
  g->mutable_input()->erase(g->mutable_input()->end() - 1);  // total: an initializer instead
  auto* total = g->add_initializer();
  total->set_name("total");
  total->set_data_type(onnx::TensorProto::INT32);
  total->add_int32_data(7);
  const auto model = load(m);
  EXPECT_EQ(shape_of(*model, "y"), "1x1x32");
  EXPECT_EQ(shape_of(*model, "present_k"), "1x2x16x8");
}

TEST(AttentionShapes, ContribRotaryEmbeddingKeepsItsInputShape) {
  const auto model = load(one_node("com.microsoft", "RotaryEmbedding",
                                   {{"x", {1, "seq", 16}},
                                    {"pos", {1, "seq"}, onnx::TensorProto::INT64},
                                    {"cos", {32, 4}},
                                    {"sin", {32, 4}}},
                                   {"y"}, {{"num_heads", 2}}));
  EXPECT_EQ(shape_of(*model, "y"), "1xseqx16");
}

// ---- opset 23 (ai.onnx): the record's rule on an ONNX inference context ----------

std::vector<std::string> run_rule(const char* op, const std::vector<Input>& inputs, size_t num_outputs,
                                  const std::vector<std::pair<const char*, int64_t>>& attrs) {
  const cost::OpRecord* record = cost::find_rule("", op, 23);
  if (!record || !record->traits.shape_rule) return {"no shape rule"};
  onnx::NodeProto n;
  n.set_op_type(op);
  std::vector<onnx::TypeProto> types(inputs.size());
  std::unordered_map<std::string, onnx::TypeProto*> by_name;
  for (size_t i = 0; i < inputs.size(); ++i) {
    n.add_input(inputs[i].name);
    if (inputs[i].name.empty()) continue;
    set_type(&types[i], inputs[i].elem_type, inputs[i].dims);
    by_name[inputs[i].name] = &types[i];
  }
  for (size_t i = 0; i < num_outputs; ++i) n.add_output("out" + std::to_string(i));
  for (const auto& [name, v] : attrs) test::int_attr(&n, name, v);
  onnx::shape_inference::InferenceContextImpl ctx(n, by_name, {}, {});
  record->traits.shape_rule(ctx);
  std::vector<std::string> shapes;
  for (size_t i = 0; i < num_outputs; ++i) {
    const onnx::TypeProto* t = ctx.getOutputType(i);
    std::string s;
    for (const auto& d : t->tensor_type().shape().dim())
      s += (s.empty() ? "" : "x") + (d.has_dim_value()       ? std::to_string(d.dim_value())
                                     : d.dim_param().empty() ? "?"
                                                             : d.dim_param());
    shapes.push_back(s);
  }
  return shapes;
}

TEST(AttentionShapes, OnnxAttention23FourDimensional) {
  // Q [B, Nq, S, H], K/V [B, Nkv, L, H/Hv], past 6 rows: Y [B, Nq, S, Hv], present [B, Nkv, 6 + L, .],
  // qk [B, Nq, S, T].
  EXPECT_EQ(run_rule("Attention",
                     {{"q", {2, 8, "s", 16}},
                      {"k", {2, 2, 3, 16}},
                      {"v", {2, 2, 3, 32}},
                      {"", {}},
                      {"pk", {2, 2, 6, 16}},
                      {"pv", {2, 2, 6, 32}}},
                     4, {}),
            (std::vector<std::string>{"2x8xsx32", "2x2x9x16", "2x2x9x32", "2x8xsx9"}));
}

TEST(AttentionShapes, OnnxAttention23ThreeDimensional) {
  // Q [B, S, 4*8], K [B, L, 2*8], V [B, L, 2*6]: Y [B, S, 4*6]; no past: T = L (symbolic kept).
  EXPECT_EQ(run_rule("Attention", {{"q", {1, 5, 32}}, {"k", {1, "kv", 16}}, {"v", {1, "kv", 12}}}, 3,
                     {{"q_num_heads", 4}, {"kv_num_heads", 2}}),
            (std::vector<std::string>{"1x5x24", "1x2xkvx8", "1x2xkvx6"}));
}

TEST(AttentionShapes, OnnxRotaryEmbedding23KeepsItsInputShape) {
  EXPECT_EQ(
      run_rule("RotaryEmbedding", {{"x", {1, 4, "s", 8}}, {"cos", {1, "s", 4}}, {"sin", {1, "s", 4}}}, 1, {}),
      (std::vector<std::string>{"1x4xsx8"}));
}

}  // namespace
}  // namespace modelstat

// Hand-built ONNX models for the tests (the profiler's, and the analyzer's
// that need an ONNX file rather than an IR graph): small builders over the ONNX protobuf, and the
// control-flow models several test files run (the executor's hooks, the subgraph pass of the protocol, the
// `modelstat profile` command line).
#pragma once

// ONNX_NAMESPACE and ONNX_ML come with the onnx_proto target this binary links.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

namespace modelstat::test {

inline void value_info(onnx::ValueInfoProto* v, const std::string& name, int elem,
                       const std::vector<int64_t>& dims) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

// value_info with dims written as text: a number ("8"), a symbol ("batch"),
// or "?" for a dim with neither.
inline void symbolic_value_info(onnx::ValueInfoProto* v, const std::string& name, int elem,
                                std::initializer_list<const char*> dims) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  for (const char* d : dims) {
    auto* dim = shape->add_dim();
    if (d[0] >= '0' && d[0] <= '9')
      dim->set_dim_value(std::stoll(d));
    else if (d[0] != '?')
      dim->set_dim_param(d);
  }
}

// A node named "<op>_<its position in g, from 1>".
inline onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op,
                                 const std::vector<std::string>& ins, const std::vector<std::string>& outs) {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + std::to_string(g->node_size()));
  for (const auto& i : ins) n->add_input(i);
  for (const auto& o : outs) n->add_output(o);
  return n;
}

inline void float_init(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims,
                       const std::vector<float>& values) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
}

inline void int64_init(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims,
                       const std::vector<int64_t>& values) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
}

// An initializer of zeros held as raw bytes, `bytes_per_element` each (the
// analysis reads its size, never its values).
inline void zeros_init(onnx::GraphProto* g, const std::string& name, int dtype,
                       const std::vector<int64_t>& dims, int64_t bytes_per_element) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(dtype);
  int64_t n = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    n *= d;
  }
  t->set_raw_data(std::string(size_t(n * bytes_per_element), '\0'));
}

// An initializer of a type ONNX stores in int32_data: 8- and 16-bit
// integers, bool, float16 and bfloat16 (as bit patterns).
inline void int32_data_init(onnx::GraphProto* g, const std::string& name, int dtype, const std::vector<int64_t>& dims,
                            const std::vector<int32_t>& values) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(dtype);
  for (int64_t d : dims) t->add_dims(d);
  for (int32_t v : values) t->add_int32_data(v);
}

inline void bool_init(onnx::GraphProto* g, const std::string& name, bool value) {
  int32_data_init(g, name, onnx::TensorProto::BOOL, {}, {value ? 1 : 0});
}

inline onnx::AttributeProto* graph_attr(onnx::NodeProto* n, const std::string& name) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(name);
  return a;
}

inline void ints_attr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& values) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

inline void int_attr(onnx::NodeProto* n, const std::string& name, int64_t value) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

// A model importing ai.onnx `opset` and, when `domain` is given, `domain` at `domain_version`.
inline onnx::ModelProto new_model(int opset, const std::string& domain = {}, int domain_version = 1) {
  onnx::ModelProto proto;
  proto.set_ir_version(8);
  proto.add_opset_import()->set_version(opset);
  if (!domain.empty()) {
    onnx::OperatorSetIdProto* imported = proto.add_opset_import();
    imported->set_domain(domain);
    imported->set_version(domain_version);
  }
  proto.mutable_graph()->set_name("main");
  return proto;
}

inline void save_model(const onnx::ModelProto& proto, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  proto.SerializeToOstream(&out);
}

// main: a = Relu_1(x); y = Loop_2(5, -, a) with body
//   MatMul_1: mm = v @ W      (W: a main-graph initializer, 4x4)
//   Add_2:    v_next = mm + b (b: a main-graph initializer)
//   Identity_3: c_out = c
// z = Neg_3(y). The trip count, 5, is a constant: the analysis counts the
// body five times, and a run calls each body node five times.
inline onnx::ModelProto loop_five_model() {
  onnx::ModelProto proto = new_model(16);
  onnx::GraphProto* g = proto.mutable_graph();
  value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 4});
  int64_init(g, "M", {}, {5});
  std::vector<float> w(16), b(4, 0.25f);
  for (size_t k = 0; k < w.size(); ++k) w[k] = float(k % 5) * 0.1f - 0.2f;
  float_init(g, "W", {4, 4}, w);
  float_init(g, "b", {4}, b);
  add_node(g, "Relu", {"x"}, {"a"});
  onnx::NodeProto* loop = add_node(g, "Loop", {"M", "", "a"}, {"y"});
  onnx::GraphProto* body = graph_attr(loop, "body")->mutable_g();
  value_info(body->add_input(), "i", onnx::TensorProto::INT64, {});
  value_info(body->add_input(), "c", onnx::TensorProto::BOOL, {});
  value_info(body->add_input(), "v", onnx::TensorProto::FLOAT, {2, 4});
  add_node(body, "MatMul", {"v", "W"}, {"mm"});
  add_node(body, "Add", {"mm", "b"}, {"v_next"});
  add_node(body, "Identity", {"c"}, {"c_out"});
  value_info(body->add_output(), "c_out", onnx::TensorProto::BOOL, {});
  value_info(body->add_output(), "v_next", onnx::TensorProto::FLOAT, {2, 4});
  add_node(g, "Neg", {"y"}, {"z"});
  value_info(g->add_output(), "z", onnx::TensorProto::FLOAT, {2, 4});
  return proto;
}

// main: a = Relu_1(x); y = If_2(cond) with cond a constant true:
//   then_branch: Add_1 (a + tw), Mul_2 (* tw)    else_branch: Sub_1 (a - 1)
// z = Neg_3(y). Only the then branch ever runs.
inline onnx::ModelProto constant_if_model() {
  onnx::ModelProto proto = new_model(16);
  onnx::GraphProto* g = proto.mutable_graph();
  value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {3});
  bool_init(g, "cond", true);
  add_node(g, "Relu", {"x"}, {"a"});
  onnx::NodeProto* n = add_node(g, "If", {"cond"}, {"y"});
  onnx::GraphProto* then_g = graph_attr(n, "then_branch")->mutable_g();
  float_init(then_g, "tw", {3}, {1, 2, 3});
  add_node(then_g, "Add", {"a", "tw"}, {"t1"});
  add_node(then_g, "Mul", {"t1", "tw"}, {"t_out"});
  value_info(then_g->add_output(), "t_out", onnx::TensorProto::FLOAT, {3});
  onnx::GraphProto* else_g = graph_attr(n, "else_branch")->mutable_g();
  float_init(else_g, "one", {1}, {1});
  add_node(else_g, "Sub", {"a", "one"}, {"e_out"});
  value_info(else_g->add_output(), "e_out", onnx::TensorProto::FLOAT, {3});
  add_node(g, "Neg", {"y"}, {"z"});
  value_info(g->add_output(), "z", onnx::TensorProto::FLOAT, {3});
  return proto;
}

// main: acc = Loop_1(3, -, acc0) with body
//   Less_1:  first = i < 1
//   If_2(first): then_branch Identity_1(x), else_branch Neg_1(x), Abs_2
//   Add_3:   acc_out = acc_in + term
//   Identity_4: c_out = c
// An If nested in a Loop body: the then branch runs on the first of the
// three trips, the else branch on the other two.
inline onnx::ModelProto if_in_loop_model() {
  onnx::ModelProto proto = new_model(16);
  onnx::GraphProto* g = proto.mutable_graph();
  value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {2});
  int64_init(g, "M", {}, {3});
  float_init(g, "acc0", {2}, {0, 0});
  onnx::NodeProto* loop = add_node(g, "Loop", {"M", "", "acc0"}, {"acc"});
  onnx::GraphProto* body = graph_attr(loop, "body")->mutable_g();
  value_info(body->add_input(), "i", onnx::TensorProto::INT64, {});
  value_info(body->add_input(), "c", onnx::TensorProto::BOOL, {});
  value_info(body->add_input(), "acc_in", onnx::TensorProto::FLOAT, {2});
  int64_init(body, "one", {}, {1});
  add_node(body, "Less", {"i", "one"}, {"first"});
  onnx::NodeProto* iff = add_node(body, "If", {"first"}, {"term"});
  onnx::GraphProto* then_g = graph_attr(iff, "then_branch")->mutable_g();
  add_node(then_g, "Identity", {"x"}, {"tt"});
  value_info(then_g->add_output(), "tt", onnx::TensorProto::FLOAT, {2});
  onnx::GraphProto* else_g = graph_attr(iff, "else_branch")->mutable_g();
  add_node(else_g, "Neg", {"x"}, {"nx"});
  add_node(else_g, "Abs", {"nx"}, {"et"});
  value_info(else_g->add_output(), "et", onnx::TensorProto::FLOAT, {2});
  add_node(body, "Add", {"acc_in", "term"}, {"acc_out"});
  add_node(body, "Identity", {"c"}, {"c_out"});
  value_info(body->add_output(), "c_out", onnx::TensorProto::BOOL, {});
  value_info(body->add_output(), "acc_out", onnx::TensorProto::FLOAT, {2});
  value_info(g->add_output(), "acc", onnx::TensorProto::FLOAT, {2});
  return proto;
}

}  // namespace modelstat::test

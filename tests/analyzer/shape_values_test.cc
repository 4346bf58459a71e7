// Integer constant folding of shape computations (loader/shape_values): the
// exporter patterns ONNX 1.12's data propagation misses, opset forms, and
// ill-formed graphs that must leave values unknown without crashing.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "analyzer/loader/shape_values.hpp"

namespace modelstat::loader {
namespace {

using V = std::vector<int64_t>;
using onnx::TensorProto;

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();

TensorProto tensor(const std::string& name, const V& dims, const V& vals,
                   int32_t type = TensorProto::INT64, bool raw = false) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(type);
  for (int64_t d : dims) t.add_dims(d);
  if (raw) {
    const size_t es = type == TensorProto::INT64 ? 8 : type == TensorProto::INT32 ? 4 : 1;
    std::string bytes;
    for (int64_t v : vals)
      for (size_t b = 0; b < es; ++b) bytes.push_back(char((uint64_t(v) >> (8 * b)) & 0xff));
    t.set_raw_data(bytes);
  } else if (type == TensorProto::INT64) {
    for (int64_t v : vals) t.add_int64_data(v);
  } else {
    for (int64_t v : vals) t.add_int32_data(int32_t(v));
  }
  return t;
}

TensorProto float_tensor(const std::string& name, const V& dims, const std::vector<float>& vals) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  for (float v : vals) t.add_float_data(v);
  return t;
}

class G {
 public:
  onnx::GraphProto g;

  G& init(const std::string& name, const V& dims, const V& vals, int32_t type = TensorProto::INT64,
          bool raw = false) {
    *g.add_initializer() = tensor(name, dims, vals, type, raw);
    return *this;
  }
  // A graph input; -1 dims become symbolic.
  G& input(const std::string& name, const V& dims, int32_t type = TensorProto::FLOAT) {
    auto* vi = g.add_input();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    auto* shape = tt->mutable_shape();
    for (int64_t d : dims) {
      if (d < 0) shape->add_dim()->set_dim_param("N");
      else shape->add_dim()->set_dim_value(d);
    }
    return *this;
  }
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& ins,
                        const std::vector<std::string>& outs) {
    auto* n = g.add_node();
    n->set_op_type(op);
    for (const auto& i : ins) n->add_input(i);
    for (const auto& o : outs) n->add_output(o);
    return *n;
  }
  // Constant node with an int64 tensor value.
  G& constant(const std::string& name, const V& dims, const V& vals) {
    auto* a = node("Constant", {}, {name}).add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    *a->mutable_t() = tensor("", dims, vals);
    return *this;
  }
};

void attr(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
void attr(onnx::NodeProto& n, const std::string& name, const V& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
void attr(onnx::NodeProto& n, const std::string& name, const TensorProto& t) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = t;
}

using Values = std::unordered_map<std::string, ConstValue>;

::testing::AssertionResult has(const Values& m, const std::string& name, const V& dims, const V& vals,
                               int32_t type = TensorProto::INT64) {
  auto it = m.find(name);
  if (it == m.end()) return ::testing::AssertionFailure() << name << " was not evaluated";
  const ConstValue& v = it->second;
  if (v.dims != dims || v.values != vals || v.elem_type != type) {
    auto str = [](const V& xs) {
      std::string s = "[";
      for (int64_t x : xs) s += std::to_string(x) + ",";
      return s + "]";
    };
    return ::testing::AssertionFailure() << name << ": dims " << str(v.dims) << " values " << str(v.values)
                                         << " type " << v.elem_type << "; expected dims " << str(dims)
                                         << " values " << str(vals) << " type " << type;
  }
  return ::testing::AssertionSuccess();
}

// A float value: dims, type and each element as a double (exact comparison:
// the expected values are representable in the type).
::testing::AssertionResult has_real(const Values& m, const std::string& name, const V& dims,
                                    const std::vector<double>& vals, int32_t type = TensorProto::FLOAT) {
  auto it = m.find(name);
  if (it == m.end()) return ::testing::AssertionFailure() << name << " was not evaluated";
  const ConstValue& v = it->second;
  std::vector<double> got;
  for (int64_t bits : v.values) got.push_back(real_value(bits));
  if (v.dims != dims || got != vals || v.elem_type != type) {
    std::string s;
    for (double x : got) s += std::to_string(x) + ",";
    return ::testing::AssertionFailure() << name << ": values [" << s << "] type " << v.elem_type << ", "
                                         << v.dims.size() << " dims";
  }
  return ::testing::AssertionSuccess();
}

TEST(ShapeValues, TorchExpandPattern) {
  // cls_token.expand(x.shape[0], -1, -1) as torch exports it.
  G b;
  b.input("x", {2, 197, 768}).init("cls", {1, 1, 768}, {}, TensorProto::FLOAT);
  b.constant("zero", {}, {0}).constant("m1m1", {2}, {-1, -1}).constant("three", {1}, {3});
  b.constant("minus1", {}, {-1});
  b.node("Shape", {"x"}, {"shape"});
  attr(b.node("Gather", {"shape", "zero"}, {"n"}), "axis", int64_t{0});
  b.constant("axes0", {1}, {0});
  b.node("Unsqueeze", {"n", "axes0"}, {"n1"});  // opset 13 form
  attr(b.node("Concat", {"n1", "m1m1"}, {"target"}), "axis", int64_t{0});
  attr(b.node("ConstantOfShape", {"three"}, {"ones"}), "value", tensor("", {1}, {1}));
  b.node("Mul", {"ones", "minus1"}, {"neg_ones"});
  b.node("Equal", {"target", "neg_ones"}, {"is_keep"});
  b.node("Where", {"is_keep", "ones", "target"}, {"expand_shape"});
  b.node("Expand", {"cls", "expand_shape"}, {"cls_expanded"});

  const Values m = evaluate_const_values(b.g);
  EXPECT_TRUE(has(m, "shape", {3}, {2, 197, 768}));
  EXPECT_TRUE(has(m, "n", {}, {2}));
  EXPECT_TRUE(has(m, "n1", {1}, {2}));
  EXPECT_TRUE(has(m, "target", {3}, {2, -1, -1}));
  EXPECT_TRUE(has(m, "ones", {3}, {1, 1, 1}));
  EXPECT_TRUE(has(m, "neg_ones", {3}, {-1, -1, -1}));
  EXPECT_TRUE(has(m, "is_keep", {3}, {0, 1, 1}, TensorProto::BOOL));
  EXPECT_TRUE(has(m, "expand_shape", {3}, {2, 1, 1}));
  EXPECT_EQ(m.count("cls"), 0u);           // float initializer
  EXPECT_EQ(m.count("cls_expanded"), 0u);  // float data
  EXPECT_EQ(m.count("x"), 0u);
}

TEST(ShapeValues, VitAttentionSliceFromShapeArithmetic) {
  // q/k/v split of a fused [B, S, 3*E] projection: Slice bounds from Shape/Div/Mul.
  G b;
  b.input("qkv", {1, 197, 2304});
  b.constant("minus1", {1}, {-1}).constant("three", {1}, {3}).constant("one", {1}, {1});
  b.constant("two", {1}, {2});
  b.node("Shape", {"qkv"}, {"s"});
  b.node("Gather", {"s", "minus1"}, {"e3"});  // 1-D negative index
  b.node("Div", {"e3", "three"}, {"e"});
  b.node("Mul", {"e", "one"}, {"start"});
  b.node("Mul", {"e", "two"}, {"end"});
  b.constant("iota", {6}, {0, 10, 20, 30, 40, 50});
  b.constant("axes", {1}, {-1});
  b.node("Slice", {"s", "start", "end", "axes"}, {"slice_of_shape"});  // a 1-D slice [768:1536] of [3] -> []
  b.node("Slice", {"iota", "one", "three"}, {"mid"});

  const Values m = evaluate_const_values(b.g);
  EXPECT_TRUE(has(m, "e3", {1}, {2304}));
  EXPECT_TRUE(has(m, "e", {1}, {768}));
  EXPECT_TRUE(has(m, "start", {1}, {768}));
  EXPECT_TRUE(has(m, "end", {1}, {1536}));
  EXPECT_TRUE(has(m, "slice_of_shape", {0}, {}));
  EXPECT_TRUE(has(m, "mid", {2}, {10, 20}));
}

TEST(ShapeValues, SliceNegativeIndicesStepsAndClamping) {
  G b;
  b.init("d", {10}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  b.init("m3", {1}, {-3}).init("big", {1}, {kI64Max}).init("m1", {1}, {-1}).init("small", {1}, {kI64Min});
  b.init("ax0", {1}, {0}).init("m2", {1}, {-2}).init("two", {1}, {2}).init("zero", {1}, {0});
  b.node("Slice", {"d", "m3", "big"}, {"tail"});                       // [-3:]
  b.node("Slice", {"d", "m1", "small", "ax0", "m1"}, {"reversed"});   // [::-1]
  b.node("Slice", {"d", "m2", "m3", "", "m1"}, {"rev_part"});         // [-2:-3:-1] -> [8]
  b.node("Slice", {"d", "zero", "big", "", "m3"}, {"empty"});         // [0:big:-3] -> []
  b.node("Slice", {"d", "m3", "m3"}, {"none"});                        // [-3:-3] -> []
  b.node("Slice", {"d", "small", "m3", "ax0", "two"}, {"stepped"});   // [:-3:2]
  b.init("mat", {3, 4}, {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23});
  b.node("Slice", {"mat", "m3", "big", "m1", "two"}, {"cols"});       // [:, -3::2]
  b.node("Slice", {"mat", "zero", "zero", "zero"}, {"zero_rows"});     // zero-length rows
  auto& old = b.node("Slice", {"mat"}, {"old_form"});                  // opset 1 attributes
  attr(old, "starts", V{1, -1});
  attr(old, "ends", V{kI64Max, kI64Max});
  b.node("Slice", {"d", "zero", "big", "ax0", "zero"}, {"zero_step"});
  b.node("Slice", {"d", "zero", "big", "two"}, {"bad_axis"});

  const Values m = evaluate_const_values(b.g);
  EXPECT_TRUE(has(m, "tail", {3}, {7, 8, 9}));
  EXPECT_TRUE(has(m, "reversed", {10}, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  EXPECT_TRUE(has(m, "rev_part", {1}, {8}));
  EXPECT_TRUE(has(m, "empty", {0}, {}));
  EXPECT_TRUE(has(m, "none", {0}, {}));
  EXPECT_TRUE(has(m, "stepped", {4}, {0, 2, 4, 6}));
  EXPECT_TRUE(has(m, "cols", {3, 2}, {1, 3, 11, 13, 21, 23}));
  EXPECT_TRUE(has(m, "zero_rows", {0, 4}, {}));
  EXPECT_TRUE(has(m, "old_form", {2, 1}, {13, 23}));
  EXPECT_EQ(m.count("zero_step"), 0u);
  EXPECT_EQ(m.count("bad_axis"), 0u);
}

TEST(ShapeValues, RangeForPositionIds) {
  G b;
  b.input("ids", {4, 7}, TensorProto::INT64);
  b.constant("one", {}, {1}).constant("zero", {}, {0}).constant("ten", {}, {10}).constant("m3", {}, {-3});
  b.node("Shape", {"ids"}, {"s"});
  b.node("Gather", {"s", "one"}, {"seq"});
  b.node("Range", {"zero", "seq", "one"}, {"pos"});
  b.node("Unsqueeze", {"pos", "zero"}, {"pos2"});
  b.node("Range", {"ten", "zero", "m3"}, {"down"});
  b.node("Range", {"ten", "zero", "one"}, {"empty"});
  b.node("Range", {"zero", "ten", "zero"}, {"zero_delta"});
  b.init("huge", {}, {int64_t(1) << 40});
  b.node("Range", {"zero", "huge", "one"}, {"too_long"});

  const Values m = evaluate_const_values(b.g);
  EXPECT_TRUE(has(m, "seq", {}, {7}));
  EXPECT_TRUE(has(m, "pos", {7}, {0, 1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(has(m, "pos2", {1, 7}, {0, 1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(has(m, "down", {4}, {10, 7, 4, 1}));
  EXPECT_TRUE(has(m, "empty", {0}, {}));
  EXPECT_EQ(m.count("zero_delta"), 0u);
  EXPECT_EQ(m.count("too_long"), 0u);
}

TEST(ShapeValues, IntegerDivTruncatesAndModFollowsFmod) {
  G b;
  b.init("a", {4}, {-7, 7, -7, 7}).init("b", {4}, {2, -2, -2, 2}).init("z", {}, {0});
  b.node("Div", {"a", "b"}, {"q"});
  b.node("Mod", {"a", "b"}, {"r_py"});
  attr(b.node("Mod", {"a", "b"}, {"r_c"}), "fmod", int64_t{1});
  b.node("Div", {"a", "z"}, {"div0"});
  b.node("Sub", {"a", "b"}, {"diff"});
  b.node("Add", {"a", "z"}, {"bcast"});
  b.node("Max", {"a", "b", "z"}, {"mx"});
  b.node("Min", {"a", "b"}, {"mn"});
  b.node("Abs", {"a"}, {"abs"});
  b.node("Neg", {"b"}, {"neg"});
  b.node("Less", {"a", "b"}, {"lt"});
  b.node("Greater", {"a", "z"}, {"gt"});
  b.node("Not", {"gt"}, {"ngt"});
  b.node("And", {"lt", "gt"}, {"both"});
  b.node("Or", {"lt", "gt"}, {"either"});
  b.init("imax", {}, {kI64Max});
  b.node("Add", {"imax", "imax"}, {"overflow"});

  const Values m = evaluate_const_values(b.g);
  const auto kB = TensorProto::BOOL;
  EXPECT_TRUE(has(m, "q", {4}, {-3, -3, 3, 3}));
  EXPECT_TRUE(has(m, "r_py", {4}, {1, -1, -1, 1}));
  EXPECT_TRUE(has(m, "r_c", {4}, {-1, 1, -1, 1}));
  EXPECT_EQ(m.count("div0"), 0u);
  EXPECT_TRUE(has(m, "diff", {4}, {-9, 9, -5, 5}));
  EXPECT_TRUE(has(m, "bcast", {4}, {-7, 7, -7, 7}));
  EXPECT_TRUE(has(m, "mx", {4}, {2, 7, 0, 7}));
  EXPECT_TRUE(has(m, "mn", {4}, {-7, -2, -7, 2}));
  EXPECT_TRUE(has(m, "abs", {4}, {7, 7, 7, 7}));
  EXPECT_TRUE(has(m, "neg", {4}, {-2, 2, 2, -2}));
  EXPECT_TRUE(has(m, "lt", {4}, {1, 0, 1, 0}, kB));
  EXPECT_TRUE(has(m, "gt", {4}, {0, 1, 0, 1}, kB));
  EXPECT_TRUE(has(m, "ngt", {4}, {1, 0, 1, 0}, kB));
  EXPECT_TRUE(has(m, "both", {4}, {0, 0, 0, 0}, kB));
  EXPECT_TRUE(has(m, "either", {4}, {1, 1, 1, 1}, kB));
  EXPECT_EQ(m.count("overflow"), 0u);
}

TEST(ShapeValues, ShapeStartEndAndSize) {
  G b;
  b.input("x", {2, 197, 768}).input("dyn", {-1, 3});
  attr(b.node("Shape", {"x"}, {"last2"}), "start", int64_t{-2});
  auto& mid = b.node("Shape", {"x"}, {"mid"});
  attr(mid, "start", int64_t{1});
  attr(mid, "end", int64_t{-1});
  attr(b.node("Shape", {"x"}, {"past_end"}), "start", int64_t{5});
  attr(b.node("Shape", {"x"}, {"clamped"}), "start", int64_t{-10});
  b.node("Size", {"x"}, {"size"});
  b.node("Shape", {"dyn"}, {"dyn_shape"});
  b.node("Size", {"dyn"}, {"dyn_size"});
  b.node("Shape", {"nowhere"}, {"no_shape"});
  // Shapes also come from value_info, initializer dims and evaluated tensors.
  auto* vi = b.g.add_value_info();
  vi->set_name("hidden");
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
  vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(5);
  b.node("Shape", {"hidden"}, {"vi_shape"});
  TensorProto w = tensor("w", {64, 3, 7, 7}, {}, TensorProto::FLOAT);
  *b.g.add_initializer() = w;
  b.node("Shape", {"w"}, {"w_shape"});
  b.node("Shape", {"last2"}, {"shape_of_shape"});

  const Values m = evaluate_const_values(b.g);
  EXPECT_TRUE(has(m, "last2", {2}, {197, 768}));
  EXPECT_TRUE(has(m, "mid", {1}, {197}));
  EXPECT_TRUE(has(m, "past_end", {0}, {}));
  EXPECT_TRUE(has(m, "clamped", {3}, {2, 197, 768}));
  EXPECT_TRUE(has(m, "size", {}, {2 * 197 * 768}));
  EXPECT_EQ(m.count("dyn_shape"), 0u);
  EXPECT_EQ(m.count("dyn_size"), 0u);
  EXPECT_EQ(m.count("no_shape"), 0u);
  EXPECT_TRUE(has(m, "vi_shape", {1}, {5}));
  EXPECT_TRUE(has(m, "w_shape", {4}, {64, 3, 7, 7}));
  EXPECT_TRUE(has(m, "shape_of_shape", {1}, {2}));
}

TEST(ShapeValues, ReshapeTransposeTileReduceSqueezeCast) {
  G b;
  b.init("m", {2, 3}, {1, 2, 3, 4, 5, 6});
  b.init("shape", {2}, {3, -1}).init("shape0", {3}, {0, 3, 1}).init("reps", {2}, {2, 1});
  b.init("ax1", {1}, {1}).init("i32", {3}, {5, -1, 0}, TensorProto::INT32, /*raw=*/true);
  b.node("Reshape", {"m", "shape"}, {"r"});
  b.node("Reshape", {"m", "shape0"}, {"r0"});
  b.node("Transpose", {"m"}, {"t"});
  b.node("Tile", {"m", "reps"}, {"tiled"});
  b.node("ReduceProd", {"m"}, {"prod_all"});  // all axes, keepdims
  auto& sum = b.node("ReduceSum", {"m", "ax1"}, {"sum1"});
  attr(sum, "keepdims", int64_t{0});
  auto& mx = b.node("ReduceMax", {"m"}, {"max0"});
  attr(mx, "axes", V{0});
  b.node("ReduceMin", {"m", "ax1"}, {"min1"});
  b.node("Unsqueeze", {"m", "ax1"}, {"u"});
  b.node("Squeeze", {"u", "ax1"}, {"sq"});
  attr(b.node("Squeeze", {"u"}, {"sq_attr"}), "axes", V{-2});
  b.node("Squeeze", {"prod_all"}, {"sq_all"});
  attr(b.node("Unsqueeze", {"sum1"}, {"u_attr"}), "axes", V{0, -1});
  attr(b.node("Cast", {"i32"}, {"to64"}), "to", int64_t{TensorProto::INT64});
  attr(b.node("Cast", {"i32"}, {"tobool"}), "to", int64_t{TensorProto::BOOL});
  attr(b.node("Cast", {"i32"}, {"tofloat"}), "to", int64_t{TensorProto::FLOAT});
  b.node("Identity", {"tobool"}, {"id"});
  b.node("Expand", {"ax1", "reps"}, {"ex"});
  auto& gat = b.node("Gather", {"m", "ax1"}, {"col1"});
  attr(gat, "axis", int64_t{-1});
  b.node("Flatten", {"u"}, {"flat"});
  auto* c = b.node("Constant", {}, {"cints"}).add_attribute();
  c->set_name("value_ints");
  c->set_type(onnx::AttributeProto::INTS);
  c->add_ints(4);
  c->add_ints(5);
  auto* ci = b.node("Constant", {}, {"cint"}).add_attribute();
  ci->set_name("value_int");
  ci->set_type(onnx::AttributeProto::INT);
  ci->set_i(-9);
  attr(b.node("Concat", {"cints", "cint"}, {"cat_rank_mismatch"}), "axis", int64_t{0});

  const Values m = evaluate_const_values(b.g);
  EXPECT_TRUE(has(m, "m", {2, 3}, {1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(has(m, "r", {3, 2}, {1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(has(m, "r0", {2, 3, 1}, {1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(has(m, "t", {3, 2}, {1, 4, 2, 5, 3, 6}));
  EXPECT_TRUE(has(m, "tiled", {4, 3}, {1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(has(m, "prod_all", {1, 1}, {720}));
  EXPECT_TRUE(has(m, "sum1", {2}, {6, 15}));
  EXPECT_TRUE(has(m, "max0", {1, 3}, {4, 5, 6}));
  EXPECT_TRUE(has(m, "min1", {2, 1}, {1, 4}));
  EXPECT_TRUE(has(m, "u", {2, 1, 3}, {1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(has(m, "sq", {2, 3}, {1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(has(m, "sq_attr", {2, 3}, {1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(has(m, "sq_all", {}, {720}));
  EXPECT_TRUE(has(m, "u_attr", {1, 2, 1}, {6, 15}));
  EXPECT_TRUE(has(m, "i32", {3}, {5, -1, 0}, TensorProto::INT32));
  EXPECT_TRUE(has(m, "to64", {3}, {5, -1, 0}));
  EXPECT_TRUE(has(m, "tobool", {3}, {1, 1, 0}, TensorProto::BOOL));
  EXPECT_TRUE(has_real(m, "tofloat", {3}, {5, -1, 0}));
  EXPECT_TRUE(has(m, "id", {3}, {1, 1, 0}, TensorProto::BOOL));
  EXPECT_TRUE(has(m, "ex", {2, 1}, {1, 1}));
  EXPECT_TRUE(has(m, "col1", {2, 1}, {2, 5}));
  EXPECT_TRUE(has(m, "flat", {2, 3}, {1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(has(m, "cints", {2}, {4, 5}));
  EXPECT_TRUE(has(m, "cint", {}, {-9}));
  EXPECT_EQ(m.count("cat_rank_mismatch"), 0u);
}

// Before opset 7 a binary op broadcasts B onto A only with broadcast=1,
// aligned from `axis` (default: A's trailing dims); without it the shapes are
// equal. Reshape takes its shape as an attribute before opset 5.
TEST(ShapeValues, OldOpsetBroadcastAndReshapeAttribute) {
  G b;
  b.init("a", {2, 3}, {1, 2, 3, 4, 5, 6}).init("col", {2}, {10, 20}).init("row", {3}, {100, 200, 300});
  auto& by_axis = b.node("Add", {"a", "col"}, {"by_axis"});  // col along dim 0: [[11,12,13],[24,25,26]]
  attr(by_axis, "broadcast", int64_t{1});
  attr(by_axis, "axis", int64_t{0});
  attr(b.node("Mul", {"a", "row"}, {"trailing"}), "broadcast", int64_t{1});  // row along dim 1
  attr(b.node("Sub", {"a", "row"}, {"unequal"}), "broadcast", int64_t{0});    // forbidden: unknown
  auto& misaligned = b.node("Add", {"a", "row"}, {"misaligned"});             // [3] from axis 0 of [2,3]
  attr(misaligned, "broadcast", int64_t{1});
  attr(misaligned, "axis", int64_t{0});
  attr(b.node("Add", {"row", "a"}, {"b_onto_a_only"}), "broadcast", int64_t{1});
  attr(b.node("Reshape", {"a"}, {"reshaped"}), "shape", V{3, -1});
  const Values m = evaluate_const_values(b.g);
  EXPECT_TRUE(has(m, "by_axis", {2, 3}, {11, 12, 13, 24, 25, 26}));
  EXPECT_TRUE(has(m, "trailing", {2, 3}, {100, 400, 900, 400, 1000, 1800}));
  EXPECT_EQ(m.count("unequal"), 0u);
  EXPECT_EQ(m.count("misaligned"), 0u);
  EXPECT_EQ(m.count("b_onto_a_only"), 0u);
  EXPECT_TRUE(has(m, "reshaped", {3, 2}, {1, 2, 3, 4, 5, 6}));
}

TEST(ShapeValues, GarbageStaysUnknownWithoutCrashing) {
  G b;
  b.init("v", {3}, {1, 2, 3}).init("idx", {}, {3}).init("huge_shape", {2}, {100000, 100000});
  b.init("neg_shape", {1}, {-4}).init("dup", {2}, {0, 0});
  b.node("Add", {"v"}, {"one_input"});
  b.node("Add", {"v", "v", "v"}, {"three_inputs"});
  b.node("Add", {"v", "missing"}, {"missing_input"});
  b.node("Add", {"v", ""}, {"empty_input"});
  attr(b.node("Concat", {"v", "missing"}, {"cat_missing"}), "axis", int64_t{0});
  b.node("Concat", {"v", "v"}, {"cat_no_axis"});
  attr(b.node("Concat", {"v"}, {"cat_bad_axis"}), "axis", int64_t{3});
  b.node("Gather", {"v", "idx"}, {"gather_oob"});
  b.node("Gather", {"v"}, {"gather_one_input"});
  attr(b.node("ConstantOfShape", {"huge_shape"}, {"huge"}), "value", tensor("", {1}, {1}));
  b.node("Shape", {"huge"}, {"huge_shape_out"});  // the dims are still known
  b.node("ConstantOfShape", {"neg_shape"}, {"neg"});
  b.node("ConstantOfShape", {"v"}, {"float_fill"});  // default value is float 0
  b.node("Shape", {"float_fill"}, {"float_fill_shape"});
  b.node("Unsqueeze", {"v", "dup"}, {"unsq_dup"});
  b.node("Unsqueeze", {"v"}, {"unsq_no_axes"});
  b.node("Squeeze", {"v", "dup"}, {"sq_not_one"});
  b.node("Reshape", {"v", "dup"}, {"reshape_bad"});
  b.node("Reshape", {"v"}, {"reshape_one_input"});
  b.node("Range", {"v", "v", "v"}, {"range_vectors"});
  b.node("Slice", {"v"}, {"slice_no_bounds"});
  b.node("Tile", {"v", "huge_shape"}, {"tile_huge"});
  b.node("Expand", {"v", "huge_shape"}, {"expand_huge"});
  b.node("Transpose", {"v"}, {"transpose_ok"});
  attr(b.node("Transpose", {"v"}, {"transpose_bad"}), "perm", V{1});
  b.node("Constant", {}, {"no_attr"});
  b.node("Add", {"v", "v"}, {});  // no outputs
  b.node("Add", {"v", "v"}, {""});
  auto& custom = b.node("Add", {"v", "v"}, {"custom_domain"});
  custom.set_domain("com.example");
  b.node("NonZero", {"v"}, {"unsupported"});
  b.node("Add", {"later", "v"}, {"uses_later"});  // not yet evaluated: node order matters
  b.node("Identity", {"v"}, {"later"});
  // A node output shadowing an initializer drops the initializer's value.
  b.init("shadowed", {1}, {7});
  b.node("NonZero", {"v"}, {"shadowed"});
  // Stripped payload (dims but no data, marker in external_data), size mismatch, external data.
  TensorProto stripped = tensor("stripped", {3}, {});
  auto* mark = stripped.add_external_data();
  mark->set_key("__modelstat_stripped");
  mark->set_value("24");
  *b.g.add_initializer() = stripped;
  *b.g.add_initializer() = tensor("no_data", {3}, {});
  *b.g.add_initializer() = tensor("short_raw", {3}, {1, 2}, TensorProto::INT64, /*raw=*/true);
  TensorProto ext = tensor("ext", {1}, {5});
  ext.set_data_location(TensorProto::EXTERNAL);
  *b.g.add_initializer() = ext;
  *b.g.add_initializer() = tensor("big", {5000}, V(5000, 1));
  *b.g.add_initializer() = tensor("negdim", {-1}, {});
  attr(b.node("Cast", {"v"}, {"cast_bad_to"}), "to", int64_t{12345});
  attr(b.node("Constant", {}, {"const_float"}), "value", tensor("", {1}, {0}, TensorProto::FLOAT));
  // A subgraph-bearing node is skipped, not entered.
  auto& iff = b.node("If", {"v"}, {"if_out"});
  auto* branch = iff.add_attribute();
  branch->set_name("then_branch");
  branch->set_type(onnx::AttributeProto::GRAPH);
  branch->mutable_g()->add_node()->set_op_type("Constant");

  Values m;
  ASSERT_NO_THROW(m = evaluate_const_values(b.g));
  for (const char* name :
       {"one_input", "three_inputs", "missing_input", "empty_input", "cat_missing", "cat_no_axis", "cat_bad_axis",
        "gather_oob", "gather_one_input", "huge", "neg", "unsq_dup", "unsq_no_axes", "sq_not_one",
        "reshape_bad", "reshape_one_input", "range_vectors", "slice_no_bounds", "tile_huge", "expand_huge",
        "transpose_bad", "no_attr", "", "custom_domain", "unsupported", "uses_later", "shadowed", "stripped",
        "no_data", "short_raw", "ext", "big", "negdim", "cast_bad_to", "const_float", "if_out"})
    EXPECT_EQ(m.count(name), 0u) << name;
  EXPECT_TRUE(has(m, "huge_shape_out", {2}, {100000, 100000}));
  EXPECT_TRUE(has_real(m, "float_fill", {1, 2, 3}, std::vector<double>(6, 0.0)));
  EXPECT_TRUE(has(m, "float_fill_shape", {3}, {1, 2, 3}));
  EXPECT_TRUE(has(m, "transpose_ok", {3}, {1, 2, 3}));
  EXPECT_TRUE(has(m, "later", {3}, {1, 2, 3}));
}

TEST(ShapeValues, EmptyAndRandomGraphsDoNotCrash) {
  EXPECT_TRUE(evaluate_const_values(onnx::GraphProto()).empty());
  // Every supported op with every combination of a few odd inputs.
  const std::vector<std::string> ops = {
      "Constant", "Identity", "Shape", "Size", "Gather", "Unsqueeze", "Squeeze", "Concat", "Slice", "Cast",
      "Add", "Sub", "Mul", "Div", "Mod", "Equal", "Less", "Greater", "Not", "And", "Or", "Where", "Max", "Min",
      "Abs", "Neg", "ConstantOfShape", "Range", "ReduceProd", "ReduceSum", "ReduceMax", "ReduceMin", "Expand",
      "Tile", "Reshape", "Transpose", "Floor", "Ceil", "Flatten", "Sign", "Sum", "Xor", "Split", "Round", "Sqrt",
      "Reciprocal", "Pow"};
  G b;
  b.init("s", {}, {kI64Min}).init("v", {2}, {kI64Max, -1}).init("e", {0}, {}).init("m", {2, 2}, {0, 1, 1, 0});
  b.init("b", {2}, {1, 0}, TensorProto::BOOL);
  *b.g.add_initializer() = float_tensor("f", {2}, {std::numeric_limits<float>::infinity(), -0.0f});
  *b.g.add_initializer() = float_tensor("nan", {}, {std::numeric_limits<float>::quiet_NaN()});
  b.input("x", {2, 2});
  const std::vector<std::string> names = {"s", "v", "e", "m", "b", "f", "nan", "x", ""};
  int k = 0;
  for (const auto& op : ops)
    for (const auto& i0 : names)
      for (const auto& i1 : names) {
        auto& n = b.node(op, {i0, i1, i1, i0}, {"o" + std::to_string(k++)});
        attr(n, "axis", int64_t{-1});
        attr(n, "axes", V{0});
      }
  ASSERT_NO_THROW(evaluate_const_values(b.g));
}

// Split in each opset's form: input 1 (13+), attribute (2-12), num_outputs
// (18: ceil(7 / 3) = 3 each, the last gets 1), equal parts; values by hand.
TEST(ShapeValues, SplitEveryForm) {
  G b;
  b.init("m", {2, 3}, {1, 2, 3, 4, 5, 6}).init("v", {7}, {0, 1, 2, 3, 4, 5, 6}).init("sizes", {2}, {2, 1});
  attr(b.node("Split", {"m", "sizes"}, {"c01", "c2"}), "axis", int64_t{1});
  auto& by_attr = b.node("Split", {"v"}, {"a", "b", "c"});
  attr(by_attr, "split", V{4, 0, 3});
  attr(b.node("Split", {"v"}, {"n0", "n1", "n2"}), "num_outputs", int64_t{3});
  b.node("Split", {"m"}, {"row0", "row1"});          // equal parts along axis 0
  b.node("Split", {"v"}, {"half0", "half1"});        // 7 does not split in 2: unknown
  auto& bad = b.node("Split", {"v"}, {"bad0", "bad1"});
  attr(bad, "split", V{4, 4});                       // sums to 8, not 7
  b.node("Split", {"m", "sizes"}, {"", "skipped1"});  // axis 0 has 2, sizes sum to 3: unknown
  *b.g.add_initializer() = float_tensor("fv", {4}, {0.5f, 1.5f, 2.5f, 3.5f});
  b.node("Split", {"fv"}, {"f0", "f1"});

  const Values m = evaluate_const_values(b.g);
  EXPECT_TRUE(has(m, "c01", {2, 2}, {1, 2, 4, 5}));
  EXPECT_TRUE(has(m, "c2", {2, 1}, {3, 6}));
  EXPECT_TRUE(has(m, "a", {4}, {0, 1, 2, 3}));
  EXPECT_TRUE(has(m, "b", {0}, {}));
  EXPECT_TRUE(has(m, "c", {3}, {4, 5, 6}));
  EXPECT_TRUE(has(m, "n0", {3}, {0, 1, 2}));
  EXPECT_TRUE(has(m, "n1", {3}, {3, 4, 5}));
  EXPECT_TRUE(has(m, "n2", {1}, {6}));
  EXPECT_TRUE(has(m, "row0", {1, 3}, {1, 2, 3}));
  EXPECT_TRUE(has(m, "row1", {1, 3}, {4, 5, 6}));
  for (const char* name : {"half0", "half1", "bad0", "bad1", "skipped1"}) EXPECT_EQ(m.count(name), 0u) << name;
  EXPECT_TRUE(has_real(m, "f0", {2}, {0.5, 1.5}));
  EXPECT_TRUE(has_real(m, "f1", {2}, {2.5, 3.5}));
}

// Float values: read from float_data, raw_data and attributes, computed in
// the element type (float32 rounding after each op), and converted back to
// integers by truncation. Expected values by hand or by C++'s own float
// arithmetic on the same operands.
TEST(ShapeValues, FloatArithmeticCastsAndRounding) {
  G b;
  b.input("x", {1, 3, 21, 30});
  b.init("starts", {1}, {2}).init("ends", {1}, {4});
  *b.g.add_initializer() = float_tensor("scale", {}, {1.5f});
  *b.g.add_initializer() = float_tensor("tenth", {}, {0.1f});
  *b.g.add_initializer() = float_tensor("fifth", {}, {0.2f});
  TensorProto raw = float_tensor("raw", {2}, {});
  const float raw_vals[2] = {-2.75f, 3.25f};
  raw.set_raw_data(std::string(reinterpret_cast<const char*>(raw_vals), sizeof raw_vals));
  *b.g.add_initializer() = raw;
  TensorProto d;
  d.set_name("dbl");
  d.set_data_type(TensorProto::DOUBLE);
  d.add_dims(1);
  d.add_double_data(0.1);
  *b.g.add_initializer() = d;
  b.node("Shape", {"x"}, {"shape"});
  b.node("Slice", {"shape", "starts", "ends"}, {"hw"});                     // [21, 30]
  attr(b.node("Cast", {"hw"}, {"hw_f"}), "to", int64_t{TensorProto::FLOAT});
  b.node("Mul", {"hw_f", "scale"}, {"scaled"});                             // [31.5, 45]
  b.node("Floor", {"scaled"}, {"floored"});
  b.node("Ceil", {"scaled"}, {"ceiled"});
  b.node("Round", {"scaled"}, {"rounded"});                                 // 31.5 -> 32 (halves to even)
  attr(b.node("Cast", {"floored"}, {"floored_i"}), "to", int64_t{TensorProto::INT64});
  b.node("Add", {"tenth", "fifth"}, {"sum"});                               // float32 0.1 + 0.2
  attr(b.node("Cast", {"raw"}, {"truncated"}), "to", int64_t{TensorProto::INT32});
  attr(b.node("Cast", {"raw"}, {"as_bool"}), "to", int64_t{TensorProto::BOOL});
  attr(b.node("Cast", {"dbl"}, {"dbl_to_float"}), "to", int64_t{TensorProto::FLOAT});
  b.node("Sqrt", {"scaled"}, {"roots"});
  b.node("Reciprocal", {"scale"}, {"recip"});
  b.node("Pow", {"scale", "starts"}, {"squared"});                          // 1.5^2 (integer exponent)
  b.node("Less", {"raw", "scale"}, {"less"});
  b.node("Equal", {"scaled", "scaled"}, {"eq"});
  b.node("Where", {"less", "raw", "scale"}, {"picked"});
  b.node("ReduceSum", {"raw"}, {"raw_sum"});
  *b.g.add_initializer() = float_tensor("zero_f", {}, {0.0f});
  b.node("Div", {"scale", "zero_f"}, {"inf"});  // IEEE division, as at run time
  *b.g.add_initializer() = float_tensor("big", {1}, {3e9f});
  attr(b.node("Cast", {"big"}, {"big_i32"}), "to", int64_t{TensorProto::INT32});  // out of range: unknown
  attr(b.node("Cast", {"big"}, {"big_i64"}), "to", int64_t{TensorProto::INT64});
  auto* cf = b.node("Constant", {}, {"cfloat"}).add_attribute();
  cf->set_name("value_float");
  cf->set_type(onnx::AttributeProto::FLOAT);
  cf->set_f(0.25f);
  auto& cos = b.node("ConstantOfShape", {"starts"}, {"filled"});
  attr(cos, "value", float_tensor("", {1}, {0.5f}));
  b.node("Range", {"zero_f", "scale", "cfloat"}, {"range"});                // 0, .25, ..., 1.25

  const Values m = evaluate_const_values(b.g);
  EXPECT_TRUE(has_real(m, "hw_f", {2}, {21, 30}));
  EXPECT_TRUE(has_real(m, "scaled", {2}, {31.5, 45}));
  EXPECT_TRUE(has_real(m, "floored", {2}, {31, 45}));
  EXPECT_TRUE(has_real(m, "ceiled", {2}, {32, 45}));
  EXPECT_TRUE(has_real(m, "rounded", {2}, {32, 45}));
  EXPECT_TRUE(has(m, "floored_i", {2}, {31, 45}));
  EXPECT_TRUE(has_real(m, "sum", {}, {double(0.1f + 0.2f)}));
  EXPECT_NE(double(0.1f + 0.2f), double(0.1f) + double(0.2f));  // the case tells float32 from double
  EXPECT_TRUE(has(m, "truncated", {2}, {-2, 3}, TensorProto::INT32));
  EXPECT_TRUE(has(m, "as_bool", {2}, {1, 1}, TensorProto::BOOL));
  EXPECT_TRUE(has_real(m, "dbl_to_float", {1}, {double(0.1f)}));
  EXPECT_TRUE(has_real(m, "roots", {2}, {double(std::sqrt(31.5f)), double(std::sqrt(45.0f))}));
  EXPECT_TRUE(has_real(m, "recip", {}, {double(1.0f / 1.5f)}));
  EXPECT_TRUE(has_real(m, "squared", {1}, {2.25}));
  EXPECT_TRUE(has(m, "less", {2}, {1, 0}, TensorProto::BOOL));
  EXPECT_TRUE(has(m, "eq", {2}, {1, 1}, TensorProto::BOOL));
  EXPECT_TRUE(has_real(m, "picked", {2}, {-2.75, 1.5}));
  EXPECT_TRUE(has_real(m, "raw_sum", {1}, {0.5}));  // keepdims defaults to 1
  EXPECT_TRUE(has_real(m, "inf", {}, {std::numeric_limits<double>::infinity()}));
  EXPECT_EQ(m.count("big_i32"), 0u);
  EXPECT_TRUE(has(m, "big_i64", {1}, {3000000000}));
  EXPECT_TRUE(has_real(m, "filled", {2}, {0.5, 0.5}));
  EXPECT_TRUE(has_real(m, "range", {6}, {0, 0.25, 0.5, 0.75, 1, 1.25}));
}

// Half and bfloat16 round to nearest, ties to even: 2049 lies halfway between
// the halves 2048 and 2050 (11 significant bits) and goes to 2048; 2051 to
// 2052; 65520 rounds past the largest half (65504) to infinity. bfloat16 keeps
// 8 significant bits: 257 -> 256, 259 -> 260.
TEST(ShapeValues, HalfPrecisionRoundsToNearestEven) {
  G b;
  b.init("ints", {4}, {2049, 2051, 65520, -3});
  b.init("bints", {2}, {257, 259});
  attr(b.node("Cast", {"ints"}, {"half"}), "to", int64_t{TensorProto::FLOAT16});
  attr(b.node("Cast", {"bints"}, {"bf"}), "to", int64_t{TensorProto::BFLOAT16});
  attr(b.node("Cast", {"half"}, {"back"}), "to", int64_t{TensorProto::FLOAT});
  TensorProto h;  // half bits of 1.5 (0x3e00) and -0.5 (0xb800) in int32_data
  h.set_name("h");
  h.set_data_type(TensorProto::FLOAT16);
  h.add_dims(2);
  h.add_int32_data(0x3e00);
  h.add_int32_data(0xb800);
  *b.g.add_initializer() = h;
  b.node("Add", {"h", "h"}, {"h2"});
  const Values m = evaluate_const_values(b.g);
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(has_real(m, "half", {4}, {2048, 2052, inf, -3}, TensorProto::FLOAT16));
  EXPECT_TRUE(has_real(m, "bf", {2}, {256, 260}, TensorProto::BFLOAT16));
  EXPECT_TRUE(has_real(m, "back", {4}, {2048, 2052, inf, -3}));
  EXPECT_TRUE(has_real(m, "h2", {2}, {3, -1}, TensorProto::FLOAT16));
  // Written back as ONNX stores a half (bits in int32_data) for shape inference.
  const TensorProto out = to_tensor_proto(m.at("h2"), "h2");
  ASSERT_EQ(out.int32_data_size(), 2);
  EXPECT_EQ(out.int32_data(0), 0x4200);  // 3.0
  EXPECT_EQ(out.int32_data(1), 0xbc00);  // -1.0
}

}  // namespace
}  // namespace modelstat::loader

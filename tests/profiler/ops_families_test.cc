// Unit tests of the elementwise, reduction and shape-op executors: one tiny
// node each, run through find_executor, compared with hand-computed tensors.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "analyzer/op_traits.hpp"
#include "modelstat/error.hpp"
#include "modelstat/graph.hpp"
#include "profiler/exec_support.hpp"
#include "profiler/ops/exec_rule.hpp"

namespace modelstat::profiler {
namespace {

using test::Attrs;

at::Tensor f32(std::vector<float> v, std::vector<int64_t> shape) {
  return at::tensor(v, at::TensorOptions().dtype(at::kFloat)).reshape(shape);
}
at::Tensor i64(std::vector<int64_t> v, std::vector<int64_t> shape) {
  return at::tensor(v, at::TensorOptions().dtype(at::kLong)).reshape(shape);
}
at::Tensor i32(std::vector<int32_t> v, std::vector<int64_t> shape) {
  return at::tensor(v, at::TensorOptions().dtype(at::kInt)).reshape(shape);
}

// Runs one node of `op` (of `domain`, "" = ai.onnx) at `opset`; undefined
// inputs are omitted optional inputs. float_dtype: the run's compute dtype
// (ExecOptions::float_dtype).
std::vector<at::Tensor> run(const std::string& op, int64_t opset, std::vector<at::Tensor> inputs,
                            Attrs attrs = {}, int num_outputs = 1, at::ScalarType float_dtype = at::kFloat,
                            const std::string& domain = "") {
  return test::run_node(domain, op, opset, std::move(inputs), std::move(attrs), num_outputs, float_dtype);
}

at::Tensor run1(const std::string& op, int64_t opset, std::vector<at::Tensor> inputs, Attrs attrs = {}) {
  auto out = run(op, opset, std::move(inputs), std::move(attrs));
  EXPECT_EQ(out.size(), 1u);
  return out.at(0);
}

void expect_equal(const at::Tensor& got, const at::Tensor& want) {
  ASSERT_TRUE(got.defined());
  EXPECT_EQ(got.scalar_type(), want.scalar_type());
  ASSERT_EQ(got.sizes(), want.sizes()) << got << "\nvs\n" << want;
  if (at::isFloatingType(want.scalar_type()))
    EXPECT_TRUE(at::allclose(got, want, 1e-5, 1e-6)) << got << "\nvs\n" << want;
  else
    EXPECT_TRUE(at::equal(got, want)) << got << "\nvs\n" << want;
}

TEST(OpsFamilies, IntegerDivTruncatesTowardZero) {
  expect_equal(run1("Div", 14, {i32({7, -7, 7, -7}, {4}), i32({2, 2, -2, -2}, {4})}), i32({3, -3, -3, 3}, {4}));
  expect_equal(run1("Div", 14, {f32({7, -7}, {2}), f32({2, 2}, {2})}), f32({3.5f, -3.5f}, {2}));
}

TEST(OpsFamilies, ModFollowsDivisorSignUnlessFmod) {
  expect_equal(run1("Mod", 13, {i64({-4, 7, 5}, {3}), i64({3, -3, 3}, {3})}), i64({2, -2, 2}, {3}));
  expect_equal(run1("Mod", 13, {i64({-4, 7, 5}, {3}), i64({3, -3, 3}, {3})}, {{"fmod", int64_t(1)}}),
               i64({-1, 1, 2}, {3}));
}

TEST(OpsFamilies, PowKeepsBaseType) {
  expect_equal(run1("Pow", 15, {i32({1, 2, 3}, {3}), f32({2, 2, 2}, {3})}), i32({1, 4, 9}, {3}));
}

// A one-element exponent runs as ATen's scalar pow (GPT-2's GELU cubes its
// input): the values of pow, written by hand; a square root keeps pow's
// values at -0 and -inf (pow(-0, 0.5) = +0, pow(-inf, 0.5) = +inf, where
// sqrt gives -0 and NaN).
TEST(OpsFamilies, PowByAOneElementExponentIsPow) {
  const float inf = std::numeric_limits<float>::infinity();
  expect_equal(run1("Pow", 15, {f32({-2, 0.5f, 3, -1}, {2, 2}), f32({3}, {})}), f32({-8, 0.125f, 27, -1}, {2, 2}));
  expect_equal(run1("Pow", 15, {f32({4, 0.25f, 9}, {3}), f32({1.5f}, {1})}), f32({8, 0.125f, 27}, {3}));
  expect_equal(run1("Pow", 15, {f32({2, 4}, {2}), f32({-2}, {1})}), f32({0.25f, 0.0625f}, {2}));
  const at::Tensor roots = run1("Pow", 15, {f32({-0.f, -inf, 16}, {3}), f32({0.5f}, {})});
  EXPECT_FALSE(std::signbit(roots[0].item<float>()));
  EXPECT_EQ(roots[1].item<float>(), inf);
  EXPECT_FLOAT_EQ(roots[2].item<float>(), 4.f);
}

TEST(OpsFamilies, WhereBroadcasts) {
  const at::Tensor cond = at::tensor(std::vector<uint8_t>{1, 0}, at::kByte).to(at::kBool).reshape({1, 2});
  expect_equal(run1("Where", 16, {cond, f32({1, 2, 3, 4}, {2, 2}), f32({-1}, {1})}), f32({1, -1, 3, -1}, {2, 2}));
}

TEST(OpsFamilies, RoundIsHalfToEven) {
  expect_equal(run1("Round", 11, {f32({0.5f, 1.5f, 2.5f, -0.5f, -1.5f}, {5})}), f32({0, 2, 2, -0.f, -2}, {5}));
}

TEST(OpsFamilies, ClipAttributesBeforeOpset11InputsAfter) {
  const at::Tensor x = f32({-2, 0, 2}, {3});
  expect_equal(run1("Clip", 6, {x}, {{"min", -1.0}, {"max", 1.0}}), f32({-1, 0, 1}, {3}));
  expect_equal(run1("Clip", 13, {x, at::Tensor(), f32({1}, {})}), f32({-2, 0, 1}, {3}));
}

// In a training step (an input that requires grad) a Clip with both bounds
// trains as PyTorch's ReLU6 / Hardtanh: the same values, and a gradient of 1
// strictly inside the bounds and 0 elsewhere, at the bounds too (hardtanh's
// backward; clamp's would pass 1 at an input equal to a bound).
TEST(OpsFamilies, ClipWithBothBoundsTrainsAsReLU6) {
  const at::Tensor x = f32({-1, 0, 3, 6, 7}, {5}).requires_grad_(true);
  const at::Tensor y = run1("Clip", 13, {x, f32({0}, {}), f32({6}, {})});
  expect_equal(y.detach(), f32({0, 0, 3, 6, 6}, {5}));
  y.sum().backward();
  expect_equal(x.grad(), f32({0, 0, 1, 0, 0}, {5}));
  // One bound: clamp's gradient (1 up to and at the bound).
  const at::Tensor z = f32({-1, 0, 3}, {3}).requires_grad_(true);
  run1("Clip", 13, {z, f32({0}, {}), at::Tensor()}).sum().backward();
  expect_equal(z.grad(), f32({0, 1, 1}, {3}));
}

// An NCHW MaxPool runs on ATen's channels-last kernel (far faster than its
// plane-by-plane NCHW one). Inference keeps the output channels-last, as the
// Conv groups after it read it; a training step (an input that requires
// grad) turns it back to NCHW, the layout its unfused convolutions are
// timed and run fastest in. Values equal either way: the max of each 2x2
// window of 0..15 in each plane, plane 1 offset by 100.
TEST(OpsFamilies, MaxPoolStaysChannelsLastInInferenceAndNchwInATrainingStep) {
  const at::Tensor x = at::cat({at::arange(16, at::kFloat), at::arange(16, at::kFloat) + 100}).reshape({1, 2, 4, 4});
  const Attrs attrs = {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}};
  const at::Tensor want = f32({5, 7, 13, 15, 105, 107, 113, 115}, {1, 2, 2, 2});
  const at::Tensor inference = run1("MaxPool", 12, {x}, attrs);
  expect_equal(inference, want);
  EXPECT_TRUE(inference.is_contiguous(at::MemoryFormat::ChannelsLast));
  const at::Tensor leaf = x.clone().requires_grad_(true);
  const at::Tensor train = run1("MaxPool", 12, {leaf}, attrs);
  expect_equal(train.detach(), want);
  EXPECT_TRUE(train.is_contiguous());
  train.sum().backward();
  EXPECT_EQ(leaf.grad().sum().item<float>(), 8.0f);  // one 1 per window, at its maximum
}

TEST(OpsFamilies, SoftmaxOpset11CoercesTo2DOpset13UsesOneAxis) {
  const at::Tensor x = f32({0, 0, 0, 0}, {2, 2});
  const at::Tensor x3 = at::zeros({1, 2, 2});
  // Opset 11, axis 1 on [1,2,2]: one row of 4 elements.
  expect_equal(run1("Softmax", 11, {x3}), at::full({1, 2, 2}, 0.25f));
  // Opset 13, axis 1: softmax over dim 1 only (2 elements).
  expect_equal(run1("Softmax", 13, {x3}, {{"axis", int64_t(1)}}), at::full({1, 2, 2}, 0.5f));
  // Opset 13 default axis -1.
  expect_equal(run1("Softmax", 13, {x}), at::full({2, 2}, 0.5f));
}

TEST(OpsFamilies, HardmaxPicksFirstMaximum) {
  expect_equal(run1("Hardmax", 13, {f32({1, 3, 3, 2, 0, 1}, {2, 3})}), f32({0, 1, 0, 1, 0, 0}, {2, 3}));
}

TEST(OpsFamilies, CastUsesOnnxTypeNumbers) {
  expect_equal(run1("Cast", 13, {f32({1.7f, -1.7f}, {2})}, {{"to", int64_t(7)}}), i64({1, -1}, {2}));
  expect_equal(run1("Cast", 13, {f32({0, 2}, {2})}, {{"to", int64_t(9)}}),
               at::tensor(std::vector<uint8_t>{0, 1}, at::kByte).to(at::kBool));
}

TEST(OpsFamilies, QuantizeLinearRoundsHalfToEvenAndSaturates) {
  const at::Tensor y = run1("QuantizeLinear", 13,
                            {f32({0, 1, 3, 1000, -1000}, {5}), f32({2}, {}),
                             at::tensor(std::vector<uint8_t>{10}, at::kByte).reshape({})});
  expect_equal(y, at::tensor(std::vector<uint8_t>{10, 10, 12, 255, 0}, at::kByte));
}

TEST(OpsFamilies, ReduceMeanAxesInputNoKeepdims) {
  const at::Tensor x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  // ReduceMean takes axes as an attribute up to opset 17.
  expect_equal(run1("ReduceMean", 13, {x}, {{"axes", std::vector<int64_t>{-1}}, {"keepdims", int64_t(0)}}),
               f32({2, 5}, {2}));
  // ReduceSum takes them as an input from opset 13.
  expect_equal(run1("ReduceSum", 13, {x, i64({0}, {1})}, {{"keepdims", int64_t(0)}}), f32({5, 7, 9}, {3}));
  expect_equal(run1("ReduceSum", 13, {x, i64({}, {0})}), f32({21}, {1, 1}));
  expect_equal(run1("ReduceSum", 13, {x, i64({}, {0})}, {{"noop_with_empty_axes", int64_t(1)}}), x);
}

TEST(OpsFamilies, ArgMaxSelectLastIndex) {
  const at::Tensor x = f32({2, 5, 5, 1}, {1, 4});
  expect_equal(run1("ArgMax", 13, {x}, {{"axis", int64_t(1)}}), i64({1}, {1, 1}));
  expect_equal(run1("ArgMax", 13, {x}, {{"axis", int64_t(1)}, {"select_last_index", int64_t(1)}, {"keepdims", int64_t(0)}}),
               i64({2}, {1}));
}

TEST(OpsFamilies, CumSumExclusiveReverse) {
  const at::Tensor x = f32({1, 2, 3}, {3});
  const at::Tensor axis = i32({0}, {});
  expect_equal(run1("CumSum", 14, {x, axis}), f32({1, 3, 6}, {3}));
  expect_equal(run1("CumSum", 14, {x, axis}, {{"exclusive", int64_t(1)}, {"reverse", int64_t(1)}}), f32({5, 3, 0}, {3}));
}

TEST(OpsFamilies, TopKLargestAndSmallestTiesByIndex) {
  const at::Tensor x = f32({3, 1, 3, 2}, {1, 4});
  auto out = run("TopK", 11, {x, i64({3}, {1})}, {}, 2);
  expect_equal(out.at(0), f32({3, 3, 2}, {1, 3}));
  expect_equal(out.at(1), i64({0, 2, 3}, {1, 3}));
  out = run("TopK", 11, {x, i64({2}, {1})}, {{"largest", int64_t(0)}}, 2);
  expect_equal(out.at(0), f32({1, 2}, {1, 2}));
  expect_equal(out.at(1), i64({1, 3}, {1, 2}));
  // Opset 1: k is an attribute.
  out = run("TopK", 1, {x}, {{"k", int64_t(1)}}, 2);
  expect_equal(out.at(1), i64({0}, {1, 1}));
}

TEST(OpsFamilies, UniqueUnsortedKeepsFirstOccurrenceOrder) {
  auto out = run("Unique", 11, {f32({2, 1, 1, 3, 4, 3}, {6})}, {{"sorted", int64_t(0)}}, 4);
  expect_equal(out.at(0), f32({2, 1, 3, 4}, {4}));
  expect_equal(out.at(1), i64({0, 1, 3, 4}, {4}));
  expect_equal(out.at(2), i64({0, 1, 1, 2, 3, 2}, {6}));
  expect_equal(out.at(3), i64({1, 2, 2, 1}, {4}));
}

TEST(OpsFamilies, SliceNegativeStepsAndClamping) {
  const at::Tensor x = f32({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {10});
  const int64_t big = std::numeric_limits<int64_t>::max();
  // starts -1, ends INT64_MIN, step -3: 9, 6, 3, 0.
  expect_equal(run1("Slice", 13, {x, i64({-1}, {1}), i64({std::numeric_limits<int64_t>::min()}, {1}), i64({0}, {1}),
                                  i64({-3}, {1})}),
               f32({9, 6, 3, 0}, {4}));
  // starts 2, ends INT64_MAX, step 3: 2, 5, 8.
  expect_equal(run1("Slice", 13, {x, i64({2}, {1}), i64({big}, {1}), at::Tensor(), i64({3}, {1})}), f32({2, 5, 8}, {3}));
  // starts 8, ends 2, step -2: 8, 6, 4.
  expect_equal(run1("Slice", 13, {x, i64({8}, {1}), i64({2}, {1}), i64({0}, {1}), i64({-2}, {1})}), f32({8, 6, 4}, {3}));
  // Opset 9: attributes, start beyond the end gives an empty slice.
  expect_equal(run1("Slice", 9, {x}, {{"starts", std::vector<int64_t>{20}}, {"ends", std::vector<int64_t>{30}}}),
               f32({}, {0}));
}

// A Slice's result is dense in its input's layout: channels 1-2 of a
// channels-last 1x4x3x2 stay channels-last (a Conv group reads them without a
// copy), an NCHW input's stay NCHW; the values are the slice's either way.
TEST(OpsFamilies, SliceKeepsItsInputsLayout) {
  const at::Tensor nchw = at::arange(24, at::kFloat).reshape({1, 4, 3, 2});
  const at::Tensor cl = nchw.contiguous(at::MemoryFormat::ChannelsLast);
  const at::Tensor want = nchw.slice(1, 1, 3);
  for (const at::Tensor& x : {nchw, cl}) {
    const at::Tensor y = run1("Slice", 13, {x, i64({1}, {1}), i64({3}, {1}), i64({1}, {1})});
    expect_equal(y.contiguous(), want.contiguous());
    const bool channels_last = x.is_contiguous(at::MemoryFormat::ChannelsLast);
    EXPECT_TRUE(y.is_contiguous(channels_last ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous))
        << (channels_last ? "channels-last" : "NCHW") << " input";
  }
}

TEST(OpsFamilies, SplitByInputAndEqualParts) {
  const at::Tensor x = f32({1, 2, 3, 4, 5, 6}, {6});
  auto out = run("Split", 13, {x, i64({2, 4}, {2})}, {}, 2);
  expect_equal(out.at(0), f32({1, 2}, {2}));
  expect_equal(out.at(1), f32({3, 4, 5, 6}, {4}));
  out = run("Split", 11, {x}, {{"split", std::vector<int64_t>{1, 5}}}, 2);
  expect_equal(out.at(0), f32({1}, {1}));
  out = run("Split", 13, {x}, {}, 3);
  expect_equal(out.at(2), f32({5, 6}, {2}));
}

TEST(OpsFamilies, ReshapeZeroCopiesAndMinusOneInfers) {
  const at::Tensor x = at::zeros({2, 3, 4});
  EXPECT_EQ(run1("Reshape", 13, {x, i64({0, -1}, {2})}).sizes(), at::IntArrayRef({2, 12}));
  EXPECT_EQ(run1("Reshape", 13, {x, i64({-1, 0, 2}, {3})}).sizes(), at::IntArrayRef({4, 3, 2}));
  // allowzero=1: 0 is a literal zero (only valid with an empty input).
  EXPECT_EQ(run1("Reshape", 14, {at::zeros({0, 3}), i64({3, 0}, {2})}, {{"allowzero", int64_t(1)}}).sizes(),
            at::IntArrayRef({3, 0}));
}

TEST(OpsFamilies, PadReflectEdgeConstant) {
  const at::Tensor x = f32({1, 2, 3}, {1, 3});
  const at::Tensor pads = i64({0, 2, 0, 1}, {4});
  expect_equal(run1("Pad", 13, {x, pads}, {{"mode", std::string("reflect")}}), f32({3, 2, 1, 2, 3, 2}, {1, 6}));
  expect_equal(run1("Pad", 13, {x, pads}, {{"mode", std::string("edge")}}), f32({1, 1, 1, 2, 3, 3}, {1, 6}));
  expect_equal(run1("Pad", 13, {x, pads, f32({9}, {})}), f32({9, 9, 1, 2, 3, 9}, {1, 6}));
  // Opset 2: pads and value are attributes.
  expect_equal(run1("Pad", 2, {x}, {{"pads", std::vector<int64_t>{0, 1, 0, 0}}, {"value", 7.0}}),
               f32({7, 1, 2, 3}, {1, 4}));
}

// Reflect and edge over the last two dims of an image, a crop before a pad,
// an outer dim padded, and wrap: the values worked out by hand.
TEST(OpsFamilies, PadReflectEdgeOverTwoDimsAndCrops) {
  const at::Tensor img = f32({1, 2, 3, 4, 5, 6}, {1, 1, 2, 3});  // rows [1 2 3], [4 5 6]
  const at::Tensor pads = i64({0, 0, 1, 2, 0, 0, 0, 1}, {8});   // H: 1 before; W: 2 before, 1 after
  // W reflected: [3 2 1 2 3 2], [6 5 4 5 6 5]; then H: row 1 above row 0.
  expect_equal(run1("Pad", 13, {img, pads}, {{"mode", std::string("reflect")}}),
               f32({6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5}, {1, 1, 3, 6}));
  // W edge: [1 1 1 2 3 3], [4 4 4 5 6 6]; then H: row 0 repeated above.
  expect_equal(run1("Pad", 13, {img, pads}, {{"mode", std::string("edge")}}),
               f32({1, 1, 1, 2, 3, 3, 1, 1, 1, 2, 3, 3, 4, 4, 4, 5, 6, 6}, {1, 1, 3, 6}));
  // A negative begin crops [1 2 3] to [2 3], which then reflects one after: [2 3 2].
  expect_equal(run1("Pad", 13, {f32({1, 2, 3}, {1, 3}), i64({0, -1, 0, 1}, {4})}, {{"mode", std::string("reflect")}}),
               f32({2, 3, 2}, {1, 3}));
  // The outer dim of a matrix padded too: rows [1 2 3], [4 5 6] reflected one above and W one after.
  expect_equal(run1("Pad", 13, {f32({1, 2, 3, 4, 5, 6}, {2, 3}), i64({1, 0, 0, 1}, {4})},
                    {{"mode", std::string("reflect")}}),
               f32({4, 5, 6, 5, 1, 2, 3, 2, 4, 5, 6, 5}, {3, 4}));
  // Wrap (opset 19): [1 2 3] continued cyclically, 2 before and 1 after: [2 3 1 2 3 1].
  expect_equal(run1("Pad", 19, {f32({1, 2, 3}, {1, 3}), i64({0, 2, 0, 1}, {4})}, {{"mode", std::string("wrap")}}),
               f32({2, 3, 1, 2, 3, 1}, {1, 6}));
}

TEST(OpsFamilies, GatherNegativeIndices) {
  const at::Tensor x = f32({1, 2, 3, 4, 5, 6}, {3, 2});
  expect_equal(run1("Gather", 13, {x, i64({-1, 0}, {2})}), f32({5, 6, 1, 2}, {2, 2}));
  expect_equal(run1("Gather", 13, {x, i64({-1}, {})}, {{"axis", int64_t(1)}}), f32({2, 4, 6}, {3}));
}

TEST(OpsFamilies, GatherNDWithBatchDims) {
  const at::Tensor x = f32({0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2});
  expect_equal(run1("GatherND", 13, {x, i64({1, 0, 0, 1}, {2, 2})}), f32({4, 5, 2, 3}, {2, 2}));
  expect_equal(run1("GatherND", 13, {x, i64({1, 0}, {2, 1})}, {{"batch_dims", int64_t(1)}}), f32({2, 3, 4, 5}, {2, 2}));
}

TEST(OpsFamilies, ScatterNDAdd) {
  const at::Tensor x = f32({1, 2, 3, 4}, {4});
  expect_equal(run1("ScatterND", 16, {x, i64({1, 1}, {2, 1}), f32({10, 20}, {2})}, {{"reduction", std::string("add")}}),
               f32({1, 32, 3, 4}, {4}));
}

TEST(OpsFamilies, ExpandBroadcastsBothWays) {
  const at::Tensor x = f32({1, 2, 3}, {3, 1});
  expect_equal(run1("Expand", 13, {x, i64({2, 1, 2}, {3})}), f32({1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}, {2, 3, 2}));
  // A shape dim of 1 keeps X's dim.
  EXPECT_EQ(run1("Expand", 13, {x, i64({1, 1}, {2})}).sizes(), at::IntArrayRef({3, 1}));
}

TEST(OpsFamilies, SqueezeUnsqueezeAttributeAndInputForms) {
  const at::Tensor x = at::zeros({1, 3, 1});
  EXPECT_EQ(run1("Squeeze", 11, {x}, {{"axes", std::vector<int64_t>{-1}}}).sizes(), at::IntArrayRef({1, 3}));
  EXPECT_EQ(run1("Squeeze", 13, {x, i64({0}, {1})}).sizes(), at::IntArrayRef({3, 1}));
  EXPECT_EQ(run1("Squeeze", 13, {x}).sizes(), at::IntArrayRef({3}));
  EXPECT_EQ(run1("Unsqueeze", 13, {at::zeros({3}), i64({-1, 0}, {2})}).sizes(), at::IntArrayRef({1, 3, 1}));
  EXPECT_EQ(run1("Unsqueeze", 11, {at::zeros({3})}, {{"axes", std::vector<int64_t>{1}}}).sizes(),
            at::IntArrayRef({3, 1}));
}

TEST(OpsFamilies, TransposeDefaultReversesDims) {
  const at::Tensor x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  expect_equal(run1("Transpose", 13, {x}), f32({1, 4, 2, 5, 3, 6}, {3, 2}));
}

TEST(OpsFamilies, ShapeStartEndAndConstantOfShape) {
  const at::Tensor x = at::zeros({2, 3, 4});
  expect_equal(run1("Shape", 15, {x}, {{"start", int64_t(-2)}}), i64({3, 4}, {2}));
  AttrTensor value;
  value.dtype = DType::Int32;
  value.shape.rank_known = true;
  value.shape.dims = {Dim{1, {}}};
  value.bytes.has_inline = true;
  const int32_t seven = 7;
  value.bytes.inline_bytes.assign(reinterpret_cast<const char*>(&seven), sizeof seven);
  expect_equal(run1("ConstantOfShape", 9, {i64({2}, {1})}, {{"value", value}}), i32({7, 7}, {2}));
  expect_equal(run1("Constant", 13, {}, {{"value", value}}), i32({7}, {1}));
  expect_equal(run1("Constant", 13, {}, {{"value_ints", std::vector<int64_t>{1, 2}}}), i64({1, 2}, {2}));
}

// In a reduced-precision run the float tensors creation ops and Cast make
// take the compute dtype (the float compute dtype wins over the model's float
// types); integer types are untouched, and an fp32 run keeps the model's types.
TEST(OpsFamilies, CreationOpsAndCastFollowReducedFloatDtype) {
  const at::ScalarType bf16 = at::kBFloat16;
  auto run_bf16 = [&](const std::string& op, int64_t opset, std::vector<at::Tensor> inputs, Attrs attrs = {}) {
    auto out = run(op, opset, std::move(inputs), std::move(attrs), 1, bf16);
    EXPECT_EQ(out.size(), 1u);
    return out.at(0);
  };
  AttrTensor floats;
  floats.dtype = DType::Double;
  floats.shape.rank_known = true;
  floats.shape.dims = {Dim{2, {}}};
  floats.bytes.has_inline = true;
  const double values[2] = {1.5, -2.0};
  floats.bytes.inline_bytes.assign(reinterpret_cast<const char*>(values), sizeof values);
  AttrTensor one_int = floats;
  one_int.dtype = DType::Int32;
  one_int.shape.dims = {Dim{1, {}}};
  const int32_t seven = 7;
  one_int.bytes.inline_bytes.assign(reinterpret_cast<const char*>(&seven), sizeof seven);

  expect_equal(run_bf16("Constant", 13, {}, {{"value", floats}}), f32({1.5f, -2.0f}, {2}).to(bf16));
  expect_equal(run_bf16("Constant", 13, {}, {{"value_float", 0.25}}), f32({0.25f}, {}).to(bf16));
  expect_equal(run_bf16("Constant", 13, {}, {{"value_floats", std::vector<double>{1, 2}}}), f32({1, 2}, {2}).to(bf16));
  expect_equal(run_bf16("Constant", 13, {}, {{"value", one_int}}), i32({7}, {1}));
  expect_equal(run_bf16("Constant", 13, {}, {{"value_ints", std::vector<int64_t>{1, 2}}}), i64({1, 2}, {2}));
  expect_equal(run_bf16("ConstantOfShape", 9, {i64({2}, {1})}), f32({0, 0}, {2}).to(bf16));
  expect_equal(run_bf16("ConstantOfShape", 9, {i64({2}, {1})}, {{"value", one_int}}), i32({7, 7}, {2}));
  expect_equal(run_bf16("Range", 11, {f32({0.5f}, {}), f32({3}, {}), f32({1}, {})}), f32({0.5f, 1.5f, 2.5f}, {3}).to(bf16));
  expect_equal(run_bf16("Range", 11, {i64({0}, {}), i64({3}, {}), i64({1}, {})}), i64({0, 1, 2}, {3}));
  expect_equal(run_bf16("EyeLike", 9, {i64({0, 0, 0, 0}, {2, 2})}, {{"dtype", int64_t(DType::Double)}}),
               f32({1, 0, 0, 1}, {2, 2}).to(bf16));
  EXPECT_EQ(run_bf16("HannWindow", 17, {i64({4}, {})}).scalar_type(), bf16);
  const at::Tensor x = f32({1.5f, -2.0f}, {2});
  for (const DType to : {DType::Float, DType::Float16, DType::Double, DType::BFloat16})
    EXPECT_EQ(run_bf16("Cast", 13, {x}, {{"to", int64_t(to)}}).scalar_type(), bf16) << dtype_name(to);
  expect_equal(run_bf16("Cast", 13, {x}, {{"to", int64_t(DType::Int64)}}), i64({1, -2}, {2}));
  expect_equal(run_bf16("CastLike", 15, {i64({3}, {1}), at::zeros({1}, at::kDouble)}), f32({3}, {1}).to(bf16));
  // fp32 runs keep the model's float types.
  EXPECT_EQ(run1("Cast", 13, {x}, {{"to", int64_t(DType::Double)}}).scalar_type(), at::kDouble);
  EXPECT_EQ(run1("Constant", 13, {}, {{"value", floats}}).scalar_type(), at::kDouble);
}

TEST(OpsFamilies, LargeStrippedConstantIsAnInputError) {
  AttrTensor value;
  value.dtype = DType::Float;
  value.shape.rank_known = true;
  value.shape.dims = {Dim{4096, {}}};
  value.bytes.payload.push_back(PayloadRef{9, 100, 16384});
  try {
    run("Constant", 13, {}, {{"value", value}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find("large Constant not loaded"), std::string::npos);
  }
}

TEST(OpsFamilies, RangeOneHotTriluDepthToSpace) {
  expect_equal(run1("Range", 11, {i32({10}, {}), i32({4}, {}), i32({-3}, {})}), i32({10, 7}, {2}));
  expect_equal(run1("OneHot", 11, {i64({1, -1}, {2}), i64({3}, {}), f32({0, 5}, {2})}), f32({0, 5, 0, 0, 0, 5}, {2, 3}));
  expect_equal(run1("Trilu", 14, {f32({1, 2, 3, 4}, {2, 2}), i64({1}, {})}), f32({0, 2, 0, 0}, {2, 2}));
  expect_equal(run1("Trilu", 14, {f32({1, 2, 3, 4}, {2, 2})}, {{"upper", int64_t(0)}}), f32({1, 0, 3, 4}, {2, 2}));
  const at::Tensor x = at::arange(8, at::kFloat).reshape({1, 8, 1, 1});
  // DCR: output channel c, offset (i, j) reads input channel (i*b + j)*C' + c.
  expect_equal(run1("DepthToSpace", 13, {x}, {{"blocksize", int64_t(2)}}), f32({0, 2, 4, 6, 1, 3, 5, 7}, {1, 2, 2, 2}));
  // CRD: input channel c*b*b + i*b + j.
  expect_equal(run1("DepthToSpace", 13, {x}, {{"blocksize", int64_t(2)}, {"mode", std::string("CRD")}}),
               f32({0, 1, 2, 3, 4, 5, 6, 7}, {1, 2, 2, 2}));
}

TEST(OpsFamilies, Opset18FormsAxesInputsCropPadAndActivations) {
  const at::Tensor x = f32({1, 5, 3, 4}, {2, 2});
  // Opset 18: every Reduce* takes axes as an input.
  expect_equal(run1("ReduceMax", 18, {x, i64({1}, {1})}, {{"keepdims", int64_t(0)}}), f32({5, 4}, {2}));
  expect_equal(run1("ReduceL1", 18, {f32({-1, 2}, {2}), i64({}, {0})}, {{"noop_with_empty_axes", int64_t(1)}}),
               f32({1, 2}, {2}));
  // CenterCropPad: crop 4 -> 2 keeps the middle, pad 1 -> 3 centres.
  expect_equal(run1("CenterCropPad", 18, {f32({1, 2, 3, 4}, {1, 4}), i64({3, 2}, {2})}),
               f32({0, 0, 2, 3, 0, 0}, {3, 2}));
  const at::Tensor v = f32({-1, 0, 1}, {3});
  expect_equal(run1("Mish", 18, {v}), v * at::tanh(at::log1p(at::exp(v))));
  expect_equal(run1("Gelu", 20, {v}), v * 0.5 * (1 + at::erf(v / std::sqrt(2.0))));
}

// GELU of a channels-last tensor (a Conv group's output) runs on the memory
// as the contiguous NHWC tensor it is (profiler/ops/post_ops.hpp, gelu_dense):
// the same values as the formula on the NCHW tensor, for both forms, and the
// output keeps the input's layout.
TEST(OpsFamilies, GeluOfAChannelsLastTensorHasTheValuesOfTheFormula) {
  at::manual_seed(11);
  const at::Tensor x = at::randn({2, 5, 3, 4});
  const at::Tensor cl = x.contiguous(at::MemoryFormat::ChannelsLast);
  const at::Tensor erf_form = x * 0.5 * (1 + at::erf(x / std::sqrt(2.0)));
  const at::Tensor y = run("Gelu", 20, {cl}).at(0);
  EXPECT_TRUE(y.is_contiguous(at::MemoryFormat::ChannelsLast));
  EXPECT_TRUE(at::allclose(y, erf_form, 1e-5, 1e-6));
  // tanh form: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
  const at::Tensor tanh_form = x * 0.5 * (1 + at::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
  const at::Tensor t = run("Gelu", 20, {cl}, {{"approximate", std::string("tanh")}}).at(0);
  EXPECT_TRUE(at::allclose(t, tanh_form, 1e-5, 1e-6));
}

// x*sigmoid(alpha*x) by hand: sigmoid(1.702) = 1/(1+e^-1.702) = 1/1.182327 = 0.8457958, so
// x = 1 gives 0.8457958, x = -1 gives -(1-0.8457958) = -0.1542042, x = 2 gives
// 2/(1+e^-3.404) = 1.9356586; with alpha = 1, x = 1 gives sigmoid(1) = 0.7310586.
TEST(OpsFamilies, QuickGeluOfOnnxRuntime) {
  const at::Tensor v = f32({-1, 0, 1, 2}, {4});
  auto quick_gelu = [&](Attrs attrs) {
    return run("QuickGelu", 1, {v}, std::move(attrs), 1, at::kFloat, "com.microsoft").at(0);
  };
  expect_equal(quick_gelu({}), f32({-0.1542042f, 0.f, 0.8457958f, 1.9356586f}, {4}));
  expect_equal(quick_gelu({{"alpha", 1.0}}), f32({-0.2689414f, 0.f, 0.7310586f, 1.7615942f}, {4}));
}

// The "may run in place" trait of an op's record is what its executor does:
// given a reusable input 0 of the output's shape, exactly the ops with the
// trait write their result into it (fit's inference memory counts on it).
TEST(OpsFamilies, InPlaceTraitMatchesTheExecutors) {
  const std::vector<std::pair<const char*, int>> ops = {
      {"Add", 2}, {"Sub", 2},     {"Mul", 2},  {"Div", 2},  {"Pow", 2},  {"Max", 2},     {"Min", 2},
      {"Relu", 1}, {"Clip", 3},   {"Sigmoid", 1}, {"Tanh", 1}, {"Exp", 1}, {"Neg", 1}, {"Abs", 1},
      {"Sqrt", 1}, {"Erf", 1},    {"LeakyRelu", 1}, {"Softplus", 1}, {"HardSigmoid", 1}, {"Elu", 1}};
  for (const auto& [op, arity] : ops) {
    Graph graph;
    Node node;
    node.name = std::string(op) + "_0";
    node.op_type = op;
    std::vector<at::Tensor> inputs = {f32({0.5f, 1.f, 2.f, 3.f}, {4})};
    if (arity == 2) inputs.push_back(f32({2.f, 2.f, 2.f, 2.f}, {4}));
    if (arity == 3) inputs = {inputs[0], f32({0.f}, {}), f32({2.5f}, {})};
    for (size_t i = 0; i < inputs.size(); ++i) node.inputs.push_back(int(i));
    node.outputs = {int(inputs.size())};
    const void* input_data = inputs[0].data_ptr();
    const ExecRule* rule = find_executor("", op, 17);
    ASSERT_NE(rule, nullptr) << op;
    ExecContext ctx(graph, node, 17, std::move(inputs));
    ctx.set_reusable(std::vector<bool>(node.inputs.size(), true));
    rule->fn(ctx);
    ASSERT_EQ(ctx.outputs.size(), 1u) << op;
    EXPECT_EQ(ctx.outputs[0].data_ptr() == input_data, op_may_run_in_place(node)) << op;
  }
}

// Squeeze-excite's Mul(scale N x C x 1 x 1, x N x C x H x W): Add and Mul,
// whose operands commute, write the result into input 1 when input 0 (the
// broadcast one) cannot take it; Sub may not. The values against a
// hand-written loop; the buffer by its address, so the test fails if the path
// stops applying (analyzer/lifetimes.cc counts on it: Lifetimes tests).
TEST(OpsFamilies, AddAndMulWriteIntoABroadcastLeftOperandsPartner) {
  const int64_t n = 2, c = 3, h = 2, w = 2;
  for (const char* op : {"Mul", "Add", "Sub"}) {
    const at::Tensor scale = at::arange(1, n * c + 1, at::kFloat).reshape({n, c, 1, 1}) * 0.5;
    at::Tensor x = (at::arange(n * c * h * w, at::kFloat) - 7.0).reshape({n, c, h, w});
    x = x.contiguous(at::MemoryFormat::ChannelsLast);  // as a Conv group leaves it
    at::Tensor expected = at::empty({n, c, h, w}, at::kDouble);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < c; ++j)
        for (int64_t y = 0; y < h; ++y)
          for (int64_t z = 0; z < w; ++z) {
            const double s = 0.5 * double(i * c + j + 1), v = double(i * c * h * w + j * h * w + y * w + z) - 7.0;
            expected[i][j][y][z] = std::string(op) == "Mul" ? s * v : std::string(op) == "Add" ? s + v : s - v;
          }
    Graph graph;
    Node node;
    node.name = std::string(op) + "_0";
    node.op_type = op;
    node.inputs = {0, 1};
    node.outputs = {2};
    const void* x_data = x.data_ptr();
    const ExecRule* rule = find_executor("", op, 13);
    ASSERT_NE(rule, nullptr) << op;
    ExecContext ctx(graph, node, 13, {scale, x});
    ctx.set_reusable({true, true});
    rule->fn(ctx);
    ASSERT_EQ(ctx.outputs.size(), 1u) << op;
    EXPECT_TRUE(at::equal(ctx.outputs[0].to(at::kDouble), expected)) << op << ":\n" << ctx.outputs[0];
    EXPECT_EQ(ctx.outputs[0].data_ptr() == x_data, std::string(op) != "Sub") << op;
  }
}

TEST(OpsFamilies, DropoutIsIdentityWithAllTrueMask) {
  const at::Tensor x = f32({1, 2}, {2});
  auto out = run("Dropout", 13, {x}, {}, 2);
  expect_equal(out.at(0), x);
  expect_equal(out.at(1), at::ones({2}, at::kBool));
}

// Old opsets (issue 12; tests/profiler/opset_cases_test.cc runs the cases
// that compute): a pair of shapes the old rule forbids, which numpy
// broadcasting would accept, is refused with an error naming the op and the
// opset the model imports.
void expect_refused(const std::string& op, int64_t opset, std::vector<at::Tensor> inputs, Attrs attrs,
                    const std::string& words, int num_outputs = 1) {
  SCOPED_TRACE(op + " opset " + std::to_string(opset));
  try {
    run(op, opset, std::move(inputs), std::move(attrs), num_outputs);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_EQ(e.op(), op);
    const std::string what = e.what();
    EXPECT_NE(what.find("opset " + std::to_string(opset)), std::string::npos) << what;
    EXPECT_NE(what.find(words), std::string::npos) << what;
  }
}

TEST(OpsFamilies, OldOpsetsRefuseBroadcastsTheyForbid) {
  const at::Tensor a23 = f32({1, 2, 3, 4, 5, 6}, {2, 3}), b3 = f32({10, 20, 30}, {3});
  // Binary ops before opset 7: equal shapes without broadcast=1 ...
  expect_refused("Add", 6, {a23, b3}, {}, "must have the same shape");
  // ... and with it B onto A only, B's dims matching A's from `axis`.
  expect_refused("Mul", 6, {b3, a23}, {{"broadcast", int64_t(1)}}, "more dims than A");
  expect_refused("Sub", 1, {a23, b3}, {{"broadcast", int64_t(1)}, {"axis", int64_t(0)}}, "does not match A");
  // From opset 7 the same pair broadcasts numpy-style.
  expect_equal(run1("Add", 7, {a23, b3}), f32({11, 22, 33, 14, 25, 36}, {2, 3}));
  // Sum, Max, Min, Mean before opset 8: no broadcasting at all.
  expect_refused("Sum", 6, {a23, b3}, {}, "do not broadcast");
  expect_refused("Max", 1, {a23, f32({1}, {1})}, {}, "do not broadcast");
  expect_equal(run1("Sum", 8, {a23, b3}), f32({11, 22, 33, 14, 25, 36}, {2, 3}));
  // Gemm before opset 7: C is (M, N) unless broadcast=1.
  const at::Tensor b34 = at::ones({3, 4}, at::kFloat), c4 = f32({1, 2, 3, 4}, {4});
  expect_refused("Gemm", 6, {a23, b34, c4}, {}, "must be (M, N)");
  expect_equal(run1("Gemm", 6, {a23, b34, c4}, {{"broadcast", int64_t(1)}}),
               f32({7, 8, 9, 10, 16, 17, 18, 19}, {2, 4}));
  // PRelu before opset 7: a 1-D slope against a 4-D X is per channel or per last dim: ambiguous.
  expect_refused("PRelu", 6, {at::ones({1, 3, 2, 2}, at::kFloat), b3}, {}, "ambiguous");
  // BatchNormalization in test mode (is_test=1) defines no running-stat outputs.
  const at::Tensor c3 = at::ones({3}, at::kFloat);
  expect_refused("BatchNormalization", 6, {at::ones({1, 3, 2}, at::kFloat), c3, c3, c3, c3}, {{"is_test", int64_t(1)}},
                 "is_test=1", 3);
}

// Dropout-1/6: is_test=0, the default, is training: each element kept (scaled
// by 1/(1-ratio)) or zeroed, the mask of X's type; is_test=1 is the identity.
TEST(OpsFamilies, DropoutBeforeOpset7TrainsUnlessIsTest) {
  at::manual_seed(12);
  const at::Tensor x = at::arange(1, 4001, at::kFloat);
  auto out = run("Dropout", 6, {x}, {{"ratio", 0.25}}, 2);
  const at::Tensor& y = out.at(0);
  const at::Tensor& mask = out.at(1);
  EXPECT_EQ(mask.scalar_type(), at::kFloat);
  EXPECT_TRUE(((mask == 0) | (mask == 1)).all().item<bool>());
  EXPECT_TRUE(at::allclose(y, at::where(mask == 1, x / 0.75, at::zeros_like(x))));
  // 4000 draws of keep probability 0.75: standard deviation of the mean ~0.007.
  EXPECT_NEAR(mask.mean().item<double>(), 0.75, 0.035);
  expect_equal(run1("Dropout", 6, {x}, {{"ratio", 0.25}, {"is_test", int64_t(1)}}), x);
  expect_equal(run1("Dropout", 7, {x}, {{"ratio", 0.25}}), x);  // opsets 7-11: inference
}

TEST(OpsFamilies, UnsupportedAttributeIsAnInputError) {
  try {
    run("Pad", 13, {f32({1}, {1}), i64({1, 1}, {2})}, {{"mode", std::string("mirror")}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_EQ(e.op(), "Pad");
  }
}

}  // namespace
}  // namespace modelstat::profiler

namespace modelstat::profiler {
namespace {

// Gather with a few indices (wrapped on the host) and with many (on ATen):
// the same rows either way, int32 indices as int64 ones, and an index out of
// range refused as the model's error on either path.
TEST(OpsFamilies, GatherFewAndManyIndices) {
  const at::Tensor x = f32({1, 2, 3, 4, 5, 6}, {3, 2});
  expect_equal(run1("Gather", 13, {x, i64({-2}, {})}), f32({3, 4}, {2}));   // one row: x[1]
  expect_equal(run1("Gather", 13, {x, i32({2, -3}, {2})}), f32({5, 6, 1, 2}, {2, 2}));
  expect_equal(run1("Gather", 13, {x, i64({1, 0, -1}, {3, 1})}, {{"axis", int64_t(1)}}), f32({2, 1, 2, 4, 3, 4, 6, 5, 6}, {3, 3, 1}));
  std::vector<int64_t> many(100, -1);
  std::vector<float> rows;
  for (int k = 0; k < 100; ++k) rows.insert(rows.end(), {5, 6});
  expect_equal(run1("Gather", 13, {x, i64(many, {100})}), f32(rows, {100, 2}));
  try {
    run1("Gather", 13, {x, i64({3}, {1})});
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find("index 3 is out of range for a dim of size 3"), std::string::npos) << e.what();
  }
}

// tf2onnx writes a Pad of channels as Concat(x, zeros) on axis 1. With x
// channels-last (a Conv group's output) and the zeros plain, the output keeps
// x's layout (ATen's cat would write NCHW, and the next Conv would transpose
// it back); the values are the concatenation's either way.
TEST(OpsFamilies, ConcatKeepsTheLargestPartsChannelsLastLayout) {
  at::manual_seed(7);
  const at::Tensor x = at::randn({1, 6, 5, 4}).contiguous(at::MemoryFormat::ChannelsLast);
  const at::Tensor zeros = at::zeros({1, 2, 5, 4});
  const at::Tensor y = run("Concat", 13, {x, zeros}, {{"axis", int64_t(1)}}).at(0);
  ASSERT_EQ(y.sizes(), (at::IntArrayRef{1, 8, 5, 4}));
  EXPECT_TRUE(y.is_contiguous(at::MemoryFormat::ChannelsLast));
  for (int64_t c = 0; c < 8; ++c)
    for (int64_t h = 0; h < 5; ++h)
      for (int64_t w = 0; w < 4; ++w)
        ASSERT_EQ(y[0][c][h][w].item<float>(), c < 6 ? x[0][c][h][w].item<float>() : 0.f) << c << " " << h << " " << w;
  // Zeros first, on another axis: the same rule, the same values.
  const at::Tensor z = run("Concat", 13, {at::zeros({1, 6, 1, 4}), x}, {{"axis", int64_t(-2)}}).at(0);
  EXPECT_TRUE(z.is_contiguous(at::MemoryFormat::ChannelsLast));
  EXPECT_TRUE(at::equal(z.slice(2, 1, 6), x));
  EXPECT_TRUE(at::equal(z.slice(2, 0, 1), at::zeros({1, 6, 1, 4})));
  // Plain inputs stay plain.
  EXPECT_TRUE(run("Concat", 13, {x.contiguous(), zeros}, {{"axis", int64_t(1)}}).at(0).is_contiguous());
  // A training step's forward (autograd recording): ATen's cat, which has a backward.
  at::AutoGradMode on(true);
  const at::Tensor trained = x.clone().requires_grad_(true);
  const at::Tensor t = run("Concat", 13, {trained, zeros}, {{"axis", int64_t(1)}}).at(0);
  EXPECT_TRUE(t.requires_grad());
  EXPECT_TRUE(at::equal(t.detach(), y));
}

// Concat runs as rows of bytes in the largest part's layout, split across
// threads: every axis, plain and channels-last parts (mixed too), another
// dtype, an empty part and a map large enough to split, against ATen's cat
// of the same parts (values; the layout is the largest part's).
TEST(OpsFamilies, ConcatAsRowsEqualsAtenCatOnEveryAxisAndLayout) {
  at::manual_seed(11);
  const int saved_threads = at::get_num_threads();
  at::set_num_threads(2);
  struct Case {
    std::string name;
    std::vector<std::vector<int64_t>> parts;
    int64_t axis;
    std::vector<bool> channels_last;  // per part
  };
  const std::vector<Case> cases = {
      {"channels, channels-last (DenseNet)", {{2, 64, 14, 14}, {2, 32, 14, 14}, {2, 32, 14, 14}}, 1, {true, true, true}},
      {"channels, plain", {{2, 5, 3, 4}, {2, 7, 3, 4}}, 1, {false, false}},
      {"height, channels-last", {{1, 6, 2, 5}, {1, 6, 3, 5}}, 2, {true, true}},
      {"width, channels-last", {{2, 6, 4, 2}, {2, 6, 4, 3}}, 3, {true, true}},
      {"batch, channels-last", {{1, 6, 4, 4}, {2, 6, 4, 4}}, 0, {true, true}},
      {"channels, a plain part beside channels-last ones", {{1, 16, 8, 8}, {1, 3, 8, 8}}, 1, {true, false}},
      {"channels, an empty part", {{1, 4, 3, 3}, {1, 0, 3, 3}, {1, 2, 3, 3}}, 1, {true, true, true}},
      {"rank 2, last axis", {{3, 4}, {3, 9}}, 1, {false, false}},
      {"rank 3, first axis", {{2, 3, 4}, {5, 3, 4}}, 0, {false, false}},
      {"a large map, split across threads", {{1, 128, 56, 56}, {1, 32, 56, 56}}, 1, {true, true}},
  };
  for (const Case& c : cases) {
    std::vector<at::Tensor> parts;
    for (size_t i = 0; i < c.parts.size(); ++i) {
      at::Tensor p = at::randn(c.parts[i]);
      if (c.channels_last[i]) p = p.contiguous(at::MemoryFormat::ChannelsLast);
      parts.push_back(p);
    }
    const at::Tensor want = at::cat(parts, c.axis).contiguous();
    const at::Tensor y = run("Concat", 13, parts, {{"axis", c.axis}}).at(0);
    ASSERT_EQ(y.sizes(), want.sizes()) << c.name;
    EXPECT_TRUE(at::equal(y.contiguous(), want)) << c.name;
    EXPECT_EQ(y.is_contiguous(at::MemoryFormat::ChannelsLast) && !y.is_contiguous(), c.channels_last[0])
        << c.name << ": the largest part's layout";
  }
  // Integers (a shape computation's Concat): the same bytes.
  const at::Tensor a = at::arange(6, at::kLong).reshape({2, 3}), b = at::arange(4, at::kLong).reshape({2, 2});
  EXPECT_TRUE(at::equal(run("Concat", 13, {a, b}, {{"axis", int64_t(1)}}).at(0), at::cat({a, b}, 1)));
  at::set_num_threads(saved_threads);
}

}  // namespace
}  // namespace modelstat::profiler

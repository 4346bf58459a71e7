// One case per op: a declarative table that drives both the cost test
// (tests/analyzer/op_cases_test.cc: MACs, FLOPs and bytes of the analysis) and
// the executor check (tests/profiler/op_cases_exec_test.cc: the node run
// through its ATen executor against a reference computed here by formula,
// and its output shape against the one the case states).
//
// Every expected figure is derived by hand in the comment beside it, from the
// conventions of docs/COST_MODEL.md (fp32: 4 bytes an element; bytes read =
// every input, weights included; bytes written = the output; views move 0),
// never by calling the code under test. Every float input holds case_value():
// a formula, so the references recompute their inputs exactly.
//
// To add an op: one row below (ARCHITECTURE.md, "How to add an op").
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "modelstat/graph.hpp"

namespace modelstat::test {

using Values = std::vector<double>;  // a tensor's elements, row-major

struct OpCaseInput {
  std::vector<int64_t> dims;
  bool weight = false;                // an initializer (a constant of the model), not a graph input
  std::vector<int64_t> int64_values;  // non-empty: an int64 constant (Reshape's shape) with these values
};
// A graph input, a float weight, an int64 constant of rank 1.
inline OpCaseInput input(std::vector<int64_t> dims) {
  return {std::move(dims), false, {}};
}
inline OpCaseInput weight(std::vector<int64_t> dims) {
  return {std::move(dims), true, {}};
}
inline OpCaseInput int64_constant(std::vector<int64_t> values) {
  return {{int64_t(values.size())}, true, std::move(values)};
}

struct OpCase {
  std::string name;
  std::string op;
  int64_t opset = 17;
  std::map<std::string, AttrValue> attrs;
  std::vector<OpCaseInput> inputs;
  std::vector<int64_t> output;  // the one output's dims
  int64_t macs = 0, flops = 0, bytes_read = 0, bytes_written = 0;
  // The output's elements from the float inputs' elements (int64 inputs are
  // passed as their values converted to double).
  std::function<Values(const std::vector<Values>& in)> reference;
};

// Element i of float input k: ((7i + 5k) mod 13 - 6) / 8, in [-0.75, 0.75],
// exact in fp32, never all zeros, different per input.
inline double case_value(size_t input_index, int64_t i) {
  return double((7 * i + 5 * int64_t(input_index)) % 13 - 6) / 8.0;
}

inline int64_t element_count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// The inputs' values as the references see them.
inline std::vector<Values> case_inputs(const OpCase& c) {
  std::vector<Values> in;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    Values v;
    if (!c.inputs[k].int64_values.empty()) {
      for (int64_t x : c.inputs[k].int64_values) v.push_back(double(x));
    } else {
      for (int64_t i = 0; i < element_count(c.inputs[k].dims); ++i) v.push_back(case_value(k, i));
    }
    in.push_back(std::move(v));
  }
  return in;
}

// ---------------------------------------------------------------- references
// Written from each op's ONNX definition, on the shapes of its case.

// y[r, j] over rows of `width` elements: f applied to each row.
inline Values per_row(const Values& x, int64_t width, const std::function<void(const double*, double*)>& f) {
  Values y(x.size());
  for (size_t r = 0; r * size_t(width) < x.size(); ++r) f(&x[r * size_t(width)], &y[r * size_t(width)]);
  return y;
}

inline const std::vector<OpCase>& op_cases() {
  static const std::vector<OpCase> cases = [] {
    std::vector<OpCase> c;

    // Conv X [1,2,4,4], W [3,2,3,3], B [3], pads 1: Y [1,3,4,4] (48 elements).
    // MACs = 1*3*(4*4) * 2*(3*3) = 48*18 = 864; FLOPs = 2*864 + 48 (bias) = 1776.
    // Read (32 + 54 + 3)*4 = 356 B; written 48*4 = 192 B.
    c.push_back({"conv_3x3_pad1_bias",
                 "Conv",
                 17,
                 {{"pads", std::vector<int64_t>{1, 1, 1, 1}}},
                 {input({1, 2, 4, 4}), weight({3, 2, 3, 3}), weight({3})},
                 {1, 3, 4, 4},
                 864,
                 1776,
                 356,
                 192,
                 [](const std::vector<Values>& in) {
                   const Values &x = in[0], &w = in[1], &b = in[2];
                   Values y(48);
                   for (int co = 0; co < 3; ++co)
                     for (int oh = 0; oh < 4; ++oh)
                       for (int ow = 0; ow < 4; ++ow) {
                         double s = b[size_t(co)];
                         for (int ci = 0; ci < 2; ++ci)
                           for (int kh = 0; kh < 3; ++kh)
                             for (int kw = 0; kw < 3; ++kw) {
                               const int ih = oh + kh - 1, iw = ow + kw - 1;
                               if (ih < 0 || ih >= 4 || iw < 0 || iw >= 4) continue;
                               s += x[size_t((ci * 4 + ih) * 4 + iw)] *
                                    w[size_t(((co * 2 + ci) * 3 + kh) * 3 + kw)];
                             }
                         y[size_t((co * 4 + oh) * 4 + ow)] = s;
                       }
                   return y;
                 }});

    // MatMul A [2,3,4] x B [4,5] (B broadcast over the batch): Y [2,3,5].
    // MACs = 2*3*5*4 = 120; FLOPs = 240. Read (24 + 20)*4 = 176 B; written 30*4 = 120 B.
    c.push_back({"matmul_batched",
                 "MatMul",
                 17,
                 {},
                 {input({2, 3, 4}), input({4, 5})},
                 {2, 3, 5},
                 120,
                 240,
                 176,
                 120,
                 [](const std::vector<Values>& in) {
                   Values y(30);
                   for (int r = 0; r < 6; ++r)
                     for (int n = 0; n < 5; ++n) {
                       double s = 0;
                       for (int k = 0; k < 4; ++k) s += in[0][size_t(r * 4 + k)] * in[1][size_t(k * 5 + n)];
                       y[size_t(r * 5 + n)] = s;
                     }
                   return y;
                 }});

    // Gemm A [2,3], B [4,3] (transB), C [4], alpha 0.5, beta 2: Y [2,4]; M=2, N=4, K=3.
    // MACs = 2*4*3 = 24; FLOPs = 2*24 + 8 (C) + 8 (alpha != 1) + 8 (beta != 1) = 72.
    // Read (6 + 12 + 4)*4 = 88 B; written 8*4 = 32 B.
    c.push_back({"gemm_transB_alpha_beta",
                 "Gemm",
                 13,
                 {{"transB", int64_t(1)}, {"alpha", 0.5}, {"beta", 2.0}},
                 {input({2, 3}), weight({4, 3}), weight({4})},
                 {2, 4},
                 24,
                 72,
                 88,
                 32,
                 [](const std::vector<Values>& in) {
                   Values y(8);
                   for (int m = 0; m < 2; ++m)
                     for (int n = 0; n < 4; ++n) {
                       double s = 0;
                       for (int k = 0; k < 3; ++k) s += in[0][size_t(m * 3 + k)] * in[1][size_t(n * 3 + k)];
                       y[size_t(m * 4 + n)] = 0.5 * s + 2.0 * in[2][size_t(n)];
                     }
                   return y;
                 }});

    // Add [2,3,4] + [4] (a weight broadcast over the rows): 24 FLOPs (1 per output element).
    // Read (24 + 4)*4 = 112 B; written 96 B.
    c.push_back({"add_broadcast_last_dim",
                 "Add",
                 14,
                 {},
                 {input({2, 3, 4}), weight({4})},
                 {2, 3, 4},
                 0,
                 24,
                 112,
                 96,
                 [](const std::vector<Values>& in) {
                   Values y(24);
                   for (size_t i = 0; i < 24; ++i) y[i] = in[0][i] + in[1][i % 4];
                   return y;
                 }});

    // Relu [2,3,4]: 24 FLOPs (1 per element); read 96 B, written 96 B.
    c.push_back({"relu",
                 "Relu",
                 14,
                 {},
                 {input({2, 3, 4})},
                 {2, 3, 4},
                 0,
                 24,
                 96,
                 96,
                 [](const std::vector<Values>& in) {
                   Values y(in[0]);
                   for (double& v : y) v = v > 0 ? v : 0;
                   return y;
                 }});

    // Softmax [2,3,4] over the last axis (opset 13's default): 5 per element = 120.
    // Read 96 B, written 96 B.
    c.push_back({"softmax_last_axis",
                 "Softmax",
                 13,
                 {},
                 {input({2, 3, 4})},
                 {2, 3, 4},
                 0,
                 120,
                 96,
                 96,
                 [](const std::vector<Values>& in) {
                   return per_row(in[0], 4, [](const double* x, double* y) {
                     double top = x[0], sum = 0;
                     for (int j = 1; j < 4; ++j) top = std::max(top, x[j]);
                     for (int j = 0; j < 4; ++j) sum += std::exp(x[j] - top);
                     for (int j = 0; j < 4; ++j) y[j] = std::exp(x[j] - top) / sum;
                   });
                 }});

    // Reshape [2,3,4] by the constant shape [6,4]: a view, 0 FLOPs, 0 bytes read or written.
    c.push_back({"reshape_constant_shape",
                 "Reshape",
                 14,
                 {},
                 {input({2, 3, 4}), int64_constant({6, 4})},
                 {6, 4},
                 0,
                 0,
                 0,
                 0,
                 [](const std::vector<Values>& in) { return in[0]; }});

    // Concat [2,3] and [2,3] on axis 0: [4,3], data movement: 0 FLOPs.
    // Read (6 + 6)*4 = 48 B; written 12*4 = 48 B.
    c.push_back({"concat_axis0",
                 "Concat",
                 13,
                 {{"axis", int64_t(0)}},
                 {input({2, 3}), input({2, 3})},
                 {4, 3},
                 0,
                 0,
                 48,
                 48,
                 [](const std::vector<Values>& in) {
                   Values y(in[0]);
                   y.insert(y.end(), in[1].begin(), in[1].end());
                   return y;
                 }});

    // ReduceMean [2,3,4] over axis 2, keepdims: [2,3,1]. FLOPs = 24 adds + 6 divides = 30.
    // Read 96 B, written 6*4 = 24 B.
    c.push_back({"reduce_mean_last_axis",
                 "ReduceMean",
                 13,
                 {{"axes", std::vector<int64_t>{2}}},
                 {input({2, 3, 4})},
                 {2, 3, 1},
                 0,
                 30,
                 96,
                 24,
                 [](const std::vector<Values>& in) {
                   Values y(6);
                   for (size_t r = 0; r < 6; ++r) {
                     double s = 0;
                     for (size_t j = 0; j < 4; ++j) s += in[0][r * 4 + j];
                     y[r] = s / 4;
                   }
                   return y;
                 }});

    // LayerNormalization X [2,3,4], scale [4], bias [4] over the last axis, epsilon 1e-5:
    // 8 per element = 192 FLOPs. Read (24 + 4 + 4)*4 = 128 B; written 96 B.
    c.push_back({"layer_norm_last_axis",
                 "LayerNormalization",
                 17,
                 {{"axis", int64_t(-1)}},
                 {input({2, 3, 4}), weight({4}), weight({4})},
                 {2, 3, 4},
                 0,
                 192,
                 128,
                 96,
                 [](const std::vector<Values>& in) {
                   const Values &scale = in[1], &bias = in[2];
                   return per_row(in[0], 4, [&](const double* x, double* y) {
                     double mean = 0, var = 0;
                     for (int j = 0; j < 4; ++j) mean += x[j] / 4;
                     for (int j = 0; j < 4; ++j) var += (x[j] - mean) * (x[j] - mean) / 4;
                     for (int j = 0; j < 4; ++j)
                       y[j] = (x[j] - mean) / std::sqrt(var + 1e-5) * scale[size_t(j)] + bias[size_t(j)];
                   });
                 }});
    return c;
  }();
  return cases;
}

}  // namespace modelstat::test

// Op classes of the fit forecast (op_classes.hpp); the rules with their
// reasons are in docs/FIT.md, "Latency".
#include "analyzer/fit/op_classes.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "analyzer/op_traits.hpp"

namespace modelstat::fit {

bool is_contraction(const NodeReport& r) { return r.cost.macs > 0; }

// Gemm and MatMul: the ops whose record prices them with the Gemm classes.
bool is_gemm_or_matmul(const Node& n) { return op_dense_family(n) == DenseFamily::Gemm; }

int64_t tensor_bytes(const Graph& g, int t) {
  if (t < 0) return 0;
  return g.tensors[size_t(t)].size_bytes().value_or(0);
}

std::vector<int64_t> known_dims(const Shape& s) {
  std::vector<int64_t> dims;
  if (!s.rank_known) return dims;
  for (const Dim& d : s.dims) {
    if (!d.known()) return {};
    dims.push_back(d.value);
  }
  return dims;
}

// Equivalent square-GEMM size of a contraction: the n of the n x n x n product
// with the same arithmetic intensity as one of its products (M x K by K x N).
// A product moves 4(MK + KN + MN) bytes for 2MNK FLOPs, intensity
// 1 / (2 (1/M + 1/N + 1/K)); a square one n/6. Equal when
//     n_eff = 3 / (1/M + 1/N + 1/K)     (the harmonic mean of M, N, K),
// so a skinny product (a 1x1 conv over 16 channels, a GEMV) is read low on the
// matmul curve, where its data reuse puts it, and a square one at its size.
// Convolutions: M = batch x output positions, N = C_out / group,
// K = C_in / group x kernel (one product per group); MatMul: the last two dims of
// one matrix of the batch, A's leading dims folded into M when B is one matrix
// (a weight); Gemm: M x N from the output, K from the MACs.
// When the shapes are not known: cbrt(MACs / products).
namespace {

double harmonic_n(double m, double nn, double k) { return 3.0 / (1.0 / m + 1.0 / nn + 1.0 / k); }

}  // namespace

double equivalent_gemm_n(const Graph& g, const Node& n, int64_t macs) {
  const bool conv =
      n.op_type == "Conv" || n.op_type == "ConvTranspose" || n.op_type == "ConvInteger" || n.op_type == "QLinearConv";
  const double products = conv ? double(std::max<int64_t>(1, n.attr_int("group", 1))) : 1.0;
  const auto out = !n.outputs.empty() && n.outputs[0] >= 0 ? known_dims(g.tensors[size_t(n.outputs[0])].shape)
                                                           : std::vector<int64_t>{};
  if (conv && out.size() >= 3 && n.op_type != "ConvTranspose") {
    double m = double(out[0]);
    for (size_t i = 2; i < out.size(); ++i) m *= double(out[i]);
    const double c_out = double(out[1]);
    const double k = double(macs) / (m * c_out);  // C_in / group x kernel
    if (m > 0 && c_out >= products && k > 0) return harmonic_n(m, c_out / products, k);
  } else if ((n.op_type == "MatMul" || n.op_type == "MatMulInteger") && n.inputs.size() >= 2 && n.inputs[0] >= 0 &&
             n.inputs[1] >= 0) {
    const auto a = known_dims(g.tensors[size_t(n.inputs[0])].shape);
    const auto b = known_dims(g.tensors[size_t(n.inputs[1])].shape);
    if (!a.empty() && !b.empty()) {
      // One matrix of the batch is a[-2] x a[-1]; against a weight of one
      // matrix (B 2-D, or every leading dim 1) every leading dim of A is
      // rows of one product: the executor runs A as [rows, K] (a ConvNeXt
      // MLP's [1, 56, 56, 96] x [96, 384] is one 3136-row product, not 56
      // products of 56 rows).
      const bool one_b = std::all_of(b.begin(), b.end() - std::min<ptrdiff_t>(2, ptrdiff_t(b.size())),
                                     [](int64_t d) { return d == 1; });
      double m = a.size() >= 2 ? double(a[a.size() - 2]) : 1.0;
      if (one_b)
        for (size_t i = 0; i + 2 < a.size(); ++i) m *= double(a[i]);
      const double k = double(a.back());
      const double nn = b.size() >= 2 ? double(b.back()) : 1.0;
      if (m > 0 && nn > 0 && k > 0) return harmonic_n(m, nn, k);
    }
  } else if (n.op_type == "Gemm" && out.size() == 2 && out[0] > 0 && out[1] > 0) {
    const double k = double(macs) / (double(out[0]) * double(out[1]));
    if (k > 0) return harmonic_n(double(out[0]), double(out[1]), k);
  }
  return std::cbrt(double(macs) / products);
}

// Whether the CPU executor holds 4-D tensor `t` as a Conv group can read it
// (channels-last, contiguous) or must copy it channels-last first. Conv
// groups and MaxPool write channels-last (profiler/ops/fp32_conv.cc,
// pooling.cc); elementwise ops,
// normalisation, pooling, Concat and Slice keep their activation input's
// layout (ATen's suggested memory format); a graph input is fed NCHW; a
// Reshape, Transpose, Flatten, Squeeze, Unsqueeze or Split leaves a plain
// (NCHW) tensor. Other producers: not known (no cost added).
HeldLayout held_layout(const Graph& g, int t) {
  static const std::set<std::string> keeps = {
      "Add",     "Sub",        "Mul",          "Div",  "Cast",      "Identity",    "Relu",    "Clip",
      "Sigmoid", "HardSigmoid", "HardSwish",   "Tanh", "LeakyRelu", "PRelu",       "Elu",     "Selu",
      "Erf",     "Neg",        "Sqrt",         "Exp",  "BatchNormalization",       "AveragePool",
      "Concat",  "Dropout",    "InstanceNormalization",    "Slice"};
  static const std::set<std::string> plain = {"Reshape", "Transpose", "Flatten",      "Squeeze",
                                              "Unsqueeze", "Split",   "DepthToSpace", "SpaceToDepth"};
  for (int step = 0; step < 32 && t >= 0; ++step) {
    const Tensor& tensor = g.tensors[size_t(t)];
    if (!tensor.shape.rank_known || tensor.shape.dims.size() != 4) return HeldLayout::Unknown;
    if (tensor.role == TensorRole::Input || tensor.is_constant()) return HeldLayout::NeedsCopy;
    if (tensor.producer < 0) return HeldLayout::Unknown;
    const Node& n = g.nodes[size_t(tensor.producer)];
    if (!n.domain.empty()) return HeldLayout::Unknown;
    // A Conv group writes channels-last; so does a 2-D MaxPool, which pools
    // an NCHW input channels-last (profiler/ops/pooling.cc).
    if (n.op_type == "Conv" || n.op_type == "MaxPool") return HeldLayout::ChannelsLast;
    if (plain.count(n.op_type)) return HeldLayout::NeedsCopy;
    if (!keeps.count(n.op_type)) return HeldLayout::Unknown;
    // The layout of its first activation input of the same rank (a
    // broadcast scale or a constant does not decide it).
    int next = -1;
    for (int in : n.inputs) {
      if (in < 0 || g.tensors[size_t(in)].is_constant()) continue;
      if (g.tensors[size_t(in)].shape.rank_known && g.tensors[size_t(in)].shape.dims.size() == 4) {
        next = in;
        break;
      }
    }
    if (next < 0) return HeldLayout::Unknown;
    t = next;
  }
  return HeldLayout::Unknown;
}

// The measured op class (DeviceCeilings::op_costs) a node belongs to: its op
// type, or "Conv/depthwise" for a convolution with one input channel per group
// (MobileNet's 3x3 depthwise); "" for dense contractions, which are priced on
// the matmul curve.
std::string op_cost_key(const Graph& g, const Node& n) {
  if (!n.domain.empty()) return {};
  const DenseFamily family = op_dense_family(n);
  if (family == DenseFamily::Conv) {
    const int64_t group = n.attr_int("group", 1);
    if (group > 1 && n.inputs.size() >= 2 && n.inputs[1] >= 0) {
      const auto w = known_dims(g.tensors[size_t(n.inputs[1])].shape);
      if (w.size() >= 2 && w[1] == 1 && w[0] == group) return "Conv/depthwise";
    }
    return {};
  }
  if (family == DenseFamily::Gemm) return {};
  return n.op_type;
}

// The dense contraction class whose backward / forward ratio prices a
// contraction's backward: "Conv/1x1" for a 1x1 unstrided conv (a plain GEMM
// over the positions; measured apart, its backward differs from a 3x3's),
// "Conv" for other convolutions, "Gemm" for the rest.
std::string dense_class(const Graph& g, const Node& n) {
  if (op_dense_family(n) != DenseFamily::Conv) return "Gemm";
  if (n.inputs.size() >= 2 && n.inputs[1] >= 0) {
    const auto w = known_dims(g.tensors[size_t(n.inputs[1])].shape);
    const auto strides = n.attr_ints("strides");
    const bool one_by_one = w.size() > 2 && std::all_of(w.begin() + 2, w.end(), [](int64_t k) { return k == 1; });
    const bool unstrided = std::all_of(strides.begin(), strides.end(), [](int64_t s) { return s == 1; });
    if (one_by_one && unstrided) return "Conv/1x1";
  }
  return "Conv";
}

// The bytes a node of a measured class is priced at. A windowed pool's work is
// its output elements x window taps, not its bytes: the class was measured on
// a 3x3 window at stride 2, which reads 4 and writes 1 float per output (20
// bytes for 9 taps), so a pool is priced at the bytes of that pool doing the
// same work, outputs x taps x 20 / 9 (a 2x2 pool at stride 2: 4/9 of its bytes'
// worth; a 3x3 pool at stride 1: 2.2x).
double class_bytes(const Graph& g, const Node& n, double bytes) {
  if (!n.domain.empty() || (n.op_type != "MaxPool" && n.op_type != "AveragePool") || n.outputs.empty() ||
      n.outputs[0] < 0)
    return bytes;
  const auto kernel = n.attr_ints("kernel_shape");
  const auto outputs = g.tensors[size_t(n.outputs[0])].shape.element_count();
  if (kernel.empty() || !outputs) return bytes;
  double taps = 1;
  for (int64_t k : kernel) taps *= double(k);
  return double(*outputs) * taps * 20.0 / 9.0;
}

}  // namespace modelstat::fit

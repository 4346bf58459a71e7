// ATen 1.13's CPU kernel rules (libtorch_1_13_kernels.hpp says why this file
// is named for a version). Measured with bench/fit_cpu_probe.cc on Debian's
// LibTorch 1.13 (oneDNN 2.6).
#include "analyzer/fit/libtorch_1_13_kernels.hpp"

#include <algorithm>
#include <vector>

#include "analyzer/fit/op_classes.hpp"
#include "modelstat/fit.hpp"

namespace modelstat {
namespace fit {

namespace {

// Fixed cost of one convolution call in units of the op overhead (a tiny add,
// 1.38 us where these were measured): a depthwise oneDNN conv about 48 us
// whatever its channels, a dense oneDNN conv about 7 us beyond its weight
// reorder, a THNN conv about 5.5 us.
constexpr double kOneDnnGroupedConvOverheads = 36;
constexpr double kOneDnnConvOverheads = 5;
constexpr double kThnnConvOverheads = 4;

CpuKernel conv_kernel(const Graph& g, const Node& n, int threads) {
  CpuKernel k;
  if (n.inputs.size() < 2 || n.inputs[0] < 0 || n.inputs[1] < 0 || n.outputs.empty() || n.outputs[0] < 0) return k;
  const Tensor& x = g.tensors[size_t(n.inputs[0])];
  const Tensor& w = g.tensors[size_t(n.inputs[1])];
  const Tensor& y = g.tensors[size_t(n.outputs[0])];
  if (x.dtype != DType::Float) return k;  // the rule was measured on fp32 only
  const auto xd = known_dims(x.shape), wd = known_dims(w.shape), yd = known_dims(y.shape);
  if (xd.size() < 3 || wd.size() != xd.size() || yd.size() != xd.size()) return k;
  const size_t spatial = xd.size() - 2;
  const int64_t group = std::max<int64_t>(1, n.attr_int("group", 1));
  auto any_above_one = [](const std::vector<int64_t>& v) {
    return std::any_of(v.begin(), v.end(), [](int64_t s) { return s > 1; });
  };
  const bool strided = any_above_one(n.attr_ints("strides"));
  const bool dilated = any_above_one(n.attr_ints("dilations"));
  const auto pads = n.attr_ints("pads");
  const bool padded = std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; });
  bool one_by_one = true, all_above_three = true;
  int64_t kernel = 1, out_spatial = 1;
  for (size_t i = 0; i < spatial; ++i) {
    one_by_one = one_by_one && wd[2 + i] == 1;
    all_above_three = all_above_three && wd[2 + i] > 3;
    kernel *= wd[2 + i];
    out_spatial *= yd[2 + i];
  }
  int64_t x_elements = 1;
  for (int64_t d : xd) x_elements *= d;
  const int64_t batch = xd[0], c_in = xd[1];
  // ATen 1.13 ConvParams::use_mkldnn (CPU, fp32): oneDNN unless a 1x1 unstrided
  // conv runs single-threaded on a small batch, or the problem is tiny.
  const bool onednn = (strided || dilated || batch >= 16 || !one_by_one || threads != 1) &&
                      (group > 1 || all_above_three || batch > 1 || x_elements > 20480);
  if (onednn) {
    // Input and weight reordered to blocked layouts (read + written), then the
    // blocked output reordered back; the measured peak is the larger stage.
    const int64_t x_bytes = tensor_bytes(g, n.inputs[0]);
    const int64_t w_bytes = tensor_bytes(g, n.inputs[1]);
    const int64_t y_bytes = tensor_bytes(g, n.outputs[0]);
    k.workspace_bytes = std::max(x_bytes + w_bytes, y_bytes);
    k.scratch_traffic_bytes = 2 * k.workspace_bytes;
    k.fixed_op_overheads = group > 1 ? kOneDnnGroupedConvOverheads : kOneDnnConvOverheads;
    return k;
  }
  // THNN slow_conv2d: im2col columns [N, C_in*prod(k), prod(out)] (written,
  // then read by the GEMM) unless a 1x1 unstrided, unpadded conv can use the
  // input as is.
  k.fixed_op_overheads = kThnnConvOverheads;
  if (one_by_one && !strided && !padded) return k;
  k.workspace_bytes = batch * c_in * kernel * out_spatial * int64_t(sizeof(float));
  k.scratch_traffic_bytes = 2 * k.workspace_bytes;
  return k;
}

}  // namespace

CpuKernel cpu_kernel(const Graph& g, const Node& n, int threads) {
  if (!n.domain.empty()) return {};
  if (n.op_type == "Conv") return conv_kernel(g, n, threads);
  // at::max_pool2d/3d compute through max_pool*_with_indices and drop the
  // int64 indices (one per output element, written once) afterwards.
  if (n.op_type == "MaxPool" && !n.outputs.empty() && n.outputs[0] >= 0 &&
      g.tensors[size_t(n.outputs[0])].dtype == DType::Float) {
    CpuKernel k;
    k.workspace_bytes = g.tensors[size_t(n.outputs[0])].shape.element_count().value_or(0) * int64_t(sizeof(int64_t));
    k.scratch_traffic_bytes = k.workspace_bytes;
    return k;
  }
  return {};
}

}  // namespace fit

int64_t cpu_workspace_bytes(const Graph& g, const Node& n, int threads) {
  return fit::cpu_kernel(g, n, threads).workspace_bytes;
}

}  // namespace modelstat

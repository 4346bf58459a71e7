// The fit forecast's latency (latency.hpp); each rule and its reason in
// docs/FIT.md, "Latency" and "Training step".
#include "analyzer/fit/latency.hpp"

#include <algorithm>
#include <numeric>
#include <set>
#include <string>
#include <variant>

#include "analyzer/fit/op_classes.hpp"
#include "analyzer/fusion/direct_gemm_limits.hpp"
#include "analyzer/op_traits.hpp"

namespace modelstat::fit {

namespace {

// The input whose layout a CPU Concat writes (profiler/ops/shape_ops.cc,
// concat_rows): its largest part, the first of equal ones.
int concat_layout_input(const Graph& g, const Node& node) {
  int best = -1;
  int64_t largest = -1;
  for (int t : node.inputs) {
    if (t < 0) continue;
    const int64_t bytes = tensor_bytes(g, t);
    if (bytes > largest) largest = bytes, best = t;
  }
  return best;
}

// The bytes of a CPU Concat's parts held in another layout than the one it
// writes (channels-last against plain), each copied into that layout before
// the rows are joined (concat_rows): ShuffleNet-V2's join of a sliced plain
// half and a branch's channels-last output. Parts of unknown layout: none.
double concat_conversion_bytes(const Graph& g, const Node& node) {
  const int lead = concat_layout_input(g, node);
  if (lead < 0) return 0;
  const HeldLayout out = held_layout(g, lead);
  if (out == HeldLayout::Unknown) return 0;
  double bytes = 0;
  for (int t : node.inputs) {
    if (t < 0 || t == lead) continue;
    const HeldLayout in = held_layout(g, t);
    const auto d = known_dims(g.tensors[size_t(t)].shape);
    // One channel, or one position, is in both layouts at once.
    if (in != HeldLayout::Unknown && in != out && d.size() == 4 && d[1] > 1 && d[2] * d[3] > 1)
      bytes += double(tensor_bytes(g, t));
  }
  return bytes;
}

// The measured op class (DeviceCeilings::op_costs) that prices a node, if the
// device measured one for it.
const OpCost* measured_class(const Graph& g, const Node& node, const DeviceCeilings& ceilings, bool train) {
  const std::string class_key = op_cost_key(g, node);
  const OpCost* measured = class_key.empty() ? nullptr : ceilings.op_cost(class_key);
  // Inference on the CPU: a Concat of channels-last activations (a CNN's
  // branches, joined on channels) interleaves rows of each input's channels,
  // the class measured that way (ceilings 2.6); plain tensors are copied in
  // blocks (the Concat class). Training runs NCHW.
  if (!train && class_key == "Concat" && !node.inputs.empty() && node.inputs[0] >= 0) {
    const HeldLayout layout = held_layout(g, concat_layout_input(g, node));
    if (layout == HeldLayout::ChannelsLast)
      if (const OpCost* cl = ceilings.op_cost("Concat/channels-last")) measured = cl;
  }
  if (measured && measured->seconds_per_byte <= 0 && measured->fixed_seconds <= 0) return nullptr;
  return measured;
}

// The bandwidth a working set of `bytes` streams at: the roof of the
// smallest memory level (`modelstat device`'s sweep, for the ceilings'
// threads) that holds it, where the curve measured its edge (else the
// cache's size); the copy bandwidth (measured past the caches) when none
// does or no sweep was saved.
double resident_bandwidth(const DeviceCeilings& c, double bytes) {
  for (const MemoryLevel& l : c.memory_levels_for(c.threads)) {
    const int64_t holds = l.measured_edge_bytes > 0 ? l.measured_edge_bytes : l.capacity_bytes;
    if (holds > 0 && bytes <= double(holds) && l.bytes_per_second > 0)
      return std::max(c.memory_bandwidth, l.bytes_per_second);
  }
  return c.memory_bandwidth;
}

// The bytes a Conv group's kernel (or a MaxPool) copies channels-last before it runs: its
// input's, when the executor holds the input otherwise.
double layout_copy_bytes(const Graph& g, int x) {
  if (x < 0) return 0;
  const HeldLayout layout = held_layout(g, x);
  if (layout != HeldLayout::NeedsCopy) return 0;
  // One channel, or one position (a squeeze-excite's 1x1), is channels-last already.
  const auto xd = known_dims(g.tensors[size_t(x)].shape);
  return xd.size() == 4 && xd[1] > 1 && xd[2] * xd[3] > 1 ? double(tensor_bytes(g, x)) : 0.0;
}

// `channels` rounded up to a whole number of `block`s (0: no rounding).
int64_t padded_channels(int64_t channels, int64_t block) {
  return block > 1 ? (channels + block - 1) / block * block : channels;
}

// A Slice the executor runs as a view of its input: exec_slice
// (profiler/ops/shape_ops.cc) makes its result dense in the input's layout,
// which moves nothing when the slice is dense already: at most one axis
// narrowed (steps of 1), every axis before it in memory order (NHWC's for an
// input held channels-last) of size 1 in the output (a batch, or channels of
// an NCHW tensor at batch 1). Any other Slice is a strided copy.
bool slice_is_view(const Graph& g, const Node& n) {
  if (!n.domain.empty() || n.op_type != "Slice" || n.inputs.empty() || n.inputs[0] < 0 || n.outputs.empty() ||
      n.outputs[0] < 0)
    return false;
  if (n.inputs.size() >= 5 && n.inputs[4] >= 0) {  // steps (opset 10+): all 1, else a copy
    const Tensor& steps = g.tensors[size_t(n.inputs[4])];
    if (!steps.has_int_values ||
        !std::all_of(steps.int_values.begin(), steps.int_values.end(), [](int64_t s) { return s == 1; }))
      return false;
  }
  const auto in = known_dims(g.tensors[size_t(n.inputs[0])].shape);
  const auto out = known_dims(g.tensors[size_t(n.outputs[0])].shape);
  if (in.empty() || in.size() != out.size()) return false;
  std::vector<size_t> order(in.size());
  std::iota(order.begin(), order.end(), size_t(0));
  if (in.size() == 4 && held_layout(g, n.inputs[0]) == HeldLayout::ChannelsLast) order = {0, 2, 3, 1};
  bool wide = false;  // an axis of more than one output element passed, in memory order
  for (size_t d : order) {
    if (wide && out[d] != in[d]) return false;  // narrowed inside a wider axis: strided
    wide = wide || out[d] > 1;
  }
  return true;
}

// Whether a node has a dilation above 1 (a dilated conv runs on im2col + GEMM).
bool dilated(const Node& node) {
  const auto dilations = node.attr_ints("dilations");
  return std::any_of(dilations.begin(), dilations.end(), [](int64_t d) { return d > 1; });
}

// Whether the CPU executor runs fp32 Gemm / MatMul `node` (B a weight) as
// its direct row loop with `--gemm auto`: at most kDirectGemmMaxRows rows and
// kDirectGemmMaxMacs multiply-accumulates (analyzer/fusion/direct_gemm_limits.hpp).
bool runs_direct_gemm(const Graph& g, const Node& node, int64_t macs) {
  if (!is_gemm_or_matmul(node) || node.inputs.size() < 2 || node.inputs[1] < 0 || macs <= 0) return false;
  const Tensor& b = g.tensors[size_t(node.inputs[1])];
  const auto b_elements = b.shape.element_count();
  if (!b.is_constant() || b.dtype != DType::Float || !b_elements || *b_elements <= 0) return false;
  const int64_t rows = macs / *b_elements;
  return rows <= kDirectGemmMaxRows && macs <= kDirectGemmMaxMacs;
}

// The traffic of the im2col columns of a dilated fp32 2-D Conv (the
// executor's oneDNN runs it on im2col + GEMM: conv_sample_shape): M x K
// floats written and read (M = batch x output positions, K = input channels
// per group x taps); 0 for any other node.
double im2col_bytes(const Graph& g, const Node& node) {
  if (node.op_type != "Conv" || !node.domain.empty() || node.inputs.size() < 2 || node.inputs[1] < 0 ||
      node.outputs.empty() || node.outputs[0] < 0)
    return 0;
  if (!dilated(node)) return 0;
  const auto w = known_dims(g.tensors[size_t(node.inputs[1])].shape);
  const auto y = known_dims(g.tensors[size_t(node.outputs[0])].shape);
  if (w.size() != 4 || y.size() != 4 || g.tensors[size_t(node.outputs[0])].dtype != DType::Float) return 0;
  const double m = double(y[0]) * double(y[2]) * double(y[3]);
  const double k = double(w[1]) * double(w[2]) * double(w[3]);
  return 2.0 * m * k * 4.0;
}

// The bytes (read + written) of the copy a Slice that is not a view
// (slice_is_view), or a Reshape or Flatten of an input held channels-last
// (more than one channel and one position: ATen's reshape cannot view it),
// makes in inference on the CPU; 0 for any other node.
double copied_slice_or_reshape_bytes(const Graph& g, const Node& n) {
  if (!n.domain.empty() || n.inputs.empty() || n.inputs[0] < 0 || n.outputs.empty() || n.outputs[0] < 0) return 0;
  if (n.op_type == "Slice")
    return slice_is_view(g, n) ? 0.0 : double(tensor_bytes(g, n.inputs[0]) + tensor_bytes(g, n.outputs[0]));
  if (n.op_type != "Reshape" && n.op_type != "Flatten") return 0;
  const auto xd = known_dims(g.tensors[size_t(n.inputs[0])].shape);
  if (xd.size() != 4 || xd[1] <= 1 || xd[2] * xd[3] <= 1) return 0;
  if (held_layout(g, n.inputs[0]) != HeldLayout::ChannelsLast) return 0;
  return 2.0 * double(tensor_bytes(g, n.inputs[0]));
}

bool reads_graph_input(const Graph& g, const Node& node) {
  for (int t : node.inputs)
    if (t >= 0 && g.tensors[size_t(t)].role == TensorRole::Input) return true;
  return false;
}

// The device's one-row product (Gemm/thin), if measured.
const OpCost* thin_gemm(const DeviceCeilings& ceilings) {
  const OpCost* thin = ceilings.op_cost("Gemm/thin");
  return thin && thin->seconds_per_byte > 0 ? thin : nullptr;
}

// The dense contraction class (dense_class) whose ratios price a contraction's
// training step, if measured.
const OpCost* dense_cost(const Graph& g, const Node& node, const DeviceCeilings& ceilings) {
  const OpCost* dense = ceilings.op_cost(dense_class(g, node));
  if (!dense && node.op_type == "Conv") dense = ceilings.op_cost("Conv");  // saved before Conv/1x1 existed
  return dense;
}

// A 2-D fp32 Conv as the conv samples name it: its kind and the M x N x K
// product of one group (M = batch x output positions, N = output channels, K =
// input channels per group x taps). Dense (one group) and depthwise convs
// only; false for the others. `training`: the kinds of the training samples,
// where a strided 1x1 is "kxk/s2" (ATen runs it as a strided conv, not as the
// 1x1 GEMM of an unstrided one).
bool conv_product_shape(const Graph& g, const Node& node, size_t weight_at, bool training, std::string& kind,
                        double& m, double& n, double& k) {
  if (node.inputs.size() <= weight_at || node.inputs[weight_at] < 0 || node.outputs.empty() || node.outputs[0] < 0)
    return false;
  const auto w = known_dims(g.tensors[size_t(node.inputs[weight_at])].shape);
  const auto y = known_dims(g.tensors[size_t(node.outputs[0])].shape);
  if (w.size() != 4 || y.size() != 4) return false;  // the samples are 2-D convolutions
  const int64_t groups = node.attr_int("group", 1);
  const bool depthwise = groups > 1 && w[1] == 1 && w[0] == groups;
  if (groups != 1 && !depthwise) return false;
  // A dilated conv runs on im2col + GEMM (oneDNN's direct kernels, which
  // the samples timed, take no dilation here: M-LSD's and UltraFace's
  // dilated 3x3s ran 2-3x the time of their samples' rate).
  if (dilated(node)) return false;
  const int64_t taps = w[2] * w[3];
  const auto strides = node.attr_ints("strides");
  const bool strided = std::any_of(strides.begin(), strides.end(), [](int64_t s) { return s > 1; });
  kind = depthwise ? (strided ? "dw/s2" : "dw")
         : taps == 1 && !(training && strided) ? "1x1"
         : strided ? "kxk/s2" : "kxk";
  m = double(y[0]) * double(y[2]) * double(y[3]);
  n = double(w[0]);
  k = double(w[1]) * double(taps);
  return true;
}

bool conv_sample_shape(const Graph& g, const Node& node, bool training, std::string& kind, double& m, double& n,
                       double& k) {
  if (node.op_type != "Conv" || !node.domain.empty()) return false;
  return conv_product_shape(g, node, 1, training, kind, m, n, k);
}

// An int8 convolution's seconds on the int8 conv samples (schema 2.11; kinds
// "int8 1x1", "int8 kxk", "int8 dw", sampled at stride 1: a strided one is
// priced at its output positions there): a QDQ group's Conv, ConvInteger
// (weight at 1) or QLinearConv (weight at 3); 0 where the shape is not a
// sample kind's or the ceilings have no int8 samples (the int8 curve prices
// it then).
double int8_conv_seconds(const Pricing& p, const Node& node) {
  if (!node.domain.empty()) return 0;
  const size_t weight_at = node.op_type == "QLinearConv" ? 3 : 1;
  if (node.op_type != "Conv" && node.op_type != "ConvInteger" && weight_at != 3) return 0;
  std::string kind;
  double m = 0, n = 0, k = 0;
  if (!conv_product_shape(p.graph, node, weight_at, false, kind, m, n, k)) return 0;
  if (const size_t strided = kind.find("/s2"); strided != std::string::npos) kind.erase(strided);
  return p.ceilings.conv_seconds_at("int8 " + kind, m, n, k);
}

// A grouped 2-D Conv (more than one group, not depthwise, not dilated) as the
// inference executor runs it: `products` groups of an M x N x K product each
// (kinds as conv_sample_shape's; N and K per group). A group of fewer input
// channels than the vector's block (`block`: DeviceCeilings::conv_channel_block,
// 8 where unknown) is run by oneDNN on im2col + GEMM, so the executor merges
// 2, 4 or 8 adjacent groups into one of at most 16 channels, block-diagonal
// (profiler/ops/fp32_conv.cc, merge_groups): fewer, wider products, the
// zeros between the groups computed too.
bool grouped_conv_shape(const Graph& g, const Node& node, int64_t block, std::string& kind, double& m, double& n,
                        double& k, double& products) {
  if (node.op_type != "Conv" || !node.domain.empty()) return false;
  if (node.inputs.size() < 2 || node.inputs[1] < 0 || node.outputs.empty() || node.outputs[0] < 0) return false;
  const auto w = known_dims(g.tensors[size_t(node.inputs[1])].shape);
  const auto y = known_dims(g.tensors[size_t(node.outputs[0])].shape);
  if (w.size() != 4 || y.size() != 4) return false;
  const int64_t groups = node.attr_int("group", 1);
  if (groups <= 1 || (w[1] == 1 && w[0] == groups) || w[0] % groups != 0) return false;
  if (dilated(node)) return false;
  if (block <= 0) block = 8;
  int64_t merge = 1;
  if (w[1] < block)
    for (int64_t by : {2, 4, 8})
      if (groups % by == 0 && w[1] * by <= 16 && w[1] * by >= block) {
        merge = by;
        break;
      }
  const int64_t taps = w[2] * w[3];
  const auto strides = node.attr_ints("strides");
  const bool strided = std::any_of(strides.begin(), strides.end(), [](int64_t s) { return s > 1; });
  kind = taps == 1 ? "1x1" : strided ? "kxk/s2" : "kxk";
  m = double(y[0]) * double(y[2]) * double(y[3]);
  n = double(w[0] / groups * merge);
  k = double(w[1] * merge * taps);
  products = double(groups / merge);
  return true;
}

// A training step's fp32 Conv priced on the training conv samples (schema
// 2.9): its forward at their forward rate; returns the backward's seconds
// (both gradients; 0: not priced here, the rules of price_backward apply).
double price_train_conv(const Pricing& p, const Node& node, NodeForecast& f) {
  std::string kind;
  double m = 0, n = 0, k = 0, forward = 0, backward = 0;
  if (!p.options.train || p.options.compute_dtype != "fp32") return 0;
  if (!conv_sample_shape(p.graph, node, true, kind, m, n, k)) return 0;
  if (!p.ceilings.train_conv_rates_at(kind, m, n, k, forward, backward)) return 0;
  const double flops = 2.0 * m * n * k;
  f.op_cost = "train conv " + kind;
  f.compute_flops_per_second = forward;
  f.compute_seconds = flops / forward;
  f.kernel_seconds = 0;
  f.scratch_seconds = 0;
  f.overhead_seconds = 0;
  f.forward_seconds = f.compute_seconds + f.fresh_seconds;
  f.bound = ForecastBound::Compute;
  return flops / backward;
}

// A training step's backward of a differentiated node, its fresh gradients included.
void price_backward(const Pricing& p, const Node& node, const NodeReport& report, const GradientFlow& flow,
                    NodeForecast& f, double conv_backward_seconds) {
  const Graph& g = p.graph;
  const DeviceCeilings& ceilings = p.ceilings;
  const OpCost* measured = measured_class(g, node, ceilings, p.options.train);
  const OpCost* thin = thin_gemm(ceilings);
  const double bytes = double(report.cost.bytes());
  int gradient_products = 0;  // contractions: one product per operand that needs a gradient
  std::set<int> fresh_gradients;  // inputs whose gradient is a fresh mapping
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    const int t = node.inputs[k];
    if (t < 0 || !flow.requires_grad[size_t(t)]) continue;
    if (k < 2) ++gradient_products;
    if (p.fresh_seconds_per_byte > 0 && !op_output_is_view(node) && tensor_bytes(g, t) > p.fresh_threshold)
      fresh_gradients.insert(t);
  }
  for (int t : fresh_gradients) f.backward_fresh_bytes += tensor_bytes(g, t);
  // Autograd's own cost per differentiated node (recording the graph in the
  // forward, scheduling it in backward), measured by `modelstat device` on a
  // chain of small nodes: the training cost per node beyond the forward and
  // backward dispatches.
  const double autograd =
      std::max(0.0, ceilings.train_node_overhead_seconds - 2.0 * ceilings.node_overhead_seconds);
  if (conv_backward_seconds > 0) {
    // A Conv on the training samples: their backward of both gradients (the
    // engine's scheduling of the node included); one gradient (the first
    // layer's: the image needs none) about half of it.
    f.backward_seconds = (gradient_products >= 2 ? 1.0 : 0.5) * conv_backward_seconds;
  } else if (measured) {
    // The class's measured backward (autograd's share included; a
    // depthwise conv's with both gradients), never faster than reading
    // and writing the forward's bytes once more.
    f.backward_seconds =
        std::max(class_bytes(g, node, bytes) * measured->backward_seconds_per_byte, f.memory_seconds) +
        measured->backward_fixed_seconds;
  } else if (f.op_cost == "Gemm/thin" && f.bound == ForecastBound::Kernel) {
    // A product bound by streaming its B operand: the one-row product's
    // measured backward (both gradients), in the bytes of B.
    f.backward_seconds = double(tensor_bytes(g, node.inputs[1])) * thin->backward_seconds_per_byte +
                         thin->backward_fixed_seconds;
  } else if (f.contraction) {
    // One product per operand that needs a gradient, each priced like the
    // forward product; where the device measured a dense contraction's
    // backward / forward ratio (both gradients), that ratio instead of 2.
    // The forward here is the training forward, the inference forward times
    // the class's train_forward_ratio where measured (schema 2.4).
    const OpCost* dense = dense_cost(g, node, ceilings);
    double per_product = dense && dense->backward_ratio > 0 ? dense->backward_ratio / 2.0 : 1.0;
    if (dense && dense->backward_ratio > 0 && dense->has_train_forward()) per_product /= dense->train_forward_ratio;
    f.backward_seconds = std::max(1, gradient_products) * per_product * (f.forward_seconds - f.fresh_seconds) + autograd;
  } else {
    f.backward_seconds = f.forward_seconds - f.fresh_seconds + autograd;
  }
  f.backward_seconds += double(f.backward_fresh_bytes) * p.fresh_seconds_per_byte;
}

// The largest cache level's measured hold (graph_inputs_from_memory's rule).
int64_t largest_cache_bytes(const DeviceCeilings& ceilings) {
  int64_t cache = 0;
  // The caches sysfs names ("L1".."L3"), not a plateau of the curve no cache
  // matched ("level 4": 38 GB/s over 128 MiB on the ninth session's VM).
  for (const MemoryLevel& l : ceilings.memory_levels_for(ceilings.threads))
    if (l.level.size() == 2 && l.level[0] == 'L' && l.level[1] >= '1' && l.level[1] <= '9')
      cache = std::max(cache, l.measured_edge_bytes > 0 ? l.measured_edge_bytes : l.capacity_bytes);
  return cache;
}
}  // namespace

bool graph_inputs_from_memory(int64_t weight_and_input_bytes, const DeviceCeilings& ceilings) {
  const int64_t cache = largest_cache_bytes(ceilings);
  return cache > 0 && weight_and_input_bytes > cache;
}

double weights_cold_share(int64_t run_bytes, const DeviceCeilings& ceilings) {
  const double cache = double(largest_cache_bytes(ceilings));
  if (cache <= 0) return 1.0;
  return std::clamp((double(run_bytes) - 0.75 * cache) / (0.5 * cache), 0.0, 1.0);
}

NodeForecast forecast_node(const Pricing& p, size_t i, const NodeReport& report, const CpuKernel& kernel,
                           int64_t fresh_bytes, const GradientFlow& flow) {
  const Graph& g = p.graph;
  const DeviceCeilings& ceilings = p.ceilings;
  const Node& node = g.nodes[i];
  const NodeReport& a = report;
  NodeForecast f;
  f.index = int(i);
  f.name = a.name;
  f.op_type = a.op_type;
  // A measured op class (DeviceCeilings::op_costs) prices the node when there
  // is one: its own fixed cost, and its own cost per byte as one more
  // ceiling beside the roofline's. It replaces the CPU scratch and call-cost
  // rules (the class was measured with them).
  const OpCost* measured = measured_class(g, node, ceilings, p.options.train);
  const OpCost* thin = thin_gemm(ceilings);
  f.workspace_bytes = kernel.workspace_bytes;
  f.contraction = is_contraction(a);
  if (f.contraction) {
    f.equivalent_gemm_n = equivalent_gemm_n(g, node, a.cost.macs);
    f.compute_flops_per_second = ceilings.matmul_flops_at(p.options.compute_dtype, f.equivalent_gemm_n);
  } else {
    f.compute_flops_per_second = p.peak_flops_per_second;
  }
  if (f.compute_flops_per_second > 0) f.compute_seconds = double(a.cost.flops) / f.compute_flops_per_second;
  // A training step runs a dense contraction unfused and NCHW, with autograd
  // recording: its dense class's measured training forward / forward ratio.
  if (p.options.train && f.contraction && !measured) {
    const OpCost* dense = dense_cost(g, node, ceilings);
    if (dense && dense->has_train_forward()) f.compute_seconds *= dense->train_forward_ratio;
  }
  const double bytes = double(a.cost.bytes());
  f.memory_seconds = bytes / ceilings.memory_bandwidth;
  if (measured) {
    f.op_cost = measured->op;
    // A training step: the class's training forward (unfused, NCHW, autograd recording) where measured.
    const bool train_line = p.options.train && measured->has_train_forward();
    f.kernel_seconds = class_bytes(g, node, bytes) *
                       (train_line ? measured->train_forward_seconds_per_byte : measured->seconds_per_byte);
    f.overhead_seconds = train_line ? measured->train_forward_fixed_seconds : measured->fixed_seconds;
    // Inference: an elementwise, pooling or normalisation node of a measured
    // class whose bytes fit a cache reads what the node before it just wrote
    // there; the class's line, measured at a cache-sized point, prices it,
    // not the copy bandwidth past the caches (which priced a QDQ ResNet-18's
    // 1.6 MB Relus at 7x their time). Not a depthwise conv: its class line
    // (timed with its input and weights hot from the previous run) is 0.5x
    // of MobileNet-V2's depthwise groups, which the copy bandwidth bounds
    // more closely.
    // A node reading a graph input that a run's weights pushed out of the
    // caches (a decoder's KV cache, appended by a Concat each step) streams
    // from memory: the copy bandwidth. GPT-2's 6 MiB cache Concat at 1024
    // tokens ran at 21 GB/s where the L3 rate priced it 3.3x under.
    if (!p.options.train && !f.contraction)
      f.memory_seconds = bytes / (p.inputs_from_memory && reads_graph_input(g, node)
                                      ? ceilings.memory_bandwidth
                                      : resident_bandwidth(ceilings, bytes));
  } else {
    // The scratch pass (oneDNN reorders, im2col) runs before the kernel, not alongside it.
    f.scratch_seconds = double(kernel.scratch_traffic_bytes) / ceilings.memory_bandwidth;
    // Inference: a dilated 2-D conv runs on oneDNN's im2col + GEMM, its
    // columns (M x K floats) written and read once more.
    if (!p.options.train) f.scratch_seconds = std::max(f.scratch_seconds, im2col_bytes(g, node) / ceilings.memory_bandwidth);
    // The executor loads Constant outputs with the weights: no per-run op.
    f.overhead_seconds = node.op_type == "Constant" ? 0.0 : kernel.fixed_op_overheads * ceilings.op_overhead_seconds;
    // A Gemm or MatMul: the fixed cost the device measured for a small Gemm
    // (BLAS call, bias, output allocation), when it is larger.
    // Not a product the executor runs as its direct row loop (at most 4
    // rows against a small weight: no BLAS call), which costs its per-op
    // overhead (TinyCNN's 1 x 32 x 10 classifier: 3 us, priced 8 at the
    // small Gemm's fixed cost).
    const OpCost* gemm = ceilings.op_cost("Gemm");
    if (gemm && is_gemm_or_matmul(node) && !runs_direct_gemm(g, node, a.cost.macs))
      f.overhead_seconds = std::max(f.overhead_seconds, gemm->fixed_seconds);
    // A Gemm or MatMul streams its B operand no faster than the device's
    // one-row product does (Gemm/thin, in the bytes of B): the bound of a
    // classifier at batch 1, below the compute and copy ceilings' times
    // once there are enough rows.
    if (thin && is_gemm_or_matmul(node) && node.inputs.size() >= 2 && node.inputs[1] >= 0) {
      f.op_cost = thin->op;
      const bool train_line = p.options.train && thin->has_train_forward();
      f.kernel_seconds = double(tensor_bytes(g, node.inputs[1])) *
                         (train_line ? thin->train_forward_seconds_per_byte : thin->seconds_per_byte);
      // The class streamed its weights from memory at its rate: a read
      // stream, which the copy bandwidth (a read and a write) does not bound.
      // On the project VM the class measured 19.6-25.9 GB/s where the copy
      // measured 13.0-18.8, and GPT-2's decode step (its weights read once a
      // token) ran at 22 GB/s of weights: the copy's 13.3 priced it 40% over.
      if (!train_line) f.memory_seconds = std::min(f.memory_seconds, bytes * thin->seconds_per_byte);
    }
  }
  // Inference: a MaxPool of an input not held channels-last is pooled
  // channels-last after a copy (profiler/ops/pooling.cc), which its class,
  // measured channels-last, does not include: the copy a Conv group makes.
  if (!p.options.train && measured && node.op_type == "MaxPool" && !node.inputs.empty()) {
    const double copy = layout_copy_bytes(g, node.inputs[0]) * ceilings.conv_layout_seconds_per_byte;
    f.kernel_seconds += copy;
  }
  // Inference: a Concat's parts in another layout than the one it writes are
  // copied into it first, at the rate a Conv group's layout copy measured.
  if (!p.options.train && measured && node.op_type == "Concat")
    f.kernel_seconds += concat_conversion_bytes(g, node) * ceilings.conv_layout_seconds_per_byte;
  if (!p.options.train && slice_is_view(g, node)) {
    f.memory_seconds = 0;
    f.kernel_seconds = 0;
    f.compute_seconds = 0;
    fresh_bytes = 0;  // a view allocates nothing
  } else if (const double copied = p.options.train ? 0.0 : copied_slice_or_reshape_bytes(g, node); copied > 0) {
    // A Slice that is not a view, or a Reshape / Flatten of a channels-last
    // activation (ATen's reshape copies what it cannot view): ATen's strided
    // copy, the kernel a Transpose runs, on the Transpose class's line. A
    // Reshape's own bytes are 0 in the analysis: here its input read and its
    // output written. (UltraFace's six Slices of [1, 4420, 4] box rows: 26-64
    // us each, priced 0.9 as views; its Reshapes after a conv head: 4-23 us.)
    if (const OpCost* copy = ceilings.op_cost("Transpose"); copy && copy->seconds_per_byte > 0) {
      f.op_cost = "Transpose";
      f.kernel_seconds = copied * copy->seconds_per_byte;
      f.overhead_seconds = std::max(f.overhead_seconds, copy->fixed_seconds);
    }
  }
  f.fresh_bytes = fresh_bytes;
  f.fresh_seconds = double(f.fresh_bytes) * p.fresh_seconds_per_byte;
  const double roofline = std::max({f.compute_seconds, f.memory_seconds, f.kernel_seconds});
  f.forward_seconds = roofline + f.scratch_seconds + f.overhead_seconds + f.fresh_seconds;
  const double largest = std::max({roofline, f.scratch_seconds, f.overhead_seconds, f.fresh_seconds});
  f.bound = largest == f.overhead_seconds ? ForecastBound::Overhead
            : largest == f.scratch_seconds ? ForecastBound::Scratch
            : largest == f.fresh_seconds ? ForecastBound::Fresh
            : roofline == f.kernel_seconds && f.kernel_seconds > std::max(f.compute_seconds, f.memory_seconds)
                ? ForecastBound::Kernel
                : (f.compute_seconds >= f.memory_seconds ? ForecastBound::Compute : ForecastBound::Memory);
  const double conv_backward_seconds = price_train_conv(p, node, f);
  if (p.options.train && i < flow.any_input.size() && flow.any_input[i])
    price_backward(p, node, report, flow, f, conv_backward_seconds);
  return f;
}

namespace {

// The int8 curve's rate at n, per full-range weight: divided by the products
// the executor runs for such a weight (DeviceCeilings::int8_weight_products:
// two 7-bit halves on a CPU without VNNI).
double int8_rate(const DeviceCeilings& c, double n) {
  const double rate = c.matmul_flops_at("int8", n);
  return c.int8_weight_products > 1 ? rate / double(c.int8_weight_products) : rate;
}

// The rate of an int8 contraction of `ops` int ops: its int8 conv samples'
// where they price it (int8_conv_seconds), else the int8 curve's at n.
double int8_contraction_rate(const Pricing& p, const Node& node, double ops, double n) {
  const double conv = int8_conv_seconds(p, node);
  return conv > 0 && ops > 0 ? ops / conv : int8_rate(p.ceilings, n);
}

}  // namespace

void price_int8_head(const Pricing& p, const Node& node, const FusedGroup& group, NodeForecast& f) {
  if (!f.contraction || p.options.train) return;
  const double flops = f.compute_flops_per_second > 0 ? f.compute_seconds * f.compute_flops_per_second : 0.0;
  const double rate = int8_contraction_rate(p, node, flops, f.equivalent_gemm_n);
  if (rate <= 0) return;
  const Graph& g = p.graph;
  f.compute_flops_per_second = rate;
  f.compute_seconds = flops / rate;
  // The kernel reads its quantized operands (1 byte an element) and writes the float output.
  double bytes = 0;
  for (int t : group.inputs) bytes += double(tensor_bytes(g, t));
  for (int t : node.outputs) bytes += double(tensor_bytes(g, t));
  f.memory_seconds = bytes / p.ceilings.memory_bandwidth;
  // The fp32 classes (a depthwise conv's, a one-row product's weight stream)
  // and the fp32 convolution's scratch pass do not describe the int8 kernel,
  // whose weights are prepacked once: its call cost stays.
  f.op_cost = "int8";
  f.kernel_seconds = 0;
  f.scratch_seconds = 0;
  const double roofline = std::max(f.compute_seconds, f.memory_seconds);
  f.forward_seconds = roofline + f.overhead_seconds + f.fresh_seconds;
  f.bound = f.overhead_seconds > roofline ? ForecastBound::Overhead
            : f.compute_seconds >= f.memory_seconds ? ForecastBound::Compute
                                                    : ForecastBound::Memory;
}

void price_integer_contraction(const Pricing& p, const Node& node, NodeForecast& f) {
  if (p.options.train || !f.contraction || !node.domain.empty() || f.compute_flops_per_second <= 0) return;
  const std::string& op = node.op_type;
  if (op != "ConvInteger" && op != "MatMulInteger" && op != "QLinearConv" && op != "QLinearMatMul") return;
  const double ops = f.compute_seconds * f.compute_flops_per_second;
  const double rate = int8_contraction_rate(p, node, ops, f.equivalent_gemm_n);
  if (rate <= 0) return;
  f.op_cost = "int8";
  f.compute_flops_per_second = rate;
  f.compute_seconds = ops / rate;
  const double roofline = std::max({f.compute_seconds, f.memory_seconds, f.kernel_seconds});
  f.forward_seconds = roofline + f.scratch_seconds + f.overhead_seconds + f.fresh_seconds;
  if (f.bound == ForecastBound::Compute && f.memory_seconds > f.compute_seconds) f.bound = ForecastBound::Memory;
}

void price_conv_head(const Pricing& p, const Node& node, const FusedGroup& group, NodeForecast& f) {
  const Graph& g = p.graph;
  if (p.options.train || p.options.compute_dtype != "fp32") return;
  // One group, or depthwise (one input channel per output channel), or
  // grouped: `products` groups of one product each.
  std::string kind;
  double m = 0, n = 0, k = 0, products = 1;
  if (!conv_sample_shape(g, node, false, kind, m, n, k) &&
      !grouped_conv_shape(g, node, p.ceilings.conv_channel_block, kind, m, n, k, products))
    return;
  const bool depthwise = kind == "dw" || kind == "dw/s2";
  // A trailing SiLU runs as one more pass over the output after the kernel
  // (profiler/ops/post_ops.hpp, split_trailing_silu).
  const auto* spec = std::get_if<ConvKernelSpec>(&group.spec);
  const bool silu = spec && !spec->post_ops.empty() && spec->post_ops.back().kind == FusedPostOp::Kind::Swish;
  const double silu_seconds = silu ? double(tensor_bytes(g, group.output)) * p.ceilings.conv_silu_seconds_per_byte : 0.0;
  const double layout_seconds = layout_copy_bytes(g, node.inputs[0]) * p.ceilings.conv_layout_seconds_per_byte;
  // The kernels compute output channels in whole blocks of the vector's
  // lanes (DeviceCeilings::conv_channel_block): a conv writing 20 channels
  // runs as one writing 32, at the rate the samples (every one a multiple of
  // the block) give 32. Input channels are a loop: no rounding.
  const double n_run = double(padded_channels(int64_t(n), p.ceilings.conv_channel_block));
  if (depthwise) {
    // The depthwise op class (forecast_node's price) was measured on a 3x3
    // depthwise conv in a model's place; its line in bytes cannot see the
    // taps. Other taps: the class's price scaled by the samples' ratio of a
    // conv with these taps to a 3x3 at the same M, N and stride.
    if (k != 9.0) {  // a depthwise conv's K is its taps
      const double r9 = p.ceilings.conv_flops_at(kind, m, n, 9.0, p.weights_cold_share);
      const double rt = p.ceilings.conv_flops_at(kind, m, n, k, p.weights_cold_share);
      if (r9 > 0 && rt > 0) f.kernel_seconds *= (k / 9.0) * r9 / rt;
    }
    // Its channels, the vector's dimension, in whole blocks.
    f.kernel_seconds *= n_run / n;
    const double roofline = std::max({f.compute_seconds, f.memory_seconds, f.kernel_seconds});
    f.kernel_seconds += silu_seconds + layout_seconds;
    f.forward_seconds =
        roofline + silu_seconds + layout_seconds + f.scratch_seconds + f.overhead_seconds + f.fresh_seconds;
    return;
  }
  // Ceilings without samples of this kind keep the rules of forecast_node.
  // (Below the samples' smallest shape, no less than that shape's time.) A
  // grouped conv is one call over its groups: each group's product at the
  // samples' time less a call's fixed part (the cheapest sample's time,
  // conv_call_seconds), that part once. As `products` whole calls it was
  // 2-3x over on RegNet's 25 and 49 groups of 16 channels at 7x7 (0.12-0.18
  // and 0.25-0.43 ms, priced 0.38 and 0.74); as one product of all the
  // groups' rows (M x groups) 0.7-0.85x under, its weights read as if shared.
  double seconds = p.ceilings.conv_seconds_at(kind, m, n_run, k, p.weights_cold_share);
  if (products > 1) {
    const double call = std::min(seconds, p.ceilings.conv_call_seconds(kind));
    seconds = call + products * (seconds - call);
  }
  if (seconds <= 0) return;
  const double flops = products * 2.0 * m * n_run * k;
  f.op_cost = std::string("conv ") + kind;
  f.compute_flops_per_second = flops / seconds;
  f.compute_seconds = seconds;
  f.memory_seconds = 0;
  f.scratch_seconds = 0;
  f.overhead_seconds = 0;
  // The sum post-op reads the residual while the conv writes its output.
  const int residual = group.inputs.size() > 1 ? group.inputs[1] : -1;
  f.kernel_seconds = double(tensor_bytes(g, residual)) * p.ceilings.conv_residual_seconds_per_byte + silu_seconds;
  // An input not held channels-last (an image as fed, a shuffled or sliced
  // activation) is copied channels-last before the kernel.
  f.kernel_seconds += layout_seconds;
  f.forward_seconds = f.compute_seconds + f.kernel_seconds + f.fresh_seconds;
  f.bound = ForecastBound::Compute;
}

namespace {

// A Gemm or MatMul's product as the product samples name it: M = the rows of
// A (every dim of the output but the last), N = the output's last dim, K =
// A's last dim (its first under Gemm's transA). False where a shape is not
// known or A is not a matrix (or a stack of rows).
bool matmul_product_shape(const Graph& g, const Node& node, double& m, double& n, double& k) {
  if (node.inputs.empty() || node.inputs[0] < 0 || node.outputs.empty() || node.outputs[0] < 0) return false;
  const auto a = known_dims(g.tensors[size_t(node.inputs[0])].shape);
  const auto y = known_dims(g.tensors[size_t(node.outputs[0])].shape);
  if (a.size() < 2 || y.size() < 2) return false;
  m = 1;
  for (size_t i = 0; i + 1 < y.size(); ++i) m *= double(y[i]);
  n = double(y.back());
  k = double(node.op_type == "Gemm" && node.attr_int("transA", 0) ? a.front() : a.back());
  return m > 0 && n > 0 && k > 0;
}

// Products of fewer rows keep the other rules: a one-row product streams its
// weight (the Gemm/thin class), one of up to 4 rows runs on the executor's
// direct row loop; the samples start at 8 rows.
constexpr double kSampledRowsFrom = 8;

}  // namespace

void price_matmul_head(const Pricing& p, const Node& node, const FusedGroup& group, NodeForecast& f) {
  if (p.options.train || p.options.compute_dtype != "fp32" || !node.domain.empty() || !is_gemm_or_matmul(node))
    return;
  double m = 0, n = 0, k = 0;
  if (!matmul_product_shape(p.graph, node, m, n, k) || m < kSampledRowsFrom) return;
  // Sampled with their weights cold (as a transformer's are): every cold share.
  const double seconds = p.ceilings.conv_seconds_at("matmul", m, n, k);
  if (seconds <= 0) return;  // ceilings without product samples keep forecast_node's rules
  f.op_cost = "matmul samples";
  f.compute_flops_per_second = 2.0 * m * n * k / seconds;
  f.compute_seconds = seconds;
  // The samples' time holds the call, the weight's read and the output's write.
  f.memory_seconds = 0;
  f.scratch_seconds = 0;
  f.overhead_seconds = 0;
  // A residual Add post-op reads its operand as the output is written, as a Conv group's.
  const int residual = group.inputs.size() > 1 ? group.inputs[1] : -1;
  f.kernel_seconds = double(tensor_bytes(p.graph, residual)) * p.ceilings.conv_residual_seconds_per_byte;
  f.forward_seconds = f.compute_seconds + f.kernel_seconds + f.fresh_seconds;
  f.bound = ForecastBound::Compute;
}

void price_written_out(const Pricing& p, const FusedGroup& group, NodeForecast& f) {
  if (p.options.train) return;
  const Graph& g = p.graph;
  // A GELU or a LayerNormalization written out runs as one kernel (at::gelu,
  // at::layer_norm) on its head's row: the op class of that kernel, in the
  // group's bytes (its input read, its output written), not the head's own
  // class (a Div's, a ReduceMean's) in the head's bytes.
  const char* kernel_class = group.pattern == "gelu" ? "Gelu" : group.pattern == "layer_norm" ? "LayerNormalization" : nullptr;
  if (kernel_class) {
    const OpCost* c = p.ceilings.op_cost(kernel_class);
    if (!c || c->seconds_per_byte <= 0) return;
    const double bytes = double(tensor_bytes(g, group.inputs.empty() ? -1 : group.inputs[0]) +
                                tensor_bytes(g, group.output));
    f.op_cost = c->op;
    f.kernel_seconds = bytes * c->seconds_per_byte;
    f.memory_seconds = std::min(f.memory_seconds, bytes / p.ceilings.memory_bandwidth);
    f.overhead_seconds = c->fixed_seconds;
    const double roofline = std::max({f.compute_seconds, f.memory_seconds, f.kernel_seconds});
    f.forward_seconds = roofline + f.overhead_seconds + f.fresh_seconds;
    f.bound = f.kernel_seconds >= std::max(f.compute_seconds, f.memory_seconds) ? ForecastBound::Kernel : f.bound;
    return;
  }
  const OpCost* gelu = p.ceilings.op_cost("Gelu");
  if (!gelu || gelu->seconds_per_byte <= 0) return;
  // A GELU post-op of a Conv or Gemm/MatMul group: the pass over the
  // group's output a GELU kernel would make (its bytes read and written).
  const std::vector<FusedPostOp>* post_ops = nullptr;
  if (const auto* conv = std::get_if<ConvKernelSpec>(&group.spec)) post_ops = &conv->post_ops;
  if (const auto* mm = std::get_if<MatMulKernelSpec>(&group.spec)) post_ops = &mm->post_ops;
  if (!post_ops) return;
  for (const FusedPostOp& op : *post_ops)
    if (op.kind == FusedPostOp::Kind::Gelu || op.kind == FusedPostOp::Kind::GeluTanh) {
      const double extra = 2.0 * double(tensor_bytes(g, group.output)) * gelu->seconds_per_byte;
      f.kernel_seconds += extra;
      f.forward_seconds += extra;
    }
}

void forecast_optimizer(const Pricing& p, const TrainableWeights& weights, LatencyForecast& latency) {
  const DeviceCeilings& ceilings = p.ceilings;
  const OptimizerCost oc = optimizer_cost(p.options.optimizer);
  // Each of the optimizer's temporaries of a weight above the threshold is a fresh mapping, every step.
  if (p.fresh_seconds_per_byte > 0)
    for (int64_t bytes : weights.tensor_bytes)
      if (bytes > p.fresh_threshold) latency.optimizer_fresh_bytes += oc.temporaries * bytes;
  const double element_bytes = weights.params > 0 ? double(weights.bytes) / double(weights.params) : 4.0;
  // The update streams its element accesses at the copy bandwidth, plus a
  // fixed cost per weight tensor; where `modelstat device` timed this
  // optimizer's update (on weights past the last-level cache), its measured
  // cost per element and per tensor instead.
  // Each weight at the measured rate of its size (schema 2.4: from the cached
  // rate of the 1 Mi-element weights to the streamed rate past the caches).
  const OptimizerUpdateCost* measured = ceilings.optimizer_cost(name_of(p.options.optimizer));
  if (measured && (measured->seconds_per_element > 0 || measured->per_tensor_seconds > 0)) {
    double elements_seconds = 0;
    for (int64_t bytes : weights.tensor_bytes) {
      const double elements = double(bytes) / element_bytes;
      elements_seconds += elements * measured->seconds_per_element_at(elements);
    }
    latency.optimizer_seconds = elements_seconds + double(weights.tensors) * measured->per_tensor_seconds;
  } else
    latency.optimizer_seconds =
        double(weights.params) * oc.element_accesses * element_bytes / ceilings.memory_bandwidth +
        double(weights.tensors) * oc.ops_per_tensor * ceilings.op_overhead_seconds;
  latency.optimizer_seconds += double(latency.optimizer_fresh_bytes) * p.fresh_seconds_per_byte;
}

}  // namespace modelstat::fit

// The fit forecast: memory and latency of inference or one training step from
// the static analysis and the device ceilings, budgets and the batch search.
// Every rule here is stated, with its reason, in docs/FIT.md; the constants
// below are the ones that document names.
#include "modelstat/fit.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "analyzer/op_traits.hpp"
#include "modelstat/error.hpp"

namespace modelstat {

// 1.1: nodes[].op_cost, nodes[].kernel_seconds; 1.2: fresh allocation bytes and seconds.
const char* const kFitJsonSchemaVersion = "1.2";

// ------------------------------------------------------------------ parsing

const char* optimizer_name(Optimizer o) {
  switch (o) {
    case Optimizer::Sgd: return "sgd";
    case Optimizer::Momentum: return "momentum";
    case Optimizer::Adam: return "adam";
  }
  return "?";
}

Optimizer parse_optimizer(const std::string& name) {
  if (name == "sgd") return Optimizer::Sgd;
  if (name == "momentum") return Optimizer::Momentum;
  if (name == "adam") return Optimizer::Adam;
  throw_usage("unknown optimizer '" + name + "' (sgd, momentum, adam)");
}

namespace {

// Splits "12.5 ms" into 12.5 and "ms"; nullopt when there is no number.
std::optional<std::pair<double, std::string>> split_number_unit(const std::string& text) {
  size_t begin = 0;
  while (begin < text.size() && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  size_t end = begin;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) ++end;
  if (end == begin) return std::nullopt;
  const std::string number = text.substr(begin, end - begin);
  if (std::count(number.begin(), number.end(), '.') > 1 || number == ".") return std::nullopt;
  std::string unit = text.substr(end);
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.front()))) unit.erase(unit.begin());
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.back()))) unit.pop_back();
  return std::make_pair(std::stod(number), unit);
}

}  // namespace

int64_t parse_byte_size(const std::string& text) {
  const auto parsed = split_number_unit(text);
  static const std::map<std::string, double> kUnits = {
      {"", 1},          {"B", 1},         {"KiB", 1024.0},  {"MiB", 1024.0 * 1024},
      {"GiB", 1024.0 * 1024 * 1024},      {"TiB", 1024.0 * 1024 * 1024 * 1024},
      {"KB", 1e3},      {"kB", 1e3},      {"MB", 1e6},      {"GB", 1e9},
      {"TB", 1e12}};
  const std::string hint = "'" + text + "' is not a memory size (e.g. 8GiB, 512MiB, 1.5GB, 4096B)";
  if (!parsed) throw_usage(hint);
  const auto unit = kUnits.find(parsed->second);
  if (unit == kUnits.end()) throw_usage(hint);
  const double bytes = parsed->first * unit->second;
  if (!std::isfinite(bytes) || bytes >= 9.2e18) throw_usage(hint + ": too large");
  return int64_t(std::llround(bytes));
}

double parse_duration_seconds(const std::string& text) {
  const auto parsed = split_number_unit(text);
  static const std::map<std::string, double> kUnits = {
      {"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"\xC2\xB5s", 1e-6}, {"ns", 1e-9}};
  const std::string hint = "'" + text + "' is not a duration (e.g. 10ms, 0.5s, 250us)";
  if (!parsed) throw_usage(hint);
  const auto unit = kUnits.find(parsed->second);
  if (unit == kUnits.end()) throw_usage(hint);
  const double seconds = parsed->first * unit->second;
  if (!std::isfinite(seconds)) throw_usage(hint);
  return seconds;
}

// ------------------------------------------------------------------- op classes

namespace {

bool is_contraction(const NodeReport& r) { return r.cost.macs > 0; }

bool is_gemm_or_matmul(const Node& n) { return n.domain.empty() && (n.op_type == "Gemm" || n.op_type == "MatMul"); }

int64_t tensor_bytes(const Graph& g, int t) {
  if (t < 0) return 0;
  return g.tensors[size_t(t)].size_bytes().value_or(0);
}

bool is_activation(const Tensor& t) { return t.role == TensorRole::Input || t.role == TensorRole::Activation; }

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
// one matrix of the batch; Gemm: M x N from the output, K from the MACs.
// When the shapes are not known: cbrt(MACs / products).
double harmonic_n(double m, double nn, double k) { return 3.0 / (1.0 / m + 1.0 / nn + 1.0 / k); }

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
      const double m = a.size() >= 2 ? double(a[a.size() - 2]) : 1.0;
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

// The measured op class (DeviceCeilings::op_costs) a node belongs to: its op
// type, or "Conv/depthwise" for a convolution with one input channel per group
// (MobileNet's 3x3 depthwise); "" for dense contractions, which are priced on
// the matmul curve.
std::string op_cost_key(const Graph& g, const Node& n) {
  if (!n.domain.empty()) return {};
  if (n.op_type == "Conv") {
    const int64_t group = n.attr_int("group", 1);
    if (group > 1 && n.inputs.size() >= 2 && n.inputs[1] >= 0) {
      const auto w = known_dims(g.tensors[size_t(n.inputs[1])].shape);
      if (w.size() >= 2 && w[1] == 1 && w[0] == group) return "Conv/depthwise";
    }
    return {};
  }
  if (n.op_type == "Gemm" || n.op_type == "MatMul") return {};
  return n.op_type;
}

// The dense contraction class whose backward / forward ratio prices a
// contraction's backward: "Conv/1x1" for a 1x1 unstrided conv (a plain GEMM
// over the positions; measured apart, its backward differs from a 3x3's),
// "Conv" for other convolutions, "Gemm" for the rest.
std::string dense_class(const Graph& g, const Node& n) {
  if (n.op_type != "Conv") return "Gemm";
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

}  // namespace

// ---------------------------------------------------------------- workspace

namespace {

// What a node costs on ATen's CPU kernels beyond its FLOPs and bytes
// (docs/FIT.md, "Workspace" and "CPU kernel costs"), all measured with
// bench/fit_cpu_probe.cc on Debian's LibTorch 1.13 (oneDNN 2.6).
struct CpuKernel {
  int64_t workspace_bytes = 0;        // scratch live while the node runs
  int64_t scratch_traffic_bytes = 0;  // bytes the scratch pass moves (written, read back)
  double fixed_op_overheads = 1;      // fixed cost of one call, in units of the measured op overhead
};

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

}  // namespace

int64_t cpu_workspace_bytes(const Graph& g, const Node& n, int threads) {
  return cpu_kernel(g, n, threads).workspace_bytes;
}

// ----------------------------------------------------------------- memory

namespace {

// Buffers: tensors that share storage (views, in-place results) map to one.
struct BufferMap {
  std::vector<int> of_tensor;       // -1: not an activation
  std::vector<int64_t> bytes;       // per buffer
  std::vector<int> first_node;      // producer of its first tensor (-1: graph input)
  std::vector<int> last_use;        // last node reading any of its tensors
  std::vector<bool> kept;           // holds a graph output: lives to the end
};

std::vector<int> last_consumer(const Graph& g) {
  std::vector<int> last(g.tensors.size(), -1);
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    for (int c : g.tensors[t].consumers) last[t] = std::max(last[t], c);
    if (last[t] < 0) last[t] = g.tensors[t].producer;  // dead output: freed after its producer
  }
  return last;
}

BufferMap map_buffers(const Graph& g, bool allow_in_place, bool* lower_bound) {
  BufferMap m;
  m.of_tensor.assign(g.tensors.size(), -1);
  const std::vector<int> last = last_consumer(g);
  auto new_buffer = [&](int t, int node) {
    m.of_tensor[size_t(t)] = int(m.bytes.size());
    const auto size = g.tensors[size_t(t)].size_bytes();
    if (!size) *lower_bound = true;
    m.bytes.push_back(size.value_or(0));
    m.first_node.push_back(node);
    m.last_use.push_back(last[size_t(t)]);
    m.kept.push_back(false);
  };
  for (int t : g.inputs) new_buffer(t, -1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const int in0 = n.inputs.empty() ? -1 : n.inputs[0];
    const int b0 = in0 >= 0 ? m.of_tensor[size_t(in0)] : -1;
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      const int t = n.outputs[o];
      if (t < 0 || !is_activation(g.tensors[size_t(t)])) continue;
      int reuse = -1;
      if (o == 0 && b0 >= 0 && op_output_is_view(n)) reuse = b0;
      if (o == 0 && b0 >= 0 && allow_in_place && op_may_run_in_place(n) &&
          g.tensors[size_t(in0)].role == TensorRole::Activation && m.last_use[size_t(b0)] == int(i) &&
          std::count(n.inputs.begin(), n.inputs.end(), in0) == 1 && g.tensors[size_t(in0)].dtype == g.tensors[size_t(t)].dtype &&
          g.tensors[size_t(in0)].size_bytes() && g.tensors[size_t(in0)].size_bytes() == g.tensors[size_t(t)].size_bytes())
        reuse = b0;
      if (reuse >= 0) {
        m.of_tensor[size_t(t)] = reuse;
        m.last_use[size_t(reuse)] = std::max(m.last_use[size_t(reuse)], last[size_t(t)]);
      } else {
        new_buffer(t, int(i));
      }
    }
  }
  // Graph outputs live to the end; graph inputs too: the caller owns them
  // (as a deployment holds its input batch, and as the profiler counts).
  for (int o : g.outputs)
    if (o >= 0 && m.of_tensor[size_t(o)] >= 0) m.kept[size_t(m.of_tensor[size_t(o)])] = true;
  for (int i : g.inputs)
    if (i >= 0 && m.of_tensor[size_t(i)] >= 0) m.kept[size_t(m.of_tensor[size_t(i)])] = true;
  return m;
}

enum class Phase { Forward, Backward, Optimizer };

struct Peak {
  int64_t activation_bytes = 0;  // without workspace
  int64_t workspace_bytes = 0;
  int64_t gradient_bytes = 0;    // weight gradients live (training)
  int node = -1;
  Phase phase = Phase::Forward;
  int64_t total() const { return activation_bytes + workspace_bytes + gradient_bytes; }
};

void consider(Peak& peak, int64_t live, int64_t workspace, int64_t gradients, int node, Phase phase) {
  if (live + workspace + gradients > peak.total()) peak = {live, workspace, gradients, node, phase};
}

// Inference: buffers allocated when produced, freed after their last reader;
// the node's workspace is live while it runs.
Peak inference_peak(const Graph& g, const std::vector<int64_t>& workspace, bool* lower_bound) {
  const BufferMap m = map_buffers(g, /*allow_in_place=*/true, lower_bound);
  std::vector<std::vector<int>> allocs(g.nodes.size()), frees(g.nodes.size());
  int64_t live = 0;
  for (size_t b = 0; b < m.bytes.size(); ++b) {
    if (m.first_node[b] < 0) live += m.bytes[b];
    else allocs[size_t(m.first_node[b])].push_back(int(b));
    if (!m.kept[b] && m.last_use[b] >= 0) frees[size_t(m.last_use[b])].push_back(int(b));
  }
  Peak peak;
  peak.activation_bytes = live;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (int b : allocs[i]) live += m.bytes[size_t(b)];
    consider(peak, live, workspace[i], 0, int(i), Phase::Forward);
    for (int b : frees[i]) live -= m.bytes[size_t(b)];
  }
  return peak;
}

struct TrainingMemory {
  Peak peak;
  int64_t saved_bytes = 0;  // held for backward at the end of forward
};

// One training step: forward keeps what backward needs (saved tensors, MaxPool
// indices); backward walks the nodes in reverse, allocating activation
// gradients and weight gradients and releasing saved tensors once their last
// user has run; the optimizer then holds every weight gradient and its own
// temporaries (optimizer_transient). Gradients are set to none after each
// update (zero_grad(set_to_none=True)), so none is live during forward.
TrainingMemory training_peak(const Graph& g, const std::vector<int64_t>& workspace,
                             int64_t optimizer_transient, bool* lower_bound) {
  const BufferMap m = map_buffers(g, /*allow_in_place=*/false, lower_bound);
  const size_t nodes = g.nodes.size();
  const std::vector<bool> trainable = trainable_initializers(g);
  std::vector<bool> requires_grad = trainable;
  std::vector<bool> in_backward(nodes, false);
  for (size_t i = 0; i < nodes; ++i) {
    const Node& n = g.nodes[i];
    bool any = false;
    for (int t : n.inputs) any = any || (t >= 0 && requires_grad[size_t(t)]);
    if (!any) continue;
    for (int t : n.outputs)
      if (t >= 0 && dtype_is_floating(g.tensors[size_t(t)].dtype)) requires_grad[size_t(t)] = true, in_backward[i] = true;
  }

  // Saved buffers and the earliest node (in forward order) that saves each:
  // backward runs in reverse, so that node is the last to release it.
  std::vector<int> saved_until(m.bytes.size(), -1);  // -1: not saved; else released after backward of that node
  std::vector<int64_t> extra_saved(nodes, 0);        // MaxPool indices (int64 per output element)
  for (size_t i = 0; i < nodes; ++i) {
    if (!in_backward[i]) continue;
    const Node& n = g.nodes[i];
    std::vector<int> saved;
    switch (op_backward_saves(n)) {
      case BackwardSaves::Inputs: saved = n.inputs; break;
      case BackwardSaves::Output: saved = {n.outputs.empty() ? -1 : n.outputs[0]}; break;
      case BackwardSaves::Nothing: break;
    }
    for (int t : saved) {
      if (t < 0) continue;
      const int b = m.of_tensor[size_t(t)];
      if (b < 0) continue;  // a weight: persistent anyway
      if (saved_until[size_t(b)] < 0 || int(i) < saved_until[size_t(b)]) saved_until[size_t(b)] = int(i);
    }
    if (n.domain.empty() && n.op_type == "MaxPool" && !n.outputs.empty() && n.outputs[0] >= 0) {
      const auto elements = g.tensors[size_t(n.outputs[0])].shape.element_count();
      extra_saved[i] = elements.value_or(0) * 8;
    }
  }

  // Forward.
  std::vector<std::vector<int>> allocs(nodes), frees(nodes);
  int64_t live = 0;
  for (size_t b = 0; b < m.bytes.size(); ++b) {
    if (m.first_node[b] < 0) live += m.bytes[b];
    else allocs[size_t(m.first_node[b])].push_back(int(b));
    if (!m.kept[b] && saved_until[b] < 0 && m.last_use[b] >= 0) frees[size_t(m.last_use[b])].push_back(int(b));
  }
  TrainingMemory result;
  for (size_t i = 0; i < nodes; ++i) {
    for (int b : allocs[i]) live += m.bytes[size_t(b)];
    live += extra_saved[i];
    consider(result.peak, live, workspace[i], 0, int(i), Phase::Forward);
    for (int b : frees[i]) live -= m.bytes[size_t(b)];
  }
  result.saved_bytes = live;

  // Backward: gradients of activations, allocated by the first consumer (in
  // reverse) that produces one, freed after their producer's backward.
  // A view's gradient is a view of its output's gradient.
  std::vector<std::vector<int>> saved_release(nodes);
  for (size_t b = 0; b < m.bytes.size(); ++b)
    if (saved_until[b] >= 0 && !m.kept[b]) saved_release[size_t(saved_until[b])].push_back(int(b));
  std::vector<bool> grad_live(m.bytes.size(), false);
  std::vector<bool> weight_grad_live(g.tensors.size(), false);
  int64_t weight_grads = 0;
  for (int o : g.outputs)
    if (o >= 0 && requires_grad[size_t(o)] && m.of_tensor[size_t(o)] >= 0) {
      grad_live[size_t(m.of_tensor[size_t(o)])] = true;
      live += m.bytes[size_t(m.of_tensor[size_t(o)])];
    }
  for (size_t r = nodes; r-- > 0;) {
    if (!in_backward[r]) continue;
    const Node& n = g.nodes[r];
    for (int t : n.inputs) {
      if (t < 0 || !requires_grad[size_t(t)]) continue;
      if (trainable[size_t(t)]) {
        if (!weight_grad_live[size_t(t)]) {
          weight_grad_live[size_t(t)] = true;
          weight_grads += tensor_bytes(g, t);
        }
        continue;
      }
      const int b = m.of_tensor[size_t(t)];
      if (b < 0 || grad_live[size_t(b)]) continue;
      grad_live[size_t(b)] = true;
      live += m.bytes[size_t(b)];
    }
    consider(result.peak, live, workspace[r], weight_grads, int(r), Phase::Backward);
    // This node produced its outputs: their gradients are consumed now
    // (unless the buffer is shared with an input, as a view's is).
    std::set<int> input_buffers;
    for (int t : n.inputs)
      if (t >= 0 && m.of_tensor[size_t(t)] >= 0) input_buffers.insert(m.of_tensor[size_t(t)]);
    for (int t : n.outputs) {
      if (t < 0) continue;
      const int b = m.of_tensor[size_t(t)];
      if (b >= 0 && grad_live[size_t(b)] && !input_buffers.count(b)) {
        grad_live[size_t(b)] = false;
        live -= m.bytes[size_t(b)];
      }
    }
    for (int b : saved_release[r]) live -= m.bytes[size_t(b)];
    live -= extra_saved[r];
  }
  // Optimizer: every weight gradient, the graph inputs and outputs, its temporaries.
  int64_t outputs = 0;
  for (size_t b = 0; b < m.bytes.size(); ++b)
    if (m.kept[b]) outputs += m.bytes[b];
  consider(result.peak, outputs, optimizer_transient, weight_grads, -1, Phase::Optimizer);
  return result;
}

}  // namespace

// ------------------------------------------------------------ fresh memory

namespace {

// Bytes each node allocates in buffers above `threshold` (docs/FIT.md, "Fresh
// memory"): the buffers it creates (views and in-place results share their
// input's, as in the memory forecast) and its scratch.
std::vector<int64_t> fresh_forward_bytes(const Graph& g, bool allow_in_place, const std::vector<int64_t>& workspace,
                                         int64_t threshold) {
  std::vector<int64_t> out(g.nodes.size(), 0);
  if (threshold <= 0) return out;
  bool unused = false;
  const BufferMap m = map_buffers(g, allow_in_place, &unused);
  for (size_t b = 0; b < m.bytes.size(); ++b)
    if (m.first_node[b] >= 0 && m.bytes[b] > threshold) out[size_t(m.first_node[b])] += m.bytes[b];
  for (size_t i = 0; i < out.size() && i < workspace.size(); ++i)
    if (workspace[i] > threshold) out[i] += workspace[i];
  return out;
}

}  // namespace

// ------------------------------------------------------------------ latency

namespace {

// One optimizer update as PyTorch's single-tensor (for-loop) optimizers write
// it, gradients then set to none (docs/FIT.md, "Training step"): element
// accesses per trainable element, ops per weight tensor, and temporaries the
// size of one weight tensor.
struct OptimizerCost {
  int element_accesses;
  int ops_per_tensor;
  int temporaries;
};
OptimizerCost optimizer_cost(Optimizer o) {
  switch (o) {
    // p.add_(g, -lr): read p, g, write p.
    case Optimizer::Sgd: return {3, 1, 0};
    // v.mul_(m) (2), v.add_(g) (3), p.add_(v, -lr) (3).
    case Optimizer::Momentum: return {8, 3, 0};
    // m.mul_ (2), m.add_ (3), v.mul_ (2), v.addcmul_(g, g) (3), t = v.sqrt() (2),
    // d = t / c (2), d.add_(eps) (2), p.addcdiv_(m, d) (4); t and d live together.
    case Optimizer::Adam: return {20, 8, 2};
  }
  return {0, 0, 0};
}

}  // namespace

FitReport forecast_fit(const AnalysisResult& analysis, const DeviceCeilings& ceilings, const FitOptions& options) {
  if (!analysis.model) throw Error(ErrorKind::Runtime, "forecast_fit needs the analysed model's IR");
  const Graph& g = analysis.model->graph;
  if (!(ceilings.memory_bandwidth > 0)) throw_usage("the ceilings have no memory bandwidth");
  const double peak = ceilings.peak_flops(options.compute_dtype);
  if (!(peak > 0))
    throw_usage("the ceilings have no matmul figure for " + options.compute_dtype + " (device " +
                ceilings.device_name + ")");

  FitReport r;
  r.model_path = analysis.model_path;
  r.train = options.train;
  r.optimizer = options.optimizer;
  r.memory_budget_bytes = options.memory_budget_bytes;
  r.latency_budget_seconds = options.latency_budget_seconds;
  r.ceilings = ceilings;
  r.compute_dtype = options.compute_dtype;
  r.compute_peak_flops_per_second = peak;
  if (!g.inputs.empty()) {
    const Shape& s = g.tensors[size_t(g.inputs[0])].shape;
    if (s.rank_known && !s.dims.empty() && s.dims[0].known()) r.batch = s.dims[0].value;
  }
  if (analysis.totals.nodes_unknown_op + analysis.totals.nodes_unknown_shape > 0)
    r.notices.push_back(std::to_string(analysis.totals.nodes_unknown_op + analysis.totals.nodes_unknown_shape) +
                        " node(s) have no exact cost: their time is only the per-op overhead");

  if (ceilings.measured() && ceilings.op_costs.empty())
    r.notices.push_back(
        "the ceilings have no op costs (saved by a modelstat before schema 1.2): every node is priced by the "
        "roofline alone; run 'modelstat device' again for the measured op classes (docs/FIT.md)");
  // Per-node workspace and latency.
  const bool cpu = ceilings.device_kind == "cpu";
  if (!cpu)
    r.notices.push_back("workspace is not forecast on " + ceilings.device_kind +
                        " (library algorithm choice); memory is weights + activations");
  // ATen's CPU kernel rules per node (workspace, scratch traffic, call cost).
  std::vector<CpuKernel> kernels(g.nodes.size());
  std::vector<int64_t> workspace(g.nodes.size(), 0);
  if (cpu)
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      kernels[i] = cpu_kernel(g, g.nodes[i], ceilings.threads);
      workspace[i] = kernels[i].workspace_bytes;
    }
  // In a training step MaxPool keeps its indices for backward (counted as saved), not as scratch.
  std::vector<int64_t> train_workspace = workspace;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].domain.empty() && g.nodes[i].op_type == "MaxPool") train_workspace[i] = 0;
  const size_t n_nodes = std::min(g.nodes.size(), analysis.nodes.size());
  std::vector<bool> requires_grad(g.tensors.size(), false);
  const std::vector<bool> trainable = trainable_initializers(g);
  requires_grad = trainable;
  // Allocations the host maps afresh every time (DeviceCeilings::fresh_allocation_*).
  const int64_t fresh_threshold = ceilings.fresh_allocation_threshold_bytes;
  const double fresh_seconds_per_byte = fresh_threshold > 0 ? ceilings.fresh_allocation_seconds_per_byte : 0.0;
  std::vector<int64_t> fresh_bytes(g.nodes.size(), 0);
  if (fresh_seconds_per_byte > 0)
    fresh_bytes = fresh_forward_bytes(g, /*allow_in_place=*/!options.train,
                                      options.train ? train_workspace : workspace, fresh_threshold);
  const OpCost* thin = ceilings.op_cost("Gemm/thin");
  if (thin && !(thin->seconds_per_byte > 0)) thin = nullptr;
  for (size_t i = 0; i < n_nodes; ++i) {
    const Node& node = g.nodes[i];
    const NodeReport& a = analysis.nodes[i];
    NodeForecast f;
    f.index = int(i);
    f.name = a.name;
    f.op_type = a.op_type;
    // A measured op class (DeviceCeilings::op_costs) prices the node when there
    // is one: its own fixed cost, and its own cost per byte as one more
    // ceiling beside the roofline's. It replaces the CPU scratch and call-cost
    // rules (the class was measured with them).
    const std::string class_key = op_cost_key(g, node);
    const OpCost* measured = class_key.empty() ? nullptr : ceilings.op_cost(class_key);
    if (measured && measured->seconds_per_byte <= 0 && measured->fixed_seconds <= 0) measured = nullptr;
    const CpuKernel& kernel = kernels[i];
    f.workspace_bytes = kernel.workspace_bytes;
    f.contraction = is_contraction(a);
    if (f.contraction) {
      f.equivalent_gemm_n = equivalent_gemm_n(g, node, a.cost.macs);
      f.compute_flops_per_second = ceilings.matmul_flops_at(options.compute_dtype, f.equivalent_gemm_n);
    } else {
      f.compute_flops_per_second = peak;
    }
    if (f.compute_flops_per_second > 0) f.compute_seconds = double(a.cost.flops) / f.compute_flops_per_second;
    const double bytes = double(a.cost.bytes());
    f.memory_seconds = bytes / ceilings.memory_bandwidth;
    if (measured) {
      f.op_cost = measured->op;
      f.kernel_seconds = class_bytes(g, node, bytes) * measured->seconds_per_byte;
      f.overhead_seconds = measured->fixed_seconds;
    } else {
      // The scratch pass (oneDNN reorders, im2col) runs before the kernel, not alongside it.
      f.scratch_seconds = double(kernel.scratch_traffic_bytes) / ceilings.memory_bandwidth;
      // The executor loads Constant outputs with the weights: no per-run op.
      f.overhead_seconds = node.op_type == "Constant" ? 0.0 : kernel.fixed_op_overheads * ceilings.op_overhead_seconds;
      // A Gemm or MatMul: the fixed cost the device measured for a small Gemm
      // (BLAS call, bias, output allocation), when it is larger.
      const OpCost* gemm = ceilings.op_cost("Gemm");
      if (gemm && is_gemm_or_matmul(node))
        f.overhead_seconds = std::max(f.overhead_seconds, gemm->fixed_seconds);
      // A Gemm or MatMul streams its B operand no faster than the device's
      // one-row product does (Gemm/thin, in the bytes of B): the bound of a
      // classifier at batch 1, below the compute and copy ceilings' times
      // once there are enough rows.
      if (thin && is_gemm_or_matmul(node) && node.inputs.size() >= 2 && node.inputs[1] >= 0) {
        f.op_cost = thin->op;
        f.kernel_seconds = double(tensor_bytes(g, node.inputs[1])) * thin->seconds_per_byte;
      }
    }
    f.fresh_bytes = fresh_bytes[i];
    f.fresh_seconds = double(f.fresh_bytes) * fresh_seconds_per_byte;
    const double roofline = std::max({f.compute_seconds, f.memory_seconds, f.kernel_seconds});
    f.forward_seconds = roofline + f.scratch_seconds + f.overhead_seconds + f.fresh_seconds;
    const double largest = std::max({roofline, f.scratch_seconds, f.overhead_seconds, f.fresh_seconds});
    f.bound = largest == f.overhead_seconds ? "overhead"
              : largest == f.scratch_seconds ? "scratch"
              : largest == f.fresh_seconds ? "fresh"
              : roofline == f.kernel_seconds && f.kernel_seconds > std::max(f.compute_seconds, f.memory_seconds)
                  ? "kernel"
                  : (f.compute_seconds >= f.memory_seconds ? "compute" : "memory");

    if (options.train) {
      bool any_input_grad = false;
      int gradient_products = 0;  // contractions: one product per operand that needs a gradient
      std::set<int> fresh_gradients;  // inputs whose gradient is a fresh mapping
      for (size_t k = 0; k < node.inputs.size(); ++k) {
        const int t = node.inputs[k];
        if (t < 0 || !requires_grad[size_t(t)]) continue;
        any_input_grad = true;
        if (k < 2) ++gradient_products;
        if (fresh_seconds_per_byte > 0 && !op_output_is_view(node) && tensor_bytes(g, t) > fresh_threshold)
          fresh_gradients.insert(t);
      }
      for (int t : fresh_gradients) f.backward_fresh_bytes += tensor_bytes(g, t);
      if (any_input_grad)
        for (int t : node.outputs)
          if (t >= 0 && dtype_is_floating(g.tensors[size_t(t)].dtype)) requires_grad[size_t(t)] = true;
      if (any_input_grad) {
        // Autograd's own cost per differentiated node (recording the graph in the
        // forward, scheduling it in backward), measured by `modelstat device` on a
        // chain of small nodes: the training cost per node beyond the forward and
        // backward dispatches.
        const double autograd =
            std::max(0.0, ceilings.train_node_overhead_seconds - 2.0 * ceilings.node_overhead_seconds);
        if (measured) {
          // The class's measured backward (autograd's share included; a
          // depthwise conv's with both gradients), never faster than reading
          // and writing the forward's bytes once more.
          f.backward_seconds =
              std::max(class_bytes(g, node, bytes) * measured->backward_seconds_per_byte, f.memory_seconds) +
              measured->backward_fixed_seconds;
        } else if (f.op_cost == "Gemm/thin" && f.bound == "kernel") {
          // A product bound by streaming its B operand: the one-row product's
          // measured backward (both gradients), in the bytes of B.
          f.backward_seconds = double(tensor_bytes(g, node.inputs[1])) * thin->backward_seconds_per_byte +
                               thin->backward_fixed_seconds;
        } else if (f.contraction) {
          // One product per operand that needs a gradient, each priced like the
          // forward product; where the device measured a dense contraction's
          // backward / forward ratio (both gradients), that ratio instead of 2.
          const OpCost* dense = ceilings.op_cost(dense_class(g, node));
          if (!dense && node.op_type == "Conv") dense = ceilings.op_cost("Conv");  // saved before Conv/1x1 existed
          const double per_product = dense && dense->backward_ratio > 0 ? dense->backward_ratio / 2.0 : 1.0;
          f.backward_seconds = std::max(1, gradient_products) * per_product * (f.forward_seconds - f.fresh_seconds) + autograd;
        } else {
          f.backward_seconds = f.forward_seconds - f.fresh_seconds + autograd;
        }
        f.backward_seconds += double(f.backward_fresh_bytes) * fresh_seconds_per_byte;
      }
    }
    r.latency.forward_seconds += f.forward_seconds;
    r.latency.backward_seconds += f.backward_seconds;
    r.nodes.push_back(std::move(f));
  }

  // Memory.
  MemoryForecast& mem = r.memory;
  mem.weights_bytes = analysis.totals.weight_bytes;
  for (size_t i = 0; i < workspace.size(); ++i)
    if (workspace[i] > mem.largest_workspace_bytes) {
      mem.largest_workspace_bytes = workspace[i];
      mem.largest_workspace_node = g.nodes[i].name;
    }
  bool lower_bound = false;
  Peak peak_at;
  if (options.train) {
    const OptimizerCost oc = optimizer_cost(options.optimizer);
    int64_t trainable_bytes = 0, trainable_tensors = 0, largest_tensor_bytes = 0;
    for (size_t t = 0; t < g.tensors.size(); ++t)
      if (trainable[t]) {
        mem.trainable_params += g.tensors[t].shape.element_count().value_or(0);
        const int64_t bytes = g.tensors[t].size_bytes().value_or(0);
        trainable_bytes += bytes;
        largest_tensor_bytes = std::max(largest_tensor_bytes, bytes);
        ++trainable_tensors;
        // Each of the optimizer's temporaries of a weight above the threshold is a fresh mapping, every step.
        if (fresh_seconds_per_byte > 0 && bytes > fresh_threshold)
          r.latency.optimizer_fresh_bytes += oc.temporaries * bytes;
      }
    mem.gradient_bytes = trainable_bytes;
    const int state_copies = options.optimizer == Optimizer::Adam ? 2 : options.optimizer == Optimizer::Momentum ? 1 : 0;
    mem.optimizer_state_bytes = state_copies * trainable_bytes;
    const TrainingMemory tm = training_peak(g, train_workspace, oc.temporaries * largest_tensor_bytes, &lower_bound);
    peak_at = tm.peak;
    mem.saved_activation_bytes = tm.saved_bytes;
    const double element_bytes = mem.trainable_params > 0 ? double(trainable_bytes) / double(mem.trainable_params) : 4.0;
    // The update streams its element accesses at the copy bandwidth, plus a
    // fixed cost per weight tensor; where `modelstat device` timed this
    // optimizer's update (on weights past the last-level cache), its measured
    // cost per element and per tensor instead.
    const OptimizerUpdateCost* measured = ceilings.optimizer_cost(optimizer_name(options.optimizer));
    if (measured && (measured->seconds_per_element > 0 || measured->per_tensor_seconds > 0))
      r.latency.optimizer_seconds = double(mem.trainable_params) * measured->seconds_per_element +
                                    double(trainable_tensors) * measured->per_tensor_seconds;
    else
      r.latency.optimizer_seconds =
          double(mem.trainable_params) * oc.element_accesses * element_bytes / ceilings.memory_bandwidth +
          double(trainable_tensors) * oc.ops_per_tensor * ceilings.op_overhead_seconds;
    r.latency.optimizer_seconds += double(r.latency.optimizer_fresh_bytes) * fresh_seconds_per_byte;
  } else {
    peak_at = inference_peak(g, workspace, &lower_bound);
  }
  mem.activation_peak_bytes = peak_at.activation_bytes;
  mem.workspace_bytes = peak_at.workspace_bytes;
  mem.gradient_bytes_at_peak = peak_at.gradient_bytes;
  mem.peak_phase = peak_at.phase == Phase::Forward ? "forward" : peak_at.phase == Phase::Backward ? "backward" : "optimizer";
  mem.peak_node = peak_at.node >= 0 ? g.nodes[size_t(peak_at.node)].name
                                    : std::string(peak_at.phase == Phase::Optimizer ? "(update)" : "(graph inputs)");
  mem.lower_bound = lower_bound;
  mem.total_bytes = mem.weights_bytes + mem.optimizer_state_bytes + mem.gradient_bytes_at_peak +
                    mem.activation_peak_bytes + mem.workspace_bytes;
  if (lower_bound) r.notices.push_back("some activation sizes are unknown: memory is a lower bound");

  r.latency.total_seconds = r.latency.forward_seconds + r.latency.backward_seconds + r.latency.optimizer_seconds;
  if (options.memory_budget_bytes) r.fits_memory = mem.total_bytes <= *options.memory_budget_bytes;
  if (options.latency_budget_seconds) r.meets_latency = r.latency.total_seconds <= *options.latency_budget_seconds;
  return r;
}

// -------------------------------------------------------------- batch search

namespace {

// Largest b in [1, limit] with ok(b), assuming ok is monotone (true up to
// some batch, false after): doubling, then binary search between the last
// good and the first bad batch. 0 when ok(1) is false.
int64_t largest_batch(const std::function<bool(int64_t)>& ok, int64_t limit) {
  if (!ok(1)) return 0;
  int64_t good = 1, bad = 0;
  for (int64_t b = 2;; b *= 2) {
    b = std::min(b, limit);
    if (b == good) return good;  // the limit fits
    if (!ok(b)) {
      bad = b;
      break;
    }
    good = b;
  }
  while (bad - good > 1) {
    const int64_t mid = good + (bad - good) / 2;
    (ok(mid) ? good : bad) = mid;
  }
  return good;
}

}  // namespace

FitReport fit_model(const AnalyzeAtBatch& analyze_at_batch, int64_t batch, const DeviceCeilings& ceilings,
                    const FitOptions& options) {
  FitReport report = forecast_fit(analyze_at_batch(batch), ceilings, options);
  report.batch = batch;
  BatchSearch& s = report.batch_search;
  if (!options.memory_budget_bytes && !options.latency_budget_seconds) {
    s.note = "no budget given";
    return report;
  }
  // Forecasts per batch, each analysed once and shared by both searches.
  struct Point {
    int64_t memory = 0;
    double seconds = 0;
    bool valid = false;
  };
  std::map<int64_t, Point> points;
  auto at = [&](int64_t b) -> const Point& {
    auto it = points.find(b);
    if (it != points.end()) return it->second;
    Point p;
    try {
      const FitReport f = forecast_fit(analyze_at_batch(b), ceilings, options);
      p = {f.memory.total_bytes, f.latency.total_seconds, true};
    } catch (const Error& e) {
      // A size that overflows 64 bits fits nothing; anything else is real.
      if (e.kind() != ErrorKind::Input) throw;
    }
    return points.emplace(b, p).first->second;
  };
  // The batch must be free: a model that fixes its leading dim analyses the
  // same at every batch, and searching it would only return the limit.
  const Point& one = at(1);
  const Point& two = at(2);
  if (one.valid && two.valid && one.memory == two.memory && one.seconds == two.seconds) {
    s.note = "the model fixes its batch dim (the forecast is the same at batch 1 and 2): export it with a symbolic "
             "batch dim to search";
    s.analyses = int(points.size());
    return report;
  }
  s.searched = true;
  s.limit = options.max_batch_limit;
  if (options.memory_budget_bytes)
    s.largest_fitting_memory = largest_batch(
        [&](int64_t b) {
          const Point& p = at(b);
          return p.valid && p.memory <= *options.memory_budget_bytes;
        },
        options.max_batch_limit);
  if (options.latency_budget_seconds)
    s.largest_meeting_latency = largest_batch(
        [&](int64_t b) {
          const Point& p = at(b);
          return p.valid && p.seconds <= *options.latency_budget_seconds;
        },
        options.max_batch_limit);
  s.analyses = int(points.size());
  return report;
}

}  // namespace modelstat

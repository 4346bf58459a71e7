// Direct loops for small fp32 Convs and recurrent steps (direct_kernels.hpp).
#include "profiler/ops/direct_kernels.hpp"
#include "profiler/ops/softmax.hpp"

#include <ATen/Parallel.h>
#include "profiler/torch_compat.hpp"
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace modelstat::profiler {

namespace {

// The build targets baseline x86-64 (SSE2); the loops below also get an AVX2
// clone, chosen at load by the CPU (GCC's function multiversioning), for 2x
// the lanes where the machine has them.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define MODELSTAT_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define MODELSTAT_VECTOR_CLONES
#endif

// y = x less the max of its row, rows of `cols` floats (the first pass of a softmax).
MODELSTAT_VECTOR_CLONES void subtract_row_max(const float* x, float* y, int64_t rows, int64_t cols) {
  if (cols == 2) {
    for (int64_t r = 0; r < rows; ++r) {
      const float top = std::max(x[2 * r], x[2 * r + 1]);
      y[2 * r] = x[2 * r] - top;
      y[2 * r + 1] = x[2 * r + 1] - top;
    }
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float* v = x + r * cols;
    float* out = y + r * cols;
    float top = v[0];
    for (int64_t i = 1; i < cols; ++i) top = std::max(top, v[i]);
    for (int64_t i = 0; i < cols; ++i) out[i] = v[i] - top;
  }
}

// Each row of `cols` floats divided by its sum (the last pass of a softmax).
MODELSTAT_VECTOR_CLONES void scale_rows_by_inverse_sum(float* y, int64_t rows, int64_t cols) {
  if (cols == 2) {  // the commonest short row (a two-class score): unrolled, vectorised across rows
    for (int64_t r = 0; r < rows; ++r) {
      const float inv = 1.f / (y[2 * r] + y[2 * r + 1]);
      y[2 * r] *= inv;
      y[2 * r + 1] *= inv;
    }
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    float* out = y + r * cols;
    float total = 0;
    for (int64_t i = 0; i < cols; ++i) total += out[i];
    const float inv = 1.f / total;
    for (int64_t i = 0; i < cols; ++i) out[i] *= inv;
  }
}

// a . b with sixteen partial sums, so that the compiler keeps several vectors
// in flight instead of one serial chain of adds (no -ffast-math needed).
MODELSTAT_VECTOR_CLONES float dot(const float* a, const float* b, int64_t n) {
  float acc[16] = {};
  int64_t k = 0;
  for (; k + 16 <= n; k += 16)
    for (int u = 0; u < 16; ++u) acc[u] += a[k + u] * b[k + u];
  for (int u = 0; u < 8; ++u) acc[u] += acc[u + 8];
  float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; k < n; ++k) s += a[k] * b[k];
  return s;
}

// y += s * x over n values (vectorised on n).
MODELSTAT_VECTOR_CLONES void axpy(float s, const float* x, float* y, int64_t n) {
  for (int64_t j = 0; j < n; ++j) y[j] += s * x[j];
}

float sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

// Rows [row0, row0 + rows) of x W^T + h R^T + Wb + Rb for one batch row.
void gate_rows(const RecurrentWeights& p, int64_t row0, int64_t rows, int64_t input, int64_t hidden, const float* x,
               const float* h, float* out) {
  for (int64_t j = row0; j < row0 + rows; ++j) {
    float v = dot(p.w + j * input, x, input) + dot(p.r + j * hidden, h, hidden);
    if (p.wb) v += p.wb[j];
    if (p.rb) v += p.rb[j];
    out[j] = v;
  }
}

// One spatial axis of the Conv loop: sizes and the window along it, and per
// kernel tap t the output positions [lo[t], hi[t]) whose input index
// o*stride + t*dilation - pad lies inside [0, in) (computed once: the loops
// would otherwise divide in their innermost levels).
struct Axis {
  int64_t in = 1, out = 1, k = 1, stride = 1, dilation = 1, pad = 0;
  std::vector<int64_t> lo, hi;
  void tabulate() {
    lo.resize(size_t(k));
    hi.resize(size_t(k));
    for (int64_t t = 0; t < k; ++t) {
      const int64_t off = t * dilation - pad;  // input index of output 0
      lo[size_t(t)] = off >= 0 ? 0 : (-off + stride - 1) / stride;
      hi[size_t(t)] = in - 1 - off < 0 ? 0 : std::min(out, (in - 1 - off) / stride + 1);
    }
  }
};

// The Conv's loops: for each output plane, each input channel of its group
// and each kernel tap, one weight times a row of input added to a row of
// output (contiguous when the stride is 1: vectorised).
MODELSTAT_VECTOR_CLONES void conv_loops(const float* xp, const float* wp, const float* bp, float* yp, const Axis* ax,
                                        int64_t n, int64_t c, int64_t o, int64_t cg, int64_t group) {
  const Axis &ad = ax[0], &ah = ax[1], &aw = ax[2];
  const int64_t in_plane = ad.in * ah.in * aw.in, out_plane = ad.out * ah.out * aw.out;
  const int64_t taps = ad.k * ah.k * aw.k, og = o / group;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t oc = 0; oc < o; ++oc) {
      float* yplane = yp + (b * o + oc) * out_plane;
      std::fill(yplane, yplane + out_plane, bp ? bp[oc] : 0.0f);
      const int64_t first_channel = (oc / og) * cg;
      for (int64_t ci = 0; ci < cg; ++ci) {
        const float* xplane = xp + (b * c + first_channel + ci) * in_plane;
        const float* wtaps = wp + (oc * cg + ci) * taps;
        for (int64_t kd = 0; kd < ad.k; ++kd) {
          const int64_t d_lo = ad.lo[size_t(kd)], d_hi = ad.hi[size_t(kd)];
          for (int64_t kh = 0; kh < ah.k; ++kh) {
            const int64_t h_lo = ah.lo[size_t(kh)], h_hi = ah.hi[size_t(kh)];
            for (int64_t kw = 0; kw < aw.k; ++kw) {
              const int64_t w_lo = aw.lo[size_t(kw)], w_hi = aw.hi[size_t(kw)];
              if (w_lo >= w_hi) continue;
              const float wv = wtaps[(kd * ah.k + kh) * aw.k + kw];
              const int64_t w_off = kw * aw.dilation - aw.pad;
              for (int64_t od = d_lo; od < d_hi; ++od) {
                const int64_t id = od * ad.stride + kd * ad.dilation - ad.pad;
                for (int64_t oh = h_lo; oh < h_hi; ++oh) {
                  const int64_t ih = oh * ah.stride + kh * ah.dilation - ah.pad;
                  float* yrow = yplane + (od * ah.out + oh) * aw.out;
                  const float* xrow = xplane + (id * ah.in + ih) * aw.in + w_off;
                  if (aw.stride == 1) {
                    for (int64_t ow = w_lo; ow < w_hi; ++ow) yrow[ow] += wv * xrow[ow];
                  } else {
                    for (int64_t ow = w_lo; ow < w_hi; ++ow) yrow[ow] += wv * xrow[ow * aw.stride];
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

// An ungrouped Conv with few output positions: each position's inputs
// gathered into one row of C x taps (zeros where the window reads padding),
// then every output value is one dot product of that row with a weight row
// (ONNX's O x C x taps layout: contiguous). The loops above would run rows of
// 1-4 outputs, below a vector's width.
void conv_by_positions(const float* xp, const float* wp, const float* bp, float* yp, const Axis* ax, int64_t n,
                       int64_t c, int64_t o) {
  const Axis &ad = ax[0], &ah = ax[1], &aw = ax[2];
  const int64_t in_plane = ad.in * ah.in * aw.in, out_plane = ad.out * ah.out * aw.out;
  const int64_t taps = ad.k * ah.k * aw.k, row = c * taps;
  std::vector<float> gathered(static_cast<size_t>(row));
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t od = 0; od < ad.out; ++od) {
      for (int64_t oh = 0; oh < ah.out; ++oh) {
        for (int64_t ow = 0; ow < aw.out; ++ow) {
          float* g = gathered.data();
          for (int64_t ci = 0; ci < c; ++ci) {
            const float* xplane = xp + (b * c + ci) * in_plane;
            for (int64_t kd = 0; kd < ad.k; ++kd) {
              const int64_t id = od * ad.stride + kd * ad.dilation - ad.pad;
              for (int64_t kh = 0; kh < ah.k; ++kh) {
                const int64_t ih = oh * ah.stride + kh * ah.dilation - ah.pad;
                for (int64_t kw = 0; kw < aw.k; ++kw) {
                  const int64_t iw = ow * aw.stride + kw * aw.dilation - aw.pad;
                  const bool inside = id >= 0 && id < ad.in && ih >= 0 && ih < ah.in && iw >= 0 && iw < aw.in;
                  *g++ = inside ? xplane[(id * ah.in + ih) * aw.in + iw] : 0.0f;
                }
              }
            }
          }
          const int64_t pos = (od * ah.out + oh) * aw.out + ow;
          for (int64_t oc = 0; oc < o; ++oc)
            yp[(b * o + oc) * out_plane + pos] = dot(wp + oc * row, gathered.data(), row) + (bp ? bp[oc] : 0.0f);
        }
      }
    }
  }
}

// y = x < 0 ? s * x : x over n values, each with its own slope s[i]
// (branch-free: min/max vectorise, where a branch on the sign would
// mispredict on half the values).
// y = x * a + b over n channels (a row of one pixel, channels-last).
MODELSTAT_VECTOR_CLONES void affine_channels(const float* x, const float* a, const float* b, float* y, int64_t n) {
  for (int64_t j = 0; j < n; ++j) y[j] = x[j] * a[j] + b[j];
}
MODELSTAT_VECTOR_CLONES void affine_channels_relu(const float* x, const float* a, const float* b, float* y, int64_t n) {
  for (int64_t j = 0; j < n; ++j) y[j] = std::max(x[j] * a[j] + b[j], 0.f);
}

// y = x * a + b over n values (a plane of one channel).
MODELSTAT_VECTOR_CLONES void affine_plane(const float* x, float a, float b, float* y, int64_t n) {
  for (int64_t j = 0; j < n; ++j) y[j] = x[j] * a + b;
}
MODELSTAT_VECTOR_CLONES void affine_plane_relu(const float* x, float a, float b, float* y, int64_t n) {
  for (int64_t j = 0; j < n; ++j) y[j] = std::max(x[j] * a + b, 0.f);
}

MODELSTAT_VECTOR_CLONES void prelu_slopes(const float* x, const float* s, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::max(x[i], 0.0f) + s[i] * std::min(x[i], 0.0f);
}

// The same with one slope for all n values.
MODELSTAT_VECTOR_CLONES void prelu_slope(const float* x, float s, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::max(x[i], 0.0f) + s * std::min(x[i], 0.0f);
}

}  // namespace

bool direct_kernels_allowed(std::initializer_list<const at::Tensor*> inputs) {
  if (!at::GradMode::is_enabled()) return true;
  for (const at::Tensor* t : inputs)
    if (t->defined() && t->requires_grad()) return false;
  return true;
}

std::optional<at::Tensor> direct_conv(const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias,
                                      const Window& window, int64_t group) {
  if (!direct_kernels_allowed({&x, &w, &bias})) return std::nullopt;
  const int64_t rank = x.dim() - 2;
  if (rank < 1 || rank > 3 || w.dim() != x.dim() || group < 1) return std::nullopt;
  if (x.scalar_type() != at::kFloat || w.scalar_type() != at::kFloat || !x.device().is_cpu() || !w.device().is_cpu())
    return std::nullopt;
  if (bias.defined() && (bias.scalar_type() != at::kFloat || !bias.device().is_cpu() || bias.numel() != w.size(0)))
    return std::nullopt;
  if (torch_compat::cpu_autocast_enabled()) return std::nullopt;  // a bf16 training step: ATen's autocast path
  if (window.spatial_rank() != rank || window.strides.size() != size_t(rank) ||
      window.dilations.size() != size_t(rank) || window.pads_begin.size() != size_t(rank) ||
      window.pads_end.size() != size_t(rank))
    return std::nullopt;
  const int64_t n = x.size(0), c = x.size(1), o = w.size(0), cg = w.size(1);
  if (cg * group != c || o % group != 0 || n < 1 || o < 1) return std::nullopt;
  // Spatial axes, padded in front to three (a 1-D Conv is D = H = 1).
  Axis ax[3];
  int64_t macs = n * o * cg;
  for (int64_t i = 0; i < rank; ++i) {
    Axis& a = ax[3 - rank + i];
    a.in = x.size(2 + i);
    a.k = w.size(2 + i);
    a.stride = window.strides[size_t(i)];
    a.dilation = window.dilations[size_t(i)];
    a.pad = window.pads_begin[size_t(i)];
    const int64_t pad_end = window.pads_end[size_t(i)];
    if (window.kernel[size_t(i)] != a.k || a.stride < 1 || a.dilation < 1 || a.pad < 0 || pad_end < 0)
      return std::nullopt;
    const int64_t span = (a.k - 1) * a.dilation + 1;
    if (a.in + a.pad + pad_end < span) return std::nullopt;
    a.out = (a.in + a.pad + pad_end - span) / a.stride + 1;
    macs *= a.out * a.k;
    if (macs > std::max(kDirectConvMaxMacs, kDirectGemmMaxMacs)) return std::nullopt;
  }
  std::vector<int64_t> out_dims{n, o};
  for (int64_t i = 0; i < rank; ++i) out_dims.push_back(ax[3 - rank + i].out);
  const int64_t positions = n * ax[0].out * ax[1].out * ax[2].out;
  if (group == 1 && positions <= kDirectConvMaxPositions && macs <= kDirectGemmMaxMacs) {
    const at::Tensor xc = x.contiguous(), wc = w.contiguous();
    const at::Tensor bc = bias.defined() ? bias.contiguous() : at::Tensor();
    at::Tensor y = at::empty(out_dims, x.options().memory_format(at::MemoryFormat::Contiguous));
    conv_by_positions(xc.data_ptr<float>(), wc.data_ptr<float>(), bc.defined() ? bc.data_ptr<float>() : nullptr,
                      y.data_ptr<float>(), ax, n, c, o);
    return y;
  }
  if (macs > kDirectConvMaxMacs) return std::nullopt;
  // Each (output channel, input channel, tap, output row) is one pass of the
  // innermost loop, which pays ~15 ns of bookkeeping around its arithmetic.
  const int64_t rows = n * o * cg * ax[0].k * ax[1].k * ax[2].k * ax[0].out * ax[1].out;
  if (rows > (group > 1 ? kDirectConvMaxRowsGrouped : kDirectConvMaxRows)) return std::nullopt;
  for (Axis& a : ax) a.tabulate();
  const at::Tensor xc = x.contiguous(), wc = w.contiguous();
  const at::Tensor bc = bias.defined() ? bias.contiguous() : at::Tensor();
  at::Tensor y = at::empty(out_dims, x.options().memory_format(at::MemoryFormat::Contiguous));
  conv_loops(xc.data_ptr<float>(), wc.data_ptr<float>(), bc.defined() ? bc.data_ptr<float>() : nullptr,
             y.data_ptr<float>(), ax, n, c, o, cg, group);
  return y;
}

std::optional<at::Tensor> direct_gemm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c, double alpha,
                                      double beta) {
  if (!direct_kernels_allowed({&a, &b, &c}) || torch_compat::cpu_autocast_enabled()) return std::nullopt;
  if (a.dim() != 2 || b.dim() != 2 || a.scalar_type() != at::kFloat || b.scalar_type() != at::kFloat ||
      !a.device().is_cpu() || !b.device().is_cpu())
    return std::nullopt;
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  if (b.size(0) != k || m < 1 || m > kDirectGemmMaxRows || k < 1 || n < 1 || m * k * n > kDirectGemmMaxMacs)
    return std::nullopt;
  // b's rows of N (contiguous [K, N]) or its columns of K (transposed [N, K]).
  const bool columns = b.stride(0) == 1 && b.stride(1) == k;
  if (!columns && !b.is_contiguous()) return std::nullopt;
  // c: one value, one per column, or one per element.
  int64_t c_row_stride = 0, c_col_stride = 0;
  if (c.defined()) {
    if (c.scalar_type() != at::kFloat || !c.device().is_cpu() || c.dim() > 2) return std::nullopt;
    if (c.numel() == n * m && c.dim() == 2 && c.size(0) == m) {
      c_row_stride = n;
      c_col_stride = 1;
    } else if (c.numel() == n && (c.dim() == 1 || c.size(0) == 1)) {
      c_col_stride = 1;
    } else if (c.numel() != 1) {
      return std::nullopt;
    }
  }
  const at::Tensor ac = a.contiguous();
  const at::Tensor cc = c.defined() ? c.contiguous() : at::Tensor();
  at::Tensor y = at::empty({m, n}, a.options().memory_format(at::MemoryFormat::Contiguous));
  const float* ap = ac.data_ptr<float>();
  const float* bp = b.data_ptr<float>();
  const float* cp = cc.defined() ? cc.data_ptr<float>() : nullptr;
  float* yp = y.data_ptr<float>();
  const float fa = float(alpha), fb = float(beta);
  for (int64_t i = 0; i < m; ++i) {
    float* yrow = yp + i * n;
    const float* arow = ap + i * k;
    if (columns) {
      for (int64_t j = 0; j < n; ++j) yrow[j] = dot(arow, bp + j * k, k);
    } else {
      std::fill(yrow, yrow + n, 0.0f);
      for (int64_t t = 0; t < k; ++t) axpy(arow[t], bp + t * n, yrow, n);
    }
    for (int64_t j = 0; j < n; ++j) {
      float v = fa == 1.0f ? yrow[j] : fa * yrow[j];
      if (cp && fb != 0.0f) v += fb * cp[i * c_row_stride + j * c_col_stride];
      yrow[j] = v;
    }
  }
  return y;
}

std::optional<at::Tensor> direct_reduce(const at::Tensor& x, const std::vector<int64_t>& dims, bool keep,
                                        DirectReduce kind) {
  if (!direct_kernels_allowed({&x})) return std::nullopt;
  const int64_t rank = x.dim(), numel = x.numel();
  if (x.scalar_type() != at::kFloat || !x.device().is_cpu() || rank == 0 || dims.empty() || numel < 1 ||
      numel > kDirectReduceMaxElements)
    return std::nullopt;
  std::vector<bool> reduced(size_t(rank), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) return std::nullopt;
    reduced[size_t(d)] = true;
  }
  // Output strides per input dim (0 along a reduced dim), output dims.
  std::vector<int64_t> out_stride(size_t(rank), 0), out_dims;
  int64_t out_numel = 1, count = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (reduced[size_t(d)]) {
      count *= x.size(d);
    } else {
      out_stride[size_t(d)] = out_numel;
      out_numel *= x.size(d);
    }
  }
  for (int64_t d = 0; d < rank; ++d)
    if (!reduced[size_t(d)]) out_dims.push_back(x.size(d));
    else if (keep) out_dims.push_back(1);
  const bool extreme = kind == DirectReduce::Max || kind == DirectReduce::Min;
  const bool is_max = kind == DirectReduce::Max;
  std::vector<double> acc(size_t(out_numel), 0.0);
  std::vector<bool> seen(size_t(out_numel), false);
  const at::Tensor xc = x.contiguous();
  const float* xp = xc.data_ptr<float>();
  // Rows of the last dim, the multi-index of the dims before it carried by hand.
  const int64_t inner = x.size(rank - 1), inner_stride = out_stride[size_t(rank - 1)];
  std::vector<int64_t> idx(size_t(rank), 0);
  int64_t o = 0;
  for (int64_t row = 0; row < numel / inner; ++row) {
    const float* v = xp + row * inner;
    for (int64_t j = 0; j < inner; ++j) {
      double& a = acc[size_t(o + j * inner_stride)];
      const size_t at_o = size_t(o + j * inner_stride);
      if (!extreme) {
        a += double(v[j]);
      } else if (!seen[at_o] || std::isnan(v[j]) || (!std::isnan(a) && (is_max ? v[j] > a : v[j] < a))) {
        a = v[j];  // NaN propagates, as ATen's amax/amin do
        seen[at_o] = true;
      }
    }
    for (int64_t d = rank - 2; d >= 0; --d) {  // advance the row's index
      o += out_stride[size_t(d)];
      if (++idx[size_t(d)] < x.size(d)) break;
      o -= x.size(d) * out_stride[size_t(d)];
      idx[size_t(d)] = 0;
    }
  }
  at::Tensor y = at::empty(out_dims, x.options());
  float* yp = y.data_ptr<float>();
  for (int64_t i = 0; i < out_numel; ++i)
    yp[i] = float(kind == DirectReduce::Mean ? acc[size_t(i)] / double(count) : acc[size_t(i)]);
  return y;
}

void lstm_step_direct(const RecurrentWeights& p, int64_t batch, int64_t input, int64_t hidden, const float* x,
                      int64_t x_stride, const float* h, int64_t h_stride, const float* c, int64_t c_stride,
                      float* h_out, float* c_out, float* gates) {
  for (int64_t b = 0; b < batch; ++b) {
    gate_rows(p, 0, 4 * hidden, input, hidden, x + b * x_stride, h + b * h_stride, gates);
    const float* cb = c + b * c_stride;
    for (int64_t k = 0; k < hidden; ++k) {
      const float i = sigmoid(gates[k]), og = sigmoid(gates[hidden + k]), f = sigmoid(gates[2 * hidden + k]);
      const float cell = std::tanh(gates[3 * hidden + k]);
      const float cn = f * cb[k] + i * cell;
      c_out[b * hidden + k] = cn;
      h_out[b * hidden + k] = og * std::tanh(cn);
    }
  }
}

void gru_step_direct(const RecurrentWeights& p, bool linear_before_reset, int64_t batch, int64_t input,
                     int64_t hidden, const float* x, int64_t x_stride, const float* h, int64_t h_stride,
                     float* h_out, float* gates) {
  float* zr = gates;               // z, r: 2H
  float* rh = gates + 2 * hidden;  // r*h (linear_before_reset = 0), H
  float* cand = gates + 3 * hidden;
  for (int64_t b = 0; b < batch; ++b) {
    const float* xb = x + b * x_stride;
    const float* hb = h + b * h_stride;
    gate_rows(p, 0, 2 * hidden, input, hidden, xb, hb, zr);
    for (int64_t k = 0; k < 2 * hidden; ++k) zr[k] = sigmoid(zr[k]);
    for (int64_t k = 0; k < hidden; ++k) {
      const int64_t j = 2 * hidden + k;  // the h gate's row
      const float xw = dot(p.w + j * input, xb, input) + (p.wb ? p.wb[j] : 0.0f);
      if (linear_before_reset) {
        const float hr = dot(p.r + j * hidden, hb, hidden) + (p.rb ? p.rb[j] : 0.0f);
        cand[k] = std::tanh(xw + zr[hidden + k] * hr);
      } else {
        cand[k] = xw;  // (r*h) Rh^T added below, once r*h is complete
      }
    }
    if (!linear_before_reset) {
      for (int64_t k = 0; k < hidden; ++k) rh[k] = zr[hidden + k] * hb[k];
      for (int64_t k = 0; k < hidden; ++k) {
        const int64_t j = 2 * hidden + k;
        cand[k] = std::tanh(cand[k] + dot(p.r + j * hidden, rh, hidden) + (p.rb ? p.rb[j] : 0.0f));
      }
    }
    for (int64_t k = 0; k < hidden; ++k) h_out[b * hidden + k] = (1.0f - zr[k]) * cand[k] + zr[k] * hb[k];
  }
}

}  // namespace modelstat::profiler

namespace modelstat::profiler {

std::optional<std::array<at::Tensor, 3>> direct_layer_norm(const at::Tensor& x, int64_t size, const at::Tensor& scale,
                                                           const at::Tensor& bias, double eps) {
  if (!direct_kernels_allowed({&x, &scale, &bias}) || torch_compat::cpu_autocast_enabled()) return std::nullopt;
  const int64_t numel = x.numel();
  if (x.scalar_type() != at::kFloat || !x.device().is_cpu() || size < 1 || numel < 1 ||
      numel > kDirectReduceMaxElements || numel % size != 0)
    return std::nullopt;
  for (const at::Tensor* t : {&scale, &bias})
    if (t->defined() && (t->scalar_type() != at::kFloat || !t->device().is_cpu() || t->numel() != size))
      return std::nullopt;
  const int64_t rows = numel / size;
  const at::Tensor xc = x.contiguous();
  const at::Tensor sc = scale.defined() ? scale.contiguous() : at::Tensor();
  const at::Tensor bc = bias.defined() ? bias.contiguous() : at::Tensor();
  at::Tensor y = at::empty(x.sizes(), x.options().memory_format(at::MemoryFormat::Contiguous));
  at::Tensor mean = at::empty({rows}, x.options()), rstd = at::empty({rows}, x.options());
  const float* xp = xc.data_ptr<float>();
  const float* sp = sc.defined() ? sc.data_ptr<float>() : nullptr;
  const float* bp = bc.defined() ? bc.data_ptr<float>() : nullptr;
  float* yp = y.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    const float* v = xp + r * size;
    double total = 0, squares = 0;
    for (int64_t i = 0; i < size; ++i) total += v[i];
    const double mu = total / double(size);
    for (int64_t i = 0; i < size; ++i) squares += (v[i] - mu) * (v[i] - mu);
    const double inv = 1.0 / std::sqrt(squares / double(size) + eps);
    mean.data_ptr<float>()[r] = float(mu);
    rstd.data_ptr<float>()[r] = float(inv);
    float* out = yp + r * size;
    for (int64_t i = 0; i < size; ++i) {
      const double z = (v[i] - mu) * inv;
      out[i] = float(z * (sp ? sp[i] : 1.0f) + (bp ? bp[i] : 0.0f));
    }
  }
  return std::array<at::Tensor, 3>{y, mean, rstd};
}


std::optional<at::Tensor> direct_softmax_last_axis(const at::Tensor& x, bool log) {
  if (!direct_kernels_allowed({&x}) || torch_compat::cpu_autocast_enabled()) return std::nullopt;
  if (x.scalar_type() != at::kFloat || !x.device().is_cpu() || x.dim() < 1 || x.numel() < 1) return std::nullopt;
  const int64_t cols = x.size(-1);
  if (cols > kDirectSoftmaxMaxAxis) return std::nullopt;
  const int64_t rows = x.numel() / cols;
  const at::Tensor xc = x.contiguous();
  at::Tensor y = at::empty(x.sizes(), x.options().memory_format(at::MemoryFormat::Contiguous));
  const float* xp = xc.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  // Three passes: each row less its max; the exps of the whole buffer at
  // once, vectorised across rows (a row of 2 is a quarter of a vector:
  // Ultra-Light-Fast's 4420 rows of 2 took 90 us on one exp at a time); the
  // sums and the scale.
  subtract_row_max(xp, yp, rows, cols);
  exp_inplace(yp, rows * cols);
  // (Sums in float: at most kDirectSoftmaxMaxAxis terms, each in (0, 1].)
  if (log) {
    for (int64_t r = 0; r < rows; ++r) {
      const float* v = xp + r * cols;
      float* out = yp + r * cols;
      float total = 0, top = v[0];
      for (int64_t i = 0; i < cols; ++i) total += out[i];
      for (int64_t i = 1; i < cols; ++i) top = std::max(top, v[i]);
      const float shift = top + std::log(total);
      for (int64_t i = 0; i < cols; ++i) out[i] = v[i] - shift;
    }
    return y;
  }
  scale_rows_by_inverse_sum(yp, rows, cols);
  return y;
}

std::optional<at::Tensor> direct_prelu(const at::Tensor& x, const at::Tensor& slope) {
  if (!direct_kernels_allowed({&x, &slope}) || torch_compat::cpu_autocast_enabled()) return std::nullopt;
  if (x.scalar_type() != at::kFloat || slope.scalar_type() != at::kFloat || !x.device().is_cpu() ||
      !slope.device().is_cpu() || x.dim() < 2 || x.numel() < 1)
    return std::nullopt;
  const int64_t n = x.size(0), c = x.size(1), plane = x.numel() / (n * c);
  // One slope, or one per channel: [C, 1...] or [1, C, 1...], no longer than X's rank.
  bool per_channel = false;
  if (slope.numel() != 1) {
    if (slope.numel() != c || slope.dim() > x.dim() || slope.dim() < x.dim() - 1) return std::nullopt;
    const int64_t lead = slope.dim() == x.dim() ? 1 : 0;  // slope's dim of the channels
    for (int64_t d = 0; d < slope.dim(); ++d)
      if (slope.size(d) != (d == lead ? c : 1)) return std::nullopt;
    per_channel = c > 1;
  }
  const bool channels_last = x.dim() == 4 && !x.is_contiguous() && x.is_contiguous(at::MemoryFormat::ChannelsLast);
  if (!channels_last && !x.is_contiguous()) return std::nullopt;
  const at::Tensor sc = slope.contiguous();
  at::Tensor y = at::empty_like(x, channels_last ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous);
  const float* xp = x.data_ptr<float>();
  const float* sp = sc.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  if (channels_last && per_channel) {  // rows of C channels, one per pixel
    at::parallel_for(0, n * plane, std::max<int64_t>(1, 32768 / c), [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) prelu_slopes(xp + p * c, sp, yp + p * c, c);
    });
  } else if (per_channel) {  // planes of one channel each
    at::parallel_for(0, n * c, std::max<int64_t>(1, 32768 / plane), [&](int64_t begin, int64_t end) {
      for (int64_t q = begin; q < end; ++q) prelu_slope(xp + q * plane, sp[q % c], yp + q * plane, plane);
    });
  } else {
    at::parallel_for(0, x.numel(), 32768, [&](int64_t begin, int64_t end) {
      prelu_slope(xp + begin, sp[0], yp + begin, end - begin);
    });
  }
  return y;
}

std::optional<at::Tensor> direct_batch_norm(const at::Tensor& x, const at::Tensor& scale, const at::Tensor& bias,
                                            const at::Tensor& mean, const at::Tensor& var, double eps,
                                            bool relu) {
  if (!direct_kernels_allowed({&x, &scale, &bias, &mean, &var}) || torch_compat::cpu_autocast_enabled())
    return std::nullopt;
  if (x.scalar_type() != at::kFloat || !x.device().is_cpu() || x.dim() < 2 || x.numel() < 1) return std::nullopt;
  const int64_t n = x.size(0), c = x.size(1), plane = x.numel() / (n * c);
  for (const at::Tensor* t : {&scale, &bias, &mean, &var})
    if (!t->defined() || t->scalar_type() != at::kFloat || !t->device().is_cpu() || t->numel() != c)
      return std::nullopt;
  const bool channels_last = x.dim() == 4 && !x.is_contiguous() && x.is_contiguous(at::MemoryFormat::ChannelsLast);
  if (!channels_last && !x.is_contiguous()) return std::nullopt;
  std::vector<float> a(static_cast<size_t>(c)), b(static_cast<size_t>(c));
  {
    const at::Tensor s = scale.contiguous(), bi = bias.contiguous(), m = mean.contiguous(), v = var.contiguous();
    const float *sp = s.data_ptr<float>(), *bp = bi.data_ptr<float>(), *mp = m.data_ptr<float>(), *vp = v.data_ptr<float>();
    for (int64_t k = 0; k < c; ++k) {
      const double ak = double(sp[k]) / std::sqrt(double(vp[k]) + eps);
      a[size_t(k)] = float(ak);
      b[size_t(k)] = float(double(bp[k]) - double(mp[k]) * ak);
    }
  }
  at::Tensor y = at::empty_like(x, channels_last ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous);
  const float* xp = x.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  if (channels_last) {  // rows of C channels, one per pixel
    at::parallel_for(0, n * plane, std::max<int64_t>(1, 32768 / c), [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p)
        (relu ? affine_channels_relu : affine_channels)(xp + p * c, a.data(), b.data(), yp + p * c, c);
    });
  } else {  // planes of one channel each
    at::parallel_for(0, n * c, std::max<int64_t>(1, 32768 / plane), [&](int64_t begin, int64_t end) {
      for (int64_t q = begin; q < end; ++q)
        (relu ? affine_plane_relu : affine_plane)(xp + q * plane, a[size_t(q % c)], b[size_t(q % c)], yp + q * plane,
                                                  plane);
    });
  }
  return y;
}

}  // namespace modelstat::profiler

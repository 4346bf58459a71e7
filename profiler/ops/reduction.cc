// Reduction executors: Reduce* (axes as attribute, or as input from opset 13
// for ReduceSum and 18 for the others), ArgMax/ArgMin, CumSum, TopK, Unique
// and the two loss ops.
#include <ATen/core/Reduction.h>

#include <limits>
#include <numeric>
#include <string>

#include "profiler/ops/spatial_mean.hpp"
#include "profiler/ops/direct_kernels.hpp"
#include "profiler/ops/exec_helpers.hpp"

namespace modelstat::profiler {
namespace {

enum class Reduce { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare };

at::Tensor sum_keep_type(const at::Tensor& x, at::IntArrayRef dims, bool keep) {
  return at::sum(x, dims, keep, x.scalar_type());
}

// A float computation on x's values, cast back to x's type (integer inputs).
template <typename F>
at::Tensor in_float(const at::Tensor& x, F f) {
  if (at::isFloatingType(x.scalar_type())) return f(x);
  return f(x.to(at::kDouble)).to(x.scalar_type());
}

template <Reduce K>
at::Tensor reduce(const at::Tensor& x, at::IntArrayRef dims, bool keep) {
  switch (K) {
    case Reduce::Sum: return sum_keep_type(x, dims, keep);
    case Reduce::Mean: {
      if (at::isFloatingType(x.scalar_type())) return at::mean(x, dims, keep);
      int64_t count = 1;
      for (int64_t d : dims) count *= x.size(d);
      return at::div(sum_keep_type(x, dims, keep), count, "trunc").to(x.scalar_type());
    }
    case Reduce::Max: return at::amax(x, dims, keep);
    case Reduce::Min: return at::amin(x, dims, keep);
    case Reduce::Prod: {
      at::Tensor y = x;
      for (int64_t d : dims) y = at::prod(y, d, /*keepdim=*/true, x.scalar_type());
      if (!keep) {
        std::vector<int64_t> shape;
        for (int64_t d = 0; d < x.dim(); ++d)
          if (std::find(dims.begin(), dims.end(), d) == dims.end()) shape.push_back(x.size(d));
        y = y.reshape(shape);
      }
      return y;
    }
    case Reduce::L1: return sum_keep_type(at::abs(x), dims, keep);
    case Reduce::L2: return in_float(x, [&](const at::Tensor& v) { return at::sqrt(at::sum(v * v, dims, keep)); });
    case Reduce::LogSum: return in_float(x, [&](const at::Tensor& v) { return at::log(at::sum(v, dims, keep)); });
    case Reduce::LogSumExp: return in_float(x, [&](const at::Tensor& v) { return at::logsumexp(v, dims, keep); });
    case Reduce::SumSquare: return sum_keep_type(x * x, dims, keep);
  }
  return x;
}

// With noop_with_empty_axes and no axes: the elementwise part of the reduction only.
template <Reduce K>
at::Tensor reduce_nothing(const at::Tensor& x) {
  switch (K) {
    case Reduce::L1:
    case Reduce::L2: return at::abs(x);
    case Reduce::LogSum: return in_float(x, [](const at::Tensor& v) { return at::log(v); });
    case Reduce::SumSquare: return x * x;
    default: return x;
  }
}

template <Reduce K>
void exec_reduce(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const int64_t input_since = K == Reduce::Sum ? 13 : 18;
  const auto axes = ints_attr_or_input(ctx, "axes", 1, input_since);
  const bool keep = ctx.node().attr_int("keepdims", 1) != 0;
  std::vector<int64_t> dims;
  if (!axes || axes->empty()) {
    if (ctx.opset() >= input_since && ctx.node().attr_int("noop_with_empty_axes", 0) != 0) {
      ctx.outputs = {reduce_nothing<K>(x)};
      return;
    }
    dims.resize(size_t(x.dim()));
    std::iota(dims.begin(), dims.end(), 0);
  } else {
    dims = normalize_axes(ctx, *axes, x.dim());
  }
  if (x.dim() == 0) {
    ctx.outputs = {reduce_nothing<K>(x)};
    return;
  }
  // The mean over every spatial axis: GlobalAveragePool's pass (spatial_mean.hpp;
  // mnasnet1_0's 1280 x 7 x 7 took 106 us on ATen's mean, 26 in ONNX Runtime).
  if constexpr (K == Reduce::Mean) {
    bool spatial = x.dim() >= 3 && dims.size() == size_t(x.dim() - 2);
    for (size_t i = 0; spatial && i < dims.size(); ++i) spatial = dims[i] == int64_t(i) + 2;
    if (spatial && spatial_mean_applies(x)) {
      const at::Tensor y = spatial_mean(x);
      ctx.outputs = {keep ? y : y.reshape({x.size(0), x.size(1)})};
      return;
    }
  }
  // A small fp32 Sum, Mean, Max or Min: a direct loop (direct_kernels.hpp).
  constexpr bool direct = K == Reduce::Sum || K == Reduce::Mean || K == Reduce::Max || K == Reduce::Min;
  if constexpr (direct) {
    constexpr DirectReduce kind = K == Reduce::Sum    ? DirectReduce::Sum
                                  : K == Reduce::Mean ? DirectReduce::Mean
                                  : K == Reduce::Max  ? DirectReduce::Max
                                                      : DirectReduce::Min;
    if (std::optional<at::Tensor> y = direct_reduce(x, dims, keep, kind)) {
      ctx.outputs = {*y};
      return;
    }
  }
  ctx.outputs = {reduce<K>(x, dims, keep).to(x.scalar_type())};
}

// ArgMax / ArgMin: the first extreme index, or the last with select_last_index.
template <bool IsMax>
void exec_arg(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const int64_t axis = normalize_axis(ctx, ctx.node().attr_int("axis", 0), x.dim());
  const bool keep = ctx.node().attr_int("keepdims", 1) != 0;
  const bool last = ctx.node().attr_int("select_last_index", 0) != 0;
  const at::Tensor in = last ? x.flip({axis}) : x;
  at::Tensor idx = IsMax ? at::argmax(in, axis, keep) : at::argmin(in, axis, keep);
  if (last) idx = (x.size(axis) - 1) - idx;
  ctx.outputs = {idx};
}

// CumSum: axis is input 1; exclusive shifts by one; reverse runs from the end.
void exec_cumsum(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const int64_t axis = normalize_axis(ctx, int64_t(ctx.input_scalar(1)), x.dim());
  const bool exclusive = ctx.node().attr_int("exclusive", 0) != 0;
  const bool reverse = ctx.node().attr_int("reverse", 0) != 0;
  const at::Tensor in = reverse ? x.flip({axis}) : x;
  at::Tensor y = at::cumsum(in, axis, x.scalar_type());
  const int64_t n = x.size(axis);
  if (exclusive && n > 0)
    y = at::cat({at::zeros_like(y.narrow(axis, 0, 1)), y.narrow(axis, 0, n - 1)}, axis);
  ctx.outputs = {reverse ? y.flip({axis}) : y};
}

// TopK: k as attribute before opset 10, as input from 10. at::topk selects;
// equal values among the selected are then ordered by index, as ONNX asks
// (ties straddling the k-th place are resolved by at::topk, not by index).
void exec_topk(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const int64_t axis = normalize_axis(ctx, ctx.node().attr_int("axis", -1), x.dim());
  int64_t k = 0;
  if (ctx.opset() < 10) {
    if (!has_attr(ctx, "k")) fail_input(ctx, "TopK needs the 'k' attribute");
    k = ctx.node().attr_int("k", 0);
  } else {
    const auto ks = ctx.input_ints(1);
    if (ks.size() != 1) fail_input(ctx, "K must hold one value");
    k = ks[0];
  }
  if (k < 0 || k > x.size(axis)) fail_input(ctx, "k " + std::to_string(k) + " out of range");
  const bool largest = ctx.node().attr_int("largest", 1) != 0;
  const bool sorted = ctx.node().attr_int("sorted", 1) != 0;
  auto [values, indices] = at::topk(x, k, axis, largest, sorted);
  if (sorted && k > 1) {
    // Stable sort by index, then stable sort by value: ties end in index order.
    const at::Tensor by_index = std::get<1>(at::sort(indices, /*stable=*/true, axis, false));
    values = values.gather(axis, by_index);
    indices = indices.gather(axis, by_index);
    const at::Tensor by_value = std::get<1>(at::sort(values, /*stable=*/true, axis, largest));
    values = values.gather(axis, by_value);
    indices = indices.gather(axis, by_value);
  }
  ctx.outputs = {values, indices};
}

// Unique: outputs Y, indices (first occurrence), inverse_indices, counts.
// sorted=0 orders Y by first occurrence.
void exec_unique(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const bool sorted = ctx.node().attr_int("sorted", 1) != 0;
  const bool has_axis = has_attr(ctx, "axis");
  int64_t axis = 0;
  at::Tensor y, inverse, counts;
  if (has_axis) {
    axis = normalize_axis(ctx, ctx.node().attr_int("axis", 0), x.dim());
    std::tie(y, inverse, counts) = at::unique_dim(x, axis, true, true, true);
  } else {
    std::tie(y, inverse, counts) = at::_unique2(x.flatten(), true, true, true);
  }
  inverse = inverse.flatten();
  const int64_t u = y.size(axis);
  const auto long_opts = x.options().dtype(at::kLong);
  // First occurrence of each value: the first position of its group when the
  // positions are stably sorted by inverse index.
  const at::Tensor by_group = std::get<1>(at::sort(inverse, /*stable=*/true, 0, false));
  at::Tensor first = by_group.index_select(0, at::cumsum(counts, 0) - counts);
  if (!sorted) {
    const at::Tensor order = std::get<1>(at::sort(first, /*stable=*/true, 0, false));
    y = y.index_select(axis, order);
    counts = counts.index_select(0, order);
    first = first.index_select(0, order);
    at::Tensor rank = at::empty({u}, long_opts);
    rank.index_put_({order}, at::arange(u, long_opts));
    inverse = rank.index_select(0, inverse);
  }
  ctx.outputs = {y, first, inverse, counts};
}

int64_t loss_reduction(const ExecContext& ctx) {
  const std::string r = ctx.node().attr_string("reduction", "mean");
  if (r == "mean") return at::Reduction::Mean;
  if (r == "sum") return at::Reduction::Sum;
  if (r == "none") return at::Reduction::None;
  fail_input(ctx, "unsupported reduction '" + r + "'");
}

at::Tensor nll(const ExecContext& ctx, const at::Tensor& log_prob) {
  const at::Tensor target = need_input(ctx, 1).to(at::kLong);
  c10::optional<at::Tensor> weight;
  if (ctx.has_input(2)) weight = ctx.input(2).to(log_prob.scalar_type());
  const int64_t ignore = ctx.node().attr_int("ignore_index", std::numeric_limits<int64_t>::min());
  return at::nll_loss_nd(log_prob, target, weight, loss_reduction(ctx), ignore);
}

void exec_nll_loss(ExecContext& ctx) { ctx.outputs = {nll(ctx, need_input(ctx, 0))}; }

void exec_softmax_cross_entropy(ExecContext& ctx) {
  const at::Tensor log_prob = at::log_softmax(need_input(ctx, 0), 1);
  ctx.outputs = {nll(ctx, log_prob), log_prob};
}

}  // namespace

void add_reduction_executors(std::vector<ExecRule>& rules) {
  add_executor(rules, "ReduceSum", exec_reduce<Reduce::Sum>);
  add_executor(rules, "ReduceMean", exec_reduce<Reduce::Mean>);
  add_executor(rules, "ReduceMax", exec_reduce<Reduce::Max>);
  add_executor(rules, "ReduceMin", exec_reduce<Reduce::Min>);
  add_executor(rules, "ReduceProd", exec_reduce<Reduce::Prod>);
  add_executor(rules, "ReduceL1", exec_reduce<Reduce::L1>);
  add_executor(rules, "ReduceL2", exec_reduce<Reduce::L2>);
  add_executor(rules, "ReduceLogSum", exec_reduce<Reduce::LogSum>);
  add_executor(rules, "ReduceLogSumExp", exec_reduce<Reduce::LogSumExp>);
  add_executor(rules, "ReduceSumSquare", exec_reduce<Reduce::SumSquare>);
  add_executor(rules, "ArgMax", exec_arg<true>);
  add_executor(rules, "ArgMin", exec_arg<false>);
  add_executor(rules, "CumSum", exec_cumsum, 11);
  add_executor(rules, "TopK", exec_topk);
  add_executor(rules, "Unique", exec_unique, 11);
  add_executor(rules, "NegativeLogLikelihoodLoss", exec_nll_loss, 12);
  add_executor(rules, "SoftmaxCrossEntropyLoss", exec_softmax_cross_entropy, 12);
}

}  // namespace modelstat::profiler

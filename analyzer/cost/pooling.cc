// Pooling and resampling: FLOPs per output element from the window (kernel_shape)
// or the interpolation taps; global pools per input element.
#include <string>

#include "analyzer/cost/cost_helpers.hpp"

namespace modelstat::cost {
namespace {

// Product of kernel_shape; nullopt (with the reason) when absent or invalid.
std::optional<int64_t> kernel_window(const CostContext& ctx, std::string& why) {
  const auto kernel = ctx.node().attr_ints("kernel_shape");
  if (kernel.empty()) {
    why = "kernel_shape missing";
    return std::nullopt;
  }
  if (!all_positive(kernel)) {
    why = "kernel_shape has a non-positive size";
    return std::nullopt;
  }
  return checked_product(kernel, ctx.node());
}

// FLOPs = output elements * (per_tap * prod(kernel) + per_output).
RuleResult windowed(const CostContext& ctx, const char* rule, int64_t per_tap, int64_t per_output) {
  std::string why;
  auto window = kernel_window(ctx, why);
  if (!window) return RuleResult::unknown_shape(rule, why);
  auto out = ctx.output_elements(0);
  if (!out) return RuleResult::unknown_shape(rule, "output shape unknown");
  const Node& node = ctx.node();
  const int64_t per_element = checked_add(checked_mul(per_tap, *window, node), per_output, node);
  return exact(rule, 0, checked_mul(*out, per_element, node));
}

RuleResult max_pool(const CostContext& ctx) { return windowed(ctx, "maxpool", 1, 0); }
RuleResult average_pool(const CostContext& ctx) { return windowed(ctx, "avgpool", 1, 1); }
// |x|^p and accumulate per tap (2), root per output (1).
RuleResult lp_pool(const CostContext& ctx) { return windowed(ctx, "lppool", 2, 1); }

// Global pools: FLOPs = per_input * input elements + per_output * output elements.
RuleResult global(const CostContext& ctx, const char* rule, int64_t per_input, int64_t per_output) {
  auto in = ctx.input_elements(0);
  auto x = ctx.input_dims(0);
  if (!in || !x) return RuleResult::unknown_shape(rule, "input shape unknown");
  if (x->size() < 2) return RuleResult::unknown_shape(rule, "input rank < 2");
  const Node& node = ctx.node();
  const int64_t out = checked_mul((*x)[0], (*x)[1], node);  // one value per (N, C)
  return exact(rule, 0, checked_add(checked_mul(per_input, *in, node), checked_mul(per_output, out, node), node));
}

RuleResult global_average_pool(const CostContext& ctx) { return global(ctx, "global_avgpool", 1, 1); }
RuleResult global_max_pool(const CostContext& ctx) { return global(ctx, "global_maxpool", 1, 0); }
RuleResult global_lp_pool(const CostContext& ctx) { return global(ctx, "global_lppool", 2, 1); }

// Interpolation: 2 FLOPs (multiply, accumulate) per tap; linear uses 2^k taps and
// cubic 4^k taps for k resized axes; nearest is data movement.
RuleResult interpolation(const CostContext& ctx, const char* rule, const std::string& mode,
                         int64_t resized_axes) {
  if (mode == "nearest") return data_movement(rule, "nearest: data movement");
  int64_t taps_per_axis = 0;
  if (mode == "linear" || mode == "bilinear" || mode == "trilinear")
    taps_per_axis = 2;
  else if (mode == "cubic" || mode == "bicubic")
    taps_per_axis = 4;
  else
    return RuleResult::unknown_shape(rule, "unknown interpolation mode '" + mode + "'");
  auto out = ctx.output_elements(0);
  if (!out) return RuleResult::unknown_shape(rule, "output shape unknown");
  const Node& node = ctx.node();
  int64_t taps = 1;
  for (int64_t i = 0; i < resized_axes; ++i) taps = checked_mul(taps, taps_per_axis, node);
  return exact(rule, 0, checked_mul(*out, checked_mul(2, taps, node), node));
}

// Resize / Upsample: the resized axes are those whose size changes.
RuleResult resize(const CostContext& ctx) {
  const char* rule = "resize";
  const std::string mode = ctx.node().attr_string("mode", "nearest");
  if (mode == "nearest") return data_movement(rule, "nearest: data movement");
  auto x = ctx.input_dims(0);
  auto y = ctx.output_dims(0);
  if (!x || !y) return RuleResult::unknown_shape(rule, "input or output shape unknown");
  if (x->size() != y->size()) return RuleResult::unknown_shape(rule, "input and output ranks differ");
  int64_t resized = 0;
  for (size_t i = 0; i < x->size(); ++i)
    if ((*x)[i] != (*y)[i]) ++resized;
  return interpolation(ctx, rule, mode, resized);
}

// GridSample (opset 16): interpolation over the spatial dims of the grid
// (input rank - 2 axes, every one sampled).
RuleResult grid_sample(const CostContext& ctx) {
  const char* rule = "grid_sample";
  const std::string mode = ctx.node().attr_string("mode", "bilinear");
  if (mode == "nearest") return data_movement(rule, "nearest: data movement");
  auto x = ctx.input_dims(0);
  if (!x) return RuleResult::unknown_shape(rule, "input shape unknown");
  if (x->size() < 3) return RuleResult::unknown_shape(rule, "input rank < 3");
  return interpolation(ctx, rule, mode, int64_t(x->size()) - 2);
}

// RoiAlign: sampling_ratio^2 bilinear samples per output element, 8 FLOPs each
// (4 multiplies + 3 adds + accumulate), + 1 per output (divide or max).
// sampling_ratio 0 (adaptive) depends on ROI values: unknown.
RuleResult roi_align(const CostContext& ctx) {
  const char* rule = "roi_align";
  const int64_t ratio = ctx.node().attr_int("sampling_ratio", 0);
  if (ratio < 1 || ratio > (int64_t(1) << 20))
    return RuleResult::unknown_shape(rule, "adaptive sampling_ratio depends on ROI values");
  auto out = ctx.output_elements(0);
  if (!out) return RuleResult::unknown_shape(rule, "output shape unknown");
  const Node& node = ctx.node();
  const int64_t per_output = checked_add(checked_mul(8, checked_mul(ratio, ratio, node), node), 1, node);
  return exact(rule, 0, checked_mul(*out, per_output, node));
}

RuleResult max_unpool(const CostContext& ctx) { return data_movement("data_movement"); }

}  // namespace

void add_pooling_rules(std::vector<CostRule>& rules) {
  static const OpRow kRows[] = {
      {"MaxPool", 1, max_pool, "prod(kernel) comparisons per output element", OpTraits{}.conv_pool(-1)},
      {"AveragePool", 1, average_pool, "prod(kernel) adds + 1 divide per output element", OpTraits{}.conv_pool(-1)},
      {"LpPool", 1, lp_pool, "2*prod(kernel) (|x|^p, add) + 1 root per output element", OpTraits{}.conv_pool(-1)},
      {"GlobalAveragePool", 1, global_average_pool, "input elements (adds) + N*C (divides)", kSavesNothing},
      {"GlobalMaxPool", 1, global_max_pool, "input elements (comparisons)"},
      {"GlobalLpPool", 1, global_lp_pool, "2 per input element (|x|^p, add) + N*C (roots)"},
      {"Resize", 10, resize, "nearest: 0; linear: 2*2^k FLOPs per output element, cubic: 2*4^k (k = resized axes)"},
      {"Upsample", 1, resize, "nearest: 0; (bi)linear: 2*2^k FLOPs per output element (k = resized axes)"},
      {"GridSample", 16, grid_sample,
       "nearest: 0; bilinear: 2*2^k, bicubic: 2*4^k FLOPs per output element (k = spatial dims)"},
      {"RoiAlign", 10, roi_align, "(8*sampling_ratio^2 + 1) per output element; adaptive sampling (0) is unknown"},
      {"MaxUnpool", 9, max_unpool, "data movement: 0 FLOPs"},
  };
  add_rows(rules, kRows);
}

}  // namespace modelstat::cost

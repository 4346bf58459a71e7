// Normalization: BatchNormalization (inference, and training mode's outputs),
// InstanceNormalization, LayerNormalization, GroupNormalization,
// MeanVarianceNormalization, LpNormalization, LRN, RMSNormalization; ONNX
// Runtime's SimplifiedLayerNormalization and its com.microsoft fusions
// (SkipLayerNormalization, SkipSimplifiedLayerNormalization,
// EmbedLayerNormalization).
#include "analyzer/fusion/fusion_plan.hpp"
#include "analyzer/op_traits.hpp"
#include "profiler/ops/direct_kernels.hpp"
#include "profiler/ops/exec_helpers.hpp"

namespace modelstat::profiler {

namespace {

// Every dim but the channel dim (1): the reduction dims of batch statistics.
std::vector<int64_t> all_but_channel(int64_t rank) {
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < rank; ++d) dims.push_back(d);
  return dims;
}

// Inputs X, scale, B, input_mean, input_var. The mode follows the opset
// (op_training_mode, analyzer/op_traits.hpp): training_mode (14+); from 7 to
// 13 training when more than Y is asked for (as ONNX Runtime decides); before
// 7 is_test=0, the default (ONNX's reference evaluator agrees).
// Inference uses the running statistics. Training normalises with the batch
// statistics (population variance) and also returns the updated running ones,
//   running = input * momentum + batch * (1 - momentum)   (ONNX's convention,
// the opposite of PyTorch's momentum), then, before 14, saved_mean and
// saved_var: the batch mean and variance (as ONNX's reference computes them).
// spatial=0 (opsets 1-8): statistics per activation, scale/B/mean/var shaped
// [C, D1, ..., Dn], batch statistics over N only.
void batch_norm(ExecContext& ctx) {
  const Node& node = ctx.node();
  const at::Tensor& x = ctx.input(0);
  const double eps = node.attr_float("epsilon", 1e-5);
  const int64_t opset = ctx.opset();
  const bool training = op_training_mode(node, opset);
  bool extra_outputs = false;
  for (size_t o = 1; o < ctx.num_outputs(); ++o) extra_outputs = extra_outputs || ctx.wants_output(o);
  if (!training && extra_outputs)
    fail_input(ctx, "is_test=1 (test mode, opset " + std::to_string(opset) +
                        ") leaves the mean, var, saved_mean and saved_var outputs undefined, yet the node asks for them");
  const bool spatial = opset >= 9 || node.attr_int("spatial", 1) != 0;
  // A Relu fused into it (fusion pattern batch_norm_relu) runs in the same pass.
  const bool fused_relu = node.attr_int(kFusedReluAttribute, 0) != 0;
  if (spatial && !training) {
    if (std::optional<at::Tensor> y =
            direct_batch_norm(x, ctx.input(1), ctx.input(2), ctx.input(3), ctx.input(4), eps, fused_relu)) {
      ctx.outputs = {*y};
      return;
    }
    at::Tensor y = at::batch_norm(x, ctx.input(1), ctx.input(2), ctx.input(3), ctx.input(4), false, 0.0, eps, true);
    ctx.outputs = {fused_relu ? at::relu_(y) : y};
    return;
  }
  const std::vector<int64_t> dims = spatial ? all_but_channel(x.dim()) : std::vector<int64_t>{0};
  const at::Tensor mean = training ? x.mean(dims) : ctx.input(3);
  const at::Tensor var = training ? x.var(dims, /*unbiased=*/false) : ctx.input(4);
  at::Tensor y;
  if (spatial) {
    y = at::batch_norm(x, ctx.input(1), ctx.input(2), mean, var, false, 0.0, eps, true);
  } else {
    // Per activation: every parameter is one sample of X without its batch dim.
    auto per_activation = [&](const at::Tensor& t) {
      if (t.sizes() != x.sizes().slice(1))
        fail_input(ctx, "spatial=0 needs scale, B, mean and var of shape " + c10::str(x.sizes().slice(1)) + ", got " +
                            c10::str(t.sizes()));
      return t.unsqueeze(0);
    };
    y = (x - per_activation(mean)) / at::sqrt(per_activation(var) + eps) * per_activation(ctx.input(1)) +
        per_activation(ctx.input(2));
  }
  if (!training) {
    ctx.outputs = {y};
    return;
  }
  const double momentum = node.attr_float("momentum", 0.9);
  ctx.outputs = {y, ctx.input(3) * momentum + mean * (1 - momentum), ctx.input(4) * momentum + var * (1 - momentum)};
  if (opset < 14) {
    ctx.outputs.push_back(mean);
    ctx.outputs.push_back(var);
  }
}

void instance_norm(ExecContext& ctx) {
  const double eps = ctx.node().attr_float("epsilon", 1e-5);
  ctx.outputs = {at::instance_norm(ctx.input(0), ctx.input(1), ctx.input(2), {}, {}, true, 0.0, eps, true)};
}

// Opset 17: normalises over dims [axis, rank); outputs Y, Mean, InvStdDev,
// the statistics shaped as X with the normalised dims set to 1.
void layer_norm(ExecContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  const int64_t axis = normalize_axis(ctx, ctx.node().attr_int("axis", -1), x.dim());
  const double eps = ctx.node().attr_float("epsilon", 1e-5);
  const auto sizes = x.sizes();
  const std::vector<int64_t> normalized(sizes.begin() + axis, sizes.end());
  std::vector<int64_t> stat_shape(sizes.begin(), sizes.begin() + axis);
  stat_shape.resize(size_t(x.dim()), 1);
  at::Tensor scale = ctx.input(1), bias = ctx.input(2);
  int64_t size = 1;
  for (int64_t d : normalized) size *= d;
  if (auto direct = direct_layer_norm(x, size, scale, bias, eps)) {  // a small one: no ATen call
    ctx.outputs = {(*direct)[0], (*direct)[1].view(stat_shape), (*direct)[2].view(stat_shape)};
    return;
  }
  // Scale and B may be given with leading 1s (broadcastable): ATen wants exactly the normalised shape.
  if (scale.defined()) scale = scale.expand(normalized).contiguous();
  if (bias.defined()) bias = bias.expand(normalized).contiguous();
  // A bf16 input with fp32 Scale (autocast's output before a LayerNorm):
  // ATen 1.13's kernel wants one dtype; compute in the promoted one, as
  // type promotion would for the arithmetic it stands for.
  at::Tensor x_in = x;
  if (scale.defined() && scale.scalar_type() != x.scalar_type())
    x_in = x.to(at::promote_types(x.scalar_type(), scale.scalar_type()));
  auto [y, mean, rstd] = at::native_layer_norm(x_in, normalized, scale, bias, eps);
  ctx.outputs = {y, mean.reshape(stat_shape), rstd.reshape(stat_shape)};
}

// Opset 18: scale and bias per group (opset 21 made them per channel; both accepted).
void group_norm(ExecContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  const int64_t groups = ctx.node().attr_int("num_groups", 1);
  const double eps = ctx.node().attr_float("epsilon", 1e-5);
  const int64_t channels = x.size(1);
  if (groups <= 0 || channels % groups) fail_input(ctx, "num_groups must divide the channel count");
  auto per_channel = [&](const at::Tensor& v) {
    return v.numel() == channels ? v.reshape({channels}) : v.reshape({groups}).repeat_interleave(channels / groups);
  };
  ctx.outputs = {at::group_norm(x, groups, per_channel(ctx.input(1)), per_channel(ctx.input(2)), eps, true)};
}

// (X - E[X]) / sqrt(Var[X] + 1e-9) over `axes` (default N, H, W): the
// epsilon is the one in ONNX's function body.
void mean_variance_norm(ExecContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  std::vector<int64_t> axes = attr_ints_or(ctx.node(), "axes", {0, 2, 3});
  for (auto& a : axes) a = normalize_axis(ctx, a, x.dim());
  const at::Tensor mean = x.mean(axes, true);
  const at::Tensor var = (x - mean).pow(2).mean(axes, true);
  ctx.outputs = {(x - mean) / at::sqrt(var + 1e-9)};
}

void lp_norm(ExecContext& ctx) {
  const at::Tensor& x = ctx.input(0);
  const int64_t axis = normalize_axis(ctx, ctx.node().attr_int("axis", -1), x.dim());
  const int64_t p = ctx.node().attr_int("p", 2);
  if (p != 1 && p != 2) fail_input(ctx, "LpNormalization supports p = 1 or 2");
  ctx.outputs = {x / at::norm(x, p, {axis}, true)};
}

// y = x / (bias + alpha/size * sum of x^2 over the channel window)^beta, the
// window being [c - floor((size-1)/2), c + ceil((size-1)/2)] (ONNX's, which
// differs from PyTorch's for even sizes, hence no at::local_response_norm).
void lrn(ExecContext& ctx) {
  const Node& node = ctx.node();
  const at::Tensor& x = ctx.input(0);
  const int64_t size = node.attr_int("size", 1);
  const double alpha = node.attr_float("alpha", 1e-4), beta = node.attr_float("beta", 0.75);
  const double bias = node.attr_float("bias", 1.0);
  if (size <= 0 || x.dim() < 2) fail_input(ctx, "LRN needs size > 0 and rank >= 2");
  const int64_t front = (size - 1) / 2, back = size - 1 - front;
  // Pad the channel dim only: pairs run from the last dim backwards.
  std::vector<int64_t> pads(size_t(2 * (x.dim() - 2)), 0);
  pads.push_back(front);
  pads.push_back(back);
  const at::Tensor square_sum = at::constant_pad_nd(x * x, pads, 0.0).unfold(1, size, 1).sum(-1);
  ctx.outputs = {x / at::pow(square_sum * (alpha / double(size)) + bias, beta)};
}

// ---- RMS norms and ONNX Runtime's fused normalisations -------------------------

// Dims [0, axis) of x, then 1s: the shape of per-row statistics.
std::vector<int64_t> stat_shape(const at::Tensor& x, int64_t axis) {
  std::vector<int64_t> dims(x.sizes().begin(), x.sizes().begin() + axis);
  dims.resize(size_t(x.dim()), 1);
  return dims;
}

// 1 / sqrt(mean(x^2 over [axis, rank)) + epsilon), keeping the reduced dims,
// in fp32 (stash_type 1, the default of every op here) for fp16/bf16 x.
at::Tensor inverse_rms(const at::Tensor& x, int64_t axis, double epsilon) {
  std::vector<int64_t> dims;
  for (int64_t d = axis; d < x.dim(); ++d) dims.push_back(d);
  const at::Tensor xf = is_reduced_float(x.scalar_type()) ? x.to(at::kFloat) : x;
  return at::rsqrt(xf.pow(2).mean(dims, /*keepdim=*/true) + epsilon);
}

// ONNX RMSNormalization (opset 23): Y = X * inverse_rms * scale, in X's type.
void rms_norm(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const int64_t axis = normalize_axis(ctx, ctx.node().attr_int("axis", -1), x.dim());
  const at::Tensor inv = inverse_rms(x, axis, ctx.node().attr_float("epsilon", 1e-5));
  ctx.outputs = {((x * inv).to(x.scalar_type()) * need_input(ctx, 1)).to(x.scalar_type())};
}

// ONNX Runtime's SimplifiedLayerNormalization (ONNX domain, opset 1+): as
// RMSNormalization, Y in scale's type; output 1 is inv_std_var (fp32, X's
// dims with [axis, rank) set to 1).
void simplified_layer_norm(ExecContext& ctx) {
  const at::Tensor& x = need_input(ctx, 0);
  const at::Tensor& scale = need_input(ctx, 1);
  const int64_t axis = normalize_axis(ctx, ctx.node().attr_int("axis", -1), x.dim());
  const at::Tensor inv = inverse_rms(x, axis, ctx.node().attr_float("epsilon", 1e-5));
  ctx.outputs = {(x * inv).to(scale.scalar_type()) * scale, inv.to(at::kFloat).reshape(stat_shape(x, axis))};
}

// input + skip (+ bias): skip is [batch, sequence, hidden], [1, sequence,
// hidden] or [sequence, hidden] and broadcasts.
at::Tensor skip_sum(const ExecContext& ctx, size_t bias_input) {
  at::Tensor sum = need_input(ctx, 0) + need_input(ctx, 1);
  if (ctx.has_input(bias_input)) sum = sum + ctx.input(bias_input);
  return sum;
}

// com.microsoft SkipLayerNormalization: s = input + skip (+ bias), layer norm
// of s over the last dim with gamma (and beta); outputs output, mean,
// inv_std_var (fp32, [..., 1]) and s. epsilon defaults to 1e-12 (ONNX
// Runtime's for its BERT fusions).
void skip_layer_norm(ExecContext& ctx) {
  const at::Tensor s = skip_sum(ctx, 4);
  const int64_t hidden = s.size(-1);
  auto [y, mean, rstd] = at::native_layer_norm(s, {hidden}, need_input(ctx, 2), ctx.input(3),
                                               ctx.node().attr_float("epsilon", 1e-12));
  const std::vector<int64_t> stats = stat_shape(s, s.dim() - 1);
  ctx.outputs = {y, mean.to(at::kFloat).reshape(stats), rstd.to(at::kFloat).reshape(stats), s};
}

// com.microsoft SkipSimplifiedLayerNormalization: s = input + skip (+ bias),
// RMS norm of s over the last dim times gamma; outputs output, mean (an RMS
// norm has none: zeros, as ONNX Runtime writes), inv_std_var, s.
void skip_simplified_layer_norm(ExecContext& ctx) {
  const at::Tensor s = skip_sum(ctx, 3);
  const at::Tensor inv = inverse_rms(s, s.dim() - 1, ctx.node().attr_float("epsilon", 1e-12));
  const std::vector<int64_t> stats = stat_shape(s, s.dim() - 1);
  ctx.outputs = {(s * inv).to(s.scalar_type()) * need_input(ctx, 2),
                 at::zeros(stats, s.options().dtype(at::kFloat)), inv.to(at::kFloat).reshape(stats), s};
}

// com.microsoft EmbedLayerNormalization: embedding_sum = word_embedding[input_ids]
// + position_embedding[position_ids, default 0..sequence-1] (+
// segment_embedding[segment_ids]); output = its layer norm over hidden with
// gamma, beta (epsilon default 1e-12); mask_index = the count of nonzero mask
// values per row (int32 [batch]; zeros without a mask, as ONNX Runtime writes).
void embed_layer_norm(ExecContext& ctx) {
  const at::Tensor ids = need_input(ctx, 0).to(at::kLong);
  if (ids.dim() != 2) fail_input(ctx, "input_ids must be [batch, sequence]");
  const int64_t batch = ids.size(0), sequence = ids.size(1);
  const at::Tensor& word = need_input(ctx, 2);
  const at::Tensor positions =
      ctx.has_input(8) ? ctx.input(8).to(at::kLong) : at::arange(sequence, ids.options()).unsqueeze(0);
  at::Tensor sum = at::embedding(word, ids) + at::embedding(need_input(ctx, 3), positions);
  if (ctx.has_input(1) && ctx.has_input(4))
    sum = sum + at::embedding(ctx.input(4), ctx.input(1).to(at::kLong));
  const int64_t hidden = word.size(1);
  auto [y, mean, rstd] = at::native_layer_norm(sum, {hidden}, need_input(ctx, 5), need_input(ctx, 6),
                                               ctx.node().attr_float("epsilon", 1e-12));
  const at::Tensor mask_index = ctx.has_input(7) ? ctx.input(7).ne(0).sum(1).to(at::kInt)
                                                 : at::zeros({batch}, ids.options().dtype(at::kInt));
  ctx.outputs = {y, mask_index, sum};
}

}  // namespace

void add_normalization_executors(std::vector<ExecRule>& rules) {
  add_executor(rules, "BatchNormalization", batch_norm);
  add_executor(rules, "InstanceNormalization", instance_norm);
  add_executor(rules, "LayerNormalization", layer_norm);  // from 1: see its cost record
  add_executor(rules, "GroupNormalization", group_norm, 18);
  add_executor(rules, "MeanVarianceNormalization", mean_variance_norm, 9);
  add_executor(rules, "LpNormalization", lp_norm);
  add_executor(rules, "LRN", lrn);
  add_executor(rules, "RMSNormalization", rms_norm, 23);
  add_executor(rules, "SimplifiedLayerNormalization", simplified_layer_norm);  // ONNX Runtime's, from 1
  add_executor(rules, "SkipLayerNormalization", skip_layer_norm, 1, "com.microsoft");
  add_executor(rules, "SkipSimplifiedLayerNormalization", skip_simplified_layer_norm, 1, "com.microsoft");
  add_executor(rules, "EmbedLayerNormalization", embed_layer_norm, 1, "com.microsoft");
}

}  // namespace modelstat::profiler

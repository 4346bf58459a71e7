// Recurrent layers: LSTM, GRU and RNN with ONNX's gate orders (LSTM i,o,f,c;
// GRU z,r,h), peepholes, clip, custom activations, sequence_lens, every
// direction and opset 14's batch-first layout. The input projection X*W^T
// runs once for all time steps (one large GEMM, as real runtimes do); the
// recurrence is one small GEMM per step.
#include <cmath>

#include "profiler/ops/direct_kernels.hpp"
#include "profiler/ops/exec_helpers.hpp"

namespace modelstat::profiler {

namespace {

struct Activation {
  std::string name;
  double alpha = 0, beta = 0;
};

// Activation names of ONNX's recurrent ops; alpha/beta per operators.md defaults.
at::Tensor activate(const ExecContext& ctx, const Activation& a, const at::Tensor& x) {
  const std::string& n = a.name;
  if (n == "Sigmoid") return at::sigmoid(x);
  if (n == "Tanh") return at::tanh(x);
  if (n == "Relu") return at::relu(x);
  if (n == "Affine") return x * a.alpha + a.beta;
  if (n == "LeakyRelu") return at::leaky_relu(x, a.alpha);
  if (n == "ThresholdedRelu") return at::where(x > a.alpha, x, at::zeros_like(x));
  if (n == "ScaledTanh") return at::tanh(x * a.beta) * a.alpha;
  if (n == "HardSigmoid") return at::clamp(x * a.alpha + a.beta, 0.0, 1.0);
  if (n == "Elu") return at::where(x >= 0, x, (at::exp(x) - 1) * a.alpha);
  if (n == "Softsign") return x / (at::abs(x) + 1);
  if (n == "Softplus") return at::log1p(at::exp(x));
  fail_input(ctx, "unsupported recurrent activation '" + n + "'");
}

double default_alpha(const std::string& n) {
  if (n == "LeakyRelu") return 0.01;
  if (n == "ThresholdedRelu" || n == "Elu" || n == "ScaledTanh" || n == "Affine") return 1.0;
  if (n == "HardSigmoid") return 0.2;
  return 0;
}
double default_beta(const std::string& n) {
  if (n == "HardSigmoid") return 0.5;
  if (n == "ScaledTanh") return 1.0;
  return 0;
}

// What differs between LSTM, GRU and RNN.
struct CellKind {
  int64_t gates;
  std::vector<std::string> default_activations;  // per direction
};
const CellKind kLstm{4, {"Sigmoid", "Tanh", "Tanh"}};
const CellKind kGru{3, {"Sigmoid", "Tanh"}};
const CellKind kRnn{1, {"Tanh"}};

// One direction's state and parameters, seen by a cell step.
struct Direction {
  at::Tensor r, r_bias, peephole;  // r: [gates*H, H]; r_bias: [gates*H] or undefined
  at::Tensor r_t;                  // r transposed, [H, gates*H]
  std::vector<Activation> act;     // this direction's activations
  double clip = 0;                 // 0: none
  // An LSTM with ONNX's default activations (Sigmoid, Tanh, Tanh), no
  // peepholes, clip or input_forget: its step runs as a few fused calls.
  bool standard_lstm = false;
};

at::Tensor clipped(const Direction& d, const at::Tensor& x) { return d.clip > 0 ? at::clamp(x, -d.clip, d.clip) : x; }

// LSTM step. xw: this step's X*W^T + Wb (+ Rb, folded in when r_bias is
// undefined), [batch, 4H]. Updates h and c.
void lstm_step(const ExecContext& ctx, const Direction& d, const at::Tensor& xw, at::Tensor& h, at::Tensor& c) {
  if (d.standard_lstm && !d.r_bias.defined()) {
    // g = xw + h R^T in one call; the gates i, o, f are contiguous in ONNX's
    // order (i, o, f, c): one sigmoid over the three, one tanh for the cell.
    const int64_t hidden = h.size(1);
    const at::Tensor g = at::addmm(xw, h, d.r_t);
    const at::Tensor gates = at::sigmoid(g.narrow(1, 0, 3 * hidden));
    const at::Tensor cell = at::tanh(g.narrow(1, 3 * hidden, hidden));
    c = at::addcmul(gates.narrow(1, 2 * hidden, hidden) * c, gates.narrow(1, 0, hidden), cell);
    h = gates.narrow(1, hidden, hidden) * at::tanh(c);
    return;
  }
  at::Tensor g = xw + at::matmul(h, d.r.t());
  if (d.r_bias.defined()) g = g + d.r_bias;
  auto parts = g.chunk(4, 1);  // i, o, f, c
  at::Tensor pi, po, pf;
  if (d.peephole.defined()) {
    auto p = d.peephole.chunk(3, 0);  // Pi, Po, Pf
    pi = p[0], po = p[1], pf = p[2];
  }
  at::Tensor i_pre = parts[0], f_pre = parts[2];
  if (pi.defined()) i_pre = i_pre + pi * c, f_pre = f_pre + pf * c;
  const at::Tensor i = activate(ctx, d.act[0], clipped(d, i_pre));
  const at::Tensor f = ctx.node().attr_int("input_forget", 0) ? 1 - i : activate(ctx, d.act[0], clipped(d, f_pre));
  const at::Tensor cell = activate(ctx, d.act[1], clipped(d, parts[3]));
  c = f * c + i * cell;
  at::Tensor o_pre = parts[1];
  if (po.defined()) o_pre = o_pre + po * c;
  h = activate(ctx, d.act[0], clipped(d, o_pre)) * activate(ctx, d.act[2], c);
}

void gru_step(const ExecContext& ctx, const Direction& d, const at::Tensor& xw, at::Tensor& h, at::Tensor&) {
  auto xg = xw.chunk(3, 1);  // z, r, h
  auto r_parts = d.r.chunk(3, 0);
  std::vector<at::Tensor> rb(3);
  if (d.r_bias.defined()) {
    auto parts = d.r_bias.chunk(3, 0);
    rb.assign(parts.begin(), parts.end());
  }
  auto rec = [&](int k, const at::Tensor& state) {
    at::Tensor v = at::matmul(state, r_parts[size_t(k)].t());
    return rb[size_t(k)].defined() ? v + rb[size_t(k)] : v;
  };
  const at::Tensor z = activate(ctx, d.act[0], clipped(d, xg[0] + rec(0, h)));
  const at::Tensor r = activate(ctx, d.act[0], clipped(d, xg[1] + rec(1, h)));
  const bool linear_before_reset = ctx.node().attr_int("linear_before_reset", 0) != 0;
  const at::Tensor candidate =
      activate(ctx, d.act[1], clipped(d, xg[2] + (linear_before_reset ? r * rec(2, h) : rec(2, r * h))));
  h = (1 - z) * candidate + z * h;
}

void rnn_step(const ExecContext& ctx, const Direction& d, const at::Tensor& xw, at::Tensor& h, at::Tensor&) {
  at::Tensor g = xw + at::matmul(h, d.r.t());
  if (d.r_bias.defined()) g = g + d.r_bias;
  h = activate(ctx, d.act[0], clipped(d, g));
}

using StepFn = void (*)(const ExecContext&, const Direction&, const at::Tensor&, at::Tensor&, at::Tensor&);

// A small fp32 LSTM (default activations, no peepholes, clip or
// input_forget) or GRU (default activations, no clip) without
// sequence_lens, on the CPU: every step as direct loops
// (direct_kernels.hpp) writing straight into the outputs, instead of ~15
// ATen calls per step. False (nothing done) when the layer is not of that
// form or is above kDirectRecurrentMaxMacs; run_recurrent then runs ATen.
bool run_recurrent_direct(ExecContext& ctx, const CellKind& kind, const std::vector<Activation>& acts, bool batch_first,
                          int64_t hidden, int64_t dirs, bool reverse_only) {
  const Node& node = ctx.node();
  const bool lstm = kind.gates == 4;
  if ((!lstm && kind.gates != 3) || node.attr_float("clip", 0.0) > 0 || ctx.has_input(4) || (lstm && ctx.has_input(7)))
    return false;
  if (lstm && node.attr_int("input_forget", 0) != 0) return false;
  for (size_t i = 0; i < acts.size(); ++i)
    if (acts[i].name != kind.default_activations[i % kind.default_activations.size()]) return false;
  const std::vector<size_t> used = lstm ? std::vector<size_t>{0, 1, 2, 3, 5, 6} : std::vector<size_t>{0, 1, 2, 3, 5};
  for (size_t i : used)
    if (ctx.has_input(i) && (ctx.input(i).scalar_type() != at::kFloat || !ctx.input(i).device().is_cpu() ||
                             !direct_kernels_allowed({&ctx.input(i)})))
      return false;
  const at::Tensor x = ctx.input(0).contiguous();  // [seq, batch, I], or [batch, seq, I] batch-first
  const int64_t seq = batch_first ? x.size(1) : x.size(0), batch = batch_first ? x.size(0) : x.size(1);
  const int64_t input = x.size(2), g = kind.gates * hidden;
  if (ctx.input(2).size(2) != hidden || ctx.input(1).size(2) != input) return false;
  if (ctx.has_input(3) && (ctx.input(3).size(0) != dirs || ctx.input(3).size(1) != 2 * g)) return false;
  if (seq * batch * g * (input + hidden) * dirs > kDirectRecurrentMaxMacs) return false;
  const at::Tensor w = ctx.input(1).contiguous(), r = ctx.input(2).contiguous();
  const at::Tensor b = ctx.has_input(3) ? ctx.input(3).contiguous() : at::Tensor();
  const auto opts = x.options();
  // Initial states as [dirs, batch, H]: zeros when absent.
  auto state = [&](size_t i) {
    if (!ctx.has_input(i)) return at::zeros({dirs, batch, hidden}, opts);
    const at::Tensor s = batch_first ? ctx.input(i).transpose(0, 1) : ctx.input(i);
    if (s.size(0) != dirs || s.size(1) != batch || s.size(2) != hidden) fail_input(ctx, "initial state has the wrong shape");
    return s.contiguous();
  };
  const at::Tensor h0 = state(5);
  at::Tensor y = at::empty({seq, dirs, batch, hidden}, opts);
  at::Tensor y_h = at::empty({dirs, batch, hidden}, opts);
  at::Tensor y_c = lstm ? state(6).clone() : at::Tensor();  // the cell state, updated in place
  std::vector<float> gates(size_t(4 * hidden));
  const int64_t x_row = batch_first ? seq * input : input, x_step = batch_first ? input : batch * input;
  const int64_t slab = batch * hidden;  // one step's h for one direction
  for (int64_t d = 0; d < dirs; ++d) {
    RecurrentWeights p;
    p.w = w.data_ptr<float>() + d * g * input;
    p.r = r.data_ptr<float>() + d * g * hidden;
    if (b.defined()) p.wb = b.data_ptr<float>() + d * 2 * g, p.rb = p.wb + g;
    const bool reverse = reverse_only || d == 1;
    const float* h = h0.data_ptr<float>() + d * slab;
    for (int64_t k = 0; k < seq; ++k) {
      const int64_t t = reverse ? seq - 1 - k : k;
      const float* xt = x.data_ptr<float>() + t * x_step;
      float* h_out = y.data_ptr<float>() + (t * dirs + d) * slab;
      if (lstm) {
        float* c = y_c.data_ptr<float>() + d * slab;
        lstm_step_direct(p, batch, input, hidden, xt, x_row, h, hidden, c, hidden, h_out, c, gates.data());
      } else {
        gru_step_direct(p, node.attr_int("linear_before_reset", 0) != 0, batch, input, hidden, xt, x_row, h, hidden,
                        h_out, gates.data());
      }
      h = h_out;
    }
    std::copy(h, h + slab, y_h.data_ptr<float>() + d * slab);
  }
  if (batch_first) {
    y = y.permute({2, 0, 1, 3});
    y_h = y_h.transpose(0, 1);
    if (y_c.defined()) y_c = y_c.transpose(0, 1);
  }
  ctx.outputs = {y, y_h};
  if (lstm) ctx.outputs.push_back(y_c);
  return true;
}

// Inputs: X, W, R, B, sequence_lens, initial_h, (LSTM: initial_c, P).
// Outputs: Y [seq, dirs, batch, H], Y_h [dirs, batch, H], (LSTM: Y_c); with
// layout = 1 batch comes first in X, Y, Y_h and Y_c.
void run_recurrent(ExecContext& ctx, const CellKind& kind, StepFn step) {
  const Node& node = ctx.node();
  const bool batch_first = ctx.opset() >= 14 && node.attr_int("layout", 0) != 0;
  at::Tensor x = batch_first ? ctx.input(0).transpose(0, 1) : ctx.input(0);
  const at::Tensor& w = ctx.input(1);
  const at::Tensor& r = ctx.input(2);
  const int64_t seq = x.size(0), batch = x.size(1);
  const int64_t hidden = node.attr_int("hidden_size", r.size(2));
  const std::string direction = node.attr_string("direction", "forward");
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    fail_input(ctx, "unknown direction '" + direction + "'");
  if (w.size(0) != dirs || r.size(0) != dirs || w.size(1) != kind.gates * hidden)
    fail_input(ctx, "W and R do not match direction and hidden_size");

  // Activations: given per direction (names, then alphas/betas consumed in order).
  std::vector<std::string> names = attr_strings(node, "activations");
  const size_t per_dir = kind.default_activations.size();
  if (names.empty())
    for (int64_t d = 0; d < dirs; ++d) names.insert(names.end(), kind.default_activations.begin(), kind.default_activations.end());
  if (names.size() != per_dir * size_t(dirs)) fail_input(ctx, "activations must name " + std::to_string(per_dir) + " functions per direction");
  const auto alphas = attr_floats(node, "activation_alpha"), betas = attr_floats(node, "activation_beta");
  std::vector<Activation> acts;
  for (size_t i = 0; i < names.size(); ++i)
    acts.push_back({names[i], i < alphas.size() ? alphas[i] : default_alpha(names[i]),
                    i < betas.size() ? betas[i] : default_beta(names[i])});

  if (run_recurrent_direct(ctx, kind, acts, batch_first, hidden, dirs, direction == "reverse")) return;

  auto state = [&](size_t i) {
    if (!ctx.has_input(i)) return at::zeros({dirs, batch, hidden}, x.options());
    return batch_first ? ctx.input(i).transpose(0, 1) : ctx.input(i);
  };
  const at::Tensor h0 = state(5);
  const at::Tensor c0 = kind.gates == 4 ? state(6) : at::Tensor();
  // sequence_lens: steps at or beyond a sequence's length hold its state and output zeros.
  at::Tensor valid;
  if (ctx.has_input(4)) valid = at::arange(seq, x.options().dtype(at::kLong)).unsqueeze(1) < ctx.input(4).to(at::kLong).unsqueeze(0);

  std::vector<at::Tensor> ys, hs, cs;
  for (int64_t d = 0; d < dirs; ++d) {
    Direction dir;
    dir.r = r[d];
    dir.r_t = dir.r.t();
    dir.clip = node.attr_float("clip", 0.0);
    dir.act.assign(acts.begin() + int64_t(per_dir) * d, acts.begin() + int64_t(per_dir) * (d + 1));
    if (kind.gates == 4 && ctx.has_input(7)) dir.peephole = ctx.input(7)[d];
    dir.standard_lstm = kind.gates == 4 && !dir.peephole.defined() && dir.clip == 0 &&
                        node.attr_int("input_forget", 0) == 0 && dir.act[0].name == "Sigmoid" &&
                        dir.act[1].name == "Tanh" && dir.act[2].name == "Tanh";
    // X * W^T for every step at once, [seq, batch, gates*H], with Wb (and,
    // for the standard LSTM, Rb: one bias add for the whole sequence).
    const at::Tensor x2 = x.reshape({seq * batch, x.size(2)});
    at::Tensor xw;
    if (ctx.has_input(3)) {
      auto b = ctx.input(3)[d].chunk(2, 0);  // Wb, Rb
      if (dir.standard_lstm) {
        xw = at::addmm(b[0] + b[1], x2, w[d].t());
      } else {
        xw = at::addmm(b[0], x2, w[d].t());
        dir.r_bias = b[1];
      }
    } else {
      xw = at::mm(x2, w[d].t());
    }
    xw = xw.view({seq, batch, xw.size(1)});
    at::Tensor h = h0[d], c = c0.defined() ? c0[d] : at::Tensor();
    const bool reverse = direction == "reverse" || d == 1;
    std::vector<at::Tensor> y(static_cast<size_t>(seq));
    for (int64_t k = 0; k < seq; ++k) {
      const int64_t t = reverse ? seq - 1 - k : k;
      at::Tensor h_next = h, c_next = c;
      step(ctx, dir, xw[t], h_next, c_next);
      if (valid.defined()) {
        const at::Tensor m = valid[t].unsqueeze(1);
        h = at::where(m, h_next, h);
        if (c.defined()) c = at::where(m, c_next, c);
        y[size_t(t)] = at::where(m, h_next, at::zeros_like(h_next));
      } else {
        h = h_next, c = c_next;
        y[size_t(t)] = h;
      }
    }
    ys.push_back(seq == 1 ? y[0].unsqueeze(0) : at::stack(y, 0));
    hs.push_back(h);
    if (c.defined()) cs.push_back(c);
  }
  // One direction (the common case): views, no copies.
  auto stacked = [](const std::vector<at::Tensor>& parts, int64_t dim) {
    return parts.size() == 1 ? parts[0].unsqueeze(dim) : at::stack(parts, dim);
  };
  at::Tensor y = stacked(ys, 1);  // [seq, dirs, batch, H]
  at::Tensor y_h = stacked(hs, 0);
  at::Tensor y_c = cs.empty() ? at::Tensor() : stacked(cs, 0);
  if (batch_first) {
    y = y.permute({2, 0, 1, 3});
    y_h = y_h.transpose(0, 1);
    if (y_c.defined()) y_c = y_c.transpose(0, 1);
  }
  ctx.outputs = {y, y_h};
  if (kind.gates == 4) ctx.outputs.push_back(y_c);
}

void lstm(ExecContext& ctx) { run_recurrent(ctx, kLstm, lstm_step); }
void gru(ExecContext& ctx) { run_recurrent(ctx, kGru, gru_step); }
void rnn(ExecContext& ctx) { run_recurrent(ctx, kRnn, rnn_step); }

}  // namespace

void add_recurrent_executors(std::vector<ExecRule>& rules) {
  add_executor(rules, "LSTM", lstm);
  add_executor(rules, "GRU", gru);
  add_executor(rules, "RNN", rnn);
}

}  // namespace modelstat::profiler

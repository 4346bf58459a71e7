// Control flow: If, Loop and Scan run their subgraphs through the executor
// (ExecContext::run_subgraph), which binds the subgraph's inputs and the
// values it reads from enclosing scopes. Tensors only: a sequence or optional
// value has no ATen form (its ops have no executor, so such a subgraph is
// refused before anything runs).
#include <algorithm>
#include <string>
#include <vector>

#include "profiler/ops/exec_helpers.hpp"
#include "profiler/ops/exec_rule.hpp"

namespace modelstat::profiler {

namespace {

const Graph& subgraph_attr(const ExecContext& ctx, const char* key) {
  const AttrValue* a = ctx.node().attr(key);
  const auto* g = a ? std::get_if<std::shared_ptr<Graph>>(a) : nullptr;
  if (!g || !*g) fail_input(ctx, std::string("attribute '") + key + "' (a graph) is required");
  return **g;
}

bool truth(const ExecContext& ctx, const at::Tensor& t, const char* what) {
  if (!t.defined() || t.numel() != 1)
    fail_input(ctx, std::string(what) + " must be a one-element tensor" +
                        (t.defined() ? ", got " + std::to_string(t.numel()) + " elements" : ""));
  return t.to(at::kCPU).to(at::kBool).item<bool>();
}

void check_outputs(const ExecContext& ctx, const Graph& body, const std::vector<at::Tensor>& outs, size_t expected,
                   const char* which) {
  if (outs.size() != expected)
    fail_input(ctx, std::string(which) + " '" + body.name + "' has " + std::to_string(outs.size()) + " outputs, " +
                        std::to_string(expected) + " expected");
}

// An empty scan output (zero iterations): [0, dims of the body output] when
// they are known, else [0]; the body output's dtype.
at::Tensor empty_scan_output(const ExecContext& ctx, const Graph& body, size_t output) {
  const Tensor& t = body.tensors[size_t(body.outputs[output])];
  std::vector<int64_t> dims{0};
  if (t.shape.fully_known())
    for (const Dim& d : t.shape.dims) dims.push_back(d.value);
  const at::ScalarType run_float =
      ctx.float_dtype() == at::ScalarType::Undefined ? at::kFloat : ctx.float_dtype();
  at::ScalarType type = t.dtype == DType::Undefined ? run_float : scalar_type_of(t.dtype);
  type = compute_type(ctx, type);
  return at::empty(dims, at::TensorOptions().dtype(type).device(ctx.device()));
}

// ---- If -----------------------------------------------------------------------

void exec_if(ExecContext& ctx) {
  const bool cond = truth(ctx, need_input(ctx, 0), "cond");
  const Graph& branch = subgraph_attr(ctx, cond ? "then_branch" : "else_branch");
  std::vector<at::Tensor> outs = ctx.run_subgraph(branch, {});
  check_outputs(ctx, branch, outs, ctx.num_outputs(), cond ? "then_branch" : "else_branch");
  ctx.outputs = std::move(outs);
}

// ---- Loop ---------------------------------------------------------------------

// Inputs: M (optional trip count), cond (optional), v_initial... Body inputs:
// iteration number, cond, carried values; body outputs: cond, carried values,
// scan outputs. Node outputs: final carried values, then each scan output's
// per-iteration values stacked along a new axis 0.
void exec_loop(ExecContext& ctx) {
  const Graph& body = subgraph_attr(ctx, "body");
  const size_t carried = ctx.num_inputs() >= 2 ? ctx.num_inputs() - 2 : 0;
  if (body.inputs.size() != carried + 2)
    fail_input(ctx, "body has " + std::to_string(body.inputs.size()) + " inputs, " + std::to_string(carried + 2) +
                        " expected (iteration number, condition and " + std::to_string(carried) + " carried values)");
  if (body.outputs.size() < carried + 1)
    fail_input(ctx, "body has " + std::to_string(body.outputs.size()) + " outputs, at least " +
                        std::to_string(carried + 1) + " expected");
  const size_t scans = body.outputs.size() - 1 - carried;
  if (ctx.num_outputs() != carried + scans)
    fail_input(ctx, "the node has " + std::to_string(ctx.num_outputs()) + " outputs, its body gives " +
                        std::to_string(carried + scans));

  const bool has_m = ctx.has_input(0);
  int64_t trip_count = 0;
  if (has_m) {
    const at::Tensor& m = ctx.input(0);
    if (m.numel() != 1) fail_input(ctx, "M (the trip count) must be a one-element tensor");
    trip_count = m.to(at::kCPU).to(at::kLong).item<int64_t>();
  }
  // Without a cond input the body's condition output is ignored (ONNX's
  // "for" loop); without either input the loop would never end.
  const bool has_cond = ctx.has_input(1);
  if (!has_m && !has_cond) fail_input(ctx, "neither M nor cond is given: the loop would run forever");
  bool cond = has_cond ? truth(ctx, ctx.input(1), "cond") : true;

  std::vector<at::Tensor> state(carried);
  for (size_t k = 0; k < carried; ++k) {
    if (!ctx.has_input(2 + k)) fail_input(ctx, "carried value " + std::to_string(k) + " is required");
    state[k] = ctx.input(2 + k);
  }
  std::vector<std::vector<at::Tensor>> scanned(scans);
  const auto long_opts = at::TensorOptions().dtype(at::kLong).device(ctx.device());
  const auto bool_opts = at::TensorOptions().dtype(at::kBool).device(ctx.device());
  for (int64_t i = 0; (!has_m || i < trip_count) && cond; ++i) {
    std::vector<at::Tensor> args;
    args.reserve(carried + 2);
    args.push_back(at::scalar_tensor(i, long_opts));
    args.push_back(at::scalar_tensor(true, bool_opts));
    for (const auto& s : state) args.push_back(s);
    std::vector<at::Tensor> outs = ctx.run_subgraph(body, args);
    check_outputs(ctx, body, outs, carried + 1 + scans, "body");
    if (has_cond) cond = truth(ctx, outs[0], "the body's condition output");
    for (size_t k = 0; k < carried; ++k) state[k] = std::move(outs[1 + k]);
    for (size_t k = 0; k < scans; ++k) scanned[k].push_back(std::move(outs[1 + carried + k]));
  }

  ctx.outputs.assign(carried + scans, at::Tensor());
  for (size_t k = 0; k < carried; ++k) ctx.outputs[k] = state[k];
  for (size_t k = 0; k < scans; ++k) {
    if (scanned[k].empty()) {
      ctx.outputs[carried + k] = empty_scan_output(ctx, body, 1 + carried + k);
      continue;
    }
    for (const auto& t : scanned[k])
      if (t.sizes() != scanned[k][0].sizes())
        fail_input(ctx, "scan output " + std::to_string(k) + " changes shape across iterations (" +
                            c10::str(scanned[k][0].sizes()) + " then " + c10::str(t.sizes()) +
                            "): it cannot be stacked");
    ctx.outputs[carried + k] = at::stack(scanned[k], 0);
  }
}

// ---- Scan ---------------------------------------------------------------------

// One scan over inputs without a batch dim (opset 9+; opset 8 calls it per
// batch entry). `state` holds the N state variables (updated), `inputs` the M
// scan inputs; returns the K scan outputs.
std::vector<at::Tensor> scan_once(const ExecContext& ctx, const Graph& body, std::vector<at::Tensor>& state,
                                  const std::vector<at::Tensor>& inputs, const std::vector<int64_t>& in_axes,
                                  const std::vector<int64_t>& in_dirs, const std::vector<int64_t>& out_axes,
                                  const std::vector<int64_t>& out_dirs, size_t scan_outputs) {
  const size_t n = state.size(), m = inputs.size();
  int64_t length = -1;
  std::vector<int64_t> axes(m);
  for (size_t j = 0; j < m; ++j) {
    const int64_t rank = inputs[j].dim();
    if (rank == 0) fail_input(ctx, "scan input " + std::to_string(j) + " is a scalar: nothing to scan over");
    axes[j] = normalize_axis(ctx, in_axes[j], rank);
    const int64_t len = inputs[j].size(axes[j]);
    if (length >= 0 && len != length)
      fail_input(ctx, "scan inputs differ in sequence length (" + std::to_string(length) + " and " +
                          std::to_string(len) + ")");
    length = len;
  }
  if (length < 0) fail_input(ctx, "no scan input");

  std::vector<std::vector<at::Tensor>> scanned(scan_outputs);
  for (int64_t t = 0; t < length; ++t) {
    std::vector<at::Tensor> args(state.begin(), state.end());
    for (size_t j = 0; j < m; ++j) args.push_back(inputs[j].select(axes[j], in_dirs[j] ? length - 1 - t : t));
    std::vector<at::Tensor> outs = ctx.run_subgraph(body, args);
    check_outputs(ctx, body, outs, n + scan_outputs, "body");
    for (size_t k = 0; k < n; ++k) state[k] = std::move(outs[k]);
    for (size_t k = 0; k < scan_outputs; ++k) scanned[k].push_back(std::move(outs[n + k]));
  }

  std::vector<at::Tensor> result(scan_outputs);
  for (size_t k = 0; k < scan_outputs; ++k) {
    auto& parts = scanned[k];
    if (parts.empty()) {
      result[k] = empty_scan_output(ctx, body, n + k);
      continue;
    }
    // Reverse direction: the last iteration's value comes first.
    if (out_dirs[k]) std::reverse(parts.begin(), parts.end());
    const int64_t axis = normalize_axis(ctx, out_axes[k], parts[0].dim() + 1);
    for (const auto& p : parts)
      if (p.sizes() != parts[0].sizes())
        fail_input(ctx, "scan output " + std::to_string(k) + " changes shape across iterations: it cannot be stacked");
    result[k] = at::stack(parts, axis);
  }
  return result;
}

std::vector<int64_t> per_value_attr(const ExecContext& ctx, const char* key, size_t count, const char* what) {
  std::vector<int64_t> v = attr_ints_or(ctx.node(), key, std::vector<int64_t>(count, 0));
  if (v.size() != count)
    fail_input(ctx, std::string(key) + " has " + std::to_string(v.size()) + " entries, one per " + what + " (" +
                        std::to_string(count) + ") expected");
  for (int64_t d : v)
    if (std::string(key).find("direction") != std::string::npos && d != 0 && d != 1)
      fail_input(ctx, std::string(key) + " values must be 0 (forward) or 1 (reverse), got " + std::to_string(d));
  return v;
}

void exec_scan(ExecContext& ctx) {
  const Graph& body = subgraph_attr(ctx, "body");
  const int64_t m_attr = ctx.node().attr_int("num_scan_inputs", -1);
  const bool batched = ctx.opset() < 9;  // opset 8: sequence_lens first, a batch dim on every value
  const size_t offset = batched ? 1 : 0;
  const size_t total = ctx.num_inputs() - offset;
  if (m_attr < 1 || size_t(m_attr) > total)
    fail_input(ctx, "num_scan_inputs must be between 1 and the number of inputs (" + std::to_string(total) + ")");
  const size_t m = size_t(m_attr), n = total - m;
  if (body.inputs.size() != n + m)
    fail_input(ctx, "body has " + std::to_string(body.inputs.size()) + " inputs, " + std::to_string(n + m) +
                        " expected (state variables and scan inputs)");
  if (body.outputs.size() < n)
    fail_input(ctx, "body has fewer outputs than state variables");
  const size_t k_out = body.outputs.size() - n;
  if (ctx.num_outputs() != n + k_out)
    fail_input(ctx, "the node has " + std::to_string(ctx.num_outputs()) + " outputs, its body gives " +
                        std::to_string(n + k_out));

  std::vector<at::Tensor> state(n), inputs(m);
  for (size_t k = 0; k < n; ++k) state[k] = need_input(ctx, offset + k);
  for (size_t j = 0; j < m; ++j) inputs[j] = need_input(ctx, offset + n + j);

  if (!batched) {
    const auto in_axes = per_value_attr(ctx, "scan_input_axes", m, "scan input");
    const auto in_dirs = per_value_attr(ctx, "scan_input_directions", m, "scan input");
    const auto out_axes = per_value_attr(ctx, "scan_output_axes", k_out, "scan output");
    const auto out_dirs = per_value_attr(ctx, "scan_output_directions", k_out, "scan output");
    std::vector<at::Tensor> scanned = scan_once(ctx, body, state, inputs, in_axes, in_dirs, out_axes, out_dirs, k_out);
    ctx.outputs = std::move(state);
    for (auto& s : scanned) ctx.outputs.push_back(std::move(s));
    return;
  }

  // Opset 8: axis 0 of every value is the batch, axis 1 the sequence; each
  // batch entry is scanned on its own and the results stacked on axis 0.
  const auto dirs = per_value_attr(ctx, "directions", m, "scan input");
  for (const auto& v : state)
    if (v.dim() < 1) fail_input(ctx, "opset-8 Scan: a state variable has no batch dim");
  for (const auto& v : inputs)
    if (v.dim() < 2) fail_input(ctx, "opset-8 Scan: a scan input needs a batch and a sequence dim");
  const int64_t batch = inputs[0].size(0);
  if (batch < 1) fail_input(ctx, "opset-8 Scan: the batch is empty");
  for (const auto& v : state)
    if (v.size(0) != batch) fail_input(ctx, "opset-8 Scan: values differ in batch size");
  for (const auto& v : inputs)
    if (v.size(0) != batch) fail_input(ctx, "opset-8 Scan: values differ in batch size");
  if (ctx.has_input(0)) {
    const std::vector<int64_t> lens = ctx.input_ints(0);
    const int64_t max_len = inputs[0].size(1);
    for (int64_t len : lens)
      if (len != max_len)
        fail_input(ctx, "opset-8 Scan with sequence_lens shorter than the sequence (" + std::to_string(len) +
                            " of " + std::to_string(max_len) + ") is not supported: only full-length sequences run");
  }
  std::vector<std::vector<at::Tensor>> final_state(n), scanned(k_out);
  const std::vector<int64_t> zeros_in(m, 0), zeros_out(k_out, 0);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<at::Tensor> st(n), in(m);
    for (size_t k = 0; k < n; ++k) st[k] = state[k].select(0, b);
    for (size_t j = 0; j < m; ++j) in[j] = inputs[j].select(0, b);
    std::vector<at::Tensor> outs = scan_once(ctx, body, st, in, zeros_in, dirs, zeros_out, zeros_out, k_out);
    for (size_t k = 0; k < n; ++k) final_state[k].push_back(std::move(st[k]));
    for (size_t k = 0; k < k_out; ++k) scanned[k].push_back(std::move(outs[k]));
  }
  ctx.outputs.clear();
  for (size_t k = 0; k < n; ++k) ctx.outputs.push_back(at::stack(final_state[k], 0));
  for (size_t k = 0; k < k_out; ++k) ctx.outputs.push_back(at::stack(scanned[k], 0));
}

}  // namespace

void add_control_flow_executors(std::vector<ExecRule>& rules) {
  add_executor(rules, "If", exec_if);
  add_executor(rules, "Loop", exec_loop);
  add_executor(rules, "Scan", exec_scan, 8);
}

}  // namespace modelstat::profiler

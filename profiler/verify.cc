// verify (verify.hpp): one ONNX test case through the executor, every output
// judged by the criterion of include/modelstat/verification.hpp, the result
// a record (tools/writers/verify_writers.cc formats it).
#include "profiler/verify.hpp"

#include <c10/util/Exception.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <new>
#include <optional>
#include <set>
#include <sstream>

#include "analyzer/loader/loader.hpp"
#include "modelstat/analysis.hpp"
#include "modelstat/error.hpp"
#include "profiler/executor.hpp"
#include "profiler/ops/exec_helpers.hpp"
#include "profiler/torch_errors.hpp"
#include "profiler/verify_case_files.hpp"

namespace modelstat::profiler {

namespace fs = std::filesystem;

namespace {

// The floor of the relative difference's denominator (the smallest normal
// float): only matched NaN/inf elements, whose difference is 0, can reach it.
constexpr double kTiny = 1.17549435082228750797e-38;  // FLT_MIN

double norm_rel_error(const at::Tensor& actual, const at::Tensor& expected) {
  const at::Tensor a = actual.to(at::kCPU).to(at::kDouble), e = expected.to(at::kCPU).to(at::kDouble);
  const at::Tensor d = at::nan_to_num(a - e, 0.0, 0.0, 0.0);
  const double norm_expected = at::nan_to_num(e, 0.0, 0.0, 0.0).norm().item<double>();
  return d.norm().item<double>() / std::max(norm_expected, kTiny);
}

bool is_exact_type(at::ScalarType t) { return !at::isFloatingType(t) && !at::isComplexType(t); }

// The elementwise criterion on one output (the first level).
OutputCheck compare(const at::Tensor& actual_in, const at::Tensor& expected, const Tolerance& tol) {
  OutputCheck c;
  const at::Tensor actual = actual_in.to(at::kCPU);
  c.elements = expected.numel();
  if (actual.sizes() != expected.sizes()) {
    std::ostringstream text;
    text << "shape " << actual.sizes() << ", expected " << expected.sizes();
    c.problem = text.str();
    c.outside = std::max<int64_t>(expected.numel(), 1);
    c.norm_rel_err = std::numeric_limits<double>::infinity();
    return c;
  }
  if (expected.numel() == 0) return c;
  c.exact = is_exact_type(expected.scalar_type());
  if (c.exact) {
    std::ostringstream dtype;
    dtype << expected.scalar_type();
    c.dtype = dtype.str();
    if (at::isFloatingType(actual.scalar_type())) {
      std::ostringstream text;
      text << actual.scalar_type() << " output, expected " << expected.scalar_type();
      c.problem = text.str();
      c.outside = expected.numel();
      c.norm_rel_err = std::numeric_limits<double>::infinity();
      return c;
    }
    c.outside = (actual.to(at::kLong) != expected.to(at::kLong)).sum().item<int64_t>();
    c.decision_flips = c.outside;
    c.max_abs_diff = (actual.to(at::kDouble) - expected.to(at::kDouble)).abs().max().item<double>();
    c.norm_rel_err = norm_rel_error(actual, expected);
    return c;
  }
  const at::Tensor a = actual.to(at::kDouble), e = expected.to(at::kDouble);
  const at::Tensor both_nan = at::isnan(a) & at::isnan(e);
  const at::Tensor same_inf = at::isinf(e) & (a == e);
  const at::Tensor diff = (a - e).abs();
  // The pass criterion (numpy.testing.assert_allclose): elementwise.
  const at::Tensor close = (diff <= tol.atol + tol.rtol * e.abs()) | both_nan | same_inf;
  c.outside = (~close).sum().item<int64_t>();
  // Diagnostics: matching NaN / inf count as 0 difference, any other
  // non-finite difference (NaN against a number, inf against a number) as inf.
  const at::Tensor matched = both_nan | same_inf;
  at::Tensor d = at::where(matched, at::zeros_like(diff), diff);
  d = at::where(at::isnan(d), at::full_like(d, std::numeric_limits<double>::infinity()), d);
  // Relative difference where it means something: over elements whose
  // |expected| exceeds atol (at or below it, atol judges them).
  const at::Tensor scale = at::where(matched, at::ones_like(e), e.abs()).clamp_min(kTiny);
  const at::Tensor relative = (e.abs() > tol.atol) | matched;
  if (relative.any().item<bool>())
    c.max_rel_diff = at::where(relative, d / scale, at::zeros_like(d)).max().item<double>();
  const at::Tensor e_finite = at::where(at::isfinite(e), e, at::zeros_like(e));
  c.max_abs_diff = d.max().item<double>();
  c.norm_rel_err = d.norm().item<double>() / std::max(e_finite.norm().item<double>(), kTiny);
  return c;
}

// Ops that round activations to a quantisation grid: a value that sits on a
// rounding boundary moves by a whole step on the smallest difference upstream.
bool requantises(const Node& n) {
  static const std::set<std::string> ops = {"QuantizeLinear", "DynamicQuantizeLinear", "QLinearConv",
                                            "QLinearMatMul", "QLinearAdd", "QLinearMul", "QLinearSigmoid",
                                            "QLinearLeakyRelu", "QLinearAveragePool", "QLinearGlobalAveragePool",
                                            "QLinearConcat"};
  return ops.count(n.op_type) > 0;
}

int64_t count_requantisers(const Graph& g) {
  int64_t count = 0;
  for (const Node& n : g.nodes) {
    count += requantises(n);
    for (const auto& sub : n.subgraphs()) count += count_requantisers(*sub);
  }
  return count;
}

// The quantisation step of graph output `o`: 1 for an 8-bit integer output,
// the scale of the DequantizeLinear that produces a float output (a constant,
// per-tensor scale); 0 when the output has no step of its own.
double output_step(const Model& model, const Executor& executor, size_t o, const at::Tensor& value) {
  if (value.scalar_type() == at::kByte || value.scalar_type() == at::kChar) return 1.0;
  const Graph& g = model.graph;
  const int t = g.outputs[o];
  const int producer = g.tensors[size_t(t)].producer;
  if (producer < 0) return 0.0;
  const Node& n = g.nodes[size_t(producer)];
  if (n.op_type != "DequantizeLinear" || n.inputs.size() < 2 || n.inputs[1] < 0) return 0.0;
  if (!g.tensors[size_t(n.inputs[1])].is_constant()) return 0.0;
  const at::Tensor scale = executor.weights().get(&g, n.inputs[1]);
  if (!scale.defined() || scale.numel() != 1) return 0.0;
  return std::abs(scale.to(at::kCPU).to(at::kDouble).item<double>());
}


// The model's own rounding sensitivity on one data set: the executor's
// outputs when the same model runs with its inputs one ulp apart (two
// seeds), on other kernels (another summation order: every node as written
// on ATen and BLAS; the fused groups on oneDNN), and, for a quantised model,
// with the values its requantisers round a few ulps apart. Built once per
// data set, when an output needs it.
struct Reruns {
  std::vector<std::vector<at::Tensor>> outputs;
  std::vector<std::string> labels;
};

// The same model on other kernels than `main` runs it on: as written on
// ATen with BLAS, its approximated functions (exp, tanh, erf, sigmoid,
// softmax...) nudged by one ulp of their range; and fused with oneDNN's
// matmul (unless that is main's).
std::vector<std::pair<std::string, std::unique_ptr<Executor>>> other_kernels(const Model& model,
                                                                             const ExecOptions& main) {
  std::vector<std::pair<std::string, std::unique_ptr<Executor>>> out;
  ExecOptions aten = main;
  aten.fuse_cpu = aten.fuse_qdq = false;
  aten.gemm = GemmBackend::Blas;
  aten.nudge_approximations = true;
  out.emplace_back("every node as written on ATen and BLAS (another summation order), its transcendental "
                   "functions' outputs one ulp of max(|y|, 1) apart (another runtime's approximations)",
                   std::make_unique<Executor>(model, aten));
  ExecOptions onednn = main;
  onednn.fuse_cpu = onednn.fuse_qdq = true;
  onednn.gemm = GemmBackend::OneDnn;
  if (!main.fuse_cpu || main.gemm != GemmBackend::OneDnn)
    out.emplace_back("fused groups and Gemm/MatMul on oneDNN (another summation order)",
                     std::make_unique<Executor>(model, onednn));
  return out;
}

Reruns rerun(Executor& executor, const std::vector<std::pair<std::string, std::unique_ptr<Executor>>>& others,
             bool quantised, const std::vector<at::Tensor>& inputs) {
  Reruns r;
  for (const uint64_t seed : {uint64_t(0x51ab), uint64_t(0x7e11)}) {
    std::vector<at::Tensor> moved;
    for (const at::Tensor& t : inputs) moved.push_back(one_ulp_apart(t, seed));
    r.outputs.push_back(executor.run(moved));
    r.labels.push_back("inputs one ulp apart (seed " + std::to_string(seed) + ")");
  }
  for (const auto& [label, other] : others) {
    r.outputs.push_back(other->run(inputs));
    r.labels.push_back(label);
  }
  if (quantised) {
    executor.set_nudge_requantisers(true);
    r.outputs.push_back(executor.run(inputs));
    executor.set_nudge_requantisers(false);
    r.labels.push_back("the values its requantisers round a few ulps apart (relative 2^-21)");
  }
  return r;
}

// The second level on output o (c.outside > 0): explained or not, and why.
void judge(OutputCheck& c, size_t o, const Model& model, const Executor& executor, const at::Tensor& actual_in,
           const at::Tensor& expected, const Reruns& reruns, bool quantised, const Tolerance& tol) {
  c.judged = true;
  if (!c.problem.empty()) {
    c.why = "not comparable: " + c.problem;
    return;
  }
  const at::Tensor actual = actual_in.to(at::kCPU);
  if (c.exact) {
    // Decision flips: which of them a rerun makes too.
    const at::Tensor differ = actual.to(at::kLong) != expected.to(at::kLong);
    at::Tensor reproduced = at::zeros_like(differ);
    for (const auto& out : reruns.outputs)
      if (o < out.size() && out[o].sizes() == actual.sizes())
        reproduced = reproduced | (out[o].to(at::kCPU).to(at::kLong) != actual.to(at::kLong));
    c.flips_reproduced = (differ & reproduced).sum().item<int64_t>();
    c.explained = c.flips_reproduced == c.decision_flips;
    c.why = std::to_string(c.decision_flips) + " decision flip(s) (a comparison or argmax turned over); " +
            std::to_string(c.flips_reproduced) + " of them the model's own reruns flip too: " +
            (c.explained ? "within its rounding sensitivity" : "beyond its rounding sensitivity");
    return;
  }
  double own = 0;
  for (const auto& out : reruns.outputs)
    if (o < out.size() && out[o].sizes() == actual.sizes()) own = std::max(own, norm_rel_error(out[o], actual));
  c.sensitivity = own;
  bool one_step_all = false;
  std::ostringstream why;
  if (quantised) {
    const double step = output_step(model, executor, o, actual);
    const at::Tensor a = actual.to(at::kDouble), e = expected.to(at::kDouble);
    const at::Tensor diff = (a - e).abs();
    const at::Tensor differing = diff > (tol.atol + tol.rtol * e.abs());
    const int64_t n_differing = differing.sum().item<int64_t>();
    if (step > 0 && n_differing > 0) {
      c.quant_step = step;
      c.one_step_off = (differing & ((diff - step).abs() <= 1e-3 * step)).sum().item<int64_t>();
      one_step_all = c.one_step_off == n_differing;
      why << c.one_step_off << " of " << n_differing << " differing elements ("
          << 100.0 * double(c.one_step_off) / double(n_differing) << "%) are exactly one quantisation step (" << step
          << ") off; ";
    } else {
      why << "no quantisation step of its own (a float output after further ops); ";
    }
  }
  c.explained = one_step_all || (own > 0 && c.norm_rel_err <= kSensitivityFactor * own);
  why << "its own reruns move it by norm rel err up to " << own << "; the reference is " << c.norm_rel_err
      << " away: ";
  if (one_step_all) why << "every difference is one step: values on a rounding boundary, explained";
  else if (c.explained)
    why << "within the model's own rounding sensitivity (at most " << kSensitivityFactor
        << " x what its reruns move it)" << (quantised ? ", explained by requantisation" : ", explained");
  else
    why << "beyond the model's own rounding sensitivity (more than " << kSensitivityFactor
        << " x what its reruns move it)" << (quantised ? ": not explained by requantisation" : ": not explained");
  c.why = why.str();
}

// Of two dtypes, the coarser reduced float one: bfloat16 (epsilon 2^-7) over
// float16 (2^-10); Undefined when neither is one.
DType coarser_reduced(DType a, DType b) {
  if (a == DType::BFloat16 || b == DType::BFloat16) return DType::BFloat16;
  if (a == DType::Float16 || b == DType::Float16) return DType::Float16;
  return DType::Undefined;
}

// The coarsest float16/bfloat16 dtype of g's tensors and its subgraphs'.
DType coarsest_reduced_dtype(const Graph& g) {
  DType coarsest = DType::Undefined;
  for (const Tensor& t : g.tensors) coarsest = coarser_reduced(coarsest, t.dtype);
  for (const Node& node : g.nodes)
    for (const auto& sub : node.subgraphs())
      coarsest = coarser_reduced(coarsest, coarsest_reduced_dtype(*sub));
  return coarsest;
}

// Nodes other than Constant, in the main graph: one means a single-op case.
int64_t op_nodes(const Graph& g) {
  return std::count_if(g.nodes.begin(), g.nodes.end(),
                       [](const Node& n) { return !(n.op_type == "Constant" && n.domain.empty()); });
}

}  // namespace

Tolerance default_tolerance(const Model& model) {
  const DType reduced = coarsest_reduced_dtype(model.graph);
  if (reduced == DType::Undefined) return {1e-3, 1e-7, "ONNX's runner's tolerances"};
  const bool bf16 = reduced == DType::BFloat16;
  const double eps = std::ldexp(1.0, bf16 ? -7 : -10);
  return {10 * eps, 10 * eps,
          std::string("the model computes in ") +
              (bf16 ? "bfloat16: 10 x its epsilon 2^-7" : "float16: 10 x its epsilon 2^-10")};
}

namespace {

void run_case(const fs::path& dir, const VerifyOptions& options, VerifyRecord& record) {
  const fs::path model_path = dir / "model.onnx";
  // The model file, read once: its declared values (parsed) and the IR the
  // executor runs (bound to the data's input shapes from the same bytes).
  const onnx::ModelProto proto = read_model(model_path);
  record.unsupported = unsupported_in(proto);
  if (!record.unsupported.empty()) {
    record.verdict = "cannot run";
    record.exit_code = int(VerifyStatus::CannotRun);
    return;
  }
  // User-fed graph inputs, in order (IR < 4 files list initializers as inputs too).
  std::set<std::string> initializers;
  for (const auto& init : proto.graph().initializer()) initializers.insert(init.name());
  std::vector<const onnx::ValueInfoProto*> graph_inputs, graph_outputs;
  std::vector<std::string> input_names;
  for (const auto& v : proto.graph().input())
    if (!initializers.count(v.name())) {
      graph_inputs.push_back(&v);
      input_names.push_back(v.name());
    }
  for (const auto& v : proto.graph().output()) graph_outputs.push_back(&v);

  const auto sets = data_sets(dir);
  if (sets.empty()) throw Error(ErrorKind::Input, "no test_data_set_N folder", dir.string());
  // Every file of every set is checked (names, headers, bytes, dims against
  // the model) before anything runs.
  std::vector<std::vector<at::Tensor>> set_inputs, set_outputs;
  for (const auto& set : sets) {
    std::vector<at::Tensor> ins, outs;
    const auto in_files = numbered(set, "input", graph_inputs);
    const auto out_files = numbered(set, "output", graph_outputs);
    for (size_t i = 0; i < in_files.size(); ++i)
      ins.push_back(as_declared(read_tensor(in_files[i], *graph_inputs[i], "input '" + graph_inputs[i]->name() + "'"),
                                *graph_inputs[i]));
    for (size_t o = 0; o < out_files.size(); ++o)
      outs.push_back(
          as_declared(read_tensor(out_files[o], *graph_outputs[o], "output '" + graph_outputs[o]->name() + "'"),
                      *graph_outputs[o]));
    set_inputs.push_back(std::move(ins));
    set_outputs.push_back(std::move(outs));
  }

  LoadOptions load;
  load.allow_custom_domains = options.allow_custom_domains;
  for (size_t i = 0; i < input_names.size(); ++i) {
    const auto sizes = set_inputs[0][i].sizes();
    load.input_shapes[input_names[i]] = std::vector<int64_t>(sizes.begin(), sizes.end());
  }
  const std::string bytes = read_file(model_path);
  std::error_code ec;
  const std::string base = fs::absolute(model_path, ec).parent_path().string();
  const Model model = loader::bind_model_source(
      *loader::read_model_bytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), base, model_path.string()),
      load);
  // The model's own dtypes, as profile runs it by default: a float16 model
  // computes in float16 where ATen has the kernel, in fp32 where not.
  ExecOptions exec;
  exec.device = at::kCPU;
  exec.float_dtype = at::ScalarType::Undefined;
  exec.fuse_qdq = options.fuse;
  exec.fuse_cpu = options.fuse;
  exec.gemm = options.gemm;
  Executor executor(model, exec);
  // Built when a rerun needs them.
  std::optional<std::vector<std::pair<std::string, std::unique_ptr<Executor>>>> others;

  Tolerance tolerance = default_tolerance(model);
  if (options.rtol || options.atol) {
    tolerance.source = (options.rtol && options.atol ? "given" : "given; the other: " + tolerance.source);
    tolerance.rtol = options.rtol.value_or(tolerance.rtol);
    tolerance.atol = options.atol.value_or(tolerance.atol);
  }
  record.rtol = tolerance.rtol;
  record.atol = tolerance.atol;
  record.tolerance_source = tolerance.source;
  const bool whole_model = options.criterion == VerifyCriterion::Model ||
                           (options.criterion == VerifyCriterion::Auto && op_nodes(model.graph) > 1);
  record.mode = whole_model ? "model" : "elementwise";
  record.requantisers = count_requantisers(model.graph);
  record.quantised = record.requantisers > 0;

  for (size_t s = 0; s < sets.size(); ++s) {
    const auto outputs = executor.run(set_inputs[s]);
    if (s == 0)
      for (const auto& notice : upcast_notices(executor.upcasts(), at::kCPU)) record.notices.push_back(notice);
    if (options.shapes && s == 0)
      for (size_t o = 0; o < outputs.size() && int(o) < proto.graph().output_size(); ++o)
        options.shapes->push_back({proto.graph().output(int(o)).name(), outputs[o].sizes().vec()});
    const auto& expected = set_outputs[s];
    if (outputs.size() != expected.size())
      throw Error(ErrorKind::Runtime, sets[s].filename().string() + ": " + std::to_string(outputs.size()) +
                                          " outputs, expected " + std::to_string(expected.size()));
    const size_t first = record.outputs.size();
    bool any_outside = false;
    for (size_t o = 0; o < outputs.size(); ++o) {
      OutputCheck c = compare(outputs[o], expected[o], tolerance);
      c.data_set = sets[s].filename().string();
      c.index = int(o);
      c.name = proto.graph().output(int(o)).name();
      record.outside += c.outside;
      any_outside = any_outside || c.outside > 0;
      record.outputs.push_back(std::move(c));
    }
    if (!any_outside || !whole_model) continue;
    if (!others) others = other_kernels(model, exec);
    const Reruns reruns = rerun(executor, *others, record.quantised, set_inputs[s]);
    if (record.reruns.empty()) record.reruns = reruns.labels;
    for (size_t o = 0; o < outputs.size(); ++o) {
      OutputCheck& c = record.outputs[first + o];
      if (c.outside == 0) continue;
      judge(c, o, model, executor, outputs[o], expected[o], reruns, record.quantised, tolerance);
      if (c.explained) record.explained += c.outside;
    }
  }
  if (record.outside == 0) {
    record.verdict = "pass";
  } else if (record.explained == record.outside) {
    record.verdict = record.quantised ? "pass (quantised model)" : "pass (rounding sensitivity)";
  } else {
    record.verdict = "fail";
  }
  record.exit_code = int(record.verdict == "fail" ? VerifyStatus::Mismatch : VerifyStatus::Pass);
}

}  // namespace

VerifyRecord verify_case(const std::string& case_dir, const VerifyOptions& options) {
  VerifyRecord record;
  record.case_dir = case_dir;
  auto failed = [&](const std::string& why, VerifyStatus status) {
    record.error = why;
    record.verdict = status == VerifyStatus::CannotRun ? "cannot run" : "fail";
    record.exit_code = int(status);
  };
  try {
    run_case(fs::path(case_dir), options, record);
  } catch (const Error& e) {
    // One line: the file, the node and op where known, what is wrong.
    failed(e.what(), e.kind() == ErrorKind::Runtime ? VerifyStatus::Mismatch : VerifyStatus::CannotRun);
  } catch (const std::bad_alloc&) {
    failed("out of memory", VerifyStatus::CannotRun);
  } catch (const fs::filesystem_error& e) {
    failed(e.what(), VerifyStatus::CannotRun);
  } catch (const std::exception& e) {
    failed(first_line(e), VerifyStatus::Mismatch);
  }
  return record;
}

}  // namespace modelstat::profiler

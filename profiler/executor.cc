// Executor: runs the graph (and, for If, Loop and Scan, their subgraphs) node by node with the registered
// ATen executors, keeping only live activations (each is released after its last consumer, so memory use is
// what a real runtime would need, not the sum of all activations). A node whose kernel has no fp16/bf16
// version on the device runs in fp32, its inputs cast up and its outputs back (Upcasts).
#include "profiler/executor.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <set>

#include "modelstat/error.hpp"
#include "modelstat/lifetimes.hpp"
#include "profiler/device.hpp"
#include "profiler/ops/exec_helpers.hpp"
#include "profiler/ops/exec_rule.hpp"
#include "profiler/ops/int8_kernels.hpp"
#include "analyzer/cpu_fusion.hpp"
#include "profiler/ops/fp32_conv.hpp"
#include "profiler/qdq_fusion.hpp"

namespace modelstat::profiler {

namespace {

bool is_constant_node(const Node& node) { return node.op_type == "Constant" && node.domain.empty(); }

// A Constant node whose value the weight store already holds needs no executor.
bool constant_preloaded(const Graph& g, const Node& node, const WeightStore& weights) {
  return is_constant_node(node) && node.outputs.size() == 1 && weights.get(&g, node.outputs[0]).defined();
}

// Exclusive upper bound for an integer graph input: the vocabulary size when
// it indexes a constant table (Gather's indices, as token ids do), else 2.
int64_t integer_input_bound(const Graph& g, int input, const WeightStore& weights) {
  int64_t bound = std::numeric_limits<int64_t>::max();
  for (int consumer : g.tensors[size_t(input)].consumers) {
    const Node& node = g.nodes[size_t(consumer)];
    if (node.op_type != "Gather" || node.inputs.size() < 2 || node.inputs[1] != input || node.inputs[0] < 0) continue;
    const at::Tensor& table = weights.get(&g, node.inputs[0]);
    const Tensor& data = g.tensors[size_t(node.inputs[0])];
    const int64_t axis = node.attr_int("axis", 0);
    if (!data.is_constant() || !table.defined() || table.dim() == 0) continue;
    const int64_t a = axis < 0 ? axis + table.dim() : axis;
    if (a >= 0 && a < table.dim() && table.size(a) > 0) bound = std::min(bound, table.size(a));
  }
  return bound == std::numeric_limits<int64_t>::max() ? 2 : bound;
}

// The value an integer one-element graph input is compared with (Equal)
// against a one-element integer constant, as a mode switch is (Silero VAD's
// `sr == 16000` selects the If branch for 16 kHz input): the model then runs
// the branch it takes for that value rather than the one a random 0 or 1
// selects. nullopt when no reader does so.
std::optional<int64_t> compared_constant(const Graph& g, int input) {
  const Tensor& t = g.tensors[size_t(input)];
  if (t.shape.element_count().value_or(0) != 1) return std::nullopt;
  for (int consumer : t.consumers) {
    const Node& node = g.nodes[size_t(consumer)];
    if (node.op_type != "Equal" || !node.domain.empty() || node.inputs.size() != 2) continue;
    const int other = node.inputs[0] == input ? node.inputs[1] : node.inputs[1] == input ? node.inputs[0] : -1;
    if (other < 0) continue;
    const Tensor& c = g.tensors[size_t(other)];
    if (c.is_constant() && c.has_int_values && c.int_values.size() == 1) return c.int_values[0];
  }
  return std::nullopt;
}

// The ATen type a "not implemented for 'Half'" message names, as the ONNX
// dtype ("float16"); empty when the message names none.
std::string dtype_in_message(const std::string& message) {
  const auto open = message.find("for '");
  if (open == std::string::npos) return {};
  const auto close = message.find('\'', open + 5);
  if (close == std::string::npos) return {};
  const std::string aten = message.substr(open + 5, close - open - 5);
  for (int k = 0; k < int(at::ScalarType::NumOptions); ++k) {
    const auto type = at::ScalarType(k);
    if (aten == c10::toString(type) && dtype_of(type) != DType::Undefined) return dtype_name(dtype_of(type));
  }
  return aten;
}

// ATen's dispatch macros throw '"kernel" not implemented for 'Half'' (or
// 'BFloat16') when a kernel has no version for that dtype.
bool missing_reduced_kernel(const c10::Error& e) {
  const char* what = e.what_without_backtrace();
  return std::strstr(what, "not implemented for 'Half'") ||
         std::strstr(what, "not implemented for 'BFloat16'");
}

// The dtype of a node's first fp16/bf16 input; Undefined when it has none.
at::ScalarType reduced_input_dtype(const std::vector<at::Tensor>& args) {
  for (const at::Tensor& t : args)
    if (t.defined() && is_reduced_float(t.scalar_type())) return t.scalar_type();
  return at::ScalarType::Undefined;
}

}  // namespace

std::vector<std::string> upcast_notices(const Upcasts& upcasts, const at::Device& device) {
  std::vector<std::string> notices;
  for (const auto& [dtype, ops] : upcasts.nodes_by_dtype) {
    std::vector<std::pair<std::string, int64_t>> sorted(ops.begin(), ops.end());
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    std::string list;
    for (const auto& [op, count] : sorted)
      list += (list.empty() ? "" : ", ") + op + " x" + std::to_string(count);
    notices.push_back("ran in fp32 (no " + dtype + " " + (device.is_cuda() ? "CUDA" : "CPU") +
                      " kernel in this LibTorch; inputs cast from " + dtype +
                      " and outputs back, inside each node's time): " + list);
  }
  return notices;
}

Error aten_error(const c10::Error& e, const Node& node, const at::Device& device) {
  std::string what = e.what_without_backtrace();
  what = what.substr(0, what.find('\n'));
  if (is_out_of_memory(e))
    return Error(ErrorKind::CannotRun, "out of memory: " + what + "; run a smaller batch", {}, node.name, node.op_type);
  // ATen has no kernel for this dtype on this device (its dispatch macros
  // throw '"kernel" not implemented for 'Type''): the model is valid but this
  // executor cannot run it, and the user can do something about it.
  if (what.find("not implemented for") != std::string::npos) {
    const std::string dtype = dtype_in_message(what);
    const std::string on = device.is_cuda() ? "CUDA" : "CPU";
    const bool reduced = dtype == "float16" || dtype == "bfloat16";
    const std::string advice = reduced && !device.is_cuda()
                                   ? "run it on CUDA (profile --device cuda) or convert the model to float32"
                                   : "convert the model so that this op computes in float32";
    return Error(ErrorKind::CannotRun,
                 "op " + node.op_type + " cannot run on the " + on + " in " + (dtype.empty() ? "this dtype" : dtype) +
                     " (LibTorch has no kernel for it: " + what + "); " + advice,
                 {}, node.name, node.op_type);
  }
  return Error(ErrorKind::Runtime, what, {}, node.name, node.op_type);
}

namespace {

// Nodes (of g and, recursively, of its subgraphs) whose op has no executor.
void find_unsupported(const Model& model, const Graph& g, const WeightStore& weights, const Node*& first,
                      std::set<std::string>& unsupported) {
  for (const Node& node : g.nodes) {
    if (!constant_preloaded(g, node, weights) && !find_executor(node.domain, node.op_type, model.opset_version(node.domain))) {
      if (!first) first = &node;
      unsupported.insert(node.domain.empty() ? node.op_type : node.domain + "." + node.op_type);
    }
    for (const auto& sub : node.subgraphs()) find_unsupported(model, *sub, weights, first, unsupported);
  }
}

// The values of g's outputs once its nodes have run; `what` names an output
// in the error for one that was not produced ("graph output").
std::vector<at::Tensor> produced_outputs(const Graph& g, const std::vector<at::Tensor>& env, const std::string& what) {
  std::vector<at::Tensor> outputs;
  outputs.reserve(g.outputs.size());
  for (int t : g.outputs) {
    if (!env[size_t(t)].defined())
      throw Error(ErrorKind::Runtime, what + " '" + g.tensors[size_t(t)].name + "' was not produced");
    outputs.push_back(env[size_t(t)]);
  }
  return outputs;
}

// "48 Gemm/MatMul with constant weights: 46 on oneDNN matmul with prepacked
// weights, 2 on BLAS, whichever measured faster for the shape (...)".
std::string gemm_notice(int64_t kernels, int64_t onednn, int64_t blas, GemmBackend backend, int64_t measured,
                        int64_t cached, const GemmChoiceSummary& summary,
                        const std::map<std::string, int64_t>& absorbed_by_op) {
  std::string text = std::to_string(kernels) + " Gemm/MatMul with constant weights";
  const int64_t later = kernels - onednn - blas;
  text += ": " + std::to_string(onednn) + " ran on oneDNN matmul with prepacked weights, " + std::to_string(blas) +
          " on BLAS";
  if (later > 0) text += ", " + std::to_string(later) + " chosen at their first run (shape not bound at load)";
  if (backend == GemmBackend::Auto) {
    text += ", whichever measured faster for the shape (" + std::to_string(measured) + " shapes measured now, " +
            std::to_string(cached) + " read from the per-machine cache" +
            (summary.cache_file.empty() ? " (none: " + summary.cache_error + ")" : " " + summary.cache_file) +
            "; --gemm onednn|blas forces one)";
  } else {
    text += std::string(" (--gemm ") + gemm_backend_name(backend) + ")";
  }
  if (!absorbed_by_op.empty()) {
    std::string list;
    for (const auto& [op, count] : absorbed_by_op) list += (list.empty() ? "" : ", ") + std::to_string(count) + " " + op;
    text += "; fused into them (bias Add, activations, GELU, residual Add): " + list +
            " absorbed: their rows take no time, their work is in the Gemm/MatMul's";
  }
  return text;
}

}  // namespace

// What a control-flow node's executor runs its subgraphs through: the values
// of the scope the node runs in, by tensor index.
class Executor::ScopeRunner final : public SubgraphRunner {
 public:
  ScopeRunner(const Executor& executor, const std::vector<at::Tensor>& scope, const NodeHook* subgraph_hook)
      : executor_(executor), scope_(scope), subgraph_hook_(subgraph_hook) {}
  std::vector<at::Tensor> run(const Graph& body, const std::vector<at::Tensor>& inputs) const override {
    return executor_.run_subgraph(body, scope_, inputs, subgraph_hook_);
  }

 private:
  const Executor& executor_;
  const std::vector<at::Tensor>& scope_;
  const NodeHook* subgraph_hook_;  // the run's (Executor::run), or null
};

Executor::Executor(const Model& model, const ExecOptions& options)
    : model_(model), options_(options), weights_(model, options) {
  const Graph& g = model.graph;
  const Node* first = nullptr;
  std::set<std::string> unsupported;
  find_unsupported(model, g, weights_, first, unsupported);
  if (first) {
    std::string list;
    for (const auto& op : unsupported) list += (list.empty() ? "" : ", ") + op;
    throw Error(ErrorKind::Input,
                "op " + first->op_type + " has no executor (node '" + first->name + "'); ops without one: " + list,
                {}, first->name, first->op_type);
  }

  // ATen has no string tensors: a graph fed text (a tokenizer inside the
  // model) cannot run here, whatever its ops.
  for (int id : g.inputs) {
    const Tensor& t = g.tensors[size_t(id)];
    if (t.dtype != DType::String) continue;
    const Node* reader = t.consumers.empty() ? nullptr : &g.nodes[size_t(t.consumers[0])];
    throw Error(ErrorKind::CannotRun,
                "graph input '" + t.name + "' is a string tensor, which LibTorch cannot hold; run the string "
                "processing (e.g. the tokenizer) outside the model and profile the graph that takes its numeric output",
                {}, reader ? reader->name : std::string(), reader ? reader->op_type : std::string());
  }

  const GemmChoiceSummary choices_before = gemm_choice_summary();
  top_ = plan_graph(g, nullptr);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& [label, sub] : g.nodes[i].named_subgraphs())
      plan_subgraph(*sub, g, g.nodes[i].name, label, int(i), -1, 1);
  if (const std::string notice = qdq_fusion_notice(fused_by_op_, absorbed_); !notice.empty())
    fusion_notices_.push_back(notice);
  if (const std::string notice = cpu_fusion_notice(conv_groups_, conv_absorbed_by_op_); !notice.empty())
    fusion_notices_.push_back(notice);
  if (matmul_kernels_ > 0) {
    const GemmChoiceSummary after = gemm_choice_summary();
    int64_t onednn = 0, blas = 0;
    auto count = [&](const GraphPlan& plan) {
      for (const NodeStep& step : plan.steps)
        if (step.matmul_kernel && step.matmul_kernel->implementation() != "none")
          ++(step.matmul_kernel->implementation().rfind("onednn", 0) == 0 ? onednn : blas);
    };
    count(top_);
    for (const auto& [graph, plan] : subplans_) count(plan);
    fusion_notices_.push_back(gemm_notice(matmul_kernels_, onednn, blas, options_.gemm,
                                          after.measured - choices_before.measured,
                                          after.cached - choices_before.cached, after, matmul_absorbed_by_op_));
  }
  if (layer_norm_groups_ > 0)
    fusion_notices_.push_back(std::to_string(layer_norm_groups_) +
                              " LayerNorm written out (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add) "
                              "ran as one at::layer_norm each, on its first ReduceMean's row; --fusion off runs "
                              "every node as written");
  if (gelu_groups_ > 0)
    fusion_notices_.push_back(std::to_string(gelu_groups_) +
                              " GELU written out (Div by sqrt 2, Erf, Add 1, Mul by x, Mul by 0.5) ran as one erf-GELU "
                              "kernel each, on its Div's row; --fusion off runs every node as written");
}

std::string Executor::fused_into(int k) const {
  const Graph& g = model_.graph;
  if (k < 0 || size_t(k) >= top_.steps.size() || !top_.steps[size_t(k)].absorbed) return {};
  if (const int head = top_.steps[size_t(k)].fused_head; head >= 0) return g.nodes[size_t(head)].name;
  const auto& readers = g.tensors[size_t(g.nodes[size_t(k)].outputs[0])].consumers;
  return readers.empty() ? std::string() : g.nodes[size_t(readers.front())].name;
}

std::vector<std::string> Executor::fused_members(int k) const {
  if (k < 0 || size_t(k) >= top_.steps.size()) return {};
  std::vector<std::string> names;
  for (int m : top_.steps[size_t(k)].fused_members) names.push_back(model_.graph.nodes[size_t(m)].name);
  return names;
}

std::string Executor::fused_kernel(int k) const {
  if (k >= 0 && size_t(k) < top_.steps.size() && top_.steps[size_t(k)].gelu) return "aten::gelu";
  if (k >= 0 && size_t(k) < top_.steps.size() && top_.steps[size_t(k)].layer_norm) return "aten::layer_norm";
  if (k >= 0 && size_t(k) < top_.steps.size() && top_.steps[size_t(k)].matmul_kernel)
    return top_.steps[size_t(k)].matmul_kernel->implementation();
  if (k < 0 || size_t(k) >= top_.steps.size() || !top_.steps[size_t(k)].conv_kernel) return {};
  return top_.steps[size_t(k)].conv_kernel->implementation();
}

bool Executor::group_taken(const GraphPlan& plan, int head, const std::vector<int>& members) {
  bool taken = !plan.steps[size_t(head)].fused_inputs.empty() || plan.steps[size_t(head)].absorbed;
  for (int m : members) taken = taken || plan.steps[size_t(m)].absorbed;
  return taken;
}

void Executor::absorb_group(const Graph& g, GraphPlan& plan, int head, std::vector<int> inputs, int output,
                            const std::vector<int>& members, std::vector<bool>& fused_read,
                            std::map<std::string, int64_t>* by_op) {
  NodeStep& step = plan.steps[size_t(head)];
  step.fused_inputs = std::move(inputs);
  step.fused_output = output;
  step.fused_members = members;
  for (int t : step.fused_inputs)
    if (t >= 0) fused_read[size_t(t)] = true;
  for (int m : members) {
    plan.steps[size_t(m)].absorbed = true;
    plan.steps[size_t(m)].fused_head = head;
    if (by_op) ++(*by_op)[g.nodes[size_t(m)].op_type];
  }
}

bool Executor::constant_is(const Graph& g, int t, double expected) const {
  const at::Tensor& v = weights_.get(&g, t);
  return v.defined() && v.numel() == 1 && std::abs(v.to(at::kDouble).item<double>() - expected) <= 1e-6 * expected;
}

void Executor::plan_conv_groups(const Graph& g, GraphPlan& plan, std::vector<bool>& fused_read) {
  const bool fp32 = options_.float_dtype == at::kFloat || options_.float_dtype == at::ScalarType::Undefined;
  if (!options_.device.is_cpu() || !fp32) return;
  if (!options_.fuse_cpu && options_.gemm == GemmBackend::Blas) return;
  const CpuFusionPlan fusion = plan_cpu_fusion(g, model_);
  plan_matmul_groups(g, fusion, plan, fused_read);
  for (const ConvGroup& group : fusion.groups) {
    if (!options_.fuse_cpu) break;
    // Nodes QDQ fusion took already stay as they are.
    if (group_taken(plan, group.conv, group.members)) continue;
    const Node& conv = g.nodes[size_t(group.conv)];
    std::shared_ptr<Fp32ConvKernel> kernel;
    int residual = -1;
    try {
      // Weights through Identity chains (constant_source) are the initializers they forward.
      auto constant = [&](int t) -> const at::Tensor& { return weights_.get(&g, constant_source(g, t)); };
      at::Tensor weight = constant(conv.inputs[1]).to(at::kFloat);
      at::Tensor bias = conv.inputs.size() > 2 && conv.inputs[2] >= 0 ? constant(conv.inputs[2]).to(at::kFloat)
                                                                       : at::Tensor();
      if (!weight.defined() || weight.dim() != 4) continue;
      if (group.batch_norm >= 0) {
        const Node& bn = g.nodes[size_t(group.batch_norm)];
        fold_batch_norm(weight, bias, constant(bn.inputs[1]), constant(bn.inputs[2]), constant(bn.inputs[3]),
                        constant(bn.inputs[4]), bn.attr_float("epsilon", 1e-5));
      }
      std::vector<ResolvedPostOp> ops;
      for (const FusedPostOp& op : group.post_ops) {
        ResolvedPostOp r{op.kind, op.alpha, op.beta};
        if (op.clip_min >= 0) r.alpha = constant(op.clip_min).to(at::kFloat).item<float>();
        if (op.clip_max >= 0) r.beta = constant(op.clip_max).to(at::kFloat).item<float>();
        if (op.kind == FusedPostOp::Kind::AddResidual) residual = op.residual;
        ops.push_back(r);
      }
      kernel = std::make_shared<Fp32ConvKernel>(std::move(weight), std::move(bias), conv.attr_int("group", 1),
                                                      std::move(ops));
    } catch (const std::exception&) {
      continue;  // a constant the weight store does not hold: the nodes run as written
    }
    // Pack the weights now when the graph binds the input's shape (the run then builds nothing).
    const Tensor& x = g.tensors[size_t(conv.inputs[0])];
    if (x.shape.fully_known() && x.shape.dims.size() == 4) {
      try {
        const at::Tensor probe = at::empty(known_dims(x.shape, "input of " + conv.name), at::kFloat);
        ExecContext ctx(g, conv, model_.opset_version(""), {probe}, at::kCPU, at::kFloat);
        kernel->prepare(probe.sizes().vec(),
                                resolve_window(ctx, attr_ints_or(conv, "kernel_shape", kernel->kernel_spatial()),
                                               spatial_dims(probe)));
      } catch (const std::exception&) {
        // A window the node's own run will refuse with its error: built (and refused) then.
      }
    }
    plan.steps[size_t(group.conv)].conv_kernel = std::move(kernel);
    absorb_group(g, plan, group.conv, {conv.inputs[0], residual}, group.output, group.members, fused_read,
                 &conv_absorbed_by_op_);
    ++conv_groups_;
  }
  // GELU written out: one at::gelu (erf form) where the constants are sqrt 2, 1 and 0.5.
  for (const GeluGroup& gelu : fusion.gelus) {
    if (!options_.fuse_cpu) break;
    if (group_taken(plan, gelu.head, gelu.members) || !constant_is(g, gelu.divisor, std::sqrt(2.0)) ||
        !constant_is(g, gelu.one, 1.0) || !constant_is(g, gelu.half, 0.5))
      continue;
    plan.steps[size_t(gelu.head)].gelu = true;
    absorb_group(g, plan, gelu.head, {gelu.input}, gelu.output, gelu.members, fused_read, nullptr);
    ++gelu_groups_;
  }
  // LayerNorm written out: one at::layer_norm where the exponent is 2 and eps a positive constant.
  for (const LayerNormGroup& ln : fusion.layer_norms) {
    if (!options_.fuse_cpu) break;
    if (group_taken(plan, ln.head, ln.members) || (ln.exponent >= 0 && !constant_is(g, ln.exponent, 2.0))) continue;
    auto step = std::make_shared<NodeStep::LayerNorm>();
    try {
      const at::Tensor& eps = weights_.get(&g, ln.epsilon);
      if (!eps.defined() || eps.numel() != 1) continue;
      step->epsilon = eps.to(at::kDouble).item<double>();
      if (!(step->epsilon > 0) || !std::isfinite(step->epsilon)) continue;
      if (ln.scale >= 0) step->scale = weights_.get(&g, ln.scale).to(at::kFloat).contiguous();
      if (ln.bias >= 0) step->bias = weights_.get(&g, ln.bias).to(at::kFloat).contiguous();
    } catch (const std::exception&) {
      continue;  // a constant the weight store does not hold: the nodes run as written
    }
    step->channels = ln.channels;
    plan.steps[size_t(ln.head)].layer_norm = std::move(step);
    absorb_group(g, plan, ln.head, {ln.input}, ln.output, ln.members, fused_read, nullptr);
    ++layer_norm_groups_;
  }
  // The constants only the groups read (weights, bias, BatchNormalization
  // statistics) live on in the kernels' packed form: the store drops them.
  std::set<int> candidates;
  for (const MatMulGroup& group : fusion.matmuls)
    if (plan.steps[size_t(group.head)].matmul_kernel) {
      candidates.insert(g.nodes[size_t(group.head)].inputs[1]);
      if (group.bias >= 0) candidates.insert(group.bias);
    }
  for (const ConvGroup& group : fusion.groups) {
    if (!plan.steps[size_t(group.conv)].conv_kernel) continue;
    const Node& conv = g.nodes[size_t(group.conv)];
    for (size_t k = 1; k < conv.inputs.size(); ++k) candidates.insert(conv.inputs[k]);
    if (group.batch_norm >= 0)
      for (size_t k = 1; k < g.nodes[size_t(group.batch_norm)].inputs.size(); ++k)
        candidates.insert(g.nodes[size_t(group.batch_norm)].inputs[k]);
  }
  std::vector<bool> graph_output(g.tensors.size(), false);
  for (int t : g.outputs)
    if (t >= 0) graph_output[size_t(t)] = true;
  for (int t : candidates) {
    if (t < 0 || graph_output[size_t(t)] || !g.tensors[size_t(t)].is_constant()) continue;
    bool only_groups = true;
    for (int c : g.tensors[size_t(t)].consumers) {
      const NodeStep& step = plan.steps[size_t(c)];
      const bool head = (step.conv_kernel || step.matmul_kernel) &&
                        std::find(step.fused_inputs.begin(), step.fused_inputs.end(), t) == step.fused_inputs.end();
      only_groups = only_groups && (head || (step.absorbed && step.fused_head >= 0));
    }
    if (only_groups) weights_.release(&g, t);
  }
}

void Executor::plan_matmul_groups(const Graph& g, const CpuFusionPlan& fusion, GraphPlan& plan,
                                  std::vector<bool>& fused_read) {
  const bool fuse = options_.fuse_cpu;
  for (const MatMulGroup& group : fusion.matmuls) {
    if (group_taken(plan, group.head, group.members)) continue;
    const Node& node = g.nodes[size_t(group.head)];
    const bool bias_add = fuse && group.bias_add >= 0;
    std::shared_ptr<Fp32MatmulKernel> kernel;
    std::vector<int> members;
    int output = bias_add ? group.bias_output : node.outputs[0];
    int residual = -1;
    try {
      at::Tensor weight = weights_.get(&g, group.weight).to(at::kFloat);
      if (!weight.defined() || weight.dim() != 2) continue;
      if (group.transposed) weight = weight.t();
      const bool gemm = node.op_type == "Gemm";
      const double alpha = gemm ? node.attr_float("alpha", 1.0) : 1.0;
      if (alpha != 1.0) weight = weight * alpha;
      at::Tensor bias;
      if (group.bias >= 0 && (group.bias_add < 0 || bias_add)) {
        bias = weights_.get(&g, group.bias).to(at::kFloat).reshape({-1});
        const double beta = gemm && group.bias_add < 0 ? node.attr_float("beta", 1.0) : 1.0;
        if (beta != 1.0) bias = bias * beta;
      }
      if (bias_add) members.push_back(group.bias_add);
      std::vector<ResolvedPostOp> ops;
      for (size_t k = 0; fuse && k < group.post_ops.size(); ++k) {
        const FusedPostOp& op = group.post_ops[k];
        ResolvedPostOp r{op.kind, op.alpha, op.beta};
        if (op.clip_min >= 0) r.alpha = weights_.get(&g, constant_source(g, op.clip_min)).to(at::kFloat).item<float>();
        if (op.clip_max >= 0) r.beta = weights_.get(&g, constant_source(g, op.clip_max)).to(at::kFloat).item<float>();
        // GELU written out joins only with the constants of GELU: else the group ends before it.
        if (op.gelu_divisor >= 0 && (!constant_is(g, op.gelu_divisor, std::sqrt(2.0)) ||
                                     !constant_is(g, op.gelu_one, 1.0) || !constant_is(g, op.gelu_half, 0.5)))
          break;
        if (op.kind == FusedPostOp::Kind::AddResidual) residual = op.residual;
        ops.push_back(r);
        members.insert(members.end(), group.stage_members[k].begin(), group.stage_members[k].end());
        output = group.stage_outputs[k];
      }
      kernel = std::make_shared<Fp32MatmulKernel>(std::move(weight), std::move(bias), std::move(ops), options_.gemm);
    } catch (const std::exception&) {
      continue;  // a constant the weight store does not hold: the nodes run as written
    }
    // Choose the kernel now when the graph binds A's shape (the run then builds nothing).
    const Tensor& a = g.tensors[size_t(node.inputs[0])];
    if (a.shape.fully_known() && a.shape.dims.size() >= 2) {
      int64_t rows = 1;
      for (size_t d = 0; d + 1 < a.shape.dims.size(); ++d) rows *= a.shape.dims[d].value;
      if (a.shape.dims.back().value == kernel->k()) kernel->prepare(rows);
    }
    plan.steps[size_t(group.head)].matmul_kernel = std::move(kernel);
    std::sort(members.begin(), members.end());
    absorb_group(g, plan, group.head, {node.inputs[0], residual}, output, members, fused_read,
                 &matmul_absorbed_by_op_);
    ++matmul_kernels_;
  }
}

void Executor::run_matmul_group(const Graph& g, const Node& node, const NodeStep& step,
                                std::vector<at::Tensor>& env) const {
  const at::Tensor& a = env[size_t(step.fused_inputs[0])];
  const at::Tensor residual = step.fused_inputs[1] >= 0 ? env[size_t(step.fused_inputs[1])] : at::Tensor();
  try {
    env[size_t(step.fused_output)] = step.matmul_kernel->run(a, residual);
  } catch (const c10::OutOfMemoryError&) {
    throw;
  } catch (const c10::Error& e) {
    throw aten_error(e, node, options_.device);
  }
}

Executor::GraphPlan Executor::plan_graph(const Graph& g, const Graph* parent) {
  GraphPlan plan;
  // Release each tensor after its last reader (include/modelstat/lifetimes.hpp); graph outputs stay.
  const TensorLifetimes lifetimes = tensor_lifetimes(g);
  plan.steps.resize(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) plan.steps[i].release_after = lifetimes.release_after[i];
  const bool fuse = options_.fuse_qdq && options_.device.is_cpu() && int8_kernels_available();
  const QdqFusion qdq = fuse ? plan_qdq_fusion(g, model_) : QdqFusion{};
  for (const auto& [op, count] : qdq.fused_by_op) fused_by_op_[op] += count;
  absorbed_ += qdq.absorbed_count;
  // Tensors a fused node reads in place of its inputs: no earlier reader may take them over.
  std::vector<bool> fused_read(g.tensors.size(), false);
  if (!qdq.empty()) {
    for (const auto& inputs : qdq.fused_inputs)
      for (int t : inputs)
        if (t >= 0) fused_read[size_t(t)] = true;
    // A fused node reads its operands' quantized tensors, which the graph
    // released after their DequantizeLinear: they now live until it has run.
    std::vector<int> released_at(g.tensors.size(), -1);
    for (size_t i = 0; i < g.nodes.size(); ++i)
      for (int t : plan.steps[i].release_after) released_at[size_t(t)] = int(i);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      plan.steps[i].absorbed = qdq.absorbed[i];
      for (int t : qdq.fused_inputs[i]) {
        const int at = t < 0 ? -1 : released_at[size_t(t)];
        if (at < 0 || at >= int(i)) continue;
        auto& before = plan.steps[size_t(at)].release_after;
        before.erase(std::remove(before.begin(), before.end(), t), before.end());
        plan.steps[i].release_after.push_back(t);
        released_at[size_t(t)] = int(i);
      }
    }
  }
  // Which Constant nodes the weight store holds, read before the group
  // planner releases the weights that only packed kernels read (a weight
  // written as a Constant node, as paddle2onnx and older tf2onnx do, must not
  // then fall through to the Constant executor).
  std::vector<bool> preloaded(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) preloaded[i] = constant_preloaded(g, g.nodes[i], weights_);
  plan_conv_groups(g, plan, fused_read);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& node = g.nodes[i];
    NodeStep& step = plan.steps[i];
    if (preloaded[i] || step.absorbed) continue;
    step.opset = model_.opset_version(node.domain);
    step.rule = find_executor(node.domain, node.op_type, step.opset);
    if (step.conv_kernel || step.matmul_kernel || step.gelu || step.layer_norm) {
      step.last_read.assign(step.fused_inputs.size(), false);
      continue;
    }
    if (!qdq.empty() && !qdq.fused_inputs[i].empty()) {
      // Its quantized operands are read where they are: none is handed over.
      step.rule = find_qdq_executor(node.op_type);
      step.fused_inputs = qdq.fused_inputs[i];
      step.last_read.assign(step.fused_inputs.size(), false);
      continue;
    }
    step.has_subgraphs = !node.subgraphs().empty();
    step.last_read.assign(node.inputs.size(), false);
    // A control-flow node's subgraphs read values of this scope by name:
    // none of its inputs is handed over.
    if (step.has_subgraphs) continue;
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const int t = node.inputs[k];
      // Graph inputs and weights belong to the caller: only activations qualify.
      step.last_read[k] = t >= 0 && g.tensors[size_t(t)].role == TensorRole::Activation && !fused_read[size_t(t)] &&
                          !lifetimes.kept[size_t(t)] && lifetimes.last_use[size_t(t)] == int(i) &&
                          std::count(node.inputs.begin(), node.inputs.end(), t) == 1;
    }
  }
  if (parent) {
    // The loader imports an outer name into every scope between its
    // definition and its reader, so the enclosing graph always has it.
    for (const std::string& name : g.outer_scope_inputs) {
      const int here = g.find_tensor(name), there = parent->find_tensor(name);
      if (here < 0 || there < 0)
        throw Error(ErrorKind::Input, "subgraph '" + g.name + "' reads '" + name + "', which no enclosing scope defines");
      plan.outer.emplace_back(here, there);
    }
  }
  return plan;
}

void Executor::plan_subgraph(const Graph& sub, const Graph& parent, const std::string& holder,
                             const std::string& label, int top_level_node, int enclosing, int depth) {
  GraphPlan plan = plan_graph(sub, &parent);
  plan.top_level_node = top_level_node;
  // Each node, then the nodes of its own subgraphs: the analysis's row order.
  for (const Node& node : sub.nodes) {
    const int id = int(subgraph_nodes_.size());
    const std::string path = subgraph_node_path(holder, label, node.name);
    subgraph_nodes_.push_back({path, node.op_type, top_level_node, enclosing, depth});
    plan.subgraph_node_ids.push_back(id);
    for (const auto& [inner_label, inner] : node.named_subgraphs())
      plan_subgraph(*inner, sub, path, inner_label, top_level_node, id, depth + 1);
  }
  subplans_.emplace(&sub, std::move(plan));
}

Upcasts Executor::upcasts() const {
  Upcasts u;
  u.top_level.assign(model_.graph.nodes.size(), false);
  u.subgraph_nodes.assign(subgraph_nodes_.size(), false);
  auto collect = [&](const Graph& g, const GraphPlan& plan) {
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const ReducedPath path = plan.steps[i].reduced.path.load();
      if (path != ReducedPath::UpcastHalf && path != ReducedPath::UpcastBFloat16) continue;
      ++u.nodes_by_dtype[path == ReducedPath::UpcastHalf ? "fp16" : "bf16"][g.nodes[i].op_type];
      u.top_level[size_t(plan.top_level_node < 0 ? int(i) : plan.top_level_node)] = true;
      // The node and every control-flow node it runs inside.
      for (int id = i < plan.subgraph_node_ids.size() ? plan.subgraph_node_ids[i] : -1; id >= 0;
           id = subgraph_nodes_[size_t(id)].enclosing)
        u.subgraph_nodes[size_t(id)] = true;
    }
  };
  collect(model_.graph, top_);
  for (const auto& [graph, plan] : subplans_) collect(*graph, plan);
  return u;
}

std::vector<at::Tensor> Executor::make_inputs(uint64_t seed) const {
  const Graph& g = model_.graph;
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  std::vector<at::Tensor> inputs;
  inputs.reserve(g.inputs.size());
  for (int id : g.inputs) {
    const Tensor& t = g.tensors[size_t(id)];
    if (!t.shape.fully_known())
      throw Error(ErrorKind::Input,
                  "input " + t.name + " has unknown dims (" + t.shape.to_string() + "): bind with --input/--dim");
    const auto dims = known_dims(t.shape, "input " + t.name);
    const at::ScalarType type = scalar_type_of(t.dtype);
    at::Tensor x;
    if (at::isFloatingType(type)) {
      // N(0,1): never all zeros, which some kernels would run faster on.
      const bool own_dtype = options_.float_dtype == at::ScalarType::Undefined;
      x = at::randn(dims, gen, at::TensorOptions().dtype(at::kFloat))
              .to(own_dtype ? type : options_.float_dtype);
    } else if (type == at::kBool) {
      x = at::randint(0, 2, dims, gen, at::TensorOptions().dtype(at::kLong)).to(at::kBool);
    } else if (const auto value = compared_constant(g, id)) {
      x = at::full(dims, *value, at::TensorOptions().dtype(at::kLong)).to(type);
    } else {
      x = at::randint(0, integer_input_bound(g, id, weights_), dims, gen, at::TensorOptions().dtype(at::kLong))
              .to(type);
    }
    inputs.push_back(x.to(options_.device));
  }
  return inputs;
}

std::vector<at::Tensor> Executor::run(const std::vector<at::Tensor>& inputs, const NodeHook& hook,
                                      const NodeHook& subgraph_hook) const {
  const Graph& g = model_.graph;
  if (inputs.size() != g.inputs.size())
    throw Error(ErrorKind::Input, "the graph has " + std::to_string(g.inputs.size()) + " inputs, " +
                                      std::to_string(inputs.size()) + " given");
  std::vector<at::Tensor> env(g.tensors.size());
  for (size_t i = 0; i < g.inputs.size(); ++i) env[size_t(g.inputs[i])] = inputs[i].to(options_.device);
  for (int t : g.initializers) env[size_t(t)] = weights_.get(&g, t);
  run_nodes(g, top_, env, hook ? &hook : nullptr, subgraph_hook ? &subgraph_hook : nullptr);
  return produced_outputs(g, env, "graph output");
}

std::vector<at::Tensor> Executor::run_subgraph(const Graph& body, const std::vector<at::Tensor>& scope,
                                               const std::vector<at::Tensor>& inputs,
                                               const NodeHook* subgraph_hook) const {
  const auto it = subplans_.find(&body);
  if (it == subplans_.end())
    throw Error(ErrorKind::Runtime, "subgraph '" + body.name + "' is not a subgraph of this model");
  const GraphPlan& plan = it->second;
  if (inputs.size() != body.inputs.size())
    throw Error(ErrorKind::Input, "subgraph '" + body.name + "' has " + std::to_string(body.inputs.size()) +
                                      " inputs, " + std::to_string(inputs.size()) + " given");
  std::vector<at::Tensor> env(body.tensors.size());
  for (const auto& [here, there] : plan.outer) {
    if (!scope[size_t(there)].defined())
      throw Error(ErrorKind::Runtime, "subgraph '" + body.name + "' reads '" + body.tensors[size_t(here)].name +
                                          "', which has no value in its enclosing scope");
    env[size_t(here)] = scope[size_t(there)];
  }
  for (size_t i = 0; i < body.inputs.size(); ++i) env[size_t(body.inputs[i])] = inputs[i];
  for (int t : body.initializers) env[size_t(t)] = weights_.get(&body, t);
  run_nodes(body, plan, env, subgraph_hook, subgraph_hook);
  return produced_outputs(body, env, "subgraph '" + body.name + "' output");
}

std::vector<at::Tensor> Executor::run_step(const Graph& g, const Node& node, const NodeStep& step,
                                           std::vector<at::Tensor> args, std::vector<bool> reusable,
                                           const std::vector<at::Tensor>& env,
                                           const NodeHook* subgraph_hook) const {
  std::optional<ScopeRunner> runner;
  auto context = [&](std::vector<at::Tensor> inputs, std::vector<bool> reuse, at::ScalarType float_dtype) {
    ExecContext ctx(g, node, step.opset, std::move(inputs), options_.device, float_dtype);
    ctx.set_reusable(std::move(reuse));
    ctx.set_nudge_requantisers(options_.nudge_requantisers);
    ctx.set_share_kv_buffers(options_.share_kv_buffers);
    if (step.has_subgraphs) ctx.set_subgraph_runner(&runner.emplace(*this, env, subgraph_hook));
    return ctx;
  };
  // The node in fp32: its fp16/bf16 inputs cast up (fresh tensors, which it
  // may overwrite), its fp32 outputs cast back: to the run's dtype in an
  // fp16/bf16 run, else to the float type the model declares for them
  // (`from` where it declares none).
  auto upcast = [&](std::vector<at::Tensor> inputs, std::vector<bool> reuse, at::ScalarType from) {
    reuse.resize(inputs.size(), false);
    for (size_t k = 0; k < inputs.size(); ++k)
      if (inputs[k].defined() && is_reduced_float(inputs[k].scalar_type())) {
        inputs[k] = inputs[k].to(at::kFloat);
        reuse[k] = options_.in_place;
      }
    ExecContext ctx = context(std::move(inputs), std::move(reuse), at::kFloat);
    step.rule->fn(ctx);
    std::vector<at::Tensor> outputs = std::move(ctx.outputs);
    for (size_t o = 0; o < outputs.size() && o < node.outputs.size(); ++o) {
      if (!outputs[o].defined() || outputs[o].scalar_type() != at::kFloat || node.outputs[o] < 0) continue;
      const DType declared = g.tensors[size_t(node.outputs[o])].dtype;
      const bool declared_float = declared == DType::Float || declared == DType::Double ||
                                  declared == DType::Float16 || declared == DType::BFloat16;
      const at::ScalarType back = is_reduced_float(options_.float_dtype) ? options_.float_dtype
                                  : declared_float                       ? scalar_type_of(declared)
                                                                         : from;
      if (back != at::kFloat) outputs[o] = outputs[o].to(back);
    }
    return outputs;
  };

  const ReducedPath path = step.reduced.path.load();
  try {
    if (path == ReducedPath::UpcastHalf) return upcast(std::move(args), std::move(reusable), at::kHalf);
    if (path == ReducedPath::UpcastBFloat16)
      return upcast(std::move(args), std::move(reusable), at::kBFloat16);
    // The first run of a node with fp16/bf16 inputs overwrites none of them,
    // so that they are intact for an fp32 rerun should its kernel lack their
    // dtype. (Control flow: its subgraphs' nodes decide for themselves.)
    const at::ScalarType from = step.has_subgraphs ? at::ScalarType::Undefined : reduced_input_dtype(args);
    const bool first_reduced = path == ReducedPath::Unknown && from != at::ScalarType::Undefined;
    if (first_reduced) reusable.assign(args.size(), false);
    ExecContext ctx = context(std::move(args), std::move(reusable), options_.float_dtype);
    try {
      step.rule->fn(ctx);
      if (first_reduced) step.reduced.path = ReducedPath::Native;
      return std::move(ctx.outputs);
    } catch (const c10::OutOfMemoryError&) {
      throw;
    } catch (const c10::Error& e) {
      if (!first_reduced || !missing_reduced_kernel(e)) throw;
    }
    step.reduced.path = from == at::kHalf ? ReducedPath::UpcastHalf : ReducedPath::UpcastBFloat16;
    std::vector<at::Tensor> inputs;
    for (size_t k = 0; k < ctx.num_inputs(); ++k) inputs.push_back(ctx.input(k));
    return upcast(std::move(inputs), {}, from);
  } catch (const c10::OutOfMemoryError&) {
    throw;  // the batch search catches it: not a failure of the model
  } catch (const c10::Error& e) {
    throw aten_error(e, node, options_.device);
  }
}

void Executor::run_conv_group(const Graph& g, const Node& node, const NodeStep& step,
                              std::vector<at::Tensor>& env) const {
  const at::Tensor& x = env[size_t(step.fused_inputs[0])];
  const at::Tensor residual = step.fused_inputs[1] >= 0 ? env[size_t(step.fused_inputs[1])] : at::Tensor();
  ExecContext ctx(g, node, step.opset, {x}, options_.device, at::kFloat);
  if (x.dim() != 4) fail_input(ctx, "Conv with a 4-D weight needs a 4-D input");
  try {
    const Window win =
        resolve_window(ctx, attr_ints_or(node, "kernel_shape", step.conv_kernel->kernel_spatial()), spatial_dims(x));
    env[size_t(step.fused_output)] = step.conv_kernel->run(x, win, residual);
  } catch (const c10::OutOfMemoryError&) {
    throw;
  } catch (const c10::Error& e) {
    throw aten_error(e, node, options_.device);
  }
}

void Executor::run_nodes(const Graph& g, const GraphPlan& plan, std::vector<at::Tensor>& env,
                         const NodeHook* hook, const NodeHook* subgraph_hook) const {
  // What the hook is called with: the node's index at the top, its id in a subgraph.
  auto hook_id = [&](size_t i) {
    return plan.subgraph_node_ids.empty() ? int(i) : plan.subgraph_node_ids[i];
  };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& node = g.nodes[i];
    const NodeStep& step = plan.steps[i];
    if (hook) (*hook)(hook_id(i), false);
    if (step.absorbed) {
      // A DequantizeLinear fused into its readers, or a Conv group's member: nothing to run.
    } else if (step.conv_kernel) {
      run_conv_group(g, node, step, env);
    } else if (step.matmul_kernel) {
      run_matmul_group(g, node, step, env);
    } else if (step.gelu) {
      env[size_t(step.fused_output)] = at::gelu(env[size_t(step.fused_inputs[0])]);
    } else if (step.layer_norm) {
      const NodeStep::LayerNorm& ln = *step.layer_norm;
      try {
        env[size_t(step.fused_output)] =
            at::layer_norm(env[size_t(step.fused_inputs[0])], {ln.channels}, ln.scale, ln.bias, ln.epsilon);
      } catch (const c10::OutOfMemoryError&) {
        throw;
      } catch (const c10::Error& e) {
        throw aten_error(e, node, options_.device);
      }
    } else if (!step.rule) {
      env[size_t(node.outputs[0])] = weights_.get(&g, node.outputs[0]);
    } else {
      const std::vector<int>& ins = step.fused_inputs.empty() ? node.inputs : step.fused_inputs;
      std::vector<at::Tensor> args;
      args.reserve(ins.size());
      std::vector<bool> reusable(ins.size(), false);
      for (size_t k = 0; k < ins.size(); ++k) {
        const int t = ins[k];
        if (t < 0) {
          args.emplace_back();
          continue;
        }
        // Hand over an activation this node reads last (and only once): the
        // executor may then overwrite it.
        if (step.last_read[k]) {
          args.push_back(std::move(env[size_t(t)]));
          reusable[k] = options_.in_place && args.back().defined() && args.back().use_count() == 1 &&
                        args.back().storage().use_count() == 1;
        } else {
          args.push_back(env[size_t(t)]);
        }
      }
      std::vector<at::Tensor> outputs =
          run_step(g, node, step, std::move(args), std::move(reusable), env, subgraph_hook);
      for (size_t o = 0; o < node.outputs.size(); ++o) {
        if (node.outputs[o] < 0) continue;
        if (o >= outputs.size() || !outputs[o].defined())
          throw Error(ErrorKind::Runtime, "executor produced no output " + std::to_string(o), {}, node.name,
                      node.op_type);
        env[size_t(node.outputs[o])] = std::move(outputs[o]);
      }
    }
    for (int t : step.release_after) env[size_t(t)] = at::Tensor();
    if (hook) (*hook)(hook_id(i), true);
  }
}

}  // namespace modelstat::profiler

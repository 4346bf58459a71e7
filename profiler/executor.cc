// Executor: runs the graph (and, for If, Loop and Scan, their subgraphs) as
// a plan of typed steps (profiler/steps/step.hpp), one per node, built once
// from the fusion plan (profiler/plan.cc), keeping only live activations
// (each is released after its last reader, so memory use is what a real
// runtime would need, not the sum of all activations).
#include "profiler/executor.hpp"

#include <c10/util/Exception.h>

#include <algorithm>
#include <set>

#include "modelstat/error.hpp"
#include "profiler/device.hpp"
#include "profiler/torch_errors.hpp"
#include "profiler/ops/exec_helpers.hpp"
#include "profiler/ops/exec_rule.hpp"
#include "profiler/steps/step.hpp"

namespace modelstat::profiler {

namespace {

// The subgraphs of a Loop or Scan run once per trip, their shapes free to change between trips.
bool is_loop_body(const Node& node) {
  return node.domain.empty() && (node.op_type == "Loop" || node.op_type == "Scan");
}

// A Constant node whose value the weight store already holds needs no executor.
bool constant_preloaded(const Graph& g, const Node& node, const WeightStore& weights) {
  return node.op_type == "Constant" && node.domain.empty() && node.outputs.size() == 1 &&
         weights.get(&g, node.outputs[0]).defined();
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
  const std::string what = first_line(e);
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

}  // namespace

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
  top_ = plan_graph(g, nullptr, nullptr, model_, options_, weights_, false);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& [label, sub] : g.nodes[i].named_subgraphs())
      plan_subgraph(*sub, g, *top_, g.nodes[i].name, label, int(i), -1, 1, is_loop_body(g.nodes[i]));
  std::vector<const GraphPlan*> plans{top_.get()};
  for (const auto& [graph, plan] : subplans_) plans.push_back(plan.get());
  fusion_notices_ = profiler::fusion_notices(plans, options_, choices_before);
}

Executor::~Executor() = default;

const FusionPlan& Executor::fusion_plan() const { return top_->fusion; }

std::string Executor::fused_into(int k) const {
  const FusionPlan& fusion = top_->fusion;
  if (k < 0 || size_t(k) >= fusion.absorbed.size() || !fusion.absorbed[size_t(k)]) return {};
  return model_.graph.nodes[size_t(fusion.groups[size_t(fusion.group_of[size_t(k)])].head)].name;
}

std::vector<std::string> Executor::fused_members(int k) const {
  const FusedGroup* group = top_->fusion.headed_by(k);
  // A QDQ kernel's absorbed DequantizeLinear nodes are named by fused_into
  // alone: their cost is not the kernel's (it reads the quantized operands).
  if (!group || group->kind == FusedKind::Qdq) return {};
  std::vector<std::string> names;
  for (int m : group->members) names.push_back(model_.graph.nodes[size_t(m)].name);
  return names;
}

std::string Executor::fused_kernel(int k) const {
  if (k < 0 || size_t(k) >= top_->steps.size()) return {};
  const FusedGroup* group = top_->fusion.headed_by(k);
  if (!group || group->kind == FusedKind::Qdq) return {};
  return top_->steps[size_t(k)]->kernel();
}

std::vector<std::string> Executor::describe_plan() const {
  std::vector<std::string> lines;
  for (const auto& step : top_->steps) lines.push_back(model_.graph.nodes[size_t(step->node())].name + ": " + step->describe());
  return lines;
}

void Executor::plan_subgraph(const Graph& sub, const Graph& parent, const GraphPlan& parent_plan,
                             const std::string& holder, const std::string& label, int top_level_node,
                             int enclosing, int depth, bool in_loop_body) {
  std::unique_ptr<GraphPlan> plan =
      plan_graph(sub, &parent, &parent_plan, model_, options_, weights_, in_loop_body);
  plan->top_level_node = top_level_node;
  // Each node, then the nodes of its own subgraphs: the analysis's row order.
  for (const Node& node : sub.nodes) {
    const int id = int(subgraph_nodes_.size());
    const std::string path = subgraph_node_path(holder, label, node.name);
    subgraph_nodes_.push_back({path, node.op_type, top_level_node, enclosing, depth});
    plan->subgraph_node_ids.push_back(id);
    for (const auto& [inner_label, inner] : node.named_subgraphs())
      plan_subgraph(*inner, sub, *plan, path, inner_label, top_level_node, id, depth + 1,
                    in_loop_body || is_loop_body(node));
  }
  subplans_.emplace(&sub, std::move(plan));
}

Upcasts Executor::upcasts() const {
  Upcasts u;
  u.top_level.assign(model_.graph.nodes.size(), false);
  u.subgraph_nodes.assign(subgraph_nodes_.size(), false);
  auto collect = [&](const GraphPlan& plan) {
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const ReducedPath path = plan.steps[i]->reduced_path();
      if (path != ReducedPath::UpcastHalf && path != ReducedPath::UpcastBFloat16) continue;
      ++u.nodes_by_dtype[path == ReducedPath::UpcastHalf ? "fp16" : "bf16"][plan.graph->nodes[i].op_type];
      u.top_level[size_t(plan.top_level_node < 0 ? int(i) : plan.top_level_node)] = true;
      // The node and every control-flow node it runs inside.
      for (int id = i < plan.subgraph_node_ids.size() ? plan.subgraph_node_ids[i] : -1; id >= 0;
           id = subgraph_nodes_[size_t(id)].enclosing)
        u.subgraph_nodes[size_t(id)] = true;
    }
  };
  collect(*top_);
  for (const auto& [graph, plan] : subplans_) collect(*plan);
  return u;
}

std::vector<at::Tensor> Executor::run(const std::vector<at::Tensor>& inputs, const NodeHook& hook,
                                      const NodeHook& subgraph_hook) const {
  const Graph& g = model_.graph;
  if (inputs.size() != g.inputs.size())
    throw Error(ErrorKind::Input, "the graph has " + std::to_string(g.inputs.size()) + " inputs, " +
                                      std::to_string(inputs.size()) + " given");
  std::vector<at::Tensor> env(g.tensors.size());
  // The input shapes' signature (FNV-1a over rank and dims): what a folded step's outputs are kept for.
  uint64_t signature = 1469598103934665603ull;
  auto mix = [&](uint64_t v) { signature = (signature ^ v) * 1099511628211ull; };
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    env[size_t(g.inputs[i])] = inputs[i].to(options_.device);
    mix(uint64_t(inputs[i].dim()));
    for (int64_t d : inputs[i].sizes()) mix(uint64_t(d));
    mix(uint64_t(inputs[i].scalar_type()));
  }
  for (int t : g.initializers) env[size_t(t)] = weights_.get(&g, t);
  run_steps(g, *top_, env, hook ? &hook : nullptr, subgraph_hook ? &subgraph_hook : nullptr, signature);
  return produced_outputs(g, env, "graph output");
}

RunObservation Executor::observe(const std::vector<at::Tensor>& inputs) const {
  RunObservation seen;
  seen.top_level_dims.resize(model_.graph.tensors.size());
  observation_ = &seen;
  try {
    run(inputs);
  } catch (...) {
    observation_ = nullptr;
    throw;
  }
  observation_ = nullptr;
  return seen;
}

std::vector<at::Tensor> Executor::run_subgraph(const Graph& body, const std::vector<at::Tensor>& scope,
                                               const std::vector<at::Tensor>& inputs, const NodeHook* subgraph_hook,
                                               uint64_t shape_signature) const {
  const auto it = subplans_.find(&body);
  if (it == subplans_.end())
    throw Error(ErrorKind::Runtime, "subgraph '" + body.name + "' is not a subgraph of this model");
  const GraphPlan& plan = *it->second;
  if (observation_) ++observation_->subgraph_runs[&body];
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
  run_steps(body, plan, env, subgraph_hook, subgraph_hook, shape_signature);
  return produced_outputs(body, env, "subgraph '" + body.name + "' output");
}

void Executor::run_steps(const Graph& g, const GraphPlan& plan, std::vector<at::Tensor>& env, const NodeHook* hook,
                         const NodeHook* subgraph_hook, uint64_t shape_signature) const {
  StepRun r{*this, g, env, subgraph_hook, shape_signature};
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    // What the hook is called with: the node's index at the top, its id in a subgraph.
    const int id = plan.subgraph_node_ids.empty() ? int(i) : plan.subgraph_node_ids[i];
    if (hook) (*hook)(id, false);
    const Step& step = *plan.steps[i];
    step.run(r);
    if (observation_ && &g == &model_.graph)
      for (int t : g.nodes[size_t(step.node())].outputs)
        if (t >= 0 && env[size_t(t)].defined()) observation_->top_level_dims[size_t(t)] = env[size_t(t)].sizes().vec();
    for (int t : step.release_after) env[size_t(t)] = at::Tensor();
    if (hook) (*hook)(id, true);
  }
}

}  // namespace modelstat::profiler

// The planner (steps/step.hpp plan_graph): from a graph and its fusion plan
// (analyzer/fusion/fusion_plan.hpp) to one typed step per node, with the
// points where each tensor is released, and the notices of what was fused.
#include <algorithm>
#include <set>

#include "modelstat/error.hpp"
#include "analyzer/run_invariant.hpp"
#include "modelstat/lifetimes.hpp"
#include "profiler/ops/exec_rule.hpp"
#include "profiler/ops/int8_kernels.hpp"
#include "profiler/steps/step.hpp"

namespace modelstat::profiler {

namespace {

bool is_constant_node(const Node& node) { return node.op_type == "Constant" && node.domain.empty(); }

// Drops group k from the plan: its nodes run as written.
void unplan(FusionPlan& plan, size_t k) {
  FusedGroup& group = plan.groups[k];
  plan.group_of[size_t(group.head)] = -1;
  for (int m : group.members) {
    plan.group_of[size_t(m)] = -1;
    plan.absorbed[size_t(m)] = false;
    --plan.absorbed_count;
  }
  group.head = -1;
}

// The plan without the groups unplan() dropped (group_of renumbered).
void compact(FusionPlan& plan) {
  std::vector<FusedGroup> kept;
  for (FusedGroup& group : plan.groups)
    if (group.head >= 0) kept.push_back(std::move(group));
  plan.groups = std::move(kept);
  std::fill(plan.group_of.begin(), plan.group_of.end(), -1);
  for (size_t k = 0; k < plan.groups.size(); ++k) {
    plan.group_of[size_t(plan.groups[k].head)] = int(k);
    for (int m : plan.groups[k].members) plan.group_of[size_t(m)] = int(k);
  }
}

// "48 Gemm/MatMul with constant weights: 46 on oneDNN matmul with prepacked
// weights, 2 on BLAS, whichever measured faster for the shape (...)".
std::string gemm_notice(int64_t kernels, int64_t onednn, int64_t blas, int64_t direct, GemmBackend backend,
                        int64_t measured, int64_t cached, const GemmChoiceSummary& summary,
                        const std::map<std::string, int64_t>& absorbed_by_op) {
  std::string text = std::to_string(kernels) + " Gemm/MatMul with constant weights";
  const int64_t later = kernels - onednn - blas - direct;
  text += ": " + std::to_string(onednn) + " ran on oneDNN matmul with prepacked weights, " + std::to_string(blas) +
          " on BLAS";
  if (direct > 0) text += ", " + std::to_string(direct) + " as a direct loop (a few rows of a small weight)";
  if (later > 0) text += ", " + std::to_string(later) + " chosen at their first run (shape not bound at load)";
  if (backend == GemmBackend::Auto && direct == kernels) {
    text += " (--gemm onednn|blas forces one)";
  } else if (backend == GemmBackend::Auto) {
    text += ", whichever measured faster for the shape (" + std::to_string(measured) + " shapes measured now, " +
            std::to_string(cached) + " read from the per-machine cache" +
            (summary.cache_file.empty() ? " (none: " + summary.cache_error + ")" : " " + summary.cache_file) +
            "; --gemm onednn|blas forces one)";
  } else {
    text += std::string(" (--gemm ") + name_of(backend) + ")";
  }
  if (!absorbed_by_op.empty()) {
    std::string list;
    for (const auto& [op, count] : absorbed_by_op) list += (list.empty() ? "" : ", ") + std::to_string(count) + " " + op;
    text += "; fused into them (bias Add, activations, GELU, residual Add): " + list +
            " absorbed: their rows take no time, their work is in the Gemm/MatMul's";
  }
  return text;
}

std::string by_count(const std::map<std::string, int64_t>& counts) {
  std::vector<std::pair<std::string, int64_t>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string list;
  for (const auto& [op, count] : sorted) list += (list.empty() ? "" : ", ") + std::to_string(count) + " " + op;
  return list;
}

}  // namespace

std::unique_ptr<GraphPlan> plan_graph(const Graph& g, const Graph* parent, const GraphPlan* parent_plan,
                                      const Model& model, const ExecOptions& options, WeightStore& weights,
                                      bool in_loop_body) {
  auto plan = std::make_unique<GraphPlan>();
  plan->graph = &g;
  const bool cpu = options.device.is_cpu();
  const bool fp32 = options.float_dtype == at::kFloat || options.float_dtype == at::ScalarType::Undefined;
  FusionOptions fusion_options = inference_fusion_options(cpu, fp32, options.fuse_cpu, options.gemm == GemmBackend::Blas,
                                                          int8_kernels_available());
  fusion_options.qdq = cpu && options.fuse_qdq && int8_kernels_available();
  plan->fusion = plan_fusion(g, model, fusion_options);
  FusionPlan& fusion = plan->fusion;

  // Which Constant nodes the weight store holds, read before the packed
  // kernels' constants are released below (a weight written as a Constant
  // node, as paddle2onnx and older tf2onnx do, must not then fall through to
  // the Constant executor).
  std::vector<bool> preloaded(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& node = g.nodes[i];
    preloaded[i] = is_constant_node(node) && node.outputs.size() == 1 && weights.get(&g, node.outputs[0]).defined();
  }

  // A kernel per Conv / MatMul group; a group whose kernel cannot be built runs as written.
  std::vector<std::unique_ptr<Step>> group_steps(g.nodes.size());
  bool dropped = false;
  for (size_t k = 0; k < fusion.groups.size(); ++k) {
    const FusedGroup& group = fusion.groups[k];
    std::unique_ptr<Step> step;
    if (group.kind == FusedKind::Conv) step = make_conv_group_step(g, model, group, weights);
    else if (group.kind == FusedKind::MatMul) step = make_matmul_group_step(g, group, options, weights);
    else if (group.kind == FusedKind::Qdq) step = make_op_step(g, group.head, find_qdq_executor(g.nodes[size_t(group.head)].op_type),
                                                               model.opset_version(""), group.inputs, {});
    else step = make_rewrite_step(g, group, find_executor(std::get<RewriteSpec>(group.spec).domain,
                                                          std::get<RewriteSpec>(group.spec).op_type,
                                                          std::get<RewriteSpec>(group.spec).opset));
    if (!step) {
      unplan(fusion, k);
      dropped = true;
      continue;
    }
    group_steps[size_t(group.head)] = std::move(step);
  }
  if (dropped) compact(fusion);

  // What each step reads: a group's head its kernel's inputs, a member
  // nothing, any other node its inputs. Each tensor is released after its
  // last reader (include/modelstat/lifetimes.hpp, which also knows what
  // subgraphs read from this scope); a tensor a head reads later than the
  // graph's own order would keep it (a QDQ kernel reads x_q, which its
  // absorbed DequantizeLinear read before it) lives until the head has run.
  const TensorLifetimes lifetimes = tensor_lifetimes(g);
  std::vector<int> released_at(g.tensors.size(), -1), last_use = lifetimes.last_use;
  std::vector<std::vector<int>> release_after = lifetimes.release_after;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int t : release_after[i]) released_at[size_t(t)] = int(i);
  std::vector<bool> kernel_read(g.tensors.size(), false);  // read by a group's kernel: never handed over
  for (const FusedGroup& group : fusion.groups)
    for (int t : group.inputs) {
      if (t < 0) continue;
      kernel_read[size_t(t)] = true;
      const int at = released_at[size_t(t)];
      last_use[size_t(t)] = std::max(last_use[size_t(t)], group.head);
      if (at < 0 || at >= group.head) continue;
      auto& before = release_after[size_t(at)];
      before.erase(std::remove(before.begin(), before.end(), t), before.end());
      release_after[size_t(group.head)].push_back(t);
      released_at[size_t(t)] = group.head;
    }

  // Run-invariant nodes (analyzer/run_invariant.hpp) run once per set of
  // input shapes: their outputs are kept, so no later node may take one over.
  plan->invariance = run_invariance(g, in_loop_body, parent, parent_plan ? &parent_plan->invariance : nullptr);
  const std::vector<bool>& folded = plan->invariance.nodes;
  std::vector<bool> kept_value(g.tensors.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (folded[i] && !fusion.absorbed[i] && !group_steps[i])
      for (int t : g.nodes[i].outputs)
        if (t >= 0) kept_value[size_t(t)] = true;

  plan->steps.resize(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& node = g.nodes[i];
    std::unique_ptr<Step>& step = plan->steps[i];
    if (group_steps[i]) {
      step = std::move(group_steps[i]);
    } else if (fusion.absorbed[i]) {
      step = make_absorbed_step(int(i), g.nodes[size_t(fusion.groups[size_t(fusion.group_of[i])].head)].name);
    } else if (preloaded[i]) {
      step = make_constant_step(int(i), node.outputs[0]);
    } else {
      const int64_t opset = model.opset_version(node.domain);
      const ExecRule* rule = find_executor(node.domain, node.op_type, opset);
      if (!rule)
        throw Error(ErrorKind::Input, "op " + node.op_type + " has no executor", {}, node.name, node.op_type);
      // A control-flow node's subgraphs read values of this scope by name:
      // none of its inputs is handed over. Graph inputs and weights belong
      // to the caller: only activations qualify.
      std::vector<bool> handover(node.inputs.size(), false);
      if (node.subgraphs().empty())
        for (size_t k = 0; k < node.inputs.size(); ++k) {
          const int t = node.inputs[k];
          handover[k] = t >= 0 && g.tensors[size_t(t)].role == TensorRole::Activation && !kernel_read[size_t(t)] &&
                        !kept_value[size_t(t)] &&
                        !lifetimes.kept[size_t(t)] && last_use[size_t(t)] == int(i) &&
                        std::count(node.inputs.begin(), node.inputs.end(), t) == 1;
        }
      step = make_op_step(g, int(i), rule, opset, node.inputs.to_vector(), std::move(handover));
      if (folded[i]) {
        std::vector<int> outputs;
        for (int t : node.outputs)
          if (t >= 0) outputs.push_back(t);
        step = make_folded_step(std::move(step), std::move(outputs));
      }
    }
    step->release_after = std::move(release_after[i]);
  }

  // The constants only packed kernels read (weights, bias, BatchNormalization
  // statistics) live on in the kernels' form: the store drops them.
  std::set<int> packed;
  for (const FusedGroup& group : fusion.groups) packed.insert(group.packed_constants.begin(), group.packed_constants.end());
  for (int t : packed) {
    if (t < 0 || lifetimes.kept[size_t(t)] || !g.tensors[size_t(t)].is_constant()) continue;
    bool only_kernels = true;
    for (int c : g.tensors[size_t(t)].consumers) {
      const FusedGroup* head = fusion.headed_by(c);
      const bool packs = head && std::count(head->packed_constants.begin(), head->packed_constants.end(), t) > 0 &&
                         std::count(head->inputs.begin(), head->inputs.end(), t) == 0;
      const bool member = fusion.absorbed[size_t(c)] &&
                          std::count(fusion.groups[size_t(fusion.group_of[size_t(c)])].packed_constants.begin(),
                                     fusion.groups[size_t(fusion.group_of[size_t(c)])].packed_constants.end(), t) > 0;
      only_kernels = only_kernels && (packs || member);
    }
    if (only_kernels) weights.release(&g, t);
  }

  if (parent) {
    // The loader imports an outer name into every scope between its
    // definition and its reader, so the enclosing graph always has it.
    for (const std::string& name : g.outer_scope_inputs) {
      const int here = g.find_tensor(name), there = parent->find_tensor(name);
      if (here < 0 || there < 0)
        throw Error(ErrorKind::Input, "subgraph '" + g.name + "' reads '" + name + "', which no enclosing scope defines");
      plan->outer.emplace_back(here, there);
    }
  }
  return plan;
}

std::vector<std::string> fusion_notices(const std::vector<const GraphPlan*>& plans, const ExecOptions& options,
                                        const GemmChoiceSummary& choices_before) {
  std::map<std::string, int64_t> qdq_by_op, conv_absorbed, matmul_absorbed;
  int64_t qdq_absorbed = 0, convs = 0, matmuls = 0, gelus = 0, layer_norms = 0, onednn = 0, blas = 0, direct = 0;
  std::map<std::string, std::pair<std::string, int64_t>> rewrites;  // other Rewrite patterns: op, groups
  std::map<std::string, int64_t> folded_by_op;
  for (const GraphPlan* plan : plans) {
    const Graph& g = *plan->graph;
    for (const FusedGroup& group : plan->fusion.groups) {
      if (group.kind == FusedKind::Qdq) {
        ++qdq_by_op[g.nodes[size_t(group.head)].op_type];
        qdq_absorbed += int64_t(group.members.size());
      } else if (group.kind == FusedKind::Conv) {
        ++convs;
      } else if (group.kind == FusedKind::MatMul) {
        ++matmuls;
        const std::string impl = matmul_step_implementation(*plan->steps[size_t(group.head)]);
        if (impl == "direct loop") ++direct;
        else if (impl != "none" && !impl.empty()) ++(impl.rfind("onednn", 0) == 0 ? onednn : blas);
      } else if (group.pattern == "gelu") {
        ++gelus;
      } else if (group.pattern == "layer_norm") {
        ++layer_norms;
      } else {
        auto& [op, count] = rewrites[group.pattern];
        op = std::get<RewriteSpec>(group.spec).op_type;
        ++count;
      }
    }
    for (const auto& step : plan->steps)
      if (is_folded_step(*step)) ++folded_by_op[g.nodes[size_t(step->node())].op_type];
    for (size_t i = 0; i < plan->fusion.absorbed.size(); ++i) {
      if (!plan->fusion.absorbed[i]) continue;
      const FusedGroup& group = plan->fusion.groups[size_t(plan->fusion.group_of[i])];
      const std::string& op = g.nodes[i].op_type;
      if (group.kind == FusedKind::Conv) ++conv_absorbed[op];
      if (group.kind == FusedKind::MatMul) ++matmul_absorbed[op];
    }
  }
  std::vector<std::string> notices;
  // Integer convolutions and products on a CPU whose int8 kernels are exact
  // only for 7-bit weights (int8_kernels.hpp, "Exactness"): say so, the rest
  // runs in double precision.
  bool integer_ops = !qdq_by_op.empty();
  for (const GraphPlan* plan : plans)
    for (const Node& node : plan->graph->nodes)
      integer_ops = integer_ops || node.op_type == "QLinearConv" || node.op_type == "ConvInteger" ||
                    node.op_type == "QLinearMatMul" || node.op_type == "MatMulInteger";
  if (integer_ops && int8_kernels_available() && !int8_kernels_exact_for_any_weights())
    notices.push_back("int8: " + int8_kernel_note());
  if (!qdq_by_op.empty())
    notices.push_back("QDQ: " + by_count(qdq_by_op) + " ran as int8 kernels on their quantized operands (" +
                      std::to_string(qdq_absorbed) +
                      " DequantizeLinear absorbed: their rows take no time, their work is in the fused node's)");
  if (convs > 0) {
    std::string text = std::to_string(convs) + " Conv ran as oneDNN fp32 convolutions with prepacked weights";
    if (!conv_absorbed.empty())
      text += " and fused post-ops (" + by_count(conv_absorbed) +
              " absorbed: their rows take no time, their work is in the Conv's)";
    notices.push_back(text + "; --fusion off runs every node as written");
  }
  if (matmuls > 0) {
    const GemmChoiceSummary after = gemm_choice_summary();
    notices.push_back(gemm_notice(matmuls, onednn, blas, direct, options.gemm, after.measured - choices_before.measured,
                                  after.cached - choices_before.cached, after, matmul_absorbed));
  }
  if (layer_norms > 0)
    notices.push_back(std::to_string(layer_norms) +
                      " LayerNorm written out (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add) "
                      "ran as one at::layer_norm each, on its first ReduceMean's row; --fusion off runs "
                      "every node as written");
  if (gelus > 0)
    notices.push_back(std::to_string(gelus) +
                      " GELU written out (Div by sqrt 2, Erf, Add 1, Mul by x, Mul by 0.5) ran as one erf-GELU "
                      "kernel each, on its Div's row; --fusion off runs every node as written");
  if (!folded_by_op.empty()) {
    int64_t n = 0;
    for (const auto& [op, count] : folded_by_op) n += count;
    notices.push_back(std::to_string(n) +
                      " node(s) computed from constants and the input shapes alone ran once per set of input shapes "
                      "and their outputs were kept, as an inference runtime folds them when it loads (their rows "
                      "take no time after the first run): " + by_count(folded_by_op));
  }
  for (const auto& [pattern, op_count] : rewrites)
    if (pattern == "batch_norm_relu")
      notices.push_back(std::to_string(op_count.second) +
                        " BatchNormalization + Relu pairs ran as one pass each, on the BatchNormalization's row (the "
                        "Relu's row takes no time); --fusion off runs every node as written");
    else
      notices.push_back(std::to_string(op_count.second) + " " + pattern + " written out ran as one " + op_count.first +
                      " each, on its first node's row; --fusion off runs every node as written");
  return notices;
}

}  // namespace modelstat::profiler

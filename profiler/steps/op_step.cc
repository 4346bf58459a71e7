// OpStep: one node through its op's executor (the registry), and RewriteStep:
// a group that computes one standard op, through that op's executor. Both
// run a node whose kernel lacks its fp16/bf16 inputs' dtype on the device in
// fp32: its inputs cast up, its outputs cast back, inside its own step
// (learnt on the first run that reaches it; later runs upcast directly).
#include <ATen/CPUGeneratorImpl.h>
#include <c10/util/Exception.h>

#include <cmath>
#include <cstring>
#include <optional>

#include "modelstat/error.hpp"
#include "profiler/ops/exec_helpers.hpp"
#include "profiler/ops/exec_rule.hpp"
#include "analyzer/op_traits.hpp"
#include "profiler/steps/step.hpp"

namespace modelstat::profiler {

namespace {

// ATen's dispatch macros throw '"kernel" not implemented for 'Half'' (or
// 'BFloat16') when a kernel has no version for that dtype.
bool missing_reduced_kernel(const c10::Error& e) {
  const char* what = e.what_without_backtrace();
  return std::strstr(what, "not implemented for 'Half'") || std::strstr(what, "not implemented for 'BFloat16'");
}

// The dtype of a node's first fp16/bf16 input; Undefined when it has none.
at::ScalarType reduced_input_dtype(const std::vector<at::Tensor>& args) {
  for (const at::Tensor& t : args)
    if (t.defined() && is_reduced_float(t.scalar_type())) return t.scalar_type();
  return at::ScalarType::Undefined;
}

// What a control-flow node's executor runs its subgraphs through: the values
// of the scope the node runs in, by tensor index.
class ScopeRunner final : public SubgraphRunner {
 public:
  ScopeRunner(const Executor& executor, const std::vector<at::Tensor>& scope, const Executor::NodeHook* hook,
              uint64_t shape_signature)
      : executor_(executor), scope_(scope), hook_(hook), shape_signature_(shape_signature) {}
  std::vector<at::Tensor> run(const Graph& body, const std::vector<at::Tensor>& inputs) const override {
    return executor_.run_subgraph(body, scope_, inputs, hook_, shape_signature_);
  }

 private:
  const Executor& executor_;
  const std::vector<at::Tensor>& scope_;
  const Executor::NodeHook* hook_;
  uint64_t shape_signature_;
};

// y moved by one unit in the last place of max(|y|, 1), up or down at random
// per element (a fixed seed): what another runtime's approximation of the
// same function may differ by (absolute near 0, where bounded functions such
// as sigmoid and tanh keep an absolute error).
at::Tensor approximation_apart(const at::Tensor& y, uint64_t seed) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const at::Tensor f = y.to(at::kFloat);
  const double ulp_of_one = std::ldexp(1.0, -23);
  const at::Tensor step = at::clamp_min(f.abs(), 1.0) * ulp_of_one;
  const at::Tensor sign = at::randint(0, 2, f.sizes(), gen, f.options().device(at::kCPU)).to(f.device()) * 2 - 1;
  return (f + sign * step).to(y.scalar_type());
}

class OpStep : public Step {
 public:
  OpStep(const Graph& g, int node, const Node* ir_node, const ExecRule* rule, int64_t opset, std::vector<int> inputs,
         std::vector<bool> handover)
      : Step(node),
        node_(ir_node),
        rule_(rule),
        opset_(opset),
        inputs_(std::move(inputs)),
        handover_(std::move(handover)),
        has_subgraphs_(!ir_node->subgraphs().empty()),
        approximated_(op_is_approximated(*ir_node)) {
    handover_.resize(inputs_.size(), false);
    (void)g;
  }

  void run(StepRun& r) const override {
    std::vector<at::Tensor> args;
    args.reserve(inputs_.size());
    std::vector<bool> reusable(inputs_.size(), false);
    const bool in_place = r.executor.options().in_place;
    for (size_t k = 0; k < inputs_.size(); ++k) {
      const int t = inputs_[k];
      if (t < 0) {
        args.emplace_back();
        continue;
      }
      // Hand over an activation this node reads last (and only once): the
      // executor may then overwrite it.
      if (handover_[k]) {
        args.push_back(std::move(r.env[size_t(t)]));
        reusable[k] = in_place && args.back().defined() && args.back().use_count() == 1 &&
                      args.back().storage().use_count() == 1;
      } else {
        args.push_back(r.env[size_t(t)]);
      }
    }
    std::vector<at::Tensor> outputs = execute(r, std::move(args), std::move(reusable));
    if (approximated_ && r.executor.options().nudge_approximations)
      for (at::Tensor& y : outputs)
        if (y.defined() && at::isFloatingType(y.scalar_type())) y = approximation_apart(y, uint64_t(node()) + 0x9e37);
    const Node& node = *node_;
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      if (node.outputs[o] < 0) continue;
      if (o >= outputs.size() || !outputs[o].defined())
        throw Error(ErrorKind::Runtime, "executor produced no output " + std::to_string(o), {}, node.name,
                    node.op_type);
      r.env[size_t(node.outputs[o])] = std::move(outputs[o]);
    }
  }

  std::string describe() const override {
    return std::string(has_subgraphs_ ? "control flow " : "op ") +
           (node_->domain.empty() ? node_->op_type : node_->domain + "." + node_->op_type);
  }
  ReducedPath reduced_path() const override { return reduced_.load(); }

 protected:
  const Node* node_;  // what the rule runs: the graph's node, or a RewriteStep's own

 private:
  // The rule on `args`: natively, or upcast to fp32 when its kernel lacks its
  // fp16/bf16 inputs' dtype, learnt in reduced_ on the first run.
  std::vector<at::Tensor> execute(StepRun& r, std::vector<at::Tensor> args, std::vector<bool> reusable) const {
    const ExecOptions& options = r.executor.options();
    const Node& node = *node_;
    std::optional<ScopeRunner> runner;
    auto context = [&](std::vector<at::Tensor> inputs, std::vector<bool> reuse, at::ScalarType float_dtype) {
      ExecContext ctx(r.graph, node, opset_, std::move(inputs), options.device, float_dtype);
      ctx.set_reusable(std::move(reuse));
      ctx.set_nudge_requantisers(options.nudge_requantisers);
      ctx.set_share_kv_buffers(options.share_kv_buffers);
      if (has_subgraphs_)
        ctx.set_subgraph_runner(&runner.emplace(r.executor, r.env, r.subgraph_hook, r.shape_signature));
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
          reuse[k] = options.in_place;
        }
      ExecContext ctx = context(std::move(inputs), std::move(reuse), at::kFloat);
      rule_->fn(ctx);
      std::vector<at::Tensor> outputs = std::move(ctx.outputs);
      for (size_t o = 0; o < outputs.size() && o < node.outputs.size(); ++o) {
        if (!outputs[o].defined() || outputs[o].scalar_type() != at::kFloat || node.outputs[o] < 0) continue;
        const DType declared = r.graph.tensors[size_t(node.outputs[o])].dtype;
        const bool declared_float = declared == DType::Float || declared == DType::Double ||
                                    declared == DType::Float16 || declared == DType::BFloat16;
        const at::ScalarType back = is_reduced_float(options.float_dtype) ? options.float_dtype
                                    : declared_float                      ? scalar_type_of(declared)
                                                                          : from;
        if (back != at::kFloat) outputs[o] = outputs[o].to(back);
      }
      return outputs;
    };

    const ReducedPath path = reduced_.load();
    try {
      if (path == ReducedPath::UpcastHalf) return upcast(std::move(args), std::move(reusable), at::kHalf);
      if (path == ReducedPath::UpcastBFloat16) return upcast(std::move(args), std::move(reusable), at::kBFloat16);
      // The first run of a node with fp16/bf16 inputs overwrites none of them,
      // so that they are intact for an fp32 rerun should its kernel lack their
      // dtype. (Control flow: its subgraphs' nodes decide for themselves.)
      const at::ScalarType from = has_subgraphs_ ? at::ScalarType::Undefined : reduced_input_dtype(args);
      const bool first_reduced = path == ReducedPath::Unknown && from != at::ScalarType::Undefined;
      if (first_reduced) reusable.assign(args.size(), false);
      ExecContext ctx = context(std::move(args), std::move(reusable), options.float_dtype);
      try {
        rule_->fn(ctx);
        if (first_reduced) reduced_ = ReducedPath::Native;
        return std::move(ctx.outputs);
      } catch (const c10::OutOfMemoryError&) {
        throw;
      } catch (const c10::Error& e) {
        if (!first_reduced || !missing_reduced_kernel(e)) throw;
      }
      reduced_ = from == at::kHalf ? ReducedPath::UpcastHalf : ReducedPath::UpcastBFloat16;
      std::vector<at::Tensor> inputs;
      for (size_t k = 0; k < ctx.num_inputs(); ++k) inputs.push_back(ctx.input(k));
      return upcast(std::move(inputs), {}, from);
    } catch (const c10::OutOfMemoryError&) {
      throw;  // the batch search catches it: not a failure of the model
    } catch (const c10::Error& e) {
      throw aten_error(e, node, options.device);
    }
  }

  const ExecRule* rule_;
  int64_t opset_;
  std::vector<int> inputs_;
  std::vector<bool> handover_;
  bool has_subgraphs_;
  bool approximated_;  // op_is_approximated
  // Atomic: runs may overlap (--concurrency).
  mutable std::atomic<ReducedPath> reduced_{ReducedPath::Unknown};
};

// A group computing one standard op: that op's executor on the group's
// inputs, through a node of its own (the group's head's name, the op's
// attributes, the group's inputs and output).
class RewriteStep final : public OpStep {
 public:
  RewriteStep(const Graph& g, std::unique_ptr<Node> node, int head, const ExecRule* rule, int64_t opset,
              std::vector<int> inputs, std::string pattern)
      : OpStep(g, head, node.get(), rule, opset, std::move(inputs), {}),
        own_(std::move(node)),
        pattern_(std::move(pattern)) {}
  std::string describe() const override { return pattern_ + " group as " + own_->op_type + ": " + kernel(); }
  std::string kernel() const override {
    if (own_->op_type == "Gelu") return "aten::gelu";
    if (own_->op_type == "LayerNormalization") return "aten::layer_norm";
    if (own_->op_type == "BatchNormalization" && own_->attr_int(kFusedReluAttribute, 0) != 0)
      return "direct loop: batch norm + relu in one pass";
    return "aten (" + own_->op_type + ")";
  }

 private:
  std::unique_ptr<Node> own_;
  std::string pattern_;
};

// A run-invariant node: the OpStep it wraps runs on the first run of each
// set of input shapes; its outputs are kept (shared, read-only: no later node
// may overwrite them, plan.cc hands none over) and bound on later runs.
class FoldedStep final : public Step {
 public:
  FoldedStep(std::unique_ptr<Step> op, std::vector<int> outputs)
      : Step(op->node()), op_(std::move(op)), outputs_(std::move(outputs)) {}

  void run(StepRun& r) const override {
    std::shared_ptr<const Cache> cache = std::atomic_load(&cache_);
    if (cache && cache->signature == r.shape_signature) {
      for (size_t k = 0; k < outputs_.size(); ++k) r.env[size_t(outputs_[k])] = cache->values[k];
      return;
    }
    op_->run(r);
    auto fresh = std::make_shared<Cache>();
    fresh->signature = r.shape_signature;
    for (int t : outputs_) fresh->values.push_back(r.env[size_t(t)]);
    std::atomic_store(&cache_, std::shared_ptr<const Cache>(std::move(fresh)));
  }
  std::string describe() const override { return "folded (once per input shapes): " + op_->describe(); }
  ReducedPath reduced_path() const override { return op_->reduced_path(); }

 private:
  struct Cache {
    uint64_t signature = 0;
    std::vector<at::Tensor> values;
  };
  std::unique_ptr<Step> op_;
  std::vector<int> outputs_;
  mutable std::shared_ptr<const Cache> cache_;
};

}  // namespace

bool is_folded_step(const Step& step) { return dynamic_cast<const FoldedStep*>(&step) != nullptr; }

std::unique_ptr<Step> make_folded_step(std::unique_ptr<Step> op, std::vector<int> outputs) {
  return std::make_unique<FoldedStep>(std::move(op), std::move(outputs));
}

std::unique_ptr<Step> make_op_step(const Graph& g, int node, const ExecRule* rule, int64_t opset,
                                   std::vector<int> inputs, std::vector<bool> handover) {
  return std::make_unique<OpStep>(g, node, &g.nodes[size_t(node)], rule, opset, std::move(inputs),
                                  std::move(handover));
}

std::unique_ptr<Step> make_rewrite_step(const Graph& g, const FusedGroup& group, const ExecRule* rule) {
  const auto& spec = std::get<RewriteSpec>(group.spec);
  auto node = std::make_unique<Node>();
  node->name = g.nodes[size_t(group.head)].name;
  node->op_type = spec.op_type;
  node->domain = spec.domain;
  node->attributes = spec.attributes;
  node->inputs = group.inputs;
  node->outputs = {group.output};
  return std::make_unique<RewriteStep>(g, std::move(node), group.head, rule, spec.opset, group.inputs, group.pattern);
}

}  // namespace modelstat::profiler

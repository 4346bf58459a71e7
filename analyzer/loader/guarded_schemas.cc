// Load stage: the schema registry ONNX's shape inference asks
// (load_stages.hpp, guarded_registry).
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>

#include "analyzer/cost/cost_rule.hpp"
#include "analyzer/loader/legacy_inference.hpp"
#include "analyzer/loader/load_stages.hpp"
#include "modelstat/op_key.hpp"

namespace modelstat::loader {

namespace {

// ONNX 1.12's per-op inference functions assume well-formed input: a Conv
// whose weight has no known type dereferences a null pointer (found by
// fuzzing). This registry hands out copies of the schemas whose inference
// first checks that every required input has a type, and fails that node
// cleanly (an inference error, reported as a notice) otherwise.
const onnx::TensorShapeProto* known_shape(onnx::InferenceContext& ctx, size_t i) {
  if (i >= ctx.getNumInputs()) return nullptr;
  const onnx::TypeProto* t = ctx.getInputType(i);
  if (!t || !t->has_tensor_type() || !t->tensor_type().has_shape()) return nullptr;
  return &t->tensor_type().shape();
}

size_t ints_size(onnx::InferenceContext& ctx, const char* name, size_t fallback) {
  const onnx::AttributeProto* a = ctx.getAttribute(name);
  return a ? size_t(a->ints_size()) : fallback;
}

// ONNX's convPoolShapeInference indexes dims by attribute lengths and the
// weight's rank without checking them against each other, and divides by the
// strides (a stride of 0 was a SIGFPE, found by tools/fuzz.sh analyze).
void check_conv_pool(onnx::InferenceContext& ctx, int weight_index) {
  const auto* x = known_shape(ctx, 0);
  const auto* w = weight_index >= 0 ? known_shape(ctx, size_t(weight_index)) : nullptr;
  for (const char* name : {"kernel_shape", "strides", "dilations"})
    if (const onnx::AttributeProto* a = ctx.getAttribute(name))
      for (int64_t v : a->ints())
        if (v < 1) fail_shape_inference(name, " holds ", v, " (each must be >= 1)");
  if (const onnx::AttributeProto* g = ctx.getAttribute("group"))
    if (g->i() < 1) fail_shape_inference("group is ", g->i(), " (must be >= 1)");
  if (w && w->dim_size() < 3) fail_shape_inference("weight rank ", w->dim_size(), " is below 3");
  if (!x) return;
  const int rank = x->dim_size();
  if (rank < 3) fail_shape_inference("input rank ", rank, " is below 3");
  const size_t spatial = size_t(rank - 2);
  if (w && w->dim_size() != rank) fail_shape_inference("weight rank differs from input rank");
  if (ints_size(ctx, "kernel_shape", spatial) != spatial || ints_size(ctx, "strides", spatial) != spatial ||
      ints_size(ctx, "dilations", spatial) != spatial || ints_size(ctx, "pads", 2 * spatial) != 2 * spatial ||
      ints_size(ctx, "output_padding", spatial) != spatial || ints_size(ctx, "output_shape", spatial) != spatial)
    fail_shape_inference("kernel_shape/strides/dilations/pads do not match the input rank");
}

// The conv/pool weight input from the op's record (-1: a pool, no weight;
// OpTraits::kNotConvPool: not a conv/pool op).
int conv_pool_weight_index(const std::string& op, const std::string& domain) {
  const cost::OpRecord* record = cost::find_op(domain, op);
  return record ? record->traits.conv_pool_weight_input : cost::OpTraits::kNotConvPool;
}

// The newest default-domain opset ONNX 1.12's schemas define; models up to
// kNewestDefaultOpset load (validate_opsets), ONNX 1.12's newest schema of
// each op standing for the op's later versions where those only widened its
// types (Cast 19/21, Reshape 19/21, ... opset 22's bfloat16 everywhere).
constexpr int kOnnx112DefaultOpset = 17;

// Reduce ops whose axes moved from an attribute to input 1 in opset 18
// (ReduceSum did in 13): ReduceSum-13's inference has their signature.
bool reduce_with_axes_input_from_18(const std::string& op) {
  static const std::set<std::string> kOps = {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
                                             "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSumSquare"};
  return kOps.count(op) > 0;
}

// What ONNX 1.12's inference of an op would get wrong on a node of a later
// opset: the node fails inference (a notice; its shapes stay unknown)
// instead of getting shapes of the op's older meaning.
void refuse_newer_features(onnx::InferenceContext& ctx, const std::string& op) {
  auto attr_ints_not_all = [&](const char* name, int64_t value) {
    const onnx::AttributeProto* a = ctx.getAttribute(name);
    if (!a) return false;
    for (int64_t v : a->ints())
      if (v != value) return true;
    return false;
  };
  auto attr_int_not = [&](const char* name, int64_t value) {
    const onnx::AttributeProto* a = ctx.getAttribute(name);
    return a && a->i() != value;
  };
  const bool has_input_3 = ctx.getNumInputs() > 3 && ctx.getInputType(3) != nullptr;
  if (op == "AveragePool" && attr_ints_not_all("dilations", 1))
    fail_shape_inference("AveragePool dilations (opset 19) are newer than this build's schemas");
  if (op == "LpPool" && attr_int_not("ceil_mode", 0))
    fail_shape_inference("LpPool ceil_mode (opset 18) is newer than this build's schemas");
  if (op == "Pad" && has_input_3) fail_shape_inference("Pad's axes input (opset 18) is newer than this build's schemas");
  if (op == "Resize" && (ctx.getAttribute("axes") || ctx.getAttribute("keep_aspect_ratio_policy")))
    fail_shape_inference("Resize axes / keep_aspect_ratio_policy (opset 18) are newer than this build's schemas");
  if (op == "DFT" && ctx.getNumInputs() > 2 && ctx.getInputType(2) != nullptr)
    fail_shape_inference("DFT's axis input (opset 20) is newer than this build's schemas");
  if (op == "Split" && ctx.getAttribute("num_outputs") && ctx.getNumInputs() > 1 && ctx.getInputType(1) != nullptr)
    fail_shape_inference("Split with both num_outputs and split");
}

class GuardedSchemaRegistry final : public onnx::ISchemaRegistry {
 public:
  const onnx::OpSchema* GetSchema(const std::string& key, const int max_version,
                                  const std::string& domain) const override {
    // A default-domain opset newer than ONNX 1.12's (18-23): ONNX 1.12's
    // newest schema of the op stands for it, except where the op changed
    // (newer_opset_schema below).
    const bool newer = normalize_domain(domain).empty() && max_version > kOnnx112DefaultOpset;
    const bool axes_input = newer && reduce_with_axes_input_from_18(key);
    const onnx::OpSchema* base = axes_input ? onnx::OpSchemaRegistry::Schema("ReduceSum", 13, "")
                                            : onnx::OpSchemaRegistry::Schema(key, max_version, domain);
    if (!base) return record_schema(key, max_version, domain);
    const std::string newer_key = newer ? key + "@" + std::to_string(max_version) : std::string();
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = cache_.find({base, newer_key});
    if (it != cache_.end()) return it->second.get();
    auto copy = std::make_unique<onnx::OpSchema>(*base);
    // Only a schema with an inference function of its own gets the guarded
    // one: GetTypeAndShapeInferenceFunction() returns a do-nothing function
    // for the others, and wrapping it hid the function body ONNX infers
    // function ops (GreaterOrEqual, LessOrEqual, MeanVarianceNormalization)
    // through, leaving their outputs untyped.
    // An old schema ONNX leaves without inference (Relu-1, Concat-1, ...)
    // gets modelstat's (legacy_inference.hpp), guarded the same way.
    // An old schema whose own function stops short of what it defines
    // (Slice-1's negative starts, ...) is completed after it.
    std::optional<onnx::InferenceFunction> own;
    if (base->has_type_and_shape_inference_function()) own = base->GetTypeAndShapeInferenceFunction();
    else own = legacy_inference(*base);
    if (own) {
      onnx::InferenceFunction fn = *own;
      if (auto completion = legacy_completion(*base))
        fn = [first = *own, then = *completion](onnx::InferenceContext& ctx) {
          first(ctx);
          then(ctx);
        };
      std::vector<bool> required;
      for (const auto& p : base->inputs()) required.push_back(p.GetOption() != onnx::OpSchema::Optional);
      const int weight_index = conv_pool_weight_index(key, domain);
      copy->TypeAndShapeInferenceFunction([fn, required, weight_index, newer, key](onnx::InferenceContext& ctx) {
        if (weight_index > -2) check_conv_pool(ctx, weight_index);
        if (newer) refuse_newer_features(ctx, key);
        const size_t n = ctx.getNumInputs();
        for (size_t i = 0; i < n; ++i) {
          const bool is_required = i < required.size() ? required[i] : (!required.empty() && required.back());
          const onnx::TypeProto* type = ctx.getInputType(i);
          if (is_required && (type == nullptr || type->value_case() == onnx::TypeProto::VALUE_NOT_SET))
            fail_shape_inference("input ", i, " has no known type");
        }
        fn(ctx);
      });
    }
    const onnx::OpSchema* result = copy.get();
    cache_.emplace(std::make_pair(base, newer_key), std::move(copy));
    return result;
  }

 private:
  // ONNX 1.12 has no schema for contrib ops (com.microsoft) nor for the
  // standard ops of later opsets: one whose record has a shape rule, or says
  // its output has input 0's type and shape, gets a schema of any number of
  // inputs and outputs whose inference is that rule, so that shape inference
  // carries shapes through it.
  const onnx::OpSchema* record_schema(const std::string& key, int max_version, const std::string& domain) const {
    const cost::OpRecord* record = cost::find_rule(domain, key, max_version);
    if (!record || (!record->traits.same_shape_as_input && !record->traits.shape_rule)) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    auto& schema = record_schemas_[record];
    if (!schema) {
      schema = std::make_unique<onnx::OpSchema>(key, __FILE__, __LINE__);
      const cost::ShapeFn rule = record->traits.shape_rule;
      const int weight_index = record->traits.conv_pool_weight_input;
      schema->SetDomain(domain)
          .SinceVersion(int(record->key.since_version))
          .Input(0, "inputs", "", "T", onnx::OpSchema::Variadic, false, 0)
          .Output(0, "outputs", "", "T", onnx::OpSchema::Variadic, false, 0)
          .TypeConstraint("T", onnx::OpSchema::all_tensor_types(), "")
          .TypeAndShapeInferenceFunction([rule, weight_index](onnx::InferenceContext& ctx) {
            if (weight_index > -2) check_conv_pool(ctx, weight_index);  // FusedConv, as Conv
            if (rule) rule(ctx);
            else onnx::propagateShapeAndTypeFromFirstInput(ctx);
          });
    }
    return schema.get();
  }

  mutable std::mutex mutex_;
  // Keyed by the schema and, for a newer default-domain opset, "Op@version".
  mutable std::map<std::pair<const onnx::OpSchema*, std::string>, std::unique_ptr<onnx::OpSchema>> cache_;
  mutable std::unordered_map<const cost::OpRecord*, std::unique_ptr<onnx::OpSchema>> record_schemas_;
};

}  // namespace

const onnx::ISchemaRegistry* guarded_registry() {
  static const GuardedSchemaRegistry registry;
  return &registry;
}

}  // namespace modelstat::loader

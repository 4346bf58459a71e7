// Load stage: shape inference and constant folding in one pass over the
// graph in node order (load_stages.hpp, infer_shapes).
//
// Each node's types come from the op's inference function in the registry
// (guarded_schemas.cc), called as ONNX 1.12's own driver calls it
// (onnx/shape_inference/implementation.cc: symbols for unknown dims, inferred
// types merged into declared ones, data propagation, function bodies, node
// errors collected), or from modelstat's own rule where one covers the node
// (own_shape_rules.hpp: the same types, kept as dims instead of a TypeProto
// per value, which the IR builder reads directly; a TypeProto is made only
// for a reader that needs one); then the node is folded (shape_values.hpp), so the next
// node that reads its value as data (Reshape's shape, Pad's pads, Resize's
// sizes, Range's bounds) sees it. One pass replaces ONNX's inference run
// again and again on a copy of the model with folded values spliced in as
// initializers: that was a full pass per transformer layer, and each pass
// cost ~2 us a node. Differences from ONNX's driver, all of them additions:
// folded values (and, in a subgraph, the enclosing graphs' data) are
// inputs' data; an If whose condition is known (or chosen with --branch)
// takes the selected branch's output types where the merge of both left
// them unknown; subgraphs are inferred by this same driver.
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <deque>
#include <list>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "analyzer/cost/cost_rule.hpp"
#include "analyzer/loader/load_stages.hpp"
#include "analyzer/loader/name_map.hpp"
#include "analyzer/loader/own_shape_rules.hpp"
#include "analyzer/loader/shape_fold.hpp"

namespace modelstat::loader {

namespace {

using onnx::shape_inference::MaterializeSymbolicShape;
using onnx::shape_inference::mergeShapesAndTypes;

// What every graph of one model shares.
struct ModelState {
  explicit ModelState(const LoadOptions& o) : options(o) {}
  const LoadOptions& options;
  const onnx::ISchemaRegistry* registry = guarded_registry();
  std::unordered_map<std::string, int> opsets;
  onnx::shape_inference::ModelLocalFunctionsMap functions;
  onnx::shape_inference::SymbolTableImpl symbols;
  // Data propagation's partial values (ONNX's generated_shape_data_by_name), by tensor name.
  std::unordered_map<std::string, onnx::TensorShapeProto> symbolic;
  int ir_version = onnx::IR_VERSION;

  // What a node's op resolves to, looked up once per (domain, op type): a
  // graph has few op types and many nodes.
  struct Op {
    bool imported = false;  // the model imports the node's domain
    const onnx::OpSchema* schema = nullptr;
    bool experimental = false;
    const cost::OpRecord* record = nullptr;  // for folding; null unless it folds
    own_rules::Rule own = own_rules::Rule::None;  // modelstat's own shape rule, where one covers the op
  };
  const Op& op(const onnx::NodeProto& n) {
    auto& by_type = ops[n.domain()];
    auto it = by_type.find(n.op_type());
    if (it != by_type.end()) return it->second;
    Op op;
    auto domain = opsets.find(n.domain());
    if (domain == opsets.end() && n.domain().empty()) domain = opsets.find("ai.onnx");
    if (domain != opsets.end()) {
      op.imported = true;
      op.schema = registry->GetSchema(n.op_type(), domain->second, n.domain());
    }
    op.experimental = onnx::checker::check_is_experimental_op(n.op_type());
    if (n.domain().empty() || n.domain() == "ai.onnx")
      if (const cost::OpRecord* r = cost::find_op("", n.op_type()); r && r->fold) op.record = r;
    // The versions rule_for covers have ONNX's own inference function.
    if (n.domain().empty() && op.schema && op.schema->has_type_and_shape_inference_function())
      op.own = own_rules::rule_for(n.op_type(), op.schema->SinceVersion());
    return by_type.emplace(n.op_type(), op).first->second;
  }
  std::unordered_map<std::string_view, std::unordered_map<std::string_view, Op>> ops;
};

class GraphRun;

// The vectors a NodeContext fills, kept by its graph and reused node after
// node (a node's context lives while the graph processes that node only).
struct ContextScratch {
  std::vector<const onnx::TypeProto*> inputs;
  std::vector<const onnx::TensorProto*> data;
  std::vector<const onnx::TensorShapeProto*> symbolic;
  std::vector<onnx::TypeProto*> outputs;
  // Data propagation's output types: empty, as ONNX's propagation context
  // has them; grown to the most outputs a node has, never written.
  std::vector<onnx::TypeProto> empty_outputs;
};

// ONNX's InferenceContext over one node, reading types, data and
// propagated values through the graph's scope chain.
class NodeContext final : public onnx::InferenceContext {
 public:
  NodeContext(onnx::NodeProto& node, GraphRun& graph, ContextScratch& scratch);

  const onnx::AttributeProto* getAttribute(const std::string& name) const override {
    return shape_math::find_attr(node_, name.c_str());
  }
  size_t getNumInputs() const override { return size_t(node_.input_size()); }
  const onnx::TypeProto* getInputType(size_t i) const override { return inputs_.at(i); }
  const onnx::TensorProto* getInputData(size_t i) const override { return data_.at(i); }
  const onnx::SparseTensorProto* getInputSparseData(size_t i) const override {
    (void)inputs_.at(i);
    return nullptr;  // sparse initializers are not read
  }
  const onnx::TensorShapeProto* getSymbolicInput(size_t i) const override { return symbolic_.at(i); }
  size_t getNumOutputs() const override { return outputs_.size(); }
  onnx::TypeProto* getOutputType(size_t i) override { return outputs_.at(i); }
  onnx::GraphInferencer* getGraphAttributeInferencer(const std::string& name) override;

  // On the model's arena: an output type a new value_info entry adopts
  // without a copy (GraphRun::update_type).
  google::protobuf::Arena* arena() const { return node_.GetArena(); }

 private:
  onnx::NodeProto& node_;
  GraphRun& graph_;
  std::vector<const onnx::TypeProto*>& inputs_;
  std::vector<const onnx::TensorProto*>& data_;
  std::vector<const onnx::TensorShapeProto*>& symbolic_;
  std::vector<onnx::TypeProto*>& outputs_;  // on arena(), or owned_ without one
  std::vector<std::unique_ptr<onnx::TypeProto>> owned_;
  std::unordered_map<std::string, std::unique_ptr<onnx::GraphInferencer>> inferencers_;
};

// ONNX's DataPropagationContext over one node (Shape -> Gather -> Concat
// chains with symbolic dims, which the folder, holding only known values,
// does not carry).
class PropagationContext final : public onnx::DataPropagationContext {
 public:
  // `inputs`: the node's input types, as its NodeContext read them.
  PropagationContext(onnx::NodeProto& node, GraphRun& graph, const std::vector<const onnx::TypeProto*>& inputs,
                     std::vector<onnx::TypeProto>& empty_outputs);
  const onnx::AttributeProto* getAttribute(const std::string& name) const override {
    return shape_math::find_attr(node_, name.c_str());
  }
  size_t getNumInputs() const override { return size_t(node_.input_size()); }
  const onnx::TypeProto* getInputType(size_t i) const override { return inputs_.at(i); }
  size_t getNumOutputs() const override { return size_t(node_.output_size()); }
  const onnx::TypeProto* getOutputType(size_t i) const override {
    if (i >= getNumOutputs()) throw std::out_of_range("output index");  // as ONNX's vector::at
    return &outputs_[i];
  }
  const onnx::TensorShapeProto* getInputData(size_t i) override;
  void addOutputData(size_t i, onnx::TensorShapeProto&& tsp) override;

 private:
  onnx::NodeProto& node_;
  GraphRun& graph_;
  const std::vector<const onnx::TypeProto*>& inputs_;
  const std::vector<onnx::TypeProto>& outputs_;
};

class GraphRun {
 public:
  // `top_level`: node errors are collected (ONNX's error_mode 1) and data
  // propagation runs; subgraphs run as ONNX runs them, with neither.
  GraphRun(onnx::GraphProto& g, ModelState& model, GraphRun* outer, bool top_level, int ir_version)
      : g_(g), model_(model), outer_(outer), top_level_(top_level), ir_version_(ir_version) {
    fold.outer = outer ? &outer->fold : nullptr;
    fold.dims_of = [this](const std::string& name) -> std::optional<Dims> {
      const uint32_t hash = NameMap<int>::hash_of(name);
      if (const int64_t* own = own_type_of(name, hash)) return Dims(own + 2, own + 2 + own[1]);
      const onnx::TypeProto* t = type_of(name, hash);
      if (!t || !fully_known(*t)) return std::nullopt;
      Dims dims;
      for (const auto& d : t->tensor_type().shape().dim()) dims.push_back(d.dim_value());
      return dims;
    };
  }

  // Runs every node. Throws onnx::InferenceError where ONNX's driver stops a
  // graph (an inferred type that contradicts a declared one).
  void run();

  onnx::TypeProto* type_of(std::string_view name) const { return type_of(name, NameMap<int>::hash_of(name)); }
  const onnx::TensorProto* data_of(std::string_view name) const { return data_of(name, NameMap<int>::hash_of(name)); }
  // With the name's NameMap hash computed already. A type an own rule gave
  // becomes a TypeProto here, at its first reader that needs one.
  onnx::TypeProto* type_of(std::string_view name, uint32_t hash) const {
    for (const GraphRun* s = this; s; s = s->outer_)
      if (onnx::TypeProto** t = s->types_.find(name, hash)) return s->proto_of(*t);
    return nullptr;
  }
  // The type an own rule gave `name` ({elem_type, rank, dims...}), null if
  // it has none (no type, or a TypeProto).
  const int64_t* own_type_of(std::string_view name, uint32_t hash) const {
    for (const GraphRun* s = this; s; s = s->outer_)
      if (onnx::TypeProto* const* t = s->types_.find(name, hash)) return is_own(*t) ? own_of(*t) : nullptr;
    return nullptr;
  }
  const onnx::TensorProto* data_of(std::string_view name, uint32_t hash) const {
    for (const GraphRun* s = this; s; s = s->outer_)
      if (const onnx::TensorProto* const* d = s->data_.find(name, hash)) return *d;
    return nullptr;
  }
  ModelState& model() { return model_; }
  bool top_level() const { return top_level_; }
  // New entries go to `inferred` instead of the graph's value_info (onnx_ir.hpp).
  void keep_types_in(InferredTypes* inferred) { inferred_ = inferred; }

  FoldContext fold;
  std::vector<std::string> errors;  // ONNX's node error lines (top level only)
  int64_t unsized_outputs = 0;      // node outputs left without a full tensor shape

 private:
  void process(onnx::NodeProto& n, const ModelState::Op& op);
  void after_inference(onnx::NodeProto& n, const ModelState::Op& op, bool own);
  bool apply_own_rule(const onnx::NodeProto& n, const ModelState::Op& op);
  bool known_input(const std::string& name, int32_t& elem, own_rules::Dims& dims) const;
  bool unsized(const std::string& name) const;
  // types_ holds a TypeProto*, or an own rule's {elem_type, rank, dims...}
  // (an int64 array on the arena) tagged in the pointer's low bit.
  static bool is_own(const onnx::TypeProto* t) { return reinterpret_cast<uintptr_t>(t) & 1; }
  static const int64_t* own_of(const onnx::TypeProto* t) {
    return reinterpret_cast<const int64_t*>(reinterpret_cast<uintptr_t>(t) & ~uintptr_t(1));
  }
  onnx::TypeProto* proto_of(onnx::TypeProto*& entry) const;
  void update_type(const std::string& name, onnx::TypeProto* inferred, google::protobuf::Arena* arena);
  void take_folded(const onnx::NodeProto& n);
  void take_selected_branch(const onnx::NodeProto& n);
  void take_observed_shapes(const onnx::NodeProto& n);
  onnx::TypeProto* add_entry(const std::string& name);

  onnx::GraphProto& g_;
  ModelState& model_;
  GraphRun* outer_;
  bool top_level_;
  int ir_version_;
  bool has_unsupported_op_ = false, has_experimental_op_ = false;
  // Mutable: a lookup may turn an own rule's type into a TypeProto (proto_of).
  mutable NameMap<onnx::TypeProto*> types_;
  NameMap<onnx::TypeProto*> undefined_;
  NameMap<const onnx::TensorProto*> data_;
  std::list<onnx::TypeProto> initializer_types_;
  std::deque<onnx::TensorProto> folded_;  // data_ of folded values points here
  ContextScratch scratch_;
  InferredTypes* inferred_ = nullptr;
};

// A subgraph (If branch, Loop/Scan body) inferred when its node's inference
// function asks, as ONNX's GraphInferencerImpl does, by this driver.
class SubgraphInferencer final : public onnx::GraphInferencer {
 public:
  SubgraphInferencer(onnx::GraphProto& g, GraphRun& outer) : g_(g), outer_(outer) {}
  std::vector<const onnx::TypeProto*> doInferencing(const std::vector<const onnx::TypeProto*>& input_types,
                                                    const std::vector<const onnx::TensorProto*>&) override {
    ModelState& model = outer_.model();
    const int num_inputs = int(input_types.size());
    std::unordered_set<std::string> initializers;
    for (const auto& t : g_.initializer()) initializers.insert(t.name());
    if (model.ir_version >= 4) {
      if (g_.input_size() != num_inputs) {
        fail_shape_inference("Graph has ", g_.input_size(), " inputs but ", num_inputs, " were provided");
      }
      for (const auto& in : g_.input()) {
        if (initializers.count(in.name())) {
          fail_shape_inference("Cannot use the same name as both a subgraph initializer and subgraph input: ",
                               in.name());
        }
      }
    } else if (num_inputs > g_.input_size()) {
      fail_shape_inference("Graph has ", g_.input_size(), " inputs but ", num_inputs, " were provided.",
                           "The number of graph input cannot be smaller than the number of node input");
    } else if (num_inputs < g_.input_size()) {
      for (int i = 0; i < g_.input_size(); ++i) {
        if (i < num_inputs && initializers.count(g_.input(i).name())) {
          fail_shape_inference("Graph initializer names must appear after the actual inputs: ", g_.input(i).name());
        } else if (i >= num_inputs && !initializers.count(g_.input(i).name())) {
          fail_shape_inference("Cannot find missing input: ", g_.input(i).name(), "in initializers. ");
        }
      }
    }
    for (int i = 0; i < num_inputs; ++i) {
      if (!input_types[size_t(i)]) continue;
      onnx::TypeProto* graph_input = g_.mutable_input(i)->mutable_type();
      mergeShapesAndTypes(*input_types[size_t(i)], graph_input);
      MaterializeSymbolicShape(graph_input, model.symbols);
    }
    // ONNX infers a subgraph at its newest IR version (initializers not
    // listed as inputs have types).
    GraphRun sub(g_, model, &outer_, false, onnx::IR_VERSION);
    sub.run();
    std::vector<const onnx::TypeProto*> out;
    for (const auto& o : g_.output()) out.push_back(&o.type());
    return out;
  }

 private:
  onnx::GraphProto& g_;
  GraphRun& outer_;
};

NodeContext::NodeContext(onnx::NodeProto& node, GraphRun& graph, ContextScratch& scratch)
    : node_(node),
      graph_(graph),
      inputs_(scratch.inputs),
      data_(scratch.data),
      symbolic_(scratch.symbolic),
      outputs_(scratch.outputs) {
  const auto& symbolic = graph.model().symbolic;
  inputs_.clear();
  data_.clear();
  symbolic_.clear();
  outputs_.clear();
  for (int i = 0; i < node.output_size(); ++i) {
    if (arena()) {
      outputs_.push_back(google::protobuf::Arena::CreateMessage<onnx::TypeProto>(arena()));
    } else {
      owned_.push_back(std::make_unique<onnx::TypeProto>());
      outputs_.push_back(owned_.back().get());
    }
  }
  for (const auto& in : node.input()) {
    const uint32_t hash = NameMap<int>::hash_of(in);
    inputs_.push_back(in.empty() ? nullptr : graph.type_of(in, hash));
    const onnx::TensorProto* data = in.empty() ? nullptr : graph.data_of(in, hash);
    data_.push_back(data);
    const onnx::TensorShapeProto* propagated = nullptr;
    if (!data && !in.empty() && !symbolic.empty())
      if (auto it = symbolic.find(in); it != symbolic.end()) propagated = &it->second;
    symbolic_.push_back(propagated);
  }
}

onnx::GraphInferencer* NodeContext::getGraphAttributeInferencer(const std::string& name) {
  if (auto it = inferencers_.find(name); it != inferencers_.end()) return it->second.get();
  for (auto& a : *node_.mutable_attribute())
    if (a.name() == name && a.has_g()) {
      auto inferencer = std::make_unique<SubgraphInferencer>(*a.mutable_g(), graph_);
      return inferencers_.emplace(name, std::move(inferencer)).first->second.get();
    }
  fail_type_inference("Attribute ", name, " does not contain a graph.");
}

PropagationContext::PropagationContext(onnx::NodeProto& node, GraphRun& graph,
                                       const std::vector<const onnx::TypeProto*>& inputs,
                                       std::vector<onnx::TypeProto>& empty_outputs)
    : node_(node), graph_(graph), inputs_(inputs), outputs_(empty_outputs) {
  if (empty_outputs.size() < size_t(node.output_size())) empty_outputs.resize(size_t(node.output_size()));
}

// ONNX's rule: a value propagated earlier, else a 0-D or 1-D int64/int32
// tensor's values (stored for the next reader).
const onnx::TensorShapeProto* PropagationContext::getInputData(size_t i) {
  const std::string& name = node_.input(int(i));  // throws out_of_range as ONNX's .at() does
  auto& symbolic = graph_.model().symbolic;
  if (!symbolic.empty())
    if (auto it = symbolic.find(name); it != symbolic.end()) return &it->second;
  const onnx::TensorProto* data = name.empty() ? nullptr : graph_.data_of(name);
  if (!data || data->dims_size() > 1) return nullptr;
  if (data->data_type() != onnx::TensorProto::INT64 && data->data_type() != onnx::TensorProto::INT32) return nullptr;
  const auto values = shape_math::read_tensor(*data);
  if (!values) return nullptr;
  onnx::TensorShapeProto tsp;
  for (int64_t v : values->values) tsp.add_dim()->set_dim_value(v);
  return &symbolic.emplace(name, std::move(tsp)).first->second;
}

void PropagationContext::addOutputData(size_t i, onnx::TensorShapeProto&& tsp) {
  if (i >= size_t(node_.output_size())) {
    fail_shape_inference("Input ", i, " is out of bounds.");
  }
  if (!graph_.model().symbolic.emplace(node_.output(int(i)), std::move(tsp)).second) {
    fail_shape_inference("Data for input  " + std::to_string(i) + " already exists.");
  }
}

void GraphRun::run() {
  onnx::shape_inference::TraverseGraphsToAddExistingSymbols(g_, model_.symbols);
  size_t outputs = 0;
  for (const auto& n : g_.node()) outputs += size_t(n.output_size());
  types_.reserve(size_t(g_.value_info_size() + g_.input_size() + g_.output_size() + g_.initializer_size()) + outputs);
  auto declare = [this](onnx::ValueInfoProto& vi) {
    if (vi.has_type()) types_[vi.name()] = vi.mutable_type();
    else undefined_[vi.name()] = vi.mutable_type();
  };
  for (auto& vi : *g_.mutable_value_info()) declare(vi);
  for (auto& vi : *g_.mutable_input()) declare(vi);
  for (auto& vi : *g_.mutable_output()) declare(vi);
  for (const auto& t : g_.initializer()) {
    data_[t.name()] = &t;
    onnx::TypeProto type;
    auto* tensor = type.mutable_tensor_type();
    tensor->set_elem_type(t.data_type());
    auto* shape = tensor->mutable_shape();
    for (int64_t d : t.dims()) shape->add_dim()->set_dim_value(d);
    if (onnx::TypeProto** declared = types_.find(t.name())) {
      onnx::shape_inference::checkShapesAndTypes(type, **declared);
    } else if (ir_version_ >= 4) {
      initializer_types_.push_back(std::move(type));
      types_[t.name()] = &initializer_types_.back();
    }
    if (Opt v = shape_math::read_tensor(t)) fold.values[t.name()] = std::move(*v);
  }
  // Each node's op, resolved once (two hashed lookups a node).
  std::vector<const ModelState::Op*> ops;
  ops.reserve(size_t(g_.node_size()));
  for (const auto& n : g_.node()) {
    ops.push_back(&model_.op(n));
    if (ops.back()->experimental) {
      has_experimental_op_ = true;
    } else if (n.op_type() == "Constant" && n.output_size() == 1) {
      for (const auto& a : n.attribute())
        if (a.name() == "value" && a.type() == onnx::AttributeProto::TENSOR && a.has_t()) data_[n.output(0)] = &a.t();
    }
  }
  const int n = g_.node_size();
  for (int i = 0; i < n; ++i) {
    if (i + kPrefetchAhead < n) {
      const onnx::NodeProto& ahead = g_.node(i + kPrefetchAhead);
      for (const auto& in : ahead.input()) types_.prefetch(in);
      for (const auto& out : ahead.output()) types_.prefetch(out);
    }
    process(*g_.mutable_node(i), *ops[size_t(i)]);
  }
}

void GraphRun::process(onnx::NodeProto& n, const ModelState::Op& op) {
  if (op.own != own_rules::Rule::None && apply_own_rule(n, op)) return after_inference(n, op, true);
  if (!op.imported) {
    fail_type_inference("Cannot infer type and shape for node name ", n.name(), ". No opset import for domain",
                        n.domain(), " optype ", n.op_type());
  }
  const onnx::OpSchema* schema = op.schema;
  NodeContext ctx(n, *this, scratch_);
  const onnx::ShapeInferenceOptions options(false, top_level_ ? 1 : 0, top_level_);
  bool inferred = true;
  try {
    if (schema && schema->has_type_and_shape_inference_function()) {
      schema->GetTypeAndShapeInferenceFunction()(ctx);
    } else if (schema && schema->HasFunction()) {
      onnx::shape_inference::InferShapeForFunctionNode(*schema->GetFunction(), model_.registry, ctx, options,
                                                       model_.functions, &model_.symbols, &model_.symbolic);
    } else if (schema) {
      inferred = false;
    } else if (auto f = model_.functions.find(n.domain() + ":" + n.op_type()); f != model_.functions.end()) {
      onnx::shape_inference::InferShapeForFunctionNode(*f->second, model_.registry, ctx, options, model_.functions,
                                                       &model_.symbols, &model_.symbolic);
    } else {
      has_unsupported_op_ = true;
      inferred = false;
    }
  } catch (const onnx::InferenceError& e) {
    // ONNX does not report errors once a node without a schema was met.
    if (top_level_ && !has_unsupported_op_ && !has_experimental_op_)
      errors.push_back(onnx::shape_inference::GetErrorWithNodeInfo(n, e));
    inferred = false;
  }
  if (inferred) {
    try {
      for (int i = 0; i < n.output_size(); ++i)
        if (!n.output(i).empty()) update_type(n.output(i), ctx.getOutputType(size_t(i)), ctx.arena());
    } catch (const std::runtime_error& e) {
      fail_shape_inference(onnx::shape_inference::GetErrorWithNodeInfo(n, e));
    }
    // Data propagation only adds knowledge: where it fails, the node's
    // partial values stay unknown and inference goes on. (ONNX's driver stops
    // the whole graph there; its Concat propagator reads an empty 1-D value,
    // the Slice of a shape to nothing, as rank 0 and fails, and every node
    // after it went unsized in LayerNormalization's expanded function.)
    if (top_level_ && schema && schema->has_data_propagation_function()) {
      try {
        PropagationContext propagation(n, *this, scratch_.inputs, scratch_.empty_outputs);
        schema->GetDataPropagationFunction()(propagation);
      } catch (const std::runtime_error&) {
      }
    }
  }
  after_inference(n, op, false);
}

// What follows a node's inference, by ONNX's function or (`own`) an own
// rule, which sized the node's one output.
void GraphRun::after_inference(onnx::NodeProto& n, const ModelState::Op& op, bool own) {
  if (n.domain().empty() && n.op_type() == "If") take_selected_branch(n);
  if (top_level_ && !model_.options.observed_shapes.empty()) take_observed_shapes(n);
  if (op.record) take_folded(n);
  if (own) return;
  for (const auto& out : n.output())
    if (!out.empty()) unsized_outputs += unsized(out);
}

bool GraphRun::unsized(const std::string& name) const {
  const uint32_t hash = NameMap<int>::hash_of(name);
  if (own_type_of(name, hash)) return false;  // own rules give full shapes only
  const onnx::TypeProto* t = type_of(name, hash);
  return !t || (t->has_tensor_type() && !fully_known(*t));
}

onnx::TypeProto* GraphRun::proto_of(onnx::TypeProto*& entry) const {
  if (!is_own(entry)) return entry;
  const int64_t* own = own_of(entry);
  auto* type = google::protobuf::Arena::CreateMessage<onnx::TypeProto>(g_.GetArena());
  auto* tensor = type->mutable_tensor_type();
  tensor->set_elem_type(int32_t(own[0]));
  auto* shape = tensor->mutable_shape();
  for (int64_t k = 0; k < own[1]; ++k) shape->add_dim()->set_dim_value(own[2 + k]);
  entry = type;  // the IR builder still reads the own entry of inferred_: the same type
  return type;
}

// A fully known tensor type of `name` (a graph input, a declared or inferred
// value, an initializer): its elem type and dims.
bool GraphRun::known_input(const std::string& name, int32_t& elem, own_rules::Dims& dims) const {
  if (name.empty()) return false;
  const uint32_t hash = NameMap<int>::hash_of(name);
  for (const GraphRun* s = this; s; s = s->outer_) {
    onnx::TypeProto* const* entry = s->types_.find(name, hash);
    if (!entry) continue;
    if (!*entry) return false;
    if (is_own(*entry)) {
      const int64_t* own = own_of(*entry);
      elem = int32_t(own[0]);
      dims.rank = int(own[1]);
      std::copy(own + 2, own + 2 + own[1], dims.d);
      return true;
    }
    const onnx::TypeProto& t = **entry;
    if (!t.has_tensor_type() || !t.tensor_type().has_shape()) return false;
    const auto& shape = t.tensor_type().shape();
    if (shape.dim_size() > own_rules::kMaxRank) return false;
    dims.rank = shape.dim_size();
    for (int k = 0; k < dims.rank; ++k) {
      const auto& d = shape.dim(k);
      if (!d.has_dim_value() || d.dim_value() < 0) return false;
      dims.d[k] = d.dim_value();
    }
    elem = t.tensor_type().elem_type();
    return elem != onnx::TensorProto::UNDEFINED;
  }
  return false;
}

// The node's output type by modelstat's own rule, where it gives what ONNX's
// function would (own_shape_rules.hpp) and nothing else would differ: a top
// level node of one output, inputs of fully known types, an output declared
// nowhere (no merge), and no data propagation to run (its inputs carry no
// values it reads). False: ONNX's function runs instead.
bool GraphRun::apply_own_rule(const onnx::NodeProto& n, const ModelState::Op& op) {
  using own_rules::Rule;
  if (!top_level_ || !inferred_ || !g_.GetArena() || n.output_size() != 1 || n.output(0).empty()) return false;
  const int inputs = op.own == Rule::Unary ? 1 : 2;
  if (n.input_size() != inputs) return false;
  const std::string& out = n.output(0);
  const uint32_t out_hash = NameMap<int>::hash_of(out);
  if (types_.find(out, out_hash) || (undefined_.size() && undefined_.find(out, out_hash))) return false;
  own_rules::Dims in[2];
  int32_t elem[2] = {0, 0};
  for (int i = 0; i < inputs; ++i) {
    if (!known_input(n.input(i), elem[i], in[i])) return false;
    // Add/Sub/Mul-14 propagate integer values (ONNX's data propagation):
    // where an input carries some, ONNX's path runs.
    if (op.schema->has_data_propagation_function()) {
      if (model_.symbolic.count(n.input(i))) return false;
      if (const onnx::TensorProto* d = data_of(n.input(i)))
        if ((d->data_type() == onnx::TensorProto::INT64 || d->data_type() == onnx::TensorProto::INT32) &&
            d->dims_size() <= 1)
          return false;
    }
  }
  own_rules::Dims result;
  switch (op.own) {
    case Rule::Unary:
      result = in[0];
      break;
    case Rule::Broadcast:
      if (!own_rules::broadcast(in[0], in[1], result)) return false;
      break;
    case Rule::MatMul:
      if (!own_rules::matmul(in[0], in[1], result)) return false;
      break;
    case Rule::Reshape: {
      // ONNX reads the target shape as input 1's data (an initializer, a
      // Constant or a folded value), int64 only.
      const onnx::TensorProto* target = data_of(n.input(1));
      if (!target || target->data_type() != onnx::TensorProto::INT64 || target->dims_size() != 1) return false;
      const Opt values = shape_math::read_tensor(*target);
      if (!values) return false;
      const onnx::AttributeProto* allowzero = shape_math::find_attr(n, "allowzero");
      if (!own_rules::reshape(in[0], values->values.data(), values->values.size(), allowzero && allowzero->i() != 0,
                              result))
        return false;
      break;
    }
    case Rule::None:
      return false;
  }
  int64_t* own = google::protobuf::Arena::CreateArray<int64_t>(g_.GetArena(), size_t(2 + result.rank));
  own[0] = elem[0];
  own[1] = result.rank;
  std::copy(result.d, result.d + result.rank, own + 2);
  types_.try_emplace(out, out_hash, reinterpret_cast<onnx::TypeProto*>(reinterpret_cast<uintptr_t>(own) | 1));
  inferred_->push_back({&out, nullptr, own});
  return true;
}

// ONNX's updateType: a symbol for each unknown dim, then merged into the
// declared type (a new value_info entry when there is none).
// `inferred` on the graph's arena is adopted by a new entry: merging into an
// empty type makes a copy of it.
void GraphRun::update_type(const std::string& name, onnx::TypeProto* inferred, google::protobuf::Arena* arena) {
  if (inferred->value_case() == onnx::TypeProto::VALUE_NOT_SET) return;
  MaterializeSymbolicShape(inferred, model_.symbols);
  // One probe for the lookup and the insertion. A null entry reads as no
  // entry (type_of), and no entry was all there was before, should the merge
  // below throw: a name that is new here is in no enclosing graph either.
  const uint32_t hash = NameMap<int>::hash_of(name);
  onnx::TypeProto** entry = types_.try_emplace(name, hash, nullptr).first;
  onnx::TypeProto* existing = nullptr;
  if (*entry) {
    existing = proto_of(*entry);
  } else if (outer_ && (existing = outer_->type_of(name, hash))) {
    // A subgraph's output named as an enclosing graph's value (ONNX merges into it too).
    *entry = existing;
  } else {
    if (undefined_.size())
      if (onnx::TypeProto** u = undefined_.find(name, hash)) **u = *inferred;
    if (inferred_ && arena && arena == g_.GetArena()) {
      inferred_->push_back({&name, inferred});
      *entry = inferred;
      return;
    }
    auto* vi = g_.add_value_info();
    vi->set_name(name);
    if (arena && arena == vi->GetArena()) {
      vi->unsafe_arena_set_allocated_type(inferred);
      *entry = inferred;
      return;
    }
    existing = vi->mutable_type();
  }
  mergeShapesAndTypes(*inferred, existing);
  *entry = existing;
}

// A new, empty type for `name` (a node output of this graph): kept in
// inferred_ where the graph has one, else a new value_info entry.
onnx::TypeProto* GraphRun::add_entry(const std::string& name) {
  if (inferred_ && g_.GetArena()) {
    auto* type = google::protobuf::Arena::CreateMessage<onnx::TypeProto>(g_.GetArena());
    inferred_->push_back({&name, type});
    return type;
  }
  auto* vi = g_.add_value_info();
  vi->set_name(name);
  return vi->mutable_type();
}

// The node's outputs as folded values, readable as data by later nodes.
void GraphRun::take_folded(const onnx::NodeProto& n) {
  fold_node(fold, n);
  for (const auto& out : n.output()) {
    if (out.empty()) continue;
    auto it = fold.values.find(out);
    if (it == fold.values.end()) continue;
    folded_.push_back(to_tensor_proto(it->second, out));
    data_[out] = &folded_.back();
  }
}

// An If whose condition is known before running (folded, or chosen with
// --branch) produces what that branch produces: its output types where
// ONNX's merge of both branches left them unknown (Silero VAD's decoder
// squeezes in one branch only).
void GraphRun::take_selected_branch(const onnx::NodeProto& n) {
  if (n.input_size() < 1) return;
  std::optional<bool> then_branch;
  const auto& observed = model_.options.observed_branches;
  if (auto seen = observed.find(n.name()); !n.name().empty() && seen != observed.end())
    then_branch = seen->second;
  else if (auto it = model_.options.branches.find(n.name()); !n.name().empty() && it != model_.options.branches.end())
    then_branch = it->second;
  else if (const ConstValue* cond = fold.value(n.input(0));
           cond && cond->values.size() == 1 && !is_real_type(cond->elem_type))
    then_branch = cond->values[0] != 0;
  if (!then_branch) return;
  const onnx::GraphProto* branch = nullptr;
  for (const auto& a : n.attribute())
    if (a.name() == (*then_branch ? "then_branch" : "else_branch") && a.has_g()) branch = &a.g();
  if (!branch) return;
  for (int k = 0; k < n.output_size() && k < branch->output_size(); ++k) {
    const std::string& out = n.output(k);
    // A branch output's type: on the output itself, or (an output declared
    // without a type) where inference put it, in the branch's value_info.
    const onnx::TypeProto* found = nullptr;
    const auto& o = branch->output(k);
    if (o.has_type() && fully_known(o.type())) found = &o.type();
    for (const auto& vi : branch->value_info())
      if (!found && vi.name() == o.name() && fully_known(vi.type())) found = &vi.type();
    if (out.empty() || !found) continue;
    onnx::TypeProto* current = type_of(out);
    if (current && fully_known(*current)) continue;
    if (!current) {
      current = add_entry(out);
      types_[out] = current;
    }
    *current = *found;
  }
}

// The dims a run observed (LoadOptions::observed_shapes) for the node's
// outputs that inference left without a full shape, where they agree with
// what it did infer (rank, known dims): a data-dependent shape (NonZero, a
// Reshape to computed dims) as it ran, so that the nodes after it are costed.
void GraphRun::take_observed_shapes(const onnx::NodeProto& n) {
  for (const std::string& out : n.output()) {
    auto seen = model_.options.observed_shapes.find(out);
    if (out.empty() || seen == model_.options.observed_shapes.end()) continue;
    onnx::TypeProto* current = type_of(out);
    if (current && (fully_known(*current) || (current->value_case() != onnx::TypeProto::kTensorType &&
                                              current->value_case() != onnx::TypeProto::VALUE_NOT_SET)))
      continue;
    const std::vector<int64_t>& dims = seen->second;
    if (current && current->has_tensor_type() && current->tensor_type().has_shape()) {
      const auto& shape = current->tensor_type().shape();
      bool agree = shape.dim_size() == int(dims.size());
      for (int k = 0; agree && k < shape.dim_size(); ++k)
        agree = !shape.dim(k).has_dim_value() || shape.dim(k).dim_value() == dims[size_t(k)];
      if (!agree) continue;
    }
    if (!current) {
      current = add_entry(out);
      types_[out] = current;
    }
    auto* shape = current->mutable_tensor_type()->mutable_shape();
    shape->clear_dim();
    for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  }
}

}  // namespace

bool fully_known(const onnx::TypeProto& type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return false;
  for (const auto& d : type.tensor_type().shape().dim())
    if (!d.has_dim_value()) return false;
  return true;
}

void infer_shapes(onnx::ModelProto& m, const LoadOptions& options, std::vector<std::string>& notices,
                  std::string& unknown_shape_cause, InferredTypes* inferred) {
  ModelState model(options);
  for (const auto& o : m.opset_import()) model.opsets[o.domain()] = int(o.version());
  for (const auto& f : m.functions()) model.functions.emplace(f.domain() + ":" + f.name(), &f);
  model.ir_version = int(m.ir_version());
  GraphRun graph(*m.mutable_graph(), model, nullptr, true, int(m.ir_version()));
  if (inferred) {
    inferred->clear();
    size_t outputs = 0;
    for (const auto& n : m.graph().node()) outputs += size_t(n.output_size());
    inferred->reserve(outputs);
    graph.keep_types_in(inferred);
  }
  std::string stopped;
  try {
    graph.run();
  } catch (const std::exception& e) {
    stopped = e.what();  // ONNX's driver stops the graph here; what it inferred stays
  }
  // ONNX's report: one message, "Shape inference error(s): " and a line per
  // node error (or the error that stopped the graph); its first five lines.
  std::string message = stopped;
  if (message.empty() && !graph.errors.empty()) {
    message = "[ShapeInferenceError] Shape inference error(s): ";
    for (const auto& e : graph.errors) message += e + "\n";
  }
  size_t pos = 0, lines = 0;
  while (pos < message.size() && lines < 5) {
    const size_t nl = message.find('\n', pos);
    const std::string line = message.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    if (!line.empty()) {
      notices.push_back("shape inference: " + line);
      ++lines;
    }
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  if (graph.unsized_outputs == 0) return;
  if (auto why = first_unknown_notice(m.graph(), [&graph](const std::string& name) { return graph.type_of(name); },
                                      graph.fold))
    unknown_shape_cause = *why;
}

}  // namespace modelstat::loader

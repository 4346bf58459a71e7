// Load stage, after inference: when some node's output shape is still
// unknown, the first node that is the cause (load_stages.hpp,
// first_unknown_notice). Unknown shapes spread: every node after the first
// unknown one that reads it is unknown too, and a list of them tells the user
// nothing. The cause is the first node, in graph order, whose inputs are all
// sized but whose output is not; most often because it reads a small input
// as data (Pad's pads, Reshape's shape, Resize's sizes) whose value is not
// known before running, and the chain that computes that value ends at an
// op the folder does not evaluate, a graph input (data, known only at run
// time) or an initializer it does not read.
#include <unordered_map>
#include <vector>

#include "analyzer/cost/cost_rule.hpp"
#include "analyzer/loader/load_stages.hpp"
#include "analyzer/loader/onnx_ir.hpp"
#include "analyzer/loader/shape_fold.hpp"

namespace modelstat::loader {

namespace {

constexpr int kMaxHops = 64;  // a value's chain is followed at most this far back

bool is_tensor(const onnx::TypeProto* t) { return t && t->has_tensor_type(); }

// Known for this purpose: sized, or not a tensor (sequences, maps, optionals
// are never sized; they are not what left a shape unknown).
bool known(const onnx::TypeProto* t) { return t && (!t->has_tensor_type() || fully_known(*t)); }

std::optional<int64_t> element_count(const onnx::TypeProto* t) {
  if (!is_tensor(t) || !fully_known(*t)) return std::nullopt;
  int64_t n = 1;
  for (const auto& d : t->tensor_type().shape().dim()) {
    if (d.dim_value() > kMaxConstValueElements) return kMaxConstValueElements + 1;
    n *= d.dim_value();
    if (n > kMaxConstValueElements) return kMaxConstValueElements + 1;
  }
  return n;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string node_text(const onnx::GraphProto& g, int i) {
  const auto& n = g.node(i);
  const std::string op = n.domain().empty() || n.domain() == "ai.onnx" ? n.op_type() : n.domain() + "." + n.op_type();
  return "node " + std::to_string(i) + " " + quoted(node_label(n, i)) + " (" + op + ")";
}

class CauseFinder {
 public:
  CauseFinder(const onnx::GraphProto& g, const std::function<const onnx::TypeProto*(const std::string&)>& type_of,
              const FoldContext& fold)
      : g_(g), type_of_(type_of), fold_(fold) {
    for (int i = 0; i < g.node_size(); ++i)
      for (const auto& o : g.node(i).output())
        if (!o.empty()) producer_[o] = i;
    for (const auto& t : g.initializer()) initializer_[t.name()] = &t;
    for (const auto& in : g.input()) graph_inputs_.emplace(in.name(), true);
  }

  // Why the value of `name` is unknown: the chain of nodes that computes it,
  // followed back through the first input whose value is unknown, to where
  // it stops.
  // nullopt when the chain stops at dims left unknown upstream (the graph's
  // own unbound input dims: no node is the cause).
  std::optional<std::string> why_value_unknown(const std::string& name) {
    std::vector<int> chain;
    std::string current = name;
    std::string stop;
    for (int depth = 0; depth < kMaxHops && stop.empty(); ++depth) {
      auto p = producer_.find(current);
      if (p == producer_.end()) {
        stop = origin_without_node(current);
        break;
      }
      const int i = p->second;
      const onnx::NodeProto& n = g_.node(i);
      const std::string domain = n.domain() == "ai.onnx" ? "" : n.domain();
      const cost::OpRecord* record = cost::find_op(domain, n.op_type());
      if (!record || !record->fold || !domain.empty()) {
        stop = node_text(g_, i) + ", an op modelstat does not evaluate before running";
        break;
      }
      // Shape and Size need their input's dims, not its value.
      if (n.op_type() == "Shape" || n.op_type() == "Size") {
        if (n.input_size() > 0 && !known(type_of_(n.input(0)))) return std::nullopt;
        stop = node_text(g_, i) + ", which could not evaluate it";
        break;
      }
      std::string next;
      for (const auto& in : n.input())
        if (!in.empty() && !fold_.value(in)) {
          next = in;
          break;
        }
      if (next.empty()) {
        const auto out = element_count(type_of_(current));
        stop = node_text(g_, i) +
               (out && *out > kMaxConstValueElements
                    ? ": its result has more than " + std::to_string(kMaxConstValueElements) +
                          " elements, more than modelstat folds"
                    : ": its inputs are known, but its attributes or types are not ones modelstat folds");
        break;
      }
      chain.push_back(i);
      current = next;
    }
    if (stop.empty()) stop = "a value more than " + std::to_string(kMaxHops) + " nodes back";
    if (chain.empty()) return "it stops at " + stop;
    std::string text = "the chain that computes it (" + node_text(g_, chain.front());
    if (chain.size() > 1) text += ", " + std::to_string(chain.size() - 1) + " more";
    return text + ") stops at " + stop;
  }

 private:
  // A value no node of this graph computes.
  std::string origin_without_node(const std::string& name) const {
    if (auto t = initializer_.find(name); t != initializer_.end()) {
      const onnx::TensorProto& p = *t->second;
      int64_t n = 1;
      for (int64_t d : p.dims()) n *= d;
      const std::string what = "initializer " + quoted(name);
      if (n > kMaxConstValueElements)
        return what + " of " + std::to_string(n) + " elements, more than the " +
               std::to_string(kMaxConstValueElements) + " modelstat folds";
      if (p.data_location() == onnx::TensorProto::EXTERNAL || p.external_data_size() > 0)
        return what + ", whose data is not read (external, or larger than 4096 bytes)";
      return what + ", of a type modelstat does not fold";
    }
    if (graph_inputs_.count(name)) return "graph input " + quoted(name) + ": its value is known only at run time";
    return quoted(name) + ", a value of an enclosing graph not known before running";
  }

  const onnx::GraphProto& g_;
  const std::function<const onnx::TypeProto*(const std::string&)>& type_of_;
  const FoldContext& fold_;
  std::unordered_map<std::string, int> producer_;
  std::unordered_map<std::string, const onnx::TensorProto*> initializer_;
  std::unordered_map<std::string, bool> graph_inputs_;
};

}  // namespace

std::optional<std::string> first_unknown_notice(
    const onnx::GraphProto& g, const std::function<const onnx::TypeProto*(const std::string&)>& type_of,
    const FoldContext& fold) {
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& n = g.node(i);
    std::string unknown_output;
    for (const auto& o : n.output())
      if (!o.empty() && !known(type_of(o))) {
        unknown_output = o;
        break;
      }
    if (unknown_output.empty()) continue;
    bool inputs_known = true;
    for (const auto& in : n.input()) inputs_known = inputs_known && (in.empty() || known(type_of(in)));
    if (!inputs_known) continue;
    std::string line = "first unknown shape: " + node_text(g, i) + " has every input sized, but its output " +
                       quoted(unknown_output) + " is not";
    const std::string domain = n.domain() == "ai.onnx" ? "" : n.domain();
    const onnx::TypeProto* out_type = type_of(unknown_output);
    if (!out_type && !cost::find_op(domain, n.op_type())) {
      return line + ": modelstat has no rule for this op, nor ONNX a shape inference. Every node that depends on "
                    "it is uncounted";
    }
    // The input read as data: small (a shape, pads, sizes, scales; integer
    // inputs first, then float ones except for control flow, whose small
    // inputs are loop state) and not known.
    bool control_flow = false;
    for (const auto& a : n.attribute()) control_flow = control_flow || a.has_g() || a.graphs_size() > 0;
    for (const bool integer_pass : {true, false}) {
      if (!integer_pass && control_flow) break;
      for (int k = 0; k < n.input_size(); ++k) {
        const std::string& in = n.input(k);
        if (in.empty() || fold.value(in)) continue;
        const onnx::TypeProto* t = type_of(in);
        const auto count = element_count(t);
        if (!count || *count > kMaxConstValueElements) continue;
        if (is_real_type(t->tensor_type().elem_type()) == integer_pass) continue;
        CauseFinder finder(g, type_of, fold);
        const auto why = finder.why_value_unknown(in);
        // Unknown dims upstream come from unbound input dims, which the
        // binding notice names with the flags to give.
        if (!why) return std::nullopt;
        return line + ": it reads input " + std::to_string(k) + " " + quoted(in) +
               " as data, and that value is not known before running; " + *why +
               ". Every node that depends on it is uncounted";
      }
    }
    if (control_flow)
      return line + ": its subgraph leaves that output unsized. Every node that depends on it is uncounted";
    return line + ": shape inference cannot size it from its inputs' shapes and known values (the size may depend "
                  "on data read at run time). Every node that depends on it is uncounted";
  }
  return std::nullopt;
}

}  // namespace modelstat::loader

// The analysis pass: cost every node with its rule, attribute params once,
// total everything, and compute peak activation memory.
#include "modelstat/analysis.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include "analyzer/cost/cost_rule.hpp"
#include "analyzer/loader/loader.hpp"
#include "analyzer/saturating.hpp"
#include "analyzer/stage_timer.hpp"
#include "modelstat/error.hpp"
#include "modelstat/lifetimes.hpp"

namespace modelstat {

const char* const kCostConvention =
    "MACs = multiply-accumulates of contractions (Conv, ConvTranspose, Gemm, MatMul, Einsum, RNN; integer ones "
    "too: ConvInteger, QLinearConv, MatMulInteger, QLinearMatMul); "
    "FLOPs = 2*MACs + bias, elementwise, activation, normalisation, pooling, softmax and reduction work "
    "(per-element constants: docs/COST_MODEL.md); params = elements of float and 8-bit initializers and "
    "non-scalar Constant tensors, each tensor once; "
    "bytes = inputs read + outputs written (views move 0)";

const char* cost_status_name(CostStatus s) {
  switch (s) {
    case CostStatus::Exact: return "exact";
    case CostStatus::UnknownShape: return "unknown_shape";
    case CostStatus::UnknownOp: return "unknown_op";
  }
  return "unknown";
}

std::string GraphValue::to_string() const { return name + ": " + dtype + " " + shape.to_string(); }

double NodeCost::arithmetic_intensity() const {
  const int64_t b = bytes();
  return b > 0 ? double(flops) / double(b) : 0.0;
}

namespace {

constexpr size_t kMaxListedConsumers = 16;  // names listed per shared weight

// Params: float and 8-bit constant tensors. Every initializer counts (the
// file's own count); a Constant node counts when it holds a tensor (of any
// rank from 1 up: a [1]-shaped bias too), not a scalar literal (rank 0:
// exporters emit GELU's 0.5 and sqrt(2) as scalar Constants).
bool counts_as_weight(const Tensor& t) {
  if (!t.is_constant() || !dtype_counts_as_params(t.dtype)) return false;
  if (t.role == TensorRole::Constant) return t.shape.rank_known && !t.shape.dims.empty() && t.shape.element_count();
  return true;
}

// The values a weight holds: its elements, or for bit-packed weights
// (MatMulNBits' uint8 blobs: 2 4-bit values a byte) elements * 8 / bits.
int64_t weight_values(const Tensor& t, int packed_bits) {
  const int64_t n = *t.shape.element_count();
  return packed_bits > 0 ? n / packed_bits * 8 + n % packed_bits * 8 / packed_bits : n;
}

// Tensors that ops read as bit-packed weights, with their bits per value (the
// first reader's), over the graph and its subgraphs.
// Only one input of an op can be packed: its record is looked up once an op
// type of the default domain (a 100k-node graph has a handful), once a node
// of another domain.
void collect_packed_weights(const Graph& g, std::map<const Tensor*, int>& bits,
                            std::unordered_map<std::string, int>& default_domain_inputs) {
  for (const Node& node : g.nodes) {
    int k = -1;
    if (node.domain.empty()) {
      auto [it, inserted] = default_domain_inputs.try_emplace(node.op_type);
      if (inserted) it->second = op_packed_weight_input(node);
      k = it->second;
    } else {
      k = op_packed_weight_input(node);
    }
    if (k >= 0 && size_t(k) < node.inputs.size() && node.inputs[size_t(k)] >= 0)
      if (const int b = op_packed_weight_bits(node, size_t(k))) bits.emplace(&g.tensors[size_t(node.inputs[size_t(k)])], b);
    for (const auto& sub : node.subgraphs()) collect_packed_weights(*sub, bits, default_domain_inputs);
  }
}

void add_into(NodeCost& into, const NodeCost& c) {
  add_counts(into, c);
  if (c.status != CostStatus::Exact && into.status == CostStatus::Exact) into.status = CostStatus::UnknownShape;
}

class GraphCoster {
 public:
  explicit GraphCoster(const Model& model) : model_(model) {}

  // Cost of one node; params are attributed to the first node that reads a weight.
  // `path` is the node's row name; the rows of the subgraph nodes one run
  // executes (for an If / Loop / Scan) go to `rows`.
  NodeCost cost_node(const Graph& g, const Node& node, std::vector<bool>& weight_counted, int* subgraph_nodes,
                     const std::string& path, std::vector<NodeReport>* rows) {
    NodeCost cost;
    const OpRule op_rule = rule_of(node);
    const int64_t opset = op_rule.opset;
    const cost::CostRule* rule = op_rule.rule;
    bool sizes_known = true;
    std::string unknown_tensor;
    int64_t read = 0, weight = 0, written = 0;
    // A tensor's bytes, or nullopt after noting the first tensor of unknown size.
    auto known_size = [&](const Tensor& t) {
      const auto size = t.size_bytes();
      if (!size) {
        sizes_known = false;
        if (unknown_tensor.empty()) unknown_tensor = t.name;
      }
      return size;
    };
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const int in = node.inputs[k];
      // Each tensor once, however many inputs read it (x * x).
      if (in < 0 || std::find(node.inputs.begin(), node.inputs.begin() + long(k), in) != node.inputs.begin() + long(k))
        continue;
      const Tensor& t = g.tensors[size_t(in)];
      const auto size = known_size(t);
      if (!size) continue;
      read = cost::checked_add(read, *size, node);
      if (t.is_constant()) weight = cost::checked_add(weight, *size, node);
      if (counts_as_weight(t) && !weight_counted[size_t(in)]) {
        weight_counted[size_t(in)] = true;
        cost.params = cost::checked_add(cost.params, weight_values(t, op_packed_weight_bits(node, k)), node);
      }
    }
    for (int out : node.outputs) {
      if (out < 0) continue;
      const Tensor& t = g.tensors[size_t(out)];
      const auto size = known_size(t);
      if (!size) continue;
      written = cost::checked_add(written, *size, node);
      // A Constant node holds its weight itself.
      if (t.role == TensorRole::Constant && counts_as_weight(t) && !weight_counted[size_t(out)]) {
        weight_counted[size_t(out)] = true;
        cost.params = cost::checked_add(cost.params, *t.shape.element_count(), node);
      }
    }
    cost.bytes_read = read;
    cost.bytes_written = written;
    cost.weight_bytes = weight;

    if (!rule) {
      cost.status = CostStatus::UnknownOp;
      cost.rule = "none";
      cost.note = "no cost rule for " + (node.domain.empty() ? std::string() : node.domain + "::") + node.op_type;
      return cost;
    }
    cost::RuleResult r = rule->fn(cost::CostContext(g, node, opset));
    cost.status = r.status;
    cost.macs = r.macs;
    cost.flops = r.flops;
    cost.rule = r.rule;
    cost.note = r.note;
    if (r.bytes_read_override) {
      cost.bytes_read = *r.bytes_read_override;
      cost.weight_bytes = std::min(cost.weight_bytes, cost.bytes_read);
    }
    if (r.bytes_written_override) cost.bytes_written = *r.bytes_written_override;
    const bool bytes_overridden = r.bytes_read_override && r.bytes_written_override;
    if (!sizes_known && !bytes_overridden && cost.status == CostStatus::Exact) {
      cost.status = CostStatus::UnknownShape;
      cost.note = "size of '" + unknown_tensor + "' unknown";
    }

    // If / Loop / Scan: the subgraphs' cost as one run executes it.
    const auto subgraphs = node.subgraphs();
    if (!subgraphs.empty()) {
      const int64_t params_before = cost.params;
      int nested = 0;
      std::string note;
      const NodeCost body = control_flow_cost(g, node, path, rows, &nested, &note);
      add_into(cost, body);
      cost.params = params_before + body.params;
      *subgraph_nodes = nested;
      cost.note = note;
    }
    return cost;
  }

  // Control flow the analysis could not decide, with the subgraph depth of
  // each node: If nodes ("name=then" for the branch counted), Loop and Scan
  // nodes counted once.
  using Named = std::pair<int, std::string>;
  std::vector<Named> unknown_ifs, unknown_loops, unknown_scans;

  // One notice per kind, naming the first few nodes.
  std::vector<std::string> control_flow_notices() const {
    // Outermost first: the top-level node is the one a user binds first.
    auto first = [](std::vector<Named> names) {
      std::stable_sort(names.begin(), names.end(), [](const Named& a, const Named& b) { return a.first < b.first; });
      std::string list;
      for (size_t i = 0; i < names.size() && i < 3; ++i) list += (i ? ", " : "") + names[i].second;
      if (names.size() > 3) list += ", ... (" + std::to_string(names.size() - 3) + " more)";
      return list;
    };
    std::vector<std::string> out;
    if (!unknown_ifs.empty())
      out.push_back(std::to_string(unknown_ifs.size()) +
                    " If node(s) with a condition unknown before running: the costlier branch of each is counted (" +
                    first(unknown_ifs) + "); --branch NODE=then|else chooses");
    if (!unknown_loops.empty())
      out.push_back(std::to_string(unknown_loops.size()) +
                    " Loop node(s) with a trip count unknown before running: one trip of each is counted (" +
                    first(unknown_loops) + "); --trip-count NODE=N sets it");
    if (!unknown_scans.empty())
      out.push_back(std::to_string(unknown_scans.size()) +
                    " Scan node(s) with an unknown sequence length (bind the input dims): one step of each is counted (" +
                    first(unknown_scans) + ")");
    return out;
  }

  // The cost of the subgraphs of an If / Loop / Scan as one run executes
  // them: the If's branch its condition selects (known before running or
  // chosen with --branch), else the costlier one; a Loop's body times its trip
  // count (known or --trip-count), else one trip; a Scan's body times the
  // sequence length. Sets `note` (the row's) and records the node for a
  // notice when it has to guess. `path` is the node's row name; the rows of
  // the subgraph nodes one run executes go to `rows` (named
  // path/attribute/node, costs as one run incurs them).
  NodeCost control_flow_cost(const Graph& g, const Node& node, const std::string& path, std::vector<NodeReport>* rows,
                             int* nested, std::string* note) {
    if (node.domain.empty() && node.op_type == "If") {
      const auto* then_attr = std::get_if<std::shared_ptr<Graph>>(node.attr("then_branch"));
      const auto* else_attr = std::get_if<std::shared_ptr<Graph>>(node.attr("else_branch"));
      if (then_attr && else_attr && *then_attr && *else_attr) {
        int then_nodes = 0, else_nodes = 0;
        std::vector<NodeReport> then_rows, else_rows;
        const NodeCost then_cost = cost_graph(**then_attr, &then_nodes, path, "then_branch", &then_rows);
        const NodeCost else_cost = cost_graph(**else_attr, &else_nodes, path, "else_branch", &else_rows);
        bool take_then = then_cost.flops >= else_cost.flops;
        if (node.if_branch >= 0) {
          take_then = node.if_branch == 0;
          *note = std::string(take_then ? "then_branch" : "else_branch") + " counted (" +
                  node.control_source + ")";
        } else {
          *note = std::string("condition unknown before running: the costlier branch (") +
                  (take_then ? "then_branch" : "else_branch") + ") counted";
          unknown_ifs.push_back({depth_, node.name + "=" + (take_then ? "then" : "else")});
        }
        *nested = take_then ? then_nodes : else_nodes;
        auto& chosen = take_then ? then_rows : else_rows;
        rows->insert(rows->end(), std::make_move_iterator(chosen.begin()), std::make_move_iterator(chosen.end()));
        return take_then ? then_cost : else_cost;
      }
    }
    NodeCost body;
    std::vector<NodeReport> body_rows;
    for (const auto& [label, sub] : node.named_subgraphs())
      add_into(body, cost_graph(*sub, nested, path, label, &body_rows));
    int64_t times = 1;
    if (node.domain.empty() && node.op_type == "Loop") {
      if (node.trip_count >= 0) {
        times = node.trip_count;
        *note = "body x " + std::to_string(times) + " trips (" + node.control_source + ")";
      } else {
        *note = "trip count unknown before running: one trip counted";
        unknown_loops.push_back({depth_, node.name});
      }
    } else if (node.domain.empty() && node.op_type == "Scan") {
      if (const auto length = scan_length(g, node)) {
        times = *length;
        *note = "body x " + std::to_string(times) +
                (model_.opset_version("") < 9 ? " steps (batch x sequence length, opset 8)"
                                              : " steps (the scan inputs' sequence length)");
      } else {
        *note = "sequence length unknown: one step counted";
        unknown_scans.push_back({depth_, node.name});
      }
    } else {
      *note = "body counted once";
    }
    for (auto& row : body_rows) {
      row.cost = scaled(row.cost, times);
      rows->push_back(std::move(row));
    }
    return scaled(body, times);
  }

  // How many times a Scan runs its body: its first scan input's size along
  // its scan axis (opset 9+: the last num_scan_inputs inputs, axis
  // scan_input_axes[0]); opset 8 runs the body for every step of every batch
  // row: dims 0 (batch) and 1 (sequence) multiplied (sequence_lens can only
  // shorten a row, so this is an upper bound).
  std::optional<int64_t> scan_length(const Graph& g, const Node& node) const {
    const int64_t count = node.attr_int("num_scan_inputs", 0);
    if (count < 1 || size_t(count) > node.inputs.size()) return std::nullopt;
    const int in = node.inputs[node.inputs.size() - size_t(count)];
    if (in < 0) return std::nullopt;
    const Shape& shape = g.tensors[size_t(in)].shape;
    if (!shape.rank_known) return std::nullopt;
    const int64_t rank = int64_t(shape.dims.size());
    int64_t axis = 0;
    if (model_.opset_version("") < 9) {
      if (rank < 2 || !shape.dims[0].known() || !shape.dims[1].known()) return std::nullopt;
      const int64_t batch = shape.dims[0].value, steps = shape.dims[1].value;
      if (batch > 0 && steps > INT64_MAX / batch) return std::nullopt;
      return batch * steps;
    } else {
      const auto axes = node.attr_ints("scan_input_axes");
      if (!axes.empty()) axis = axes[0] < 0 ? axes[0] + rank : axes[0];
    }
    if (axis < 0 || axis >= rank || !shape.dims[size_t(axis)].known()) return std::nullopt;
    return shape.dims[size_t(axis)].value;
  }

  static NodeCost scaled(NodeCost c, int64_t times) {
    if (times == 1) return c;
    auto mul = [times](int64_t v) { return v > 0 && times > INT64_MAX / v ? INT64_MAX : v * times; };
    c.macs = mul(c.macs);
    c.flops = mul(c.flops);
    c.bytes_read = mul(c.bytes_read);
    c.bytes_written = mul(c.bytes_written);
    c.weight_bytes = mul(c.weight_bytes);
    return c;
  }

  // Sum over a subgraph (recursively): `label` of the node whose row name
  // is `holder`. Each node's row goes to `rows` (named by
  // subgraph_node_path), before the rows of its own subgraphs.
  NodeCost cost_graph(const Graph& g, int* node_count, const std::string& holder, const std::string& label,
                      std::vector<NodeReport>* rows) {
    ++depth_;
    NodeCost total;
    std::vector<bool> counted(g.tensors.size(), false);
    for (const Node& n : g.nodes) {
      const std::string path = subgraph_node_path(holder, label, n.name);
      const size_t at = rows->size();
      rows->push_back(describe_node(g, n, path));
      int nested = 0;
      NodeCost c = cost_node(g, n, counted, &nested, path, rows);
      (*rows)[at].cost = c;
      (*rows)[at].subgraph_nodes = nested;
      *node_count += 1 + nested;
      add_into(total, c);
    }
    --depth_;
    return total;
  }

  // A node's row without its cost: name, op, shapes, dtype.
  NodeReport describe_node(const Graph& g, const Node& node, const std::string& name) {
    NodeReport row;
    describe_into(g, node, name, row);
    return row;
  }
  // The same into a row in place (a top-level row is made where it stays).
  void describe_into(const Graph& g, const Node& node, const std::string& name, NodeReport& row) {
    row.name = name;
    row.op_type = node.op_type;
    row.domain = node.domain;
    row.input_shapes.reserve(node.inputs.size());
    row.output_shapes.reserve(node.outputs.size());
    for (int in : node.inputs) row.input_shapes.push_back(in < 0 ? "-" : shape_text(g.tensors[size_t(in)]));
    for (int out : node.outputs) row.output_shapes.push_back(out < 0 ? "-" : shape_text(g.tensors[size_t(out)]));
    for (int out : node.outputs)
      if (out >= 0) {
        row.output_dtype = dtype_name(g.tensors[size_t(out)].dtype);
        break;
      }
    if (!node.inputs.empty() && node.inputs[0] >= 0) row.operand_dtype = operand_dtype(g, node.inputs[0]);
  }

  // What a node multiplies: its first input's dtype, or for a float input
  // that a DequantizeLinear makes of 8-bit data (a QDQ model, whose runtime
  // runs the op on the 8-bit data), "uint8 (QDQ)" / "int8 (QDQ)".
  static std::string operand_dtype(const Graph& g, int t) {
    const Tensor& in = g.tensors[size_t(t)];
    if (in.producer >= 0) {
      const Node& p = g.nodes[size_t(in.producer)];
      if (p.domain.empty() && p.op_type == "DequantizeLinear" && !p.inputs.empty() && p.inputs[0] >= 0) {
        const DType q = g.tensors[size_t(p.inputs[0])].dtype;
        if (q == DType::UInt8 || q == DType::Int8) return std::string(dtype_name(q)) + " (QDQ)";
      }
    }
    return dtype_name(in.dtype);
  }


 private:
  // The model's opset of the node's domain and find_rule's record for it:
  // the same for every node of one op, so an op of the default domain is
  // looked up once (a 100k-node graph has a handful of op types).
  struct OpRule {
    int64_t opset = 0;
    const cost::CostRule* rule = nullptr;
  };
  OpRule rule_of(const Node& node) {
    auto lookup = [&] {
      const int64_t opset = model_.opset_version(node.domain);
      return OpRule{opset, cost::find_rule(node.domain, node.op_type, opset)};
    };
    if (!node.domain.empty()) return lookup();
    auto [it, inserted] = default_domain_rules_.try_emplace(node.op_type);
    if (inserted) it->second = lookup();
    return it->second;
  }

  // Shape::to_string of a tensor, kept for the nodes that read it: a node's
  // inputs are mostly outputs of the nodes just before it, formatted for
  // their rows. Direct-mapped by the tensor's position in memory: the
  // tensors of a graph are one array, so the last 256 made stay apart.
  const std::string& shape_text(const Tensor& t) {
    ShapeText& s = shape_texts_[reinterpret_cast<uintptr_t>(&t) / sizeof(Tensor) % shape_texts_.size()];
    if (s.tensor != &t) {
      s.text = t.shape.to_string();
      s.tensor = &t;
    }
    return s.text;
  }
  struct ShapeText {
    const Tensor* tensor = nullptr;
    std::string text;
  };
  std::vector<ShapeText> shape_texts_ = std::vector<ShapeText>(256);

  int depth_ = 0;  // subgraph nesting of the node being costed
  const Model& model_;
  std::unordered_map<std::string, OpRule> default_domain_rules_;
};

GraphValue describe(const Tensor& t) { return GraphValue{t.name, dtype_name(t.dtype), t.shape}; }

// A bit-packed weight is listed as its values' type, e.g. "uint4 (packed in
// uint8)", with its values as elements and its bytes as they are.
void collect_constant_sizes(const Graph& g, std::map<std::string, DTypeSize>& by_dtype, int64_t& params,
                            const std::map<const Tensor*, int>& packed_bits) {
  for (const Tensor& t : g.tensors) {
    if (!t.is_constant()) continue;
    auto n = t.shape.element_count();
    auto b = t.size_bytes();
    if (!n || !b) continue;
    auto packed = packed_bits.find(&t);
    const int bits = packed == packed_bits.end() ? 0 : packed->second;
    const std::string dtype = bits
                                  ? "uint" + std::to_string(bits) + " (packed in " + dtype_name(t.dtype) + ")"
                                  : std::string(dtype_name(t.dtype));
    const int64_t values = weight_values(t, bits);
    auto& entry = by_dtype[dtype];
    entry.dtype = dtype;
    entry.tensors++;
    entry.elements = sat_add(entry.elements, values);
    entry.bytes = sat_add(entry.bytes, *b);
    if (counts_as_weight(t)) params = sat_add(params, values);
  }
  for (const Node& node : g.nodes)
    for (const auto& sub : node.subgraphs()) collect_constant_sizes(*sub, by_dtype, params, packed_bits);
}

}  // namespace

AnalysisResult analyze_model(const Model& model) {
  AnalysisResult r;
  const Graph& g = model.graph;
  r.model_path = model.path;
  r.producer = model.producer_name + (model.producer_version.empty() ? "" : " " + model.producer_version);
  r.ir_version = model.ir_version;
  r.opsets = model.opsets;
  r.file_size_bytes = model.file_size_bytes;
  r.notices = model.notices;
  for (int i : g.inputs) r.inputs.push_back(describe(g.tensors[size_t(i)]));
  for (int o : g.outputs) r.outputs.push_back(describe(g.tensors[size_t(o)]));

  GraphCoster coster(model);
  std::vector<bool> weight_counted(g.tensors.size(), false);
  std::map<std::string, OpTypeSummary> by_op;
  std::map<std::string, int64_t> unknown_ops;
  auto& t = r.totals;
  r.nodes.reserve(g.nodes.size());
  std::vector<NodeReport> sub_rows;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& node = g.nodes[i];
    sub_rows.clear();
    NodeReport& row = r.nodes.emplace_back();  // reserved: stays where it is
    try {
      coster.describe_into(g, node, node.name, row);
      row.index = int(i);
      row.cost = coster.cost_node(g, node, weight_counted, &row.subgraph_nodes, node.name, &sub_rows);
    } catch (const Error& e) {
      if (!e.node().empty()) throw;
      throw Error(e.kind(), e.message(), e.file(), node.name, node.op_type);
    }
    const NodeCost& c = row.cost;
    // Coverage counts every node one run executes, subgraph nodes included;
    // their costs are already in their parent's row.
    auto tally = [&](const NodeReport& n) {
      t.nodes++;
      if (n.cost.status == CostStatus::Exact) t.nodes_exact++;
      if (n.cost.status == CostStatus::UnknownShape) t.nodes_unknown_shape++;
      if (n.cost.status == CostStatus::UnknownOp) {
        t.nodes_unknown_op++;
        unknown_ops[(n.domain.empty() ? "" : n.domain + "::") + n.op_type]++;
      }
    };
    tally(row);
    for (auto& sub : sub_rows) {
      tally(sub);
      sub.index = int(i);
      r.subgraph_nodes.push_back(std::move(sub));
    }
    t.macs = sat_add(t.macs, c.macs);
    t.flops = sat_add(t.flops, c.flops);
    t.bytes_read = sat_add(t.bytes_read, c.bytes_read);
    t.bytes_written = sat_add(t.bytes_written, c.bytes_written);
    auto& op = by_op[node.op_type];
    op.op_type = node.op_type;
    op.count++;
    op.params = sat_add(op.params, c.params);
    op.macs = sat_add(op.macs, c.macs);
    op.flops = sat_add(op.flops, c.flops);
    op.bytes = sat_add(op.bytes, c.bytes());
    if (c.status != CostStatus::Exact) op.unknown++;
  }

  for (auto& n : coster.control_flow_notices()) r.notices.push_back(std::move(n));
  if (t.nodes_unknown_shape > 0 && !model.unknown_shape_cause.empty()) r.notices.push_back(model.unknown_shape_cause);

  // MACs by operand dtype, over the rows that do the work: top-level nodes
  // without subgraphs and the subgraph rows without subgraphs of their own
  // (their costs are as one run incurs them).
  std::map<std::string, DTypeMacs> macs_by_dtype;
  auto add_macs = [&macs_by_dtype](const NodeReport& row) {
    if (row.subgraph_nodes > 0 || row.cost.macs <= 0) return;
    DTypeMacs& entry = macs_by_dtype[row.operand_dtype];
    entry.dtype = row.operand_dtype;
    entry.nodes++;
    entry.macs = sat_add(entry.macs, row.cost.macs);
  };
  for (const NodeReport& row : r.nodes) add_macs(row);
  for (const NodeReport& row : r.subgraph_nodes) add_macs(row);
  for (auto& [name, entry] : macs_by_dtype) r.macs_by_dtype.push_back(entry);
  std::sort(r.macs_by_dtype.begin(), r.macs_by_dtype.end(),
            [](const DTypeMacs& a, const DTypeMacs& b) { return a.macs > b.macs; });

  // Params: every weight once, used or not (the file's deduplicated count).
  std::map<std::string, DTypeSize> by_dtype;
  std::map<const Tensor*, int> packed_bits;
  std::unordered_map<std::string, int> packed_inputs;
  collect_packed_weights(g, packed_bits, packed_inputs);
  collect_constant_sizes(g, by_dtype, t.params, packed_bits);
  for (auto& [name, entry] : by_dtype) {
    t.weight_bytes = sat_add(t.weight_bytes, entry.bytes);
    r.size_by_dtype.push_back(entry);
  }
  std::sort(r.size_by_dtype.begin(), r.size_by_dtype.end(),
            [](const DTypeSize& a, const DTypeSize& b) { return a.bytes > b.bytes; });

  // Weights read by several nodes (tied embeddings, shared convs): counted once.
  int64_t unused_weights = 0;
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    const Tensor& tensor = g.tensors[i];
    if (!counts_as_weight(tensor)) continue;
    if (tensor.consumers.empty() && tensor.role == TensorRole::Initializer) unused_weights++;
    // consumers are in node order, one entry per use: distinct nodes are the changes.
    size_t distinct = 0;
    std::vector<std::string> consumers;
    for (size_t k = 0; k < tensor.consumers.size(); ++k) {
      if (k > 0 && tensor.consumers[k] == tensor.consumers[k - 1]) continue;
      ++distinct;
      if (consumers.size() < kMaxListedConsumers) consumers.push_back(g.nodes[size_t(tensor.consumers[k])].name);
    }
    if (distinct > consumers.size())
      consumers.push_back("... " + std::to_string(distinct - consumers.size()) + " more");
    auto n = tensor.shape.element_count();
    if (distinct > 1 && n && *n > 1) r.shared_weights.push_back({tensor.name, *n, consumers});
  }
  if (!r.shared_weights.empty())
    r.notices.push_back(std::to_string(r.shared_weights.size()) +
                        " weight tensor(s) are read by several nodes (shared/tied): each counted once");
  if (unused_weights)
    r.notices.push_back(std::to_string(unused_weights) + " weight initializer(s) are read by no node: still counted in params");

  for (auto& [name, op] : by_op) r.by_op_type.push_back(op);
  std::sort(r.by_op_type.begin(), r.by_op_type.end(), [](const OpTypeSummary& a, const OpTypeSummary& b) {
    return a.flops != b.flops ? a.flops > b.flops : a.op_type < b.op_type;
  });
  if (!unknown_ops.empty()) {
    std::string list;
    for (const auto& [op, count] : unknown_ops) list += (list.empty() ? "" : ", ") + op + " x" + std::to_string(count);
    r.notices.push_back("no cost rule (not counted): " + list);
  }

  // Dims that stayed unknown after binding and inference.
  std::map<std::string, int64_t> unknown_dims;
  for (const Tensor& tensor : g.tensors) {
    if (tensor.is_constant()) continue;
    if (!tensor.shape.rank_known) {
      if (tensor.producer >= 0 || tensor.role == TensorRole::Input) unknown_dims["(unknown rank)"]++;
      continue;
    }
    std::set<std::string> symbols;
    for (const Dim& d : tensor.shape.dims)
      if (!d.known()) symbols.insert(d.symbol.empty() ? "?" : d.symbol.str());
    for (const auto& s : symbols) unknown_dims[s]++;
  }
  for (const auto& [sym, count] : unknown_dims)
    r.unknown_dims.push_back(sym + " (" + std::to_string(count) + " tensor" + (count == 1 ? "" : "s") + ")");

  const PeakMemory peak = peak_activation_memory(g);
  t.peak_activation_bytes = peak.peak_bytes;
  t.peak_at_node = peak.peak_node >= 0 ? g.nodes[size_t(peak.peak_node)].name : std::string("(inputs)");
  t.peak_at_index = peak.peak_node;
  t.peak_is_lower_bound = peak.lower_bound;
  t.input_bytes = peak.input_bytes;
  t.output_bytes = peak.output_bytes;
  r.kv_cache = find_kv_cache(model);
  return r;
}

AnalysisResult analyze_buffer(const void* data, size_t size, const LoadOptions& options, const std::string& base_dir) {
  const auto start = std::chrono::steady_clock::now();
  auto model = std::make_shared<Model>(
      loader::load_model_bytes(static_cast<const uint8_t*>(data), size, options, base_dir, "<buffer>"));
  AnalysisResult r = analyze_model(*model);
  if (!options.kv_pairs.empty()) r.kv_cache = find_kv_cache(*model, options.kv_pairs);
  r.model = std::move(model);
  r.analysis_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

Model load_model(const std::string& path, const LoadOptions& options) {
  return loader::load_model_file(path, options);
}

ModelFile::ModelFile(const std::string& path) : path_(path), source_(loader::read_model_file(path)) {}

Model ModelFile::bind(const LoadOptions& options) const { return loader::bind_model_source(*source_, options); }

int64_t model_files_read() { return loader::model_sources_read(); }

AnalysisResult analyze_file(const std::string& path, const LoadOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  auto model = std::make_shared<Model>(loader::load_model_file(path, options));
  StageTimer timer;
  AnalysisResult r;
  try {
    r = analyze_model(*model);
    if (!options.kv_pairs.empty()) r.kv_cache = find_kv_cache(*model, options.kv_pairs);
  } catch (const Error& e) {
    if (!e.file().empty()) throw;
    throw Error(e.kind(), e.message(), path, e.node(), e.op());
  }
  timer.lap("analysis");
  r.model = std::move(model);
  r.analysis_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace modelstat

namespace modelstat {

int64_t mark_observed_costs(const AnalysisResult& statically, AnalysisResult& counted) {
  // Rows by name: the same file bound twice has the same node names (the
  // loader names unnamed nodes by op and index), top level and subgraphs.
  std::map<std::string, CostStatus> before;
  for (const auto* rows : {&statically.nodes, &statically.subgraph_nodes})
    for (const NodeReport& n : *rows) before.emplace(n.name, n.cost.status);
  int64_t marked = 0;
  for (auto* rows : {&counted.nodes, &counted.subgraph_nodes})
    for (NodeReport& n : *rows) {
      auto it = before.find(n.name);
      if (it == before.end() || it->second != CostStatus::UnknownShape || n.cost.status != CostStatus::Exact) continue;
      n.cost.shapes = "observed";
      ++marked;
    }
  return marked;
}

}  // namespace modelstat

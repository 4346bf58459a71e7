// Static analysis: load an ONNX model, bind its dims, and count params, MACs,
// FLOPs, bytes and memory per node and in total. See docs/COST_MODEL.md for
// every counting rule; kCostConvention below is the one-paragraph summary that
// every report prints.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "modelstat/graph.hpp"

namespace modelstat {

extern const char* const kCostConvention;

// Options shared by every command that reads a model.
struct LoadOptions {
  // --input NAME:1x3x224x224 ; a full shape for a graph input.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // --dim NAME=VALUE ; a value for a symbolic dim (dim_param) wherever it occurs.
  std::map<std::string, int64_t> dim_values;
  // Value given to an unbound leading (batch) dim of a graph input.
  int64_t default_batch = 1;
  // Accept domains modelstat has no rules for (their nodes become "unknown").
  bool allow_custom_domains = false;
  // --branch NODE=then|else: the branch an If counts when its condition is
  // unknown before running (true: then_branch).
  std::map<std::string, bool> branches;
  // --trip-count NODE=N: a Loop's trip count when the model does not fix it.
  std::map<std::string, int64_t> trip_counts;
};

// How sure a node's cost is.
enum class CostStatus {
  Exact,          // a rule applied to fully known shapes
  UnknownShape,   // a rule exists but a shape it needs is unknown
  UnknownOp,      // no rule for this op: not counted, listed
};
const char* cost_status_name(CostStatus s);

struct NodeCost {
  CostStatus status = CostStatus::Exact;
  int64_t params = 0;         // elements of weights first used by this node
  int64_t macs = 0;           // multiply-accumulates (contractions only)
  int64_t flops = 0;          // all floating-point operations, see kCostConvention
  int64_t bytes_read = 0;     // inputs read: weights + activations
  int64_t bytes_written = 0;  // outputs written
  int64_t weight_bytes = 0;   // part of bytes_read that is constant data
  std::string rule;           // which documented rule produced this ("conv", "elementwise:1", ...)
  std::string note;           // why it is unknown, or anything notable

  int64_t bytes() const { return bytes_read + bytes_written; }
  // FLOPs per byte moved; 0 when nothing moves.
  double arithmetic_intensity() const;
};

struct NodeReport {
  int index = 0;
  std::string name, op_type, domain;
  std::vector<std::string> input_shapes, output_shapes;  // Shape::to_string()
  std::string output_dtype;
  std::string operand_dtype;  // dtype of the first input (what a contraction multiplies)
  NodeCost cost;
  int subgraph_nodes = 0;  // for If/Loop/Scan: nodes counted inside
};

struct OpTypeSummary {
  std::string op_type;
  int64_t count = 0, params = 0, macs = 0, flops = 0, bytes = 0;
  int64_t unknown = 0;  // nodes of this type whose cost is not exact
};

// The top-level nodes of one group under --group-by (modelstat/grouping.hpp),
// their costs summed. Params add up to the nodes' (each weight counted at its
// first reader, so no group counts a shared weight twice). Peak activation
// memory is a property of the whole order, not of a set of nodes: not here.
struct NodeGroup {
  std::string key;      // GroupRule::key of its nodes
  int first_index = 0;  // index of its first node; groups are in this order
  int64_t nodes = 0;
  int64_t nodes_not_exact = 0;  // nodes whose cost is not exact: the sums hold the known counts only
  int64_t params = 0, macs = 0, flops = 0, bytes_read = 0, bytes_written = 0;
  int64_t weight_bytes = 0;  // part of bytes_read that is constant data
  int64_t bytes() const { return bytes_read + bytes_written; }
};

struct DTypeSize {
  std::string dtype;
  int64_t tensors = 0, elements = 0, bytes = 0;
};

// MACs by the dtype of what they multiply (the first input of each node with
// MACs): integer MACs (ConvInteger, QLinearConv, MatMulInteger, QLinearMatMul,
// on uint8/int8 data) count as MACs like float ones, and this says how many.
struct DTypeMacs {
  std::string dtype;
  int64_t nodes = 0, macs = 0;
};

struct SharedWeight {
  std::string name;
  int64_t elements = 0;
  std::vector<std::string> consumers;  // node names
};

struct AnalysisTotals {
  int64_t nodes = 0;
  int64_t nodes_exact = 0;          // nodes whose cost is fully counted
  int64_t nodes_unknown_shape = 0;
  int64_t nodes_unknown_op = 0;
  int64_t params = 0;               // deduplicated
  int64_t macs = 0, flops = 0, bytes_read = 0, bytes_written = 0;
  int64_t weight_bytes = 0;                 // model size: all constant data, every dtype
  int64_t peak_activation_bytes = 0;        // max live activation bytes over the order
  std::string peak_at_node;                 // node at which the peak occurs
  bool peak_is_lower_bound = false;         // some activation sizes were unknown
  int64_t input_bytes = 0, output_bytes = 0;
  double coverage() const { return nodes ? double(nodes_exact) / double(nodes) : 1.0; }
};

struct AnalysisResult {
  std::string model_path;
  std::string producer;
  int64_t ir_version = 0;
  std::vector<OpsetImport> opsets;
  int64_t file_size_bytes = 0;
  std::vector<std::string> inputs, outputs;  // "name: dtype shape"
  std::vector<NodeReport> nodes;             // execution order
  // The nodes inside If / Loop / Scan subgraphs that one run executes (the
  // If's selected or costlier branch), each named by its path
  // ("If_0/then_branch/Conv_3"), in order after their parent; `index` is the
  // top-level parent's. Their costs are as one run incurs them (a Loop body's
  // times its trip count) and are already in the parent's row: totals do not
  // add them again; coverage counts them.
  std::vector<NodeReport> subgraph_nodes;
  std::vector<OpTypeSummary> by_op_type;     // sorted by FLOPs, descending
  // --group-by: the rule as given ("" when none) and the top-level nodes summed
  // per group, in order of first appearance (apply_grouping, modelstat/grouping.hpp).
  std::string group_by;
  std::vector<NodeGroup> groups;
  std::vector<DTypeSize> size_by_dtype;      // sorted by bytes, descending
  std::vector<DTypeMacs> macs_by_dtype;      // sorted by MACs, descending; nodes with MACs only
  std::vector<SharedWeight> shared_weights;
  std::vector<std::string> unknown_dims;     // symbols/dims left unknown
  std::vector<std::string> notices;
  AnalysisTotals totals;
  double analysis_seconds = 0;
  // The loaded IR the figures were computed from (analyze_file/analyze_buffer
  // keep it; analyze_model leaves it empty).
  std::shared_ptr<const Model> model;
};

// The whole pipeline for a file on disk.
AnalysisResult analyze_file(const std::string& path, const LoadOptions& options);
// The same on an in-memory model (external data resolved against base_dir; "" refuses it).
AnalysisResult analyze_buffer(const void* data, size_t size, const LoadOptions& options,
                              const std::string& base_dir = {});
// Loading alone: file -> validated, shape-bound, shape-inferred IR (what the
// profiler executes). Throws Error(Input) on a bad model.
Model load_model(const std::string& path, const LoadOptions& options);
// Costing on an already-loaded model.
AnalysisResult analyze_model(const Model& model);

// Parse "1x3x224x224" (also "1,3,224,224"). Throws Error(Usage).
std::vector<int64_t> parse_shape_spec(const std::string& text);
// Parse "--input NAME:SHAPE" and "--dim NAME=VALUE" values into options. Throws Error(Usage).
void parse_input_spec(const std::string& spec, LoadOptions& options);
void parse_dim_spec(const std::string& spec, LoadOptions& options);
// "--branch NODE=then|else" and "--trip-count NODE=N". Throw Error(Usage).
void parse_branch_spec(const std::string& spec, LoadOptions& options);
void parse_trip_count_spec(const std::string& spec, LoadOptions& options);

}  // namespace modelstat

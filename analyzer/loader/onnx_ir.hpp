// Private: conversion of a (validated, shape-inferred) onnx::GraphProto into
// modelstat's IR, and the structural checks that come before inference.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <string_view>
#include <unordered_map>
#include <map>
#include <set>
#include <unordered_set>
#include <vector>

#include "analyzer/loader/loader.hpp"
#include "analyzer/loader/name_map.hpp"
#include "modelstat/graph.hpp"

namespace modelstat::loader {

// The stripper's out-of-band table bound to the parsed messages it describes.
// Keyed by address: the loader never copies or frees a parsed TensorProto
// after binding (check_and_order_graph moves nodes by swapping pointers).
using PayloadTable = std::unordered_map<const onnx::TensorProto*, const StrippedTensor*>;

// Finds each stripped tensor's TensorProto by its path. Throws Error(Input)
// when a path leads nowhere (the parse disagreed with the stripper's walk).
PayloadTable bind_payload_table(const onnx::ModelProto& model, const std::vector<StrippedTensor>& tensors);

struct ExternalDataPolicy {
  std::string base_dir;  // "" = never touch the file system
  const PayloadTable* payloads = nullptr;  // which tensors were stripped, and where their bytes lie
  std::vector<std::string>* notices = nullptr;
  int64_t missing_files = 0;  // external files that were absent (skeleton)
  std::unordered_set<std::string> reported_missing;
  // --branch / --trip-count, and the node names they matched.
  const std::map<std::string, bool>* branches = nullptr;
  const std::map<std::string, int64_t>* trip_counts = nullptr;
  // What a run observed (LoadOptions::observed_branches / _trip_counts): first.
  const std::map<std::string, bool>* observed_branches = nullptr;
  const std::map<std::string, int64_t>* observed_trip_counts = nullptr;
  std::set<std::string> control_names_used;
};

// Checks that every node input is defined (graph input, initializer, an
// earlier node's output or, in a subgraph, a name of an enclosing scope) and
// reorders the nodes topologically (ONNX requires it; some files are not).
// Descends into subgraphs (graph_order.cc). Throws Error(Input) naming the
// node for an undefined tensor, a name defined twice or a cycle.
void check_and_order_graph(onnx::GraphProto& graph);

// A node's name in modelstat's IR and messages: its own, or "<op>_<index>"
// when it has none.
std::string node_label(const onnx::NodeProto& n, int index);

// A type shape inference gave a top-level value that had no value_info entry
// (infer_shapes, in the order it gave them). The IR builder reads these after
// the graph's own value_info, as it would read entries appended to it; kept
// beside the graph instead, they cost no ValueInfoProto and no copy of the
// name (a 100,000-node graph had 100,000 of each, built only to be read back).
// Both point into the parsed model (its arena), which outlives the list.
// A type from modelstat's own shape rules (own_shape_rules.hpp) has no
// TypeProto: `type` is null and `own` holds {elem_type, rank, dims...}, on
// the same arena.
struct InferredType {
  const std::string* name;
  const onnx::TypeProto* type;
  const int64_t* own = nullptr;
};
using InferredTypes = std::vector<InferredType>;

// The enclosing scopes of a subgraph, innermost first.
struct ScopeValues;  // analyzer/loader/shape_values.hpp

struct Scope {
  const NameMap<int>* index = nullptr;
  const Graph* graph = nullptr;
  const Scope* parent = nullptr;
  // Integer values and shapes known in this graph and its enclosing ones (a
  // subgraph's If conditions and trip counts may read them); may be null.
  const ScopeValues* values = nullptr;
  const Tensor* find(const std::string& name) const;
};

// Converts a graph. Reads dims, dtypes, attributes and small integer values;
// validates external-data locations (never reads them). A subgraph's reads of
// enclosing-scope tensors get their dtype and shape, and the node that owns
// the subgraph is recorded as a consumer of them (they must live until it runs).
// `inferred`: the graph's types infer_shapes kept beside it (top level only).
Graph build_graph(const onnx::GraphProto& graph, ExternalDataPolicy& policy, int depth, const Scope* outer = nullptr,
                  const InferredTypes* inferred = nullptr);

// Dims of a TensorShapeProto as modelstat dims.
Shape shape_from_proto(const onnx::TensorShapeProto& shape);

}  // namespace modelstat::loader

// Data movement: 0 FLOPs. Default bytes (inputs read, outputs written) except
// metadata-only views (Reshape, Flatten, Squeeze, Unsqueeze, Identity,
// inference Dropout), which move nothing, and ops that read only metadata
// (Shape, Size) or nothing (Constant).
#include <string>

#include "analyzer/cost/cost_helpers.hpp"

namespace modelstat::cost {
namespace {

RuleResult move(const CostContext& ctx) { return data_movement("data_movement"); }
RuleResult view_op(const CostContext& ctx) { return view("view"); }

// Shape and Size read the input's metadata only.
RuleResult metadata(const CostContext& ctx) {
  RuleResult r = data_movement("metadata");
  r.bytes_read_override = 0;
  return r;
}

RuleResult constant(const CostContext& ctx) {
  RuleResult r = data_movement("constant");
  r.bytes_read_override = 0;
  return r;
}

// ScatterElements / ScatterND with reduction add/mul/max/min: 1 op per update element.
RuleResult scatter(const CostContext& ctx) {
  const std::string reduction = ctx.node().attr_string("reduction", "none");
  if (reduction == "none") return data_movement("data_movement");
  const char* rule = "scatter_reduce";
  auto updates = ctx.input_elements(2);
  if (!updates) return RuleResult::unknown_shape(rule, "updates shape unknown");
  return exact(rule, 0, *updates);
}

}  // namespace

void add_shape_ops_rules(std::vector<CostRule>& rules) {
  static const struct {
    const char* op;
    CostFn fn;
    const char* doc;
  } kEntries[] = {
      // Copies: inputs read, outputs written.
      {"Concat", move, "data movement: 0 FLOPs"},
      {"Split", move, "data movement: 0 FLOPs"},
      {"Slice", move, "data movement: 0 FLOPs"},
      {"Transpose", move, "data movement: 0 FLOPs"},
      {"Gather", move, "data movement: 0 FLOPs"},
      {"GatherElements", move, "data movement: 0 FLOPs"},
      {"GatherND", move, "data movement: 0 FLOPs"},
      {"Scatter", move, "data movement: 0 FLOPs"},
      {"ScatterElements", scatter, "data movement; reduction add/mul/max/min: 1 per update element"},
      {"ScatterND", scatter, "data movement; reduction add/mul/max/min: 1 per update element"},
      {"Pad", move, "data movement: 0 FLOPs"},
      {"CenterCropPad", move, "data movement: 0 FLOPs"},
      {"Tile", move, "data movement: 0 FLOPs"},
      {"Expand", move, "data movement: 0 FLOPs"},
      {"ConstantOfShape", move, "data movement (fill): 0 FLOPs"},
      {"Range", move, "data movement (fill): 0 FLOPs"},
      {"EyeLike", move, "data movement (fill): 0 FLOPs"},
      {"Cast", move, "data movement (conversion counted as 0 FLOPs)"},
      {"CastLike", move, "data movement (conversion counted as 0 FLOPs)"},
      {"DepthToSpace", move, "data movement: 0 FLOPs"},
      {"SpaceToDepth", move, "data movement: 0 FLOPs"},
      {"NonZero", move, "data movement: 0 FLOPs"},
      {"OneHot", move, "data movement: 0 FLOPs"},
      {"Trilu", move, "data movement: 0 FLOPs"},
      {"Compress", move, "data movement: 0 FLOPs"},
      {"ReverseSequence", move, "data movement: 0 FLOPs"},
      // Views: metadata only, 0 bytes moved.
      {"Reshape", view_op, "view: 0 FLOPs, 0 bytes"},
      {"Flatten", view_op, "view: 0 FLOPs, 0 bytes"},
      {"Squeeze", view_op, "view: 0 FLOPs, 0 bytes"},
      {"Unsqueeze", view_op, "view: 0 FLOPs, 0 bytes"},
      {"Identity", view_op, "view: 0 FLOPs, 0 bytes"},
      {"Dropout", view_op, "inference identity (view): 0 FLOPs, 0 bytes"},
      // Metadata readers and constants.
      {"Shape", metadata, "reads metadata only: 0 FLOPs, 0 bytes read"},
      {"Size", metadata, "reads metadata only: 0 FLOPs, 0 bytes read"},
      {"Constant", constant, "0 FLOPs, 0 bytes read, output written"},
  };
  for (const auto& e : kEntries) add_rule(rules, e.op, e.fn, e.doc);
}

}  // namespace modelstat::cost

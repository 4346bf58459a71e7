// Data movement: 0 FLOPs. Default bytes (inputs read, outputs written) except
// metadata-only views (Reshape, Flatten, Squeeze, Unsqueeze, Identity,
// inference Dropout), which move nothing, and ops that read only metadata
// (Shape, Size) or nothing (Constant). One row per op: {op, first opset, cost
// rule, formula, traits, shape-value folding}.
#include <string>

#include "analyzer/cost/cost_helpers.hpp"
#include "analyzer/op_traits.hpp"
#include "analyzer/loader/shape_fold.hpp"

namespace modelstat::cost {
namespace {

namespace fold = loader::fold;

RuleResult move(const CostContext& ctx) { return data_movement("data_movement"); }
RuleResult view_op(const CostContext& ctx) { return view("view"); }

// Gather, GatherElements, GatherND read only what they select: the output's
// worth of data plus the indices, not the whole data input (an embedding
// lookup reads its rows, not the table).
RuleResult gather(const CostContext& ctx) {
  RuleResult r = data_movement("data_movement");
  const Tensor* out = ctx.output(0);
  const Tensor* indices = ctx.input(1);
  auto selected = out ? out->size_bytes() : std::nullopt;
  auto index_bytes = indices ? indices->size_bytes() : std::nullopt;
  if (selected && index_bytes) r.bytes_read_override = *selected + *index_bytes;
  return r;
}

// Dropout: an inference identity (a view), except where the imported opset
// makes it a training dropout from its attributes (is_test=0 before opset 7,
// op_training_mode): a compare with the ratio and a masked scale per element.
// From opset 12 training_mode is an input value: counted as inference.
RuleResult dropout(const CostContext& ctx) {
  if (!op_training_mode(ctx.node(), ctx.opset())) return view("view");
  const char* rule = "dropout_training:2";
  auto n = ctx.input_elements(0);
  if (!n) return RuleResult::unknown_shape(rule, "input shape unknown");
  return exact(rule, 0, checked_mul(2, *n, ctx.node()));
}

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
  static const OpRow kRows[] = {
      // Copies: inputs read, outputs written.
      {"Concat", 1, move, "data movement: 0 FLOPs", kSavesNothing, fold::concat},
      {"Split", 1, move, "data movement: 0 FLOPs", kSavesNothing, fold::split},
      {"Slice", 1, move, "data movement: 0 FLOPs", kSavesNothing, fold::slice},
      {"Transpose", 1, move, "data movement: 0 FLOPs", kSavesNothing, fold::transpose},
      {"Gather", 1, gather, "data movement: 0 FLOPs; reads the selected elements (output size) + indices", kSavesNothing,
       fold::gather},
      {"GatherElements", 11, gather, "data movement: 0 FLOPs; reads the selected elements (output size) + indices"},
      {"GatherND", 11, gather, "data movement: 0 FLOPs; reads the selected elements (output size) + indices"},
      {"Scatter", 9, move, "data movement: 0 FLOPs"},
      {"ScatterElements", 11, scatter, "data movement; reduction add/mul/max/min: 1 per update element"},
      {"ScatterND", 11, scatter, "data movement; reduction add/mul/max/min: 1 per update element"},
      {"Pad", 1, move, "data movement: 0 FLOPs", kSavesNothing},
      {"CenterCropPad", 18, move, "data movement: 0 FLOPs"},
      {"Tile", 1, move, "data movement: 0 FLOPs", kSavesNothing, fold::tile},
      {"Expand", 8, move, "data movement: 0 FLOPs", kSavesNothing, fold::expand},
      {"ConstantOfShape", 9, move, "data movement (fill): 0 FLOPs", kSavesNothing, fold::constant_of_shape},
      {"Range", 11, move, "data movement (fill): 0 FLOPs", OpTraits{}, fold::range},
      {"EyeLike", 9, move, "data movement (fill): 0 FLOPs"},
      {"Cast", 1, move, "data movement (conversion counted as 0 FLOPs)", kSavesNothing, fold::cast},
      {"CastLike", 15, move, "data movement (conversion counted as 0 FLOPs)"},
      {"DepthToSpace", 1, move, "data movement: 0 FLOPs"},
      {"SpaceToDepth", 1, move, "data movement: 0 FLOPs"},
      {"NonZero", 9, move, "data movement: 0 FLOPs"},
      {"OneHot", 9, move, "data movement: 0 FLOPs"},
      {"Trilu", 14, move, "data movement: 0 FLOPs"},
      {"Compress", 9, move, "data movement: 0 FLOPs"},
      {"ReverseSequence", 10, move, "data movement: 0 FLOPs"},
      // Views: metadata only, 0 bytes moved.
      {"Reshape", 1, view_op, "view: 0 FLOPs, 0 bytes", kView, fold::reshape},
      {"Flatten", 1, view_op, "view: 0 FLOPs, 0 bytes", kView, fold::flatten},
      {"Squeeze", 1, view_op, "view: 0 FLOPs, 0 bytes", kView, fold::squeeze},
      {"Unsqueeze", 1, view_op, "view: 0 FLOPs, 0 bytes", kView, fold::unsqueeze},
      {"Identity", 1, view_op, "view: 0 FLOPs, 0 bytes", kView, fold::identity},
      {"Dropout", 1, dropout,
       "inference identity (view): 0 FLOPs, 0 bytes; training (is_test=0, opsets 1-6): 2 per element", kView},
      // Metadata readers and constants.
      {"Shape", 1, metadata, "reads metadata only: 0 FLOPs, 0 bytes read", kSavesNothing, fold::shape},
      {"Size", 1, metadata, "reads metadata only: 0 FLOPs, 0 bytes read", kSavesNothing, fold::size},
      {"Constant", 1, constant, "0 FLOPs, 0 bytes read, output written", kSavesNothing, fold::constant},
  };
  add_rows(rules, kRows);
}

}  // namespace modelstat::cost

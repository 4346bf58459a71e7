// What a fusion pattern sees and the matching helpers the patterns share.
// Private to analyzer/fusion/.
#pragma once

#include <optional>
#include <vector>

#include "analyzer/fusion/fusion_plan.hpp"

namespace modelstat::fusion {

// One graph being planned.
struct PatternContext {
  const Graph& g;
  const Model& model;
  const FusionOptions& options;
  int64_t opset = 0;                // the default domain's
  std::vector<bool> graph_output;   // per tensor
  const FusionPlan& plan;           // the groups taken so far

  bool taken(int node) const { return plan.group_of[size_t(node)] >= 0; }
};

// A pattern: tries `node` as the head of a group; the match, structure and
// constants checked, or nullopt. The planner commits it when none of its
// nodes is taken (a pattern may also check `taken` itself, e.g. to stop a
// chain before a node an earlier pattern holds).
struct FusionPattern {
  const char* name;
  bool (*applies)(const FusionOptions&);
  std::optional<FusedGroup> (*match)(const PatternContext&, int node);
};

// Every pattern, in priority order (an earlier pattern's groups are taken
// first): the one visible list (patterns.cc).
const std::vector<FusionPattern>& fusion_patterns();

// The patterns, one per file under patterns/.
std::optional<FusedGroup> match_qdq(const PatternContext& ctx, int node);
std::optional<FusedGroup> match_conv_group(const PatternContext& ctx, int node);
std::optional<FusedGroup> match_matmul_group(const PatternContext& ctx, int node);
std::optional<FusedGroup> match_gelu(const PatternContext& ctx, int node);
std::optional<FusedGroup> match_layer_norm(const PatternContext& ctx, int node);
std::optional<FusedGroup> match_hard_swish(const PatternContext& ctx, int node);
std::optional<FusedGroup> match_transpose_matmul(const PatternContext& ctx, int node);
std::optional<FusedGroup> match_batch_norm_relu(const PatternContext& ctx, int node);

// ---- helpers (match_helpers.cc)

bool is_float(const Graph& g, int t);
// A float dtype a CPU Conv group computes in fp32: fp32, or float16 (the
// group widens its input on entry and rounds its output back: oneDNN has no
// float16 convolution on CPUs without AVX512-FP16, and LibTorch none at all
// on the CPU). bfloat16 is not one: oneDNN runs it natively (AVX512-BF16).
bool is_group_float(const Graph& g, int t);
// a is such a float and b has its dtype (a chain keeps the group's dtype).
bool same_group_float(const Graph& g, int a, int b);
// Node n is `type` of the default domain with `inputs` inputs and one output.
bool is_op(const Node& n, const char* type, size_t inputs);
// The one reader of tensor t (no graph output), or -1.
int only_reader(const PatternContext& ctx, int t);
// The operand of binary node n other than t, or -1 when n does not read t once.
int other_operand(const Node& n, int t);
// Input k of n is absent or a constant.
bool constant_or_absent(const Graph& g, const Node& n, size_t k);
// A one-element float constant (through Identity nodes) whose value is
// `expected` within 1e-6 relative; its tensor, or -1.
int float_scalar_equal(const Graph& g, int t, double expected);
// A constant of N float values shaped [N] or [1, .., 1, N] with rank <= max_rank, or -1.
int bias_constant(const Graph& g, int t, int64_t n, size_t max_rank);
bool same_known_shape(const Shape& a, const Shape& b);

// GELU written out at Div node `div` (gelu.cc): its members (Erf, Add, Mul,
// Mul, in graph order), input and output, when the structure and constants
// (sqrt 2, 1, 0.5) match.
struct GeluMatch {
  std::vector<int> members;
  int input = -1, output = -1;
};
std::optional<GeluMatch> match_gelu_written_out(const PatternContext& ctx, int div);

// The post-op that reads tensor t next (post_ops.cc), for a group headed by
// node `head`: an activation, SiLU written out, a residual Add (when the
// group has none yet) and, with `gelu`, GELU (the Gelu op, or GELU written
// out). Nodes already taken end the chain. Returns the post-op, the nodes it
// absorbs (`joined`) and their output (`next`).
struct PostOpMatch {
  FusedPostOp op;
  std::vector<int> joined;
  int next = -1;
};
std::optional<PostOpMatch> next_post_op(const PatternContext& ctx, int t, int head, bool has_residual, bool gelu);

// The post-op chain a Conv or MatMul group grows by: takes the post-op that
// reads `t` next (next_post_op; its output must have t's dtype) into the group:
// appends it to `post_ops` and its nodes to `members`, notes a residual's
// tensor in `residual` (-1 while none) and moves `t` to its output. False,
// nothing changed, when the chain ends there.
bool take_post_op(const PatternContext& ctx, int head, bool gelu, int& t, int& residual,
                  std::vector<FusedPostOp>& post_ops, std::vector<int>& members);

}  // namespace modelstat::fusion

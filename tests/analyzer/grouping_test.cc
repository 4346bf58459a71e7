// --group-by (analyzer/grouping.cc): the block of every name style exporters
// write, the op and regex rules, names the rule gives no key, the refused
// specs, and the sums per group on the two sample transformers against nodes
// counted by hand from their names (listed in each test).
#include "modelstat/grouping.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "modelstat/error.hpp"
#include "test_support.hpp"

namespace modelstat {
namespace {

std::string sample(const std::string& name) {
  return std::string(MODELSTAT_SOURCE_DIR) + "/sample_models/" + name;
}

TEST(BlockPrefix, SlashScopedNamesEndAtTheFirstLayerIndex) {
  EXPECT_EQ(block_prefix("/h.3/attn/c_attn/MatMul"), "/h.3/");
  EXPECT_EQ(block_prefix("/transformer/h.11/mlp/c_fc/MatMul"), "/transformer/h.11/");
  EXPECT_EQ(block_prefix("/encoder/layer.11/attention/self/query/MatMul"), "/encoder/layer.11/");
  EXPECT_EQ(block_prefix("/layers.3/mlp/fc1/MatMul"), "/layers.3/");
  // The first index wins: a T5 block holds "layer.0" sublayers.
  EXPECT_EQ(block_prefix("/encoder/block.2/layer.0/SelfAttention/q/MatMul"), "/encoder/block.2/");
  // A Sequential's children: the index is a component of its own.
  EXPECT_EQ(block_prefix("/model/layers/3/mlp/Add"), "/model/layers/3/");
  EXPECT_EQ(block_prefix("/0/Conv"), "/0/");
  // "layer1" is not an index (no separator before the digits); "layer1.0" holds one.
  EXPECT_EQ(block_prefix("/layer1/layer1.0/conv1/Conv"), "/layer1/layer1.0/");
  // An underscore before the digits counts (tf2onnx, Keras).
  EXPECT_EQ(block_prefix("model/transformer_block_3/dense/MatMul"), "model/transformer_block_3/");
}

TEST(BlockPrefix, DottedNamesKeepTheirDot) {
  EXPECT_EQ(block_prefix("model.layers.3.mlp.fc1/MatMul"), "model.layers.3.");
  EXPECT_EQ(block_prefix("h.3.attn.c_attn"), "h.3.");
  EXPECT_EQ(block_prefix("transformer.h.11.ln_2.Add"), "transformer.h.11.");
  // Both separators in one name: the first index decides.
  EXPECT_EQ(block_prefix("/h.3.attn/MatMul"), "/h.3.");
}

TEST(BlockPrefix, TheNodesOwnNameNeverCounts) {
  EXPECT_EQ(block_prefix("Conv_3"), "");
  EXPECT_EQ(block_prefix("/Constant_38"), "");
  EXPECT_EQ(block_prefix("/blocks.0/Add_2"), "/blocks.0/");
  EXPECT_EQ(block_prefix("/h.3"), "");  // "3" is the last component
  EXPECT_EQ(block_prefix("MatMul.0"), "");
}

TEST(BlockPrefix, NoIndexMeansTheFirstPathComponent) {
  EXPECT_EQ(block_prefix("/wte/Gather"), "/wte/");
  EXPECT_EQ(block_prefix("/transformer/ln_f/Add"), "/transformer/");
  EXPECT_EQ(block_prefix("wte/Gather"), "wte/");
  // One component, or nothing after the first: no block.
  EXPECT_EQ(block_prefix("/Shape"), "");
  EXPECT_EQ(block_prefix("/ln_f/"), "");
  EXPECT_EQ(block_prefix(""), "");
  EXPECT_EQ(block_prefix("/"), "");
  EXPECT_EQ(block_prefix("//"), "");
}

TEST(GroupRule, BlockGivesOtherForNamesWithoutABlock) {
  const GroupRule rule = GroupRule::parse("block");
  EXPECT_EQ(rule.kind(), GroupRule::Kind::Block);
  EXPECT_EQ(rule.spec(), "block");
  EXPECT_EQ(rule.key("/h.3/attn/MatMul", "MatMul"), "/h.3/");
  EXPECT_EQ(rule.key("/Shape", "Shape"), "(other)");
  EXPECT_EQ(rule.key("Constant_38", "Constant"), std::string(kOtherGroup));
}

TEST(GroupRule, OpIsTheOpType) {
  const GroupRule rule = GroupRule::parse("op");
  EXPECT_EQ(rule.kind(), GroupRule::Kind::OpType);
  EXPECT_EQ(rule.key("/h.3/attn/MatMul", "MatMul"), "MatMul");
  EXPECT_EQ(rule.key("anything", ""), "(other)");
}

TEST(GroupRule, RegexKeyIsTheFirstCaptureGroupElseTheMatch) {
  const GroupRule layer = GroupRule::parse(R"(re:^/h\.(\d+)/)");
  EXPECT_EQ(layer.kind(), GroupRule::Kind::Regex);
  EXPECT_EQ(layer.spec(), R"(re:^/h\.(\d+)/)");
  EXPECT_EQ(layer.key("/h.3/attn/MatMul", "MatMul"), "3");
  EXPECT_EQ(layer.key("/h.12/mlp/Add", "Add"), "12");
  EXPECT_EQ(layer.key("/wte/Gather", "Gather"), "(other)");  // no match
  // Searched, not matched whole: the key is the matched part.
  const GroupRule whole = GroupRule::parse(R"(re:/h\.\d+/)");
  EXPECT_EQ(whole.key("/transformer/h.3/attn/MatMul", "MatMul"), "/h.3/");
  // Group 1 did not take part in the match: the whole match.
  const GroupRule either = GroupRule::parse("re:(attn)|mlp");
  EXPECT_EQ(either.key("/h.3/mlp/Add", "Add"), "mlp");
  EXPECT_EQ(either.key("/h.3/attn/Add", "Add"), "attn");
  // An empty match is no key.
  const GroupRule empty = GroupRule::parse("re:x*");
  EXPECT_EQ(empty.key("/h.3/attn/MatMul", "MatMul"), "(other)");
}

TEST(GroupRule, ARegexSeesOnlyTheFirstCharactersOfAHugeName) {
  // The standard matcher recurses per character: a megabyte name would
  // overflow the stack. The pattern sees kGroupRegexSubjectLimit characters.
  const GroupRule rule = GroupRule::parse("re:a+$");
  const std::string name = "/h.3/" + std::string(1000000, 'a');
  EXPECT_EQ(rule.key(name, "Add"), std::string(kGroupRegexSubjectLimit - 5, 'a'));
}

TEST(GroupRule, RefusesWhatIsNotARule) {
  for (const char* spec : {"", "blocks", "layer", "re:", "re:(", "re:[a-"}) {
    SCOPED_TRACE(spec);
    test::expect_error([&] { GroupRule::parse(spec); }, ErrorKind::Usage, {"--group-by"});
  }
}

// The sums of apply_grouping against an independent walk of the nodes, and
// against the analysis's own totals (what every group row must add up to).
void expect_sums_equal_the_nodes(const AnalysisResult& r) {
  int64_t nodes = 0, not_exact = 0, params = 0, macs = 0, flops = 0, read = 0, written = 0, weights = 0;
  for (const NodeGroup& g : r.groups) {
    nodes += g.nodes;
    not_exact += g.nodes_not_exact;
    params += g.params;
    macs += g.macs;
    flops += g.flops;
    read += g.bytes_read;
    written += g.bytes_written;
    weights += g.weight_bytes;
  }
  int64_t node_params = 0, node_weights = 0, node_not_exact = 0;
  for (const NodeReport& n : r.nodes) {
    node_params += n.cost.params;
    node_weights += n.cost.weight_bytes;
    node_not_exact += n.cost.status != CostStatus::Exact ? 1 : 0;
  }
  EXPECT_EQ(nodes, r.totals.nodes);
  EXPECT_EQ(not_exact, node_not_exact);
  EXPECT_EQ(not_exact, r.totals.nodes - r.totals.nodes_exact);
  EXPECT_EQ(params, node_params);
  EXPECT_EQ(params, r.totals.params);  // no initializer of these models is unread
  EXPECT_EQ(macs, r.totals.macs);
  EXPECT_EQ(flops, r.totals.flops);
  EXPECT_EQ(read, r.totals.bytes_read);
  EXPECT_EQ(written, r.totals.bytes_written);
  EXPECT_EQ(weights, node_weights);
}

struct ExpectedGroup {
  std::string key;
  int first_index;
  int64_t nodes;
};

void expect_groups(const AnalysisResult& r, const std::vector<ExpectedGroup>& expected) {
  ASSERT_EQ(r.groups.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].key);
    EXPECT_EQ(r.groups[i].key, expected[i].key);
    EXPECT_EQ(r.groups[i].first_index, expected[i].first_index);
    EXPECT_EQ(r.groups[i].nodes, expected[i].nodes);
  }
}

LoadOptions bound_sequence() {
  LoadOptions o;
  o.dim_values["seq"] = 16;
  return o;
}

TEST(ApplyGrouping, TinyBertByBlock) {
  // tiny_bert's 165 nodes (0..164), by name: 0-9 "/Shape" .. "/Unsqueeze",
  // 10 "/tok/Gather", 11 "/pos/Gather", 12 "/Add", 13 "/ln/LayerNormalization",
  // 14-87 layer 0 and 88-161 layer 1, each 74 nodes of which 65 are named
  // "/layers.N/..." and 9 are the exporter's unscoped "Constant_K", 162
  // "/Gather_1", 163 "/pool/Gemm", 164 "/Tanh". (other): 10 + 1 + 9 + 9 + 2 = 31.
  AnalysisResult r = analyze_file(sample("tiny_bert.onnx"), bound_sequence());
  ASSERT_EQ(r.nodes.size(), 165u);
  apply_grouping(r, GroupRule::parse("block"));
  EXPECT_EQ(r.group_by, "block");
  expect_groups(r, {{"(other)", 0, 31},
                    {"/tok/", 10, 1},
                    {"/pos/", 11, 1},
                    {"/ln/", 13, 1},
                    {"/layers.0/", 14, 65},
                    {"/layers.1/", 88, 65},
                    {"/pool/", 163, 1}});
  expect_sums_equal_the_nodes(r);
  // The two layers are the same computation: the same costs.
  EXPECT_EQ(r.groups[4].flops, r.groups[5].flops);
  EXPECT_EQ(r.groups[4].params, r.groups[5].params);
  EXPECT_GT(r.groups[4].macs, 0);
}

TEST(ApplyGrouping, TinyGpt2ByBlockAndByRegex) {
  // tiny_gpt2's 260 nodes (0..259): 0-9 and 12 unscoped ("/Shape", "/Add", ...),
  // 10 "/wte/Gather", 11 "/wpe/Gather", 13-130 block 0 (118 nodes, 17 of them
  // "Constant_K": 101 "/blocks.0/..."), 131-246 block 1 (116 nodes, 17
  // "Constant_K": 99; the exporter shared two of its constants with block 0),
  // 247-257 "/ln_f/..." (11), 258 "/Transpose", 259 "/MatMul".
  // (other): 10 + 1 + 17 + 17 + 2 = 47.
  AnalysisResult r = analyze_file(sample("tiny_gpt2.onnx"), bound_sequence());
  ASSERT_EQ(r.nodes.size(), 260u);
  apply_grouping(r, GroupRule::parse("block"));
  expect_groups(r, {{"(other)", 0, 47},
                    {"/wte/", 10, 1},
                    {"/wpe/", 11, 1},
                    {"/blocks.0/", 13, 101},
                    {"/blocks.1/", 131, 99},
                    {"/ln_f/", 247, 11}});
  expect_sums_equal_the_nodes(r);
  // The tied embedding (tools/gen_sample_models.py: vocab 512 x hidden 64) is
  // counted at its first reader, the /wte/ Gather, not again at the head's
  // Transpose (in "(other)").
  EXPECT_EQ(r.groups[1].params, 512 * 64);

  // The layer number alone: the two blocks, everything else in (other).
  apply_grouping(r, GroupRule::parse(R"(re:^/blocks\.(\d+)/)"));
  EXPECT_EQ(r.group_by, R"(re:^/blocks\.(\d+)/)");
  expect_groups(r, {{"(other)", 0, 47 + 1 + 1 + 11}, {"0", 13, 101}, {"1", 131, 99}});
  expect_sums_equal_the_nodes(r);
}

TEST(ApplyGrouping, ByOpTypeMatchesTheOpTypeSummary) {
  AnalysisResult r = analyze_file(sample("tiny_bert.onnx"), bound_sequence());
  apply_grouping(r, GroupRule::parse("op"));
  expect_sums_equal_the_nodes(r);
  // The same sets of nodes as by_op_type, in order of first appearance.
  ASSERT_EQ(r.groups.size(), r.by_op_type.size());
  EXPECT_EQ(r.groups[0].key, r.nodes[0].op_type);
  for (const OpTypeSummary& s : r.by_op_type) {
    SCOPED_TRACE(s.op_type);
    bool found = false;
    for (const NodeGroup& g : r.groups) {
      if (g.key != s.op_type) continue;
      found = true;
      EXPECT_EQ(g.nodes, s.count);
      EXPECT_EQ(g.flops, s.flops);
      EXPECT_EQ(g.params, s.params);
    }
    EXPECT_TRUE(found);
  }
}

TEST(ApplyGrouping, UnknownCostsAreCountedNotHidden) {
  // Without --dim seq the attention is unsized: its groups say how many of
  // their nodes are not exact, and the sums still equal the totals.
  AnalysisResult r = analyze_file(sample("tiny_bert.onnx"), LoadOptions{});
  apply_grouping(r, GroupRule::parse("block"));
  expect_sums_equal_the_nodes(r);
  EXPECT_GT(r.groups[4].nodes_not_exact, 0);
}

}  // namespace
}  // namespace modelstat

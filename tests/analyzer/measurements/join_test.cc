// join_profile (analyzer/measurements/join.cc) against figures worked out by hand
// in this file: shares, achieved rates, intensity, the bound on each side of
// the ridge, efficiency, op-type sums, hotspot order, and the usage errors.
//
// The device: peak 100 GFLOP/s (fp32), bandwidth 10 GB/s, so the ridge is at
// 1e11 / 1e10 = 10 FLOP/B. The nodes (FLOPs, bytes read + written, median):
//   0 conv_a  Conv               2,000,000 FLOPs  150,000 + 50,000 B  100 us   I = 10 (on the ridge)
//   1 relu    Relu                  10,000 FLOPs   40,000 + 40,000 B   20 us   I = 0.125
//   2 conv_b  Conv               4,000,000 FLOPs   80,000 + 20,000 B  300 us   I = 40
//   3 nms     NonMaxSuppression  (no cost rule)                        80 us
//   4 flat    Flatten                    0 FLOPs        0 B            10 us
// Layer sum = 100 + 20 + 300 + 80 + 10 = 510 us; total FLOPs = 6,010,000;
// whole-model median 500 us.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "modelstat/error.hpp"
#include "modelstat/joined.hpp"
#include "test_support.hpp"

namespace modelstat {
namespace {

using test::cost_node;

LayerTiming timed_layer(const NodeReport& n, double median) {
  LayerTiming l;
  l.index = n.index;
  l.name = n.name;
  l.op_type = n.op_type;
  l.time.count = 3;
  l.time.median = median;
  l.time.samples = {median, median, median};
  return l;
}

ProfileResult hand_profile() {
  ProfileResult p;
  AnalysisResult& a = p.analysis;
  a.model_path = "hand.onnx";
  a.nodes = {cost_node(0, "conv_a", "Conv", CostStatus::Exact, 1000000, 2000000, 150000, 50000),
             cost_node(1, "relu", "Relu", CostStatus::Exact, 0, 10000, 40000, 40000),
             cost_node(2, "conv_b", "Conv", CostStatus::Exact, 2000000, 4000000, 80000, 20000),
             cost_node(3, "nms", "NonMaxSuppression", CostStatus::UnknownOp, 0, 0, 0, 0),
             cost_node(4, "flat", "Flatten", CostStatus::Exact, 0, 0, 0, 0)};
  a.totals.nodes = 5;
  a.totals.nodes_exact = 4;
  a.totals.nodes_unknown_op = 1;
  a.totals.flops = 6010000;
  p.context.device_kind = "cpu";
  p.context.device_name = "Test CPU";
  p.context.threads = 4;
  p.context.dtype = "fp32";
  p.whole.count = 3;
  p.whole.median = 500e-6;
  const double medians[] = {100e-6, 20e-6, 300e-6, 80e-6, 10e-6};
  for (size_t i = 0; i < a.nodes.size(); ++i) p.layers.push_back(timed_layer(a.nodes[i], medians[i]));
  return p;
}

// 10 GB/s, an fp32 matmul peak of 100 GFLOP/s reached at n = 1024.
DeviceCeilings hand_ceilings() {
  DeviceCeilings c = test::cpu_ceilings(1e10, 1e11);
  c.matmul[0].best_size = 1024;
  return c;
}

bool mentions(const std::vector<std::string>& notices, const std::string& text) {
  for (const std::string& n : notices)
    if (n.find(text) != std::string::npos) return true;
  return false;
}

TEST(JoinProfile, RooflineHeader) {
  const JoinedReport r = join_profile(hand_profile(), hand_ceilings());
  EXPECT_EQ(r.compute_dtype, "fp32");
  EXPECT_DOUBLE_EQ(r.peak_flops_per_second, 1e11);
  EXPECT_DOUBLE_EQ(r.memory_bandwidth, 1e10);
  EXPECT_DOUBLE_EQ(r.ridge_intensity, 10.0);
  EXPECT_DOUBLE_EQ(r.layer_sum_seconds, 510e-6);
  // 6,010,000 FLOPs / 500 us = 12.02 GFLOP/s, 12.02% of 100 GFLOP/s.
  EXPECT_DOUBLE_EQ(r.whole_achieved_flops_per_second, 1.202e10);
  EXPECT_DOUBLE_EQ(r.whole_efficiency, 0.1202);
  EXPECT_TRUE(mentions(r.notices, "1 node(s) have no exact cost")) << ::testing::PrintToString(r.notices);
  EXPECT_FALSE(mentions(r.notices, "datasheet"));
  EXPECT_EQ(r.profile.analysis.model_path, "hand.onnx") << "the profile travels with the report";
}

TEST(JoinProfile, PerNodeFigures) {
  const JoinedReport r = join_profile(hand_profile(), hand_ceilings());
  ASSERT_EQ(r.nodes.size(), 5u);
  const JoinedNode& conv_a = r.nodes[0];
  EXPECT_EQ(conv_a.name, "conv_a");
  EXPECT_EQ(conv_a.macs.value(), 1000000);
  EXPECT_EQ(conv_a.bytes.value(), 200000);
  EXPECT_DOUBLE_EQ(conv_a.share_of_time.value(), 100.0 / 510.0);
  EXPECT_DOUBLE_EQ(conv_a.share_of_flops.value(), 2000000.0 / 6010000.0);
  EXPECT_DOUBLE_EQ(conv_a.achieved_flops_per_second.value(), 2e10);  // 2e6 / 1e-4
  EXPECT_DOUBLE_EQ(conv_a.achieved_bytes_per_second.value(), 2e9);   // 2e5 / 1e-4
  EXPECT_DOUBLE_EQ(conv_a.arithmetic_intensity.value(), 10.0);
  EXPECT_EQ(conv_a.bound, Bound::Compute) << "on the ridge counts as compute-bound";
  EXPECT_DOUBLE_EQ(conv_a.attainable_flops_per_second.value(), 1e11);  // min(1e11, 1e10 * 10)
  EXPECT_DOUBLE_EQ(conv_a.efficiency.value(), 0.2);                    // 2e10 / 1e11

  const JoinedNode& relu = r.nodes[1];
  EXPECT_DOUBLE_EQ(relu.arithmetic_intensity.value(), 0.125);
  EXPECT_EQ(relu.bound, Bound::Memory);
  EXPECT_DOUBLE_EQ(relu.achieved_bytes_per_second.value(), 4e9);          // 8e4 / 2e-5
  EXPECT_DOUBLE_EQ(relu.achieved_flops_per_second.value(), 5e8);          // 1e4 / 2e-5
  EXPECT_DOUBLE_EQ(relu.attainable_flops_per_second.value(), 1.25e9);     // 1e10 * 0.125
  EXPECT_DOUBLE_EQ(relu.efficiency.value(), 0.4);                         // 4e9 / 1e10

  const JoinedNode& conv_b = r.nodes[2];
  EXPECT_DOUBLE_EQ(conv_b.arithmetic_intensity.value(), 40.0);
  EXPECT_EQ(conv_b.bound, Bound::Compute);
  EXPECT_DOUBLE_EQ(conv_b.achieved_flops_per_second.value(), 4e6 / 300e-6);
  EXPECT_DOUBLE_EQ(conv_b.efficiency.value(), 4e6 / 300e-6 / 1e11);
  EXPECT_DOUBLE_EQ(conv_b.share_of_time.value(), 300.0 / 510.0);

  const JoinedNode& nms = r.nodes[3];
  EXPECT_EQ(nms.status, CostStatus::UnknownOp);
  EXPECT_EQ(nms.bound, Bound::None) << "unknown cost: no bound";
  EXPECT_FALSE(nms.efficiency) << "no bound: no efficiency (unknown, not 0)";
  EXPECT_FALSE(nms.flops || nms.share_of_flops || nms.achieved_flops_per_second) << "unknown cost: unknown, not 0";
  EXPECT_DOUBLE_EQ(nms.share_of_time.value(), 80.0 / 510.0) << "its time still counts";

  EXPECT_EQ(r.nodes[4].bound, Bound::None) << "no FLOPs and no bytes: no bound";

  double shares = 0;
  for (const JoinedNode& n : r.nodes) shares += n.share_of_time.value();
  EXPECT_NEAR(shares, 1.0, 1e-12);
}

// A node the executor fused into its reader (a QDQ DequantizeLinear) did not
// run: its costs and share of time stay, but no rate, bound or efficiency is
// derived from the markers' time around nothing.
TEST(JoinProfile, AFusedNodeHasNoRateBoundOrEfficiency) {
  ProfileResult p = hand_profile();
  p.layers[1].fused_into = "conv_b";
  const JoinedReport r = join_profile(p, hand_ceilings());
  const JoinedNode& relu = r.nodes[1];
  EXPECT_EQ(relu.fused_into, "conv_b");
  EXPECT_EQ(relu.bytes.value(), 80000) << "its analysis figures stay";
  EXPECT_DOUBLE_EQ(relu.share_of_time.value(), 20.0 / 510.0);
  EXPECT_FALSE(relu.achieved_flops_per_second || relu.achieved_bytes_per_second || relu.efficiency);
  EXPECT_EQ(relu.bound, Bound::None);
  EXPECT_EQ(r.nodes[2].bound, Bound::Compute) << "the reader keeps its own figures";
}

// A CPU Conv group: conv_a's kernel also ran relu (fused_members). conv_a's
// row carries the group's cost (2,010,000 FLOPs, 280,000 B over its 100 us:
// I = 7.18 < 10, memory-bound at 2.8 GB/s = 28% of 10 GB/s); relu keeps its
// own cost for listing but has no rate, and the op-type sums count relu's
// FLOPs once, in Conv's: Conv 6,010,000, Relu 0; the total stays 6,010,000.
TEST(JoinProfile, AConvGroupsHeadCarriesItsMembersCostOnTheRoofline) {
  ProfileResult p = hand_profile();
  p.layers[0].fused_members = {"relu"};
  p.layers[0].kernel = "brgconv:avx512_core";
  p.layers[1].fused_into = "conv_a";
  const JoinedReport r = join_profile(p, hand_ceilings());
  const JoinedNode& head = r.nodes[0];
  EXPECT_EQ(head.fused_members, std::vector<std::string>{"relu"});
  EXPECT_EQ(head.kernel, "brgconv:avx512_core");
  EXPECT_EQ(head.flops.value(), 2010000);
  EXPECT_EQ(head.macs.value(), 1000000);
  EXPECT_EQ(head.bytes.value(), 280000);
  EXPECT_DOUBLE_EQ(head.achieved_flops_per_second.value(), 2010000 / 100e-6);
  EXPECT_EQ(head.bound, Bound::Memory);
  EXPECT_DOUBLE_EQ(head.efficiency.value(), 280000 / 100e-6 / 1e10);
  EXPECT_EQ(r.nodes[1].flops.value(), 10000) << "the member's row still lists its own cost";
  EXPECT_FALSE(r.nodes[1].achieved_flops_per_second);
  int64_t flops = 0;
  for (const JoinedOpType& t : r.by_op_type) {
    flops += t.flops;
    if (t.op_type == "Relu") {
      EXPECT_EQ(t.flops, 0);
    }
    if (t.op_type == "Conv") {
      EXPECT_EQ(t.flops, 6010000);
    }
  }
  EXPECT_EQ(flops, 6010000) << "each node's FLOPs counted once";
  // --group-by sums count them once too.
  apply_grouping(p, GroupRule::parse("op"));
  int64_t grouped = 0;
  for (const LayerGroup& g : p.groups) grouped += g.flops;
  EXPECT_EQ(grouped, 6010000);
}

TEST(JoinProfile, JustBelowTheRidgeIsMemoryBound) {
  ProfileResult p = hand_profile();
  p.analysis.nodes[0].cost.bytes_written = 50001;  // I = 2e6 / 200,001 < 10
  const JoinedReport r = join_profile(std::move(p), hand_ceilings());
  EXPECT_EQ(r.nodes[0].bound, Bound::Memory);
  EXPECT_DOUBLE_EQ(r.nodes[0].efficiency.value(), 200001 / 100e-6 / 1e10);
  EXPECT_DOUBLE_EQ(r.nodes[0].attainable_flops_per_second.value(), 1e10 * (2e6 / 200001.0));
}

TEST(JoinProfile, OpTypeSumsAndHotspotOrder) {
  const JoinedReport r = join_profile(hand_profile(), hand_ceilings());
  // By time: Conv 400 us, NonMaxSuppression 80, Relu 20, Flatten 10.
  ASSERT_EQ(r.by_op_type.size(), 4u);
  const JoinedOpType& conv = r.by_op_type[0];
  EXPECT_EQ(conv.op_type, "Conv");
  EXPECT_EQ(conv.count, 2);
  EXPECT_EQ(conv.flops, 6000000);
  EXPECT_EQ(conv.bytes, 300000);
  EXPECT_DOUBLE_EQ(conv.seconds, 400e-6);
  EXPECT_DOUBLE_EQ(conv.share_of_time, 400.0 / 510.0);
  EXPECT_DOUBLE_EQ(conv.share_of_flops, 6000000.0 / 6010000.0);
  EXPECT_DOUBLE_EQ(conv.achieved_flops_per_second, 1.5e10);  // 6e6 / 4e-4
  EXPECT_EQ(conv.nodes_not_exact, 0);
  EXPECT_EQ(r.by_op_type[1].op_type, "NonMaxSuppression");
  EXPECT_EQ(r.by_op_type[1].nodes_not_exact, 1);
  EXPECT_EQ(r.by_op_type[2].op_type, "Relu");
  EXPECT_EQ(r.by_op_type[3].op_type, "Flatten");
  // Hotspots: node positions by median time, descending.
  EXPECT_EQ(r.hotspots, (std::vector<int>{2, 0, 3, 1, 4}));
}

// The nodes inside a subgraph of conv_b (as though it held one; the join
// does not look at op types), each counted and timed per model run:
//   conv_b/then_branch/mm    1,000,000 FLOPs  10,000 + 10,000 B  50 us  I = 50  compute  5 calls
//   conv_b/else_branch/neg   (the analysis counted the other branch: no row)  5 us
//   conv_b/then_branch/mm under index 3 (not its parent): no row either
TEST(JoinProfile, SubgraphNodesJoinTheAnalysisRowsByName) {
  ProfileResult p = hand_profile();
  p.analysis.subgraph_nodes = {
      cost_node(2, "conv_b/then_branch/mm", "MatMul", CostStatus::Exact, 500000, 1000000, 10000, 10000)};
  auto sub = [](int index, const std::string& name, double median) {
    return test::subgraph_layer(index, name, "MatMul", 1, 5, timed_layer(NodeReport{}, median).time);
  };
  p.subgraph_layers = {sub(2, "conv_b/then_branch/mm", 50e-6), sub(2, "conv_b/else_branch/neg", 5e-6),
                       sub(3, "conv_b/then_branch/mm", 5e-6)};
  const JoinedReport r = join_profile(p, hand_ceilings());
  ASSERT_EQ(r.subgraph_nodes.size(), 3u);
  const JoinedNode& mm = r.subgraph_nodes[0];
  EXPECT_EQ(mm.index, 2);
  EXPECT_EQ(mm.depth, 1);
  EXPECT_EQ(mm.calls_per_run, 5.0);
  EXPECT_EQ(mm.status, CostStatus::Exact);
  EXPECT_EQ(mm.flops.value(), 1000000);
  EXPECT_EQ(mm.bytes.value(), 20000);
  EXPECT_DOUBLE_EQ(mm.achieved_flops_per_second.value(), 2e10);  // 1e6 / 5e-5
  EXPECT_DOUBLE_EQ(mm.arithmetic_intensity.value(), 50.0);
  EXPECT_EQ(mm.bound, Bound::Compute);
  EXPECT_DOUBLE_EQ(mm.efficiency.value(), 0.2);              // 2e10 / 1e11
  EXPECT_DOUBLE_EQ(mm.share_of_time.value(), 50.0 / 510.0);  // of the top-level layers' sum
  EXPECT_DOUBLE_EQ(mm.share_of_flops.value(), 1000000.0 / 6010000.0);
  for (size_t k : {1, 2}) {
    const JoinedNode& n = r.subgraph_nodes[k];
    EXPECT_EQ(n.status, CostStatus::UnknownOp) << n.name;
    EXPECT_FALSE(n.flops) << "no analysis row: unknown, not 0";
    EXPECT_EQ(n.bound, Bound::None);
  }
  EXPECT_TRUE(mentions(r.notices, "2 subgraph node(s) ran that the analysis did not count"));
  // Inside their parents' times: the top-level figures are those without them.
  const JoinedReport plain = join_profile(hand_profile(), hand_ceilings());
  EXPECT_EQ(r.layer_sum_seconds, plain.layer_sum_seconds);
  EXPECT_EQ(r.hotspots, plain.hotspots);
  ASSERT_EQ(r.by_op_type.size(), plain.by_op_type.size());
  for (size_t k = 0; k < r.by_op_type.size(); ++k) {
    EXPECT_EQ(r.by_op_type[k].op_type, plain.by_op_type[k].op_type);
    EXPECT_EQ(r.by_op_type[k].count, plain.by_op_type[k].count);
  }
}

TEST(JoinProfile, NoticesSayWhereTheCeilingsComeFrom) {
  DeviceCeilings c = hand_ceilings();
  c.source = "datasheet: something";
  c.device_name = "Other CPU";
  c.threads = 8;
  const JoinedReport r = join_profile(hand_profile(), c);
  EXPECT_TRUE(mentions(r.notices, "datasheet: something"));
  EXPECT_TRUE(mentions(r.notices, "'Other CPU'"));
  EXPECT_TRUE(mentions(r.notices, "8 threads"));
}

TEST(JoinProfile, MissingDtypeFallsBackToTheFp32Roof) {
  ProfileResult p = hand_profile();
  p.context.dtype = "bf16";
  const JoinedReport r = join_profile(std::move(p), hand_ceilings());
  EXPECT_EQ(r.compute_dtype, "fp32") << "the roof's dtype: efficiencies are of the fp32 peak";
  EXPECT_EQ(r.profile.context.dtype, "bf16") << "the run's own dtype is kept";
  EXPECT_DOUBLE_EQ(r.peak_flops_per_second, 1e11);
  EXPECT_TRUE(mentions(r.notices, "no bf16 roof"));
}

// The machine's roofs (ceilings 2.0) added to the hand device: fp32 FMA peak
// 200 GFLOP/s at 1 thread and 400 at 4 (the profile's 4 threads take 400);
// memory levels at 4 threads: L1 <= 100,000 B at 1 TB/s, L2 <= 1,000,000 B at
// 100 GB/s, DRAM 10 GB/s (at 1 thread other figures, which must not be used).
//   conv_a 200,000 B -> L2; I = 10 >= 4e11 / 1e11 = 4: compute; 2e10 / 4e11 = 5%
//   relu    80,000 B -> L1; I = 0.125 < 0.4: memory; 4e9 B/s / 1e12 = 0.4%;
//           attainable 1e12 x 0.125 = 1.25e11
//   conv_b 100,000 B -> L1 (fits exactly); I = 40: compute; 1.333e10 / 4e11 = 3.33%
//   whole: 6.01e6 / 500 us = 1.202e10: 3.005% of 4e11, 12.02% of the 1e11 matmul
TEST(JoinProfile, MachineRoofsAndTheLevelEachNodeFitsIn) {
  DeviceCeilings c = hand_ceilings();
  c.compute_roofs = {{"fp32", "fma zmm", 1, 2e11, true}, {"fp32", "fma zmm", 4, 4e11, true}};
  c.memory_levels = {{"L1", 1, 50000, 0, 0, 0, 5e11},        {"DRAM", 1, 0, 0, 0, 0, 5e9},
                     {"L1", 4, 100000, 0, 0, 0, 1e12},       {"L2", 4, 1000000, 0, 0, 0, 1e11},
                     {"DRAM", 4, 0, 0, 0, 0, 1e10}};
  const JoinedReport r = join_profile(hand_profile(), c);
  EXPECT_TRUE(r.peak_is_machine_roof);
  EXPECT_DOUBLE_EQ(r.peak_flops_per_second, 4e11);
  EXPECT_EQ(r.peak_source, "fma zmm, 4 threads");
  EXPECT_DOUBLE_EQ(r.achievable_flops_per_second, 1e11);
  EXPECT_DOUBLE_EQ(r.memory_bandwidth, 1e10);
  EXPECT_DOUBLE_EQ(r.ridge_intensity, 40);
  ASSERT_EQ(r.memory_roofs.size(), 3u);

  const JoinedNode& conv_a = r.nodes[0];
  EXPECT_EQ(conv_a.memory_level, "L2");
  EXPECT_EQ(conv_a.bound, Bound::Compute);
  EXPECT_NEAR(*conv_a.efficiency, 0.05, 1e-12);
  const JoinedNode& relu = r.nodes[1];
  EXPECT_EQ(relu.memory_level, "L1");
  EXPECT_EQ(relu.bound, Bound::Memory);
  EXPECT_NEAR(*relu.efficiency, 0.004, 1e-12);
  EXPECT_NEAR(*relu.attainable_flops_per_second, 1.25e11, 1);
  const JoinedNode& conv_b = r.nodes[2];
  EXPECT_EQ(conv_b.memory_level, "L1");
  EXPECT_EQ(conv_b.bound, Bound::Compute);
  EXPECT_NEAR(*conv_b.efficiency, 4e6 / 300e-6 / 4e11, 1e-12);
  EXPECT_NEAR(r.whole_efficiency, 0.03005, 1e-9);
  EXPECT_NEAR(r.whole_achievable_efficiency, 0.1202, 1e-9);
  EXPECT_FALSE(mentions(r.notices, "no machine roof"));
}

TEST(JoinProfile, CeilingsWithoutMachineRoofsFallBackToTheMatmulAndSaySo) {
  const JoinedReport r = join_profile(hand_profile(), hand_ceilings());
  EXPECT_FALSE(r.peak_is_machine_roof);
  EXPECT_DOUBLE_EQ(r.peak_flops_per_second, 1e11);
  EXPECT_TRUE(r.memory_roofs.empty());
  EXPECT_EQ(r.nodes[1].memory_level, "");
  EXPECT_DOUBLE_EQ(r.nodes[1].memory_bandwidth, 1e10);
  EXPECT_TRUE(mentions(r.notices, "no machine roof")) << ::testing::PrintToString(r.notices);
}

TEST(JoinProfile, MismatchedDeviceKindIsAUsageError) {
  ProfileResult p = hand_profile();
  p.context.device_kind = "cuda";
  test::expect_error([&] { join_profile(std::move(p), hand_ceilings()); }, ErrorKind::Usage, {"cuda"});
}

TEST(JoinProfile, NoLayersIsAUsageError) {
  ProfileResult p = hand_profile();
  p.layers.clear();
  test::expect_error([&] { join_profile(std::move(p), hand_ceilings()); }, ErrorKind::Usage, {"--no-layers"});
}

// apply_grouping on a profile, against the table at the top of this file.
// By op type, in order of first appearance: Conv (conv_a, conv_b: 6,000,000
// FLOPs, 300,000 B, 100 + 300 = 400 us), Relu, NonMaxSuppression (no cost
// rule: unknown, no rate), Flatten.
TEST(ApplyGrouping, ProfileSumsLayerTimesAndCostsPerGroup) {
  ProfileResult p = hand_profile();
  apply_grouping(p, GroupRule::parse("op"));
  EXPECT_EQ(p.group_by, "op");
  ASSERT_EQ(p.groups.size(), 4u);
  const LayerGroup& conv = p.groups[0];
  EXPECT_EQ(conv.key, "Conv");
  EXPECT_EQ(conv.first_index, 0);
  EXPECT_EQ(conv.layers, 2);
  EXPECT_EQ(conv.layers_not_exact, 0);
  EXPECT_EQ(conv.macs, 3000000);
  EXPECT_EQ(conv.flops, 6000000);
  EXPECT_EQ(conv.bytes, 300000);
  EXPECT_DOUBLE_EQ(conv.seconds, 400e-6);
  EXPECT_DOUBLE_EQ(conv.share_of_time.value(), 400.0 / 510.0);
  EXPECT_DOUBLE_EQ(conv.share_of_flops.value(), 6000000.0 / 6010000.0);
  EXPECT_DOUBLE_EQ(conv.achieved_flops_per_second.value(), 1.5e10);  // 6e6 / 4e-4
  EXPECT_DOUBLE_EQ(conv.achieved_bytes_per_second.value(), 7.5e8);   // 3e5 / 4e-4
  EXPECT_EQ(p.groups[1].key, "Relu");
  EXPECT_EQ(p.groups[1].first_index, 1);
  const LayerGroup& nms = p.groups[2];
  EXPECT_EQ(nms.key, "NonMaxSuppression");
  EXPECT_EQ(nms.first_index, 3);
  EXPECT_EQ(nms.layers_not_exact, 1);
  EXPECT_EQ(nms.flops, 0);
  EXPECT_DOUBLE_EQ(nms.seconds, 80e-6);
  EXPECT_DOUBLE_EQ(nms.share_of_time.value(), 80.0 / 510.0);
  // Nothing known to divide: unknown, not 0.
  EXPECT_FALSE(nms.share_of_flops);
  EXPECT_FALSE(nms.achieved_flops_per_second);
  EXPECT_FALSE(nms.achieved_bytes_per_second);
  EXPECT_EQ(p.groups[3].key, "Flatten");
  EXPECT_DOUBLE_EQ(p.groups[3].achieved_flops_per_second.value(), 0.0);  // 0 FLOPs in 10 us
  // The analysis got the same rule's cost sums.
  EXPECT_EQ(p.analysis.group_by, "op");
  ASSERT_EQ(p.analysis.groups.size(), 4u);
  EXPECT_EQ(p.analysis.groups[0].flops, 6000000);
  EXPECT_EQ(p.analysis.groups[0].nodes, 2);
}

TEST(ApplyGrouping, ProfileGroupTotalsEqualTheLayerTotals) {
  ProfileResult p = hand_profile();
  // A regex: conv_a and conv_b share "conv_"; relu, nms and flat are (other).
  apply_grouping(p, GroupRule::parse("re:^conv_"));
  ASSERT_EQ(p.groups.size(), 2u);
  EXPECT_EQ(p.groups[0].key, "conv_");
  EXPECT_EQ(p.groups[0].layers, 2);
  EXPECT_EQ(p.groups[1].key, "(other)");
  EXPECT_EQ(p.groups[1].first_index, 1);
  EXPECT_EQ(p.groups[1].layers, 3);
  EXPECT_EQ(p.groups[1].layers_not_exact, 1);
  EXPECT_EQ(p.groups[1].flops, 10000);            // relu's; nms unknown, flat 0
  EXPECT_DOUBLE_EQ(p.groups[1].seconds, 110e-6);  // 20 + 80 + 10 us
  // A partly known group still has a rate: a lower bound, said by layers_not_exact.
  EXPECT_DOUBLE_EQ(p.groups[1].achieved_flops_per_second.value(), 10000 / 110e-6);
  double seconds = 0, share = 0;
  int64_t layers = 0, flops = 0;
  for (const LayerGroup& g : p.groups) {
    seconds += g.seconds;
    share += g.share_of_time.value();
    layers += g.layers;
    flops += g.flops;
  }
  EXPECT_DOUBLE_EQ(seconds, 510e-6);
  EXPECT_DOUBLE_EQ(share, 1.0);
  EXPECT_EQ(layers, 5);
  EXPECT_EQ(flops, 6010000);
}

TEST(ApplyGrouping, AnUnmeasuredLayerAddsNoTimeAndTheJoinKeepsTheGroups) {
  ProfileResult p = hand_profile();
  p.layers[2].time.count = 0;  // conv_b: no samples
  apply_grouping(p, GroupRule::parse("op"));
  EXPECT_EQ(p.groups[0].layers, 2);
  EXPECT_DOUBLE_EQ(p.groups[0].seconds, 100e-6);
  EXPECT_DOUBLE_EQ(p.groups[0].share_of_time.value(), 100.0 / 210.0);  // of 100 + 20 + 80 + 10 us
  const JoinedReport r = join_profile(std::move(p), hand_ceilings());
  ASSERT_EQ(r.profile.groups.size(), 4u);
  EXPECT_EQ(r.profile.group_by, "op");
  EXPECT_DOUBLE_EQ(r.profile.groups[0].seconds, 100e-6);
}

// join_scaling against figures worked out by hand. The N-thread run is
// hand_profile() at 4 threads with relu's median at 8 us; the 1-thread run has
// medians conv_a 360, relu 21, conv_b 330, nms 80, flat 12 us and a 1.2 ms
// whole-model median.
//   conv_a: 360/100 = 3.6x, 90%          -> scales;            lost 100 - 90    = 10 us
//   relu:   21/8 = 2.625x, 65.6%; memory-bound (0.125 FLOP/B) at 80,000 B / 8 us = 10 GB/s,
//           100% of the 10 GB/s roof -> "at the memory roof";  lost 8 - 5.25 = 2.75 us
//   conv_b: 330/300 = 1.1x < 1.15x, compute-bound -> "serial"; lost 300 - 82.5 = 217.5 us
//   nms:    80/80 = 1x, no bound          -> "serial";          lost 80 - 20     = 60 us
//   flat:   12 us at 1 thread < 20 us     -> "too small";       lost 10 - 3      = 7 us
// Whole model: 1.2 ms / 500 us = 2.4x, 60%.
TEST(JoinScaling, SpeedupEfficiencyAndWhyEachNodeDoesNotScale) {
  ProfileResult n = hand_profile();
  n.layers[1].time.median = 8e-6;
  n.layers[1].time.samples = {8e-6, 8e-6, 8e-6};
  JoinedReport r = join_profile(n, hand_ceilings());
  ProfileResult one = hand_profile();
  one.context.threads = 1;
  one.whole.median = 1.2e-3;
  const double medians[] = {360e-6, 21e-6, 330e-6, 80e-6, 12e-6};
  for (size_t i = 0; i < one.layers.size(); ++i) one.layers[i].time.median = medians[i];
  join_scaling(r, one);
  ASSERT_TRUE(r.scaling);
  const ScalingView& v = *r.scaling;
  EXPECT_EQ(v.threads, 4);
  EXPECT_NEAR(v.speedup, 2.4, 1e-12);
  EXPECT_NEAR(v.efficiency, 0.6, 1e-12);
  ASSERT_EQ(v.nodes.size(), 5u);
  const std::vector<std::string> order = {"conv_b", "nms", "conv_a", "flat", "relu"};
  const std::vector<double> lost = {217.5e-6, 60e-6, 10e-6, 7e-6, 2.75e-6};
  const std::vector<std::string> why = {"serial: ran on one thread", "serial: ran on one thread", "",
                                        "too small to split", "at the memory roof"};
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(v.nodes[i].name, order[i]);
    EXPECT_NEAR(v.nodes[i].lost_seconds, lost[i], 1e-12) << order[i];
    EXPECT_EQ(v.nodes[i].why, why[i]) << order[i];
  }
  EXPECT_NEAR(v.nodes[2].speedup, 3.6, 1e-12);
  EXPECT_NEAR(v.nodes[2].efficiency, 0.9, 1e-12);
  EXPECT_NEAR(v.nodes[4].efficiency, 21.0 / 8.0 / 4.0, 1e-12);
}

TEST(JoinScaling, OneThreadOnBothSidesIsAUsageError) {
  ProfileResult single = hand_profile();
  single.context.threads = 1;
  JoinedReport r = join_profile(single, hand_ceilings());
  EXPECT_THROW(join_scaling(r, hand_profile()), Error);
}

}  // namespace
}  // namespace modelstat

// The machine roofs' pure parts (analyzer/measurements/roofs.cc, ceilings.cc):
// memory levels found from hand-made sweeps whose plateaus and edges are
// worked out below, the CUDA per-architecture table against NVIDIA's published
// dense peaks, the choice of a roof by thread count, and schema 2.0 files next
// to a 1.x one.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "modelstat/ceilings.hpp"
#include "modelstat/error.hpp"

namespace modelstat {
namespace {

constexpr int64_t K = 1024, M = K * 1024;

std::vector<BandwidthPoint> sweep(int threads, const std::vector<std::pair<int64_t, double>>& points_gb) {
  std::vector<BandwidthPoint> out;
  for (const auto& [bytes, gb] : points_gb) out.push_back({threads, bytes, gb * 1e9, 0.0});
  return out;
}

// This VM's caches as sysfs reports them: L1d 32 KiB and L2 1 MiB per CPU, L3 32 MiB shared by 2.
const std::vector<CacheSize> kCaches = {{1, 32 * K, 1}, {2, 1 * M, 1}, {3, 32 * M, 2}};

bool mentions(const std::vector<std::string>& notes, const std::string& text) {
  for (const auto& n : notes)
    if (n.find(text) != std::string::npos) return true;
  return false;
}

// One thread; four plateaus (200, 100, 50, 20 GB/s) with one transition point
// between each (150 at 32 KiB, 70 at 1 MiB, 35 at 32 MiB), a few % of noise.
// Edges, where log bw crosses the middle of two plateaus (log-log between the
// points around it):
//   L1/L2: middle sqrt(200*100) = 141.4; 32K (150) above, 64K (100) below:
//          t = ln(150/141.4)/ln(150/100) = 0.146 -> 32 KiB x 2^0.146 = 35.4 KiB
//   L2/L3: middle 70.7; 512K (100) above, 1M (70) below: t = 0.972 -> 512 KiB x 2^0.972 = 1004 KiB
//   L3/DRAM: middle 31.6; 32M (35) above, 64M (20) below: t = 0.181 -> 36.3 MiB
TEST(MemoryLevels, FourPlateausNamedBySysfsWithTransitionsLeftOut) {
  const auto points = sweep(1, {{4 * K, 200}, {8 * K, 205}, {16 * K, 195}, {32 * K, 150},
                                {64 * K, 100}, {128 * K, 98}, {256 * K, 102}, {512 * K, 100}, {1 * M, 70},
                                {2 * M, 50}, {4 * M, 52}, {8 * M, 49}, {16 * M, 50}, {32 * M, 35},
                                {64 * M, 20}, {128 * M, 19.5}, {256 * M, 20.5}});
  std::vector<std::string> notes;
  const auto levels = find_memory_levels(points, kCaches, 1, notes);
  ASSERT_EQ(levels.size(), 4u);
  EXPECT_TRUE(notes.empty()) << ::testing::PrintToString(notes);
  EXPECT_EQ(levels[0].level, "L1");
  EXPECT_EQ(levels[1].level, "L2");
  EXPECT_EQ(levels[2].level, "L3");
  EXPECT_EQ(levels[3].level, "DRAM");
  EXPECT_NEAR(levels[0].bytes_per_second, 200e9, 1e-9 * 200e9);  // median of 200, 205, 195
  EXPECT_NEAR(levels[1].bytes_per_second, 100e9, 1e-9 * 100e9);  // median of 100, 98, 102, 100
  EXPECT_NEAR(levels[2].bytes_per_second, 50e9, 1e-9 * 50e9);   // median of 50, 52, 49, 50
  EXPECT_NEAR(levels[3].bytes_per_second, 20e9, 1e-9 * 20e9);
  EXPECT_EQ(levels[0].capacity_bytes, 32 * K);  // sysfs's sizes, one instance each for one thread
  EXPECT_EQ(levels[1].capacity_bytes, 1 * M);
  EXPECT_EQ(levels[2].capacity_bytes, 32 * M);
  EXPECT_EQ(levels[3].capacity_bytes, 0);       // DRAM: no limit
  EXPECT_NEAR(double(levels[0].measured_edge_bytes), 35.4 * K, 0.2 * K);
  EXPECT_NEAR(double(levels[1].measured_edge_bytes), 1004.0 * K, 3.0 * K);
  EXPECT_NEAR(double(levels[2].measured_edge_bytes), 36.3 * M, 0.2 * M);
  EXPECT_EQ(levels[3].measured_edge_bytes, 0);
  EXPECT_EQ(levels[1].plateau_from_bytes, 64 * K);
  EXPECT_EQ(levels[1].plateau_to_bytes, 512 * K);
  for (const auto& l : levels) EXPECT_EQ(l.threads, 1);
}

// Two threads, no transition points: private caches hold twice as much (one
// instance per thread), the shared L3 the same. Edges halfway (in log) between
// the last point of a plateau and the first of the next: x 2^0.5.
const std::vector<std::pair<int64_t, double>> kStaircase = {
    {8 * K, 400},  {16 * K, 400}, {32 * K, 400}, {64 * K, 400}, {128 * K, 200}, {256 * K, 200},
    {512 * K, 200}, {1 * M, 200}, {2 * M, 200},  {4 * M, 100},  {8 * M, 100},   {16 * M, 100},
    {32 * M, 100},  {64 * M, 40}, {128 * M, 40}, {256 * M, 40}};

TEST(MemoryLevels, PrivateCachesScaleWithThreadsSharedOnesDoNot) {
  std::vector<std::string> notes;
  const auto levels = find_memory_levels(sweep(2, kStaircase), kCaches, 2, notes);
  ASSERT_EQ(levels.size(), 4u);
  EXPECT_EQ(levels[0].level, "L1");
  EXPECT_EQ(levels[0].capacity_bytes, 64 * K);
  EXPECT_EQ(levels[1].level, "L2");
  EXPECT_EQ(levels[1].capacity_bytes, 2 * M);
  EXPECT_EQ(levels[2].level, "L3");
  EXPECT_EQ(levels[2].capacity_bytes, 32 * M);
  EXPECT_EQ(levels[3].level, "DRAM");
  EXPECT_NEAR(double(levels[0].measured_edge_bytes), 64.0 * K * std::sqrt(2.0), 1.0 * K);
  EXPECT_NEAR(double(levels[2].measured_edge_bytes), 32.0 * M * std::sqrt(2.0), 0.1 * M);
  EXPECT_TRUE(notes.empty()) << ::testing::PrintToString(notes);
}

TEST(MemoryLevels, WithoutSysfsLevelsAreNamedInOrderWithTheirMeasuredEdges) {
  std::vector<std::string> notes;
  const auto levels = find_memory_levels(sweep(1, kStaircase), {}, 1, notes);
  ASSERT_EQ(levels.size(), 4u);
  EXPECT_EQ(levels[0].level, "L1");
  EXPECT_EQ(levels[1].level, "L2");
  EXPECT_EQ(levels[2].level, "L3");
  EXPECT_EQ(levels[3].level, "DRAM");
  EXPECT_EQ(levels[1].capacity_bytes, levels[1].measured_edge_bytes);
  EXPECT_NEAR(double(levels[1].capacity_bytes), 2.0 * M * std::sqrt(2.0), 0.01 * M);
  EXPECT_EQ(levels[3].capacity_bytes, 0);
}

TEST(MemoryLevels, ACacheWithoutItsOwnPlateauIsNoted) {
  // 200 GB/s up to 64 KiB, then 20 GB/s: L2 and L3 are not told apart from DRAM here.
  const auto points = sweep(1, {{4 * K, 200}, {16 * K, 200}, {64 * K, 200}, {256 * K, 20}, {1 * M, 20},
                                {16 * M, 20}, {64 * M, 20}, {256 * M, 20}});
  std::vector<std::string> notes;
  const auto levels = find_memory_levels(points, kCaches, 1, notes);
  ASSERT_EQ(levels.size(), 2u);
  EXPECT_EQ(levels[0].level, "L1");  // edge 128 KiB: 4x L1, nearer than L2's 1 MiB
  EXPECT_TRUE(mentions(notes, "no plateau for L2")) << ::testing::PrintToString(notes);
  EXPECT_TRUE(mentions(notes, "no plateau for L3"));
  EXPECT_TRUE(mentions(notes, "the L1 plateau ends at 128 KiB, the OS reports 32 KiB"));
  // The last plateau starts at 256 KiB, below L3: a named cache, not DRAM.
  EXPECT_NE(levels[1].level, "DRAM");
}

TEST(MemoryLevels, AFlatOrEmptySweepHasNoLevelsToTellApart) {
  std::vector<std::string> notes;
  EXPECT_TRUE(find_memory_levels({}, kCaches, 1, notes).empty());
  const auto flat = find_memory_levels(sweep(1, {{4 * K, 30}, {1 * M, 31}, {256 * M, 29}}), {}, 1, notes);
  ASSERT_EQ(flat.size(), 1u);
  EXPECT_NEAR(flat[0].bytes_per_second, 30e9, 1e-9 * 30e9);
}

// Published dense peaks (NVIDIA datasheets and whitepapers, no sparsity) at
// the boost clock a cudaDeviceProp reports, SM counts from the same documents.
TEST(CudaMachineRoofs, ThePerArchitectureTableGivesThePublishedPeaks) {
  auto rate = [](int major, int minor, int sms, double ghz, const std::string& dtype) {
    for (const auto& r : cuda_machine_roofs(major, minor, sms, ghz * 1e9))
      if (r.dtype == dtype) return r.flops_per_second;
    return 0.0;
  };
  // A100 SXM: 108 SMs, 1.41 GHz: FP32 19.5, TF32 156, FP16/BF16 312, INT8 624 T.
  EXPECT_NEAR(rate(8, 0, 108, 1.41, "fp32"), 19.5e12, 0.01 * 19.5e12);
  EXPECT_NEAR(rate(8, 0, 108, 1.41, "tf32"), 156e12, 0.01 * 156e12);
  EXPECT_NEAR(rate(8, 0, 108, 1.41, "fp16"), 312e12, 0.01 * 312e12);
  EXPECT_NEAR(rate(8, 0, 108, 1.41, "bf16"), 312e12, 0.01 * 312e12);
  EXPECT_NEAR(rate(8, 0, 108, 1.41, "int8"), 624e12, 0.01 * 624e12);
  // H100 PCIe: 114 SMs, 1.62 GHz tensor boost: FP16 756, TF32 378, INT8 1513 T.
  EXPECT_NEAR(rate(9, 0, 114, 1.62, "fp16"), 756e12, 0.01 * 756e12);
  EXPECT_NEAR(rate(9, 0, 114, 1.62, "tf32"), 378e12, 0.01 * 378e12);
  EXPECT_NEAR(rate(9, 0, 114, 1.62, "int8"), 1513e12, 0.01 * 1513e12);
  // H100 SXM: 132 SMs at 1.98 GHz: FP32 66.9 T.
  EXPECT_NEAR(rate(9, 0, 132, 1.98, "fp32"), 66.9e12, 0.01 * 66.9e12);
  // L4 (Ada): 58 SMs, 2.04 GHz: FP32 30.3, FP16 121, TF32 60 T.
  EXPECT_NEAR(rate(8, 9, 58, 2.04, "fp32"), 30.3e12, 0.01 * 30.3e12);
  EXPECT_NEAR(rate(8, 9, 58, 2.04, "fp16"), 121e12, 0.01 * 121e12);
  EXPECT_NEAR(rate(8, 9, 58, 2.04, "tf32"), 60e12, 0.02 * 60e12);
  // A10 (GA102): 72 SMs, 1.695 GHz: FP32 31.2, FP16 125 T.
  EXPECT_NEAR(rate(8, 6, 72, 1.695, "fp32"), 31.2e12, 0.01 * 31.2e12);
  EXPECT_NEAR(rate(8, 6, 72, 1.695, "fp16"), 125e12, 0.01 * 125e12);
  // V100 SXM2: 80 SMs, 1.53 GHz: FP32 15.7, FP16 125 T; no TF32 or BF16 units.
  EXPECT_NEAR(rate(7, 0, 80, 1.53, "fp32"), 15.7e12, 0.01 * 15.7e12);
  EXPECT_NEAR(rate(7, 0, 80, 1.53, "fp16"), 125e12, 0.01 * 125e12);
  EXPECT_EQ(rate(7, 0, 80, 1.53, "tf32"), 0.0);
  EXPECT_EQ(rate(7, 0, 80, 1.53, "bf16"), 0.0);
  // T4 (Turing): 40 SMs, 1.59 GHz: FP32 8.1, FP16 65, INT8 130 T.
  EXPECT_NEAR(rate(7, 5, 40, 1.59, "fp32"), 8.1e12, 0.01 * 8.1e12);
  EXPECT_NEAR(rate(7, 5, 40, 1.59, "fp16"), 65e12, 0.01 * 65e12);
  EXPECT_NEAR(rate(7, 5, 40, 1.59, "int8"), 130e12, 0.01 * 130e12);
}

TEST(CudaMachineRoofs, UnknownArchitecturesAndBadPropertiesClaimNothing) {
  EXPECT_TRUE(cuda_machine_roofs(12, 0, 170, 2.5e9).empty());  // not in the table: no guess
  EXPECT_TRUE(cuda_machine_roofs(8, 0, 0, 1.41e9).empty());
  EXPECT_TRUE(cuda_machine_roofs(8, 0, 108, 0).empty());
  for (const auto& r : cuda_machine_roofs(8, 0, 108, 1.41e9)) {
    EXPECT_FALSE(r.measured);
    EXPECT_EQ(r.threads, 0);
    EXPECT_NE(r.kernel.find("theoretical"), std::string::npos);
  }
}

DeviceCeilings roofs_ceilings() {
  DeviceCeilings c;
  c.device_kind = "cpu";
  c.source = "measured";
  c.memory_bandwidth = 1e10;
  c.matmul = {MatmulCeiling{"fp32", 8e10, 512, {{64, 4e10}, {512, 8e10}}}};
  c.compute_roofs = {{"fp32", "avx2", 1, 1e11, true},
                     {"fp32", "avx512", 1, 2e11, true},
                     {"fp32", "avx512", 4, 7e11, true},
                     {"bf16", "avx512_bf16", 1, 4e11, true}};
  c.memory_levels = {{"L1", 1, 32 * K, 36 * K, 4 * K, 16 * K, 2e11},
                     {"DRAM", 1, 0, 0, 64 * M, 256 * M, 2e10},
                     {"L1", 4, 128 * K, 140 * K, 16 * K, 64 * K, 8e11},
                     {"DRAM", 4, 0, 0, 64 * M, 256 * M, 3e10}};
  c.bandwidth_sweep = {{1, 4 * K, 2e11}, {1, 256 * M, 2e10}};
  return c;
}

TEST(MachineRoofs, TheFastestKernelAtTheNearestThreadCount) {
  const DeviceCeilings c = roofs_ceilings();
  ASSERT_NE(c.machine_roof("fp32", 1), nullptr);
  EXPECT_EQ(c.machine_roof("fp32", 1)->flops_per_second, 2e11);  // avx512 beats avx2
  EXPECT_EQ(c.machine_roof("fp32", 4)->flops_per_second, 7e11);
  EXPECT_EQ(c.machine_roof("fp32", 16)->flops_per_second, 7e11);  // nearest measured: 4
  EXPECT_EQ(c.machine_roof("fp32", 2)->flops_per_second, 2e11);   // 1 is nearer to 2 than 4 is
  EXPECT_EQ(c.machine_roof("bf16", 4)->flops_per_second, 4e11);   // only 1 thread measured
  EXPECT_EQ(c.machine_roof("int8", 1), nullptr);
  ASSERT_EQ(c.memory_levels_for(3).size(), 2u);
  EXPECT_EQ(c.memory_levels_for(3)[0].bytes_per_second, 8e11);
  EXPECT_EQ(c.memory_levels_for(1)[1].level, "DRAM");
  EXPECT_TRUE(DeviceCeilings{}.memory_levels_for(1).empty());
}

TEST(MachineRoofs, Schema2RoundTripsItsRoofs) {
  const DeviceCeilings c = roofs_ceilings();
  const std::string text = ceilings_to_json(c);
  EXPECT_NE(text.find("\"schema_version\": \"2.12\""), std::string::npos);
  const DeviceCeilings back = ceilings_from_json(text);
  ASSERT_EQ(back.compute_roofs.size(), 4u);
  EXPECT_EQ(back.compute_roofs[1].kernel, "avx512");
  EXPECT_EQ(back.compute_roofs[2].threads, 4);
  EXPECT_DOUBLE_EQ(back.compute_roofs[3].flops_per_second, 4e11);
  EXPECT_TRUE(back.compute_roofs[0].measured);
  ASSERT_EQ(back.memory_levels.size(), 4u);
  EXPECT_EQ(back.memory_levels[2].capacity_bytes, 128 * K);
  EXPECT_EQ(back.memory_levels[2].measured_edge_bytes, 140 * K);
  EXPECT_EQ(back.memory_levels[2].plateau_to_bytes, 64 * K);
  EXPECT_DOUBLE_EQ(back.memory_levels[3].bytes_per_second, 3e10);
  ASSERT_EQ(back.bandwidth_sweep.size(), 2u);
  EXPECT_EQ(back.bandwidth_sweep[1].working_set_bytes, 256 * M);
}

DeviceCeilings roofs_ceilings();

// Schema 2.1: a level's roof is the faster of its read-only stream and its
// in-place update (read + written), each the median over the plateau's points.
// L2 here: read 100, 98, 102, 100 (median 100); update 150, 160, 0 (not
// measured at that point), 155 -> median of 150, 160, 155 = 155 > 100.
// L1: read 200, 205, 195 (median 200) beats update 180, 190, 185 (185).
TEST(MemoryLevels, ALevelsRoofIsTheFasterOfItsReadAndReadWriteStreams) {
  auto points = sweep(1, {{4 * K, 200}, {8 * K, 205}, {16 * K, 195}, {32 * K, 150}, {64 * K, 100}, {128 * K, 98},
                          {256 * K, 102}, {512 * K, 100}, {1 * M, 70}, {2 * M, 50}, {4 * M, 52}, {8 * M, 49}});
  const double update_gb[] = {180, 190, 185, 0, 150, 160, 0, 155, 0, 0, 0, 0};
  for (size_t i = 0; i < points.size(); ++i) points[i].read_write_bytes_per_second = update_gb[i] * 1e9;
  std::vector<std::string> notes;
  const auto levels = find_memory_levels(points, kCaches, 1, notes);
  ASSERT_GE(levels.size(), 3u);
  EXPECT_EQ(levels[0].level, "L1");
  EXPECT_NEAR(levels[0].read_bytes_per_second, 200e9, 1e-9 * 200e9);
  EXPECT_NEAR(levels[0].read_write_bytes_per_second, 185e9, 1e-9 * 185e9);
  EXPECT_NEAR(levels[0].bytes_per_second, 200e9, 1e-9 * 200e9);
  EXPECT_EQ(levels[1].level, "L2");
  EXPECT_NEAR(levels[1].read_bytes_per_second, 100e9, 1e-9 * 100e9);
  EXPECT_NEAR(levels[1].read_write_bytes_per_second, 155e9, 1e-9 * 155e9);
  EXPECT_NEAR(levels[1].bytes_per_second, 155e9, 1e-9 * 155e9);
  // No update measured on the last plateau: its roof is the read rate.
  EXPECT_EQ(levels.back().read_write_bytes_per_second, 0.0);
  EXPECT_NEAR(levels.back().bytes_per_second, levels.back().read_bytes_per_second, 1.0);

  DeviceCeilings c = roofs_ceilings();
  c.memory_levels = levels;
  c.bandwidth_sweep = points;
  const DeviceCeilings back = ceilings_from_json(ceilings_to_json(c));
  ASSERT_EQ(back.memory_levels.size(), levels.size());
  EXPECT_DOUBLE_EQ(back.memory_levels[1].read_write_bytes_per_second, 155e9);
  EXPECT_DOUBLE_EQ(back.memory_levels[1].read_bytes_per_second, levels[1].read_bytes_per_second);
  EXPECT_DOUBLE_EQ(back.bandwidth_sweep[4].read_write_bytes_per_second, 150e9);
}

// A 2.0 level (before the read + write rate) loads with its roof as its read rate.
TEST(MachineRoofs, ASchema20LevelKeepsItsReadRateAsTheRoof) {
  using Json = nlohmann::json;
  std::string text = ceilings_to_json(roofs_ceilings());
  Json doc = Json::parse(text);
  doc["schema_version"] = "2.0";
  for (auto& l : doc["memory_levels"]) {
    l.erase("read_bytes_per_second");
    l.erase("read_write_bytes_per_second");
  }
  for (auto& p : doc["bandwidth_sweep"]) p.erase("read_write_bytes_per_second");
  const DeviceCeilings back = ceilings_from_json(doc.dump(), "old.json");
  ASSERT_EQ(back.memory_levels.size(), 4u);
  EXPECT_DOUBLE_EQ(back.memory_levels[3].bytes_per_second, 3e10);
  EXPECT_DOUBLE_EQ(back.memory_levels[3].read_bytes_per_second, 3e10);
  EXPECT_EQ(back.memory_levels[3].read_write_bytes_per_second, 0.0);
  EXPECT_EQ(back.bandwidth_sweep[1].read_write_bytes_per_second, 0.0);
}

// A file written by modelstat before the machine roofs (schema 1.3, as the
// docs' example): it loads, with no roofs, and reports fall back to the matmul.
TEST(MachineRoofs, AnOldSchema1FileStillLoads) {
  const std::string old_file = R"json({
  "schema_version": "1.3", "device_kind": "cpu", "device_name": "AMD EPYC (2 hardware threads)",
  "threads": 1, "source": "measured", "date": "2026-11-21T16:29:25Z", "host": "vm", "torch_version": "1.13.0",
  "memory_bandwidth_bytes_per_second": 9520000000.0, "copy_bytes": 671088640, "op_overhead_seconds": 1.53e-06,
  "node_overhead_seconds": 1.06e-06, "train_node_overhead_seconds": 5.84e-06,
  "fresh_allocation_threshold_bytes": 33554432, "fresh_allocation_seconds_per_byte": 5.0e-10,
  "matmul": [{"dtype": "fp32", "flops_per_second": 63800000000.0, "best_size": 384,
              "curve": [{"n": 64, "flops_per_second": 43600000000.0}, {"n": 384, "flops_per_second": 63800000000.0}]}],
  "op_costs": [], "optimizer_costs": [], "notes": ["timer: std::chrono::steady_clock"]})json";
  const DeviceCeilings c = ceilings_from_json(old_file, "old.json");
  EXPECT_TRUE(c.compute_roofs.empty());
  EXPECT_TRUE(c.memory_levels.empty());
  EXPECT_EQ(c.machine_roof("fp32", 1), nullptr);
  EXPECT_DOUBLE_EQ(c.peak_flops("fp32"), 63.8e9);
  EXPECT_DOUBLE_EQ(c.memory_bandwidth, 9.52e9);
}

TEST(MachineRoofs, BadRoofFieldsAndAnUnknownMajorVersionAreRefused) {
  std::string text = ceilings_to_json(roofs_ceilings());
  auto kind = [](const std::string& t) {
    try {
      ceilings_from_json(t, "c.json");
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::Runtime;  // not refused
  };
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  EXPECT_EQ(kind(replaced("\"schema_version\": \"2.12\"", "\"schema_version\": \"3.0\"")), ErrorKind::Input);
  EXPECT_EQ(kind(replaced("\"flops_per_second\": 100000000000.0", "\"flops_per_second\": -1")), ErrorKind::Input);
  EXPECT_EQ(kind(replaced("\"measured\": true", "\"measured\": \"yes\"")), ErrorKind::Input);
  EXPECT_EQ(kind(replaced("\"bytes_per_second\": 200000000000.0", "\"bytes_per_second\": 0")), ErrorKind::Input);
}

}  // namespace
}  // namespace modelstat

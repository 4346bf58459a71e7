// `modelstat device` and the probe behind it (profiler/ceilings_probe.cc) on
// the CPU: the figures are there, positive and consistent with each other,
// and the command prints, round-trips and saves them. No timing thresholds:
// the numbers themselves are measured in bench/ and reported, not asserted.
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "modelstat/ceilings.hpp"
#include "modelstat/error.hpp"
#include "profiler/ceilings_plan.hpp"
#include "profiler/ceilings_probe.hpp"
#include "profiler/ceilings_timing.hpp"
#include "profiler/conv_probe.hpp"
#include "profiler/run_context.hpp"
#include "profiler/op_cost_probe.hpp"
#include "profiler/ops/fp32_conv.hpp"
#include "profiler/ops/fp32_matmul.hpp"
#include "profiler/ops/int8_kernels.hpp"
#include "test_support.hpp"

namespace modelstat {
namespace {

using profiler::CeilingsPlan;
using profiler::CeilingsProbeOptions;
using test::contains;

constexpr int64_t kMiB = int64_t(1) << 20;

// One quick probe for all the in-process tests (some 15 s of CPU time on two
// cores). ctest runs each test in a process of its own, so the first test of a
// ctest run to need it measures, under a lock, and leaves the result (as the
// JSON that round-trips it exactly, CeilingsProbe.ProbeResultRoundTripsThroughJson)
// in a file named for the parent process, the ctest run; the others read it
// back. Run by hand, the binary's tests share it the same way.
const DeviceCeilings& quick_cpu_probe() {
  static const DeviceCeilings c = [] {
    const std::string file = testing::TempDir() + "/modelstat_quick_probe." + std::to_string(getppid()) + ".json";
    const int lock = open((file + ".lock").c_str(), O_CREAT | O_RDWR, 0644);
    if (lock >= 0) flock(lock, LOCK_EX);
    DeviceCeilings measured;
    // A file left by an earlier run whose pid came round again counts only when newer than this binary.
    std::error_code ec;
    const bool fresh = std::filesystem::exists(file, ec) &&
                       std::filesystem::last_write_time(file, ec) > std::filesystem::last_write_time("/proc/self/exe", ec);
    if (std::ifstream in(file); fresh && in.good()) {
      std::stringstream text;
      text << in.rdbuf();
      measured = ceilings_from_json(text.str(), file);
    } else {
      CeilingsProbeOptions o;
      o.device = "cpu";
      o.threads = 1;
      o.quick = true;
      measured = profiler::measure_ceilings(o);
      std::ofstream(file + ".tmp") << ceilings_to_json(measured);
      std::rename((file + ".tmp").c_str(), file.c_str());
    }
    if (lock >= 0) close(lock);  // releases the lock
    return measured;
  }();
  return c;
}

TEST(CeilingsProbe, QuickCpuProbeGivesPositiveFiguresAndItsContext) {
  const DeviceCeilings& c = quick_cpu_probe();
  EXPECT_EQ(c.device_kind, "cpu");
  EXPECT_EQ(c.source, "measured");
  EXPECT_TRUE(c.measured());
  EXPECT_EQ(c.threads, 1);
  EXPECT_FALSE(c.device_name.empty());
  EXPECT_FALSE(c.torch_version.empty());
  EXPECT_FALSE(c.date.empty());
  EXPECT_FALSE(c.host.empty());
  EXPECT_GT(c.memory_bandwidth, 0.0);
  EXPECT_GE(c.copy_bytes, 16 * kMiB);
  EXPECT_GT(c.op_overhead_seconds, 0.0);
  // The CPU measures fp32, and the int8 kernel's curve where the build has it (QDQ groups, docs/FIT.md).
  ASSERT_EQ(c.matmul.size(), profiler::int8_kernels_available() ? 2u : 1u);
  EXPECT_EQ(c.matmul[0].dtype, "fp32");
  if (c.matmul.size() == 2) {
    EXPECT_EQ(c.matmul[1].dtype, "int8");
    EXPECT_GT(c.peak_flops("int8"), 0.0);
  }
  EXPECT_GT(c.peak_flops("fp32"), 0.0);
  // How many int8 products a full-range weight takes on this CPU: the int8 kernels' own answer.
  if (profiler::int8_kernels_available())
    EXPECT_EQ(c.int8_weight_products, profiler::int8_kernels_exact_for_any_weights() ? 1 : 2);
  else
    EXPECT_EQ(c.int8_weight_products, 0);
  bool says_quick = false;
  for (const auto& n : c.notes) says_quick = says_quick || contains(n, "quick");
  EXPECT_TRUE(says_quick) << "a quick probe is labelled as one";
}

TEST(CeilingsProbe, EveryOpClassAndOptimizerIsMeasuredThroughTheExecutor) {
  const DeviceCeilings& c = quick_cpu_probe();
  const std::vector<std::string> classes = profiler::op_cost_classes();
  ASSERT_EQ(c.op_costs.size(), classes.size()) << "a class that failed says why in notes";
  for (size_t i = 0; i < classes.size(); ++i) {
    const OpCost& o = c.op_costs[i];
    EXPECT_EQ(o.op, classes[i]);
    // Sizes come from the analyzer's bytes of the probe node: the large one is larger.
    EXPECT_GT(o.small_bytes, 0) << o.op;
    EXPECT_GT(o.large_bytes, 100 * o.small_bytes) << o.op;
    // Every node costs something to run.
    EXPECT_GT(o.forward_seconds(double(o.small_bytes)), 0.0) << o.op;
    EXPECT_GT(o.forward_seconds(double(o.large_bytes)), 0.0) << o.op;
    for (double v : {o.fixed_seconds, o.seconds_per_byte, o.backward_fixed_seconds, o.backward_seconds_per_byte,
                     o.backward_ratio})
      EXPECT_TRUE(std::isfinite(v) && v >= 0) << o.op;
  }
  // Every optimizer's update, per tensor and per element.
  ASSERT_EQ(c.optimizer_costs.size(), 3u);
  for (const char* name : {"sgd", "momentum", "adam"}) {
    const OptimizerUpdateCost* o = c.optimizer_cost(name);
    ASSERT_NE(o, nullptr) << name;
    EXPECT_GT(o->per_tensor_seconds + o->seconds_per_element, 0.0) << name;
  }
  // (No timing is compared here: these machines are noisy; bench/ and docs/FIT.md hold the figures.)
  ASSERT_NE(c.op_cost("Conv"), nullptr);
  EXPECT_GT(c.op_cost("Conv")->backward_ratio, 0.0);
  // The one-row product's large instance streams a weight past the caches (128 MiB).
  ASSERT_NE(c.op_cost("Gemm/thin"), nullptr);
  EXPECT_GT(c.op_cost("Gemm/thin")->large_bytes, int64_t(128) << 20);
  // Fresh mappings: none, since modelstat keeps every block on glibc's heap
  // (MODELSTAT_GLIBC_MALLOC=mmap would make it 32 MiB), and a cost that is a number.
  EXPECT_EQ(c.fresh_allocation_threshold_bytes, 0);
  EXPECT_TRUE(std::isfinite(c.fresh_allocation_seconds_per_byte) && c.fresh_allocation_seconds_per_byte >= 0);
}

TEST(CeilingsProbe, ConvSamplesReachThreeByThreeConvsReading512Channels) {
  // A 3x3 conv reading 512 channels (a reduction of 4608) runs slower than the
  // 256-channel samples say once its weight passes the L2 cache: the grid
  // samples it at both strides, even in the quick probe.
  const DeviceCeilings& c = quick_cpu_probe();
  for (const char* kind : {"kxk", "kxk/s2"}) {
    bool wide = false;
    for (const ConvSample& s : c.conv_samples)
      if (s.kind == kind && s.k == 512 * 9) {
        wide = true;
        EXPECT_GT(s.flops_per_second, 0.0) << kind;
      }
    EXPECT_TRUE(wide) << kind << ": no sample reads 512 channels";
  }
}

TEST(CeilingsProbe, ConvSamplesReachPointwiseConvsOverOnePosition) {
  // A squeeze-excite block's 1x1 convs run over one position (M = 1): the
  // grid samples 1x1 convs there, even in the quick probe, and only 1x1 ones
  // (a 3x3 over one position is a 1x1 with zero padding).
  const DeviceCeilings& c = quick_cpu_probe();
  int one_position = 0;
  for (const ConvSample& s : c.conv_samples) {
    if (s.m != 1) continue;
    EXPECT_EQ(s.kind, "1x1");
    EXPECT_GT(s.flops_per_second, 0.0);
    ++one_position;
  }
  EXPECT_GE(one_position, 4) << "input and output channels 16 and 256";
}

TEST(CeilingsProbe, ConvSamplesWriteWholeChannelBlocks) {
  // fit prices a conv at its output channels rounded up to the kernels'
  // block (oneDNN's fp32 lanes: 4, 8 or 16 on x86) at the samples' rate
  // there: every sample writes whole blocks, so a rounded query lands among
  // samples of the same kind of kernel, not between a padded and an unpadded one.
  const DeviceCeilings& c = quick_cpu_probe();
  if (!modelstat::profiler::fp32_conv_kernels_available()) {
    EXPECT_EQ(c.conv_channel_block, 0) << "ATen's own convolution: no block known";
    return;
  }
  EXPECT_TRUE(c.conv_channel_block == 4 || c.conv_channel_block == 8 || c.conv_channel_block == 16)
      << c.conv_channel_block;
  ASSERT_FALSE(c.conv_samples.empty());
  for (const ConvSample& s : c.conv_samples)
    EXPECT_EQ(s.n % std::max<int64_t>(1, c.conv_channel_block), 0) << s.kind << " N " << s.n;
}

TEST(CeilingsProbe, CheapConvSamplesAreTimedWithTheirWeightsCachedToo) {
  // A point whose weight and output are small runs as many copies as it takes
  // to pass 64 MiB (up to 512, while the copies stay under 2e8 FLOPs): its
  // weights come from memory. Where that is more than 8 copies, the probe
  // also times 8 (the caches hold them) and saves that rate as the hot one;
  // other points have none. The rule, from the sample's M, N, K: one copy is
  // 4 (N K + N M) bytes and 2 M N K FLOPs.
  const DeviceCeilings& c = quick_cpu_probe();
  if (!modelstat::profiler::fp32_conv_kernels_available()) return;
  ASSERT_FALSE(c.conv_samples.empty());
  int cheap = 0;
  for (const ConvSample& s : c.conv_samples) {
    // The int8 and product samples' copies follow their own rules (below).
    if (s.kind.rfind("int8 ", 0) == 0 || s.kind == "matmul") continue;
    const double per_copy = 4.0 * double(s.n * s.k + s.n * s.m), flops = 2.0 * double(s.m * s.n * s.k);
    const double copies = std::min({(64.0 * (1 << 20)) / per_copy, 8e9 / flops, std::clamp(2e8 / flops, 8.0, 512.0)});
    if (std::floor(copies) > 8) {
      ++cheap;
      EXPECT_GT(s.hot_flops_per_second, 0.0) << s.kind << " " << s.m << " " << s.n << " " << s.k;
    } else {
      EXPECT_EQ(s.hot_flops_per_second, 0.0) << s.kind << " " << s.m << " " << s.n << " " << s.k;
    }
  }
  EXPECT_GT(cheap, 0) << "the quick grid's one-position 1x1 points are cheap";
}

TEST(CeilingsProbe, Int8ConvSamplesCoverEveryKindOfTheInt8Convolution) {
  // With oneDNN's int8 kernels, the probe times the executor's int8
  // convolution in each kind fit prices an int8 Conv by (dense 1x1, 3x3,
  // depthwise 3x3; stride 1), none held by the caches (one rate per sample);
  // without them, none at all.
  const DeviceCeilings& c = quick_cpu_probe();
  std::map<std::string, int> per_kind;
  for (const ConvSample& s : c.conv_samples) {
    if (s.kind.rfind("int8 ", 0) != 0) continue;
    ++per_kind[s.kind];
    EXPECT_GT(s.flops_per_second, 0.0) << s.kind;
    EXPECT_EQ(s.hot_flops_per_second, 0.0) << s.kind;
    if (s.kind == "int8 dw") {
      EXPECT_EQ(s.k, 9) << s.kind;
    }
  }
  if (!profiler::int8_kernels_available()) {
    EXPECT_TRUE(per_kind.empty());
    return;
  }
  for (const char* kind : {"int8 1x1", "int8 kxk", "int8 dw"}) EXPECT_GT(per_kind[kind], 0) << kind;
}

TEST(CeilingsProbe, ProductSamplesTimeTheExecutorsMatMulOverRowsAndWidths) {
  // The probe times the executor's fp32 MatMul group against a constant
  // weight (kind "matmul") on the CPU: more than one row count and width,
  // none under 8 rows (fewer run on the direct row loop or stream the weight),
  // no product above the quick grid's 1 GFLOP, one rate per sample.
  const DeviceCeilings& c = quick_cpu_probe();
  std::set<int64_t> rows, widths;
  for (const ConvSample& s : c.conv_samples) {
    if (s.kind != "matmul") continue;
    rows.insert(s.m);
    widths.insert(s.n);
    EXPECT_GE(s.m, 8);
    EXPECT_LE(2.0 * double(s.m) * double(s.n) * double(s.k), 1e9);
    EXPECT_GT(s.flops_per_second, 0.0);
    EXPECT_EQ(s.hot_flops_per_second, 0.0);
  }
  EXPECT_GE(rows.size(), 2u);
  EXPECT_GE(widths.size(), 2u);
}

TEST(CeilingsProbe, TheInt8SamplesTwoPassesMeetAtTheirGeometricMean) {
  // Matched by kind and M, N, K: sqrt(2e9 * 8e9) = 4e9, sqrt(50e9 * 50e9) =
  // 50e9; a point of another kind at the same M, N, K, or a point only the
  // second pass has, changes nothing, and a point the second pass lacks
  // keeps its rate.
  std::vector<ConvSample> first = {{"int8 1x1", 784, 16, 16, 2e9},
                                   {"int8 kxk", 784, 64, 576, 50e9},
                                   {"int8 dw", 49, 32, 9, 1e9}};
  profiler::merge_sample_passes(first, {{"int8 1x1", 784, 16, 16, 8e9},
                                        {"int8 kxk", 784, 64, 576, 50e9},
                                        {"int8 dw", 784, 16, 16, 9e9},
                                        {"int8 1x1", 49, 16, 16, 1e9}});
  ASSERT_EQ(first.size(), 3u);
  EXPECT_DOUBLE_EQ(first[0].flops_per_second, 4e9);
  EXPECT_DOUBLE_EQ(first[1].flops_per_second, 50e9);
  EXPECT_DOUBLE_EQ(first[2].flops_per_second, 1e9);
}

TEST(CeilingsProbe, TrainingConvSamplesCoverEveryKindATrainingStepRuns) {
  // Each kind fit --train prices a Conv by: dense 1x1 (ATen's GEMM path),
  // 3x3 unstrided and strided, depthwise unstrided and strided; every sample
  // timed (both rates positive), its M, N, K those of a grid point: K a
  // multiple of the taps (9 for dense 3x3; 9 or 25 for depthwise, whose K is
  // its taps), M a square of an output side.
  const DeviceCeilings& c = quick_cpu_probe();
  std::map<std::string, int> per_kind;
  for (const TrainConvSample& s : c.train_conv_samples) {
    ++per_kind[s.kind];
    EXPECT_GT(s.forward_flops_per_second, 0.0) << s.kind;
    EXPECT_GT(s.backward_flops_per_second, 0.0) << s.kind;
    const auto side = int64_t(std::llround(std::sqrt(double(s.m))));
    EXPECT_EQ(side * side, s.m) << s.kind << " M " << s.m;
    if (s.kind == "kxk" || s.kind == "kxk/s2") {
      EXPECT_EQ(s.k % 9, 0) << s.kind << " K " << s.k;
    }
    if (s.kind == "dw" || s.kind == "dw/s2") {
      EXPECT_TRUE(s.k == 9 || s.k == 25) << s.kind << " K " << s.k;
    }
  }
  for (const char* kind : {"1x1", "kxk", "kxk/s2", "dw", "dw/s2"}) EXPECT_GT(per_kind[kind], 0) << kind;
}

TEST(CeilingsProbe, Int8CurveHasEverySizeOfTheFp32Curve) {
  // Three passes over the sizes, each size's fastest kept: still one point a size.
  const DeviceCeilings& c = quick_cpu_probe();
  const MatmulCeiling* fp32 = nullptr;
  const MatmulCeiling* int8 = nullptr;
  for (const MatmulCeiling& m : c.matmul) {
    if (m.dtype == "fp32") fp32 = &m;
    if (m.dtype == "int8") int8 = &m;
  }
  ASSERT_NE(fp32, nullptr);
  // Without oneDNN there is no int8 kernel, and no curve (its note says why).
  ASSERT_EQ(int8 != nullptr, profiler::int8_kernels_available());
  if (int8 == nullptr) return;
  ASSERT_EQ(int8->curve.size(), fp32->curve.size());
  for (size_t i = 0; i < int8->curve.size(); ++i) {
    EXPECT_EQ(int8->curve[i].n, fp32->curve[i].n);
    EXPECT_GT(int8->curve[i].flops_per_second, 0.0);
  }
}

TEST(CeilingsProbe, Fp32CurveSaysWhichKernelRanEachSize) {
  // The CPU's fp32 products are timed on ATen's mm and on the executor's Gemm / MatMul kernel, the
  // faster kept per size; a note says which, naming every size of the curve once.
  const DeviceCeilings& c = quick_cpu_probe();
  const MatmulCeiling* fp32 = nullptr;
  for (const MatmulCeiling& m : c.matmul)
    if (m.dtype == "fp32") fp32 = &m;
  ASSERT_NE(fp32, nullptr);
  const std::string prefix = "fp32 matmul curve, the faster of two kernels per size: the executor's at n = ";
  const std::string* note = nullptr;
  for (const std::string& n : c.notes)
    if (n.rfind(prefix, 0) == 0) note = &n;
  if (!profiler::fp32_matmul_kernels_available()) {  // no oneDNN in the build: ATen's mm alone, no note
    EXPECT_EQ(note, nullptr);
    return;
  }
  ASSERT_NE(note, nullptr);
  const std::string rest = note->substr(prefix.size());
  const std::string mm_label = "ATen's mm at n = ";
  ASSERT_NE(rest.find(mm_label), std::string::npos) << *note;
  std::vector<int64_t> listed;
  const std::string kernel_part = rest.substr(0, rest.find(';'));
  const std::string mm_part = rest.substr(rest.find(mm_label) + mm_label.size());
  for (const std::string& part : {kernel_part, mm_part}) {
    std::stringstream in(part);
    std::string item;
    while (std::getline(in, item, ','))
      if (item.find_first_of("0123456789") != std::string::npos) listed.push_back(std::stoll(item));
  }
  std::vector<int64_t> sizes;
  for (const auto& p : fp32->curve) sizes.push_back(p.n);
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(listed, sizes) << *note;
}

TEST(CeilingsProbe, CurveAscendsInNAndThePeakIsItsBestPoint) {
  const MatmulCeiling& m = quick_cpu_probe().matmul.at(0);
  ASSERT_GE(m.curve.size(), 2u);
  for (size_t i = 0; i < m.curve.size(); ++i) {
    EXPECT_GT(m.curve[i].flops_per_second, 0.0);
    if (i > 0) {
      EXPECT_GT(m.curve[i].n, m.curve[i - 1].n);
    }
  }
  const auto best = std::max_element(m.curve.begin(), m.curve.end(), [](const auto& a, const auto& b) {
    return a.flops_per_second < b.flops_per_second;
  });
  EXPECT_EQ(m.flops_per_second, best->flops_per_second);
  EXPECT_EQ(m.best_size, best->n);
}

TEST(CeilingsProbe, ProbeResultRoundTripsThroughJson) {
  const DeviceCeilings& c = quick_cpu_probe();
  const DeviceCeilings r = ceilings_from_json(ceilings_to_json(c));
  EXPECT_EQ(ceilings_to_json(r), ceilings_to_json(c));
}

TEST(CeilingsProbe, DtypeTheDeviceDoesNotHaveIsAUsageError) {
  CeilingsProbeOptions o;
  o.quick = true;
  o.dtypes = {"bf16"};
  try {
    profiler::measure_ceilings(o);
    ADD_FAILURE() << "bf16 was measured on the CPU";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_TRUE(contains(e.what(), "bf16")) << e.what();
  }
}

#ifndef MODELSTAT_TORCH_CUDA
TEST(CeilingsProbe, CudaInACpuOnlyBuildIsAUsageError) {
  CeilingsProbeOptions o;
  o.device = "cuda";
  o.quick = true;
  try {
    profiler::measure_ceilings(o);
    ADD_FAILURE() << "a CPU-only build measured CUDA";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
  }
}
#endif

// --threads must hold for matmuls too: Debian's LibTorch hands fp32 GEMM to
// OpenBLAS, whose own pool ignores at::set_num_threads unless told.
TEST(CeilingsProbe, ThreadCountReachesTheBlasPool) {
  const int before = at::get_num_threads();
  profiler::set_intra_op_threads(1);
  EXPECT_EQ(at::get_num_threads(), 1);
  if (profiler::openblas_threads() >= 0) {
    EXPECT_EQ(profiler::openblas_threads(), 1);
  }
  profiler::set_intra_op_threads(2);
  EXPECT_EQ(at::get_num_threads(), 2);
  if (profiler::openblas_threads() >= 0) {
    EXPECT_EQ(profiler::openblas_threads(), 2);
  }
  profiler::set_intra_op_threads(before);
}

// ------------------------------------------------------------ memory fitting

CeilingsPlan cuda_like_plan() {
  CeilingsPlan p;
  p.copy_bytes = 1024 * kMiB;
  p.matmul_sizes = {256, 1024, 4096, 6144, 8192};
  return p;
}

TEST(CeilingsPlanFit, EnoughMemoryKeepsThePlan) {
  CeilingsPlan p = cuda_like_plan();
  // Budget = half of 4 GiB = 2 GiB: the copy's 2 x 1 GiB fits exactly; 3 x 8192^2 x 4 B = 768 MiB fits.
  profiler::fit_plan_to_memory(p, 4096 * kMiB);
  EXPECT_EQ(p.copy_bytes, 1024 * kMiB);
  EXPECT_EQ(p.matmul_sizes, (std::vector<int64_t>{256, 1024, 4096, 6144, 8192}));
  EXPECT_TRUE(p.notes.empty());
}

TEST(CeilingsPlanFit, UnknownMemoryKeepsThePlan) {
  CeilingsPlan p = cuda_like_plan();
  profiler::fit_plan_to_memory(p, -1);
  EXPECT_EQ(p.copy_bytes, 1024 * kMiB);
  EXPECT_EQ(p.matmul_sizes.size(), 5u);
}

TEST(CeilingsPlanFit, ShortMemoryHalvesTheCopyAndDropsLargeSizes) {
  CeilingsPlan p = cuda_like_plan();
  // 1 GiB usable, budget 512 MiB: copy 1024 -> 512 (2 x 512 > 512) -> 256 MiB (2 x 256 = 512 fits).
  // Matmul: 3 x n^2 x 4 B <= 512 MiB  <=>  n <= 6688: 8192 (768 MiB) goes, 6144 (432 MiB) stays.
  profiler::fit_plan_to_memory(p, 1024 * kMiB);
  EXPECT_EQ(p.copy_bytes, 256 * kMiB);
  EXPECT_EQ(p.matmul_sizes, (std::vector<int64_t>{256, 1024, 4096, 6144}));
  ASSERT_EQ(p.notes.size(), 2u);
  EXPECT_TRUE(contains(p.notes[0], "1024 MiB")) << p.notes[0];
  EXPECT_TRUE(contains(p.notes[0], "256 MiB")) << p.notes[0];
  EXPECT_TRUE(contains(p.notes[1], "6144")) << p.notes[1];
}

TEST(CeilingsPlanFit, TinyMemoryKeepsAFloorAndOneSize) {
  CeilingsPlan p = cuda_like_plan();
  profiler::fit_plan_to_memory(p, 10 * kMiB);
  EXPECT_EQ(p.copy_bytes, 16 * kMiB);
  EXPECT_EQ(p.matmul_sizes, (std::vector<int64_t>{256}));  // 3 x 256^2 x 4 B = 768 KiB fits in 5 MiB
}

// A stage on schedule times every point on the plan as given; one behind its
// allotment (0 s: behind from the first point) stops each point at its
// minimum count and half its minimum times, and says how many.
TEST(StageSchedule, OnScheduleKeepsThePlanBehindStopsAtTheMinimums) {
  CeilingsPlan plan;
  plan.warmup.min_seconds = 0.04;
  plan.stopping.min_iterations = 5;
  plan.stopping.min_seconds = 0.08;
  plan.stopping.max_seconds = 1.0;
  plan.stopping.target_rel_ci = 0.03;
  profiler::StageSchedule roomy(1e6, 3);
  for (int i = 0; i < 3; ++i) {
    const CeilingsPlan p = roomy.next(plan);
    EXPECT_DOUBLE_EQ(p.stopping.target_rel_ci, 0.03);
    EXPECT_DOUBLE_EQ(p.stopping.min_seconds, 0.08);
    EXPECT_DOUBLE_EQ(p.warmup.min_seconds, 0.04);
  }
  EXPECT_EQ(roomy.note("conv samples"), "");
  profiler::StageSchedule late(0.0, 4);
  for (int i = 0; i < 4; ++i) {
    const CeilingsPlan p = late.next(plan);
    EXPECT_TRUE(std::isinf(p.stopping.target_rel_ci));  // any interval: stop at the minimums
    EXPECT_EQ(p.stopping.min_iterations, 5);
    EXPECT_DOUBLE_EQ(p.stopping.min_seconds, 0.04);
    EXPECT_DOUBLE_EQ(p.warmup.min_seconds, 0.02);
    EXPECT_DOUBLE_EQ(p.stopping.max_seconds, 1.0);
  }
  EXPECT_EQ(late.note("conv samples"),
            "conv samples: 4 of 4 points behind its 0 s schedule (timed to their minimum count and half their minimum "
            "time)");
}

// The full CPU plan puts its stages of many points on a schedule within its
// 300 s; --quick its two largest (op classes and conv samples) within its 60.
TEST(StageSchedule, FullCpuPlanHasAllotmentsQuickHasTwo) {
  const CeilingsPlan full = profiler::cpu_ceilings_plan(false);
  EXPECT_GT(full.allot.matmul, 0.0);
  EXPECT_GT(full.allot.op_classes, 0.0);
  EXPECT_GT(full.allot.conv_samples, 0.0);
  EXPECT_GT(full.allot.int8_conv_samples, 0.0);
  EXPECT_GT(full.allot.optimizers, 0.0);
  EXPECT_GT(full.allot.matmul_samples, 0.0);
  EXPECT_LT(full.allot.matmul + full.allot.op_classes + full.allot.conv_samples + full.allot.int8_conv_samples +
                full.allot.optimizers + full.allot.matmul_samples,
            300.0);
  const CeilingsPlan quick = profiler::cpu_ceilings_plan(true);
  EXPECT_GT(quick.allot.op_classes, 0.0);
  EXPECT_GT(quick.allot.conv_samples, 0.0);
  EXPECT_LT(quick.allot.op_classes + quick.allot.conv_samples, 60.0);
  EXPECT_EQ(quick.allot.matmul, 0.0);
  EXPECT_EQ(quick.allot.int8_conv_samples, 0.0);
  EXPECT_EQ(quick.allot.matmul_samples, 0.0);
}

// --------------------------------------------------------------- the command

std::string fresh_dir(const std::string& name) {
  static int counter = 0;
  const std::string dir =
      testing::TempDir() + "/" + name + "_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
  mkdir(dir.c_str(), 0755);
  return dir;
}

bool exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

using modelstat::test::read_file;

// Every CLI run sets MODELSTAT_CEILINGS_DIR (and HOME) to a temporary folder,
// so a test never writes into the user's cache.
std::string env_for(const std::string& dir) { return "MODELSTAT_CEILINGS_DIR=" + dir + " HOME=" + dir; }

TEST(CliDevice, JsonParsesRoundTripsAndIsSavedToTheDefaultPath) {
  const std::string dir = fresh_dir("cli_device_json");
  const auto r = test::run_modelstat_cli("device --quick --threads 1 -f json", env_for(dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const DeviceCeilings c = ceilings_from_json(r.out, "stdout");
  EXPECT_EQ(c.device_kind, "cpu");
  EXPECT_EQ(c.threads, 1);
  EXPECT_TRUE(c.measured());
  EXPECT_EQ(ceilings_to_json(c), r.out) << "the printed JSON is exactly what ceilings_to_json writes";
  const std::string saved = dir + "/ceilings-cpu.json";
  EXPECT_TRUE(contains(r.err, saved)) << r.err;
  ASSERT_TRUE(exists(saved));
  EXPECT_EQ(read_file(saved), r.out);
}

TEST(CliDevice, SaveWritesTheNamedFileAndTableGoesToOutput) {
  const std::string dir = fresh_dir("cli_device_save");
  const std::string file = dir + "/sub/mine.json";
  const std::string table = dir + "/table.txt";
  const auto r = test::run_modelstat_cli("device --quick --threads 1 --save " + file + " -o " + table, env_for(dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  ASSERT_TRUE(exists(file));
  EXPECT_FALSE(exists(dir + "/ceilings-cpu.json")) << "--save replaces the default location";
  EXPECT_TRUE(load_ceilings(file)->measured());
  const std::string text = read_file(table);
  EXPECT_TRUE(contains(text, "memory bandwidth")) << text;
  EXPECT_TRUE(contains(text, "Matmul peak")) << text;
  EXPECT_TRUE(contains(text, "Matmul curve")) << text;
  EXPECT_TRUE(contains(text, "op overhead")) << text;
  EXPECT_TRUE(contains(text, "probe took")) << text;
  EXPECT_TRUE(contains(text, "Saved to " + file)) << text;
}

TEST(CliDevice, NoSaveWritesNothing) {
  const std::string dir = fresh_dir("cli_device_nosave");
  const auto r = test::run_modelstat_cli("device --quick --threads 1 --no-save", env_for(dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "Matmul peak")) << r.out;
  EXPECT_FALSE(contains(r.out, "Saved to")) << r.out;
  EXPECT_FALSE(exists(dir + "/ceilings-cpu.json"));
}

TEST(CliDevice, BadUsageExitsTwoBeforeMeasuring) {
  const std::string dir = fresh_dir("cli_device_usage");
  for (const char* args : {"device --device tpu", "device --no-save --save x.json", "device -f csv",
                           "device --threads -1", "device --dtype bf16 --no-save"}) {
    const auto r = test::run_modelstat_cli(args, env_for(dir));
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << args << "\n" << r.out;
  }
}

TEST(CliDevice, HelpSaysWhatIsMeasuredAndWhereItIsUsed) {
  const auto r = test::run_modelstat_cli("device --help");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* word : {"bandwidth", "2n^3", "op overhead", "MODELSTAT_CEILINGS_DIR", "report", "fit", "--quick",
                           "--save", "--no-save"})
    EXPECT_TRUE(contains(r.out, word)) << word << "\n" << r.out;
}

}  // namespace
}  // namespace modelstat

// The host-memory estimate a profile run is refused on (profiler/host_memory.hpp):
// its parts from hand-set analysis totals, saturation instead of overflow,
// and the refusal text against what /proc/meminfo says is free.
#include "profiler/host_memory.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <limits>
#include <tuple>

namespace modelstat::profiler {
namespace {

// An analysis with these totals, bytes: {weights, peak activations, inputs, outputs, written}.
AnalysisResult totals(int64_t weights, int64_t peak, int64_t inputs, int64_t outputs, int64_t written = 0) {
  AnalysisResult a;
  AnalysisTotals& t = a.totals;
  std::tie(t.weight_bytes, t.peak_activation_bytes, t.input_bytes, t.output_bytes, t.bytes_written) =
      std::make_tuple(weights, peak, inputs, outputs, written);
  return a;
}

TEST(HostMemory, CpuRunHoldsWeightsPeakOtherInputSetsAndOutputs) {
  RunShape run;
  run.input_sets = 3;
  const HostMemoryEstimate e = estimate_host_memory(totals(100, 1000, 10, 5), run);
  EXPECT_EQ(e.weights, 100);
  EXPECT_EQ(e.activations, 1000);  // the peak counts one input set already
  EXPECT_EQ(e.inputs, 2 * 10);
  EXPECT_EQ(e.outputs, 5);
  EXPECT_EQ(e.training, 0);
  EXPECT_EQ(e.total(), 100 + 1000 + 20 + 5);
}

TEST(HostMemory, CudaRunHoldsOnlyTheHostInputSets) {
  RunShape run;
  run.on_cpu = false;
  run.input_sets = 2;
  const HostMemoryEstimate e = estimate_host_memory(totals(100, 1000, 10, 5), run);
  EXPECT_EQ(e.total(), 2 * 10);
}

TEST(HostMemory, TrainingAddsGradientsOptimizerStateAndSavedActivations) {
  RunShape run;
  run.optimizer_states = 2;  // adam
  const HostMemoryEstimate e = estimate_host_memory(totals(100, 1000, 10, 5, 700), run);
  EXPECT_EQ(e.training, 100 * (1 + 2) + 700);
}

TEST(HostMemory, SumsSaturateInsteadOfOverflowing) {
  RunShape run;
  run.input_sets = 64;
  const int64_t max = std::numeric_limits<int64_t>::max();
  const HostMemoryEstimate e = estimate_host_memory(totals(max, max, max / 2, 1), run);
  EXPECT_EQ(e.inputs, max);
  EXPECT_EQ(e.total(), max);
}

TEST(HostMemory, RefusalSaysWhatIsNeededAndWhatIsAvailable) {
  std::ifstream meminfo("/proc/meminfo");
  ASSERT_TRUE(meminfo.good()) << "Linux only";
  const auto available = available_host_memory();
  ASSERT_TRUE(available.has_value());
  EXPECT_GT(available->bytes, 0);
  HostMemoryEstimate small;
  small.weights = 1024;
  EXPECT_EQ(exceeds_host_memory(small), "");
  HostMemoryEstimate huge;
  huge.weights = int64_t(3) << 20;
  huge.activations = int64_t(1) << 62;
  const std::string refusal = exceeds_host_memory(huge);
  EXPECT_EQ(refusal.rfind("needs about ", 0), 0u) << refusal;
  EXPECT_NE(refusal.find("weights 3.0 MiB, activations 4294967296.00 GiB"), std::string::npos) << refusal;
  EXPECT_NE(refusal.find(" available (" + available->source + ")"), std::string::npos) << refusal;
}

}  // namespace
}  // namespace modelstat::profiler

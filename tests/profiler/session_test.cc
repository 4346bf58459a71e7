// The protocol's passes over one session (profiler/session.hpp): the model
// file is read once per profile, however many batch sizes it sweeps.
#include <gtest/gtest.h>

#include "modelstat/analysis.hpp"
#include "modelstat/fit.hpp"
#include "modelstat/profile.hpp"
#include "test_support.hpp"

namespace modelstat {
namespace {

const std::string kSamples = std::string(MODELSTAT_SOURCE_DIR) + "/sample_models/";

ProfileOptions quick() {
  return test::quick_profile_options(2, 0.2);
}

TEST(ProfileSession, BatchSweepAndMaxBatchReadTheModelFileOnce) {
  ProfileOptions o = quick();
  o.batch_sweep = {1, 2, 3};
  o.find_max_batch = true;
  o.max_batch_limit = 4;
  const int64_t before = model_files_read();
  LoadOptions load;
  load.dim_values["seq"] = 8;
  const ProfileResult r = profile_model(kSamples + "tiny_bert.onnx", load, o);
  EXPECT_EQ(model_files_read() - before, 1) << "one read; every batch size rebinds what was read";
  ASSERT_GE(r.batch_sweep.size(), 3u);
  for (const BatchPoint& p : r.batch_sweep) EXPECT_TRUE(p.fits) << p.batch;
  EXPECT_EQ(r.max_batch, 4);
}

// `report` prices fit's forecast from the profile's own analysis: the model
// the session bound is kept with it (AnalysisResult::model), so the forecast
// reads no file, and it is the forecast of the file analysed afresh.
TEST(ProfileSession, TheAnalysisKeepsTheModelItCounted) {
  LoadOptions load;
  load.dim_values["seq"] = 8;
  const int64_t before = model_files_read();
  const ProfileResult r = profile_model(kSamples + "tiny_bert.onnx", load, quick());
  ASSERT_NE(r.analysis.model, nullptr);
  FitOptions fit;
  fit.compute_dtype = "fp32";
  const DeviceCeilings ceilings = test::cpu_ceilings(20e9, 100e9);
  const FitReport kept = forecast_fit(r.analysis, ceilings, fit);
  EXPECT_EQ(model_files_read() - before, 1) << "profile and forecast together read the file once";
  const FitReport afresh = forecast_fit(analyze_file(kSamples + "tiny_bert.onnx", load), ceilings, fit);
  EXPECT_GT(kept.latency.total_seconds, 0);
  EXPECT_EQ(kept.latency.total_seconds, afresh.latency.total_seconds);
  EXPECT_EQ(kept.nodes.size(), afresh.nodes.size());
}

}  // namespace
}  // namespace modelstat

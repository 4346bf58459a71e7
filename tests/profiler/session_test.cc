// The protocol's passes over one session (profiler/session.hpp): the model
// file is read once per profile, however many batch sizes it sweeps.
#include <gtest/gtest.h>

#include "modelstat/analysis.hpp"
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

}  // namespace
}  // namespace modelstat

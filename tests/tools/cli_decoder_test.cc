// End-to-end `--context` on analyze and fit (tools/cli_common.hpp, the fit
// command) with the committed sample decoder, sample_models/tiny_gpt2_kv.onnx
// (its figures by hand: tests/analyzer/decoder_test.cc): the views in JSON,
// the per-token budget's verdict as the exit code, and the usage errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "test_support.hpp"

namespace modelstat::test {
namespace {

std::string decoder() { return std::string(MODELSTAT_SOURCE_DIR) + "/sample_models/tiny_gpt2_kv.onnx"; }

TEST(CliDecoder, AnalyzeContextWritesBothViews) {
  const CliResult r = run_modelstat_cli(decoder() + " --context 16 --prompt 8 -f json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["decoder"]["context"].get<int64_t>(), 16);
  EXPECT_EQ(doc["decoder"]["prefill"]["bindings"]["seq"].get<int64_t>(), 8);
  EXPECT_EQ(doc["decoder"]["decode"]["bindings"]["past"].get<int64_t>(), 15);
  // 1,024 bytes per token of context (2 layers * key + value * 4 heads * 16 * 4 bytes).
  EXPECT_EQ(doc["kv_cache"]["bytes_per_token"].get<int64_t>(), 1024);
}

TEST(CliDecoder, FitPerTokenBudgetDecidesTheExitCode) {
  // A datasheet device: an H100's bandwidth runs this toy's decode step far
  // under a second and far over a nanosecond.
  const std::string fit = "fit " + decoder() + " --context 16 --datasheet h100-sxm --latency-budget ";
  const CliResult meets = run_modelstat_cli(fit + "1s/token -f json");
  ASSERT_EQ(meets.exit_code, 0) << meets.err;
  const auto doc = nlohmann::json::parse(meets.out);
  EXPECT_GT(doc["decoder"]["decode_seconds"].get<double>(), 0.0);
  EXPECT_GT(doc["decoder"]["prefill_seconds"].get<double>(), doc["decoder"]["decode_seconds"].get<double>());
  EXPECT_EQ(doc["decoder"]["kv_cache_bytes"].get<int64_t>(), 16 * 1024);
  EXPECT_EQ(doc["decoder"]["meets_token_budget"], true);
  EXPECT_EQ(run_modelstat_cli(fit + "1ns/token").exit_code, 3);
}

TEST(CliDecoder, UsageErrors) {
  // No KV cache in tiny_gpt2; a per-token budget without --context; --prompt without --context.
  EXPECT_EQ(run_modelstat_cli(std::string(MODELSTAT_SOURCE_DIR) + "/sample_models/tiny_gpt2.onnx --context 16")
                .exit_code,
            2);
  EXPECT_EQ(run_modelstat_cli("fit " + decoder() + " --datasheet h100-sxm --latency-budget 1s/token").exit_code, 2);
  EXPECT_EQ(run_modelstat_cli(decoder() + " --prompt 4").exit_code, 2);
}

}  // namespace
}  // namespace modelstat::test

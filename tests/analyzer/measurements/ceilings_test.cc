// Device ceilings on plain data (analyzer/measurements/ceilings.cc, no LibTorch):
// the JSON round trip and its refusals, the interpolated matmul curve, the
// saved-file location and its environment precedence, the datasheet
// fallback, and the shape of `modelstat device`'s table.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>

#include "modelstat/ceilings.hpp"
#include "modelstat/error.hpp"
#include "test_support.hpp"
#include "tools/writers/ceilings_writer.hpp"

namespace modelstat {
namespace {

using test::contains;

// A full record with every field set to something distinct.
DeviceCeilings sample_ceilings() {
  DeviceCeilings c;
  c.device_kind = "cuda";
  c.device_name = "NVIDIA Test GPU (sm_90, 132 SMs, 81559 MiB)";
  c.threads = 0;
  c.source = "measured";
  c.date = "2025-01-02T03:04:05Z";
  c.host = "node-7";
  c.torch_version = "2.5.1";
  c.memory_bandwidth = 2.9e12;
  c.copy_bytes = int64_t(1) << 30;
  c.op_overhead_seconds = 4.5e-6;
  c.node_overhead_seconds = 5.25e-6;
  c.train_node_overhead_seconds = 2.5e-5;
  MatmulCeiling fp32;
  fp32.dtype = "fp32";
  fp32.flops_per_second = 5.1e13;
  fp32.best_size = 8192;
  fp32.curve = {{256, 1.5e12}, {1024, 3.0e13}, {8192, 5.1e13}};
  MatmulCeiling bf16;
  bf16.dtype = "bf16";
  bf16.flops_per_second = 7.0e14;
  bf16.best_size = 4096;
  bf16.curve = {{256, 2.0e12}, {4096, 7.0e14}, {8192, 6.5e14}};
  c.matmul = {fp32, bf16};
  OpCost erf;
  erf.op = "Erf";
  erf.probe = "1x8x4x4 and 1x64x112x112 float input";
  erf.small_bytes = 1024;
  erf.large_bytes = 6422528;
  erf.fixed_seconds = 1.5e-6;
  erf.seconds_per_byte = 6.0e-10;
  erf.backward_fixed_seconds = 7.0e-6;
  erf.backward_seconds_per_byte = 2.5e-10;
  erf.backward_ratio = 0.4;
  erf.train_forward_fixed_seconds = 3.5e-6;
  erf.train_forward_seconds_per_byte = 6.5e-10;
  erf.train_forward_ratio = 1.1;
  c.op_costs = {erf};
  OptimizerUpdateCost adam;
  adam.optimizer = "adam";
  adam.probe = "16 fp32 weights of 16 and 65536 elements";
  adam.per_tensor_seconds = 2.5e-5;
  adam.seconds_per_element = 1.5e-9;
  adam.tensor_elements = 65536;
  adam.streamed_seconds_per_element = 4.5e-9;
  adam.streamed_tensor_elements = 16777216;
  c.optimizer_costs = {adam};
  c.conv_samples = {{"1x1", 3136, 256, 64, 9.25e10}, {"kxk/s2", 49, 16, 27, 1.25e10}, {"dw/s2", 196, 128, 25, 4.5e9}};
  c.conv_samples[1].hot_flops_per_second = 3.5e10;  // schema 2.8
  c.train_conv_samples = {{"1x1", 49, 512, 128, 6.5e10, 2.75e10}, {"dw/s2", 784, 96, 9, 3.25e9, 7.5e8}};  // 2.9
  c.conv_residual_seconds_per_byte = 1.5e-10;
  c.conv_silu_seconds_per_byte = 2.5e-10;
  c.conv_layout_seconds_per_byte = 3.5e-10;
  c.conv_channel_block = 16;
  c.int8_weight_products = 2;  // schema 2.10
  c.fresh_allocation_threshold_bytes = 33554432;
  c.fresh_allocation_seconds_per_byte = 5.5e-10;
  c.notes = {"first note", "second note"};
  return c;
}

ErrorKind kind_of_parse_error(const std::string& text) {
  try {
    ceilings_from_json(text, "test.json");
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "accepted: " << text;
  return ErrorKind::Runtime;
}

// A valid minimal document as JSON, for the tests that break one field of it.
nlohmann::json minimal_document() {
  return nlohmann::json::parse(R"({
    "schema_version": "1.0", "device_kind": "cpu", "source": "measured",
    "memory_bandwidth_bytes_per_second": 1.5e10,
    "matmul": [{"dtype": "fp32", "flops_per_second": 8e10, "best_size": 512,
                "curve": [{"n": 512, "flops_per_second": 8e10}, {"n": 64, "flops_per_second": 2e10}]}]
  })");
}

TEST(Ceilings, JsonRoundTripKeepsEveryField) {
  const DeviceCeilings c = sample_ceilings();
  const DeviceCeilings r = ceilings_from_json(ceilings_to_json(c));
  EXPECT_EQ(r.device_kind, c.device_kind);
  EXPECT_EQ(r.device_name, c.device_name);
  EXPECT_EQ(r.threads, c.threads);
  EXPECT_EQ(r.source, c.source);
  EXPECT_EQ(r.date, c.date);
  EXPECT_EQ(r.host, c.host);
  EXPECT_EQ(r.torch_version, c.torch_version);
  EXPECT_DOUBLE_EQ(r.memory_bandwidth, c.memory_bandwidth);
  EXPECT_EQ(r.copy_bytes, c.copy_bytes);
  EXPECT_DOUBLE_EQ(r.op_overhead_seconds, c.op_overhead_seconds);
  EXPECT_DOUBLE_EQ(r.node_overhead_seconds, c.node_overhead_seconds);
  EXPECT_DOUBLE_EQ(r.train_node_overhead_seconds, c.train_node_overhead_seconds);
  EXPECT_EQ(r.fresh_allocation_threshold_bytes, 33554432);
  EXPECT_DOUBLE_EQ(r.fresh_allocation_seconds_per_byte, 5.5e-10);
  ASSERT_EQ(r.matmul.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(r.matmul[i].dtype, c.matmul[i].dtype);
    EXPECT_DOUBLE_EQ(r.matmul[i].flops_per_second, c.matmul[i].flops_per_second);
    EXPECT_EQ(r.matmul[i].best_size, c.matmul[i].best_size);
    ASSERT_EQ(r.matmul[i].curve.size(), c.matmul[i].curve.size());
    for (size_t k = 0; k < c.matmul[i].curve.size(); ++k) {
      EXPECT_EQ(r.matmul[i].curve[k].n, c.matmul[i].curve[k].n);
      EXPECT_DOUBLE_EQ(r.matmul[i].curve[k].flops_per_second, c.matmul[i].curve[k].flops_per_second);
    }
  }
  ASSERT_EQ(r.op_costs.size(), 1u);
  const OpCost& a = r.op_costs[0];
  const OpCost& b = c.op_costs[0];
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.probe, b.probe);
  EXPECT_EQ(a.small_bytes, b.small_bytes);
  EXPECT_EQ(a.large_bytes, b.large_bytes);
  EXPECT_DOUBLE_EQ(a.fixed_seconds, b.fixed_seconds);
  EXPECT_DOUBLE_EQ(a.seconds_per_byte, b.seconds_per_byte);
  EXPECT_DOUBLE_EQ(a.backward_fixed_seconds, b.backward_fixed_seconds);
  EXPECT_DOUBLE_EQ(a.backward_seconds_per_byte, b.backward_seconds_per_byte);
  EXPECT_DOUBLE_EQ(a.backward_ratio, b.backward_ratio);
  EXPECT_DOUBLE_EQ(a.train_forward_fixed_seconds, 3.5e-6);
  EXPECT_DOUBLE_EQ(a.train_forward_seconds_per_byte, 6.5e-10);
  EXPECT_DOUBLE_EQ(a.train_forward_ratio, 1.1);
  EXPECT_TRUE(a.has_train_forward());
  EXPECT_EQ(r.op_cost("Erf"), &r.op_costs[0]);
  EXPECT_EQ(r.op_cost("Tanh"), nullptr);
  ASSERT_EQ(r.optimizer_costs.size(), 1u);
  EXPECT_EQ(r.optimizer_costs[0].optimizer, "adam");
  EXPECT_EQ(r.optimizer_costs[0].probe, c.optimizer_costs[0].probe);
  EXPECT_DOUBLE_EQ(r.optimizer_costs[0].per_tensor_seconds, 2.5e-5);
  EXPECT_DOUBLE_EQ(r.optimizer_costs[0].seconds_per_element, 1.5e-9);
  EXPECT_EQ(r.optimizer_costs[0].tensor_elements, 65536);
  EXPECT_DOUBLE_EQ(r.optimizer_costs[0].streamed_seconds_per_element, 4.5e-9);
  EXPECT_EQ(r.optimizer_costs[0].streamed_tensor_elements, 16777216);
  EXPECT_EQ(r.optimizer_cost("adam"), &r.optimizer_costs[0]);
  EXPECT_EQ(r.optimizer_cost("sgd"), nullptr);
  ASSERT_EQ(r.conv_samples.size(), 3u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(r.conv_samples[i].kind, c.conv_samples[i].kind);
    EXPECT_EQ(r.conv_samples[i].m, c.conv_samples[i].m);
    EXPECT_EQ(r.conv_samples[i].n, c.conv_samples[i].n);
    EXPECT_EQ(r.conv_samples[i].k, c.conv_samples[i].k);
    EXPECT_DOUBLE_EQ(r.conv_samples[i].flops_per_second, c.conv_samples[i].flops_per_second);
    EXPECT_DOUBLE_EQ(r.conv_samples[i].hot_flops_per_second, c.conv_samples[i].hot_flops_per_second);
  }
  ASSERT_EQ(r.train_conv_samples.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(r.train_conv_samples[i].kind, c.train_conv_samples[i].kind);
    EXPECT_EQ(r.train_conv_samples[i].m, c.train_conv_samples[i].m);
    EXPECT_EQ(r.train_conv_samples[i].n, c.train_conv_samples[i].n);
    EXPECT_EQ(r.train_conv_samples[i].k, c.train_conv_samples[i].k);
    EXPECT_DOUBLE_EQ(r.train_conv_samples[i].forward_flops_per_second, c.train_conv_samples[i].forward_flops_per_second);
    EXPECT_DOUBLE_EQ(r.train_conv_samples[i].backward_flops_per_second,
                     c.train_conv_samples[i].backward_flops_per_second);
  }
  EXPECT_DOUBLE_EQ(r.conv_residual_seconds_per_byte, 1.5e-10);
  EXPECT_DOUBLE_EQ(r.conv_silu_seconds_per_byte, 2.5e-10);
  EXPECT_DOUBLE_EQ(r.conv_layout_seconds_per_byte, 3.5e-10);
  EXPECT_EQ(r.conv_channel_block, 16);
  EXPECT_EQ(r.int8_weight_products, 2);
  EXPECT_EQ(r.notes, c.notes);
  EXPECT_TRUE(r.measured());
  // Writing the read-back record gives the same text: nothing is lost or reordered.
  EXPECT_EQ(ceilings_to_json(r), ceilings_to_json(c));
}

TEST(Ceilings, JsonNamesItsFieldsAsDocumented) {
  const auto j = nlohmann::json::parse(ceilings_to_json(sample_ceilings()));
  for (const char* key : {"schema_version", "device_kind", "device_name", "threads", "source", "date", "host",
                          "torch_version", "memory_bandwidth_bytes_per_second", "copy_bytes", "op_overhead_seconds",
                          "node_overhead_seconds", "train_node_overhead_seconds", "fresh_allocation_threshold_bytes",
                          "fresh_allocation_seconds_per_byte", "matmul", "op_costs", "optimizer_costs", "conv_samples",
                          "train_conv_samples",
                          "conv_residual_seconds_per_byte", "conv_silu_seconds_per_byte",
                          "conv_layout_seconds_per_byte", "conv_channel_block", "int8_weight_products", "notes"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["schema_version"], kCeilingsSchemaVersion);
  EXPECT_EQ(j["matmul"][0]["curve"][1]["n"], 1024);
  for (const char* key : {"op", "probe", "small_bytes", "large_bytes", "fixed_seconds", "seconds_per_byte",
                          "backward_fixed_seconds", "backward_seconds_per_byte", "backward_ratio",
                          "train_forward_fixed_seconds", "train_forward_seconds_per_byte", "train_forward_ratio"})
    EXPECT_TRUE(j["op_costs"][0].contains(key)) << key;
  for (const char* key : {"kind", "m", "n", "k", "forward_flops_per_second", "backward_flops_per_second"})
    EXPECT_TRUE(j["train_conv_samples"][0].contains(key)) << key;
}

TEST(Ceilings, OpCostsAreOptionalAndANegativeCostIsAnInputError) {
  // A 1.1 file has none: read as not measured.
  EXPECT_TRUE(ceilings_from_json(minimal_document().dump()).op_costs.empty());
  auto doc = minimal_document();
  doc["op_costs"] = nlohmann::json::array({{{"op", "Erf"}, {"fixed_seconds", 1e-6}, {"seconds_per_byte", 1e-9}}});
  const DeviceCeilings c = ceilings_from_json(doc.dump());
  ASSERT_NE(c.op_cost("Erf"), nullptr);
  EXPECT_DOUBLE_EQ(c.op_cost("Erf")->forward_seconds(1000), 1e-6 + 1000 * 1e-9);
  EXPECT_DOUBLE_EQ(c.op_cost("Erf")->backward_seconds(1000), 0.0);  // backward fields absent: 0
  EXPECT_FALSE(c.op_cost("Erf")->has_train_forward());  // a file before 2.4: no training forward
  doc["op_costs"][0]["seconds_per_byte"] = -1e-9;
  EXPECT_EQ(kind_of_parse_error(doc.dump()), ErrorKind::Input);
  doc = minimal_document();
  doc["op_costs"] = nlohmann::json::array({{{"op", "Erf"}, {"seconds_per_byte", 1e-9}}});  // no fixed cost
  EXPECT_EQ(kind_of_parse_error(doc.dump()), ErrorKind::Input);
  doc = minimal_document();
  doc["optimizer_costs"] =
      nlohmann::json::array({{{"optimizer", "sgd"}, {"per_tensor_seconds", -1e-6}, {"seconds_per_element", 1e-9}}});
  EXPECT_EQ(kind_of_parse_error(doc.dump()), ErrorKind::Input);
  // The fresh allocation cost (1.3): absent is none; negative is refused.
  EXPECT_EQ(ceilings_from_json(minimal_document().dump()).fresh_allocation_threshold_bytes, 0);
  EXPECT_EQ(ceilings_from_json(minimal_document().dump()).fresh_allocation_seconds_per_byte, 0.0);
  doc = minimal_document();
  doc["fresh_allocation_threshold_bytes"] = 33554432;
  doc["fresh_allocation_seconds_per_byte"] = -1e-10;
  EXPECT_EQ(kind_of_parse_error(doc.dump()), ErrorKind::Input);
  doc["fresh_allocation_seconds_per_byte"] = 1e-10;
  doc["fresh_allocation_threshold_bytes"] = -1;
  EXPECT_EQ(kind_of_parse_error(doc.dump()), ErrorKind::Input);
}

TEST(Ceilings, ReadingSortsTheCurveByN) {
  const DeviceCeilings c = ceilings_from_json(minimal_document().dump());
  ASSERT_EQ(c.matmul.size(), 1u);
  ASSERT_EQ(c.matmul[0].curve.size(), 2u);
  EXPECT_EQ(c.matmul[0].curve[0].n, 64);
  EXPECT_EQ(c.matmul[0].curve[1].n, 512);
  // Optional fields take their defaults.
  EXPECT_EQ(c.threads, 0);
  EXPECT_EQ(c.copy_bytes, 0);
  EXPECT_EQ(c.op_overhead_seconds, 0.0);
  EXPECT_TRUE(c.notes.empty());
}

TEST(Ceilings, PeakFlopsIsPerDtypeAndZeroWhenNotMeasured) {
  const DeviceCeilings c = sample_ceilings();
  EXPECT_DOUBLE_EQ(c.peak_flops("fp32"), 5.1e13);
  EXPECT_DOUBLE_EQ(c.peak_flops("bf16"), 7.0e14);
  EXPECT_EQ(c.peak_flops("fp16"), 0.0);
}

TEST(Ceilings, MatmulFlopsAtInterpolatesLogLogBetweenPoints) {
  DeviceCeilings c;
  MatmulCeiling m;
  m.dtype = "fp32";
  m.flops_per_second = 2e11;
  m.best_size = 10000;
  // 100 -> 1e9 and 1000 -> 1e11: throughput grows as n^2 over the first decade;
  // 1000 -> 1e11 and 10000 -> 2e11: as n^log10(2) over the second.
  m.curve = {{100, 1e9}, {1000, 1e11}, {10000, 2e11}};
  c.matmul = {m};
  // On the points themselves.
  EXPECT_NEAR(c.matmul_flops_at("fp32", 100), 1e9, 1e9 * 1e-12);
  EXPECT_NEAR(c.matmul_flops_at("fp32", 1000), 1e11, 1e11 * 1e-12);
  EXPECT_NEAR(c.matmul_flops_at("fp32", 10000), 2e11, 2e11 * 1e-12);
  // First segment, f = 1e9 * (n/100)^2: n = 200 -> 4e9, n = 500 -> 2.5e10.
  EXPECT_NEAR(c.matmul_flops_at("fp32", 200), 4e9, 4e9 * 1e-9);
  EXPECT_NEAR(c.matmul_flops_at("fp32", 500), 2.5e10, 2.5e10 * 1e-9);
  // Second segment, f = 1e11 * (n/1000)^log10(2): n = 2000 -> 1e11 * 2^0.30103 = 1.232024e11,
  // n = sqrt(1000 * 10000) = 3162.28 -> the geometric mean sqrt(1e11 * 2e11) = 1.41421e11.
  EXPECT_NEAR(c.matmul_flops_at("fp32", 2000), 1.2320237e11, 1e5);
  EXPECT_NEAR(c.matmul_flops_at("fp32", std::sqrt(1000.0 * 10000.0)), 1.4142136e11, 1e5);
  // Clamped at both ends: no extrapolation.
  EXPECT_NEAR(c.matmul_flops_at("fp32", 10), 1e9, 1e-3);
  EXPECT_NEAR(c.matmul_flops_at("fp32", 1), 1e9, 1e-3);
  EXPECT_NEAR(c.matmul_flops_at("fp32", 1e6), 2e11, 1e-3);
  // A dtype that was not measured.
  EXPECT_EQ(c.matmul_flops_at("fp16", 1000), 0.0);
}

// conv_flops_at, by hand: distances in log2 units of M, N and K; the four
// nearest samples of the kind, weighted by 1 / distance^2, their rates'
// weighted geometric mean.
TEST(Ceilings, ConvFlopsAtIsTheNearestSamplesOfItsKind) {
  DeviceCeilings c;
  c.conv_samples = {{"1x1", 64, 64, 64, 1e10},    {"1x1", 256, 64, 64, 4e10},    {"1x1", 128, 128, 64, 2e10},
                    {"1x1", 128, 64, 128, 2e10},  {"1x1", 128, 64, 65536, 1e13}, {"kxk", 64, 64, 576, 8e10}};
  // At a sample: its rate.
  EXPECT_DOUBLE_EQ(c.conv_flops_at("1x1", 64, 64, 64), 1e10);
  // (128, 64, 64) is 1 unit from each of the first four (distance^2 1) and 10
  // from the fifth (left out): (1e10 * 4e10 * 2e10 * 2e10)^(1/4) = 2e10.
  EXPECT_NEAR(c.conv_flops_at("1x1", 128, 64, 64), 2e10, 1e-3);
  // (64, 64, 128): distance^2 1 to the first, 5 to the second (2^2 + 1),
  // 3 to the third and 1 to the fourth: weights 1, 1/5, 1/3, 1, so
  // exp((ln 1e10 + ln 4e10 / 5 + ln 2e10 / 3 + ln 2e10) / (1 + 1/5 + 1/3 + 1)).
  const double expected = std::exp((std::log(1e10) + std::log(4e10) / 5 + std::log(2e10) / 3 + std::log(2e10)) /
                                   (1.0 + 1.0 / 5 + 1.0 / 3 + 1.0));
  EXPECT_NEAR(c.conv_flops_at("1x1", 64, 64, 128), expected, expected * 1e-12);
  // Another kind has its own samples; a kind with none (or a degenerate product) gives 0.
  EXPECT_NEAR(c.conv_flops_at("kxk", 1000, 10, 10), 8e10, 8e10 * 1e-12);
  EXPECT_DOUBLE_EQ(c.conv_flops_at("kxk/s2", 64, 64, 64), 0.0);
  EXPECT_DOUBLE_EQ(c.conv_flops_at("1x1", 0, 64, 64), 0.0);
}

// conv_seconds_at, by hand: 2 M N K / rate inside the grid; below the
// samples' smallest M, N or K, no less than a call's fixed part (the
// cheapest sample's time) plus the rest of the raised product's time in
// proportion to the work. With one sample of a kind, the fixed part is that
// sample's whole time.
// One sample (16 x 16 x 16 at 1e9 FLOP/s: 8.192 us): at it, 8.192 us; a
// 1 x 2 x 8 product (rate read at the sample, 1e9: 32 ns as a rate) takes
// the sample's 8.192 us; 32 x 16 x 16 (inside in M) takes 2 x 32 x 16 x 16 /
// 1e9 = 16.384 us, nothing raised.
TEST(Ceilings, ConvSecondsBelowTheGridAreTheSmallestSamplesTime) {
  DeviceCeilings c;
  c.conv_samples = {{"1x1", 16, 16, 16, 1e9}, {"kxk", 49, 64, 576, 8e10}};
  EXPECT_NEAR(c.conv_seconds_at("1x1", 16, 16, 16), 8.192e-6, 1e-15);
  EXPECT_NEAR(c.conv_seconds_at("1x1", 1, 2, 8), 8.192e-6, 1e-15);
  EXPECT_NEAR(c.conv_seconds_at("1x1", 32, 16, 16), 16.384e-6, 1e-15);
  // kxk: M = 1 (one output position) raised to 49: 2 x 49 x 64 x 576 / 8e10.
  EXPECT_NEAR(c.conv_seconds_at("kxk", 1, 64, 576), 2.0 * 49 * 64 * 576 / 8e10, 1e-15);
  // A kind without samples: 0.
  EXPECT_DOUBLE_EQ(c.conv_seconds_at("dw", 16, 16, 9), 0.0);
  // Two samples: A 16 x 16 x 16 at 1e9 (8.192 us, the cheapest: a call's
  // fixed part) and B 64 x 16 x 16 at 2e9 (16.384 us). 32 x 8 x 16 is raised
  // to 32 x 16 x 16, one unit from each (rate sqrt(1e9 x 2e9)): 2 x 32 x 16 x
  // 16 / that; the price is 8.192 us + (that - 8.192 us) x 1/2 (half the work).
  c.conv_samples = {{"1x1", 16, 16, 16, 1e9}, {"1x1", 64, 16, 16, 2e9}};
  const double raised = 2.0 * 32 * 16 * 16 / std::sqrt(1e9 * 2e9);
  EXPECT_NEAR(c.conv_call_seconds("1x1"), 8.192e-6, 1e-15);
  EXPECT_NEAR(c.conv_seconds_at("1x1", 32, 8, 16), 8.192e-6 + (raised - 8.192e-6) * 0.5, 1e-15);
}

// cold_share blends a sample's two rates by time: s x (seconds per FLOP
// cold) + (1 - s) x (seconds per FLOP hot). A sample at 1e10 cold and 4e10
// hot: share 1 gives 1e10, 0 gives 4e10, 0.5 gives 1 / (0.5 / 4e10 + 0.5 /
// 1e10) = 1.6e10; a sample without a hot rate keeps its one rate.
TEST(Ceilings, ConvFlopsAtBlendsTheColdAndHotRatesByTime) {
  DeviceCeilings c;
  c.conv_samples = {{"1x1", 64, 64, 64, 1e10, 4e10}, {"kxk", 64, 64, 576, 8e10}};
  EXPECT_DOUBLE_EQ(c.conv_flops_at("1x1", 64, 64, 64), 1e10);
  EXPECT_DOUBLE_EQ(c.conv_flops_at("1x1", 64, 64, 64, 1.0), 1e10);
  EXPECT_DOUBLE_EQ(c.conv_flops_at("1x1", 64, 64, 64, 0.0), 4e10);
  EXPECT_NEAR(c.conv_flops_at("1x1", 64, 64, 64, 0.5), 1.6e10, 1e-3);
  EXPECT_DOUBLE_EQ(c.conv_flops_at("kxk", 64, 64, 576, 0.0), 8e10);
  EXPECT_DOUBLE_EQ(c.conv_flops_at("kxk", 64, 64, 576, 0.5), 8e10);
}

TEST(Ceilings, TrainConvRatesComeFromTheNearestTrainingSamplesOfTheKind) {
  DeviceCeilings c;
  c.train_conv_samples = {{"1x1", 64, 64, 64, 4e10, 2e10}, {"1x1", 256, 64, 64, 1e10, 5e9}, {"dw", 64, 64, 9, 1e9, 5e8}};
  double forward = 0, backward = 0;
  ASSERT_TRUE(c.train_conv_rates_at("1x1", 64, 64, 64, forward, backward));
  EXPECT_DOUBLE_EQ(forward, 4e10);
  EXPECT_DOUBLE_EQ(backward, 2e10);
  // M = 128, one log2 unit from each 1x1 sample: equal weights, the geometric
  // mean of 4e10 and 1e10 (2e10) and of 2e10 and 5e9 (1e10). The "dw" sample
  // is of another kind and does not count.
  ASSERT_TRUE(c.train_conv_rates_at("1x1", 128, 64, 64, forward, backward));
  EXPECT_NEAR(forward, 2e10, 1e-3);
  EXPECT_NEAR(backward, 1e10, 1e-3);
  EXPECT_FALSE(c.train_conv_rates_at("kxk", 64, 64, 576, forward, backward));
  EXPECT_EQ(forward, 0.0);
  EXPECT_EQ(backward, 0.0);
}

TEST(Ceilings, MatmulFlopsAtWithoutACurveIsThePeak) {
  const DeviceCeilings c = datasheet_ceilings("a100-sxm");
  EXPECT_DOUBLE_EQ(c.matmul_flops_at("fp16", 64), 312.0e12);
  EXPECT_DOUBLE_EQ(c.matmul_flops_at("fp16", 16384), 312.0e12);
}

TEST(Ceilings, MalformedJsonIsAnInputError) {
  EXPECT_EQ(kind_of_parse_error("not json at all"), ErrorKind::Input);
  EXPECT_EQ(kind_of_parse_error("{\"schema_version\": \"1.0\""), ErrorKind::Input);  // truncated
  EXPECT_EQ(kind_of_parse_error("[1, 2, 3]"), ErrorKind::Input);                      // not an object
  EXPECT_EQ(kind_of_parse_error(""), ErrorKind::Input);
}

TEST(Ceilings, WrongKindOrVersionIsAnInputError) {
  auto doc = minimal_document();
  doc["device_kind"] = "tpu";
  EXPECT_EQ(kind_of_parse_error(doc.dump()), ErrorKind::Input);
  doc = minimal_document();
  doc["schema_version"] = "3.0";  // 1.x and 2.x are read (2.0 added the machine roofs)
  EXPECT_EQ(kind_of_parse_error(doc.dump()), ErrorKind::Input);
  doc = minimal_document();
  doc["memory_bandwidth_bytes_per_second"] = 0;
  EXPECT_EQ(kind_of_parse_error(doc.dump()), ErrorKind::Input);
  doc = minimal_document();
  doc["memory_bandwidth_bytes_per_second"] = "fast";  // wrong type
  EXPECT_EQ(kind_of_parse_error(doc.dump()), ErrorKind::Input);
}

TEST(Ceilings, EachMissingRequiredFieldIsAnInputErrorNamingTheOrigin) {
  for (const char* key : {"schema_version", "device_kind", "source", "memory_bandwidth_bytes_per_second", "matmul"}) {
    auto doc = minimal_document();
    doc.erase(key);
    SCOPED_TRACE(key);
    test::expect_error([&] { ceilings_from_json(doc.dump(), "/some/ceilings-cpu.json"); }, ErrorKind::Input,
                       {"/some/ceilings-cpu.json"});
  }
  for (const char* key : {"dtype", "flops_per_second"}) {
    auto doc = minimal_document();
    doc["matmul"][0].erase(key);
    EXPECT_EQ(kind_of_parse_error(doc.dump()), ErrorKind::Input) << key;
  }
  auto doc = minimal_document();
  doc["matmul"][0]["curve"][0].erase("n");
  EXPECT_EQ(kind_of_parse_error(doc.dump()), ErrorKind::Input);
}

// A non-positive rate or size would make matmul_flops_at's log-log
// interpolation NaN (log 0) and a forecast meaningless; reading refuses it.
TEST(Ceilings, NonPositiveMatmulFiguresAreAnInputError) {
  auto doc = minimal_document();
  doc["matmul"][0]["flops_per_second"] = -5;
  EXPECT_EQ(kind_of_parse_error(doc.dump()), ErrorKind::Input);
  doc = minimal_document();
  doc["matmul"][0]["flops_per_second"] = 0;
  EXPECT_EQ(kind_of_parse_error(doc.dump()), ErrorKind::Input);
  doc = minimal_document();
  doc["matmul"][0]["curve"][0]["flops_per_second"] = 0;
  EXPECT_EQ(kind_of_parse_error(doc.dump()), ErrorKind::Input);
  doc = minimal_document();
  doc["matmul"][0]["curve"][1]["n"] = 0;
  EXPECT_EQ(kind_of_parse_error(doc.dump()), ErrorKind::Input);
  doc = minimal_document();
  doc["op_overhead_seconds"] = -1e-6;
  EXPECT_EQ(kind_of_parse_error(doc.dump()), ErrorKind::Input);
}

// Sets environment variables for one test and restores them after.
class ScopedEnv {
 public:
  void set(const std::string& name, const std::optional<std::string>& value) {
    if (!saved_.count(name)) {
      const char* old = std::getenv(name.c_str());
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    if (value)
      setenv(name.c_str(), value->c_str(), 1);
    else
      unsetenv(name.c_str());
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) {
      if (value)
        setenv(name.c_str(), value->c_str(), 1);
      else
        unsetenv(name.c_str());
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST(Ceilings, DefaultPathPrefersModelstatDirThenXdgThenHome) {
  ScopedEnv env;
  env.set("MODELSTAT_CEILINGS_DIR", "/opt/ceil");
  env.set("XDG_CACHE_HOME", "/xdg");
  env.set("HOME", "/home/u");
  EXPECT_EQ(default_ceilings_path("cpu"), "/opt/ceil/ceilings-cpu.json");
  EXPECT_EQ(default_ceilings_path("cuda"), "/opt/ceil/ceilings-cuda.json");
  env.set("MODELSTAT_CEILINGS_DIR", "");  // empty counts as unset
  EXPECT_EQ(default_ceilings_path("cpu"), "/xdg/modelstat/ceilings-cpu.json");
  env.set("MODELSTAT_CEILINGS_DIR", std::nullopt);
  EXPECT_EQ(default_ceilings_path("cuda"), "/xdg/modelstat/ceilings-cuda.json");
  env.set("XDG_CACHE_HOME", std::nullopt);
  EXPECT_EQ(default_ceilings_path("cpu"), "/home/u/.cache/modelstat/ceilings-cpu.json");
}

TEST(Ceilings, SaveCreatesFoldersAndLoadReadsItBack) {
  const std::string dir = testing::TempDir() + "/ceilings_save_" + std::to_string(getpid());
  const std::string path = dir + "/a/b/ceilings-cuda.json";
  const DeviceCeilings c = sample_ceilings();
  save_ceilings(c, path);
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_NE(stat((path + ".tmp").c_str(), &st), 0) << "the temporary file is renamed away";
  const std::optional<DeviceCeilings> r = load_ceilings(path);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(ceilings_to_json(*r), ceilings_to_json(c));
  // Saving again replaces the file.
  DeviceCeilings d = c;
  d.memory_bandwidth = 1.0e12;
  save_ceilings(d, path);
  EXPECT_DOUBLE_EQ(load_ceilings(path)->memory_bandwidth, 1.0e12);
}

TEST(Ceilings, LoadOfAMissingFileIsNothingAndOfABadOneAnInputError) {
  const std::string dir = testing::TempDir() + "/ceilings_load_" + std::to_string(getpid());
  EXPECT_FALSE(load_ceilings(dir + "/does-not-exist.json").has_value());
  save_ceilings(sample_ceilings(), dir + "/good.json");  // creates dir
  const std::string bad = dir + "/bad.json";
  std::ofstream(bad) << "{\"schema_version\": \"1.0\", \"device_kind\": \"cpu\"}";
  try {
    load_ceilings(bad);
    ADD_FAILURE() << "a file without its required fields was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_EQ(e.file(), bad);
  }
}

TEST(Ceilings, DatasheetFallbackIsLabelledAndNotMeasured) {
  const DeviceCeilings c = datasheet_ceilings("h100-sxm");
  EXPECT_EQ(c.device_kind, "cuda");
  EXPECT_EQ(c.source, "datasheet: h100-sxm");
  EXPECT_FALSE(c.measured());
  EXPECT_DOUBLE_EQ(c.memory_bandwidth, 3.35e12);  // HBM3, 3.35 TB/s
  EXPECT_DOUBLE_EQ(c.peak_flops("fp32"), 66.9e12);
  EXPECT_DOUBLE_EQ(c.peak_flops("tf32"), 494.7e12);
  EXPECT_DOUBLE_EQ(c.peak_flops("fp16"), 989.4e12);
  EXPECT_DOUBLE_EQ(c.peak_flops("bf16"), 989.4e12);
  EXPECT_FALSE(c.notes.empty());
  // T4 has no bf16 tensor cores: not listed rather than listed as 0.
  EXPECT_EQ(datasheet_ceilings("t4").peak_flops("bf16"), 0.0);
  for (const auto& m : datasheet_ceilings("t4").matmul) EXPECT_NE(m.dtype, "bf16");
  // Every listed name resolves, and each fallback survives the JSON round trip.
  EXPECT_EQ(datasheet_names().size(), 6u);
  for (const auto& name : datasheet_names()) {
    const DeviceCeilings d = datasheet_ceilings(name);
    EXPECT_EQ(ceilings_to_json(ceilings_from_json(ceilings_to_json(d))), ceilings_to_json(d)) << name;
  }
}

TEST(Ceilings, UnknownDatasheetIsAUsageErrorListingTheKnownNames) {
  test::expect_error([] { datasheet_ceilings("rtx-9090"); }, ErrorKind::Usage, {"rtx-9090", "h100-sxm", "t4"});
}

// ---------------------------------------------------------- `device` table

TEST(CeilingsTable, HumanUnits) {
  EXPECT_EQ(report::human_flops_rate(9.534e10), "95.3 GFLOP/s");
  EXPECT_EQ(report::human_flops_rate(1.234e12), "1.23 TFLOP/s");
  EXPECT_EQ(report::human_flops_rate(7.0e14), "700 TFLOP/s");
  EXPECT_EQ(report::human_flops_rate(5.0e8), "0.500 GFLOP/s");
  EXPECT_EQ(report::human_bandwidth(1.234e10), "12.3 GB/s");
  EXPECT_EQ(report::human_bandwidth(2.9e12), "2900 GB/s");
}

TEST(CeilingsTable, ShowsContextScalarsPeaksCurveAndWhereItWasSaved) {
  report::CeilingsTableExtras extras;
  extras.probe_seconds = 41.5;
  extras.saved_path = "/tmp/x/ceilings-cuda.json";
  std::ostringstream out;
  report::write_ceilings_table(sample_ceilings(), extras, out);
  const std::string text = out.str();
  EXPECT_TRUE(contains(text, "NVIDIA Test GPU")) << text;
  EXPECT_TRUE(contains(text, "2.5.1")) << text;
  EXPECT_TRUE(contains(text, "41.5 s")) << text;
  EXPECT_TRUE(contains(text, "2900 GB/s")) << text;
  EXPECT_TRUE(contains(text, "1024 MiB")) << text;
  EXPECT_TRUE(contains(text, "4.50 µs")) << text;
  EXPECT_TRUE(contains(text, "/tmp/x/ceilings-cuda.json")) << text;
  EXPECT_TRUE(contains(text, "first note")) << text;

  // Peak rows: dtype, peak, n.
  bool fp32_peak = false, bf16_peak = false;
  for (const auto& line : test::lines_of(text)) {
    fp32_peak = fp32_peak || (contains(line, "fp32") && contains(line, "51.0 TFLOP/s") && contains(line, "8192"));
    bf16_peak = bf16_peak || (contains(line, "bf16") && contains(line, "700 TFLOP/s") && contains(line, "4096"));
  }
  EXPECT_TRUE(fp32_peak) << text;
  EXPECT_TRUE(bf16_peak) << text;

  // The curve: one unit (TFLOP/s, the largest point is 700 TFLOP/s), one row per n in
  // the union of both dtypes' sizes, "-" where a dtype has no point.
  const auto lines = test::lines_of(text);
  size_t header = 0;
  for (size_t i = 0; i < lines.size(); ++i)
    if (contains(lines[i], "Matmul curve (TFLOP/s")) header = i;
  ASSERT_GT(header, 0u) << text;
  // header, column names, rule, then rows 256, 1024, 4096, 8192.
  ASSERT_GT(lines.size(), header + 6);
  auto cells = [](const std::string& line) {
    std::vector<std::string> v;
    std::istringstream in(line);
    for (std::string c; in >> c;) v.push_back(c);
    return v;
  };
  EXPECT_EQ(cells(lines[header + 1]), (std::vector<std::string>{"n", "fp32", "bf16"}));
  EXPECT_EQ(cells(lines[header + 3]), (std::vector<std::string>{"256", "1.50", "2.00"}));
  EXPECT_EQ(cells(lines[header + 4]), (std::vector<std::string>{"1024", "30.0", "-"}));
  EXPECT_EQ(cells(lines[header + 5]), (std::vector<std::string>{"4096", "-", "700"}));
  EXPECT_EQ(cells(lines[header + 6]), (std::vector<std::string>{"8192", "51.0", "650"}));
}

TEST(CeilingsTable, DatasheetIsLabelledAndUnsavedSaysNothingAboutSaving) {
  std::ostringstream out;
  report::write_ceilings_table(datasheet_ceilings("l4"), {}, out);
  EXPECT_TRUE(contains(out.str(), "datasheet: l4")) << out.str();
  EXPECT_FALSE(contains(out.str(), "Saved to")) << out.str();
  EXPECT_FALSE(contains(out.str(), "probe took")) << out.str();
}

// The whole `device` output for the full record, as a table and as JSON, and
// the table of a datasheet. The probe's run time, the save path, the date, the
// host and the LibTorch version differ from run to run: normalised away.
TEST(WritersGolden, CeilingsTableAndJson) {
  report::CeilingsTableExtras extras;
  extras.probe_seconds = 41.5;
  extras.saved_path = "/tmp/x/ceilings-cuda.json";
  const std::vector<std::string> volatile_values = {"41.5 s", extras.saved_path, "node-7", "2.5.1"};
  std::ostringstream table;
  report::write_ceilings_table(sample_ceilings(), extras, table);
  test::expect_golden("ceilings.txt", table.str(), volatile_values);
  test::expect_golden("ceilings.json", ceilings_to_json(sample_ceilings()), volatile_values);
  std::ostringstream datasheet;
  report::write_ceilings_table(datasheet_ceilings("l4"), {}, datasheet);
  test::expect_golden("ceilings-datasheet.txt", datasheet.str());
}

}  // namespace
}  // namespace modelstat

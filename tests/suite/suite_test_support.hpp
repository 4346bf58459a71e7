// Helpers of the suite tests: a scratch folder with files written into it,
// hand-built results, the sample models' paths.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "analyzer/suite/hash.hpp"
#include "modelstat/suite.hpp"
#include "scratch_folder.hpp"
#include "test_support.hpp"

namespace modelstat::test {

inline std::string sample_model(const std::string& name) {
  return std::string(MODELSTAT_SOURCE_DIR) + "/sample_models/" + name;
}

// A result as `suite cell` would write it, built by hand: `median` seconds from
// samples median*0.99, median, median*1.01 (their median is `median`).
inline suite::CellResult hand_result(const std::string& machine_name, int64_t index, const std::string& key,
                                     double median, const std::string& run_id = "run-a") {
  suite::CellResult r;
  r.suite_name = "hand";
  r.suite_file = "hand.yaml";
  r.suite_hash = "00000000000000aa";
  r.run_id = run_id;
  r.cell.index = index;
  r.cell.key = key;
  r.cell.model = "model" + std::to_string(index % 3);
  r.cell.model_path = "/m/" + r.cell.model + ".onnx";
  r.cell.model_hash = "00000000000000bb";
  r.cell.task = "inference";
  r.cell.batch = 1 + index % 2;
  r.cell.threads = 1;
  r.machine.name = machine_name;
  r.machine.cpu_model = "Hand CPU";
  r.machine.cores = 4;
  r.machine.memory_bytes = int64_t(8) << 30;
  r.machine.host = machine_name;
  r.machine.id = suite::hash_text("machine " + machine_name);
  r.environment.id = "00000000000000cc";
  r.environment.modelstat_version = "0.1.0";
  r.environment.modelstat_commit = "abcdef1234";
  r.started_at = "2026-01-02T10:00:00Z";
  r.finished_at = "2026-01-02T10:00:05Z";
  r.wall_s = 2.5;
  suite::Measurement m;
  m.latency.samples = {median * 0.99, median, median * 1.01};
  m.latency.count = 3;
  m.latency.median = m.latency.p50 = median;
  m.latency.mean = median;
  m.latency.min = median * 0.99;
  m.latency.max = m.latency.p90 = m.latency.p95 = m.latency.p99 = median * 1.01;
  m.fps = static_cast<double>(r.cell.batch) / median;
  m.average_pass_s = median;
  r.measurement = m;
  suite::StaticTotals t;
  t.params = 1000;
  t.macs = 2000;
  t.flops = 4000;
  t.bytes = 8000;
  t.inputs = {"x: float32 1x3x8x8"};
  t.precision = "fp32";
  r.totals = t;
  r.forecast.latency_s = median * 1.1;
  r.forecast.error = 0.1;
  return r;
}

}  // namespace modelstat::test

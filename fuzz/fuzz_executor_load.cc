// libFuzzer target over the executor's load path, as `profile` and `verify`
// take it up to the first kernel: the model file is read from disk (stripped,
// its payloads located out of band and memory-mapped), bound (default batch 1),
// analysed, checked against the host-memory estimate, every constant
// materialised as a tensor (inline bytes, payloads in the file, external data,
// or seeded random values for a skeleton), every op checked for an executor,
// and the random inputs built. The same bytes are then read as a test-data
// file of `verify` (a TensorProto checked against a declared value).
//
// Kernels do not run: a fuzzed graph may be a legitimately huge computation.
// Cases whose constants or activations the analysis sizes above a few MiB are
// skipped after the estimate (profile would refuse or run them; neither is
// what this target looks for), so every case takes milliseconds.
//
// Any modelstat::Error is an orderly rejection. Anything else escaping (a
// LibTorch error, another exception, a sanitizer report, a crash, a hang, an
// allocation beyond -rss_limit_mb) is a finding.
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "modelstat/analysis.hpp"
#include "modelstat/error.hpp"
#include "profiler/executor.hpp"
#include "profiler/host_memory.hpp"
#include "profiler/verify.hpp"

namespace {

constexpr int64_t kMaxWeightBytes = int64_t(8) << 20;
constexpr int64_t kMaxActivationBytes = int64_t(32) << 20;

// One private folder per process: external-data locations in a fuzzed model
// resolve inside it, where nothing but the model itself exists.
char g_dir[] = "/tmp/modelstat-fuzz-XXXXXX";  // a plain array: still valid when atexit runs

const std::string& model_path() {
  static const std::string* path = [] {
    if (!mkdtemp(g_dir)) std::abort();
    std::atexit([] { std::filesystem::remove_all(g_dir); });
    return new std::string(std::string(g_dir) + "/model.onnx");
  }();
  return *path;
}

void write_model(const uint8_t* data, size_t size) {
  FILE* f = std::fopen(model_path().c_str(), "wb");
  if (!f) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
}

// MODELSTAT_FUZZ_TRACE=1: one line per case saying how far it got (to check
// that a corpus reaches the weights and inputs, not only the parser).
const bool g_trace = std::getenv("MODELSTAT_FUZZ_TRACE") != nullptr;

void load_and_prepare() {
  modelstat::LoadOptions options;
  options.allow_custom_domains = true;  // reach the executor's own refusal of unknown ops
  const modelstat::Model model = modelstat::load_model(model_path(), options);
  const modelstat::AnalysisResult analysis = modelstat::analyze_model(model);
  const auto estimate = modelstat::profiler::estimate_host_memory(analysis, modelstat::profiler::RunShape{});
  (void)modelstat::profiler::exceeds_host_memory(estimate);
  if (estimate.weights > kMaxWeightBytes || estimate.activations > kMaxActivationBytes) {
    if (g_trace) std::fprintf(stderr, "stage: skipped (estimate above the caps)\n");
    return;
  }
  modelstat::profiler::ExecOptions eo;
  const modelstat::profiler::Executor exec(model, eo);
  const auto inputs = exec.make_inputs(eo.seed);
  if (g_trace)
    std::fprintf(stderr, "stage: prepared (%lld weight bytes loaded, %lld randomised tensors, %zu inputs)\n",
                 (long long)exec.weights().bytes_loaded(), (long long)exec.weights().tensors_randomised(),
                 inputs.size());
}

void read_as_test_data(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  onnx::ValueInfoProto any;  // no declared type or shape: whatever the header says
  any.set_name("x");
  try {
    (void)modelstat::profiler::read_case_tensor(bytes, "input_0.pb", any, "input 'x'");
  } catch (const modelstat::Error&) {
  }
  onnx::ValueInfoProto declared;  // float [2, ?]
  declared.set_name("x");
  auto* tensor = declared.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  tensor->mutable_shape()->add_dim()->set_dim_value(2);
  tensor->mutable_shape()->add_dim()->set_dim_param("n");
  try {
    (void)modelstat::profiler::read_case_tensor(bytes, "input_0.pb", declared, "input 'x'");
  } catch (const modelstat::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  write_model(data, size);
  try {
    load_and_prepare();
  } catch (const modelstat::Error& e) {
    if (g_trace) std::fprintf(stderr, "stage: refused (%s)\n", e.message().substr(0, 80).c_str());
  }
  read_as_test_data(data, size);
  return 0;
}

// JSON profile report: every field of the ProfileResult, raw samples included,
// with the analysis document (json_writer.cc) nested under "analysis".
// Described field by field in docs/profile-json.md and docs/profile.schema.json.
//
// Numbers: integers are exact (never through a double); doubles are written as
// the shortest decimal that reads back as the same double; a statistic that
// does not exist (no samples, a non-finite value) is null. Layout: the document
// is indented by 2 like the analysis JSON, but sample arrays are packed
// kSamplesPerLine values a line, so a layer with 10,000 samples is 1,250 lines
// rather than 10,000.
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>

#include "tools/writers/format_util.hpp"

namespace modelstat {

// Semantic versioning, as for the analysis document: major for incompatible
// changes, minor for added fields, patch for clarifications (docs/profile-json.md).
const char* const kProfileJsonSchemaVersion = "1.2.0";

namespace report_detail {
namespace {

using Json = nlohmann::ordered_json;  // keys keep insertion order: stable output

constexpr size_t kSamplesPerLine = 6;
constexpr const char* kMarker = "@@modelstat-profile-";  // placeholder values, replaced after dump()

Json number(double v) {
  return std::isfinite(v) ? Json(v) : Json(nullptr);
}

template <typename T>
Json optional(const std::optional<T>& v) {
  if (!v) return Json(nullptr);
  if constexpr (std::is_floating_point_v<T>)
    return number(*v);
  else
    return Json(*v);
}

Json strings(const std::vector<std::string>& values) {
  Json array = Json::array();
  for (const std::string& v : values) array.push_back(v);
  return array;
}

// Sample arrays are left out of the DOM (a placeholder string stands in for
// each) and written packed after dump().
class SampleArrays {
 public:
  Json placeholder(const std::vector<double>& samples) {
    arrays_.push_back(&samples);
    return fmt::format("{}samples-{}@@", kMarker, arrays_.size() - 1);
  }
  const std::vector<double>* get(size_t id) const { return id < arrays_.size() ? arrays_[id] : nullptr; }

 private:
  std::vector<const std::vector<double>*> arrays_;
};

// One set of samples: the statistics (null when there are no samples) and the
// raw samples in run order.
Json timing_json(const TimingSummary& t, SampleArrays& samples) {
  const bool measured = t.count > 0;
  auto stat = [&](double v) { return measured ? number(v) : Json(nullptr); };
  Json j;
  j["count"] = t.count;
  j["median_s"] = stat(t.median);
  j["mean_s"] = stat(t.mean);
  j["stddev_s"] = stat(t.stddev);
  j["cv"] = stat(t.cv);
  j["min_s"] = stat(t.min);
  j["max_s"] = stat(t.max);
  j["p50_s"] = stat(t.p50);
  j["p90_s"] = stat(t.p90);
  j["p95_s"] = stat(t.p95);
  j["p99_s"] = stat(t.p99);
  j["median_ci_low_s"] = stat(t.median_ci_low);
  j["median_ci_high_s"] = stat(t.median_ci_high);
  j["rel_ci"] = stat(t.rel_ci);
  j["stop_reason"] = t.stop_reason;
  j["samples_s"] = samples.placeholder(t.samples);
  return j;
}

Json context_json(const RunContext& c) {
  Json j;
  j["device_name"] = c.device_name;
  j["device_kind"] = c.device_kind;
  j["driver_version"] = c.driver_version;
  j["runtime_version"] = c.runtime_version;
  j["torch_version"] = c.torch_version;
  j["threads"] = c.threads;
  j["dtype"] = c.dtype;
  j["batch"] = c.batch;
  j["clocks"] = c.clocks;
  j["timer"] = c.timer;
  j["allocator"] = c.allocator;
  j["date"] = c.date;
  j["host"] = c.host;
  return j;
}

Json cold_json(const ColdStart& c) {
  Json j;
  j["model_load_s"] = number(c.model_load);
  j["weight_upload_s"] = number(c.weight_upload);
  j["first_inference_s"] = number(c.first_inference);
  j["steady_state_median_s"] = number(c.steady_state_median);
  return j;
}

Json layers_json(const ProfileResult& r, SampleArrays& samples) {
  Json layers = Json::array();
  const double sum = layer_median_sum(r);
  for (const LayerTiming* layer : layers_in_order(r)) {
    const LayerFigures f = layer_figures(r, *layer, sum);
    Json j;
    j["index"] = layer->index;
    j["name"] = layer->name;
    j["op_type"] = layer->op_type;
    j["cost_status"] = f.node ? Json(cost_status_name(f.node->cost.status)) : Json(nullptr);
    j["flops"] = optional(f.flops);
    j["macs"] = optional(f.macs);
    j["bytes"] = optional(f.bytes);
    j["share_of_layer_sum"] = optional(f.share);
    j["achieved_gflops"] = optional(f.gflops);
    j["achieved_gbps"] = optional(f.gbps);
    j["time"] = timing_json(layer->time, samples);
    layers.push_back(std::move(j));
  }
  return layers;
}

Json transfer_json(const TimingSummary& t, int64_t bytes, SampleArrays& samples) {
  Json j;
  j["bytes"] = bytes;
  const std::optional<double> bps = t.count > 0 ? rate(double(bytes), t.median) : std::nullopt;
  j["gb_per_s"] = bps ? number(*bps / 1e9) : Json(nullptr);
  j["time"] = timing_json(t, samples);
  return j;
}

Json batch_sweep_json(const std::vector<BatchPoint>& points) {
  Json array = Json::array();
  for (const BatchPoint& p : points) {
    Json j;
    j["batch"] = p.batch;
    j["fits"] = p.fits;
    j["failure"] = p.failure;
    j["median_s"] = p.fits ? number(p.median) : Json(nullptr);
    j["throughput_samples_per_s"] = p.fits ? number(p.throughput) : Json(nullptr);
    array.push_back(std::move(j));
  }
  return array;
}

Json concurrency_json(const ProfileResult& r, SampleArrays& samples) {
  if (!r.concurrency) return Json(nullptr);
  const ConcurrencyResult& c = *r.concurrency;
  Json j;
  j["mechanism"] = c.mechanism;
  j["requests_in_flight"] = c.requests_in_flight;
  j["throughput_requests_per_s"] = number(c.throughput);
  j["throughput_samples_per_s"] = number(c.throughput * double(r.context.batch));
  j["latency"] = timing_json(c.latency, samples);
  return j;
}

Json memory_json(const ProfileResult& r) {
  if (!r.memory) return Json(nullptr);
  const MemoryMeasurement& m = *r.memory;
  Json j;
  j["method"] = m.method;
  j["weights_bytes"] = m.weights_bytes;
  j["inference_peak_bytes"] = m.inference_peak_bytes;
  return j;
}

Json train_step_json(const ProfileResult& r, SampleArrays& samples) {
  if (!r.train_step) return Json(nullptr);
  const TrainStepResult& t = *r.train_step;
  const bool measured = t.time.count > 0;
  Json j;
  j["optimizer"] = t.optimizer;
  j["loss"] = t.loss;
  j["trainable_params"] = t.trainable_params;
  j["time"] = timing_json(t.time, samples);
  j["forward_s"] = measured ? number(t.forward_seconds) : Json(nullptr);
  j["backward_s"] = measured ? number(t.backward_seconds) : Json(nullptr);
  j["optimizer_s"] = measured ? number(t.optimizer_seconds) : Json(nullptr);
  j["peak_bytes"] = t.peak_bytes;
  j["memory_method"] = t.memory_method;
  return j;
}

void write_samples(std::ostream& out, const std::vector<double>& samples, const std::string& indent) {
  if (samples.empty()) {
    out << "[]";
    return;
  }
  const bool wrap = samples.size() > kSamplesPerLine;
  out << '[';
  for (size_t i = 0; i < samples.size(); ++i) {
    if (i) out << ',';
    if (wrap && i % kSamplesPerLine == 0)
      out << '\n' << indent << "  ";
    else if (i)
      out << ' ';
    out << (std::isfinite(samples[i]) ? Json(samples[i]).dump() : std::string("null"));
  }
  if (wrap) out << '\n' << indent;
  out << ']';
}

class ProfileJsonWriter final : public ProfileWriter {
 public:
  void write(const ProfileResult& r, const ReportOptions& options, std::ostream& out) const override {
    SampleArrays samples;
    Json doc;
    doc["schema_version"] = kProfileJsonSchemaVersion;
    doc["tool"] = "modelstat";
    doc["kind"] = "profile";
    doc["percentile_method"] = kPercentileMethod;
    doc["context"] = context_json(r.context);
    doc["cold_start"] = cold_json(r.cold);
    doc["whole"] = timing_json(r.whole, samples);
    doc["layer_sum"] = timing_json(r.layer_sum, samples);
    doc["instrumentation_overhead"] = optional(instrumentation_overhead(r));
    doc["throughput_samples_per_s"] =
        r.whole.count > 0 ? optional(rate(double(r.context.batch), r.whole.median)) : Json(nullptr);
    doc["layers"] = layers_json(r, samples);
    Json transfers;
    transfers["h2d"] = transfer_json(r.h2d, r.h2d_bytes, samples);
    transfers["d2h"] = transfer_json(r.d2h, r.d2h_bytes, samples);
    transfers["end_to_end"] = r.end_to_end;
    doc["transfers"] = std::move(transfers);
    doc["batch_sweep"] = batch_sweep_json(r.batch_sweep);
    doc["max_batch"] = r.max_batch > 0 ? Json(r.max_batch) : Json(nullptr);
    doc["concurrency"] = concurrency_json(r, samples);
    doc["memory"] = memory_json(r);
    doc["train_step"] = train_step_json(r, samples);
    doc["analysis"] = std::string(kMarker) + "analysis@@";
    doc["notices"] = strings(r.notices);

    // Invalid UTF-8 in a model's names is replaced (U+FFFD) rather than
    // aborting the whole report.
    const std::string text = doc.dump(2, ' ', false, Json::error_handler_t::replace);
    size_t done = 0;
    for (size_t at = text.find(kMarker); at != std::string::npos; at = text.find(kMarker, at + 1)) {
      // A placeholder is the value of a "samples_s" or "analysis" key that
      // starts its line; a name that spells the marker never does (JSON
      // strings hold no raw line break), so it is left alone.
      if (at == 0 || text[at - 1] != '"') continue;
      const size_t line = text.rfind('\n', at);
      if (line == std::string::npos) continue;
      const size_t key = text.find_first_not_of(' ', line + 1);
      const std::string indent = text.substr(line + 1, key - line - 1);
      const std::string head = text.substr(key, at - 1 - key);
      const size_t end = text.find("@@\"", at + std::char_traits<char>::length(kMarker));
      if (end == std::string::npos) continue;
      const std::string what = text.substr(at + std::char_traits<char>::length(kMarker),
                                           end - at - std::char_traits<char>::length(kMarker));
      if (head == "\"analysis\": " && what == "analysis") {
        out.write(text.data() + done, std::streamsize(at - 1 - done));
        write_analysis_json(r.analysis, options, out, indent);
      } else if (head == "\"samples_s\": " && what.rfind("samples-", 0) == 0) {
        const std::vector<double>* array = samples.get(std::strtoull(what.c_str() + 8, nullptr, 10));
        if (!array) continue;
        out.write(text.data() + done, std::streamsize(at - 1 - done));
        write_samples(out, *array, indent);
      } else {
        continue;
      }
      done = end + 3;
      at = end;
    }
    out.write(text.data() + done, std::streamsize(text.size() - done));
    out << '\n';
  }
};

}  // namespace

std::unique_ptr<ProfileWriter> make_profile_json_writer() {
  return std::make_unique<ProfileJsonWriter>();
}

}  // namespace report_detail
}  // namespace modelstat

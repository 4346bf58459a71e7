// Joined report, Chrome Trace Event JSON ("trace" format): ONE instrumented
// iteration laid out on a timeline, for Perfetto (ui.perfetto.dev) or
// chrome://tracing. Format: the "JSON Object Format" of the Trace Event
// Format document, {"traceEvents": [...], "displayTimeUnit": "ms", ...}.
//
// Which iteration: layer i's samples are in run order, so sample k of every
// layer is iteration k. The writer takes the iteration whose layer sum (the
// sum of its per-node samples) is the median of those sums (the lower median
// for an even count, so it is a real iteration; ties: the earliest). Nodes are
// placed back to back in graph order as complete events ("ph": "X", ts and dur
// in microseconds) on track 1. When copies were measured (CUDA), the H2D
// median comes before the nodes and the D2H median after them on track 2, so
// the nodes then start at the H2D's end rather than at 0. Track 3 holds the
// clean whole-model median for comparison (its gap to the node track is the
// instrumentation overhead). Metadata events name the process (the device)
// and the tracks.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>

#include "analyzer/measurements/record_json.hpp"
#include "modelstat/error.hpp"
#include "tools/writers/joined_writers.hpp"

namespace modelstat::report {

namespace {

using Json = nlohmann::ordered_json;

constexpr int kPid = 1;
constexpr int kNodeTrack = 1, kCopyTrack = 2, kWholeTrack = 3;

double micros(double seconds) { return seconds * 1e6; }

Json real(bool exists, double v) { return exists && std::isfinite(v) ? Json(v) : Json(nullptr); }

Json metadata(const char* what, int tid, Json args) {
  Json e;
  e["name"] = what;
  e["ph"] = "M";
  e["pid"] = kPid;
  e["tid"] = tid;
  e["args"] = std::move(args);
  return e;
}

Json complete(std::string name, std::string category, double ts_us, double dur_us, int tid, Json args) {
  Json e;
  e["name"] = std::move(name);
  e["cat"] = std::move(category);
  e["ph"] = "X";
  e["ts"] = ts_us;
  e["dur"] = dur_us;
  e["pid"] = kPid;
  e["tid"] = tid;
  e["args"] = std::move(args);
  return e;
}

std::string shapes(const std::vector<std::string>& list) { return report_detail::join(list, ", "); }

}  // namespace

TraceIteration median_iteration(const ProfileResult& profile) {
  size_t count = SIZE_MAX;
  for (const LayerTiming& l : profile.layers)
    if (!l.time.samples.empty()) count = std::min(count, l.time.samples.size());
  if (count == SIZE_MAX || count == 0)
    throw_usage("the profile has no per-layer samples: there is no iteration to draw as a trace");
  std::vector<double> sums(count, 0.0);
  for (const LayerTiming& l : profile.layers)
    for (size_t k = 0; k < count && k < l.time.samples.size(); ++k) sums[k] += l.time.samples[k];
  std::vector<size_t> order(count);
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return sums[a] < sums[b]; });
  return {order[(count - 1) / 2], count};
}

namespace {

class JoinedTraceWriter final : public JoinedWriter {
 public:
  void write(const JoinedReport& r, const ReportOptions& /*options*/, std::ostream& out) const override {
    const ProfileResult& p = r.profile;
    const TraceIteration it = median_iteration(p);
    const bool h2d = p.h2d.count > 0 && p.h2d.median > 0;
    const bool d2h = p.d2h.count > 0 && p.d2h.median > 0;
    const bool whole = p.whole.count > 0 && p.whole.median > 0;

    Json events = Json::array();
    std::string device = p.context.device_name.empty() ? std::string("device") : p.context.device_name;
    if (!p.context.device_kind.empty()) device += " (" + p.context.device_kind + ")";
    events.push_back(metadata("process_name", 0, {{"name", device}}));
    events.push_back(metadata(
        "thread_name", kNodeTrack,
        {{"name", "nodes: iteration " + std::to_string(it.index) + " of " + std::to_string(it.count) +
                      " (instrumented pass, median layer sum)"}}));
    events.push_back(metadata("thread_sort_index", kNodeTrack, {{"sort_index", kNodeTrack}}));
    if (h2d || d2h) {
      events.push_back(metadata("thread_name", kCopyTrack, {{"name", "host-device copies (medians, timed apart)"}}));
      events.push_back(metadata("thread_sort_index", kCopyTrack, {{"sort_index", kCopyTrack}}));
    }
    if (whole) {
      events.push_back(metadata("thread_name", kWholeTrack, {{"name", "whole model (clean pass, median)"}}));
      events.push_back(metadata("thread_sort_index", kWholeTrack, {{"sort_index", kWholeTrack}}));
    }

    const double start_us = h2d ? micros(p.h2d.median) : 0.0;
    if (h2d)
      events.push_back(complete("H2D (inputs)", "copy", 0.0, start_us, kCopyTrack,
                                {{"bytes", p.h2d_bytes}, {"median_us", start_us}, {"runs", p.h2d.count}}));

    // Nodes in graph order; r.nodes and p.layers are the same list (join_profile).
    double ts = start_us;
    double layer_sum_us = 0;
    for (size_t i = 0; i < r.nodes.size() && i < p.layers.size(); ++i) {
      const JoinedNode& n = r.nodes[i];
      const std::vector<double>& samples = p.layers[i].time.samples;
      if (it.index >= samples.size()) continue;  // a node with no samples has nothing to draw
      const double dur = micros(samples[it.index]);
      Json args;
      args["op_type"] = n.op_type;
      args["index"] = n.index;
      args["cost_status"] = cost_status_name(n.status);
      args["flops"] = json_optional(n.flops);
      args["bytes"] = json_optional(n.bytes);
      const NodeReport* node = join_layer(p, p.layers[i], r.layer_sum_seconds).node;
      args["input_shapes"] = node ? shapes(node->input_shapes) : std::string();
      args["output_shapes"] = node ? shapes(node->output_shapes) : std::string();
      args["median_us"] = n.median_seconds ? json_number(micros(*n.median_seconds)) : Json(nullptr);
      args["share_of_time"] = json_optional(n.share_of_time);
      args["share_of_flops"] = json_optional(n.share_of_flops);
      args["achieved_gflops"] =
          n.achieved_flops_per_second ? json_number(*n.achieved_flops_per_second / 1e9) : Json(nullptr);
      args["arithmetic_intensity"] = json_optional(n.arithmetic_intensity);
      args["bound"] = bound_name(n.bound);
      args["efficiency"] = json_optional(n.efficiency);
      if (n.upcast_to_fp32) args["upcast_to_fp32"] = true;
      events.push_back(complete(n.name, n.op_type, ts, dur, kNodeTrack, std::move(args)));
      ts += dur;
      layer_sum_us += dur;
    }
    if (d2h)
      events.push_back(complete("D2H (outputs)", "copy", ts, micros(p.d2h.median), kCopyTrack,
                                {{"bytes", p.d2h_bytes}, {"median_us", micros(p.d2h.median)}, {"runs", p.d2h.count}}));
    if (whole) {
      // End-to-end whole-model samples include the copies: they start with the H2D.
      const double whole_start = p.end_to_end ? 0.0 : start_us;
      events.push_back(complete("whole model", "whole", whole_start, micros(p.whole.median), kWholeTrack,
                                {{"median_us", micros(p.whole.median)},
                                 {"runs", p.whole.count},
                                 {"end_to_end", p.end_to_end}}));
    }

    Json other;
    other["tool"] = "modelstat";
    other["kind"] = "trace";
    other["model"] = p.analysis.model_path;
    other["device"] = device;
    other["dtype"] = p.context.dtype;
    other["threads"] = p.context.threads;
    other["batch"] = p.context.batch;
    other["iteration"] = it.index;
    other["iterations"] = it.count;
    other["iteration_layer_sum_us"] = layer_sum_us;
    other["whole_model_median_us"] = real(whole, micros(p.whole.median));
    other["ceilings"] = r.ceilings.source;
    // One event a line: a trace of a thousand nodes stays readable and greppable.
    const auto dump = [](const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); };
    out << "{\"traceEvents\": [\n";
    for (size_t i = 0; i < events.size(); ++i) out << "  " << dump(events[i]) << (i + 1 < events.size() ? ",\n" : "\n");
    out << "],\n\"displayTimeUnit\": \"ms\",\n\"otherData\": " << dump(other) << "}\n";
  }
};

}  // namespace

std::unique_ptr<JoinedWriter> make_joined_trace_writer() { return std::make_unique<JoinedTraceWriter>(); }

}  // namespace modelstat::report

// Device ceilings: lookup, JSON round trip, the saved-file location and the
// labelled datasheet fallback. Measuring them is the profiler's job
// (profiler/ceilings_probe.cc); this file never measures.
#include "modelstat/ceilings.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "analyzer/measurements/atomic_file.hpp"
#include "analyzer/measurements/json_input.hpp"
#include "analyzer/measurements/record_json.hpp"
#include "modelstat/error.hpp"

namespace modelstat {

// 1.1: node overheads; 1.2: op_costs, optimizer_costs; 1.3: fresh allocation
// cost (each optional on read). 2.0: the machine's roofs (compute_roofs,
// memory_levels, bandwidth_sweep): the roofline's compute roof is now the
// machine peak, no longer the matmul curve's best point, which stays as the
// "achievable" roof; a 1.x file (no machine roofs) still loads, and its
// reports fall back to the matmul peak, saying so. 2.2: conv_samples (optional).
// 2.3: depthwise conv samples ("dw", "dw/s2") and conv_silu_seconds_per_byte (optional).
// 2.4: an op class's training forward (train_forward_*; optional), and its
// backward measured from that forward, not from the inference run.
// 2.5: conv_layout_seconds_per_byte (optional) and the Gelu op class.
// 2.6: the Concat/channels-last op class; 1x1 conv samples over one position.
// 2.7: conv_channel_block (optional).
// 2.8: hot_flops_per_second of a conv sample (optional).
// 2.9: train_conv_samples (optional).
// 2.10: int8_weight_products (optional).
// 2.11: int8 conv samples (conv_samples of the kinds "int8 1x1", "int8 kxk",
// "int8 dw"; optional).
// 2.12: product samples (conv_samples of the kind "matmul"; optional).
const char* const kCeilingsSchemaVersion = "2.12";

double DeviceCeilings::peak_flops(const std::string& dtype) const {
  for (const auto& m : matmul)
    if (m.dtype == dtype) return m.flops_per_second;
  return 0;
}

namespace {
// The thread count among `counts` nearest to `threads` (ties: the smaller).
int nearest_threads(const std::vector<int>& counts, int threads) {
  int best = -1;
  for (int c : counts)
    if (best < 0 || std::abs(c - threads) < std::abs(best - threads) ||
        (std::abs(c - threads) == std::abs(best - threads) && c < best))
      best = c;
  return best;
}
}  // namespace

const ComputeRoof* DeviceCeilings::machine_roof(const std::string& dtype, int threads) const {
  std::vector<int> counts;
  for (const auto& r : compute_roofs)
    if (r.dtype == dtype) counts.push_back(r.threads);
  if (counts.empty()) return nullptr;
  const int t = nearest_threads(counts, threads);
  const ComputeRoof* best = nullptr;
  for (const auto& r : compute_roofs)
    if (r.dtype == dtype && r.threads == t && (!best || r.flops_per_second > best->flops_per_second)) best = &r;
  return best;
}

std::vector<MemoryLevel> DeviceCeilings::memory_levels_for(int threads) const {
  std::vector<int> counts;
  for (const auto& l : memory_levels) counts.push_back(l.threads);
  std::vector<MemoryLevel> out;
  if (counts.empty()) return out;
  const int t = nearest_threads(counts, threads);
  for (const auto& l : memory_levels)
    if (l.threads == t) out.push_back(l);
  return out;
}

const OpCost* DeviceCeilings::op_cost(const std::string& key) const {
  for (const auto& c : op_costs)
    if (c.op == key) return &c;
  return nullptr;
}

double OptimizerUpdateCost::seconds_per_element_at(double elements) const {
  const double lo = double(tensor_elements), hi = double(streamed_tensor_elements);
  if (streamed_seconds_per_element <= 0 || lo <= 0 || hi <= lo || elements <= lo) return seconds_per_element;
  if (elements >= hi) return streamed_seconds_per_element;
  const double t = std::log(elements / lo) / std::log(hi / lo);
  return seconds_per_element + t * (streamed_seconds_per_element - seconds_per_element);
}

const OptimizerUpdateCost* DeviceCeilings::optimizer_cost(const std::string& optimizer) const {
  for (const auto& c : optimizer_costs)
    if (c.optimizer == optimizer) return &c;
  return nullptr;
}

double DeviceCeilings::matmul_flops_at(const std::string& dtype, double n) const {
  for (const auto& m : matmul) {
    if (m.dtype != dtype) continue;
    if (m.curve.empty()) return m.flops_per_second;
    if (n <= double(m.curve.front().n)) return m.curve.front().flops_per_second;
    if (n >= double(m.curve.back().n)) return m.curve.back().flops_per_second;
    for (size_t i = 1; i < m.curve.size(); ++i) {
      const auto& a = m.curve[i - 1];
      const auto& b = m.curve[i];
      if (n > double(b.n)) continue;
      // Log-log interpolation: throughput grows roughly as a power of size
      // until it saturates, so straight lines on log axes fit the curve.
      const double t = (std::log(n) - std::log(double(a.n))) / (std::log(double(b.n)) - std::log(double(a.n)));
      return std::exp(std::log(a.flops_per_second) + t * (std::log(b.flops_per_second) - std::log(a.flops_per_second)));
    }
    return m.flops_per_second;
  }
  return 0;
}

namespace {
// The rate at (m, n, k) from the samples of `kind` (rate_of(sample): 0 leaves
// a sample out): the geometric mean of the (up to) four nearest in log2 (M, N,
// K), weighted by the inverse square of their distance; distances in log2
// units of each dimension, so a product twice as wide in one dimension is one
// unit away, whichever dimension it is. 0 when no sample of the kind has a rate.
template <typename Sample, typename RateOf>
double nearest_samples_rate(const std::vector<Sample>& samples, const std::string& kind, double m, double n, double k,
                            RateOf rate_of) {
  struct Near {
    double distance2, rate;
  };
  std::vector<Near> near;
  if (!(m > 0 && n > 0 && k > 0)) return 0;
  for (const Sample& s : samples) {
    if (s.kind != kind || s.m <= 0 || s.n <= 0 || s.k <= 0) continue;
    const double rate = rate_of(s);
    if (!(rate > 0)) continue;
    const double dm = std::log2(m / double(s.m)), dn = std::log2(n / double(s.n)), dk = std::log2(k / double(s.k));
    near.push_back({dm * dm + dn * dn + dk * dk, rate});
  }
  if (near.empty()) return 0;
  const size_t count = std::min<size_t>(4, near.size());
  std::partial_sort(near.begin(), near.begin() + count, near.end(),
                    [](const Near& a, const Near& b) { return a.distance2 < b.distance2; });
  if (near.front().distance2 < 1e-12) return near.front().rate;
  double weights = 0, log_rate = 0;
  for (size_t i = 0; i < count; ++i) {
    const double w = 1.0 / near[i].distance2;
    weights += w;
    log_rate += w * std::log(near[i].rate);
  }
  return std::exp(log_rate / weights);
}
}  // namespace

double DeviceCeilings::conv_flops_at(const std::string& kind, double m, double n, double k, double cold_share) const {
  const double cold = std::clamp(cold_share, 0.0, 1.0);
  return nearest_samples_rate(conv_samples, kind, m, n, k, [cold](const ConvSample& s) {
    if (s.flops_per_second <= 0) return 0.0;
    // Time-weighted: seconds per FLOP of the two conditions in their shares.
    const double hot = s.hot_flops_per_second > 0 ? s.hot_flops_per_second : s.flops_per_second;
    return 1.0 / ((1.0 - cold) / hot + cold / s.flops_per_second);
  });
}

double DeviceCeilings::conv_seconds_at(const std::string& kind, double m, double n, double k, double cold_share) const {
  const double rate = conv_flops_at(kind, m, n, k, cold_share);
  if (rate <= 0) return 0;
  double lo_m = 0, lo_n = 0, lo_k = 0;  // the smallest of each dimension among the kind's samples
  for (const ConvSample& s : conv_samples) {
    if (s.kind != kind || s.flops_per_second <= 0) continue;
    lo_m = lo_m > 0 ? std::min(lo_m, double(s.m)) : double(s.m);
    lo_n = lo_n > 0 ? std::min(lo_n, double(s.n)) : double(s.n);
    lo_k = lo_k > 0 ? std::min(lo_k, double(s.k)) : double(s.k);
  }
  const double seconds = 2.0 * m * n * k / rate;
  const double cm = std::max(m, lo_m), cn = std::max(n, lo_n), ck = std::max(k, lo_k);
  if (cm == m && cn == n && ck == k) return seconds;
  const double floor_rate = conv_flops_at(kind, cm, cn, ck, cold_share);
  if (floor_rate <= 0) return seconds;
  // Between a call's fixed part (the cheapest sample's time) and the raised
  // product's time, in proportion to the work.
  const double raised = 2.0 * cm * cn * ck / floor_rate;
  const double call = std::min(raised, conv_call_seconds(kind));
  return std::max(seconds, call + (raised - call) * (m * n * k) / (cm * cn * ck));
}

double DeviceCeilings::conv_call_seconds(const std::string& kind) const {
  double least = 0;
  for (const ConvSample& s : conv_samples) {
    if (s.kind != kind || s.flops_per_second <= 0) continue;
    const double seconds = 2.0 * double(s.m) * double(s.n) * double(s.k) / s.flops_per_second;
    least = least > 0 ? std::min(least, seconds) : seconds;
  }
  return least;
}

bool DeviceCeilings::train_conv_rates_at(const std::string& kind, double m, double n, double k, double& forward,
                                         double& backward) const {
  forward = nearest_samples_rate(train_conv_samples, kind, m, n, k,
                                 [](const TrainConvSample& s) { return s.forward_flops_per_second; });
  backward = nearest_samples_rate(train_conv_samples, kind, m, n, k,
                                  [](const TrainConvSample& s) { return s.backward_flops_per_second; });
  if (forward > 0 && backward > 0) return true;
  forward = backward = 0;
  return false;
}

// ------------------------------------------------------------ the records' JSON
// One key set (docs/ceilings.md) for the saved file, `modelstat device -f json`
// and every document that embeds ceilings (report JSON, fit JSON).

void to_json(Json& j, const MatmulCeiling& m) {
  Json curve = Json::array();
  for (const auto& p : m.curve) curve.push_back({{"n", p.n}, {"flops_per_second", p.flops_per_second}});
  j = Json{{"dtype", m.dtype}, {"flops_per_second", m.flops_per_second}, {"best_size", m.best_size},
           {"curve", std::move(curve)}};
}

// The readers below check types and ranges field by field (json_input.hpp), so
// a refused file names the field: every rate is divided by or logged (positive),
// every cost is a time (finite, not negative), every size and count is a whole
// number in a plausible range.
namespace {
constexpr int64_t kMaxMatmulSize = int64_t(1) << 20;  // n of an n x n x n product
constexpr int64_t kMaxBytes = int64_t(1) << 60;       // a buffer size
constexpr int64_t kMaxThreads = 1 << 16;
}  // namespace

void from_json(const Json& j, MatmulCeiling& m) {
  m.dtype = json_string(j, "dtype");
  m.flops_per_second = json_number(j, "flops_per_second", JsonNumber::Positive);
  m.best_size = json_integer_or(j, "best_size", 0, kMaxMatmulSize, 0);
  m.curve.clear();
  if (const Json* curve = json_field_if(j, "curve")) {
    if (!curve->is_array()) json_expected(*curve, "an array");
    for (const Json& p : *curve)
      m.curve.push_back({json_integer(p, "n", 1, kMaxMatmulSize), json_number(p, "flops_per_second", JsonNumber::Positive)});
  }
  // matmul_flops_at interpolates between neighbours in n.
  std::sort(m.curve.begin(), m.curve.end(), [](const auto& a, const auto& b) { return a.n < b.n; });
}

void to_json(Json& j, const ComputeRoof& r) {
  j = Json{{"dtype", r.dtype}, {"kernel", r.kernel}, {"threads", r.threads},
           {"flops_per_second", r.flops_per_second}, {"measured", r.measured}};
}

void from_json(const Json& j, ComputeRoof& r) {
  r.dtype = json_string(j, "dtype");
  r.kernel = json_string_or(j, "kernel");
  r.threads = static_cast<int>(json_integer(j, "threads", 0, kMaxThreads));
  r.flops_per_second = json_number(j, "flops_per_second", JsonNumber::Positive);
  const Json* measured = json_field_if(j, "measured");
  if (measured && !measured->is_boolean()) json_expected(*measured, "true or false");
  r.measured = measured ? measured->get<bool>() : true;
}

void to_json(Json& j, const MemoryLevel& l) {
  j = Json{{"level", l.level},
           {"threads", l.threads},
           {"capacity_bytes", l.capacity_bytes},
           {"measured_edge_bytes", l.measured_edge_bytes},
           {"plateau_from_bytes", l.plateau_from_bytes},
           {"plateau_to_bytes", l.plateau_to_bytes},
           {"bytes_per_second", l.bytes_per_second},
           {"read_bytes_per_second", l.read_bytes_per_second},
           {"read_write_bytes_per_second", l.read_write_bytes_per_second}};
}

void from_json(const Json& j, MemoryLevel& l) {
  l.level = json_string(j, "level");
  l.threads = static_cast<int>(json_integer(j, "threads", 0, kMaxThreads));
  l.capacity_bytes = json_integer_or(j, "capacity_bytes", 0, kMaxBytes, 0);
  l.measured_edge_bytes = json_integer_or(j, "measured_edge_bytes", 0, kMaxBytes, 0);
  l.plateau_from_bytes = json_integer_or(j, "plateau_from_bytes", 0, kMaxBytes, 0);
  l.plateau_to_bytes = json_integer_or(j, "plateau_to_bytes", 0, kMaxBytes, 0);
  l.bytes_per_second = json_number(j, "bytes_per_second", JsonNumber::Positive);
  // 2.0 files have the read rate only: it was the roof.
  l.read_bytes_per_second =
      j.contains("read_bytes_per_second") ? json_number(j, "read_bytes_per_second", JsonNumber::NonNegative) : 0.0;
  if (l.read_bytes_per_second == 0) l.read_bytes_per_second = l.bytes_per_second;
  l.read_write_bytes_per_second =
      j.contains("read_write_bytes_per_second") ? json_number(j, "read_write_bytes_per_second", JsonNumber::NonNegative) : 0.0;
}

void to_json(Json& j, const BandwidthPoint& p) {
  j = Json{{"threads", p.threads},
           {"working_set_bytes", p.working_set_bytes},
           {"bytes_per_second", p.bytes_per_second},
           {"read_write_bytes_per_second", p.read_write_bytes_per_second}};
}

void from_json(const Json& j, BandwidthPoint& p) {
  p.threads = static_cast<int>(json_integer(j, "threads", 0, kMaxThreads));
  p.working_set_bytes = json_integer(j, "working_set_bytes", 1, kMaxBytes);
  p.bytes_per_second = json_number(j, "bytes_per_second", JsonNumber::Positive);
  p.read_write_bytes_per_second =
      j.contains("read_write_bytes_per_second") ? json_number(j, "read_write_bytes_per_second", JsonNumber::NonNegative) : 0.0;
}

void to_json(Json& j, const ConvSample& c) {
  j = Json{{"kind", c.kind}, {"m", c.m}, {"n", c.n}, {"k", c.k}, {"flops_per_second", c.flops_per_second}};
  if (c.hot_flops_per_second > 0) j["hot_flops_per_second"] = c.hot_flops_per_second;
}

void from_json(const Json& j, ConvSample& c) {
  constexpr int64_t kMaxDim = int64_t(1) << 40;
  c.kind = json_string(j, "kind");
  c.m = json_integer(j, "m", 1, kMaxDim);
  c.n = json_integer(j, "n", 1, kMaxDim);
  c.k = json_integer(j, "k", 1, kMaxDim);
  c.flops_per_second = json_number(j, "flops_per_second", JsonNumber::Positive);
  c.hot_flops_per_second =
      j.contains("hot_flops_per_second") ? json_number(j, "hot_flops_per_second", JsonNumber::Positive) : 0.0;
}

void to_json(Json& j, const TrainConvSample& c) {
  j = Json{{"kind", c.kind},
           {"m", c.m},
           {"n", c.n},
           {"k", c.k},
           {"forward_flops_per_second", c.forward_flops_per_second},
           {"backward_flops_per_second", c.backward_flops_per_second}};
}

void from_json(const Json& j, TrainConvSample& c) {
  constexpr int64_t kMaxDim = int64_t(1) << 40;
  c.kind = json_string(j, "kind");
  c.m = json_integer(j, "m", 1, kMaxDim);
  c.n = json_integer(j, "n", 1, kMaxDim);
  c.k = json_integer(j, "k", 1, kMaxDim);
  c.forward_flops_per_second = json_number(j, "forward_flops_per_second", JsonNumber::Positive);
  c.backward_flops_per_second = json_number(j, "backward_flops_per_second", JsonNumber::Positive);
}

void to_json(Json& j, const OpCost& o) {
  j = Json{{"op", o.op},
           {"probe", o.probe},
           {"small_bytes", o.small_bytes},
           {"large_bytes", o.large_bytes},
           {"fixed_seconds", o.fixed_seconds},
           {"seconds_per_byte", o.seconds_per_byte},
           {"backward_fixed_seconds", o.backward_fixed_seconds},
           {"backward_seconds_per_byte", o.backward_seconds_per_byte},
           {"backward_ratio", o.backward_ratio},
           {"train_forward_fixed_seconds", o.train_forward_fixed_seconds},
           {"train_forward_seconds_per_byte", o.train_forward_seconds_per_byte},
           {"train_forward_ratio", o.train_forward_ratio}};
}

void from_json(const Json& j, OpCost& o) {
  constexpr JsonNumber cost = JsonNumber::NonNegative;
  o.op = json_string(j, "op");
  o.probe = json_string_or(j, "probe");
  o.small_bytes = json_integer_or(j, "small_bytes", 0, kMaxBytes, 0);
  o.large_bytes = json_integer_or(j, "large_bytes", 0, kMaxBytes, 0);
  o.fixed_seconds = json_number(j, "fixed_seconds", cost);
  o.seconds_per_byte = json_number(j, "seconds_per_byte", cost);
  o.backward_fixed_seconds = json_number_or(j, "backward_fixed_seconds", cost, 0.0);
  o.backward_seconds_per_byte = json_number_or(j, "backward_seconds_per_byte", cost, 0.0);
  o.backward_ratio = json_number_or(j, "backward_ratio", cost, 0.0);
  o.train_forward_fixed_seconds = json_number_or(j, "train_forward_fixed_seconds", cost, 0.0);
  o.train_forward_seconds_per_byte = json_number_or(j, "train_forward_seconds_per_byte", cost, 0.0);
  o.train_forward_ratio = json_number_or(j, "train_forward_ratio", cost, 0.0);
}

void to_json(Json& j, const OptimizerUpdateCost& o) {
  j = Json{{"optimizer", o.optimizer},
           {"probe", o.probe},
           {"per_tensor_seconds", o.per_tensor_seconds},
           {"seconds_per_element", o.seconds_per_element},
           {"tensor_elements", o.tensor_elements},
           {"streamed_seconds_per_element", o.streamed_seconds_per_element},
           {"streamed_tensor_elements", o.streamed_tensor_elements}};
}

void from_json(const Json& j, OptimizerUpdateCost& o) {
  o.optimizer = json_string(j, "optimizer");
  o.probe = json_string_or(j, "probe");
  o.per_tensor_seconds = json_number(j, "per_tensor_seconds", JsonNumber::NonNegative);
  o.seconds_per_element = json_number(j, "seconds_per_element", JsonNumber::NonNegative);
  o.tensor_elements = json_integer_or(j, "tensor_elements", 0, kMaxBytes, 0);
  o.streamed_seconds_per_element = json_number_or(j, "streamed_seconds_per_element", JsonNumber::NonNegative, 0.0);
  o.streamed_tensor_elements = json_integer_or(j, "streamed_tensor_elements", 0, kMaxBytes, 0);
}

void to_json(Json& j, const DeviceCeilings& c) {
  j = Json::object();
  j["device_kind"] = c.device_kind;
  j["device_name"] = c.device_name;
  j["threads"] = c.threads;
  j["source"] = c.source;
  j["date"] = c.date;
  j["host"] = c.host;
  j["torch_version"] = c.torch_version;
  j["memory_bandwidth_bytes_per_second"] = c.memory_bandwidth;
  j["copy_bytes"] = c.copy_bytes;
  j["op_overhead_seconds"] = c.op_overhead_seconds;
  j["node_overhead_seconds"] = c.node_overhead_seconds;
  j["train_node_overhead_seconds"] = c.train_node_overhead_seconds;
  j["fresh_allocation_threshold_bytes"] = c.fresh_allocation_threshold_bytes;
  j["fresh_allocation_seconds_per_byte"] = c.fresh_allocation_seconds_per_byte;
  j["matmul"] = c.matmul;
  j["op_costs"] = c.op_costs;
  j["conv_samples"] = c.conv_samples;
  j["train_conv_samples"] = c.train_conv_samples;
  j["conv_residual_seconds_per_byte"] = c.conv_residual_seconds_per_byte;
  j["conv_silu_seconds_per_byte"] = c.conv_silu_seconds_per_byte;
  j["conv_layout_seconds_per_byte"] = c.conv_layout_seconds_per_byte;
  j["conv_channel_block"] = c.conv_channel_block;
  j["int8_weight_products"] = c.int8_weight_products;
  j["optimizer_costs"] = c.optimizer_costs;
  j["compute_roofs"] = c.compute_roofs;
  j["memory_levels"] = c.memory_levels;
  j["bandwidth_sweep"] = c.bandwidth_sweep;
  j["notes"] = c.notes;
}

namespace {

// An optional array field, each element read by from_json; empty when absent.
template <typename T>
std::vector<T> optional_records(const Json& j, const char* key) {
  std::vector<T> out;
  const Json* array = json_field_if(j, key);
  if (!array) return out;
  if (!array->is_array()) json_expected(*array, "an array");
  for (const Json& element : *array) from_json(element, out.emplace_back());
  return out;
}

}  // namespace

void from_json(const Json& j, DeviceCeilings& c) {
  constexpr JsonNumber cost = JsonNumber::NonNegative;
  c.device_kind = json_string(j, "device_kind");
  if (c.device_kind != "cpu" && c.device_kind != "cuda") json_expected(j, "device_kind", "\"cpu\" or \"cuda\"");
  c.device_name = json_string_or(j, "device_name");
  c.threads = static_cast<int>(json_integer_or(j, "threads", 0, kMaxThreads, 0));
  c.source = json_string(j, "source");
  c.date = json_string_or(j, "date");
  c.host = json_string_or(j, "host");
  c.torch_version = json_string_or(j, "torch_version");
  c.memory_bandwidth = json_number(j, "memory_bandwidth_bytes_per_second", JsonNumber::Positive);
  c.copy_bytes = json_integer_or(j, "copy_bytes", 0, kMaxBytes, 0);
  c.op_overhead_seconds = json_number_or(j, "op_overhead_seconds", cost, 0.0);
  c.node_overhead_seconds = json_number_or(j, "node_overhead_seconds", cost, 0.0);
  c.train_node_overhead_seconds = json_number_or(j, "train_node_overhead_seconds", cost, 0.0);
  c.fresh_allocation_threshold_bytes = json_integer_or(j, "fresh_allocation_threshold_bytes", 0, kMaxBytes, 0);
  c.fresh_allocation_seconds_per_byte = json_number_or(j, "fresh_allocation_seconds_per_byte", cost, 0.0);
  json_array(j, "matmul");  // required, unlike the lists after it
  c.matmul = optional_records<MatmulCeiling>(j, "matmul");
  c.op_costs = optional_records<OpCost>(j, "op_costs");
  c.conv_samples = optional_records<ConvSample>(j, "conv_samples");
  c.train_conv_samples = optional_records<TrainConvSample>(j, "train_conv_samples");
  c.conv_residual_seconds_per_byte = json_number_or(j, "conv_residual_seconds_per_byte", cost, 0.0);
  c.conv_silu_seconds_per_byte = json_number_or(j, "conv_silu_seconds_per_byte", cost, 0.0);
  c.conv_layout_seconds_per_byte = json_number_or(j, "conv_layout_seconds_per_byte", cost, 0.0);
  c.conv_channel_block = json_integer_or(j, "conv_channel_block", 0, 1024, 0);
  c.int8_weight_products = json_integer_or(j, "int8_weight_products", 0, 2, 0);
  c.optimizer_costs = optional_records<OptimizerUpdateCost>(j, "optimizer_costs");
  c.compute_roofs = optional_records<ComputeRoof>(j, "compute_roofs");
  c.memory_levels = optional_records<MemoryLevel>(j, "memory_levels");
  c.bandwidth_sweep = optional_records<BandwidthPoint>(j, "bandwidth_sweep");
  c.notes.clear();
  if (const Json* notes = json_field_if(j, "notes")) {
    if (!notes->is_array()) json_expected(*notes, "an array");
    for (const Json& n : *notes) c.notes.push_back(json_string_value(n));
  }
}

// ------------------------------------------------------------------ the file

std::string ceilings_to_json(const DeviceCeilings& c) {
  Json j;
  j["schema_version"] = kCeilingsSchemaVersion;
  const Json record = c;
  for (auto it = record.begin(); it != record.end(); ++it) j[it.key()] = it.value();
  return j.dump(2) + "\n";
}

namespace {

DeviceCeilings ceilings_from_document(const Json& j, const std::string& origin) {
  return read_json_record(j, origin, [](const Json& doc) {
    const std::string version = json_string(doc, "schema_version");
    // 1.x files (before the machine roofs) load: every field 2.0 added is optional.
    const std::string major = version.substr(0, version.find('.'));
    if (major != "1" && major != "2")
      json_expected(doc, "schema_version",
                    std::string("a version this modelstat reads (1.x or 2.x; it writes ") + kCeilingsSchemaVersion + ")");
    DeviceCeilings c;
    from_json(doc, c);
    return c;
  });
}

}  // namespace

DeviceCeilings ceilings_from_json(const std::string& text, const std::string& origin) {
  const std::string where = origin.empty() ? std::string("ceilings JSON") : origin;
  return ceilings_from_document(parse_json_document(text, where), where);
}

std::string default_ceilings_path(const std::string& device_kind) {
  std::string dir;
  if (const char* d = std::getenv("MODELSTAT_CEILINGS_DIR"); d && *d) {
    dir = d;
  } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    dir = std::string(x) + "/modelstat";
  } else if (const char* h = std::getenv("HOME"); h && *h) {
    dir = std::string(h) + "/.cache/modelstat";
  } else {
    dir = ".modelstat";
  }
  return dir + "/ceilings-" + device_kind + ".json";
}

namespace {

void make_parents(const std::string& path) {
  for (size_t pos = path.find('/', 1); pos != std::string::npos; pos = path.find('/', pos + 1)) {
    const std::string dir = path.substr(0, pos);
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
      throw Error(ErrorKind::Runtime, "cannot create folder " + dir + ": " + std::strerror(errno));
  }
}

}  // namespace

void save_ceilings(const DeviceCeilings& c, const std::string& path) {
  make_parents(path);
  // A reader never sees half a file, and a failed save keeps the older one.
  write_file_atomically(path, [&](std::ostream& out) { out << ceilings_to_json(c); });
}

std::optional<DeviceCeilings> load_ceilings(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) return std::nullopt;
  return ceilings_from_document(read_json_file(path), path);
}

namespace {

struct Datasheet {
  const char* name;
  const char* device_name;
  double bandwidth;  // bytes/s
  double fp32, tf32, fp16, bf16;  // dense FLOP/s (no sparsity)
};

// Vendor datasheet dense peaks (boost clocks). Real kernels reach less; this is
// why measured ceilings are the default and these are only a labelled fallback.
constexpr Datasheet kDatasheets[] = {
    {"h100-sxm", "NVIDIA H100 SXM5 80GB", 3.35e12, 66.9e12, 494.7e12, 989.4e12, 989.4e12},
    {"h100-pcie", "NVIDIA H100 PCIe 80GB", 2.0e12, 51.2e12, 378.0e12, 756.0e12, 756.0e12},
    {"h200", "NVIDIA H200 141GB", 4.8e12, 66.9e12, 494.7e12, 989.4e12, 989.4e12},
    {"a100-sxm", "NVIDIA A100 SXM4 80GB", 2.039e12, 19.5e12, 156.0e12, 312.0e12, 312.0e12},
    {"l4", "NVIDIA L4", 0.3e12, 30.3e12, 60.0e12, 121.0e12, 121.0e12},
    {"t4", "NVIDIA T4", 0.32e12, 8.1e12, 8.1e12, 65.0e12, 0.0},
};

}  // namespace

std::vector<std::string> datasheet_names() {
  std::vector<std::string> names;
  for (const auto& d : kDatasheets) names.push_back(d.name);
  return names;
}

DeviceCeilings datasheet_ceilings(const std::string& name) {
  for (const auto& d : kDatasheets) {
    if (name != d.name) continue;
    DeviceCeilings c;
    c.device_kind = "cuda";
    c.device_name = d.device_name;
    c.source = std::string("datasheet: ") + d.name;
    c.memory_bandwidth = d.bandwidth;
    const std::pair<const char*, double> peaks[] = {{"fp32", d.fp32}, {"tf32", d.tf32}, {"fp16", d.fp16}, {"bf16", d.bf16}};
    for (const auto& [dtype, flops] : peaks) {
      if (flops <= 0) continue;
      MatmulCeiling m;
      m.dtype = dtype;
      m.flops_per_second = flops;
      c.matmul.push_back(m);
    }
    c.notes.push_back("vendor datasheet peaks, not measured: real kernels reach less; run 'modelstat device'");
    return c;
  }
  std::string known;
  for (const auto& n : datasheet_names()) known += (known.empty() ? "" : ", ") + n;
  throw_usage("unknown datasheet '" + name + "' (known: " + known + ")");
}

}  // namespace modelstat

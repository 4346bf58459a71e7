// CSV profile report: one header row, then one row per layer in graph order,
// each followed by the subgraph nodes that ran inside it (depth > 0, named by
// their path, with their parent's index; times per model run). With
// --group-by, one row per group instead (write_groups).
// Times in seconds and rates as the shortest decimal that reads back as the
// same double; integers exact. An empty field is "not computable": no samples,
// or a cost the analysis does not know (unknown is not zero). Quoting is
// RFC 4180 (csv_field), rows end in "\n" like the analysis CSV.
#include <ostream>

#include "tools/writers/format_util.hpp"

namespace modelstat {
namespace report_detail {
namespace {

std::string optional_int(const std::optional<int64_t>& v) {
  return v ? std::to_string(*v) : std::string();
}

std::string optional_double(const std::optional<double>& v) {
  return v ? csv_double(*v) : std::string();
}

class ProfileCsvWriter final : public ProfileWriter {
 public:
  void write(const ProfileResult& r, const ReportOptions& /*options*/, std::ostream& out) const override {
    if (!r.group_by.empty()) return write_groups(r, out);
    out << "index,name,op_type,median_s,mean_s,p90_s,p99_s,min_s,max_s,stddev_s,runs,share_of_layer_sum,"
           "flops,macs,bytes,achieved_gflops,achieved_gbps,upcast_to_fp32,depth,calls_per_run,median_per_"
           "call_s\n";
    const double sum = layer_median_sum(r);
    for (const auto& [layer, in_subgraph] : timed_rows_in_order(r)) {
      const TimingSummary& t = layer->time;
      const bool measured = t.count > 0;
      auto time = [&](double v) { return measured ? csv_double(v) : std::string(); };
      const LayerCost f = join_layer(r, *layer, sum);
      const std::vector<std::string> fields = {
          std::to_string(layer->index),
          csv_field(layer->name),
          csv_field(layer->op_type),
          time(t.median),
          time(t.mean),
          time(t.p90),
          time(t.p99),
          time(t.min),
          time(t.max),
          time(t.stddev),
          std::to_string(t.count),
          optional_double(f.share_of_time),
          optional_int(f.flops),
          optional_int(f.macs),
          optional_int(f.bytes),
          optional_double(giga(f.achieved_flops_per_second)),  // GFLOP/s = flops / median / 1e9
          optional_double(giga(f.achieved_bytes_per_second)),  // GB/s = bytes / median / 1e9
          layer->upcast_to_fp32 ? "1" : "0",
          std::to_string(layer->depth),
          in_subgraph ? csv_double(layer->calls_per_run) : "1",
          in_subgraph ? time(layer->median_per_call) : time(t.median),  // a top-level node: one call a run
      };
      out << join(fields, ",") << '\n';
    }
  }

 private:
  // --group-by: one row per group instead of one per layer, in order of first
  // appearance (LayerGroup): time the sum of its layers' medians.
  static void write_groups(const ProfileResult& r, std::ostream& out) {
    out << "group,first_index,layers,layers_not_exact,median_sum_s,share_of_layer_sum,flops,macs,bytes,"
           "share_of_flops,achieved_gflops,achieved_gbps\n";
    for (const LayerGroup& g : r.groups) {
      const std::vector<std::string> fields = {
          csv_field(g.key),
          std::to_string(g.first_index),
          std::to_string(g.layers),
          std::to_string(g.layers_not_exact),
          csv_double(g.seconds),
          optional_double(g.share_of_time),
          std::to_string(g.flops),
          std::to_string(g.macs),
          std::to_string(g.bytes),
          optional_double(g.share_of_flops),
          optional_double(giga(g.achieved_flops_per_second)),
          optional_double(giga(g.achieved_bytes_per_second)),
      };
      out << join(fields, ",") << '\n';
    }
  }
};

}  // namespace

std::unique_ptr<ProfileWriter> make_profile_csv_writer() {
  return std::make_unique<ProfileCsvWriter>();
}

}  // namespace report_detail
}  // namespace modelstat

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

class ProfileCsvWriter final : public ProfileWriter {
 public:
  void write(const ProfileResult& r, const ReportOptions& /*options*/, std::ostream& out) const override {
    if (!r.group_by.empty()) return write_groups(r, out);
    CsvTable csv(out, {"index", "name", "op_type", "median_s", "mean_s", "p90_s", "p99_s", "min_s", "max_s",
                       "stddev_s", "runs", "share_of_layer_sum", "flops", "macs", "bytes", "achieved_gflops",
                       "achieved_gbps", "upcast_to_fp32", "depth", "calls_per_run", "median_per_call_s"});
    const double sum = layer_median_sum(r);
    for (const auto& [layer, in_subgraph] : timed_rows_in_order(r)) {
      const TimingSummary& t = layer->time;
      const bool measured = t.count > 0;
      auto time = [&](double v) { return measured ? CsvCell::real(v) : CsvCell(); };
      const LayerCost f = join_layer(r, *layer, sum);
      csv.row({CsvCell::count(layer->index), CsvCell::text(layer->name), CsvCell::text(layer->op_type),
               time(t.median), time(t.mean), time(t.p90), time(t.p99), time(t.min), time(t.max), time(t.stddev),
               CsvCell::count(t.count), CsvCell::real(f.share_of_time), CsvCell::count(f.flops),
               CsvCell::count(f.macs), CsvCell::count(f.bytes),
               CsvCell::real(giga(f.achieved_flops_per_second)),  // GFLOP/s = flops / median / 1e9
               CsvCell::real(giga(f.achieved_bytes_per_second)),  // GB/s = bytes / median / 1e9
               CsvCell::flag(layer->upcast_to_fp32), CsvCell::count(layer->depth),
               in_subgraph ? CsvCell::real(layer->calls_per_run) : CsvCell::count(1),
               in_subgraph ? time(layer->median_per_call) : time(t.median)});  // a top-level node: one call a run
    }
  }

 private:
  // --group-by: one row per group instead of one per layer, in order of first
  // appearance (LayerGroup): time the sum of its layers' medians.
  static void write_groups(const ProfileResult& r, std::ostream& out) {
    CsvTable csv(out, {"group", "first_index", "layers", "layers_not_exact", "median_sum_s", "share_of_layer_sum",
                       "flops", "macs", "bytes", "share_of_flops", "achieved_gflops", "achieved_gbps"});
    for (const LayerGroup& g : r.groups)
      csv.row({CsvCell::text(g.key), CsvCell::count(g.first_index), CsvCell::count(g.layers),
               CsvCell::count(g.layers_not_exact), CsvCell::real(g.seconds), CsvCell::real(g.share_of_time),
               CsvCell::count(g.flops), CsvCell::count(g.macs), CsvCell::count(g.bytes),
               CsvCell::real(g.share_of_flops), CsvCell::real(giga(g.achieved_flops_per_second)),
               CsvCell::real(giga(g.achieved_bytes_per_second))});
  }
};

}  // namespace

std::unique_ptr<ProfileWriter> make_profile_csv_writer() {
  return std::make_unique<ProfileCsvWriter>();
}

}  // namespace report_detail
}  // namespace modelstat

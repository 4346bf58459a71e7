// Joined report, CSV: one header row, then one row per node in graph order,
// every node whatever ReportOptions says, each followed by the subgraph nodes
// that ran inside it (depth > 0, named by their path, with their parent's
// index; time and cost per model run). One record type only, so a
// spreadsheet or pandas.read_csv reads it as is; the run's conditions and the
// ceilings are in the JSON report. Units: seconds, FLOP/s, bytes/s, FLOPs per
// byte, shares and efficiency as fractions (0.25 = 25%); doubles as the
// shortest decimal that reads back as the same double, integers exact. An
// empty field is "does not exist": an unknown op's cost, a rate of a node with
// no time, the efficiency of a node with no bound. RFC 4180 quoting. With
// --group-by, one row per group instead (write_groups).
#include <ostream>

#include "tools/writers/joined_writers.hpp"

namespace modelstat::report {

namespace {

using report_detail::CsvCell;
using report_detail::CsvTable;

class JoinedCsvWriter final : public JoinedWriter {
 public:
  void write(const JoinedReport& r, const ReportOptions& /*options*/, std::ostream& out) const override {
    if (!r.profile.group_by.empty()) return write_groups(r, out);
    std::vector<std::string> columns = {"index", "name", "op_type", "cost_status", "macs", "flops", "bytes",
                                        "median_s", "share_of_time", "share_of_flops", "achieved_flops_per_s",
                                        "achieved_bytes_per_s", "arithmetic_intensity", "bound",
                                        "attainable_flops_per_s", "efficiency", "upcast_to_fp32", "depth",
                                        "calls_per_run"};
    if (r.forecast_seconds) columns.push_back("forecast_s");  // a report with fit's forecast
    CsvTable csv(out, columns);
    std::vector<const JoinedNode*> top;
    for (const JoinedNode& n : r.nodes) top.push_back(&n);
    for (const auto& [node, in_subgraph] : report_detail::under_their_parents(top, r.subgraph_nodes)) {
      const JoinedNode& n = *node;
      std::vector<CsvCell> cells = {
          CsvCell::count(n.index), CsvCell::text(n.name), CsvCell::text(n.op_type),
          CsvCell::word(cost_status_name(n.status)), CsvCell::count(n.macs), CsvCell::count(n.flops),
          CsvCell::count(n.bytes), CsvCell::real(n.median_seconds), CsvCell::real(n.share_of_time),
          CsvCell::real(n.share_of_flops), CsvCell::real(n.achieved_flops_per_second),
          CsvCell::real(n.achieved_bytes_per_second), CsvCell::real(n.arithmetic_intensity),
          has_bound(n) ? CsvCell::word(bound_name(n.bound)) : CsvCell(), CsvCell::real(n.attainable_flops_per_second),
          CsvCell::real(n.efficiency), CsvCell::flag(n.upcast_to_fp32), CsvCell::count(n.depth),
          CsvCell::real(n.calls_per_run)};
      if (r.forecast_seconds) cells.push_back(CsvCell::real(n.forecast_seconds));
      csv.row(cells);
    }
  }

 private:
  // --group-by: one row per group instead of one per node (the profile's
  // LayerGroup sums), in order of first appearance, the JSON's group keys.
  static void write_groups(const JoinedReport& r, std::ostream& out) {
    CsvTable csv(out, {"group", "first_index", "count", "nodes_not_exact", "macs", "flops", "bytes", "time_s",
                       "share_of_time", "share_of_flops", "achieved_flops_per_s", "achieved_bytes_per_s"});
    for (const LayerGroup& g : r.profile.groups)
      csv.row({CsvCell::text(g.key), CsvCell::count(g.first_index), CsvCell::count(g.layers),
               CsvCell::count(g.layers_not_exact), CsvCell::count(g.macs), CsvCell::count(g.flops),
               CsvCell::count(g.bytes), CsvCell::real(g.seconds), CsvCell::real(g.share_of_time),
               CsvCell::real(g.share_of_flops), CsvCell::real(g.achieved_flops_per_second),
               CsvCell::real(g.achieved_bytes_per_second)});
  }
};

}  // namespace

std::unique_ptr<JoinedWriter> make_joined_csv_writer() { return std::make_unique<JoinedCsvWriter>(); }

}  // namespace modelstat::report

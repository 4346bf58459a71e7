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

using report_detail::csv_double;
using report_detail::csv_field;

class JoinedCsvWriter final : public JoinedWriter {
 public:
  void write(const JoinedReport& r, const ReportOptions& /*options*/, std::ostream& out) const override {
    if (!r.profile.group_by.empty()) return write_groups(r, out);
    out << "index,name,op_type,cost_status,macs,flops,bytes,median_s,share_of_time,share_of_flops,"
           "achieved_flops_per_s,achieved_bytes_per_s,arithmetic_intensity,bound,attainable_flops_per_s,"
           "efficiency,upcast_to_fp32,depth,calls_per_run"
        << (r.forecast_seconds ? ",forecast_s" : "") << '\n';
    std::vector<const JoinedNode*> top;
    for (const JoinedNode& n : r.nodes) top.push_back(&n);
    for (const auto& [node, in_subgraph] : report_detail::under_their_parents(top, r.subgraph_nodes)) {
      const JoinedNode& n = *node;
      auto count = [](const std::optional<int64_t>& v) { return v ? std::to_string(*v) : std::string(); };
      auto real = [](const std::optional<double>& v) { return v ? csv_double(*v) : std::string(); };
      std::vector<std::string> fields = {
          std::to_string(n.index),
          csv_field(n.name),
          csv_field(n.op_type),
          cost_status_name(n.status),
          count(n.macs),
          count(n.flops),
          count(n.bytes),
          real(n.median_seconds),
          real(n.share_of_time),
          real(n.share_of_flops),
          real(n.achieved_flops_per_second),
          real(n.achieved_bytes_per_second),
          real(n.arithmetic_intensity),
          has_bound(n) ? bound_name(n.bound) : "",
          real(n.attainable_flops_per_second),
          real(n.efficiency),
          n.upcast_to_fp32 ? "1" : "0",
          std::to_string(n.depth),
          csv_double(n.calls_per_run),
      };
      if (r.forecast_seconds) fields.push_back(real(n.forecast_seconds));  // a report with fit's forecast
      out << report_detail::join(fields, ",") << '\n';
    }
  }

 private:
  // --group-by: one row per group instead of one per node (the profile's
  // LayerGroup sums), in order of first appearance, the JSON's group keys.
  static void write_groups(const JoinedReport& r, std::ostream& out) {
    out << "group,first_index,count,nodes_not_exact,macs,flops,bytes,time_s,share_of_time,share_of_flops,"
           "achieved_flops_per_s,achieved_bytes_per_s\n";
    auto real = [](const std::optional<double>& v) { return v ? csv_double(*v) : std::string(); };
    for (const LayerGroup& g : r.profile.groups) {
      const std::vector<std::string> fields = {
          csv_field(g.key),
          std::to_string(g.first_index),
          std::to_string(g.layers),
          std::to_string(g.layers_not_exact),
          std::to_string(g.macs),
          std::to_string(g.flops),
          std::to_string(g.bytes),
          csv_double(g.seconds),
          real(g.share_of_time),
          real(g.share_of_flops),
          real(g.achieved_flops_per_second),
          real(g.achieved_bytes_per_second),
      };
      out << report_detail::join(fields, ",") << '\n';
    }
  }
};

}  // namespace

std::unique_ptr<JoinedWriter> make_joined_csv_writer() { return std::make_unique<JoinedCsvWriter>(); }

}  // namespace modelstat::report

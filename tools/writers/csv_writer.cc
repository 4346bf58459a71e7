// CSV report: one header row, then one row per node, exact integers; with
// --group-by, one row per group instead.
// Quoting follows RFC 4180 (a field holding a comma, a double quote, CR or LF
// is enclosed in double quotes, and its quotes are doubled). Rows end in "\n"
// rather than RFC 4180's CRLF: every CSV reader accepts it, and it is what a
// Unix pipeline expects.
#include <fmt/format.h>

#include <cmath>
#include <ostream>

#include "tools/writers/format_util.hpp"

namespace modelstat {
namespace report_detail {
namespace {

class CsvWriter final : public AnalysisWriter {
 public:
  void write(const AnalysisResult& r, const ReportOptions& /*options*/, std::ostream& out) const override {
    if (!r.group_by.empty()) return write_groups(r, out);
    out << "index,name,op_type,domain,output_shapes,output_dtype,status,params,macs,flops,"
           "bytes_read,bytes_written,weight_bytes,arithmetic_intensity,flops_share,rule,note\n";
    // Subgraph nodes follow their parent, with its index and their path as name.
    for (const auto& [row, in_subgraph] : rows_in_order(r)) {
      const NodeReport& n = *row;
      const NodeCost& c = n.cost;
      // flops_share: this node's fraction (0..1) of the model's total FLOPs, 6 significant digits.
      const std::string share =
          r.totals.flops > 0 ? fmt::format("{:.6g}", double(c.flops) / double(r.totals.flops)) : "0";
      const std::vector<std::string> fields = {
          std::to_string(n.index),
          csv_field(n.name),
          csv_field(n.op_type),
          csv_field(n.domain),
          csv_field(join(n.output_shapes, ";")),  // several outputs: "1x3x4;1x3"
          csv_field(n.output_dtype),
          cost_status_name(c.status),
          std::to_string(c.params),
          std::to_string(c.macs),
          std::to_string(c.flops),
          std::to_string(c.bytes_read),
          std::to_string(c.bytes_written),
          std::to_string(c.weight_bytes),
          csv_double(c.arithmetic_intensity()),
          share,
          csv_field(c.rule),
          csv_field(c.note),
      };
      out << join(fields, ",") << '\n';
    }
  }

 private:
  // --group-by: one row per group instead of one per node (one record type a
  // file), in order of first appearance; first_index: its first node's index.
  static void write_groups(const AnalysisResult& r, std::ostream& out) {
    out << "group,first_index,nodes,nodes_not_exact,params,macs,flops,bytes_read,bytes_written,weight_bytes,"
           "flops_share\n";
    for (const NodeGroup& g : r.groups) {
      const std::string share =
          r.totals.flops > 0 ? fmt::format("{:.6g}", double(g.flops) / double(r.totals.flops)) : "0";
      const std::vector<std::string> fields = {
          csv_field(g.key),
          std::to_string(g.first_index),
          std::to_string(g.nodes),
          std::to_string(g.nodes_not_exact),
          std::to_string(g.params),
          std::to_string(g.macs),
          std::to_string(g.flops),
          std::to_string(g.bytes_read),
          std::to_string(g.bytes_written),
          std::to_string(g.weight_bytes),
          share,
      };
      out << join(fields, ",") << '\n';
    }
  }
};

}  // namespace

std::unique_ptr<AnalysisWriter> make_csv_writer() {
  return std::make_unique<CsvWriter>();
}

}  // namespace report_detail
}  // namespace modelstat

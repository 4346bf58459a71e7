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
    CsvTable csv(out, {"index", "name", "op_type", "domain", "output_shapes", "output_dtype", "status", "params",
                       "macs", "flops", "bytes_read", "bytes_written", "weight_bytes", "arithmetic_intensity",
                       "flops_share", "rule", "note"});
    // Subgraph nodes follow their parent, with its index and their path as name.
    for (const auto& [row, in_subgraph] : rows_in_order(r)) {
      const NodeReport& n = *row;
      const NodeCost& c = n.cost;
      csv.row({CsvCell::count(n.index), CsvCell::text(n.name), CsvCell::text(n.op_type), CsvCell::text(n.domain),
               CsvCell::text(join(n.output_shapes, ";")),  // several outputs: "1x3x4;1x3"
               CsvCell::text(n.output_dtype), CsvCell::word(cost_status_name(c.status)), CsvCell::count(c.params),
               CsvCell::count(c.macs), CsvCell::count(c.flops), CsvCell::count(c.bytes_read),
               CsvCell::count(c.bytes_written), CsvCell::count(c.weight_bytes),
               CsvCell::real(c.arithmetic_intensity()), flops_share(c.flops, r), CsvCell::text(c.rule),
               CsvCell::text(c.note)});
    }
  }

 private:
  // A row's fraction (0..1) of the model's total FLOPs, 6 significant digits; 0 when the total is.
  static CsvCell flops_share(int64_t flops, const AnalysisResult& r) {
    return CsvCell::word(r.totals.flops > 0 ? fmt::format("{:.6g}", double(flops) / double(r.totals.flops)) : "0");
  }

  // --group-by: one row per group instead of one per node (one record type a
  // file), in order of first appearance; first_index: its first node's index.
  static void write_groups(const AnalysisResult& r, std::ostream& out) {
    CsvTable csv(out, {"group", "first_index", "nodes", "nodes_not_exact", "params", "macs", "flops", "bytes_read",
                       "bytes_written", "weight_bytes", "flops_share"});
    for (const NodeGroup& g : r.groups)
      csv.row({CsvCell::text(g.key), CsvCell::count(g.first_index), CsvCell::count(g.nodes),
               CsvCell::count(g.nodes_not_exact), CsvCell::count(g.params), CsvCell::count(g.macs),
               CsvCell::count(g.flops), CsvCell::count(g.bytes_read), CsvCell::count(g.bytes_written),
               CsvCell::count(g.weight_bytes), flops_share(g.flops, r)});
  }
};

}  // namespace

std::unique_ptr<AnalysisWriter> make_csv_writer() {
  return std::make_unique<CsvWriter>();
}

}  // namespace report_detail
}  // namespace modelstat

// GitHub-flavoured Markdown report, for pasting into an issue or a pull request.
#include <fmt/format.h>

#include <cctype>
#include <ostream>

#include "tools/writers/format_util.hpp"

namespace modelstat {
namespace report_detail {
namespace {

class MarkdownWriter final : public AnalysisWriter {
 public:
  void write(const AnalysisResult& r, const ReportOptions& options, std::ostream& out) const override {
    const AnalysisTotals& t = r.totals;
    constexpr Align L = Align::Left, R = Align::Right;

    out << "# modelstat analysis: " << md_text(r.model_path) << "\n\n";
    std::vector<std::string> opsets;
    for (const OpsetImport& o : r.opsets)
      opsets.push_back(fmt::format("{} {}", o.domain.empty() ? "ai.onnx" : o.domain, o.version));
    out << "- producer: " << md_text(r.producer.empty() ? "-" : r.producer) << '\n'
        << "- IR version: " << r.ir_version << '\n'
        << "- opsets: " << md_text(join(opsets, ", ")) << '\n'
        << "- file size: " << bytes_with_exact(r.file_size_bytes) << '\n';
    out << "- inputs: " << md_text(r.inputs.empty() ? "-" : join(graph_value_lines(r.inputs), "; ")) << '\n'
        << "- outputs: " << md_text(r.outputs.empty() ? "-" : join(graph_value_lines(r.outputs), "; ")) << '\n';
    out << '\n';
    if (kCostConvention && *kCostConvention) out << "> " << md_text(kCostConvention) << "\n\n";

    out << "## Summary\n\n";
    MdTable summary({"metric", "value"}, {L, R});
    summary.add_row({"nodes", std::to_string(t.nodes)});
    summary.add_row({"coverage", md_text(coverage_summary(r))});
    summary.add_row({"params (deduplicated)", count_with_exact(t.params)});
    summary.add_row({"MACs", count_with_exact(t.macs)});
    summary.add_row({"FLOPs", count_with_exact(t.flops)});
    summary.add_row({"bytes read", bytes_with_exact(t.bytes_read)});
    summary.add_row({"bytes written", bytes_with_exact(t.bytes_written)});
    summary.add_row({"weight size", bytes_with_exact(t.weight_bytes)});
    std::string peak = bytes_with_exact(t.peak_activation_bytes);
    if (!t.peak_at_node.empty()) peak += " at node " + md_text(t.peak_at_node);
    if (t.peak_is_lower_bound) peak += " (lower bound)";
    peak += " (no buffer sharing)";
    summary.add_row({"peak activations", peak});
    summary.add_row({"input bytes", bytes_with_exact(t.input_bytes)});
    summary.add_row({"output bytes", bytes_with_exact(t.output_bytes)});
    summary.print(out);

    if (!r.group_by.empty()) {
      out << "## " << md_text(groups_title(r.group_by, r.groups.size(), r.nodes.size(), "costs")) << "\n\n";
      MdTable groups({"group", "#", "nodes", "params", "MACs", "FLOPs", "bytes", "%FLOPs", "unknown"},
                     {L, R, R, R, R, R, R, R, R});
      for (const NodeGroup& g : r.groups)
        groups.add_row({md_text(g.key), std::to_string(g.first_index), std::to_string(g.nodes),
                        human_count(g.params), human_count(g.macs), human_count(g.flops),
                        human_bytes(g.bytes()), percent(g.flops, t.flops),
                        std::to_string(g.nodes_not_exact)});
      groups.print(out);
      out << md_text(std::string(kGroupLegend) + "; unknown: nodes without an exact cost.") << "\n\n";
    } else if (options.show_all_nodes && !r.nodes.empty()) {
      out << "## Per-layer costs\n\n";
      MdTable layers(
          {"#", "node", "op", "output shape", "params", "MACs", "FLOPs", "bytes", "%FLOPs", "status"},
          {R, L, L, L, R, R, R, R, R, L});
      for (const auto& [row, in_subgraph] : rows_in_order(r)) {
        const NodeReport& n = *row;
        layers.add_row({in_subgraph ? std::string() : std::to_string(n.index),
                        in_subgraph ? "&nbsp;&nbsp;" + md_text(n.name) : md_text(n.name), md_text(op_label(n)),
                        md_text(join(n.output_shapes, ", ")), human_count(n.cost.params),
                        human_count(n.cost.macs), human_count(n.cost.flops), human_bytes(n.cost.bytes()),
                        percent(n.cost.flops, t.flops),
                        n.cost.shapes.empty() ? status_words(n.cost.status) : "exact, shapes observed"});
      }
      layers.print(out);
    }

    if (!r.by_op_type.empty()) {
      out << "## By op type\n\n";
      MdTable ops({"op", "count", "params", "MACs", "FLOPs", "%FLOPs", "unknown"}, {L, R, R, R, R, R, R});
      for (const OpTypeSummary& s : r.by_op_type)
        ops.add_row({md_text(s.op_type), std::to_string(s.count), human_count(s.params), human_count(s.macs),
                     human_count(s.flops), percent(s.flops, t.flops), std::to_string(s.unknown)});
      ops.print(out);
    }

    if (!r.size_by_dtype.empty()) {
      out << "## Model size by dtype\n\n";
      MdTable sizes({"dtype", "tensors", "elements", "bytes", "share"}, {L, R, R, R, R});
      for (const DTypeSize& d : r.size_by_dtype)
        sizes.add_row({md_text(d.dtype), std::to_string(d.tensors), human_count(d.elements),
                       human_bytes(d.bytes), percent(d.bytes, t.weight_bytes)});
      sizes.print(out);
    }

    if (!r.macs_by_dtype.empty()) {
      out << "## MACs by operand dtype\n\nInteger MACs (ConvInteger, QLinearConv, MatMulInteger, QLinearMatMul) count as MACs.\n\n";
      MdTable macs({"dtype", "nodes", "MACs", "share"}, {L, R, R, R});
      for (const DTypeMacs& d : r.macs_by_dtype)
        macs.add_row({md_text(d.dtype), std::to_string(d.nodes), human_count(d.macs), percent(d.macs, t.macs)});
      macs.print(out);
    }

    if (!r.shared_weights.empty()) {
      out << "## Shared weights\n\n"
          << fmt::format("{} weight{} shared by several nodes, counted once.\n\n", r.shared_weights.size(),
                         r.shared_weights.size() == 1 ? "" : "s");
      MdTable shared({"weight", "elements", "consumers"}, {L, R, L});
      for (const SharedWeight& w : r.shared_weights)
        shared.add_row({md_text(w.name), human_count(w.elements), md_text(join(w.consumers, ", "))});
      shared.print(out);
    }

    const std::vector<const NodeReport*> hot = hotspot_nodes(r, options.top);
    if (!hot.empty()) {
      out << fmt::format("## Hotspots (top {} by FLOPs)\n\n", hot.size());
      MdTable hotspots({"rank", "#", "node", "op", "MACs", "FLOPs", "%FLOPs", "FLOPs/byte"},
                       {R, R, L, L, R, R, R, R});
      for (size_t i = 0; i < hot.size(); ++i) {
        const NodeReport& n = *hot[i];
        hotspots.add_row({std::to_string(i + 1), std::to_string(n.index), md_text(n.name),
                          md_text(op_label(n)), human_count(n.cost.macs), human_count(n.cost.flops),
                          percent(n.cost.flops, t.flops),
                          fmt::format("{:.1f}", n.cost.arithmetic_intensity())});
      }
      hotspots.print(out);
    }

    if (r.decoder) {
      const DecoderAnalysis& d = *r.decoder;
      out << fmt::format("## Decoder at context {} (prefill of {} tokens, one decode step)\n\n", d.context, d.prompt);
      std::vector<Align> aligns;
      for (size_t i = 0; i < decoder_view_header().size(); ++i) aligns.push_back(i == 0 ? L : R);
      MdTable views(decoder_view_header(), aligns);
      for (auto& row : decoder_view_rows(d)) views.add_row(std::move(row));
      views.print(out);
      out << "bytes/token: weights read once per step + KV cache read + written, per token; attention: QK^T, AV, "
             "softmax, scale and mask.\n\n";
    }
    if (r.kv_cache) out << "KV cache: " << md_text(kv_cache_summary(*r.kv_cache)) << "\n\n";
    out << "## Coverage\n\n" << md_text(coverage_summary(r)) << "\n\n";
    if (!r.unknown_dims.empty()) out << "Unknown dims: " << md_text(join_some(r.unknown_dims, ", ", 8)) << "\n\n";
    if (!r.notices.empty()) {
      out << "## Notices\n\n";
      for (const std::string& notice : r.notices) out << "- note: " << md_text(notice) << '\n';
      out << '\n';
    }
    out << fmt::format("_Analysis time: {:.3f} s._\n", r.analysis_seconds);
  }
};

}  // namespace

std::unique_ptr<AnalysisWriter> make_markdown_writer() {
  return std::make_unique<MarkdownWriter>();
}

}  // namespace report_detail
}  // namespace modelstat

// Terminal report: aligned plain-text tables in human units, optional ANSI colour.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "tools/writers/format_util.hpp"

namespace modelstat {
namespace report_detail {
namespace {

constexpr size_t kNameWidth = 40;   // node names wider than this are ellipsized
constexpr size_t kShapeWidth = 32;  // so are output-shape lists
constexpr size_t kWrapWidth = 100;  // the convention paragraph is wrapped here

// A value's text, each distinct value formatted once: the rows of repeated
// blocks repeat their figures, and a 100k-node table formats 500k of them
// (human_count and human_bytes go through fmt). Direct-mapped, a fixed 4096
// entries: a value whose slot another holds is formatted again.
class FormatMemo {
 public:
  template <typename Format>
  const std::string& get(int64_t value, Format format) {
    Slot& s = slots_[size_t(uint64_t(value) * 0x9E3779B97F4A7C15ULL >> 52)];
    if (!s.used || s.value != value) {
      s.text = format(value);
      s.value = value;
      s.used = true;
    }
    return s.text;
  }

 private:
  struct Slot {
    int64_t value = 0;
    bool used = false;
    std::string text;
  };
  std::vector<Slot> slots_ = std::vector<Slot>(4096);
};

std::string opset_text(const OpsetImport& opset) {
  return fmt::format("{} {}", opset.domain.empty() ? "ai.onnx" : opset.domain, opset.version);
}

class TableWriter final : public AnalysisWriter {
 public:
  void write(const AnalysisResult& r, const ReportOptions& options, std::ostream& out) const override {
    const Style style(options.color);
    const AnalysisTotals& t = r.totals;

    // Header block: what was read.
    out << style.bold("modelstat: " + r.model_path) << '\n';
    {
      KeyValueBlock header;
      header.add("producer", r.producer.empty() ? std::string("-") : r.producer);
      header.add("IR version", std::to_string(r.ir_version));
      std::vector<std::string> opsets;
      for (const OpsetImport& o : r.opsets) opsets.push_back(opset_text(o));
      header.add("opsets", join(opsets, ", "));
      header.add("file size", bytes_with_exact(r.file_size_bytes));
      header.add("inputs", graph_value_lines(r.inputs));
      header.add("outputs", graph_value_lines(r.outputs));
      header.print(out);
    }
    out << '\n';
    const char* convention = kCostConvention ? kCostConvention : "";
    out << style.dim(word_wrap(convention, kWrapWidth, "convention: ", "            ")) << "\n\n";

    // Per-layer table, or with --group-by the group rows in its place.
    bool any_inexact = false, any_observed = false;
    if (!r.group_by.empty()) {
      out << style.bold(groups_title(r.group_by, r.groups.size(), r.nodes.size(), "costs")) << '\n';
      TextTable groups({{"group", Align::Left},
                        {"#"},
                        {"nodes"},
                        {"params"},
                        {"MACs"},
                        {"FLOPs"},
                        {"bytes"},
                        {"%FLOPs"},
                        {"unknown"}});
      for (const NodeGroup& g : r.groups)
        groups.add_row(
            {ellipsize(g.key, kNameWidth), std::to_string(g.first_index), std::to_string(g.nodes),
             human_count(g.params), human_count(g.macs), human_count(g.flops), human_bytes(g.bytes()),
             percent(g.flops, t.flops), g.nodes_not_exact ? std::to_string(g.nodes_not_exact) : ""},
            g.nodes_not_exact > 0);
      groups.print(out, style);
      out << "  " << style.dim(std::string(kGroupLegend) + "; unknown: nodes without an exact cost")
          << "\n\n";
    } else if (options.show_all_nodes) {
      out << style.bold(r.subgraph_nodes.empty()
                            ? fmt::format("Per-layer costs ({} nodes)", r.nodes.size())
                            : fmt::format("Per-layer costs ({} nodes; {} more inside subgraphs, indented, costs "
                                          "included in their parent's row)",
                                          r.nodes.size(), r.subgraph_nodes.size()))
          << '\n';
      // The node and shape columns cut what is wider (as ellipsize would at
      // each row): a name or a single shape goes in as a view of itself.
      // The index and the figures are ASCII (human_count, human_bytes,
      // percent, cost_marker): no column-by-character count of their cells.
      constexpr bool kAscii = true;
      TextTable layers({{"#", Align::Right, 0, kAscii},
                        {"node", Align::Left, kNameWidth},
                        {"op", Align::Left},
                        {"output shape", Align::Left, kShapeWidth},
                        {"params", Align::Right, 0, kAscii},
                        {"MACs", Align::Right, 0, kAscii},
                        {"FLOPs", Align::Right, 0, kAscii},
                        {"bytes", Align::Right, 0, kAscii},
                        {"%FLOPs", Align::Right, 0, kAscii},
                        {"st", Align::Left, 0, kAscii}});
      layers.reserve(r.nodes.size() + r.subgraph_nodes.size(), 128);
      // One memo a column: a row's cells are views (add_row_view), and a
      // slot must hold its text until the row is added.
      FormatMemo params, macs, flops, bytes, shares;
      const auto share_of_flops = [&t](int64_t flops) { return percent(flops, t.flops); };
      for (const auto& [row, in_subgraph] : rows_in_order(r)) {
        const NodeReport& n = *row;
        const bool inexact = n.cost.status != CostStatus::Exact;
        any_inexact = any_inexact || inexact;
        // A subgraph node: indented under its parent, named by its path.
        const std::string sub_name = in_subgraph ? "  " + ellipsize(n.name, kNameWidth - 2) : std::string();
        const std::string shapes = n.output_shapes.size() == 1 ? std::string() : join(n.output_shapes, ", ");
        char index[16];  // a top-level row's index, for its view
        const size_t index_size = in_subgraph ? 0 : size_t(std::to_chars(index, index + sizeof index, n.index).ptr - index);
        layers.add_row_view({std::string_view(index, index_size),
                        in_subgraph ? std::string_view(sub_name) : std::string_view(n.name),
                        op_label(n),
                        n.output_shapes.size() == 1 ? std::string_view(n.output_shapes[0]) : std::string_view(shapes),
                        params.get(n.cost.params, human_count),
                        macs.get(n.cost.macs, human_count), flops.get(n.cost.flops, human_count),
                        bytes.get(n.cost.bytes(), human_bytes),
                        shares.get(n.cost.flops, share_of_flops), cost_marker(n.cost)},
                       inexact);
        any_observed = any_observed || !n.cost.shapes.empty();
      }
      layers.print(out, style);
      if (any_inexact) out << "  " << style.dim(std::string("st: ") + kStatusLegend) << '\n';
      if (any_observed) out << "  " << style.dim(std::string("st: ") + kObservedLegend) << '\n';
      out << '\n';
    }

    // Totals.
    out << style.bold("Totals") << '\n';
    {
      KeyValueBlock totals;
      totals.add("nodes", std::to_string(t.nodes));
      totals.add("params", count_with_exact(t.params) + ", deduplicated");
      totals.add("MACs", count_with_exact(t.macs));
      totals.add("FLOPs", count_with_exact(t.flops));
      totals.add("bytes read", bytes_with_exact(t.bytes_read));
      totals.add("bytes written", bytes_with_exact(t.bytes_written));
      totals.add("weight size", bytes_with_exact(t.weight_bytes));
      std::string peak = bytes_with_exact(t.peak_activation_bytes);
      if (!t.peak_at_node.empty()) peak += " at node " + node_ref(t.peak_at_node, t.peak_at_index, kNameWidth);
      if (t.peak_is_lower_bound) peak += " (lower bound: some activation sizes unknown)";
      peak += " (no buffer sharing)";
      totals.add("peak activations", peak);
      totals.add("input bytes", bytes_with_exact(t.input_bytes));
      totals.add("output bytes", bytes_with_exact(t.output_bytes));
      totals.print(out);
    }
    out << '\n';

    if (!r.size_by_dtype.empty()) {
      out << style.bold("Model size by dtype") << '\n';
      TextTable sizes({{"dtype", Align::Left}, {"tensors"}, {"elements"}, {"bytes"}, {"share"}});
      for (const DTypeSize& d : r.size_by_dtype)
        sizes.add_row({d.dtype, std::to_string(d.tensors), human_count(d.elements), human_bytes(d.bytes),
                       percent(d.bytes, t.weight_bytes)});
      sizes.print(out, style);
      out << '\n';
    }

    if (!r.macs_by_dtype.empty()) {
      out << style.bold("MACs by operand dtype") << " (integer MACs count as MACs)" << '\n';
      TextTable macs({{"dtype", Align::Left}, {"nodes"}, {"MACs"}, {"share"}});
      for (const DTypeMacs& d : r.macs_by_dtype)
        macs.add_row({d.dtype, std::to_string(d.nodes), human_count(d.macs), percent(d.macs, t.macs)});
      macs.print(out, style);
      out << '\n';
    }

    if (!r.shared_weights.empty()) {
      out << style.bold(fmt::format("Shared weights: {} weight{} shared by several nodes, counted once",
                                    r.shared_weights.size(), r.shared_weights.size() == 1 ? "" : "s"))
          << '\n';
      TextTable shared({{"weight", Align::Left}, {"elements"}, {"consumers", Align::Left}});
      for (const SharedWeight& w : r.shared_weights) {
        std::vector<std::string> consumers;
        for (const std::string& c : w.consumers) consumers.push_back(ellipsize(c, kNameWidth));
        shared.add_row({ellipsize(w.name, kNameWidth), human_count(w.elements),
                        ellipsize(join(consumers, ", "), 2 * kNameWidth)});
      }
      shared.print(out, style);
      out << '\n';
    }

    if (!r.by_op_type.empty()) {
      out << style.bold("By op type") << '\n';
      TextTable ops(
          {{"op", Align::Left}, {"count"}, {"params"}, {"MACs"}, {"FLOPs"}, {"%FLOPs"}, {"unknown"}});
      for (const OpTypeSummary& s : r.by_op_type)
        ops.add_row({s.op_type, std::to_string(s.count), human_count(s.params), human_count(s.macs),
                     human_count(s.flops), percent(s.flops, t.flops),
                     s.unknown ? std::to_string(s.unknown) : std::string()},
                    s.unknown > 0);
      ops.print(out, style);
      out << '\n';
    }

    const std::vector<const NodeReport*> hot = hotspot_nodes(r, options.top);
    if (!hot.empty()) {
      out << style.bold(fmt::format("Hotspots (top {} by FLOPs)", hot.size())) << '\n';
      TextTable hotspots({{"rank"},
                          {"#"},
                          {"node", Align::Left},
                          {"op", Align::Left},
                          {"MACs"},
                          {"FLOPs"},
                          {"%FLOPs"},
                          {"FLOPs/byte"}});
      for (size_t i = 0; i < hot.size(); ++i) {
        const NodeReport& n = *hot[i];
        hotspots.add_row({std::to_string(i + 1), std::to_string(n.index), ellipsize(n.name, kNameWidth),
                          op_label(n), human_count(n.cost.macs), human_count(n.cost.flops),
                          percent(n.cost.flops, t.flops),
                          fmt::format("{:.1f}", n.cost.arithmetic_intensity())});
      }
      hotspots.print(out, style);
      out << '\n';
    }

    if (r.decoder) {
      const DecoderAnalysis& d = *r.decoder;
      out << style.bold(fmt::format("Decoder at context {} (prefill of {} tokens, one decode step)", d.context,
                                    d.prompt))
          << '\n';
      std::vector<Column> columns;
      for (const std::string& h : decoder_view_header()) columns.push_back({h, columns.empty() ? Align::Left : Align::Right});
      TextTable views(columns);
      for (auto& row : decoder_view_rows(d)) views.add_row(std::move(row));
      views.print(out, style);
      out << "  bytes/token: weights read once per step + KV cache read + written, per token; attention: QK^T, AV, "
             "softmax, scale and mask\n\n";
    }
    if (r.kv_cache) out << "KV cache: " << kv_cache_summary(*r.kv_cache) << '\n';
    const std::string coverage = "coverage: " + coverage_summary(r);
    out << (t.nodes_exact < t.nodes ? style.yellow(coverage) : coverage) << '\n';
    if (!r.unknown_dims.empty()) out << "unknown dims: " << join_some(r.unknown_dims, ", ", 8) << '\n';
    // Wrapped as the profile's notes are; a word wider than a line (a long
    // node name) is broken, never left to make a line hundreds of columns wide.
    for (const std::string& notice : r.notices)
      out << style.yellow(word_wrap(notice, kWrapWidth, "note: ", "      ")) << '\n';
    out << "analysis time: " << human_seconds(r.analysis_seconds) << '\n';
  }
};

}  // namespace

std::unique_ptr<AnalysisWriter> make_table_writer() {
  return std::make_unique<TableWriter>();
}

}  // namespace report_detail
}  // namespace modelstat

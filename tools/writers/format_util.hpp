// Private helpers shared by the report writers (tools/writers/*_writer.cc).
// Everything here formats or selects; nothing computes a cost.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "modelstat/analysis.hpp"
#include "modelstat/joined.hpp"
#include "modelstat/profile.hpp"
#include "tools/writers/writers.hpp"

namespace modelstat {
namespace report_detail {

// Factories, one per file (table_writer.cc, json_writer.cc, ...).
std::unique_ptr<AnalysisWriter> make_table_writer();
std::unique_ptr<AnalysisWriter> make_json_writer();
std::unique_ptr<AnalysisWriter> make_csv_writer();
std::unique_ptr<AnalysisWriter> make_markdown_writer();

// One-character marker of a non-exact row in the human tables ("" when exact)
// and the legend line that explains the markers.
const char* status_marker(CostStatus s);
// The same status in words, for the Markdown's status column ("unknown shape"; "" when exact).
const char* status_words(CostStatus s);
extern const char* const kStatusLegend;
// The marker of a row: status_marker, or kObservedMarker for a cost counted
// on the shapes a run observed (NodeCost::shapes), explained by kObservedLegend.
const char* cost_marker(const NodeCost& c);
extern const char* const kObservedMarker;
extern const char* const kObservedLegend;

// The op cell of a timed row: "Conv", or "Conv^" for a node that ran in fp32
// for want of a kernel for its fp16/bf16 dtype (LayerTiming::upcast_to_fp32),
// and the legend line that explains the marker.
// members: a fused group's head's member count ("Conv+3"); 0 for any other row.
std::string timed_op_text(const std::string& op_type, bool upcast_to_fp32, bool fused = false, size_t members = 0);
// The legend of "*" (LayerTiming::fused_into).
extern const char* const kFusedLegend;
extern const char* const kUpcastLegend;

// --group-by in the human reports: the title of the group rows, which stand in
// for the per-node rows ("Per-block costs (--group-by block: 7 groups of 165
// nodes)"; `what` is "costs" or "times"), and the legend under them.
std::string groups_title(const std::string& group_by, size_t groups, size_t nodes, const std::string& what);
extern const char* const kGroupLegend;

// "12.3%" of part in whole, one decimal; "-" when whole is 0; "<0.1%" and
// ">99.9%" for shares that would otherwise round to nothing or to everything.
std::string percent(int64_t part, int64_t whole);

// Display width of UTF-8 text in terminal columns, counting one column per
// code point (wide CJK glyphs are not special-cased).
size_t display_width(std::string_view text);

// Shortens text to at most max_width columns by cutting its middle and
// putting "…" there: ONNX node names carry the most information at both ends
// ("/encoder/layer.11/…/attention/MatMul"). Never splits a UTF-8 sequence.
std::string ellipsize(const std::string& text, size_t max_width);
// A node named in a line of text: its name, or when wider than max_width,
// "#<index> " and the name ellipsized (the index tells apart two names that
// elide alike; the per-node tables list it in their "#" column).
std::string node_ref(const std::string& name, int index, size_t max_width);

// Joins strings with sep.
std::string join(const std::vector<std::string>& parts, const std::string& sep);
// Graph inputs or outputs as the human formats list them, "name: dtype dims" each.
std::vector<std::string> graph_value_lines(const std::vector<GraphValue>& values);
// Rows in reading order: each top-level row, then the subgraph rows whose
// `index` is its own (a list grouped by index, in index order), flagged true;
// subgraph rows whose parent is not among `top` come last. One rule for the
// analysis's rows, the profile's and the joined report's.
template <typename Row>
std::vector<std::pair<const Row*, bool>> under_their_parents(const std::vector<const Row*>& top,
                                                             const std::vector<Row>& subgraph_rows) {
  std::vector<std::pair<const Row*, bool>> rows;
  rows.reserve(top.size() + subgraph_rows.size());
  size_t sub = 0;
  for (const Row* row : top) {
    rows.push_back({row, false});
    for (; sub < subgraph_rows.size() && subgraph_rows[sub].index == row->index; ++sub)
      rows.push_back({&subgraph_rows[sub], true});
  }
  for (; sub < subgraph_rows.size(); ++sub) rows.push_back({&subgraph_rows[sub], true});
  return rows;
}
// Every row in reading order: each top-level node, then the subgraph nodes
// one run executes under it (AnalysisResult::subgraph_nodes), flagged true.
std::vector<std::pair<const NodeReport*, bool>> rows_in_order(const AnalysisResult& result);
// The first `most` parts joined, then "... and N more (-f json lists all)":
// a detector's hundreds of unnamed `unk__N` dims stay one readable line.
std::string join_some(const std::vector<std::string>& parts, const std::string& sep, size_t most);

// Op label for humans: "Conv", or "com.microsoft:FusedConv" outside the
// default domain.
std::string op_label(const NodeReport& node);

// The top-n nodes by FLOPs (descending; ties keep execution order), leaving
// out nodes with no FLOPs. Empty when n <= 0.
std::vector<const NodeReport*> hotspot_nodes(const AnalysisResult& result, int n);

// Distinct op types of the nodes with status UnknownOp, in first-seen order.
std::vector<std::string> unknown_op_types(const AnalysisResult& result);

// Coverage as a percentage with one decimal, never showing 100.0% unless
// every node is exact (rounds down): "98.4%".
std::string coverage_percent(const AnalysisTotals& totals);

// "123/125 nodes exact (98.4%); 1 unknown shape, 1 unknown op (NonMaxSuppression)"
std::string coverage_summary(const AnalysisResult& result);

// The KV-cache line and the decoder views' table (prefill, decode), as cells:
// the table and Markdown writers format the same rows.
std::string kv_cache_summary(const KvCache& cache);
std::vector<std::string> decoder_view_header();
std::vector<std::vector<std::string>> decoder_view_rows(const DecoderAnalysis& d);

// ---------------------------------------------------------------- human units

// human_seconds, human_bytes, human_count, rate_text, ...: units.hpp.

// percent() for measured (floating-point) quantities, with the same rules:
// one decimal, "-" when whole is 0 or either is not finite, "<0.1%" / ">99.9%".
std::string percent_of(double part, double whole);

// A relative difference as a signed percentage with one decimal: 0.031 -> "+3.1%",
// -0.004 -> "-0.4%"; "-" when not finite.
std::string signed_percent(double fraction);

// ------------------------------------------------------------ terminal tables

// ANSI styling that is a no-op unless colour was asked for.
class Style {
 public:
  explicit Style(bool color) : color_(color) {}
  std::string bold(const std::string& s) const { return wrap("\x1b[1m", s); }
  std::string yellow(const std::string& s) const { return wrap("\x1b[33m", s); }
  std::string dim(const std::string& s) const { return wrap("\x1b[2m", s); }

 private:
  std::string wrap(const char* code, const std::string& s) const {
    return color_ && !s.empty() ? code + s + "\x1b[0m" : s;
  }
  bool color_;
};

enum class Align { Left, Right };

struct Column {
  std::string header;
  Align align = Align::Right;
  size_t max_width = 0;  // TextTable ellipsizes wider cells (0: no limit)
  // Every cell is ASCII (numbers and units): a cell's width is its length,
  // not counted character by character.
  bool ascii = false;
};

// Node names wider than this are ellipsized in terminal tables (a tf2onnx name can be 278 characters);
// the joined report's node tables, which carry more columns, use kJoinedNodeNameWidth.
constexpr size_t kNodeNameWidth = 40;
constexpr size_t kJoinedNodeNameWidth = 36;

// A table whose column widths are the widest cell of each column. Cells are
// padded by display width (UTF-8 aware); colour is applied after padding so
// escape codes never disturb the alignment.
class TextTable {
 public:
  explicit TextTable(std::vector<Column> columns);

  void add_row(std::vector<std::string> cells, bool highlight = false);
  // The same row from views of cells that outlive the call (a row of a
  // 100k-row table: no vector, no copy of each cell but into the table).
  void add_row_view(std::initializer_list<std::string_view> cells, bool highlight = false);
  // Room for `rows` rows of about `bytes_per_row` bytes of cells, taken at
  // once: a 100k-row table's buffers do not grow by doubling (each doubling
  // touches fresh memory: page faults), and room not used is never touched.
  void reserve(size_t rows, size_t bytes_per_row);
  bool empty() const { return highlight_.empty(); }
  void print(std::ostream& out, const Style& style, const std::string& indent = "  ") const;

 private:
  // Cell c of the row being added, cut where wider than its column's max_width.
  void add_cell(size_t c, std::string_view cell);
  // Rows are kept flat, not as a vector of strings a row: a 100k-node
  // per-layer table is a million cells, and one buffer with each cell's end
  // and display width (counted once, when the row is added) is ~20 bytes a
  // cell instead of a heap string and a cache miss each time it is measured.
  // Appends row `first_cell / columns` to `out`, cells padded to the column
  // widths (row_width: their sum plus the gaps).
  void append_line(std::string& out, size_t first_cell, size_t row_width) const;

  std::vector<Column> columns_;
  std::vector<size_t> widths_;     // widest cell (or header) of each column so far
  std::string text_;               // every cell's bytes, row after row
  std::vector<size_t> cell_end_;   // end of each cell in text_ (row-major)
  std::vector<uint32_t> cell_width_;  // display width of each cell
  std::vector<bool> highlight_;    // one per row
  std::vector<size_t> header_width_;
};

// "key   value" lines with the keys padded to one width; a key with several
// values prints them on continuation lines under the first.
class KeyValueBlock {
 public:
  void add(std::string key, std::vector<std::string> values);
  void add(std::string key, std::string value) { add(std::move(key), std::vector<std::string>{std::move(value)}); }
  void print(std::ostream& out, const std::string& indent = "  ") const;

 private:
  struct Entry {
    std::string key;
    std::vector<std::string> values;
  };
  std::vector<Entry> entries_;
};

// Greedy word wrap at `width` columns; the first line starts with
// first_prefix, continuation lines with `indent`.
std::string word_wrap(const std::string& text, size_t width, const std::string& first_prefix,
                      const std::string& indent);

// ------------------------------------------------------------------------ CSV

// RFC 4180 field: enclosed in double quotes (inner quotes doubled) when it
// holds a comma, a double quote, CR or LF; otherwise as is.
std::string csv_field(const std::string& value);
// Shortest decimal that reads back as the same double; empty when non-finite.
std::string csv_double(double v);

// A CSV field with its unit hint, formatted by the one rule of its kind for
// every record's CSV: text quoted by csv_field, integers exact, reals by
// csv_double, a flag as 1 or 0, and a figure that is not known (an empty
// optional) as an empty field ("unknown is not zero").
class CsvCell {
 public:
  CsvCell() = default;  // not known: an empty field
  static CsvCell text(const std::string& value) { return CsvCell(csv_field(value)); }
  // A word that needs no quoting (a status or bound name, a figure already formatted).
  static CsvCell word(std::string value) { return CsvCell(std::move(value)); }
  static CsvCell count(int64_t value) { return CsvCell(std::to_string(value)); }
  static CsvCell count(const std::optional<int64_t>& value) { return value ? count(*value) : CsvCell(); }
  static CsvCell real(double value) { return CsvCell(csv_double(value)); }
  static CsvCell real(const std::optional<double>& value) { return value ? real(*value) : CsvCell(); }
  static CsvCell flag(bool value) { return CsvCell(value ? "1" : "0"); }
  const std::string& field() const { return field_; }

 private:
  explicit CsvCell(std::string field) : field_(std::move(field)) {}
  std::string field_;
};

// The CSV renderer: a header row of `columns` (csv_field each), then each row as it is added;
// rows end in "\n" (csv_writer.cc says why). A row of another width than the
// header is a writer's bug: Error(Runtime) naming the first column.
class CsvTable {
 public:
  CsvTable(std::ostream& out, const std::vector<std::string>& columns);
  void row(const std::vector<CsvCell>& cells);

 private:
  std::ostream& out_;
  size_t width_;
  std::string first_column_;
};

// ------------------------------------------------------------------- Markdown

// Text that renders literally inside a GFM table cell (see markdown_writer.cc
// for the escaping rules).
std::string md_text(const std::string& text);

// A GFM table; cells are escaped by the caller (numbers need none).
class MdTable {
 public:
  MdTable(std::vector<std::string> headers, std::vector<Align> aligns)
      : headers_(std::move(headers)), aligns_(std::move(aligns)) {}
  void add_row(std::vector<std::string> cells);
  void print(std::ostream& out) const;  // ends with a blank line

 private:
  std::vector<std::string> headers_;
  std::vector<Align> aligns_;
  std::vector<std::vector<std::string>> rows_;
};

// ----------------------------------------------------------------------- JSON

class JsonStream;  // json_stream.hpp

// The analysis JSON document (docs/json-schema.md), without a trailing
// newline, as a value of `json`: the whole output, or nested in another
// document (the profile's "analysis").
void write_analysis_json(const AnalysisResult& result, const ReportOptions& options, JsonStream& json);
// The profile JSON document (docs/profile-json.md), likewise (the report's "profile").
void write_profile_json(const ProfileResult& result, const ReportOptions& options, JsonStream& json);

// ------------------------------------------------------------ profile reports

std::unique_ptr<ProfileWriter> make_profile_json_writer();
std::unique_ptr<ProfileWriter> make_profile_csv_writer();

// A layer's figures are join_layer's (modelstat/joined.hpp: the one join of
// time with cost, also behind the joined report); giga() puts its rates in
// GFLOP/s and GB/s, keeping "not known" empty.
std::optional<double> giga(const std::optional<double>& per_second);

// Layers in graph order (by index), and the top n by median time (descending,
// ties in graph order; layers without samples left out).
std::vector<const LayerTiming*> layers_in_order(const ProfileResult& result);
// layers_in_order with the subgraph layers that ran (ProfileResult::subgraph_layers)
// right under their top-level node, flagged true.
std::vector<std::pair<const LayerTiming*, bool>> timed_rows_in_order(const ProfileResult& result);
std::vector<const LayerTiming*> hotspot_layers(const ProfileResult& result, int n);

// count / seconds, empty unless both are positive and finite.
std::optional<double> rate(double count, double seconds);
// layer_sum.median / whole.median - 1 (the instrumentation overhead), when both are measured.
std::optional<double> instrumentation_overhead(const ProfileResult& result);

// A record's human report (table and Markdown) as data: one list of sections
// that both renderers (print_text_document, print_markdown_document) draw, so
// the two never disagree on content. The profile, joined report, comparison
// and generation each build one (profile_document, joined_document,
// compare_document, generation_document); their CSV goes through CsvTable,
// their JSON through the record's own serializer.
enum class LineStyle {
  Plain,  // ordinary text
  Dim,    // conventions: dim in the terminal, a quote in Markdown
  Warn,   // notices: yellow in the terminal, a list in Markdown
};
struct DocumentSection {
  std::string title;                                        // empty: no heading
  std::vector<std::pair<std::string, std::string>> fields;  // "key  value" lines
  std::vector<Column> columns;                              // a table, when not empty
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> highlight;     // per row
  // Per row (or none): how deep in subgraphs its node sits, 0 at the top
  // level. The renderers indent the cell of `indented_column` by it (two
  // spaces a level in the terminal, two no-break spaces in Markdown).
  std::vector<int> depth;
  size_t indented_column = 1;
  std::vector<std::string> lines;  // free text after the fields and the table
  LineStyle line_style = LineStyle::Plain;
};
struct Document {
  std::string title;
  std::vector<DocumentSection> sections;
};
Document profile_document(const ProfileResult& result, const ReportOptions& options);
// A section of warning lines (notices, warnings) titled `title`, added to
// `doc` when there are lines; every human format shows them as warnings.
void add_warning_section(Document& doc, const std::string& title, std::vector<std::string> lines);
// The "Context" section every measured report opens with (profile, generation);
// profile adds the inputs (inputs_text).
DocumentSection context_section(const RunContext& context);
// The run context's inputs for humans: "random, seed 24301 (input set k: seed + k); sr (int64 1) =
// 16000 (--value)" (context_section, the report's context).
std::string inputs_text(const RunContext& context);

// Render a document as aligned terminal text (document_text.cc) or as
// GitHub-flavoured Markdown (document_markdown.cc), whichever record it holds.
void print_text_document(const Document& doc, const Style& style, std::ostream& out);
void print_markdown_document(const Document& doc, std::ostream& out);

// The table and Markdown writers of every record that builds a Document:
// `document_of` (profile_document, joined_document, ...) drawn by the one
// renderer of the format. A record's format table names them as
// {"table", document_table_writer<Record, record_document>}.
template <class Record, Document (*document_of)(const Record&, const ReportOptions&)>
class DocumentTableWriter final : public RecordWriter<Record> {
 public:
  void write(const Record& record, const ReportOptions& options, std::ostream& out) const override {
    print_text_document(document_of(record, options), Style(options.color), out);
  }
};
template <class Record, Document (*document_of)(const Record&, const ReportOptions&)>
class DocumentMarkdownWriter final : public RecordWriter<Record> {
 public:
  void write(const Record& record, const ReportOptions& options, std::ostream& out) const override {
    print_markdown_document(document_of(record, options), out);
  }
};
template <class Record, Document (*document_of)(const Record&, const ReportOptions&)>
std::unique_ptr<RecordWriter<Record>> document_table_writer() {
  return std::make_unique<DocumentTableWriter<Record, document_of>>();
}
template <class Record, Document (*document_of)(const Record&, const ReportOptions&)>
std::unique_ptr<RecordWriter<Record>> document_markdown_writer() {
  return std::make_unique<DocumentMarkdownWriter<Record, document_of>>();
}

}  // namespace report_detail
}  // namespace modelstat

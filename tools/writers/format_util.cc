#include "tools/writers/format_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>

#include "modelstat/error.hpp"

namespace modelstat {

void throw_unknown_format(const std::string& what, const std::string& format,
                          const std::vector<std::string>& names) {
  throw_usage("unknown " + what + " format '" + format + "' (" + report_detail::join(names, ", ") + ")");
}

std::unique_ptr<AnalysisWriter> make_analysis_writer(const std::string& format) {
  using namespace report_detail;
  return pick_writer<AnalysisResult>(
      "output", format,
      {{"table", make_table_writer}, {"json", make_json_writer}, {"csv", make_csv_writer},
       {"md", make_markdown_writer}});
}

namespace report_detail {

namespace {

// A row's status as the human formats show it: the table's one-character
// marker and the Markdown's words ("" when exact); one rule, two spellings.
struct StatusText {
  const char* marker;
  const char* words;
};
StatusText status_text(CostStatus s) {
  switch (s) {
    case CostStatus::Exact:
      return {"", ""};
    case CostStatus::UnknownShape:
      return {"?", "unknown shape"};
    case CostStatus::UnknownOp:
      break;
  }
  return {"!", "unknown op"};
}

}  // namespace

const char* status_marker(CostStatus s) { return status_text(s).marker; }
const char* status_words(CostStatus s) { return status_text(s).words; }

const char* const kObservedMarker = "*";
const char* const kObservedLegend =
    "* counted on the shapes the run observed (the static analysis could not infer them; JSON \"shapes\": \"observed\")";

const char* cost_marker(const NodeCost& c) {
  return c.status == CostStatus::Exact && c.shapes == "observed" ? kObservedMarker : status_marker(c.status);
}

const char* const kStatusLegend = "? unknown shape (cost not fully counted), ! unknown op (not counted)";

std::string timed_op_text(const std::string& op_type, bool upcast_to_fp32, bool fused, size_t members) {
  return op_type + (members > 0 ? "+" + std::to_string(members) : "") + (upcast_to_fp32 ? "^" : "") +
         (fused ? "*" : "");
}

const char* const kFusedLegend =
    "* fused into another node's kernel (a QDQ DequantizeLinear: in the int8 kernel of the node that reads it; "
    "a Conv group's member: in its head's); it did not run on its own: its time is the markers', no rate. "
    "Conv+N: a Conv group's head, one oneDNN kernel for it and its N members: its time, FLOPs and bytes are the "
    "group's. profile --fusion off runs every node as written";

std::string groups_title(const std::string& group_by, size_t groups, size_t nodes, const std::string& what) {
  const std::string per = group_by == "block" ? "Per-block" : group_by == "op" ? "Per-op-type" : "Per-group";
  return fmt::format("{} {} (--group-by {}: {} group{} of {} node{}, in order of first appearance)", per,
                     what, group_by, groups, groups == 1 ? "" : "s", nodes, nodes == 1 ? "" : "s");
}

const char* const kGroupLegend =
    "sums over each group's top-level nodes (a control-flow node's subgraph is in its row); #: index of its "
    "first node; (other): nodes the rule gives no group";

const char* const kUpcastLegend =
    "^ ran in fp32: no kernel for its fp16/bf16 dtype on this device; its inputs cast to fp32 and its "
    "outputs "
    "back, inside its time";

std::string percent(int64_t part, int64_t whole) {
  if (whole == 0) return "-";
  const double pct = 100.0 * double(part) / double(whole);
  // A share that is neither nothing nor everything never prints as 0.0% or 100.0%.
  if (part > 0 && part < whole && pct < 0.05) return "<0.1%";
  if (part > 0 && part < whole && pct >= 99.95) return ">99.9%";
  return fmt::format("{:.1f}%", pct);
}

size_t display_width(std::string_view text) {
  // Count every byte that is not a UTF-8 continuation byte (10xxxxxx): the
  // bytes less the continuation bytes, 8 bytes a step (a byte's bit 7 set
  // and bit 6 clear: w & ~(w << 1), each byte's bit 6 moved to its bit 7).
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  const char* p = text.data();
  const size_t n = text.size();
  size_t continuation = 0, i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    const uint64_t marks = w & ~(w << 1) & kHigh;
    if (marks) continuation += size_t(__builtin_popcountll(marks));
  }
  for (; i < n; ++i) continuation += (static_cast<unsigned char>(p[i]) & 0xC0) == 0x80;
  return n - continuation;
}

std::string ellipsize(const std::string& text, size_t max_width) {
  if (display_width(text) <= max_width) return text;
  if (max_width == 0) return {};
  static const std::string kEllipsis = "\xE2\x80\xA6";  // U+2026 "…", one column
  // Byte offset at which each code point starts.
  std::vector<size_t> starts;
  for (size_t i = 0; i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) starts.push_back(i);
  const size_t keep = max_width - 1;
  const size_t head = (keep + 1) / 2, tail = keep / 2;
  const size_t head_end = head < starts.size() ? starts[head] : text.size();
  const size_t tail_begin = tail == 0 ? text.size() : starts[starts.size() - tail];
  return text.substr(0, head_end) + kEllipsis + text.substr(tail_begin);
}

std::string node_ref(const std::string& name, int index, size_t max_width) {
  if (display_width(name) <= max_width || index < 0) return ellipsize(name, max_width);
  return "#" + std::to_string(index) + " " + ellipsize(name, max_width);
}

std::string join_some(const std::vector<std::string>& parts, const std::string& sep, size_t most) {
  if (parts.size() <= most) return join(parts, sep);
  const std::vector<std::string> head(parts.begin(), parts.begin() + long(most));
  return join(head, sep) + sep + "... and " + std::to_string(parts.size() - most) + " more (-f json lists all)";
}

std::vector<std::string> graph_value_lines(const std::vector<GraphValue>& values) {
  std::vector<std::string> lines;
  for (const GraphValue& v : values) lines.push_back(v.to_string());
  return lines;
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::string op_label(const NodeReport& node) {
  if (node.domain.empty() || node.domain == "ai.onnx") return node.op_type;
  return node.domain + ":" + node.op_type;
}

std::vector<const NodeReport*> hotspot_nodes(const AnalysisResult& result, int n) {
  std::vector<const NodeReport*> nodes;
  if (n <= 0) return nodes;
  for (const NodeReport& node : result.nodes)
    if (node.cost.flops > 0) nodes.push_back(&node);
  // The first n of a stable sort by FLOPs: ties in node order, which is the
  // rows' order in memory. A partial sort: the top 10 of 100k rows.
  const size_t keep = std::min(nodes.size(), size_t(n));
  std::partial_sort(nodes.begin(), nodes.begin() + long(keep), nodes.end(),
                    [](const NodeReport* a, const NodeReport* b) {
                      return a->cost.flops != b->cost.flops ? a->cost.flops > b->cost.flops : a < b;
                    });
  nodes.resize(keep);
  return nodes;
}

std::vector<std::pair<const NodeReport*, bool>> rows_in_order(const AnalysisResult& result) {
  std::vector<const NodeReport*> top;
  top.reserve(result.nodes.size());
  for (const NodeReport& node : result.nodes) top.push_back(&node);
  return under_their_parents(top, result.subgraph_nodes);
}

std::vector<std::string> unknown_op_types(const AnalysisResult& result) {
  std::vector<std::string> ops;
  for (const auto& [row, in_subgraph] : rows_in_order(result)) {
    const NodeReport& node = *row;
    if (node.cost.status != CostStatus::UnknownOp) continue;
    const std::string label = op_label(node);
    if (std::find(ops.begin(), ops.end(), label) == ops.end()) ops.push_back(label);
  }
  return ops;
}

std::string coverage_percent(const AnalysisTotals& totals) {
  if (totals.nodes <= 0) return "100.0%";
  int64_t tenths = std::llround(1000.0 * double(totals.nodes_exact) / double(totals.nodes));
  // Round to nearest, but never claim 100.0% (or 0.0%) when that is not literally true.
  if (totals.nodes_exact < totals.nodes) tenths = std::min<int64_t>(tenths, 999);
  if (totals.nodes_exact > 0) tenths = std::max<int64_t>(tenths, 1);
  return fmt::format("{}.{}%", tenths / 10, tenths % 10);
}

std::string coverage_summary(const AnalysisResult& result) {
  const AnalysisTotals& t = result.totals;
  std::string out = fmt::format("{}/{} nodes exact ({})", t.nodes_exact, t.nodes, coverage_percent(t));
  std::vector<std::string> parts;
  if (t.nodes_unknown_shape > 0)
    parts.push_back(
        fmt::format("{} unknown shape{}", t.nodes_unknown_shape, t.nodes_unknown_shape == 1 ? "" : "s"));
  if (t.nodes_unknown_op > 0) {
    std::string part = fmt::format("{} unknown op{}", t.nodes_unknown_op, t.nodes_unknown_op == 1 ? "" : "s");
    const std::vector<std::string> ops = unknown_op_types(result);
    if (!ops.empty()) part += " (" + join(ops, ", ") + ")";
    parts.push_back(part);
  }
  if (!parts.empty()) out += "; " + join(parts, ", ");
  return out;
}

// ---------------------------------------------------------------- human units

std::string percent_of(double part, double whole) {
  if (!std::isfinite(part) || !std::isfinite(whole) || whole == 0) return "-";
  const double pct = 100.0 * part / whole;
  if (part > 0 && part < whole && pct < 0.05) return "<0.1%";
  if (part > 0 && part < whole && pct >= 99.95) return ">99.9%";
  return fmt::format("{:.1f}%", pct);
}

std::string signed_percent(double fraction) {
  if (!std::isfinite(fraction)) return "-";
  const double pct = 100.0 * fraction;
  // "+0.0%" / "-0.0%" would claim a sign that one decimal cannot show.
  if (std::fabs(pct) < 0.05) return "0.0%";
  return fmt::format("{:+.1f}%", pct);
}

// ------------------------------------------------------------ terminal tables

TextTable::TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {
  for (const Column& col : columns_) header_width_.push_back(display_width(col.header));
  widths_ = header_width_;
}

void TextTable::reserve(size_t rows, size_t bytes_per_row) {
  cell_end_.reserve(rows * columns_.size());
  cell_width_.reserve(rows * columns_.size());
  highlight_.reserve(rows);
  text_.reserve(rows * bytes_per_row);
}

void TextTable::add_cell(size_t c, std::string_view cell) {
  size_t width = columns_[c].ascii ? cell.size() : display_width(cell);
  // Cut only where too wide (ellipsize returns the others unchanged).
  if (columns_[c].max_width > 0 && width > columns_[c].max_width) {
    const std::string cut = ellipsize(std::string(cell), columns_[c].max_width);
    width = display_width(cut);
    text_ += cut;
  } else {
    text_ += cell;
  }
  cell_end_.push_back(text_.size());
  cell_width_.push_back(uint32_t(std::min<size_t>(width, UINT32_MAX)));
  widths_[c] = std::max(widths_[c], width);
}

void TextTable::add_row(std::vector<std::string> cells, bool highlight) {
  for (size_t c = 0; c < columns_.size(); ++c) add_cell(c, c < cells.size() ? std::string_view(cells[c]) : std::string_view());
  highlight_.push_back(highlight);
}

void TextTable::add_row_view(std::initializer_list<std::string_view> cells, bool highlight) {
  for (size_t c = 0; c < columns_.size(); ++c)
    add_cell(c, c < cells.size() ? cells.begin()[c] : std::string_view());
  highlight_.push_back(highlight);
}

void TextTable::print(std::ostream& out, const Style& style, const std::string& indent) const {
  std::string line;
  for (size_t c = 0; c < columns_.size(); ++c) {
    if (c) line += "  ";
    const size_t pad = widths_[c] - header_width_[c];
    if (columns_[c].align == Align::Right) line.append(pad, ' ');
    line += columns_[c].header;
    if (columns_[c].align != Align::Right) line.append(pad, ' ');
  }
  line.erase(line.find_last_not_of(' ') + 1);  // no trailing blanks
  out << indent << style.bold(line) << '\n';
  size_t total = 0;
  for (size_t c = 0; c < widths_.size(); ++c) total += widths_[c] + (c ? 2 : 0);
  out << indent << std::string(total, '-') << '\n';
  // One buffer for the rows, written in large pieces (a row is ~100 bytes);
  // each row's cells copied straight into it.
  std::string buffer;
  for (size_t r = 0; r < highlight_.size(); ++r) {
    buffer += indent;
    const size_t start = buffer.size();
    append_line(buffer, r * columns_.size(), total);
    if (highlight_[r] && buffer.size() > start) {
      line.assign(buffer, start, std::string::npos);
      buffer.resize(start);
      buffer += style.yellow(line);
    }
    buffer += '\n';
    if (buffer.size() >= 1 << 16) {
      out.write(buffer.data(), std::streamsize(buffer.size()));
      buffer.clear();
    }
  }
  out.write(buffer.data(), std::streamsize(buffer.size()));
}

void TextTable::append_line(std::string& out, size_t first_cell, size_t row_width) const {
  if (columns_.empty()) return;
  const size_t first_byte = first_cell == 0 ? 0 : cell_end_[first_cell - 1];
  const size_t row_bytes = cell_end_[first_cell + columns_.size() - 1] - first_byte;
  // Widths count columns, not bytes: a multi-byte cell is longer than its
  // width, so room for the widths plus every byte of the row.
  const size_t start = out.size();
  out.resize(start + row_width + row_bytes, ' ');
  char* p = &out[start];
  for (size_t c = 0; c < columns_.size(); ++c) {
    const size_t k = first_cell + c;
    const size_t begin = k == 0 ? 0 : cell_end_[k - 1];
    const size_t pad = widths_[c] - cell_width_[k];
    if (c) p += 2;
    if (columns_[c].align == Align::Right) p += pad;
    std::memcpy(p, text_.data() + begin, cell_end_[k] - begin);
    p += cell_end_[k] - begin;
    if (columns_[c].align != Align::Right) p += pad;
  }
  // No trailing blanks.
  size_t end = size_t(p - out.data());
  while (end > start && out[end - 1] == ' ') --end;
  out.resize(end);
}

void KeyValueBlock::add(std::string key, std::vector<std::string> values) {
  if (values.empty()) values.push_back("-");
  entries_.push_back({std::move(key), std::move(values)});
}

void KeyValueBlock::print(std::ostream& out, const std::string& indent) const {
  size_t width = 0;
  for (const auto& e : entries_) width = std::max(width, display_width(e.key));
  for (const auto& e : entries_) {
    for (size_t i = 0; i < e.values.size(); ++i) {
      const std::string key = i == 0 ? e.key : std::string();
      out << indent << key << std::string(width - display_width(key) + 2, ' ') << e.values[i] << '\n';
    }
  }
}

std::string word_wrap(const std::string& text, size_t width, const std::string& first_prefix,
                      const std::string& indent) {
  std::string out = first_prefix;
  size_t column = display_width(first_prefix);
  bool line_has_word = false;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t start = text.find_first_not_of(" \n\t", pos);
    if (start == std::string::npos) break;
    size_t end = text.find_first_of(" \n\t", start);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(start, end - start);
    size_t w = display_width(word);
    if (line_has_word && column + 1 + w > width) {
      out += '\n' + indent;
      column = display_width(indent);
      line_has_word = false;
    }
    if (line_has_word) {
      out += ' ';
      ++column;
    }
    // A word wider than what is left of a fresh line (a long node name) is
    // broken across lines at the width, between UTF-8 sequences.
    while (column + w > width && width > column + 1) {
      size_t cut = 0, cols = 0;
      while (cut < word.size() && cols < width - column) {
        ++cut;
        while (cut < word.size() && (static_cast<unsigned char>(word[cut]) & 0xC0) == 0x80) ++cut;
        ++cols;
      }
      out += word.substr(0, cut) + '\n' + indent;
      word.erase(0, cut);
      w = display_width(word);
      column = display_width(indent);
    }
    out += word;
    column += w;
    line_has_word = true;
    pos = end;
  }
  return out;
}

// ------------------------------------------------------------------------ CSV

std::string csv_field(const std::string& value) {
  if (value.find_first_of(",\"\r\n") == std::string::npos) return value;
  std::string out = "\"";
  for (char c : value) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

std::string csv_double(double v) {
  return std::isfinite(v) ? fmt::format("{}", v) : std::string();
}

CsvTable::CsvTable(std::ostream& out, const std::vector<std::string>& columns)
    : out_(out), width_(columns.size()), first_column_(columns.empty() ? "" : columns.front()) {
  for (size_t k = 0; k < columns.size(); ++k) out_ << (k > 0 ? "," : "") << csv_field(columns[k]);
  out_ << '\n';
}

void CsvTable::row(const std::vector<CsvCell>& cells) {
  if (cells.size() != width_)
    throw Error(ErrorKind::Runtime, fmt::format("CSV table '{}...': a row of {} fields under a header of {}",
                                                first_column_, cells.size(), width_));
  for (size_t k = 0; k < cells.size(); ++k) {
    if (k > 0) out_ << ',';
    out_ << cells[k].field();
  }
  out_ << '\n';
}

// ------------------------------------------------------------------- Markdown

namespace {

bool is_alnum(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

}  // namespace

// Text that renders literally inside a GFM table cell: '|' would end the cell,
// and *, `, [, ], <, > would start emphasis, code, links or HTML (ONNX names
// such as "/blocks.0/attn/*" or "<unnamed>" exist). '_' is escaped only where
// it could open or close emphasis: GFM never does so between two letters or
// digits, and ONNX names are full of "conv_1_bn" that should stay readable in
// the raw text. A backslash is escaped first so that a name's own backslash
// cannot escape a '|'. Line breaks would end the row, so they become spaces.
std::string md_text(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    switch (c) {
      case '_':
        if (i > 0 && i + 1 < text.size() && is_alnum(text[i - 1]) && is_alnum(text[i + 1])) {
          out += c;
          break;
        }
        [[fallthrough]];
      case '\\':
      case '|':
      case '*':
      case '`':
      case '[':
      case ']':
      case '<':
      case '>':
        out += '\\';
        out += c;
        break;
      case '\r':
      case '\n':
        out += ' ';
        break;
      default:
        out += c;
    }
  }
  return out;
}

void MdTable::add_row(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

void MdTable::print(std::ostream& out) const {
  auto row = [](const std::vector<std::string>& cells) { return "| " + join(cells, " | ") + " |"; };
  out << row(headers_) << '\n' << '|';
  for (Align a : aligns_) out << (a == Align::Right ? " ---: |" : " :--- |");
  out << '\n';
  for (const auto& cells : rows_) out << row(cells) << '\n';
  out << '\n';
}


std::string kv_cache_summary(const KvCache& cache) {
  std::string s = fmt::format("{} tensors ({} -> {}, ...), recognised by {}", cache.tensors.size(),
                              cache.tensors.front().input, cache.tensors.front().output, cache.recognised_by);
  if (cache.bytes_per_token > 0)
    s += fmt::format("; {} per token of context for the bound batch; {} at length {} ({} read as past, {} tokens)",
                     bytes_with_exact(cache.bytes_per_token), bytes_with_exact(cache.present_bytes),
                     cache.present_length, human_bytes(cache.past_bytes), cache.past_length);
  return s;
}

std::vector<std::string> decoder_view_header() {
  return {"view", "tokens", "context", "FLOPs", "FLOPs/token", "bytes/token", "FLOPs/byte", "attention share",
          "KV read", "KV written"};
}

std::vector<std::vector<std::string>> decoder_view_rows(const DecoderAnalysis& d) {
  std::vector<std::vector<std::string>> rows;
  for (const DecoderView* v : {&d.prefill, &d.decode})
    rows.push_back({v->name, std::to_string(v->tokens * v->batch), std::to_string(v->context),
                    human_count(v->totals.flops), si_label(v->flops_per_token()),
                    human_bytes(int64_t(v->bytes_per_token())), fmt::format("{:.2f}", v->arithmetic_intensity()),
                    fmt::format("{:.1f}%", 100.0 * v->attention_share()), human_bytes(v->kv_read_bytes),
                    human_bytes(v->kv_written_bytes)});
  return rows;
}

}  // namespace report_detail
}  // namespace modelstat

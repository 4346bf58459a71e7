// The one terminal renderer of a Document (format_util.hpp): aligned
// plain-text blocks and tables in human units, optional ANSI colour. Every
// record with a Document (profile, joined report, comparison, generation)
// gets its table writer from DocumentTableWriter through it.
#include <ostream>

#include "tools/writers/format_util.hpp"

namespace modelstat {
namespace report_detail {
namespace {

constexpr size_t kWrapWidth = 100;  // free-text lines are wrapped here

}  // namespace

void print_text_document(const Document& doc, const Style& style, std::ostream& out) {
  out << style.bold(doc.title) << '\n';
  for (const DocumentSection& s : doc.sections) {
    out << '\n';
    if (!s.title.empty()) out << style.bold(s.title) << '\n';
    if (!s.fields.empty()) {
      KeyValueBlock block;
      for (const auto& [key, value] : s.fields) block.add(key, value);
      block.print(out);
    }
    if (!s.columns.empty()) {
      TextTable table(s.columns);
      for (size_t i = 0; i < s.rows.size(); ++i) {
        std::vector<std::string> cells = s.rows[i];
        if (i < s.depth.size() && s.depth[i] > 0 && s.indented_column < cells.size())
          cells[s.indented_column].insert(0, size_t(2 * s.depth[i]), ' ');
        table.add_row(std::move(cells), i < s.highlight.size() && s.highlight[i]);
      }
      table.print(out, style);
    }
    // Titled sections indent their text under the heading; the untitled
    // conventions block starts at the margin, like the analysis report.
    const std::string indent = s.title.empty() ? "" : "  ";
    for (const std::string& line : s.lines) {
      const std::string text = word_wrap(line, kWrapWidth, indent, indent + "    ");
      switch (s.line_style) {
        case LineStyle::Plain:
          out << text;
          break;
        case LineStyle::Dim:
          out << style.dim(text);
          break;
        case LineStyle::Warn:
          out << style.yellow(text);
          break;
      }
      out << '\n';
    }
  }
}

}  // namespace report_detail
}  // namespace modelstat

// The one Markdown renderer of a Document (format_util.hpp): GitHub-flavoured
// Markdown with the same content as the terminal table, for pasting into an
// issue or a pull request. Every record with a Document gets its Markdown
// writer from DocumentMarkdownWriter through it.
#include <ostream>

#include "tools/writers/format_util.hpp"

namespace modelstat {
namespace report_detail {

void print_markdown_document(const Document& doc, std::ostream& out) {
  out << "# " << md_text(doc.title) << "\n\n";
  for (const DocumentSection& s : doc.sections) {
    if (!s.title.empty()) out << "## " << md_text(s.title) << "\n\n";
    if (!s.fields.empty()) {
      MdTable fields({"metric", "value"}, {Align::Left, Align::Right});
      for (const auto& [key, value] : s.fields) fields.add_row({md_text(key), md_text(value)});
      fields.print(out);
    }
    if (!s.columns.empty()) {
      std::vector<std::string> headers;
      std::vector<Align> aligns;
      for (const Column& c : s.columns) {
        headers.push_back(md_text(c.header));
        aligns.push_back(c.align);
      }
      MdTable table(std::move(headers), std::move(aligns));
      for (size_t i = 0; i < s.rows.size(); ++i) {
        std::vector<std::string> cells;
        for (const std::string& cell : s.rows[i]) cells.push_back(md_text(cell));  // full names: no ellipsis
        if (i < s.depth.size() && s.indented_column < cells.size())
          for (int level = 0; level < s.depth[i]; ++level) cells[s.indented_column].insert(0, "&nbsp;&nbsp;");
        table.add_row(std::move(cells));
      }
      table.print(out);
    }
    if (s.lines.empty()) continue;
    for (size_t i = 0; i < s.lines.size(); ++i) {
      const std::string text = md_text(s.lines[i]);
      switch (s.line_style) {
        case LineStyle::Plain:
          out << text << "\n\n";  // one paragraph each
          break;
        case LineStyle::Dim:
          out << (i ? ">\n" : "") << "> " << text << '\n';  // one quote, a paragraph per line
          break;
        case LineStyle::Warn:
          out << "- " << text << '\n';
          break;
      }
    }
    if (s.line_style != LineStyle::Plain) out << '\n';
  }
}

}  // namespace report_detail
}  // namespace modelstat

// Checks the writer tests share (tests/tools/writers/*_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "tools/writers/writers.hpp"

namespace modelstat::test {

// The human formats (table, Markdown) of a measured report honour the
// options: with show_all_nodes false and top 0 they leave out the per-row
// table (`rows_title`) and the hotspots and keep `kept`; top 1 lists one
// hotspot; colour only when asked. `render(format, options)` writes the report.
inline void expect_human_formats_honour_options(
    const std::function<std::string(const std::string&, const ReportOptions&)>& render, const std::string& rows_title,
    const std::string& kept) {
  ReportOptions options;
  options.show_all_nodes = false;
  options.top = 0;
  for (const char* format : {"table", "md"}) {
    const std::string text = render(format, options);
    EXPECT_FALSE(contains(text, rows_title)) << format;
    EXPECT_FALSE(contains(text, "Hotspots")) << format;
    EXPECT_TRUE(contains(text, kept)) << format;
  }
  options.top = 1;
  EXPECT_TRUE(contains(render("table", options), "Hotspots (top 1 by median time)"));
  EXPECT_FALSE(contains(render("table", options), "\x1b["));
  options.color = true;
  EXPECT_TRUE(contains(render("table", options), "\x1b["));
}


// A Markdown report whose tables are well formed (expect_well_formed_md_tables),
// `tables` of them, holding each of `needles`: its lines, for checks of its title.
inline std::vector<std::string> expect_markdown_report(const std::string& text, size_t tables,
                                                       const std::vector<std::string>& needles) {
  const std::vector<std::string> lines = lines_of(text);
  EXPECT_EQ(expect_well_formed_md_tables(lines), tables);
  for (const std::string& needle : needles) EXPECT_TRUE(contains(text, needle)) << "missing: " << needle << "\n" << text;
  return lines;
}

}  // namespace modelstat::test

// What every writer test reads its output with, by the short names they use.
namespace modelstat {
using nlohmann::json;
using test::contains;
using test::is_md_delimiter_row;
using test::lines_of;
using test::expect_well_formed_md_tables;
using test::md_cells;
using test::parse_csv;
using test::SchemaValidator;
}  // namespace modelstat

// The joined-report writers, one file each (tools/report/joined_*_writer.cc),
// behind make_joined_writer (modelstat/joined.hpp). They only format.
#pragma once

#include <memory>

#include "modelstat/joined.hpp"

namespace modelstat::report {

std::unique_ptr<JoinedWriter> make_joined_table_writer();
std::unique_ptr<JoinedWriter> make_joined_json_writer();
std::unique_ptr<JoinedWriter> make_joined_csv_writer();
std::unique_ptr<JoinedWriter> make_joined_markdown_writer();
std::unique_ptr<JoinedWriter> make_joined_html_writer();
std::unique_ptr<JoinedWriter> make_joined_trace_writer();

}  // namespace modelstat::report

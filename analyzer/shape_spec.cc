// Parsing of the --input and --dim command-line values.
#include <cerrno>
#include <cstdlib>

#include "modelstat/analysis.hpp"
#include "modelstat/error.hpp"

namespace modelstat {

namespace {
// Dims above this are refused outright: nothing real is that large, and
// products of a few of them must stay inside 64 bits.
constexpr int64_t kMaxDim = int64_t(1) << 40;

int64_t parse_dim(const std::string& text, const std::string& context) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    throw_usage(context + ": '" + text + "' is not a non-negative integer");
  errno = 0;
  const long long v = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE || v > kMaxDim) throw_usage(context + ": dim " + text + " is absurdly large (limit 2^40)");
  return v;
}
}  // namespace

std::vector<int64_t> parse_shape_spec(const std::string& text) {
  std::vector<int64_t> dims;
  if (text.empty() || text == "scalar") return dims;
  size_t pos = 0;
  while (true) {
    const size_t next = text.find_first_of("x,", pos);
    dims.push_back(parse_dim(text.substr(pos, next == std::string::npos ? std::string::npos : next - pos),
                             "shape '" + text + "'"));
    if (next == std::string::npos) break;
    pos = next + 1;
  }
  return dims;
}

void parse_input_spec(const std::string& spec, LoadOptions& options) {
  const size_t colon = spec.rfind(':');
  if (colon == std::string::npos || colon == 0)
    throw_usage("--input expects NAME:DIMS (e.g. input:1x3x224x224), got '" + spec + "'");
  options.input_shapes[spec.substr(0, colon)] = parse_shape_spec(spec.substr(colon + 1));
}

void parse_dim_spec(const std::string& spec, LoadOptions& options) {
  const size_t eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0) throw_usage("--dim expects NAME=VALUE (e.g. batch=8), got '" + spec + "'");
  options.dim_values[spec.substr(0, eq)] = parse_dim(spec.substr(eq + 1), "--dim " + spec);
}

void parse_branch_spec(const std::string& spec, LoadOptions& options) {
  const size_t eq = spec.rfind('=');
  const std::string which = eq == std::string::npos ? "" : spec.substr(eq + 1);
  if (eq == std::string::npos || eq == 0 || (which != "then" && which != "else"))
    throw_usage("--branch expects NODE=then or NODE=else (an If node's name), got '" + spec + "'");
  options.branches[spec.substr(0, eq)] = which == "then";
}

void parse_trip_count_spec(const std::string& spec, LoadOptions& options) {
  const size_t eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0)
    throw_usage("--trip-count expects NODE=N (a Loop node's name), got '" + spec + "'");
  options.trip_counts[spec.substr(0, eq)] = parse_dim(spec.substr(eq + 1), "--trip-count " + spec);
}

}  // namespace modelstat

#include "modelstat/error.hpp"

namespace modelstat {

namespace {
std::string compose(const std::string& message, const std::string& file, const std::string& node,
                    const std::string& op) {
  std::string out;
  if (!file.empty()) out += file + ": ";
  if (!node.empty()) {
    out += "node '" + node + "'";
    if (!op.empty()) out += " (" + op + ")";
    out += ": ";
  }
  return out + message;
}
}  // namespace

Error::Error(ErrorKind kind, std::string message, std::string file, std::string node, std::string op)
    : std::runtime_error(compose(message, file, node, op)),
      kind_(kind),
      message_(std::move(message)),
      file_(std::move(file)),
      node_(std::move(node)),
      op_(std::move(op)) {}

void throw_input(const std::string& message, const std::string& node, const std::string& op) {
  throw Error(ErrorKind::Input, message, {}, node, op);
}

void throw_usage(const std::string& message) { throw Error(ErrorKind::Usage, message); }

}  // namespace modelstat

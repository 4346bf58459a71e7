// Optimizer names (include/modelstat/optimizer.hpp).
#include "modelstat/optimizer.hpp"

#include <utility>

#include "modelstat/error.hpp"

namespace modelstat {

namespace {

constexpr std::pair<Optimizer, const char*> kNames[] = {
    {Optimizer::Sgd, "sgd"}, {Optimizer::Momentum, "momentum"}, {Optimizer::Adam, "adam"}};

}  // namespace

const char* optimizer_name(Optimizer optimizer) {
  for (const auto& [o, name] : kNames)
    if (o == optimizer) return name;
  return "?";
}

Optimizer parse_optimizer(const std::string& name) {
  for (const auto& [o, known] : kNames)
    if (name == known) return o;
  throw Error(ErrorKind::Usage, "--optimizer must be sgd, momentum or adam, got '" + name + "'");
}

}  // namespace modelstat

// Optimizer names (include/modelstat/optimizer.hpp).
#include "modelstat/optimizer.hpp"

#include "modelstat/error.hpp"

namespace modelstat {

const char* optimizer_name(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::Sgd: return "sgd";
    case Optimizer::Momentum: return "momentum";
    case Optimizer::Adam: return "adam";
  }
  return "?";
}

Optimizer parse_optimizer(const std::string& name) {
  for (Optimizer o : {Optimizer::Sgd, Optimizer::Momentum, Optimizer::Adam})
    if (name == optimizer_name(o)) return o;
  throw Error(ErrorKind::Usage, "--optimizer must be sgd, momentum or adam, got '" + name + "'");
}

}  // namespace modelstat

// (Being written.)
#include "profiler/ceilings_probe.hpp"

#include "modelstat/error.hpp"

namespace modelstat::profiler {

DeviceCeilings measure_ceilings(const CeilingsProbeOptions&) {
  throw Error(ErrorKind::Runtime, "measuring ceilings is not implemented yet");
}

}  // namespace modelstat::profiler

// libFuzzer target over loading + analysis of an in-memory model.
// Any modelstat::Error is an orderly rejection; anything else escaping
// (another exception, a sanitizer report, a crash, a hang) is a bug.
#include <cstddef>
#include <cstdint>

#include "modelstat/analysis.hpp"
#include "modelstat/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  modelstat::LoadOptions options;
  try {
    // base_dir "" : external data locations are validated but never opened.
    (void)modelstat::analyze_buffer(data, size, options, "");
  } catch (const modelstat::Error&) {
  }
  return 0;
}

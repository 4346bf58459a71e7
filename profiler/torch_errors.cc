// LibTorch's exceptions as modelstat's errors (torch_errors.hpp).
#include "profiler/torch_errors.hpp"

#include <c10/util/Exception.h>

#include <new>

namespace modelstat::profiler {

std::string first_line(const std::exception& e) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
  const std::string what = c10_error ? c10_error->what_without_backtrace() : e.what();
  return what.substr(0, what.find('\n'));
}

bool is_out_of_memory(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e)) return true;
  if (dynamic_cast<const c10::OutOfMemoryError*>(&e)) return true;
  const std::string what = e.what();
  return what.find("out of memory") != std::string::npos || what.find("can't allocate memory") != std::string::npos ||
         what.find("not enough memory") != std::string::npos;
}

Error error_from(const std::exception& e, const std::string& file, const std::string& oom_advice) {
  if (const auto* own = dynamic_cast<const Error*>(&e)) return with_file(*own, file);
  const std::string what = first_line(e);
  if (is_out_of_memory(e))
    return Error(ErrorKind::CannotRun, "out of memory: " + what + (oom_advice.empty() ? "" : "; " + oom_advice), file);
  return Error(ErrorKind::Runtime, what, file);
}

Error with_file(const Error& e, const std::string& file) {
  if (!e.file().empty() || file.empty()) return e;
  return Error(e.kind(), e.message(), file, e.node(), e.op());
}

}  // namespace modelstat::profiler

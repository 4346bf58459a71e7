// The one boundary where what LibTorch (ATen, c10, the allocators) throws
// becomes modelstat's error: one line (ATen's messages carry a C++ backtrace
// after the first), out of memory told apart. Every entry point of the
// profiler (profile, pipeline, verify, the device probes) maps through here;
// a node's own run maps through aten_error (profiler/executor.hpp), which
// adds the node and the dtype advice.
#pragma once

#include <exception>
#include <string>

#include "modelstat/error.hpp"

namespace modelstat::profiler {

// The first line of what `e` says (c10::Error: without its backtrace).
std::string first_line(const std::exception& e);

// Out-of-memory errors from ATen (CUDA caching allocator, CPU allocator) and std::bad_alloc.
bool is_out_of_memory(const std::exception& e);

// `e` (not a modelstat::Error) as one: CannotRun "out of memory: WHAT; ADVICE"
// when it is one (`oom_advice` may be empty), else Runtime; naming `file`.
Error error_from(const std::exception& e, const std::string& file, const std::string& oom_advice);

// A modelstat::Error that names no file yet, naming `file`; others unchanged.
Error with_file(const Error& e, const std::string& file);

}  // namespace modelstat::profiler

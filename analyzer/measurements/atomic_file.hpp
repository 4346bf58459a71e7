// Writing a file so that it is either the old one or the complete new one: the
// one writer of every report (-o FILE, report's --html/--json/--csv/--md/--trace
// FILE) and of saved ceilings.
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace modelstat {

// Writes what `write` puts on the stream to a temporary file in `path`'s folder
// (".NAME.tmp-PID-XXXXXX", unique, created exclusively), flushes it to disk and
// renames it over `path`, so that an interrupted or failed run never leaves a
// half-written file in place of an older good one. On failure the temporary is
// removed (also on SIGINT / SIGTERM while it exists) and Error(Runtime) names
// `path` and the system's reason: a missing or read-only folder, a full disk, a
// stream that failed. An exception from `write` removes the temporary and goes
// on. A new file gets the usual mode (0666 less the umask), a replaced one keeps
// its own; a symbolic link is followed (its target is replaced). A path that
// exists and is not a regular file (/dev/null, a FIFO, a terminal) is written
// in place: it cannot be replaced.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);

}  // namespace modelstat

#include "tools/cli_common.hpp"

#include <unistd.h>

namespace modelstat::cli {

void write_output(const std::string& path, const std::function<void(std::ostream&, bool is_tty)>& write) {
  if (path.empty() || path == "-") {
    write(std::cout, isatty(STDOUT_FILENO) != 0);
    std::cout.flush();
    if (!std::cout) throw Error(ErrorKind::Runtime, "cannot write to standard output");
    return;
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw Error(ErrorKind::Usage, "cannot open output file '" + path + "'");
  write(file, false);
  file.close();
  if (!file) throw Error(ErrorKind::Runtime, "failed writing '" + path + "'");
}

}  // namespace modelstat::cli

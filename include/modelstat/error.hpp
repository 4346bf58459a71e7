// The one error type of modelstat. Library code throws it with context; only
// main() catches it and maps the kind to an exit code (2 for bad usage, bad
// input, or a model this machine cannot run; 1 for runtime failure).
#pragma once

#include <stdexcept>
#include <string>

namespace modelstat {

enum class ErrorKind {
  Usage,    // bad command line                        -> exit 2
  Input,    // the model or a file it names is invalid -> exit 2
  Runtime,  // something failed while running          -> exit 1
  // A valid model this executor or machine cannot run: an op with no kernel
  // for a dtype on the device, not enough memory for the bound shapes. The
  // message says what to do instead.                   -> exit 2
  CannotRun,
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message, std::string file = {},
        std::string node = {}, std::string op = {});

  ErrorKind kind() const noexcept { return kind_; }
  const std::string& message() const noexcept { return message_; }
  const std::string& file() const noexcept { return file_; }
  const std::string& node() const noexcept { return node_; }
  const std::string& op() const noexcept { return op_; }

  // Exit code main() returns for this error.
  int exit_code() const noexcept { return kind_ == ErrorKind::Runtime ? 1 : 2; }

 private:
  ErrorKind kind_;
  std::string message_, file_, node_, op_;
};

// Shorthands used throughout the library.
[[noreturn]] void throw_input(const std::string& message,
                              const std::string& node = {},
                              const std::string& op = {});
[[noreturn]] void throw_usage(const std::string& message);

}  // namespace modelstat

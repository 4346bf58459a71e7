// A one-line progress indicator on stderr, only when stderr is a terminal
// (never in logs, pipes or CI), refreshed at most 10 times a second.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace modelstat::profiler {

class Progress {
 public:
  Progress(std::string label, double budget_seconds)
      : label_(std::move(label)), budget_(budget_seconds), enabled_(isatty(STDERR_FILENO) != 0) {}
  ~Progress() { done(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void update(double elapsed, size_t iterations) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (shown_ && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    shown_ = true;
    const int width = 24;
    const int filled = budget_ > 0 ? int(width * std::min(1.0, elapsed / budget_)) : 0;
    std::fprintf(stderr, "\r  %-14s [%s%s] %6.1f s  %zu runs ", label_.c_str(), std::string(size_t(filled), '#').c_str(),
                 std::string(size_t(width - filled), '.').c_str(), elapsed, iterations);
    std::fflush(stderr);
  }
  void done() {
    if (enabled_ && shown_) std::fprintf(stderr, "\r%80s\r", "");
    shown_ = false;
  }

 private:
  std::string label_;
  double budget_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace modelstat::profiler

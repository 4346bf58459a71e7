// Host clock timers. ATen's CPU backend executes each op synchronously on the calling
// thread (its intra-op thread pool joins before the op returns), so steady_clock readings
// taken around the calls measure the work itself, with no synchronisation needed.
// steady_clock, not system_clock: monotonic, immune to NTP adjustments.
#include <chrono>
#include <string>

#include "modelstat/error.hpp"
#include "profiler/timer.hpp"

namespace modelstat::profiler {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

class CpuIntervalTimer final : public IntervalTimer {
 public:
  void start() override {
    started_ = true;
    stopped_ = false;
    start_ = Clock::now();
  }
  void stop() override {
    stop_ = Clock::now();
    if (!started_) throw Error(ErrorKind::Runtime, "CPU interval timer: stop() without start()");
    stopped_ = true;
  }
  double seconds() override {
    if (!stopped_) throw Error(ErrorKind::Runtime, "CPU interval timer: seconds() before start() and stop()");
    return seconds_between(start_, stop_);
  }
  TimeDomain domain() const override { return TimeDomain::Host; }

 private:
  Clock::time_point start_, stop_;
  bool started_ = false, stopped_ = false;
};

class CpuMarkerTimer final : public MarkerTimer {
 public:
  void reset(size_t markers) override {
    times_.assign(markers, Clock::time_point{});  // keeps the capacity append() grew
    recorded_ = 0;
  }
  void mark(size_t i) override {
    const Clock::time_point now = Clock::now();  // read first: bookkeeping is not timed
    if (i != recorded_ || i >= times_.size()) {
      throw Error(ErrorKind::Runtime, "CPU marker timer: marker " + std::to_string(i) +
                                          " recorded out of order (" + std::to_string(recorded_) + " of " +
                                          std::to_string(times_.size()) + " recorded)");
    }
    times_[i] = now;
    ++recorded_;
  }
  size_t append() override {
    const Clock::time_point now = Clock::now();
    if (recorded_ == times_.size())
      times_.push_back(now);
    else
      times_[recorded_] = now;
    return recorded_++;
  }
  std::vector<double> intervals() override {
    check_complete();
    std::vector<double> out;
    if (times_.size() < 2) return out;
    out.reserve(times_.size() - 1);
    for (size_t i = 0; i + 1 < times_.size(); ++i) out.push_back(seconds_between(times_[i], times_[i + 1]));
    return out;
  }
  std::vector<double> offsets() override {
    check_complete();
    std::vector<double> out;
    out.reserve(times_.size());
    for (const Clock::time_point& t : times_) out.push_back(seconds_between(times_[0], t));
    return out;
  }
  TimeDomain domain() const override { return TimeDomain::Host; }

 private:
  void check_complete() const {
    if (recorded_ != times_.size()) {
      throw Error(ErrorKind::Runtime, "CPU marker timer: only " + std::to_string(recorded_) + " of " +
                                          std::to_string(times_.size()) + " markers recorded");
    }
  }

  std::vector<Clock::time_point> times_;
  size_t recorded_ = 0;
};

}  // namespace

const char* to_string(TimeDomain domain) {
  switch (domain) {
    case TimeDomain::Host:
      return "host steady_clock";
    case TimeDomain::CudaEvents:
      return "CUDA events";
  }
  return "unknown";
}

std::unique_ptr<IntervalTimer> make_cpu_interval_timer() {
  return std::make_unique<CpuIntervalTimer>();
}
std::unique_ptr<MarkerTimer> make_cpu_marker_timer() {
  return std::make_unique<CpuMarkerTimer>();
}

}  // namespace modelstat::profiler

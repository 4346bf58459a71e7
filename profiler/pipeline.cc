// `modelstat pipeline`: several models and host work in one path, each stage
// timed without stalling the path (seed 001, issue 15). Order of the passes:
//   load every stage (weights to its device), first run of the path, warm-up
//   of the whole path -> pass 1, the clean path (one interval timer around it,
//   no marker between stages) -> pass 2, markers between stages on the
//   execution stream (CUDA events; on the CPU the host clock), one wait per
//   iteration: per-stage times, their sum, and a timeline -> optionally the
//   timer comparison (host timer without sync, sync after every stage; the
//   events row is pass 2) -> optionally N frames in flight -> optionally each
//   model stage's per-layer profile, apart from the path.
// Warm-up, stopping rule and statistics are `profile`'s (profiler/sampling.hpp).
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "modelstat/error.hpp"
#include "modelstat/pipeline.hpp"
#include "profiler/device.hpp"
#include "profiler/run_setup.hpp"
#include "profiler/torch_errors.hpp"
#include "profiler/executor.hpp"
#include "profiler/given_inputs.hpp"
#include "profiler/pipeline_streams.hpp"
#include "profiler/run_context.hpp"
#include "profiler/sampling.hpp"

namespace modelstat {

namespace profiler {

namespace {

class CpuSlotStreams final : public SlotStreams {
 public:
  std::unique_ptr<Device::WorkerScope> enter(size_t) override { return std::make_unique<Device::WorkerScope>(); }
  std::string mechanism() const override {
    return "a worker thread per stage, frames handed from stage to stage through queues (CPU)";
  }
};

// Host work of a fixed duration: the calling thread spins on the steady
// clock (busy, as a NumPy step keeps its core busy; a sleep would free it).
void spin_for(double seconds) {
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  while (Clock::now() < end) {
  }
}

// One iteration's tensors: the outputs of every stage (empty for a busy host stage).
using Frame = std::vector<std::vector<at::Tensor>>;

// The stages, loaded, with their inputs; runs one stage of one frame.
class Path {
 public:
  Path(const PipelineSpec& spec, const ProfileOptions& o, std::map<std::string, std::unique_ptr<Device>>& devices,
       std::vector<std::string>& notices)
      : spec_(spec) {
    for (size_t k = 0; k < spec.stages.size(); ++k) {
      const PipelineStage& s = spec.stages[k];
      Stage st;
      st.spec = &s;
      auto& device = devices[s.device];
      if (!device) device = make_device(s.device);
      st.device = device.get();
      if (s.is_model()) {
        st.model = std::make_unique<Model>(load_model(s.model, s.load));
        ExecOptions eo = exec_options(o, st.device->torch_device(), ExecPurpose::Inference);
        eo.seed = o.seed + uint64_t(k) * 1000;
        try {
          st.exec = std::make_unique<Executor>(*st.model, eo);
        } catch (const Error& e) {
          throw Error(e.kind(), "stage '" + s.name + "': " + e.message(), s.model, e.node(), e.op());
        }
        for (const auto& n : st.exec->weights().notices()) notices.push_back("stage '" + s.name + "': " + n);
        // --value: each stage takes the values of its own inputs.
        ProfileOptions mine;
        mine.input_values = values_for(st.model->graph, o.input_values);
        const GivenValues given = read_given_values(st.model->graph, mine);
        for (int set = 0; set < std::max(1, o.input_sets); ++set) {
          std::vector<at::Tensor> in = st.exec->make_inputs(eo.seed + uint64_t(set));
          feed_given_values(given, in);
          for (size_t i = 0; i < in.size(); ++i) {
            if (s.inputs[i].from_stage >= 0)
              in[i] = at::Tensor();  // fed by the stage it links to
            else
              in[i] = in[i].to(eo.device);
          }
          st.own_inputs.push_back(std::move(in));
        }
      }
      stages_.push_back(std::move(st));
    }
  }

  size_t size() const { return stages_.size(); }
  const PipelineStage& spec(size_t k) const { return *stages_[k].spec; }
  Device& device(size_t k) const { return *stages_[k].device; }
  const Executor* executor(size_t k) const { return stages_[k].exec.get(); }

  // Runs stage k of `frame` (input set `set` for inputs no stage feeds). An
  // output crossing devices is copied inside the consuming stage's interval.
  void run(size_t k, Frame& frame, size_t set) const {
    const Stage& st = stages_[k];
    if (frame.size() != stages_.size()) frame.resize(stages_.size());
    if (st.spec->kind == StageKind::HostBusy) {
      spin_for(st.spec->busy_seconds);
      return;
    }
    const std::vector<at::Tensor>& own = st.own_inputs[set % st.own_inputs.size()];
    std::vector<at::Tensor> inputs(own.size());
    const at::Device where = st.device->torch_device();
    for (size_t i = 0; i < own.size(); ++i) {
      const StageInputSource& src = st.spec->inputs[i];
      if (src.from_stage < 0) {
        inputs[i] = own[i];
        continue;
      }
      const std::vector<at::Tensor>& produced = frame[size_t(src.from_stage)];
      if (size_t(src.from_output) >= produced.size())
        throw Error(ErrorKind::Runtime, "stage '" + st.spec->name + "': input '" + src.input + "' has no value (stage '" +
                                            stages_[size_t(src.from_stage)].spec->name + "' did not run)");
      const at::Tensor& t = produced[size_t(src.from_output)];
      inputs[i] = t.device() == where ? t : t.to(where);
    }
    try {
      frame[k] = st.exec->run(inputs);
    } catch (const Error& e) {
      throw Error(e.kind(), "stage '" + st.spec->name + "': " + e.message(), st.spec->model, e.node(), e.op());
    }
  }

  void run_all(Frame& frame, size_t set) const {
    for (size_t k = 0; k < stages_.size(); ++k) run(k, frame, set);
  }

 private:
  struct Stage {
    const PipelineStage* spec = nullptr;
    Device* device = nullptr;
    std::unique_ptr<Model> model;
    std::unique_ptr<Executor> exec;
    std::vector<std::vector<at::Tensor>> own_inputs;  // per input set; undefined where a stage feeds it
  };
  const PipelineSpec& spec_;
  std::vector<Stage> stages_;
};

// The device whose clock times the path: CUDA when any stage runs there.
Device& path_device(const Path& path) {
  for (size_t k = 0; k < path.size(); ++k)
    if (path.spec(k).device == "cuda") return path.device(k);
  return path.device(0);
}

void synchronize_all(const Path& path) {
  for (size_t k = 0; k < path.size(); ++k) path.device(k).synchronize();
}

// One iteration of the path timed one way: each stage's seconds and the
// path's, first stage's start to last stage's end.
struct PathSample {
  std::vector<double> stages;
  double end_to_end = 0;
  double start = 0;             // host clock at the iteration's start, seconds from the pass's origin
  std::vector<double> offsets;  // markers (events way only): t(i) - t(0)
};

// The three ways of timing the path (seed 001). Each run() is one iteration.
class PathMethod {
 public:
  virtual ~PathMethod() = default;
  virtual PathSample run(size_t i) = 0;
  virtual PathTiming describe() const = 0;  // method, description; no samples
  virtual std::string clock(size_t k) const = 0;
};

// Markers between stages on the path's timer, one wait per iteration (pass
// 2, and the events way of the comparison). A stage on the host is timed by
// the host clock too: on a GPU path the events around it measure the stream,
// not the host work.
class EventsMethod final : public PathMethod {
 public:
  explicit EventsMethod(const Path& path)
      : path_(path), gpu_(path_device(path).torch_device().is_cuda()), markers_(path_device(path).marker_timer()),
        host_seconds_(path.size()), origin_(Clock::now()) {}
  PathSample run(size_t i) override {
    const size_t n = path_.size();
    Frame frame;
    PathSample s;
    s.start = since(origin_);
    markers_->reset(n + 1);
    markers_->mark(0);
    for (size_t k = 0; k < n; ++k) {
      const auto h = Clock::now();
      path_.run(k, frame, i);
      if (path_.spec(k).on_host()) host_seconds_[k] = since(h);
      markers_->mark(k + 1);
    }
    s.offsets = markers_->offsets();  // the one wait
    for (size_t k = 0; k < n; ++k)
      s.stages.push_back(gpu_ && path_.spec(k).on_host() ? host_seconds_[k] : s.offsets[k + 1] - s.offsets[k]);
    s.end_to_end = s.offsets[n];
    return s;
  }
  PathTiming describe() const override {
    PathTiming t;
    t.method = "events";
    t.description = gpu_ ? "CUDA events recorded between stages on the execution stream, one wait per iteration"
                         : "host clock between stages (ATen's CPU work is synchronous: nothing is stalled)";
    return t;
  }
  std::string clock(size_t k) const override {
    return gpu_ && !path_.spec(k).on_host() ? "cuda events" : "host clock";
  }

 private:
  const Path& path_;
  bool gpu_;
  std::unique_ptr<MarkerTimer> markers_;
  std::vector<double> host_seconds_;
  Clock::time_point origin_;
};

// The host clock around each stage: without any synchronisation (what a host
// timer around an asynchronous call measures: the enqueue), or with one after
// every stage (right per stage, but the host waits at each one, so the path
// gets longer).
class HostClockMethod final : public PathMethod {
 public:
  HostClockMethod(const Path& path, bool sync_each_stage) : path_(path), sync_(sync_each_stage) {}
  PathSample run(size_t i) override {
    Frame frame;
    PathSample s;
    if (sync_) synchronize_all(path_);
    const auto start = Clock::now();
    for (size_t k = 0; k < path_.size(); ++k) {
      const auto h = Clock::now();
      path_.run(k, frame, i);
      if (sync_) synchronize_all(path_);
      s.stages.push_back(since(h));
    }
    s.end_to_end = since(start);
    synchronize_all(path_);  // outside the span: the next iteration starts on an idle device
    return s;
  }
  PathTiming describe() const override {
    PathTiming t;
    t.method = sync_ ? "sync after every stage" : "host timer, no sync";
    t.description = sync_ ? "host clock, device synchronised after every stage: right per stage, but the host "
                            "waits at each one"
                          : "host clock around each stage without synchronising: measures the enqueue only (the "
                            "path is synchronised after the iteration, outside the timed span)";
    return t;
  }
  std::string clock(size_t) const override {
    return sync_ ? "host clock + sync" : "host clock, no sync (enqueue only)";
  }

 private:
  const Path& path_;
  bool sync_;
};

PathTiming summarize(const PathMethod& method, const std::vector<PathSample>& samples, const Path& path,
                     const std::string& reason) {
  PathTiming t = method.describe();
  std::vector<double> sums, ends;
  for (const PathSample& s : samples) {
    double sum = 0;
    for (double v : s.stages) sum += v;
    sums.push_back(sum);
    ends.push_back(s.end_to_end);
  }
  for (size_t k = 0; k < path.size(); ++k) {
    std::vector<double> v;
    for (const PathSample& s : samples) v.push_back(s.stages[k]);
    t.stages.push_back({path.spec(k).name, to_summary(v, reason), method.clock(k)});
  }
  t.stage_sum = to_summary(sums, reason);
  t.end_to_end = to_summary(ends, reason);
  return t;
}

// Pass 2: the events way under the stopping rule (on the per-iteration sum of
// the stages), and the first iterations kept as the timeline.
PathTiming staged_pass(const ProfileOptions& o, const Path& path, std::vector<TimelineSpan>& timeline,
                       int timeline_iterations) {
  EventsMethod events(path);
  std::vector<PathSample> samples;
  const TimingSummary sums = sample_until_stable(o, "pipeline stages", [&](size_t i) {
    samples.push_back(events.run(i));
    double sum = 0;
    for (double v : samples.back().stages) sum += v;
    return sum;
  });
  const size_t kept = std::min(samples.size(), size_t(std::max(0, timeline_iterations)));
  for (size_t it = 0; it < kept; ++it)
    for (size_t k = 0; k < path.size(); ++k)
      timeline.push_back({int(k), int64_t(it), samples[it].start - samples[0].start + samples[it].offsets[k],
                          samples[it].start - samples[0].start + samples[it].offsets[k + 1]});
  return summarize(events, samples, path, sums.stop_reason);
}

// --timer-comparison: the three ways interleaved, one iteration of each in
// turn, so that all three see the same conditions (on a shared machine, load
// that comes and goes would otherwise land on one way's pass and not the
// others'). Each way has its own stopping criterion on its end-to-end
// samples; the loop ends when all three have stopped.
std::vector<PathTiming> timer_comparison(const ProfileOptions& o, const Path& path) {
  std::vector<std::unique_ptr<PathMethod>> methods;
  methods.push_back(std::make_unique<HostClockMethod>(path, false));
  methods.push_back(std::make_unique<HostClockMethod>(path, true));
  methods.push_back(std::make_unique<EventsMethod>(path));
  std::vector<MedianCiCriterion> criteria(methods.size(), MedianCiCriterion(stopping_config(o)));
  std::vector<std::vector<PathSample>> samples(methods.size());
  std::vector<std::vector<double>> ends(methods.size());
  std::vector<bool> stopped(methods.size(), false);
  Progress progress("timer comparison", o.max_seconds);
  const auto start = Clock::now();
  for (size_t i = 0; std::find(stopped.begin(), stopped.end(), false) != stopped.end(); ++i) {
    for (size_t m = 0; m < methods.size(); ++m) {
      if (stopped[m]) continue;
      samples[m].push_back(methods[m]->run(i));
      ends[m].push_back(samples[m].back().end_to_end);
    }
    const double elapsed = since(start);
    progress.update(elapsed, i + 1);
    for (size_t m = 0; m < methods.size(); ++m)
      if (!stopped[m]) stopped[m] = criteria[m].should_stop(ends[m], elapsed);
  }
  progress.done();
  std::vector<PathTiming> out;
  for (size_t m = 0; m < methods.size(); ++m)
    out.push_back(summarize(*methods[m], samples[m], path, criteria[m].reason()));
  return out;
}

// A blocking queue of frames between two stage workers; nullptr closes it.
template <typename T>
class Channel {
 public:
  void push(T value) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      items_.push_back(std::move(value));
    }
    ready_.notify_one();
  }
  T pop() {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [&] { return !items_.empty(); });
    T value = std::move(items_.front());
    items_.pop_front();
    return value;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<T> items_;
};

struct FlightFrame {
  int64_t id = 0;
  size_t slot = 0;
  Frame tensors;
  Clock::time_point admitted, done;
  std::vector<double> stage_start, stage_end;  // host clock, seconds from the run's origin
  std::vector<IntervalTimer*> timers;           // per stage, on the frame's stream (device stages)
};

// N frames in flight: a worker thread per stage, frames handed on through
// channels; the calling thread admits a frame whenever fewer than N are in
// the path, and takes the finished ones. Warm-up and stopping rule as in
// `profile`, on the per-frame latency; throughput = measured frames / the
// time from the end of warm-up to the last measured frame.
InFlightResult in_flight_pass(const ProfileOptions& o, const Path& path, int frames_in_flight, int threads,
                              int stage_threads, int timeline_frames) {
  const size_t n = path.size();
  const bool gpu = path_device(path).torch_device().is_cuda();
  InFlightResult r;
  r.frames_in_flight = frames_in_flight;
  // Threads: one frame in flight runs one stage at a time, so each stage
  // gets every thread; with more, the stages that can run at once
  // (min(N, stages)) split the cores, so that they do not oversubscribe them.
  const int concurrent = std::max(1, std::min<int>(frames_in_flight, int(n)));
  const int per_stage = stage_threads > 0 ? stage_threads : std::max(1, threads / concurrent);
  r.intra_op_threads_per_stage = per_stage;
  r.threads = std::to_string(per_stage) + " intra-op thread(s) per stage worker (" +
              (stage_threads > 0 ? std::string("--stage-threads")
                                 : std::to_string(threads) + " threads / " + std::to_string(concurrent) +
                                       " stage(s) that can run at once, min(N, stages); --stage-threads to change") +
              ")";
  std::unique_ptr<SlotStreams> streams = make_slot_streams(gpu ? "cuda" : "cpu", size_t(frames_in_flight));
  r.mechanism = streams->mechanism();
  set_intra_op_threads(per_stage);  // a BLAS pool is per process

  std::vector<Channel<FlightFrame*>> channels(n);
  Channel<FlightFrame*> finished;
  // Per stage and slot: its event timer on the slot's stream (GPU), made by the
  // stage's worker inside the slot's scope and reused by the slot's next frames.
  std::vector<std::vector<std::unique_ptr<IntervalTimer>>> timers(n);
  for (auto& t : timers) t.resize(size_t(frames_in_flight));
  const auto origin = Clock::now();
  std::exception_ptr failure;
  std::mutex failure_mutex;
  std::vector<std::thread> workers;
  for (size_t k = 0; k < n; ++k)
    workers.emplace_back([&, k] {
      at::set_num_threads(per_stage);
      while (FlightFrame* f = channels[k].pop()) {
        try {
          auto scope = streams->enter(f->slot);
          const bool device_stage = gpu && !path.spec(k).on_host();
          if (device_stage && !timers[k][f->slot]) timers[k][f->slot] = path.device(k).interval_timer();
          f->stage_start[k] = since(origin);
          if (device_stage) timers[k][f->slot]->start();
          path.run(k, f->tensors, size_t(f->id));
          if (device_stage) {
            timers[k][f->slot]->stop();
            f->timers[k] = timers[k][f->slot].get();
          }
          f->stage_end[k] = since(origin);
          if (k + 1 == n && gpu) path.device(k).synchronize();  // the frame's result is on the host's side now
        } catch (...) {
          std::lock_guard<std::mutex> lock(failure_mutex);
          if (!failure) failure = std::current_exception();
        }
        if (k + 1 < n) {
          channels[k + 1].push(f);
        } else {
          f->done = Clock::now();
          finished.push(f);
        }
      }
    });

  std::vector<std::unique_ptr<FlightFrame>> slots(static_cast<size_t>(frames_in_flight));
  int64_t next_id = 0;
  auto admit = [&](size_t slot) {
    auto& f = slots[slot];
    if (!f) f = std::make_unique<FlightFrame>();
    f->id = next_id++;
    f->slot = slot;
    f->tensors.assign(n, {});
    f->stage_start.assign(n, 0);
    f->stage_end.assign(n, 0);
    f->timers.assign(n, nullptr);
    f->admitted = Clock::now();
    channels[0].push(f.get());
  };
  for (size_t s = 0; s < slots.size(); ++s) admit(s);

  const WarmupConfig warmup = warmup_config(o);
  MedianCiCriterion criterion(stopping_config(o));
  Progress progress("frames in flight", o.max_seconds);
  std::vector<double> latency;
  std::vector<std::vector<double>> service(n);
  int64_t completed = 0, in_flight = frames_in_flight;
  bool measuring = false, stopping = false;
  Clock::time_point measure_start, last_done;
  std::vector<TimelineSpan> spans;
  while (in_flight > 0) {
    FlightFrame* f = finished.pop();
    ++completed;
    if (!failure && !stopping) {  // frames finishing after the stop are the drain: not the steady state
      if (measuring) {
        latency.push_back(std::chrono::duration<double>(f->done - f->admitted).count());
        for (size_t k = 0; k < n; ++k)
          service[k].push_back(f->timers[k] ? f->timers[k]->seconds() : f->stage_end[k] - f->stage_start[k]);
        last_done = f->done;
        if (!gpu && int64_t(spans.size()) < int64_t(timeline_frames) * int64_t(n))
          for (size_t k = 0; k < n; ++k) spans.push_back({int(k), f->id, f->stage_start[k], f->stage_end[k]});
        const double elapsed = std::chrono::duration<double>(f->done - measure_start).count();
        progress.update(elapsed, latency.size());
        if (criterion.should_stop(latency, elapsed)) stopping = true;
      } else if (warmup_done(warmup, completed, since(origin))) {
        measuring = true;
        measure_start = f->done;
      }
    }
    if (failure) stopping = true;
    if (stopping)
      --in_flight;
    else
      admit(f->slot);
  }
  progress.done();
  for (auto& c : channels) c.push(nullptr);
  for (auto& w : workers) w.join();
  set_intra_op_threads(threads);
  if (failure) std::rethrow_exception(failure);

  r.frames = int64_t(latency.size());
  r.measured_seconds = std::chrono::duration<double>(last_done - measure_start).count();
  r.throughput = r.measured_seconds > 0 ? double(r.frames) / r.measured_seconds : 0;
  r.latency = to_summary(latency, criterion.reason());
  double worst = 0;
  for (size_t k = 0; k < n; ++k) {
    r.stages.push_back({path.spec(k).name, to_summary(service[k], criterion.reason()),
                        gpu && !path.spec(k).on_host() ? "cuda events on the frame's stream" : "host clock"});
    if (r.stages.back().time.median > worst) {
      worst = r.stages.back().time.median;
      r.bottleneck_stage = int(k);
    }
  }
  r.bottleneck_bound = worst > 0 ? 1.0 / worst : 0;
  // The timeline's origin: the first kept frame's admission.
  if (!spans.empty()) {
    double base = spans.front().start;
    for (const auto& s : spans) base = std::min(base, s.start);
    for (auto& s : spans) {
      s.start -= base;
      s.end -= base;
    }
  }
  r.timeline = std::move(spans);
  return r;
}

}  // namespace

std::unique_ptr<SlotStreams> make_slot_streams(const std::string& kind, size_t slots) {
  if (kind == "cpu") return std::make_unique<CpuSlotStreams>();
#ifdef MODELSTAT_TORCH_CUDA
  if (kind == "cuda") return make_cuda_slot_streams(slots);
#else
  (void)slots;
#endif
  throw Error(ErrorKind::Usage, "no frames-in-flight support for device '" + kind + "' in this build");
}

PipelineResult pipeline(const PipelineSpec& spec, const PipelineOptions& po) {
  const ProfileOptions& o = po.measure;
  if (po.in_flight < 0) throw Error(ErrorKind::Usage, "--in-flight must be at least 1");
  validate(stopping_config(o));
  bool any_cuda = false;
  for (const auto& s : spec.stages) any_cuda = any_cuda || s.device == "cuda";
  if (!any_cuda && cuda_only(o.dtype))
    throw Error(ErrorKind::Usage, std::string("--dtype ") + name_of(o.dtype) +
                                      " is for CUDA stages; on the CPU a model runs in its own dtypes");
  apply_float32_math(o.dtype, any_cuda && !o.train_step);
  PipelineResult result;
  result.source = spec.source;
  result.stages = spec.stages;
  const int threads = resolve_threads(o.threads);
  configure_host_allocator();
  set_intra_op_threads(threads);

  if (!o.inputs_dir.empty())
    throw Error(ErrorKind::Usage, "--inputs is for one model (profile, report); a pipeline's stages take --value "
                                  "NAME=V[,V...] by input name");
  for (const std::string& value : o.input_values) {
    bool fed = false;
    for (const auto& s : spec.stages)
      if (s.is_model()) fed = fed || !values_for(load_model(s.model, s.load).graph, {value}).empty();
    if (!fed)
      throw Error(ErrorKind::Usage, "--value " + value + ": no stage's model has a graph input of that name");
  }
  std::map<std::string, std::unique_ptr<Device>> devices;
  Path path(spec, o, devices, result.notices);
  Device& device = path_device(path);
  const size_t sets = size_t(std::max(1, o.input_sets));
  {
    Frame first;  // the first run pays for lazy initialisation: not timed
    path.run_all(first, 0);
    synchronize_all(path);
  }
  warm_up(o, device, [&](size_t i) {
    Frame frame;
    path.run_all(frame, i % sets);
    synchronize_all(path);
  });

  // Pass 1: the clean path.
  auto interval = device.interval_timer();
  result.end_to_end = sample_until_stable(o, "pipeline", [&](size_t i) {
    Frame frame;
    interval->start();
    path.run_all(frame, i % sets);
    interval->stop();
    return interval->seconds();
  });
  // Pass 2: between stages.
  result.staged = staged_pass(o, path, result.timeline, po.timeline_iterations);

  if (po.timer_comparison) {
    result.comparison = timer_comparison(o, path);
    result.comparison_note =
        device.torch_device().is_cuda()
            ? "on a GPU a host timer without a sync sees only the enqueue; a sync after every stage gives each "
              "stage's time but stalls the host at every stage, lengthening the path; events between stages "
              "give both right, with one wait per iteration (seed 001)"
            : "on the CPU the three agree: ATen's CPU kernels run synchronously on the calling thread (the "
              "enqueue is the work), so a synchronisation has nothing to wait for and nothing is stalled; on a "
              "GPU they differ (seed 001: enqueue-only times, and a path lengthened by the syncs)";
  }

  if (po.in_flight > 0)
    result.in_flight = in_flight_pass(o, path, po.in_flight, threads, po.stage_threads, po.timeline_iterations);

  if (po.layers) {
    // Each model stage's instrumented pass, on its own and never inside the
    // timed path: its inputs are random with the shapes of the link.
    ProfileOptions lo = o;
    lo.per_layer = true;
    lo.batch_sweep.clear();
    lo.find_max_batch = false;
    lo.concurrency = 0;
    lo.measure_memory = false;
    lo.train_step = false;
    for (const auto& s : spec.stages) {
      if (!s.is_model()) continue;
      lo.device = parse_as<DeviceKind>(s.device, "stage device");
      lo.input_values = values_for(load_model(s.model, s.load).graph, o.input_values);
      const ProfileResult p = profile_model(s.model, s.load, lo);
      result.layers.push_back({s.name, p.whole, p.layer_sum, p.layers});
    }
  }

  describe_run(device, result.context);
  result.context.seed = o.seed;
  result.context.dtype = o.dtype == ComputeDtype::Own ? "the models' own" : name_of(o.dtype);
  for (const auto& s : spec.stages)
    if (s.is_model()) {
      const Model m = load_model(s.model, s.load);
      for (int id : m.graph.inputs) {
        const auto& shape = m.graph.tensors[size_t(id)].shape;
        if (shape.rank_known && !shape.dims.empty() && shape.dims[0].known()) {
          result.context.batch = shape.dims[0].value;
          break;
        }
      }
      break;
    }
  return result;
}

}  // namespace profiler

PipelineResult run_pipeline(const PipelineSpec& spec, const PipelineOptions& options) {
  try {
    return profiler::pipeline(spec, options);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw profiler::error_from(e, spec.source, "");
  }
}

}  // namespace modelstat

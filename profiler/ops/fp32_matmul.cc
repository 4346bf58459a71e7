// fp32 Gemm / MatMul on oneDNN or BLAS, chosen per shape (fp32_matmul.hpp).
#include "profiler/ops/fp32_matmul.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include <ATen/Parallel.h>

#include "modelstat/error.hpp"
#include "profiler/ops/direct_kernels.hpp"
#include "profiler/run_context.hpp"

#if defined(MODELSTAT_HAVE_DNNL)
#include <oneapi/dnnl/dnnl.hpp>

#include "profiler/ops/onednn_cpu.hpp"
#include "profiler/ops/silu.hpp"
#endif

namespace modelstat::profiler {

namespace {

// ---- the per-machine choice cache ------------------------------------------

struct Choice {
  bool onednn = false;
  double onednn_us = 0, blas_us = 0;
};

std::string clean(std::string s) {
  for (char& c : s)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return s;
}

std::string cache_dir() {
  if (const char* d = std::getenv("MODELSTAT_CACHE_DIR")) {
    if (std::string(d) == "none") return {};
    if (*d) return d;
  }
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/modelstat";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/modelstat";
  return {};
}

// mkdir -p; false (errno set) on failure.
bool make_dirs(const std::string& dir) {
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    const std::string part = dir.substr(0, pos);
    if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  return true;
}

class ChoiceCache {
 public:
  static ChoiceCache& instance() {
    static ChoiceCache cache;
    return cache;
  }

  // The machine part of every key: what decides which kernel is faster.
  const std::string& machine() {
    std::call_once(machine_once_, [this] {
      machine_ = clean(cpu_model_name() + " | " + blas_description() + " | " + onednn_isa_description());
    });
    return machine_;
  }

  std::optional<Choice> find(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    load();
    auto it = choices_.find(key);
    if (it == choices_.end()) return std::nullopt;
    if (from_file_.erase(key) > 0) ++summary_.cached;  // counted once per process
    return it->second;
  }

  void store(const std::string& key, const Choice& c) {
    std::lock_guard<std::mutex> lock(mutex_);
    load();
    choices_[key] = c;
    ++summary_.measured;
    if (summary_.cache_file.empty()) return;
    std::ostringstream line;
    line << key << '\t' << (c.onednn ? "onednn" : "blas") << '\t' << c.onednn_us << '\t' << c.blas_us << '\n';
    const std::string text = line.str();
    // One write of one line with O_APPEND: concurrent processes interleave whole lines.
    const int fd = ::open(summary_.cache_file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 || ::write(fd, text.data(), text.size()) != ssize_t(text.size())) {
      summary_.cache_error = summary_.cache_file + ": " + std::strerror(errno);
      summary_.cache_file.clear();
    }
    if (fd >= 0) ::close(fd);
  }

  void count(bool onednn) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++(onednn ? summary_.onednn : summary_.blas);
  }

  GemmChoiceSummary summary() {
    std::lock_guard<std::mutex> lock(mutex_);
    return summary_;
  }

 private:
  // Reads the file once; a missing file is an empty cache, a line that does
  // not parse is skipped (a later line for the same key wins).
  void load() {
    if (loaded_) return;
    loaded_ = true;
    const std::string dir = cache_dir();
    if (dir.empty()) {
      summary_.cache_error = "MODELSTAT_CACHE_DIR=none (or no HOME): choices kept in memory only";
      return;
    }
    if (!make_dirs(dir)) {
      summary_.cache_error = dir + ": " + std::strerror(errno);
      return;
    }
    // v2: one-row shapes time BLAS's gemv (v1 timed its gemm, 3-10x slower for them); v3: a
    // trailing SiLU runs on modelstat's own pass after oneDNN's kernel (v2 timed the swish post-op).
    summary_.cache_file = dir + "/gemm-choices-v3.tsv";
    std::ifstream in(summary_.cache_file);
    std::string line;
    while (std::getline(in, line)) {
      // key = machine \t threads \t M \t K \t N \t layout \t post-ops; then choice, µs, µs
      std::vector<std::string> fields;
      std::stringstream ss(line);
      for (std::string f; std::getline(ss, f, '\t');) fields.push_back(f);
      if (fields.size() != 10 || (fields[7] != "onednn" && fields[7] != "blas")) continue;
      std::string key = fields[0];
      for (size_t i = 1; i < 7; ++i) key += '\t' + fields[i];
      Choice c;
      c.onednn = fields[7] == "onednn";
      c.onednn_us = std::atof(fields[8].c_str());
      c.blas_us = std::atof(fields[9].c_str());
      choices_[key] = c;
      from_file_.insert(key);
    }
  }

  std::mutex mutex_;
  std::once_flag machine_once_;
  std::string machine_;
  bool loaded_ = false;
  std::unordered_map<std::string, Choice> choices_;
  std::unordered_set<std::string> from_file_;  // keys read from the file, not yet used by this process
  GemmChoiceSummary summary_;
};

const char* post_op_name(FusedPostOp::Kind kind) {
  using K = FusedPostOp::Kind;
  switch (kind) {
    case K::Relu: return "relu";
    case K::LeakyRelu: return "leaky_relu";
    case K::Clip: return "clip";
    case K::HardSigmoid: return "hard_sigmoid";
    case K::HardSwish: return "hard_swish";
    case K::Sigmoid: return "sigmoid";
    case K::Tanh: return "tanh";
    case K::Swish: return "swish";
    case K::Gelu: return "gelu";
    case K::GeluTanh: return "gelu_tanh";
    case K::AddResidual: return "residual";
  }
  return "?";
}

std::string post_op_signature(const std::vector<FusedPostOp>& ops, bool bias) {
  std::string s = bias ? "bias" : "";
  for (const FusedPostOp& op : ops) s += std::string(s.empty() ? "" : ",") + post_op_name(op.kind);
  return s.empty() ? "-" : s;
}

template <class F>
double seconds_of(F&& f) {
  const auto t = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

}  // namespace

std::string gemm_choice_cache_path() { return ChoiceCache::instance().summary().cache_file; }
GemmChoiceSummary gemm_choice_summary() { return ChoiceCache::instance().summary(); }

// ---- the kernel ------------------------------------------------------------

struct Fp32MatmulKernel::Impl {
  at::Tensor weight;  // K x N for BLAS; undefined once only the packed copy is needed
  at::Tensor bias;    // N, or undefined
  int64_t k = 0, n = 0;
  bool transposed = false;  // `weight` is the transpose of a contiguous N x K (a Gemm's transB)
  bool stored_nxk = false;  // as the model stores it (the cache key's layout)
  std::vector<FusedPostOp> post_ops;
  OnednnPostOpSplit split;  // what oneDNN's primitive applies; a trailing SiLU runs after it
  GemmBackend backend = GemmBackend::Auto;
  int residual_index = -1;
  // K x N (as `weight` was given) when a few rows of it fit the direct loop
  // (direct_kernels.hpp) and the backend is Auto: kept even where oneDNN's
  // packed copy releases `weight` (at most kDirectGemmMaxMacs floats).
  at::Tensor direct_weight;
  mutable std::atomic<bool> ran_direct{false};  // the last shape prepared or run took the direct loop

#if defined(MODELSTAT_HAVE_DNNL)
  struct Plan {
    bool native = false;  // oneDNN has a non-reference kernel for the shape
    bool silu_after = false;  // the trailing SiLU runs on silu_inplace after the primitive
    bool onednn = false;  // and it was chosen
    dnnl::matmul primitive;
    dnnl::memory::desc weights_md;
    at::Tensor weights;   // packed
    std::string impl;
  };
  dnnl::memory::desc plain_md() const {
    // The weights as the user holds them: K x N with their strides.
    return dnnl::memory::desc({k, n}, dnnl::memory::data_type::f32,
                              dnnl::memory::dims{transposed ? 1 : n, transposed ? k : 1});
  }
  at::Tensor packed;  // the packed weights every plan of packed_md shares
  dnnl::memory::desc packed_md;
  mutable std::map<int64_t, std::shared_ptr<Plan>> plans;
#endif
  mutable std::mutex mutex;
  mutable std::string last_impl = "none";

  // The weights for BLAS (K x N); rebuilt from the packed copy when released. Caller holds the mutex.
  at::Tensor blas_weight() {
#if defined(MODELSTAT_HAVE_DNNL)
    if (!weight.defined() && packed.defined()) {
      at::Tensor w = at::empty({k, n}, at::TensorOptions().dtype(at::kFloat));
      auto& engine = onednn_cpu_engine();
      dnnl::memory from(packed_md, engine, packed.data_ptr());
      dnnl::memory to(dnnl::memory::desc({k, n}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ab), engine,
                      w.data_ptr());
      dnnl::reorder(from, to).execute(onednn_cpu_stream(), from, to);
      onednn_cpu_stream().wait();
      weight = w;
      transposed = false;
    }
#endif
    return weight;
  }

  at::Tensor run_blas(const at::Tensor& x2, const at::Tensor& w, const at::Tensor& residual2) const {
    // One row (a decode step's token): a matrix-vector product. OpenBLAS's
    // sgemm does not switch to its gemv kernel for M = 1 and reads the
    // weights at 3-6 GB/s where sgemv streams them at the memory's bandwidth
    // (12 GB/s from DRAM, 50+ from L3 on the project VM, one thread).
    if (x2.size(0) == 1) {
      const at::Tensor v = x2[0];
      at::Tensor y = (bias.defined() ? at::addmv(bias, w.t(), v) : at::mv(w.t(), v)).unsqueeze(0);
      return apply_post_ops_aten(std::move(y), post_ops, residual2);
    }
    at::Tensor y = bias.defined() ? at::addmm(bias, x2, w) : at::mm(x2, w);
    return apply_post_ops_aten(std::move(y), post_ops, residual2);
  }

#if defined(MODELSTAT_HAVE_DNNL)
  at::Tensor run_onednn(const Plan& p, const at::Tensor& x2, const at::Tensor& residual2) const {
    using dnnl::memory;
    auto& engine = onednn_cpu_engine();
    const int64_t m = x2.size(0);
    at::Tensor dst = at::empty({m, n}, x2.options());
    if (residual_index >= 0) dst.copy_(residual2);  // the sum post-op adds to it
    memory src(memory::desc({m, k}, memory::data_type::f32, memory::format_tag::ab), engine, x2.data_ptr());
    memory wm(p.weights_md, engine, p.weights.data_ptr());
    memory dm(memory::desc({m, n}, memory::data_type::f32, memory::format_tag::ab), engine, dst.data_ptr());
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, dm}};
    if (bias.defined())
      args.emplace(DNNL_ARG_BIAS,
                   memory(memory::desc({1, n}, memory::data_type::f32, memory::format_tag::ab), engine, bias.data_ptr()));
    p.primitive.execute(onednn_cpu_stream(), args);
    onednn_cpu_stream().wait();
    if (p.silu_after) silu_inplace(dst.data_ptr<float>(), dst.numel());
    return dst;
  }

  // oneDNN's primitive for m rows, its weights packed (shared when the layout is the one packed already).
  std::shared_ptr<Plan> build(int64_t m, bool silu_after) {
    using dnnl::memory;
    auto p = std::make_shared<Plan>();
    p->silu_after = silu_after;
    try {
      auto& engine = onednn_cpu_engine();
      const memory::desc src_md({m, k}, memory::data_type::f32, memory::format_tag::ab);
      const memory::desc w_any({k, n}, memory::data_type::f32, memory::format_tag::any);
      const memory::desc dst_md({m, n}, memory::data_type::f32, memory::format_tag::ab);
      dnnl::primitive_attr attr;
      attr.set_post_ops(onednn_post_ops(silu_after ? split.in_kernel : post_ops));
      const dnnl::matmul::desc desc = bias.defined()
          ? dnnl::matmul::desc(src_md, w_any, memory::desc({1, n}, memory::data_type::f32, memory::format_tag::ab), dst_md)
          : dnnl::matmul::desc(src_md, w_any, dst_md);
      const dnnl::matmul::primitive_desc pd(desc, attr, engine);
      p->impl = pd.impl_info_str();
      p->native = p->impl.find("ref") == std::string::npos;
      if (!p->native) return p;
      p->primitive = dnnl::matmul(pd);
      p->weights_md = pd.weights_desc();
      if (packed.defined() && packed_md == p->weights_md) {
        p->weights = packed;
        return p;
      }
      p->weights = at::empty({int64_t((p->weights_md.get_size() + 3) / 4)}, at::TensorOptions().dtype(at::kFloat));
      if (weight.defined()) {
        memory from(plain_md(), engine, weight.data_ptr()), to(p->weights_md, engine, p->weights.data_ptr());
        dnnl::reorder(from, to).execute(onednn_cpu_stream(), from, to);
      } else {
        memory from(packed_md, engine, packed.data_ptr()), to(p->weights_md, engine, p->weights.data_ptr());
        dnnl::reorder(from, to).execute(onednn_cpu_stream(), from, to);
      }
      onednn_cpu_stream().wait();
    } catch (const dnnl::error& e) {
      p->native = false;
      p->impl = std::string("oneDNN: ") + e.what();
    }
    return p;
  }

  // Times both on m rows of random input, interleaved: the median of a few
  // runs each (at least 3, more for small shapes, ~0.2 s in all at most).
  Choice measure(const Plan& p, int64_t m, at::Tensor w) const {
    const at::Tensor x = at::randn({m, k}, at::TensorOptions().dtype(at::kFloat));
    const at::Tensor residual = residual_index >= 0 ? at::randn({m, n}, x.options()) : at::Tensor();
    auto one = [&] { return seconds_of([&] { (void)run_onednn(p, x, residual); }); };
    auto other = [&] { return seconds_of([&] { (void)run_blas(x, w, residual); }); };
    const double first = one() + other();  // warm-up: page faults, packing of BLAS buffers
    const int rounds = int(std::clamp(0.2 / std::max(first, 1e-6), 3.0, 15.0));
    std::vector<double> a, b;
    for (int r = 0; r < rounds; ++r) {
      if (r % 2 == 0) {
        a.push_back(one());
        b.push_back(other());
      } else {
        b.push_back(other());
        a.push_back(one());
      }
    }
    Choice c;
    c.onednn_us = median(a) * 1e6;
    c.blas_us = median(b) * 1e6;
    c.onednn = c.onednn_us <= c.blas_us;
    return c;
  }

  std::shared_ptr<Plan> plan(int64_t m) {
    const bool silu_after = split.silu_after;
    const int64_t plan_key = m;  // rows
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = plans.find(plan_key); it != plans.end()) return it->second;
    std::shared_ptr<Plan> p = backend == GemmBackend::Blas ? std::make_shared<Plan>() : build(m, silu_after);
    if (backend == GemmBackend::Blas) p->impl = "blas (--gemm blas)";
    if (p->native) {
      p->onednn = true;
      if (backend == GemmBackend::Auto) {
        ChoiceCache& cache = ChoiceCache::instance();
        std::ostringstream key;
        key << cache.machine() << '\t' << at::get_num_threads() << '\t' << m << '\t' << k << '\t' << n << '\t'
            << (stored_nxk ? "NxK" : "KxN") << '\t' << post_op_signature(post_ops, bias.defined());
        std::optional<Choice> c = cache.find(key.str());
        if (!c) {
          c = measure(*p, m, blas_weight());
          cache.store(key.str(), *c);
        }
        p->onednn = c->onednn;
      }
      ChoiceCache::instance().count(p->onednn);
      if (p->onednn && !packed.defined()) {
        packed = p->weights;
        packed_md = p->weights_md;
      }
      if (!p->onednn) p->weights = at::Tensor();
      p->impl = p->onednn ? "onednn " + p->impl : "blas (oneDNN " + p->impl + " slower)";
    } else {
      if (backend != GemmBackend::Blas) {
        p->impl = "blas (oneDNN offers " + p->impl + ")";
        ChoiceCache::instance().count(false);
      }
    }
    plans.emplace(plan_key, p);
    // The plain copy lives on only while some shape runs on BLAS: else the packed copy stands for it.
    bool blas_needed = false;
    for (const auto& [key, other] : plans) blas_needed = blas_needed || !other->onednn;
    if (blas_needed) (void)blas_weight();
    else if (packed.defined()) weight = at::Tensor();
    last_impl = p->impl;
    return p;
  }
#endif
};

Fp32MatmulKernel::Fp32MatmulKernel(at::Tensor weight, at::Tensor bias, std::vector<FusedPostOp> post_ops,
                                   GemmBackend backend)
    : impl_(std::make_shared<Impl>()) {
  Impl& k = *impl_;
  at::Tensor w = weight.to(at::kFloat);
  // Keep K x N as a view of a contiguous tensor: either K x N itself or the transpose of N x K.
  if (w.is_contiguous()) {
    k.weight = w;
  } else if (w.t().is_contiguous()) {
    k.weight = w;
    k.transposed = true;
    k.stored_nxk = true;
  } else {
    k.weight = w.contiguous();
  }
  k.k = w.size(0);
  k.n = w.size(1);
  if (bias.defined()) k.bias = bias.to(at::kFloat).reshape({k.n}).contiguous();
  k.post_ops = std::move(post_ops);
  k.split = split_trailing_silu(k.post_ops);
  k.backend = fp32_matmul_kernels_available() ? backend : GemmBackend::Blas;
  if (backend == GemmBackend::Auto && k.k * k.n <= kDirectGemmMaxMacs) k.direct_weight = k.weight;
#if defined(MODELSTAT_HAVE_DNNL)
  onednn_post_ops(k.split.in_kernel, &k.residual_index);
#else
  for (const FusedPostOp& op : k.post_ops)
    if (op.kind == FusedPostOp::Kind::AddResidual) k.residual_index = 0;
#endif
}

int64_t Fp32MatmulKernel::k() const { return impl_->k; }
int64_t Fp32MatmulKernel::n() const { return impl_->n; }

void Fp32MatmulKernel::prepare(int64_t rows) {
  const Impl& k = *impl_;
  if (k.direct_weight.defined() && rows <= kDirectGemmMaxRows && rows * k.k * k.n <= kDirectGemmMaxMacs) {
    k.ran_direct.store(true, std::memory_order_relaxed);
    return;  // the direct loop: nothing to build or choose
  }
#if defined(MODELSTAT_HAVE_DNNL)
  if (rows > 0) impl_->plan(rows);
#else
  (void)rows;
#endif
}

at::Tensor Fp32MatmulKernel::run(const at::Tensor& x, const at::Tensor& residual) const {
  Impl& k = *impl_;
  if (x.dim() < 2 || x.scalar_type() != at::kFloat || !x.device().is_cpu() || x.size(-1) != k.k) {
    // As the nodes would run: at::matmul (which also raises the shape error).
    at::Tensor w;
    {
      std::lock_guard<std::mutex> lock(k.mutex);
      w = k.blas_weight();
    }
    at::Tensor y = at::matmul(x, w.to(x.scalar_type()));
    if (k.bias.defined()) y = y + k.bias.to(y.scalar_type());
    return apply_post_ops_aten(std::move(y), k.post_ops, residual);
  }
  std::vector<int64_t> out_dims(x.sizes().begin(), x.sizes().end());
  out_dims.back() = k.n;
  const at::Tensor x2 = x.reshape({-1, k.k}).contiguous();
  const int64_t m = x2.size(0);
  const at::Tensor residual2 = residual.defined() ? residual.expand(out_dims).reshape({m, k.n}) : residual;
  if (k.direct_weight.defined() && m <= kDirectGemmMaxRows) {
    if (auto y = direct_gemm(x2, k.direct_weight, k.bias, 1.0, 1.0)) {
      k.ran_direct.store(true, std::memory_order_relaxed);
      return apply_post_ops_aten(std::move(*y), k.post_ops, residual2).reshape(out_dims);
    }
  }
  k.ran_direct.store(false, std::memory_order_relaxed);
#if defined(MODELSTAT_HAVE_DNNL)
  if (m > 0) {  // no rows (an empty batch): ATen's empty product below
    const std::shared_ptr<Impl::Plan> p = k.plan(m);
    if (p->onednn) return k.run_onednn(*p, x2, residual2).view(out_dims);
  }
#endif
  at::Tensor w;
  {
    std::lock_guard<std::mutex> lock(k.mutex);
    w = k.blas_weight();
  }
  return k.run_blas(x2, w, residual2).reshape(out_dims);
}

std::string Fp32MatmulKernel::implementation() const {
  if (impl_->ran_direct.load(std::memory_order_relaxed)) return "direct loop";
  std::lock_guard<std::mutex> lock(impl_->mutex);
#if defined(MODELSTAT_HAVE_DNNL)
  return impl_->last_impl;
#else
  return "blas";
#endif
}

bool fp32_matmul_kernels_available() {
#if defined(MODELSTAT_HAVE_DNNL)
  return true;
#else
  return false;
#endif
}

}  // namespace modelstat::profiler

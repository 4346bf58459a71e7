// Measures the scratch ATen's CPU kernels allocate beyond their output (the
// workspace rule of docs/FIT.md): a counting allocator installed as ATen's CPU
// allocator, then per case the peak live bytes during one call minus the
// output (second of two calls, so one-time caches are out).
//
//   g++ -O1 -std=c++17 bench/fit_cpu_probe.cc -o /tmp/fit_cpu_probe -ltorch -ltorch_cpu -lc10
//   /tmp/fit_cpu_probe
//
// Also, timed at 1 thread before the counting allocator goes in, the fixed cost
// of one convolution call on each ATen path against a tiny add (the op
// overhead `modelstat device` measures): the call-cost factors of docs/FIT.md.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/CPUAllocator.h>
#include <atomic>
#include <cstdio>
#include <algorithm>
#include <chrono>
#include <vector>

static std::atomic<int64_t> live{0}, peak{0};
#include <mutex>
#include <unordered_map>
#include <cstdlib>
static std::mutex mu;
static std::unordered_map<void*, size_t> sizes;
static void del(void* p) {
  if (!p) return;
  { std::lock_guard<std::mutex> l(mu); live -= int64_t(sizes[p]); sizes.erase(p); }
  std::free(p);
}
struct Counting final : c10::Allocator {
  c10::DataPtr allocate(size_t n) const override {
    void* raw = nullptr;
    if (n && posix_memalign(&raw, 64, n) != 0) throw std::bad_alloc();
    if (raw) { std::lock_guard<std::mutex> l(mu); sizes[raw] = n; }
    live += int64_t(n);
    int64_t l = live.load(), p = peak.load();
    while (l > p && !peak.compare_exchange_weak(p, l)) {}
    return {raw, raw, &del, c10::Device(c10::kCPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &del; }
};

template <class F>
double median_seconds(F f) {
  for (int i = 0; i < 200; ++i) f();
  std::vector<double> t;
  for (int r = 0; r < 31; ++r) {
    const auto a = std::chrono::steady_clock::now();
    for (int i = 0; i < 200; ++i) f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count() / 200);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void time_call_costs() {
  at::Tensor s = at::randn({1});
  const double add = median_seconds([&] { (void)at::add(s, s); });
  std::printf("\nadd of 1-element tensors: %.2f us\n", add * 1e6);
  auto conv = [&](const char* name, std::vector<int64_t> xs, std::vector<int64_t> ws, int64_t stride, int64_t pad,
                  int64_t group) {
    at::Tensor x = at::randn(xs), w = at::randn(ws);
    const double t = median_seconds(
        [&] { (void)at::convolution(x, w, {}, {stride, stride}, {pad, pad}, {1, 1}, false, {0, 0}, group); });
    std::printf("%-34s %8.2f us = %5.1f x add\n", name, t * 1e6, t / add);
  };
  for (int64_t c : {16, 96, 384, 960}) {
    conv(("oneDNN depthwise 3x3, " + std::to_string(c) + " ch, 2x2").c_str(), {1, c, 2, 2}, {c, 1, 3, 3}, 1, 1, c);
    conv(("oneDNN 3x3 s2, " + std::to_string(c) + "->16, 2x2").c_str(), {1, c, 2, 2}, {16, c, 3, 3}, 2, 1, 1);
  }
  conv("oneDNN depthwise 3x3, 16 ch, 8x8", {1, 16, 8, 8}, {16, 1, 3, 3}, 1, 1, 16);
  conv("oneDNN 3x3 s2, 16->16, 8x8", {1, 16, 8, 8}, {16, 16, 3, 3}, 2, 1, 1);
  conv("THNN 3x3, 4->4, 8x8 (im2col)", {1, 4, 8, 8}, {4, 4, 3, 3}, 1, 1, 1);
  conv("THNN 1x1, 16->16, 8x8", {1, 16, 8, 8}, {16, 16, 1, 1}, 1, 0, 1);
}

int main() {
  at::set_num_threads(1);
  time_call_costs();  // first, on ATen's own allocator
  static Counting counting;  // ideep (oneDNN) allocates through it too
  c10::SetCPUAllocator(&counting, 100);
  at::NoGradGuard ng;
  struct C { const char* name; std::vector<int64_t> x, w; int64_t s, p, g; };
  std::vector<C> cases = {
    {"3x3 s1 64->64 56", {1,64,56,56}, {64,64,3,3}, 1, 1, 1},
    {"1x1 64->256 56", {1,64,56,56}, {256,64,1,1}, 1, 0, 1},
    {"7x7 s2 3->64 224", {1,3,224,224}, {64,3,7,7}, 2, 3, 1},
    {"dw3x3 32 112", {1,32,112,112}, {32,1,3,3}, 1, 1, 32},
    {"3x3 s1 8->16 32", {1,8,32,32}, {16,8,3,3}, 1, 1, 1},
    {"3x3 s1 3->16 32", {1,3,32,32}, {16,3,3,3}, 1, 1, 1},
    {"3x3 b8 64->64 56", {8,64,56,56}, {64,64,3,3}, 1, 1, 1},
    {"1x1 b8 64->256 56", {8,64,56,56}, {256,64,1,1}, 1, 0, 1},
    {"3x3 s2 128->256 28", {1,128,28,28}, {256,128,3,3}, 2, 1, 1},
  };
  for (auto& c : cases) {
    at::Tensor x = at::randn(c.x), w = at::randn(c.w), b = at::randn({c.w[0]});
    for (int rep = 0; rep < 2; ++rep) {
      const int64_t before = live.load();
      peak = before;
      at::Tensor y = at::convolution(x, w, b, {c.s, c.s}, {c.p, c.p}, {1, 1}, false, {0, 0}, c.g);
      const int64_t out = y.numel() * 4;
      const int64_t ho = y.size(2), wo = y.size(3);
      const int64_t im2col = c.x[0] * c.x[1] * c.w[2] * c.w[3] * ho * wo * 4;
      if (rep == 1)
        std::printf("%-22s out=%10ld extra=%10ld  im2col=%10ld in=%ld\n", c.name, long(out), long(peak - before - out),
                    long(im2col), long(x.numel() * 4));
    }
  }
  auto measure = [](const char* name, auto fn) {
    for (int rep = 0; rep < 2; ++rep) {
      const int64_t before = live.load();
      peak = before;
      at::Tensor y = fn();
      if (rep == 1) std::printf("%-28s out=%10ld extra=%10ld\n", name, long(y.numel() * 4), long(peak - before - y.numel() * 4));
    }
  };
  at::Tensor x = at::randn({1, 64, 112, 112});
  measure("maxpool 3x3 s2 64x112", [&] { return at::max_pool2d(x, {3, 3}, {2, 2}, {1, 1}); });
  at::Tensor x2 = at::randn({1, 512, 7, 7});
  measure("mean 512x7x7", [&] { return x2.mean({2, 3}, true); });
  at::Tensor a = at::randn({1, 512}), w = at::randn({1000, 512}), b = at::randn({1000});
  measure("addmm 1x512 x 512x1000^T", [&] { return at::addmm(b, a, w.t()); });
  at::Tensor r = at::randn({1, 64, 56, 56});
  measure("relu", [&] { return at::relu(r); });
  measure("clamp", [&] { return at::clamp(r, 0, 6); });
  at::Tensor q = at::randn({1, 12, 128, 64}), k = at::randn({1, 12, 64, 128});
  measure("matmul 12x128x64x128", [&] { return at::matmul(q, k); });
  at::Tensor sm = at::randn({1, 12, 128, 128});
  measure("softmax", [&] { return at::softmax(sm, -1); });
}

// Vectorised SiLU (silu.hpp): x / (1 + exp(-x)) with vec_exp.hpp's exp. For
// x < -87 the clamp makes the result x / (1 + e^87), about 1e-36 in
// magnitude, where the exact value is smaller still (both round to 0 against
// any activation of order 1).
#include "profiler/ops/silu.hpp"

#include "profiler/ops/vec_exp.hpp"

#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <omp.h>

#include <algorithm>
#include <cmath>

// GCC 12's intrinsic headers start conversions from an "undefined" register
// (_mm512_undefined_*), which -Wmaybe-uninitialized reports in every caller.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace modelstat::profiler {

namespace {

// Below this many elements a pass stays on the calling thread (a wake-up of the
// team costs more than ~8k elements of work).
constexpr int64_t kSiluGrain = 8192;

float silu_scalar(float x) {
  return x / (1.f + std::exp(-x));
}

__attribute__((target("avx512f"))) inline __m512 silu512(__m512 x) {
  const __m512 e = vec::exp512(_mm512_sub_ps(_mm512_setzero_ps(), x));  // exp(-x)
  return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.f), e));
}

__attribute__((target("avx512f"))) void silu_avx512(float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {  // two vectors a step: independent chains overlap
    const __m512 a = silu512(_mm512_loadu_ps(x + i)), b = silu512(_mm512_loadu_ps(x + i + 16));
    _mm512_storeu_ps(x + i, a);
    _mm512_storeu_ps(x + i + 16, b);
  }
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(x + i, silu512(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 m = __mmask16((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(x + i, m, silu512(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

__attribute__((target("avx2,fma"))) inline __m256 silu256(__m256 x) {
  const __m256 e = vec::exp256(_mm256_sub_ps(_mm256_setzero_ps(), x));  // exp(-x)
  return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.f), e));
}

__attribute__((target("avx2,fma"))) void silu_avx2(float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, silu256(_mm256_loadu_ps(x + i)));
  for (; i < n; ++i) x[i] = silu_scalar(x[i]);
}

void silu_plain(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = silu_scalar(x[i]);
}

using SiluLoop = void (*)(float*, int64_t);

struct SiluChoice {
  SiluLoop loop;
  const char* isa;
};

const SiluChoice& silu_choice() {
  static const SiluChoice choice = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return SiluChoice{&silu_avx512, "avx512"};
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      return SiluChoice{&silu_avx2, "avx2"};
    return SiluChoice{&silu_plain, "scalar"};
  }();
  return choice;
}

}  // namespace

void silu_inplace(float* data, int64_t n) {
  if (n <= 0) return;
  const SiluLoop loop = silu_choice().loop;
  if (n < 2 * kSiluGrain) {
    loop(data, n);
    return;
  }
  const int threads = int(std::min<int64_t>(at::get_num_threads(), n / kSiluGrain));
  if (threads <= 1) {
    loop(data, n);
    return;
  }
  // One contiguous, 64-byte aligned share per thread: the order in which oneDNN's kernel wrote the
  // output rows, so each thread mostly rereads what its own core wrote.
  const int64_t share = ((n + threads - 1) / threads + 15) / 16 * 16;
#pragma omp parallel num_threads(threads)
  {
    const int64_t begin = std::min<int64_t>(n, int64_t(omp_get_thread_num()) * share);
    loop(data + begin, std::min<int64_t>(n, begin + share) - begin);
  }
}

at::Tensor silu_in_place(at::Tensor x) {
  const bool recorded = at::GradMode::is_enabled() && x.requires_grad();  // autograd needs ATen's ops
  if (!recorded && x.device().is_cpu() && x.scalar_type() == at::kFloat &&
      (x.is_contiguous() || x.is_contiguous(at::MemoryFormat::ChannelsLast))) {
    silu_inplace(x.data_ptr<float>(), x.numel());
    return x;
  }
  return x * at::sigmoid(x);
}

const char* silu_isa() {
  return silu_choice().isa;
}

}  // namespace modelstat::profiler

// Vectorised softmax over rows (softmax.hpp).
#include "profiler/ops/softmax.hpp"

#include <ATen/Parallel.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "profiler/ops/direct_kernels.hpp"
#include "profiler/ops/vec_exp.hpp"

// GCC 12's intrinsic headers start conversions and _mm512_reduce_*_ps from an
// "undefined" register (_mm512_undefined_*, `__m256d __Y = __Y`), which
// -Wmaybe-uninitialized and -Wuninitialized report in every caller.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace modelstat::profiler {

namespace {

// Below this many elements a softmax stays on the calling thread (a wake-up of
// the team costs more than ~8k elements of work).
constexpr int64_t kSoftmaxGrain = 8192;

void softmax_row_scalar(const float* x, float* y, int64_t n) {
  float max = -std::numeric_limits<float>::infinity();
  bool nan = false;
  for (int64_t i = 0; i < n; ++i) {
    nan |= std::isnan(x[i]);
    max = std::max(max, x[i]);
  }
  if (nan) max = std::numeric_limits<float>::quiet_NaN();
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += (y[i] = std::exp(x[i] - max));
  const float inv = 1.f / sum;
  for (int64_t i = 0; i < n; ++i) y[i] *= inv;
}

__attribute__((target("avx512f"))) void softmax_row_avx512(const float* x, float* y, int64_t n) {
  const __m512 neg_inf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  const int64_t full = n / 16 * 16;
  const __mmask16 tail = __mmask16((1u << (n - full)) - 1);
  // The max, and whether a NaN was seen (max_ps drops it): a NaN makes the row NaN.
  __m512 vmax = neg_inf;
  __mmask16 nan = 0;
  for (int64_t i = 0; i < full; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    vmax = _mm512_max_ps(vmax, v);
    nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  }
  if (tail) {
    const __m512 v = _mm512_mask_loadu_ps(neg_inf, tail, x + full);
    vmax = _mm512_max_ps(vmax, v);
    nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  }
  const float max = nan ? std::numeric_limits<float>::quiet_NaN() : _mm512_reduce_max_ps(vmax);
  const __m512 m = _mm512_set1_ps(max);
  __m512 sum = _mm512_setzero_ps();
  for (int64_t i = 0; i < full; i += 16) {
    const __m512 e = vec::exp512(_mm512_sub_ps(_mm512_loadu_ps(x + i), m));
    _mm512_storeu_ps(y + i, e);
    sum = _mm512_add_ps(sum, e);
  }
  if (tail) {
    const __m512 e = vec::exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, x + full), m));
    _mm512_mask_storeu_ps(y + full, tail, e);
    sum = _mm512_mask_add_ps(sum, tail, sum, e);
  }
  const __m512 inv = _mm512_set1_ps(1.f / _mm512_reduce_add_ps(sum));
  for (int64_t i = 0; i < full; i += 16) _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_loadu_ps(y + i), inv));
  if (tail) _mm512_mask_storeu_ps(y + full, tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, y + full), inv));
}

__attribute__((target("avx2,fma"))) float hsum256(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

__attribute__((target("avx2,fma"))) float hmax256(__m256 v) {
  const __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_max_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_max_ss(t, _mm_shuffle_ps(t, t, 1)));
}

__attribute__((target("avx2,fma"))) void softmax_row_avx2(const float* x, float* y, int64_t n) {
  const int64_t full = n / 8 * 8;
  __m256 vmax = _mm256_set1_ps(-std::numeric_limits<float>::infinity()), nan = _mm256_setzero_ps();
  for (int64_t i = 0; i < full; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    vmax = _mm256_max_ps(vmax, v);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
  float max = hmax256(vmax);
  bool any_nan = _mm256_movemask_ps(nan) != 0;
  for (int64_t i = full; i < n; ++i) {
    any_nan |= std::isnan(x[i]);
    max = std::max(max, x[i]);
  }
  if (any_nan) max = std::numeric_limits<float>::quiet_NaN();
  const __m256 m = _mm256_set1_ps(max);
  __m256 sum = _mm256_setzero_ps();
  for (int64_t i = 0; i < full; i += 8) {
    const __m256 e = vec::exp256(_mm256_sub_ps(_mm256_loadu_ps(x + i), m));
    _mm256_storeu_ps(y + i, e);
    sum = _mm256_add_ps(sum, e);
  }
  float total = hsum256(sum);
  for (int64_t i = full; i < n; ++i) total += (y[i] = std::exp(x[i] - max));
  const float inv_s = 1.f / total;
  const __m256 inv = _mm256_set1_ps(inv_s);
  for (int64_t i = 0; i < full; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), inv));
  for (int64_t i = full; i < n; ++i) y[i] *= inv_s;
}

__attribute__((target("avx512f"))) void exp_avx512(float* x, int64_t n) {
  const int64_t full = n / 16 * 16;
  for (int64_t i = 0; i < full; i += 16) _mm512_storeu_ps(x + i, vec::exp512(_mm512_loadu_ps(x + i)));
  if (full < n) {
    const __mmask16 tail = __mmask16((1u << (n - full)) - 1);
    _mm512_mask_storeu_ps(x + full, tail, vec::exp512(_mm512_maskz_loadu_ps(tail, x + full)));
  }
}

__attribute__((target("avx2,fma"))) void exp_avx2(float* x, int64_t n) {
  const int64_t full = n / 8 * 8;
  for (int64_t i = 0; i < full; i += 8) _mm256_storeu_ps(x + i, vec::exp256(_mm256_loadu_ps(x + i)));
  for (int64_t i = full; i < n; ++i) x[i] = std::exp(std::clamp(x[i], -87.f, 87.f));
}

void exp_scalar(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = std::exp(x[i]);
}

using SoftmaxRow = void (*)(const float*, float*, int64_t);

SoftmaxRow softmax_row_loop() {
  static const SoftmaxRow loop = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return &softmax_row_avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &softmax_row_avx2;
    return &softmax_row_scalar;
  }();
  return loop;
}

void softmax_row_range(SoftmaxRow row, const float* x, float* y, int64_t begin, int64_t end, int64_t cols) {
  for (int64_t r = begin; r < end; ++r) row(x + r * cols, y + r * cols, cols);
}

}  // namespace

void exp_inplace(float* x, int64_t n) {
  using Loop = void (*)(float*, int64_t);
  static const Loop loop = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return &exp_avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &exp_avx2;
    return &exp_scalar;
  }();
  if (n > 0) loop(x, n);
}

void softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  if (rows <= 0 || cols <= 0) return;
  const SoftmaxRow row = softmax_row_loop();
  const int64_t threads = std::min<int64_t>({int64_t(at::get_num_threads()), rows * cols / kSoftmaxGrain, rows});
  if (threads <= 1) {
    softmax_row_range(row, x, y, 0, rows, cols);
    return;
  }
  const int64_t share = (rows + threads - 1) / threads;
#pragma omp parallel num_threads(int(threads))
  {
    const int64_t begin = std::min<int64_t>(rows, int64_t(omp_get_thread_num()) * share);
    softmax_row_range(row, x, y, begin, std::min<int64_t>(rows, begin + share), cols);
  }
}

at::Tensor softmax_last_axis(const at::Tensor& x) {
  if (!x.defined() || !x.device().is_cpu() || x.scalar_type() != at::kFloat || !x.is_contiguous() || x.dim() < 1 ||
      x.numel() == 0 || !direct_kernels_allowed({&x}))
    return at::softmax(x, -1);
  at::Tensor y = at::empty_like(x);
  const int64_t cols = x.size(-1);
  softmax_rows(x.data_ptr<float>(), y.data_ptr<float>(), x.numel() / cols, cols);
  return y;
}

}  // namespace modelstat::profiler

// exp(t) on vectors of floats, for the executor's own vectorised passes (SiLU,
// Softmax): Cephes' expf scheme. n = round(t / ln 2), r = t - n ln 2 (ln 2
// split in two for exactness), a degree-6 polynomial for exp(r) on
// |r| <= ln 2 / 2, and 2^n put into the exponent bits. The argument is clamped
// to [-87, 87] so that 2^n stays a normal float: exp(-87) is about 1.6e-38
// where the exact value is smaller still, exp(87) about 6e37. Relative error
// under 2e-7 inside the clamp. A NaN stays NaN (min/max with the constant
// first return the second operand).
#pragma once

#include <immintrin.h>

namespace modelstat::profiler::vec {

constexpr float kExpClamp = 87.f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
// exp(r) = 1 + r + r^2 (c5 + c4 r + ... + c0 r^5) on |r| <= ln 2 / 2 (Cephes expf).
constexpr float kExpC0 = 1.9875691500e-4f, kExpC1 = 1.3981999507e-3f, kExpC2 = 8.3334519073e-3f,
                kExpC3 = 4.1665795894e-2f, kExpC4 = 1.6666665459e-1f, kExpC5 = 5.0000001201e-1f;

__attribute__((target("avx512f"))) inline __m512 exp512(__m512 t) {
  t = _mm512_min_ps(_mm512_set1_ps(kExpClamp), t);
  t = _mm512_max_ps(_mm512_set1_ps(-kExpClamp), t);
  const __m512i ni = _mm512_cvtps_epi32(_mm512_mul_ps(t, _mm512_set1_ps(kLog2e)));  // round to nearest
  const __m512 n = _mm512_cvtepi32_ps(ni);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), t);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
  __m512 p = _mm512_set1_ps(kExpC0);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpC1));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpC2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpC3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpC4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpC5));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.f)));
  const __m512 pow2n = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(ni, _mm512_set1_epi32(127)), 23));
  return _mm512_mul_ps(p, pow2n);
}

__attribute__((target("avx2,fma"))) inline __m256 exp256(__m256 t) {
  t = _mm256_min_ps(_mm256_set1_ps(kExpClamp), t);
  t = _mm256_max_ps(_mm256_set1_ps(-kExpClamp), t);
  const __m256i ni = _mm256_cvtps_epi32(_mm256_mul_ps(t, _mm256_set1_ps(kLog2e)));
  const __m256 n = _mm256_cvtepi32_ps(ni);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), t);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), r);
  __m256 p = _mm256_set1_ps(kExpC0);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpC1));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpC2));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpC3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpC4));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpC5));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.f)));
  const __m256 pow2n = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(ni, _mm256_set1_epi32(127)), 23));
  return _mm256_mul_ps(p, pow2n);
}

}  // namespace modelstat::profiler::vec

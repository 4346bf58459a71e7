// FMA and read micro-kernels with per-function target attributes (see
// cpu_kernels.hpp). Each FMA kernel keeps enough independent accumulators to
// cover the FMA latency x the number of FMA pipes of current cores (4-5
// cycles x 2 pipes: 10 needed; 16 zmm or 12 ymm here), as likwid-bench's
// peakflops kernels and the Empirical Roofline Toolkit do, and keeps every
// operand in a register (no load competes with the FMAs).
#include "profiler/machine/cpu_kernels.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace modelstat::profiler::machine {

#if defined(__x86_64__)
namespace {

// The result goes to a volatile, so the compiler keeps every multiply-add.
volatile float g_sink_f;
volatile int g_sink_i;

// acc = acc * m + c converges to c / (1 - m) = 1: no overflow, no denormal.
#define MS_FMA_BODY(VEC, SET1, FMA, ADD, STORE, N)                  \
  const VEC m = SET1(0.999f), c = SET1(0.001f);                     \
  VEC acc[N];                                                       \
  for (int k = 0; k < N; ++k) acc[k] = SET1(float(k) * 0.01f);      \
  for (int64_t i = 0; i < iterations; ++i) {                        \
    _Pragma("GCC unroll 16") for (int k = 0; k < N; ++k) acc[k] = FMA(acc[k], m, c); \
  }                                                                 \
  VEC total = acc[0];                                               \
  for (int k = 1; k < N; ++k) total = ADD(total, acc[k]);           \
  float out[sizeof(VEC) / sizeof(float)];                           \
  STORE(out, total);                                                \
  g_sink_f = out[0];

// Horizontal sums through memory: GCC 12's _mm512_reduce_add_* warn
// (-Wuninitialized inside its own headers).
__attribute__((target("avx512f"))) float sum_lanes(__m512 v) {
  float out[16];
  _mm512_storeu_ps(out, v);
  float s = 0;
  for (float x : out) s += x;
  return s;
}
__attribute__((target("avx512f"))) int sum_lanes(__m512i v) {
  int out[16];
  _mm512_storeu_si512(out, v);
  unsigned s = 0;
  for (int x : out) s += unsigned(x);
  return int(s);
}

constexpr int kZmmAccumulators = 16;  // of 32 zmm registers
constexpr int kYmmAccumulators = 12;  // of 16 ymm registers (2 hold m and c)

__attribute__((target("avx512f"))) void fma_fp32_avx512(int64_t iterations) {
  MS_FMA_BODY(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, _mm512_storeu_ps, kZmmAccumulators)
}

__attribute__((target("avx2,fma"))) void fma_fp32_avx2(int64_t iterations) {
  MS_FMA_BODY(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, _mm256_storeu_ps, kYmmAccumulators)
}

// vdpbf16ps: per fp32 lane, acc += a[2l] * b[2l] + a[2l+1] * b[2l+1]:
// 2 multiply-adds, 4 FLOPs, x 16 lanes = 64 FLOPs per instruction.
__attribute__((target("avx512f,avx512bf16"))) void fma_bf16_avx512(int64_t iterations) {
  const __m512bh a = (__m512bh)_mm512_set1_epi16(0x3a83);  // bf16 ~0.001
  const __m512bh b = (__m512bh)_mm512_set1_epi16(0x3a83);
  __m512 acc[kZmmAccumulators];
  for (int k = 0; k < kZmmAccumulators; ++k) acc[k] = _mm512_set1_ps(float(k));
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int k = 0; k < kZmmAccumulators; ++k) acc[k] = _mm512_dpbf16_ps(acc[k], a, b);
  }
  __m512 total = acc[0];
  for (int k = 1; k < kZmmAccumulators; ++k) total = _mm512_add_ps(total, acc[k]);
  g_sink_f = sum_lanes(total);
}

// vpdpbusd: per int32 lane, acc += 4 products of u8 x s8: 8 ops x 16 lanes =
// 128 int8 operations per instruction (wrap-around of the sums is harmless).
__attribute__((target("avx512f,avx512vnni"))) void dot_int8_avx512_vnni(int64_t iterations) {
  const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(5);
  __m512i acc[kZmmAccumulators];
  for (int k = 0; k < kZmmAccumulators; ++k) acc[k] = _mm512_set1_epi32(k);
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int k = 0; k < kZmmAccumulators; ++k) acc[k] = _mm512_dpbusd_epi32(acc[k], a, b);
  }
  __m512i total = acc[0];
  for (int k = 1; k < kZmmAccumulators; ++k) total = _mm512_add_epi32(total, acc[k]);
  g_sink_i = sum_lanes(total);
}

// Read kernels: 8 independent add chains over 64-byte loads (two per
// 128-byte step), wide enough to keep two loads per cycle in flight.
__attribute__((target("avx512f"))) float read_avx512(const float* data, int64_t bytes, int64_t passes) {
  const int64_t n = bytes / int64_t(sizeof(float));
  __m512 acc[8];
  for (auto& a : acc) a = _mm512_setzero_ps();
  for (int64_t p = 0; p < passes; ++p)
    for (int64_t i = 0; i < n; i += 128) {
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) acc[k] = _mm512_add_ps(acc[k], _mm512_load_ps(data + i + 16 * k));
    }
  for (int k = 1; k < 8; ++k) acc[0] = _mm512_add_ps(acc[0], acc[k]);
  return sum_lanes(acc[0]);
}

__attribute__((target("avx512f"))) void update_avx512(float* data, int64_t bytes, int64_t passes) {
  const int64_t n = bytes / int64_t(sizeof(float));
  const __m512 zero = _mm512_setzero_ps();
  for (int64_t p = 0; p < passes; ++p)
    for (int64_t i = 0; i < n; i += 128) {
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k)
        // The masked form with every lane set is the same max; the unmasked one's
        // header passes _mm512_undefined_ps(), which GCC 12 flags -Wmaybe-uninitialized.
        _mm512_store_ps(data + i + 16 * k,
                        _mm512_mask_max_ps(zero, __mmask16(0xFFFF), zero, _mm512_load_ps(data + i + 16 * k)));
    }
}

__attribute__((target("avx2"))) void update_avx2(float* data, int64_t bytes, int64_t passes) {
  const int64_t n = bytes / int64_t(sizeof(float));
  const __m256 zero = _mm256_setzero_ps();
  for (int64_t p = 0; p < passes; ++p)
    for (int64_t i = 0; i < n; i += 64) {
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k)
        _mm256_store_ps(data + i + 8 * k, _mm256_max_ps(zero, _mm256_load_ps(data + i + 8 * k)));
    }
}

__attribute__((target("avx2"))) float read_avx2(const float* data, int64_t bytes, int64_t passes) {
  const int64_t n = bytes / int64_t(sizeof(float));
  __m256 acc[8];
  for (auto& a : acc) a = _mm256_setzero_ps();
  for (int64_t p = 0; p < passes; ++p)
    for (int64_t i = 0; i < n; i += 64) {
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) acc[k] = _mm256_add_ps(acc[k], _mm256_load_ps(data + i + 8 * k));
    }
  for (int k = 1; k < 8; ++k) acc[0] = _mm256_add_ps(acc[0], acc[k]);
  float out[8];
  _mm256_storeu_ps(out, acc[0]);
  return out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
}

bool has(const char* feature) {
  __builtin_cpu_init();
  // __builtin_cpu_supports takes a string literal only, hence the table.
  const std::string f = feature;
  if (f == "avx2") return __builtin_cpu_supports("avx2");
  if (f == "fma") return __builtin_cpu_supports("fma");
  if (f == "avx512f") return __builtin_cpu_supports("avx512f");
  if (f == "avx512_bf16") return __builtin_cpu_supports("avx512bf16");
  if (f == "avx512_vnni") return __builtin_cpu_supports("avx512vnni");
  if (f == "amx_bf16") return __builtin_cpu_supports("amx-bf16");
  if (f == "amx_tile") return __builtin_cpu_supports("amx-tile");
  return false;
}

}  // namespace

std::vector<std::string> cpu_features() {
  std::vector<std::string> out;
  for (const char* f : {"avx2", "fma", "avx512f", "avx512_bf16", "avx512_vnni", "amx_tile", "amx_bf16"})
    if (has(f)) out.push_back(f);
  return out;
}

std::vector<FmaKernel> available_fma_kernels() {
  std::vector<FmaKernel> k;
  if (has("avx512f")) k.push_back({"fp32", "avx512f vfmadd231ps zmm", 2.0 * 16 * kZmmAccumulators, fma_fp32_avx512});
  if (has("avx2") && has("fma")) k.push_back({"fp32", "avx2 vfmadd231ps ymm", 2.0 * 8 * kYmmAccumulators, fma_fp32_avx2});
  if (has("avx512f") && has("avx512_bf16"))
    k.push_back({"bf16", "avx512_bf16 vdpbf16ps zmm", 4.0 * 16 * kZmmAccumulators, fma_bf16_avx512});
  if (has("avx512f") && has("avx512_vnni"))
    k.push_back({"int8", "avx512_vnni vpdpbusd zmm", 8.0 * 16 * kZmmAccumulators, dot_int8_avx512_vnni});
  return k;
}

float read_buffer(const float* data, int64_t bytes, int64_t passes) {
  if (has("avx512f")) return read_avx512(data, bytes, passes);
  if (has("avx2")) return read_avx2(data, bytes, passes);
  const int64_t n = bytes / int64_t(sizeof(float));
  float acc[8] = {0};
  for (int64_t p = 0; p < passes; ++p)
    for (int64_t i = 0; i < n; i += 8)
      for (int k = 0; k < 8; ++k) acc[k] += data[i + k];
  return acc[0] + acc[1] + acc[2] + acc[3] + acc[4] + acc[5] + acc[6] + acc[7];
}

void update_buffer(float* data, int64_t bytes, int64_t passes) {
  if (has("avx512f")) return update_avx512(data, bytes, passes);
  if (has("avx2")) return update_avx2(data, bytes, passes);
  const int64_t n = bytes / int64_t(sizeof(float));
  for (int64_t p = 0; p < passes; ++p)
    for (int64_t i = 0; i < n; ++i) data[i] = data[i] > 0.0f ? data[i] : 0.0f;
}

std::string read_kernel_name() {
  if (has("avx512f")) return "avx512f vaddps zmm, 64-byte loads";
  if (has("avx2")) return "avx2 vaddps ymm, 32-byte loads";
  return "scalar adds";
}

#else  // not x86-64: no micro-kernels; the probe says so and keeps the matmul roof

std::vector<std::string> cpu_features() { return {}; }
std::vector<FmaKernel> available_fma_kernels() { return {}; }
float read_buffer(const float* data, int64_t bytes, int64_t passes) {
  float acc = 0;
  for (int64_t p = 0; p < passes; ++p)
    for (int64_t i = 0; i < bytes / int64_t(sizeof(float)); ++i) acc += data[i];
  return acc;
}
std::string read_kernel_name() { return "scalar adds"; }
void update_buffer(float* data, int64_t bytes, int64_t passes) {
  for (int64_t p = 0; p < passes; ++p)
    for (int64_t i = 0; i < bytes / int64_t(sizeof(float)); ++i) data[i] = data[i] > 0.0f ? data[i] : 0.0f;
}

#endif

}  // namespace modelstat::profiler::machine

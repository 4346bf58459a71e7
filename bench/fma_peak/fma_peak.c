/* An independent fp32 FMA peak, to check `modelstat device`'s machine roof
 * against (issue 14, item 3). It shares no code with modelstat: plain C with
 * likwid-bench-style inline assembly (as peakflops_avx512_fma / peakflops_avx_fma),
 * compiled on its own with its own flags (bench/fma_peak/build.sh).
 *
 *   fma_peak [avx512|avx2] [threads] [seconds]
 *
 * Each thread zeroes its registers (no NaN or denormal operand) and runs a loop
 * of 24 (zmm) or 14 (ymm) independent vfmadd231ps on registers (no memory operands), 24 x (16 or 8) lanes x 2 FLOPs per iteration; the figure
 * is the median over 15 samples of total FLOPs / the slowest thread's time.
 * Threads are pinned to the CPUs of the process's affinity mask, in order. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

#define FMA24(R)                                                                                    \
  "vfmadd231ps %%" R "30, %%" R "31, %%" R "0\n\t vfmadd231ps %%" R "30, %%" R "31, %%" R "1\n\t"   \
  "vfmadd231ps %%" R "30, %%" R "31, %%" R "2\n\t vfmadd231ps %%" R "30, %%" R "31, %%" R "3\n\t"   \
  "vfmadd231ps %%" R "30, %%" R "31, %%" R "4\n\t vfmadd231ps %%" R "30, %%" R "31, %%" R "5\n\t"   \
  "vfmadd231ps %%" R "30, %%" R "31, %%" R "6\n\t vfmadd231ps %%" R "30, %%" R "31, %%" R "7\n\t"   \
  "vfmadd231ps %%" R "30, %%" R "31, %%" R "8\n\t vfmadd231ps %%" R "30, %%" R "31, %%" R "9\n\t"   \
  "vfmadd231ps %%" R "30, %%" R "31, %%" R "10\n\t vfmadd231ps %%" R "30, %%" R "31, %%" R "11\n\t" \
  "vfmadd231ps %%" R "30, %%" R "31, %%" R "12\n\t vfmadd231ps %%" R "30, %%" R "31, %%" R "13\n\t" \
  "vfmadd231ps %%" R "30, %%" R "31, %%" R "14\n\t vfmadd231ps %%" R "30, %%" R "31, %%" R "15\n\t" \
  "vfmadd231ps %%" R "30, %%" R "31, %%" R "16\n\t vfmadd231ps %%" R "30, %%" R "31, %%" R "17\n\t" \
  "vfmadd231ps %%" R "30, %%" R "31, %%" R "18\n\t vfmadd231ps %%" R "30, %%" R "31, %%" R "19\n\t" \
  "vfmadd231ps %%" R "30, %%" R "31, %%" R "20\n\t vfmadd231ps %%" R "30, %%" R "31, %%" R "21\n\t" \
  "vfmadd231ps %%" R "30, %%" R "31, %%" R "22\n\t vfmadd231ps %%" R "30, %%" R "31, %%" R "23\n\t"

/* zmm: 24 accumulators zmm0-23, operands zmm30/31 (AVX-512 has 32 registers). */
static void loop_avx512(long iterations) {
  __asm__ volatile(
      "vpxord %%zmm0, %%zmm0, %%zmm0\n\t"
      "vpxord %%zmm1, %%zmm1, %%zmm1\n\t"
      "vpxord %%zmm2, %%zmm2, %%zmm2\n\t"
      "vpxord %%zmm3, %%zmm3, %%zmm3\n\t"
      "vpxord %%zmm4, %%zmm4, %%zmm4\n\t"
      "vpxord %%zmm5, %%zmm5, %%zmm5\n\t"
      "vpxord %%zmm6, %%zmm6, %%zmm6\n\t"
      "vpxord %%zmm7, %%zmm7, %%zmm7\n\t"
      "vpxord %%zmm8, %%zmm8, %%zmm8\n\t"
      "vpxord %%zmm9, %%zmm9, %%zmm9\n\t"
      "vpxord %%zmm10, %%zmm10, %%zmm10\n\t"
      "vpxord %%zmm11, %%zmm11, %%zmm11\n\t"
      "vpxord %%zmm12, %%zmm12, %%zmm12\n\t"
      "vpxord %%zmm13, %%zmm13, %%zmm13\n\t"
      "vpxord %%zmm14, %%zmm14, %%zmm14\n\t"
      "vpxord %%zmm15, %%zmm15, %%zmm15\n\t"
      "vpxord %%zmm16, %%zmm16, %%zmm16\n\t"
      "vpxord %%zmm17, %%zmm17, %%zmm17\n\t"
      "vpxord %%zmm18, %%zmm18, %%zmm18\n\t"
      "vpxord %%zmm19, %%zmm19, %%zmm19\n\t"
      "vpxord %%zmm20, %%zmm20, %%zmm20\n\t"
      "vpxord %%zmm21, %%zmm21, %%zmm21\n\t"
      "vpxord %%zmm22, %%zmm22, %%zmm22\n\t"
      "vpxord %%zmm23, %%zmm23, %%zmm23\n\t"
      "vpxord %%zmm30, %%zmm30, %%zmm30\n\t"
      "vpxord %%zmm31, %%zmm31, %%zmm31\n\t"
      "1:\n\t" FMA24("zmm") "dec %0\n\t jnz 1b\n\t"
      : "+r"(iterations)
      :
      : "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
        "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm30", "xmm31");
}

/* ymm (AVX2 + FMA, VEX encoding, 16 registers): 14 accumulators ymm0-13, operands ymm14/15. */
#define FMA14                                                                                                   \
  "vfmadd231ps %%ymm14, %%ymm15, %%ymm0\n\t vfmadd231ps %%ymm14, %%ymm15, %%ymm1\n\t"                          \
  "vfmadd231ps %%ymm14, %%ymm15, %%ymm2\n\t vfmadd231ps %%ymm14, %%ymm15, %%ymm3\n\t"                          \
  "vfmadd231ps %%ymm14, %%ymm15, %%ymm4\n\t vfmadd231ps %%ymm14, %%ymm15, %%ymm5\n\t"                          \
  "vfmadd231ps %%ymm14, %%ymm15, %%ymm6\n\t vfmadd231ps %%ymm14, %%ymm15, %%ymm7\n\t"                          \
  "vfmadd231ps %%ymm14, %%ymm15, %%ymm8\n\t vfmadd231ps %%ymm14, %%ymm15, %%ymm9\n\t"                          \
  "vfmadd231ps %%ymm14, %%ymm15, %%ymm10\n\t vfmadd231ps %%ymm14, %%ymm15, %%ymm11\n\t"                        \
  "vfmadd231ps %%ymm14, %%ymm15, %%ymm12\n\t vfmadd231ps %%ymm14, %%ymm15, %%ymm13\n\t"
static void loop_avx2(long iterations) {
  __asm__ volatile("vpxor %%ymm0, %%ymm0, %%ymm0\n\t"
                   "vpxor %%ymm1, %%ymm1, %%ymm1\n\t"
                   "vpxor %%ymm2, %%ymm2, %%ymm2\n\t"
                   "vpxor %%ymm3, %%ymm3, %%ymm3\n\t"
                   "vpxor %%ymm4, %%ymm4, %%ymm4\n\t"
                   "vpxor %%ymm5, %%ymm5, %%ymm5\n\t"
                   "vpxor %%ymm6, %%ymm6, %%ymm6\n\t"
                   "vpxor %%ymm7, %%ymm7, %%ymm7\n\t"
                   "vpxor %%ymm8, %%ymm8, %%ymm8\n\t"
                   "vpxor %%ymm9, %%ymm9, %%ymm9\n\t"
                   "vpxor %%ymm10, %%ymm10, %%ymm10\n\t"
                   "vpxor %%ymm11, %%ymm11, %%ymm11\n\t"
                   "vpxor %%ymm12, %%ymm12, %%ymm12\n\t"
                   "vpxor %%ymm13, %%ymm13, %%ymm13\n\t"
                   "vpxor %%ymm14, %%ymm14, %%ymm14\n\t"
                   "vpxor %%ymm15, %%ymm15, %%ymm15\n\t"
                   "1:\n\t" FMA14 "dec %0\n\t jnz 1b\n\t"
                   : "+r"(iterations)
                   :
                   : "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
                     "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
}

enum { kSamples = 15, kMaxThreads = 256 };
static int use_avx512 = 1, nthreads = 1;
static long iterations = 1;
static atomic_int arrived;
static double elapsed[kMaxThreads][kSamples];
static int cpus[kMaxThreads];

static void barrier(int generation) {
  atomic_fetch_add(&arrived, 1);
  while (atomic_load(&arrived) < nthreads * generation) {
  }
}

static void* worker(void* arg) {
  const int id = (int)(long)arg;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpus[id], &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  if (use_avx512) loop_avx512(iterations); else loop_avx2(iterations); /* warm-up (clock ramp) */
  for (int s = 0; s < kSamples; ++s) {
    barrier(s + 1);
    const double t0 = now();
    if (use_avx512) loop_avx512(iterations); else loop_avx2(iterations);
    elapsed[id][s] = now() - t0;
  }
  return NULL;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  if (argc > 1) use_avx512 = strcmp(argv[1], "avx2") != 0;
  if (argc > 2) nthreads = atoi(argv[2]);
  const double seconds = argc > 3 ? atof(argv[3]) : 0.02; /* per sample */
  if (nthreads < 1 || nthreads > kMaxThreads) return 2;
  cpu_set_t mask;
  sched_getaffinity(0, sizeof mask, &mask);
  int n = 0;
  for (int c = 0; c < CPU_SETSIZE && n < kMaxThreads; ++c)
    if (CPU_ISSET(c, &mask)) cpus[n++] = c;
  for (int t = 0; t < nthreads; ++t) cpus[t] = cpus[t % n];
  /* Calibrate on this thread: iterations for `seconds` per sample. */
  for (iterations = 1000;; iterations *= 2) {
    const double t0 = now();
    if (use_avx512) loop_avx512(iterations); else loop_avx2(iterations);
    if (now() - t0 > seconds / 4) {
      iterations = (long)(iterations * seconds / (now() - t0));
      break;
    }
  }
  pthread_t th[kMaxThreads];
  for (int t = 0; t < nthreads; ++t) pthread_create(&th[t], NULL, worker, (void*)(long)t);
  for (int t = 0; t < nthreads; ++t) pthread_join(th[t], NULL);
  double rate[kSamples];
  const double flops_per_iteration = use_avx512 ? 24.0 * 16 * 2 : 14.0 * 8 * 2;
  for (int s = 0; s < kSamples; ++s) {
    double slowest = 0;
    for (int t = 0; t < nthreads; ++t) slowest = elapsed[t][s] > slowest ? elapsed[t][s] : slowest;
    rate[s] = flops_per_iteration * iterations * nthreads / slowest;
  }
  qsort(rate, kSamples, sizeof rate[0], by_value);
  printf("{\"isa\": \"%s\", \"threads\": %d, \"median_flops_per_second\": %.6g, \"max_flops_per_second\": %.6g, "
         "\"min_flops_per_second\": %.6g}\n",
         use_avx512 ? "avx512" : "avx2", nthreads, rate[kSamples / 2], rate[kSamples - 1], rate[0]);
  return 0;
}

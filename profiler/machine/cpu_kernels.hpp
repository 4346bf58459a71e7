// The CPU micro-kernels behind the machine roofs (modelstat/ceilings.hpp,
// ComputeRoof, MemoryLevel). The build targets generic x86-64, so every
// kernel carries its own target attribute and runs only when CPUID (and the
// OS's saved register state, which __builtin_cpu_supports checks) says the
// CPU has it. No LibTorch: plain loops on registers and buffers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace modelstat::profiler::machine {

// One FMA micro-kernel: `iterations` rounds of independent register-only
// multiply-adds; flops_per_iteration counts 2 per multiply-add per lane (for
// integer dot products, 2 per 8-bit product).
struct FmaKernel {
  std::string dtype;   // "fp32", "bf16", "int8"
  std::string kernel;  // the ISA and instruction, e.g. "avx512f vfmadd231ps zmm"
  double flops_per_iteration = 0;
  void (*run)(int64_t iterations) = nullptr;
};

// The kernels this CPU can run, widest ISA first per dtype (empty off x86-64).
std::vector<FmaKernel> available_fma_kernels();

// CPU features relevant to the roofs, as names ("avx2", "fma", "avx512f",
// "avx512_bf16", "avx512_vnni", "amx_bf16"...) that this CPU has.
std::vector<std::string> cpu_features();

// Reads `bytes` (a multiple of 512: the AVX-512 loop's step; 64-byte aligned) `passes` times with the
// widest vector loads the CPU has, summing into independent accumulators;
// returns the sum so the reads cannot be dropped.
float read_buffer(const float* data, int64_t bytes, int64_t passes);
std::string read_kernel_name();

// Updates `bytes` (same constraints as read_buffer) in place `passes` times:
// each vector is loaded, maxed with 0 and stored back (an in-place Relu's
// traffic: every byte read is written). The caller counts 2 x bytes x passes.
// Non-temporal stores are not used: a node's output stays in the cache.
void update_buffer(float* data, int64_t bytes, int64_t passes);

}  // namespace modelstat::profiler::machine

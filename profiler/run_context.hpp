// The conditions a measurement holds for (METHODOLOGY rule 10), filled the
// same way by every command that measures: `profile` (protocol.cc) and
// `device` (ceilings_probe.cc).
#pragma once

#include <cstdint>
#include <string>

#include "modelstat/profile.hpp"
#include "profiler/device.hpp"

namespace modelstat::profiler {

// CPU intra-op threads for a request: `requested`, or every hardware thread
// when it is 0. Throws Error(Usage) when negative. Does not apply it.
int resolve_threads(int requested);

// Applies an intra-op thread count: ATen's (at::set_num_threads) and, when
// the process has OpenBLAS loaded, OpenBLAS's own pool too. Debian's LibTorch
// (BLAS_INFO=generic) hands fp32 GEMM to the system BLAS, and the pthread
// build of OpenBLAS sizes its pool from the core count and ignores ATen's
// setting, so without this `--threads 1` runs every MatMul on all cores.
void set_intra_op_threads(int threads);

// OpenBLAS's pool size, or -1 when OpenBLAS is not loaded in this process.
int openblas_threads();

// The CPU's model name from /proc/cpuinfo ("AMD EPYC 9R14 ..."), or "unknown CPU" (cpu_device.cc).
std::string cpu_model_name();

// The BLAS this process calls and the core its kernels were chosen for:
// "OpenBLAS 0.3.21 ... core Haswell (OPENBLAS_CORETYPE=Haswell)"; the OpenBLAS
// functions are looked up, not linked. Says so when there is no OpenBLAS.
std::string blas_description();
// The ISA oneDNN dispatches its kernels to ("avx512_core_bf16"), with its
// version and any DNNL_MAX_CPU_ISA / ONEDNN_MAX_CPU_ISA limit; says so when
// this build has no oneDNN.
std::string onednn_isa_description();
// The fp32 lanes of the vector registers oneDNN's kernels use on this machine
// (16 with AVX-512, 8 with AVX or AVX2, 4 with SSE4.1); 0 when this build has
// no oneDNN or the ISA is not one of those.
int onednn_fp32_lanes();
// The OpenMP wait policy in effect (OMP_WAIT_POLICY as libgomp read it at
// load) and whether modelstat's launcher chose it (tools/cli_common.hpp,
// default_openmp_wait_policy) or the user did.
std::string openmp_description();

// Device description (name, kind, runtime, timer) plus the intra-op threads
// in effect (at::get_num_threads), the UTC date (ISO 8601), the host name and
// the LibTorch version. Leaves dtype and batch to the caller.
void describe_run(Device& device, RunContext& context);

// Makes the host allocator's behaviour the same in every process, once per
// process. glibc's malloc adapts its mmap and trim thresholds to the frees it
// has seen, so whether a tensor of a few MB is served from the heap (pages
// already mapped) or freshly mmapped (every page faulted in again, ~0.5 ms per
// MiB on the project VM) depends on the order of earlier allocations: one
// process of MobileNet-V2 ran at 16-18 ms, another at 27-32 ms, every sample of
// a process in one mode. modelstat turns the adaptation off (mallopt) and, by
// default, turns mmap off too (M_MMAP_MAX 0): every block, whatever its size,
// comes from the heap, which is not trimmed below 1 GiB of free top, so a
// buffer freed by one inference is reused by the next with its pages mapped,
// as an inference runtime's arena reuses its blocks. With the 32 MiB mmap
// threshold that was the rule until 2026-11 (glibc's largest), every tensor
// above it page-faulted on each allocation: MobileNet-V2 at batch 8 spent 20
// of its 88 ms there (bench/RESULTS.md, "Depthwise CNNs at batch 8").
// MODELSTAT_GLIBC_MALLOC=mmap keeps that rule (PyTorch eager's on glibc),
// =dynamic glibc's default. Returns what holds, for RunContext::allocator.
std::string configure_host_allocator();

// Size above which the host allocator maps every allocation afresh (and unmaps
// it when freed): 0 under modelstat's default (nothing is mapped afresh: the
// heap keeps its pages), or with an allocator that is not glibc's (unknown);
// 32 MiB with MODELSTAT_GLIBC_MALLOC=mmap (glibc's largest mmap threshold) or
// =dynamic (the ceiling glibc's adaptive threshold never exceeds).
int64_t host_mmap_threshold_bytes();

}  // namespace modelstat::profiler

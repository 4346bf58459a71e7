// ATen's CPU kernel choice and scratch, as LibTorch 1.13 (oneDNN 2.6, the
// Debian package modelstat builds against) does it: which convolutions go to
// oneDNN (blocked-layout reorders) and which to THNN's slow_conv2d (im2col
// columns), and MaxPool's int64 indices. These rules are copied from one
// version's source (ATen ConvParams::use_mkldnn) and measured on it
// (bench/fit_cpu_probe.cc); another LibTorch version chooses differently, so
// they live in a file named for theirs, to be replaced or joined by one per
// version rather than edited in place. docs/FIT.md, "Workspace" and "CPU
// kernel costs".
#pragma once

#include <cstdint>

#include "modelstat/graph.hpp"

namespace modelstat::fit {

// What a node costs on ATen's CPU kernels beyond its FLOPs and bytes.
struct CpuKernel {
  int64_t workspace_bytes = 0;        // scratch live while the node runs
  int64_t scratch_traffic_bytes = 0;  // bytes the scratch pass moves (written, read back)
  double fixed_op_overheads = 1;      // fixed cost of one call, in units of the measured op overhead
};

// The kernel rule of one node run with `threads` intra-op threads.
CpuKernel cpu_kernel(const Graph& g, const Node& n, int threads);

}  // namespace modelstat::fit

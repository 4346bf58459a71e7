// The one oneDNN CPU engine of the process and each thread's stream, shared
// by the executor's oneDNN kernels (fp32_conv, fp32_matmul, int8_kernels).
// oneDNN's CPU engine is stateless apart from its primitive cache, so one is
// enough; a stream is per thread (concurrent requests run on their own
// threads) and in-order, so each primitive has finished when wait() returns.
#pragma once

#if defined(MODELSTAT_HAVE_DNNL)
#include <oneapi/dnnl/dnnl.hpp>

namespace modelstat::profiler {

inline dnnl::engine& onednn_cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

inline dnnl::stream& onednn_cpu_stream() {
  thread_local dnnl::stream stream(onednn_cpu_engine());
  return stream;
}

// The short names of oneDNN's memory descriptors the kernels' files use
// (`using namespace onednn_names;` inside their own anonymous namespace).
namespace onednn_names {
using dnnl::memory;
using Dims = memory::dims;
using Tag = memory::format_tag;
using DT = memory::data_type;
}  // namespace onednn_names

}  // namespace modelstat::profiler
#endif

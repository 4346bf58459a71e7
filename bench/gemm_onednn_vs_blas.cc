// oneDNN 2.6 matmul vs OpenBLAS sgemm on the shapes of the benchmark models,
// one thread: what profiler/ops/fp32_matmul.hpp chooses between per shape.
// Independent of modelstat (its own loop, median of >= 7 runs, >= 0.6 s).
//
//   g++ -O2 -o /tmp/gemm_onednn_vs_blas bench/gemm_onednn_vs_blas.cc -ldnnl \
//       /usr/lib/x86_64-linux-gnu/libopenblas.so.0
//   env -u OPENBLAS_CORETYPE OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 taskset -c 1 /tmp/gemm_onednn_vs_blas [swish]
//
// With `swish`, oneDNN's primitive carries an eltwise_swish post-op (as a
// Conv or MatMul group with SiLU does); BLAS runs the bare product.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>
#include <vector>

using namespace dnnl;
using tag = memory::format_tag;
using dt = memory::data_type;

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <class F>
double median_seconds(F f) {
  for (int i = 0; i < 3; i++) f();
  std::vector<double> t;
  const double start = now();
  while (t.size() < 7 || now() - start < 0.6) {
    const double a = now();
    f();
    t.push_back(now() - a);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main(int argc, char** argv) {
  const bool swish = argc > 1 && std::strcmp(argv[1], "swish") == 0;
  engine eng(engine::kind::cpu, 0);
  stream st(eng);
  struct Shape { long b, m, k, n; bool constant_b; };
  const Shape shapes[] = {
      {1, 197, 768, 2304, true},  {1, 197, 768, 768, true},  {1, 197, 768, 3072, true}, {1, 197, 3072, 768, true},
      {12, 197, 64, 197, false},  {12, 197, 197, 64, false}, {1, 1, 2048, 1000, true},  {1, 128, 768, 768, true},
      {1, 128, 768, 3072, true},  {1, 128, 3072, 768, true}, {12, 128, 64, 128, false}, {1, 1, 1280, 1000, true},
      {1, 49, 768, 3072, true},   {1, 12544, 16, 96, true},  {1, 3136, 24, 144, true},  {1, 784, 40, 240, true}};
  std::printf("%-26s %12s %12s %s\n", "batch x M x K x N", "OpenBLAS", "oneDNN", swish ? "(oneDNN with swish)" : "");
  for (const Shape& s : shapes) {
    std::vector<float> A(s.b * s.m * s.k, 0.5f), B(s.b * s.k * s.n, 0.25f), C(s.b * s.m * s.n);
    const double blas = median_seconds([&] {
      for (long i = 0; i < s.b; i++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.f, A.data() + i * s.m * s.k, s.k,
                    B.data() + i * s.k * s.n, s.n, 0.f, C.data() + i * s.m * s.n, s.n);
    });
    const memory::desc a_md({s.b, s.m, s.k}, dt::f32, tag::abc), c_md({s.b, s.m, s.n}, dt::f32, tag::abc);
    const memory::desc b_user({s.b, s.k, s.n}, dt::f32, tag::abc);
    // Constant weights: the layout oneDNN prefers (packed once); else as they are.
    const memory::desc b_md = s.constant_b ? memory::desc({s.b, s.k, s.n}, dt::f32, tag::any) : b_user;
    primitive_attr attr;
    if (swish) {
      post_ops po;
      po.append_eltwise(1.f, algorithm::eltwise_swish, 1.f, 0.f);
      attr.set_post_ops(po);
    }
    const matmul::primitive_desc pd(matmul::desc(a_md, b_md, c_md), attr, eng);
    memory packed(pd.weights_desc(), eng), user(b_user, eng, B.data());
    reorder(user, packed).execute(st, user, packed);
    st.wait();
    memory am(a_md, eng, A.data()), cm(c_md, eng, C.data());
    const matmul prim(pd);
    const double onednn = median_seconds([&] {
      prim.execute(st, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, packed}, {DNNL_ARG_DST, cm}});
      st.wait();
    });
    const double flop = 2.0 * s.b * s.m * s.k * s.n;
    char name[64];
    std::snprintf(name, sizeof name, "%ld x %ld x %ld x %ld", s.b, s.m, s.k, s.n);
    std::printf("%-26s %7.3f ms %5.1f GF/s | %7.3f ms %5.1f GF/s (%s)\n", name, blas * 1e3, flop / blas / 1e9,
                onednn * 1e3, flop / onednn / 1e9, pd.impl_info_str());
  }
}

// MatMul of two activations on oneDNN (activation_matmul.hpp).
#include "profiler/ops/activation_matmul.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "profiler/ops/direct_kernels.hpp"
#include "profiler/ops/onednn_cpu.hpp"

namespace modelstat::profiler {

#if defined(MODELSTAT_HAVE_DNNL)
namespace {

using namespace onednn_names;

// One primitive per operand layout (dims and strides of both), built once:
// building one costs tens of microseconds, the order of the product itself.
struct ActMatmulPlan {
  bool native = false;  // oneDNN has a non-reference kernel: else ATen runs it
  dnnl::matmul primitive;
  memory::desc a_md, b_md, dst_md;
};

// A cache bounded in entries: a model's products have a few layouts each, but a
// decoder's grow with the context, one new layout per generated token.
constexpr size_t kActMatmulPlanCap = 512;

class ActMatmulPlans {
 public:
  std::shared_ptr<const ActMatmulPlan> get(const std::vector<int64_t>& key, const Dims& ad, const Dims& as,
                                           const Dims& bd, const Dims& bs, const Dims& dd) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto it = plans_.find(key);
      if (it != plans_.end()) return it->second;
    }
    auto plan = std::make_shared<ActMatmulPlan>();
    try {
      plan->a_md = memory::desc(ad, DT::f32, as);
      plan->b_md = memory::desc(bd, DT::f32, bs);
      plan->dst_md = memory::desc(dd, DT::f32, dense_strides(dd));
      const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(plan->a_md, plan->b_md, plan->dst_md),
                                            onednn_cpu_engine());
      plan->native = std::string(pd.impl_info_str()).find("ref") == std::string::npos;
      if (plan->native) plan->primitive = dnnl::matmul(pd);
    } catch (const dnnl::error&) {
      plan->native = false;  // a layout oneDNN does not take: ATen runs it
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (plans_.size() >= kActMatmulPlanCap) plans_.clear();
    plans_.emplace(key, plan);
    return plan;
  }

  static Dims dense_strides(const Dims& dims) {
    Dims s(dims.size(), 1);
    for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
    return s;
  }

 private:
  std::mutex mutex_;
  std::map<std::vector<int64_t>, std::shared_ptr<const ActMatmulPlan>> plans_;
};

ActMatmulPlans& act_matmul_plans() {
  static ActMatmulPlans plans;
  return plans;
}

// The operand as oneDNN reads it: `rank` dims (leading 1s added), its strides;
// a copy first when neither of its last two dims has unit stride.
at::Tensor act_matmul_operand(const at::Tensor& t, size_t rank, Dims& dims, Dims& strides) {
  at::Tensor x = t;
  if (x.stride(-1) != 1 && x.stride(-2) != 1) x = x.contiguous();
  dims.assign(rank - size_t(x.dim()), 1);
  strides.assign(rank - size_t(x.dim()), 1);
  for (int64_t d = 0; d < x.dim(); ++d) {
    dims.push_back(x.size(d));
    // A dim of size 1 may carry any stride in ATen; oneDNN checks them, so give it a dense one.
    strides.push_back(x.stride(d));
  }
  for (size_t d = rank; d-- > 0;)
    if (dims[d] == 1) strides[d] = d + 1 < rank ? strides[d + 1] * dims[d + 1] : 1;
  return x;
}

}  // namespace

at::Tensor onednn_activation_matmul(const at::Tensor& a, const at::Tensor& b) {
  if (!a.defined() || !b.defined() || !a.device().is_cpu() || !b.device().is_cpu() ||
      a.scalar_type() != at::kFloat || b.scalar_type() != at::kFloat || a.dim() < 2 || b.dim() < 2 ||
      (a.dim() == 2 && b.dim() == 2) || a.dim() > 12 || b.dim() > 12 || a.numel() == 0 || b.numel() == 0 ||
      a.size(-1) != b.size(-2) || !direct_kernels_allowed({&a, &b}))
    return at::Tensor();
  const size_t rank = size_t(std::max(a.dim(), b.dim()));
  Dims ad, as, bd, bs;
  const at::Tensor x = act_matmul_operand(a, rank, ad, as), y = act_matmul_operand(b, rank, bd, bs);
  Dims dd(rank);
  for (size_t d = 0; d + 2 < rank; ++d) {
    if (ad[d] != bd[d] && ad[d] != 1 && bd[d] != 1) return at::Tensor();  // at::matmul reports it
    dd[d] = std::max(ad[d], bd[d]);
  }
  dd[rank - 2] = ad[rank - 2];
  dd[rank - 1] = bd[rank - 1];
  std::vector<int64_t> key;
  key.reserve(4 * rank);
  for (const Dims* v : {&ad, &as, &bd, &bs}) key.insert(key.end(), v->begin(), v->end());
  const auto plan = act_matmul_plans().get(key, ad, as, bd, bs, dd);
  if (!plan->native) return at::Tensor();
  at::Tensor out = at::empty(at::IntArrayRef(dd.data(), dd.size()), a.options());
  auto& engine = onednn_cpu_engine();
  memory am(plan->a_md, engine, x.data_ptr()), bm(plan->b_md, engine, y.data_ptr()),
      dm(plan->dst_md, engine, out.data_ptr());
  plan->primitive.execute(onednn_cpu_stream(), {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, dm}});
  onednn_cpu_stream().wait();
  // ONNX MatMul's output has the larger operand's rank; dd has it already.
  return out;
}
bool activation_matmul_on_onednn_built() { return true; }
#else
at::Tensor onednn_activation_matmul(const at::Tensor&, const at::Tensor&) { return at::Tensor(); }
bool activation_matmul_on_onednn_built() { return false; }
#endif

at::Tensor activation_matmul(const at::Tensor& a, const at::Tensor& b) {
  at::Tensor y = onednn_activation_matmul(a, b);
  return y.defined() ? y : at::matmul(a, b);
}

}  // namespace modelstat::profiler

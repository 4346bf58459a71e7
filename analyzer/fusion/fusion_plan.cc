// The planner (fusion_plan.hpp): every pattern in priority order over the
// graph's nodes; a match is taken when none of its nodes is taken already.
#include "analyzer/fusion/fusion_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "analyzer/fusion/pattern.hpp"

namespace modelstat {

const char* fused_kind_name(FusedKind kind) {
  switch (kind) {
    case FusedKind::Conv: return "conv";
    case FusedKind::MatMul: return "matmul";
    case FusedKind::Qdq: return "qdq";
    case FusedKind::Rewrite: return "rewrite";
  }
  return "?";
}

FusionOptions inference_fusion_options(bool cpu, bool fp32, bool fuse, bool gemm_blas, bool int8_kernels) {
  FusionOptions o;
  o.qdq = cpu && fuse && int8_kernels;
  o.cpu_groups = cpu && fp32 && fuse;
  o.matmul_kernels = cpu && fp32 && (fuse || !gemm_blas);
  return o;
}

const FusedGroup* FusionPlan::headed_by(int node) const {
  if (node < 0 || size_t(node) >= group_of.size() || group_of[size_t(node)] < 0) return nullptr;
  const FusedGroup& group = groups[size_t(group_of[size_t(node)])];
  return group.head == node ? &group : nullptr;
}

int64_t FusionPlan::count(const std::string& pattern) const {
  return std::count_if(groups.begin(), groups.end(), [&](const FusedGroup& g) { return g.pattern == pattern; });
}

FusionPlan plan_fusion(const Graph& g, const Model& model, const FusionOptions& options) {
  FusionPlan plan;
  plan.group_of.assign(g.nodes.size(), -1);
  plan.absorbed.assign(g.nodes.size(), false);
  fusion::PatternContext ctx{g, model, options, model.opset_version(""), {}, plan};
  ctx.graph_output.assign(g.tensors.size(), false);
  for (int t : g.outputs)
    if (t >= 0) ctx.graph_output[size_t(t)] = true;
  for (const fusion::FusionPattern& pattern : fusion::fusion_patterns()) {
    if (!pattern.applies(options)) continue;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (plan.group_of[i] >= 0) continue;
      std::optional<FusedGroup> group = pattern.match(ctx, int(i));
      if (!group) continue;
      if (std::any_of(group->members.begin(), group->members.end(), [&](int m) { return ctx.taken(m); })) continue;
      std::sort(group->members.begin(), group->members.end());
      group->pattern = pattern.name;
      const int id = int(plan.groups.size());
      plan.group_of[i] = id;
      for (int m : group->members) {
        plan.group_of[size_t(m)] = id;
        plan.absorbed[size_t(m)] = true;
        ++plan.absorbed_count;
      }
      plan.groups.push_back(std::move(*group));
    }
  }
  return plan;
}

int constant_source(const Graph& g, int t) {
  for (int depth = 0; t >= 0 && depth < 64; ++depth) {
    const Tensor& tensor = g.tensors[size_t(t)];
    if (tensor.is_constant()) return t;
    if (tensor.producer < 0) return -1;
    const Node& node = g.nodes[size_t(tensor.producer)];
    if (!node.domain.empty() || node.op_type != "Identity" || node.inputs.size() != 1) return -1;
    t = node.inputs[0];
  }
  return -1;
}

namespace {

// IEEE half and bfloat16 bits to float.
double half_to_double(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exponent == 0) return sign * std::ldexp(double(mantissa), -24);
  if (exponent == 31) return mantissa ? NAN : sign * INFINITY;
  return sign * std::ldexp(double(mantissa | 0x400), exponent - 25);
}

template <typename T>
double read_as(const std::string& bytes) {
  T v;
  std::memcpy(&v, bytes.data(), sizeof(T));
  return double(v);
}

}  // namespace

std::optional<double> constant_scalar(const Graph& g, int t) {
  const int c = t < 0 ? -1 : constant_source(g, t);
  if (c < 0) return std::nullopt;
  const Tensor& tensor = g.tensors[size_t(c)];
  if (tensor.shape.element_count().value_or(0) != 1 || !tensor.storage().bytes.has_inline) return std::nullopt;
  const std::string& b = tensor.storage().bytes.inline_bytes;
  if (int64_t(b.size()) != dtype_size_bytes(tensor.dtype)) return std::nullopt;
  switch (tensor.dtype) {
    case DType::Float: return read_as<float>(b);
    case DType::Double: return read_as<double>(b);
    case DType::Float16: return half_to_double(uint16_t(read_as<uint16_t>(b)));
    case DType::BFloat16: {
      const uint32_t bits = uint32_t(uint16_t(read_as<uint16_t>(b))) << 16;
      float f;
      std::memcpy(&f, &bits, sizeof f);
      return f;
    }
    case DType::Int8: return read_as<int8_t>(b);
    case DType::UInt8: return read_as<uint8_t>(b);
    case DType::Int16: return read_as<int16_t>(b);
    case DType::UInt16: return read_as<uint16_t>(b);
    case DType::Int32: return read_as<int32_t>(b);
    case DType::UInt32: return read_as<uint32_t>(b);
    case DType::Int64: return read_as<int64_t>(b);
    case DType::UInt64: return read_as<uint64_t>(b);
    case DType::Bool: return read_as<uint8_t>(b) != 0 ? 1.0 : 0.0;
    default: return std::nullopt;
  }
}

}  // namespace modelstat
